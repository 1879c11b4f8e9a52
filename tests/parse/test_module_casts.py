"""A module cast to another floating dtype (`.half()`, `.double()`, `.bfloat16()`, `.to(dtype)`, `.type(dtype)`,
a layer built with `dtype=`): archgraph/1 builds every layer with float32 weights, so the cast is said, and the
first layer whose weights then meet values of another dtype is said to be where torch raises. Each source is run
in torch here, so the words are held to what torch does."""

from __future__ import annotations

import importlib.util

import pytest
import torch

from archcurator.core.parse import parse_source

SOURCE = """import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 8)
        self.norm = nn.LayerNorm(8)
        self.b = nn.Linear(8, 4)

    def forward(self, x):
        return self.b(torch.relu(self.norm(self.a(x))))


class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = {build}

    def forward(self, x):
        return self.block({feed})
"""

# build, feed, the dtype the cast leaves the weights in, whether torch runs the forward on float32 input
CASES = {
    "half_then_float32_input": ("Block().half()", "x", "float16", False),
    "double_then_double_input": ("Block().double()", "x.double()", "float64", True),
    "to_dtype_keyword": ("Block().to(dtype=torch.float64)", "x", "float64", False),
    "to_device_and_dtype": ("Block().to('cpu', torch.bfloat16)", "x.bfloat16()", "bfloat16", True),
    "type_dtype": ("Block().type(torch.float64)", "x.to(torch.float64)", "float64", True),
    "built_with_dtype": ("nn.Linear(8, 4, dtype=torch.float16)", "x", "float16", False),
    "cast_back_to_float": ("Block().half().float()", "x", None, True),
    "to_a_device_only": ("Block().to('cpu')", "x", None, True),
}


def _runs_in_torch(src, name) -> bool:
    """The same file run in torch (by this test only; the parser reads it)."""
    loader = importlib.util.spec_from_file_location(f"module_casts_{name}", src)
    mod = importlib.util.module_from_spec(loader)
    loader.loader.exec_module(mod)
    try:
        with torch.no_grad():
            mod.M()(torch.randn(2, 8))
    except (RuntimeError, ValueError):
        return False
    return True


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_cast_is_said_and_torchs_refusal_of_the_mix_is_said_where_it_raises(tmp_path, name):
    build, feed, dtype, runs = CASES[name]
    src = tmp_path / f"{name}.py"
    src.write_text(SOURCE.format(build=build, feed=feed))
    assert _runs_in_torch(src, name) is runs
    words = [w.message for w in parse_source(src, "M", {}, [([2, 8], "float32")]).warnings]
    cast = [w for w in words if "with float32 weights" in w and "verifies float32 weights" in w]
    raises = [w for w in words if "torch raises (a layer's weights and its input must share a dtype)" in w]
    if dtype is None and name != "cast_back_to_float":
        assert not cast, words
    elif dtype is not None:
        assert len(cast) == 1 and f"{dtype} ones" in cast[0], words
    assert len(raises) == (0 if runs else 1), words  # once: torch stops at the first such layer
    if raises:
        assert f"has {dtype} weights and is called on float32 values" in raises[0]


def test_the_cast_names_the_layers_it_reaches(tmp_path):
    src = tmp_path / "m.py"
    src.write_text(SOURCE.format(build="Block()", feed="x").replace(
        "        self.block = Block()\n", "        self.block = Block()\n        self.block.half()\n"))
    words = [w.message for w in parse_source(src, "M", {}, [([2, 8], "float32")]).warnings]
    assert any(".half() casts 3 layer(s) with weights (a, norm, b) to float16" in w for w in words), words
    assert any("nn.Linear 'block.a' has float16 weights" in w for w in words), words


def test_a_layer_that_takes_any_float_is_not_said_to_raise(tmp_path):
    src = tmp_path / "m.py"
    src.write_text(SOURCE.format(build="nn.RMSNorm(8).half()", feed="x"))
    assert _runs_in_torch(src, "rms")
    words = [w.message for w in parse_source(src, "M", {}, [([2, 8], "float32")]).warnings]
    assert not [w for w in words if "torch raises" in w], words

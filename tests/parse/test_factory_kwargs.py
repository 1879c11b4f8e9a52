"""A layer built with torch's factory kwargs: `device` changes nothing the design holds; a dtype other
than float32 is said (archgraph/1 builds float32 layers), never dropped in silence."""

from __future__ import annotations

import pytest

from archcurator.core.parse import parse_source

SOURCE = """import torch
import torch.nn as nn


class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 8{kw})

    def forward(self, x):
        return self.fc(x)
"""


def _warnings(tmp_path, kw: str) -> list[str]:
    src = tmp_path / "m.py"
    src.write_text(SOURCE.format(kw=kw))
    r = parse_source(src, "M", {}, [([2, 4], "float32")])
    assert [n["op"] for n in r.design["nodes"]] == ["Linear"]
    return [w.message for w in r.warnings]


@pytest.mark.parametrize("kw", [", dtype=torch.float16", ", dtype=torch.bfloat16",
                                ", device='cpu', dtype=torch.double"])
def test_a_layer_built_in_another_dtype_is_said(tmp_path, kw):
    said = [m for m in _warnings(tmp_path, kw) if "dtype=" in m]
    assert len(said) == 1 and "nn.Linear" in said[0] and "float32" in said[0]


@pytest.mark.parametrize("kw", ["", ", dtype=torch.float32", ", device='cuda'", ", dtype=None, device=None"])
def test_the_default_placement_and_dtype_say_nothing(tmp_path, kw):
    assert not [m for m in _warnings(tmp_path, kw) if "dtype" in m or "device" in m]

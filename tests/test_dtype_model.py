"""One dtype model (core/ops/base.py `result_type`, torch.result_type's rule), measured against torch, and the
parser's constant arithmetic asks it (float16 + float32 constant tensors is float32, as torch says)."""

from __future__ import annotations

import itertools

import pytest
import torch

from archcurator.core.ops.base import result_type

DTYPES = ("float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8", "bool")
NUMBERS = {"bool": True, "int64": 3, "float32": 1.5}  # a Python number of each kind, and the dtype it reads as
OPERANDS = [(d, k) for d in DTYPES for k in ("tensor", "zerodim")] + [(d, "number") for d in NUMBERS]


def _value(dtype: str, kind: str):
    if kind == "number":
        return NUMBERS[dtype]
    return torch.ones(2 if kind == "tensor" else (), dtype=getattr(torch, dtype))


@pytest.mark.parametrize("divide", [False, True], ids=["add", "true-divide"])
def test_result_type_is_torchs(divide):
    wrong = []
    for a, b in itertools.product(OPERANDS, repeat=2):
        if a[1] == b[1] == "number":
            continue
        x, y = _value(*a), _value(*b)
        want = str((x / y if divide else x + y).dtype).removeprefix("torch.")
        got = result_type([a, b], divide=divide)
        if got != want:
            wrong.append((a, b, want, got))
    assert not wrong, wrong[:10]


def test_the_parser_folds_constant_arithmetic_with_torchs_dtype(tmp_path):
    from archcurator.core.parse import parse_source

    src = tmp_path / "m.py"
    src.write_text("import torch\nfrom torch import nn\n\n\nclass M(nn.Module):\n    def __init__(self):\n"
                   "        super().__init__()\n"
                   "        self.register_buffer('c', torch.ones(8, dtype=torch.float16) + torch.zeros(8))\n\n"
                   "    def forward(self, x):\n        return x * self.c\n")
    design = parse_source(src, "M", {}, [([2, 8], "float32")]).design
    const = next(n for n in design["nodes"] if n["op"] == "Constant")
    assert const["args"].get("dtype", "float32") == "float32"
    assert (torch.ones(8, dtype=torch.float16) + torch.zeros(8)).dtype == torch.float32

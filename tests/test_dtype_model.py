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


def test_every_dtype_name_cast_and_size_is_torchs():
    """The one table of dtype names (torch.half, torch.short ...), cast methods (.char(), .byte() ...) and
    element sizes, against torch itself."""
    from archcurator.core.ops.base import CAST_METHODS, DTYPE_NAMES, dtype_bytes

    real = {n for n in dir(torch) if isinstance(getattr(torch, n), torch.dtype)}
    modelled = {n for n in real if str(getattr(torch, n)).removeprefix("torch.") in DTYPES}
    assert set(DTYPE_NAMES) == modelled, sorted(modelled ^ set(DTYPE_NAMES))
    assert all(getattr(torch, n) == getattr(torch, d) for n, d in DTYPE_NAMES.items())
    x = torch.zeros(2)
    assert {m: str(getattr(x, m)().dtype).removeprefix("torch.") for m in CAST_METHODS} == CAST_METHODS
    assert {d: dtype_bytes(d) for d in DTYPES} == {d: getattr(torch, d).itemsize for d in DTYPES}


def test_the_parser_reads_every_torch_dtype_name_and_cast(tmp_path):
    """torch.short and .char() (int16, int8) were no dtype to the parser: the constant came out float32."""
    from archcurator.core.parse import parse_source

    src = tmp_path / "m.py"
    src.write_text("import torch\nfrom torch import nn\n\n\nclass M(nn.Module):\n    def __init__(self):\n"
                   "        super().__init__()\n"
                   "        self.register_buffer('s', torch.ones(8, dtype=torch.short))\n"
                   "        self.register_buffer('c', torch.ones(8).char())\n\n"
                   "    def forward(self, x):\n        return x + self.s, x + self.c\n")
    design = parse_source(src, "M", {}, [([2, 8], "float32")]).design
    consts = [n["args"].get("dtype", "float32") for n in design["nodes"] if n["op"] == "Constant"]
    assert consts == [str(torch.ones(8, dtype=torch.short).dtype)[6:], str(torch.ones(8).char().dtype)[6:]]


@pytest.mark.parametrize("dtype", ["int32", "int16", "int8", "uint8"])
def test_a_masked_fill_of_small_integers_is_judged_on_its_own_dtype(dtype):
    """int8 and int16 data were judged on int32's measured row: a -1e4 fill, which int8 cannot hold, passed."""
    from archcurator.core.graph import Design
    from archcurator.core.verify import verify_graph

    x = torch.zeros(3, 5, dtype=getattr(torch, dtype))
    try:
        x.masked_fill(torch.ones(1, 5, dtype=torch.bool), -1e4)
        torch_runs = True
    except RuntimeError:
        torch_runs = False
    design = Design.from_dict({
        "format": "archgraph/1", "name": "fill",
        "inputs": [{"id": "x", "shape": [3, 5], "dtype": dtype}, {"id": "m", "shape": [1, 5], "dtype": "bool"}],
        "nodes": [{"id": "f", "op": "MaskedFill", "args": {"value": -1e4}, "in": ["x", "m"]}], "outputs": ["f"]})
    assert (verify_graph(design).verdict != "block") == torch_runs


@pytest.mark.parametrize("dtype", ["float32", "float16", "float64", "int64", "bool"])
def test_the_cost_counts_each_activation_at_its_dtypes_size(dtype):
    """The quote counted 4 bytes a value whatever the dtype (a float16 activation is 2, an int64 one 8)."""
    from archcurator.core.build import build_module
    from archcurator.core.graph import Design
    from archcurator.core.verify import verify_graph

    design = Design.from_dict({
        "format": "archgraph/1", "name": "flip", "inputs": [{"id": "x", "shape": [1, 6, 10], "dtype": dtype}],
        "nodes": [{"id": "t", "op": "Transpose", "args": {"dim0": 1, "dim1": 2}, "in": ["x"]}], "outputs": ["t"],
        "train": {"loss": "mse", "batch_size": 32, "steps": 10}})
    y = build_module(design)(torch.zeros(1, 6, 10, dtype=getattr(torch, dtype)))
    assert verify_graph(design).cost["memory"]["activations_bytes"] == y.numel() * y.element_size() * 32


@pytest.mark.parametrize("name", ["half", "double", "short", "float", "long"])
def test_a_design_may_name_a_dtype_as_torch_does(name):
    """A design's `"dtype": "half"` is torch.half, float16 (it was refused as no dtype); the verifier's answer
    on a float32 Linear fed it is torch's."""
    from archcurator.core.graph import Design
    from archcurator.core.verify import verify_graph

    design = Design.from_dict({
        "format": "archgraph/1", "name": "lin", "inputs": [{"id": "x", "shape": [2, 4], "dtype": name}],
        "nodes": [{"id": "fc", "op": "Linear", "args": {"in_features": 4, "out_features": 3}, "in": ["x"]}],
        "outputs": ["fc"]})
    real = getattr(torch, name)
    assert design.inputs[0].dtype == str(real).removeprefix("torch.")
    x = torch.ones(2, 4, dtype=real) if real.is_floating_point else torch.ones(2, 4).to(real)
    try:
        torch.nn.Linear(4, 3)(x)
        torch_runs = True
    except RuntimeError:
        torch_runs = False
    assert (verify_graph(design).verdict != "block") == torch_runs

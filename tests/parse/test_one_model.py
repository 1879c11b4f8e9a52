"""One model of PyTorch: every op the parser can emit, written in a source file, read by the parser and
checked by the verifier (the op table), against the same code run in real torch (parameter count, the
learned tensors' names and shapes, output shape).  The parser keeps no table of torch.nn of its own:
what it knows of a layer it asks core/ops."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F  # noqa: N812 - torch's own spelling

from archcurator.core.graph import Design
from archcurator.core.ops import OP_TABLE
from archcurator.core.ops.examples import EXAMPLES
from archcurator.core.ops.nn_classes import NOT_NN
from archcurator.core.parse import design_params, parse_source
from archcurator.core.parse.torch import optable
from archcurator.core.verify import verify_graph

PARSER = Path(__file__).resolve().parents[2] / "core" / "parse"

# the layers torch.nn itself provides, called on one operand with literal arguments
NN_LAYERS = sorted(op for op in OP_TABLE if op not in NOT_NN and len(EXAMPLES[op][0]) == 1
                   and not any(isinstance(v, dict) for v in EXAMPLES[op][1].values()))
# torch.nn layers of several operands, or built from other layers (TransformerEncoder(layer, n))
NN_OTHER = sorted(op for op in OP_TABLE if op not in NOT_NN and op not in NN_LAYERS)


# a nested layer's arguments (TransformerEncoder's encoder_layer, its norm): the layer torch builds of them
NESTED = {"encoder_layer": "TransformerEncoderLayer", "decoder_layer": "TransformerDecoderLayer", "norm": "LayerNorm"}
# torch.nn layers the parser writes as the layers torch builds them of (so that a subclass reaches
# self.encoder, self.layers): the design holds TransformerEncoderLayer ... LayerNorm, not the stack
EXPANDED = {"Transformer", "TransformerEncoder", "TransformerDecoder"}


def _source(op, args, operands=1, tail=""):
    kw = ", ".join(f"{k}={_literal(k, v)}" for k, v in args.items())
    xs = ", ".join(f"x{i}" for i in range(operands))
    return ("import torch.nn as nn\n\n\nclass M(nn.Module):\n    def __init__(self):\n"
            f"        super().__init__()\n        self.layer = nn.{op}({kw})\n\n"
            f"    def forward(self, {xs}):\n        return self.layer({xs}){tail}\n")


def _literal(name, v):
    if isinstance(v, dict):
        return f"nn.{NESTED[name]}(" + ", ".join(f"{k}={x!r}" for k, x in v.items()) + ")"
    return repr(v)


def _torch_layer(op, args):
    def real(name, v):
        return getattr(torch.nn, NESTED[name])(**v) if isinstance(v, dict) else v

    return getattr(torch.nn, op)(**{k: real(k, v) for k, v in args.items()})


def _operand(shape, dtype):
    if dtype == "int64":
        return torch.zeros(shape, dtype=torch.long)  # an index each op takes (ids, MaxUnpool's positions)
    return torch.randn(shape)


def _output_type(rep, design):
    ref = design["outputs"][0]
    nid, _, k = ref.partition(":")
    return rep.types[nid][int(k or 0)]


def _check(op, src, operands, real_out, real_params, tmp_path):
    path = tmp_path / "m.py"
    path.write_text(src)
    r = parse_source(path, "M", {}, [(list(s), dt) for s, dt in operands])
    ops = [n["op"] for n in r.design["nodes"]]
    assert (op not in ops) if op in EXPANDED else (op in ops), ops
    assert design_params(r.design) == real_params
    rep = verify_graph(Design.from_dict(r.design))
    assert not [f for f in rep.findings if f.severity == "block"], rep.findings
    assert rep.cost["params"] == real_params
    assert tuple(_output_type(rep, r.design).shape) == tuple(real_out.shape)
    return r


@pytest.mark.parametrize("op", NN_LAYERS + NN_OTHER)
def test_every_torch_nn_layer_agrees_with_real_torch(op, tmp_path):
    operands, args = EXAMPLES[op]
    real = _torch_layer(op, args)
    y = real(*[_operand(s, dt) for s, dt in operands])
    tail = "[0]" if isinstance(y, tuple) else ""
    y = y[0] if isinstance(y, tuple) else y
    _check(op, _source(op, args, len(operands), tail), operands, y, sum(p.numel() for p in real.parameters()),
           tmp_path)
    # the learned tensors the parser gives the layer (`self.layer.weight` ...) are torch's, asked of core/ops
    if op not in EXPANDED:  # (the layers of an expanded stack are each a case here)
            assert [(n, tuple(s)) for n, s in optable.param_shapes(op, args)] == \
            [(n, tuple(p.shape)) for n, p in real.named_parameters()]


# tensor operations: (op, forward expression, operands, the same in torch)
F32 = "float32"
TENSOR_OPS = [
    ("Add", "x0 + x1", [((2, 3, 4), F32), ((3, 4), F32)], lambda a, b: a + b),
    ("Sub", "x0 - x1", [((2, 3, 4), F32), ((2, 3, 4), F32)], lambda a, b: a - b),
    ("Mul", "x0 * x1", [((2, 3, 1, 1), F32), ((2, 3, 5, 5), F32)], lambda a, b: a * b),
    ("Div", "x0 / x1", [((2, 4), F32), ((4,), F32)], lambda a, b: a / b),
    ("MatMul", "x0 @ x1", [((2, 3, 5, 6), F32), ((6, 7), F32)], lambda a, b: a @ b),
    ("Concat", "torch.cat([x0, x1], dim=1)", [((2, 3, 4), F32), ((2, 5, 4), F32)], lambda a, b: torch.cat([a, b], 1)),
    ("Stack", "torch.stack([x0, x1])", [((2, 3), F32), ((2, 3), F32)], lambda a, b: torch.stack([a, b])),
    ("Split", "torch.split(x0, 2, dim=1)[1]", [((2, 5, 3), F32)], lambda a: torch.split(a, 2, dim=1)[1]),
    ("Reshape", "x0.reshape(x0.shape[0], 4, -1)", [((2, 3, 8), F32)], lambda a: a.reshape(2, 4, -1)),
    ("Flatten", "torch.flatten(x0, 1)", [((2, 3, 4, 5), F32)], lambda a: torch.flatten(a, 1)),
    ("Permute", "x0.permute(0, 2, 1)", [((2, 3, 4), F32)], lambda a: a.permute(0, 2, 1)),
    ("Transpose", "x0.transpose(1, 2)", [((2, 3, 4), F32)], lambda a: a.transpose(1, 2)),
    ("Squeeze", "x0.squeeze(1)", [((2, 1, 4), F32)], lambda a: a.squeeze(1)),
    ("Unsqueeze", "x0.unsqueeze(1)", [((2, 4), F32)], lambda a: a.unsqueeze(1)),
    ("Mean", "x0.mean(dim=-1)", [((2, 3, 4), F32)], lambda a: a.mean(dim=-1)),
    ("Sum", "x0.sum(1, keepdim=True)", [((2, 3, 4), F32)], lambda a: a.sum(1, keepdim=True)),
    ("Amax", "x0.amax(dim=-1)", [((2, 3, 4), F32)], lambda a: a.amax(dim=-1)),
    ("Amin", "x0.amin(dim=1)", [((2, 3, 4), F32)], lambda a: a.amin(dim=1)),
    ("Select", "x0[:, 0]", [((2, 3, 4), F32)], lambda a: a[:, 0]),
    ("Slice", "x0[:, 1:3]", [((2, 5, 4), F32)], lambda a: a[:, 1:3]),
    ("Expand", "x0.expand(2, 3, 4)", [((1, 3, 4), F32)], lambda a: a.expand(2, 3, 4)),
    ("Scale", "x0 * 0.5", [((2, 3), F32)], lambda a: a * 0.5),
    ("Constant", "x0 + torch.ones(3, 4)", [((2, 3, 4), F32)], lambda a: a + torch.ones(3, 4)),
    ("Arange", "x0 + torch.arange(4)", [((2, 3, 4), F32)], lambda a: a + torch.arange(4)),
    ("Where", "torch.where(x0 > 0, x0, x1)", [((2, 3), F32), ((2, 3), F32)], lambda a, b: torch.where(a > 0, a, b)),
    ("Gather", "x0[torch.arange(x0.shape[0]), x1]", [((2, 5, 3), F32), ((2,), "int64")],
     lambda a, b: a[torch.arange(2), b]),
    ("Roll", "torch.roll(x0, shifts=(1, -2), dims=(0, 2))", [((2, 3, 4), F32)],
     lambda a: torch.roll(a, shifts=(1, -2), dims=(0, 2))),
    ("MaskedFill", "x0.masked_fill(x1 > 0, -1e4)", [((2, 3, 4), F32), ((3, 4), F32)],
     lambda a, b: a.masked_fill(b > 0, -1e4)),
    ("Clamp", "x0.clamp(-0.5, max=0.5)", [((2, 3), F32)], lambda a: a.clamp(-0.5, max=0.5)),
    ("Normalize", "F.normalize(x0, dim=-1)", [((2, 3, 4), F32)], lambda a: F.normalize(a, dim=-1)),
    ("Cumsum", "x0.cumsum(1)", [((2, 3, 4), F32)], lambda a: a.cumsum(1)),
    ("IndexSelect", "x0.index_select(1, x1)", [((2, 5, 3), F32), ((4,), "int64")],
     lambda a, b: a.index_select(1, b)),
    ("Index", "x0[:, x1]", [((2, 5, 3), F32), ((4, 2), "int64")], lambda a, b: a[:, b]),
    ("Upsample", "F.interpolate(x0, scale_factor=2)", [((1, 2, 4, 4), F32)],
     lambda a: F.interpolate(a, scale_factor=2)),
    ("Parameter", "x0 + self.p", [((2, 3), F32)], None),
]
# op names of the table that are no torch.nn class and that the parser's source names without emitting them
NAMED_NOT_EMITTED = {
    "Rearrange": "einops' layer kind: the parser writes it as Reshape / Permute",
    "Reduce": "einops' layer kind: written as Reshape / Permute / Mean / Sum / Amax / Amin",
    "Repeat": "einops' layer kind: written as Unsqueeze + Expand + Reshape",
}


@pytest.mark.parametrize("op,expr,operands,run", TENSOR_OPS, ids=[c[0] for c in TENSOR_OPS])
def test_every_tensor_op_agrees_with_real_torch(op, expr, operands, run, tmp_path):
    xs = ", ".join(f"x{i}" for i in range(len(operands)))
    init = "        self.p = nn.Parameter(torch.randn(3))\n" if op == "Parameter" else ""
    src = ("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\nclass M(nn.Module):\n"
           f"    def __init__(self):\n        super().__init__()\n{init}\n"
           f"    def forward(self, {xs}):\n        return {expr}\n")
    args = [_operand(s, dt) for s, dt in operands]
    params = 0
    if run is None:  # a learned tensor of the module: x + p
        p = torch.nn.Parameter(torch.randn(3))
        y, params = args[0] + p, p.numel()
    else:
        y = run(*args)
    _check(op, src, operands, y, params, tmp_path)


def test_every_op_the_parser_names_is_checked_here():
    """The ops the parser's source names (string constants equal to an op of the table) are each run
    above, or are torch.nn layers (all run above), or have a written reason why none is emitted."""
    named = set()
    for path in PARSER.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in OP_TABLE:
                named.add(node.value)
    tensor = {c[0] for c in TENSOR_OPS}
    unchecked = sorted(op for op in named if op in NOT_NN and op not in tensor and op not in NAMED_NOT_EMITTED)
    assert not unchecked, f"ops the parser can emit that no test here runs against torch: {unchecked}"
    assert set(NN_LAYERS + NN_OTHER) == set(OP_TABLE) - NOT_NN


def test_an_op_the_table_lacks_is_never_emitted(tmp_path, monkeypatch):
    # the table holds every torch.nn layer now: take one out to see what the parser does without it
    monkeypatch.delitem(OP_TABLE, "LPPool2d")
    src = tmp_path / "lp.py"
    src.write_text(_source("LPPool2d", {"norm_type": 2, "kernel_size": 2}).replace(
        "return self.layer(x0)", "return self.layer(x0).relu()"))
    r = parse_source(src, "M", {}, [([2, 3, 8, 8], "float32")])
    assert "LPPool2d" not in OP_TABLE
    assert [n["op"] for n in r.design["nodes"]] == ["ReLU"]
    assert any("LPPool2d" in w.message for w in r.warnings)


@pytest.mark.parametrize("par", ["weight_norm", "spectral_norm"])
def test_a_parametrized_layer_counts_as_torch_counts(par, tmp_path):
    """A weight_norm'd layer holds one magnitude per slice of dim 0 besides its weight (torch's count),
    whether forward reads it or it is only built; spectral_norm holds the weight alone."""
    src = tmp_path / "wn.py"
    src.write_text("import torch.nn as nn\nfrom torch.nn.utils import parametrizations\n\n\n"
                   "class M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                   f"        self.fc = parametrizations.{par}(nn.Linear(3, 4))\n"
                   f"        self.unused = parametrizations.{par}(nn.Conv1d(3, 5, 2))\n\n"
                   "    def forward(self, x0):\n        return self.fc(x0)\n")
    real = torch.nn.Module()
    real.fc = getattr(torch.nn.utils.parametrizations, par)(torch.nn.Linear(3, 4))
    real.unused = getattr(torch.nn.utils.parametrizations, par)(torch.nn.Conv1d(3, 5, 2))
    want = sum(p.numel() for p in real.parameters())
    r = parse_source(src, "M", {}, [([2, 3], "float32")])
    assert design_params(r.design) == want
    assert verify_graph(Design.from_dict(r.design)).cost["params"] == want
    # the learned tensors built but never read are in the design under torch's own names
    unused = {n["id"] for n in r.design["nodes"] if n["op"] == "Parameter"}
    assert unused == {f"unused.{name}" for name, _ in real.unused.named_parameters()}


def test_a_max_pools_indices_feed_max_unpool_as_in_torch(tmp_path):
    """`z, i = pool(x)` with return_indices=True is the pool's two results (values, int64 positions),
    and a two-operand layer takes its operands by position or by name."""
    src = tmp_path / "unpool.py"
    src.write_text("import torch.nn as nn\n\n\nclass M(nn.Module):\n    def __init__(self):\n"
                   "        super().__init__()\n        self.pool = nn.MaxPool2d(2, return_indices=True)\n"
                   "        self.unpool = nn.MaxUnpool2d(2)\n        self.cos = nn.CosineSimilarity(dim=1)\n\n"
                   "    def forward(self, x0, x1):\n        z, i = self.pool(x0)\n"
                   "        return self.cos(x1=self.unpool(z, indices=i).flatten(1), x2=x1)\n")
    x0, x1 = torch.randn(2, 3, 4, 4), torch.randn(2, 48)
    z, i = torch.nn.MaxPool2d(2, return_indices=True)(x0)
    y = torch.nn.CosineSimilarity(dim=1)(torch.nn.MaxUnpool2d(2)(z, indices=i).flatten(1), x1)
    r = _check("MaxUnpool2d", src.read_text(), [((2, 3, 4, 4), F32), ((2, 48), F32)], y, 0, tmp_path)
    unpool = next(n for n in r.design["nodes"] if n["op"] == "MaxUnpool2d")
    assert unpool["in"] == ["pool", "pool:1"]

"""Tensor ops the op table holds (Roll, MaskedFill, Clamp, Normalize, Cumsum, Gather, IndexSelect, and
torch.tile written as a repeat) are written as those ops, not passed through: two testers found real code
(Swin's cyclic shift, attention masks, a logit scale clamped) coming out computing something else than
its source.  Each is a minimal source built and run in real torch for the truth: the parsed design must
hold the op, count the parameters torch counts, give the output shapes torch gives, and not be blocked."""

from __future__ import annotations

import importlib.util

import pytest
import torch
from parsehelp import output_shapes

from archcurator.core.graph import Design
from archcurator.core.parse import parse_source
from archcurator.core.verify import verify_graph

_HEAD = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
_INIT = ("class M(nn.Module):\n"
         "    def __init__(self):\n"
         "        super().__init__()\n"
         "        self.fc = nn.Linear(8, 8)\n"
         "        self.logit_scale = nn.Parameter(torch.ones([]) * 2.0)\n"
         "    def forward(self, x):\n"
         "        y = self.fc(x)\n")

# name: (the rest of forward, the ops the design must hold, the input's shape)
CASES = {
    # Swin's cyclic shift of the windows and its reverse
    "roll": ("        s = torch.roll(y, shifts=(-1, -2), dims=(1, 2))\n"
             "        return s.roll(1, 1), torch.roll(y, 3)\n", {"Roll"}, [2, 4, 8]),
    # a causal mask made in forward, filled into the attention scores, in place and not
    "masked_fill": ("        n = y.shape[1]\n"
                    "        mask = torch.triu(torch.ones(n, n), diagonal=1).bool()\n"
                    "        att = (y @ y.transpose(1, 2)).masked_fill(mask, -1e4)\n"
                    "        att.masked_fill_(mask.logical_not(), -torch.finfo(att.dtype).max)\n"
                    "        return torch.masked_fill(att, mask, 0.0).softmax(-1)\n", {"MaskedFill"}, [2, 4, 8]),
    # CLIP's logit scale clamped; clamp / clip / clamp_min / clamp_max, in place too
    "clamp": ("        z = y.clamp(min=0.0).clip(-1, 1) + torch.clamp(y, max=3).clamp_min(0.1).clamp_max(2)\n"
              "        y.clamp_(0, 1)\n"
              "        return z * self.logit_scale.clamp(max=4.6), y\n", {"Clamp"}, [2, 4, 8]),
    "normalize": ("        return F.normalize(y, dim=-1), F.normalize(y, p=1.0), F.normalize(y, 2, 1, 1e-6)\n",
                  {"Normalize"}, [2, 4, 8]),
    "cumsum": ("        return y.cumsum(1), torch.cumsum(y, dim=-1)\n", {"Cumsum"}, [2, 4, 8]),
    "gather_index_select": ("        idx = torch.zeros(2, 4, 3, dtype=torch.long)\n"
                            "        return y.gather(2, idx), torch.index_select(y, 1, torch.tensor([0, 2])), "
                            "y.index_select(-1, torch.arange(3))\n", {"Gather", "IndexSelect"}, [2, 4, 8]),
    # torch.tile with fewer counts than dims counts from the last dim (Tensor.repeat refuses that)
    "tile_repeat": ("        return torch.tile(y, (2,)), y.tile(1, 2, 1), y.repeat(2, 1, 1, 1)\n",
                    {"Expand"}, [2, 4, 8]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_ops_of_the_table_are_written_as_them_not_passed_through(tmp_path, name):
    body, ops, shape = CASES[name]
    src = tmp_path / f"{name}.py"
    src.write_text(_HEAD + _INIT + body)
    spec = importlib.util.spec_from_file_location(f"table_ops_{name}", src)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    torch.manual_seed(0)
    model = mod.M().eval()
    with torch.no_grad():
        y = model(torch.randn(shape))
    real = [list(t.shape) for t in (y if isinstance(y, tuple) else (y,))]
    real_params = sum(p.numel() for p in model.parameters())

    r = parse_source(src, "M", inputs=[(shape, "float32")])
    rep = verify_graph(Design.from_dict(r.design))
    assert (rep.cost["params"], output_shapes(r.design, rep)) == (real_params, real)
    assert not [f for f in rep.findings if f.severity == "block"], [f.message for f in rep.findings]
    assert ops <= {n["op"] for n in r.design["nodes"]}
    assert not [w.message for w in r.warnings if "passed through" in w.message]


def test_values_the_ops_cannot_take_are_passed_through_with_a_warning_never_a_refused_arg(tmp_path):
    """MaskedFill takes a finite number: -inf (or a value read off a tensor) is passed through, named; a
    clamp to a tensor bound likewise; an infinite bound on its own side bounds nothing."""
    src = tmp_path / "m.py"
    src.write_text(_HEAD + _INIT +
                   "        mask = torch.ones(4, 4).bool()\n"
                   "        a = (y @ y.transpose(1, 2)).masked_fill(mask, float('-inf'))\n"
                   "        b = y.clamp(min=y.mean())\n"
                   "        c = y.clamp(max=float('inf')) * 2.0\n"
                   "        return a, b, c\n")
    r = parse_source(src, "M", inputs=[([2, 4, 8], "float32")])
    rep = verify_graph(Design.from_dict(r.design))
    assert not [f.message for f in rep.findings if f.rule == "connectivity.bad-arg"]
    assert rep.verdict != "block", [f.message for f in rep.findings]
    ops = [n["op"] for n in r.design["nodes"]]
    assert "MaskedFill" not in ops and "Clamp" not in ops, ops
    lines = {w.line for w in r.warnings if "passed through" in w.message}
    assert {12, 13} <= lines, r.warnings
    assert any("not finite" in w.message and w.line == 12 for w in r.warnings)
    assert output_shapes(r.design, rep) == [[2, 4, 4], [2, 4, 8], [2, 4, 8]]


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64", "int64", "int32", "int8", "uint8"])
def test_finfo_and_iinfo_of_a_dtype_are_torchs(tmp_path, dtype):
    """`-torch.finfo(x.dtype).max` (an attention mask's fill value) is a number the parser holds: each
    field of torch.finfo / torch.iinfo, read through the parser, is torch's (a layer is as wide as the
    fields that equal torch's own, written as literals; run in torch for the truth)."""
    info = "finfo" if dtype.startswith(("float", "bfloat")) else "iinfo"
    real = getattr(torch, info)(getattr(torch, dtype))
    fields = ["bits", "max", "min", "dtype"] + (["eps", "tiny", "smallest_normal", "resolution"]
                                                if info == "finfo" else [])
    same = " + ".join(f"int(i.{f} == {getattr(real, f)!r})" for f in fields)
    src = tmp_path / "m.py"
    src.write_text(_HEAD + "class M(nn.Module):\n"
                   "    def __init__(self):\n"
                   "        super().__init__()\n"
                   f"        i = torch.{info}(torch.{dtype})\n"
                   f"        self.fc = nn.Linear(2, {same})\n"
                   "    def forward(self, x):\n"
                   "        return self.fc(x).masked_fill(x[:, :1] > 0, torch.finfo(x.dtype).min)\n")
    spec = importlib.util.spec_from_file_location(f"info_{dtype}", src)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    model = mod.M()
    with torch.no_grad():
        y = model(torch.ones(2, 2))  # every row filled
    real_params = sum(p.numel() for p in model.parameters())
    lowest = torch.finfo(torch.float32).min
    assert real_params == 3 * len(fields) and y.min().item() == lowest
    r = parse_source(src, "M", inputs=[([2, 2], "float32")])
    rep = verify_graph(Design.from_dict(r.design))
    assert rep.cost["params"] == real_params
    assert next(n for n in r.design["nodes"] if n["op"] == "MaskedFill")["args"]["value"] == lowest
    assert rep.verdict != "block", [f.message for f in rep.findings]

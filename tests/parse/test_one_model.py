"""One model of PyTorch: every torch.nn layer of the op table, written in a source file,
read by the parser and checked by the verifier, against the same layer built and run in
real torch (parameter count and output shape), and the parser's view of the layer's
learned tensors against the op table's count."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

from archcurator.core.graph import Design
from archcurator.core.ops import OP_TABLE
from archcurator.core.parse import design_params, nnops, parse_source
from archcurator.core.verify import verify_graph

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from test_ops import EXAMPLES  # noqa: E402

# the layers torch.nn itself provides (the rest of the table are tensor ops and our own modules)
NN_LAYERS = sorted(op for op, spec in OP_TABLE.items() if spec.build.__qualname__ == f"build_{op}"
                   and hasattr(torch.nn, op) and len(EXAMPLES[op][0]) == 1
                   and not any(isinstance(v, dict) for v in EXAMPLES[op][1].values()))  # a nested layer is no literal


def _source(op, args):
    kw = ", ".join(f"{k}={v!r}" for k, v in args.items())
    return ("import torch.nn as nn\n\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            f"        self.layer = nn.{op}({kw})\n\n    def forward(self, x):\n        return self.layer(x)\n")


@pytest.mark.parametrize("op", NN_LAYERS)
def test_parser_and_op_table_agree_with_real_torch(op, tmp_path):
    (shape, dtype), = EXAMPLES[op][0]
    args = dict(EXAMPLES[op][1])
    src = tmp_path / f"{op.lower()}.py"
    src.write_text(_source(op, args))
    r = parse_source(src, "M", {}, [(list(shape), dtype)])
    node = next(n for n in r.design["nodes"] if n["op"] == op)
    assert node["id"] == "layer"
    real = getattr(torch.nn, op)(**args)
    x = torch.randint(0, 5, shape) if dtype == "int64" else torch.randn(shape)
    y = real(x)
    y = y[0] if isinstance(y, tuple) else y
    want = sum(p.numel() for p in real.parameters())
    assert design_params(r.design) == want
    rep = verify_graph(Design.from_dict(r.design))
    assert rep.cost["params"] == want
    assert tuple(rep.types["layer"][0].shape) == tuple(y.shape)
    # the learned tensors the parser gives the layer (self.layer.weight ...) add up to the same count
    shapes = nnops.param_shapes(op, args)
    assert sum(torch.Size(s).numel() for _, s in shapes) == want


def test_an_op_the_table_lacks_is_never_emitted(tmp_path, monkeypatch):
    # the table holds every torch.nn layer now: take one out to see what the parser does without it
    monkeypatch.delitem(OP_TABLE, "LPPool2d")
    src = tmp_path / "lp.py"
    src.write_text(_source("LPPool2d", {"norm_type": 2, "kernel_size": 2}).replace(
        "return self.layer(x)", "return self.layer(x).relu()"))
    r = parse_source(src, "M", {}, [([2, 3, 8, 8], "float32")])
    assert "LPPool2d" not in OP_TABLE
    assert [n["op"] for n in r.design["nodes"]] == ["ReLU"]
    assert any("LPPool2d" in w.message for w in r.warnings)

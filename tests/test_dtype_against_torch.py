"""Dtype verdicts and counts that an outside tester questioned, each built here and asked of real torch (the
design built by our builder, whose modules hold float32 weights as torch's constructors make them; eval runs
without autograd, as the ground child runs it; training runs forward and backward)."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings

import pytest
import torch

from archcurator.core.build import build_module, example_inputs
from archcurator.core.graph import Design
from archcurator.core.verify import verify_graph

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")  # torch's notes on its nested-tensor path


def _doc(op: str, args: dict, inputs: list, mode: str = "train", outputs=("n",)) -> dict:
    return {"format": "archgraph/1", "name": f"{op}-dtype",
            "inputs": [{"id": i, "shape": list(s), "dtype": dt} for i, s, dt in inputs],
            "nodes": [{"id": "n", "op": op, "args": args, "in": [i for i, _, _ in inputs]}],
            "outputs": list(outputs), "train": {"mode": mode}}


def _design(*a, **k) -> Design:
    return Design.from_dict(_doc(*a, **k))


def _torch_error(design: Design, mode: str) -> str | None:
    """What torch raises running the design (None: it ran), forward and, in training, backward."""
    try:
        torch.manual_seed(0)
        module = build_module(design).train(mode == "train")
        with warnings.catch_warnings(), torch.set_grad_enabled(mode == "train"):
            warnings.simplefilter("ignore")
            out = module(*example_inputs(design))
            if mode == "train":
                outs = out if isinstance(out, (tuple, list)) else [out]
                sum(o.float().sum() for o in outs if torch.is_tensor(o) and o.requires_grad).backward()
    except RuntimeError as exc:
        return str(exc)
    return None


def _agrees(design: Design, mode: str) -> None:
    report = verify_graph(design)
    error = _torch_error(design, mode)
    assert (report.verdict == "block") == (error is not None), (error, [f.message for f in report.findings])


# 1. float16 data into a module of float32 weights: torch refuses it in both modes ('All tensors must have the
# same dtype'); a module cast with .half() runs, but archgraph/1 has no way to say that, so the block stands
HALF_MODULES = [
    ("Bilinear", {"in1_features": 5, "in2_features": 6, "out_features": 3}, [("a", (4, 5)), ("b", (4, 6))]),
    ("Linear", {"in_features": 5, "out_features": 3}, [("a", (4, 5))]),
    ("MultiheadAttention", {"embed_dim": 8, "num_heads": 2, "batch_first": True},
     [("q", (2, 5, 8)), ("k", (2, 5, 8)), ("v", (2, 5, 8))]),
    ("TransformerEncoderLayer", {"d_model": 8, "nhead": 2, "dim_feedforward": 16, "batch_first": True},
     [("x", (2, 5, 8))]),
]


@pytest.mark.parametrize("mode", ["train", "eval"])
@pytest.mark.parametrize("op,args,operands", HALF_MODULES, ids=[c[0] for c in HALF_MODULES])
def test_float16_data_into_float32_weights_is_judged_as_torch_judges_it(op, args, operands, mode):
    outputs = ("n:0",) if op == "MultiheadAttention" else ("n",)
    _agrees(_design(op, args, [(i, s, "float16") for i, s in operands], mode, outputs), mode)


# 2. the parameter count does not depend on the dtype the data has: a node refused for its dtype had counted 0
@pytest.mark.parametrize("op,args,operands", HALF_MODULES, ids=[c[0] for c in HALF_MODULES])
def test_the_parameter_count_of_a_node_refused_for_its_dtype_is_the_modules(op, args, operands, tmp_path):
    outputs = ("n:0",) if op == "MultiheadAttention" else ("n",)
    counts = []
    for dtype in ("float16", "float32"):
        doc = _doc(op, args, [(i, s, dtype) for i, s in operands], outputs=outputs)
        path = tmp_path / f"{dtype}.json"
        path.write_text(json.dumps(doc))
        done = subprocess.run([sys.executable, "-m", "archcurator", "verify", str(path), "--json"],
                              capture_output=True, text=True, timeout=120)
        answer = json.loads(done.stdout)
        counts.append((answer["verdict"], answer["cost"]["params"]))
    torch_count = sum(p.numel() for p in build_module(Design.from_dict(doc)).parameters())
    assert counts == [("block", torch_count), ("pass", torch_count)]

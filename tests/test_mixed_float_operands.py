"""Every op of the table with several float operands, one of them in another float dtype: the verdict
agrees with torch (built by our builder, one forward in eval mode). Torch refuses mixed float operands in
every such module whose weights are float32 (Bilinear, MultiheadAttention, the Transformer family): those
passed before, and crashed in the run; the element-wise ops promote and run."""

from __future__ import annotations

import warnings

import pytest
import torch

from archcurator.core.build import build_module, example_inputs
from archcurator.core.graph import Design
from archcurator.core.ops.examples import EXAMPLES
from archcurator.core.verify import verify_graph


def _mixed_cases():
    for op, (operands, args) in sorted(EXAMPLES.items()):
        floats = [i for i, (_, dt) in enumerate(operands) if dt == "float32"]
        if len(floats) < 2:
            continue
        for k in floats:
            for other in ("float64", "bfloat16"):
                yield pytest.param(op, operands, args, k, other, id=f"{op}-{k}-{other}")


def _design(op, operands, args, k, other) -> Design:
    return Design.from_dict({
        "format": "archgraph/1", "name": f"{op}-mixed",
        "inputs": [{"id": f"x{i}", "shape": list(s), "dtype": other if i == k else dt}
                   for i, (s, dt) in enumerate(operands)],
        "nodes": [{"id": "n", "op": op, "args": args, "in": [f"x{i}" for i in range(len(operands))]}],
        "outputs": ["n"], "train": {"mode": "eval"}})


@pytest.mark.parametrize("op,operands,args,k,other", _mixed_cases())
def test_mixed_float_operands_are_refused_exactly_where_torch_refuses_them(op, operands, args, k, other):
    design = _design(op, operands, args, k, other)
    report = verify_graph(design)
    try:
        module = build_module(design).eval()
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            module(*example_inputs(design))
        torch_error = None
    except RuntimeError as exc:
        torch_error = str(exc)
    if torch_error is None:
        assert report.verdict != "block", [f.message for f in report.findings]
    else:
        assert report.verdict == "block", torch_error
        assert any(f.rule == "dtype.mixed" for f in report.findings), [f.rule for f in report.findings]

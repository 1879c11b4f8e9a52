"""Every op of the table with several float operands, one of them in another dtype (float or not): the verdict
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
            for other in ("float64", "bfloat16", "int64", "bool"):
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
        assert any(f.rule.startswith("dtype.") for f in report.findings), [f.rule for f in report.findings]


def _run_in_torch(design: Design, mode: str) -> str | None:
    try:
        module = build_module(design).train(mode == "train")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if mode == "eval":
                with torch.no_grad():
                    module(*example_inputs(design))
            else:
                module(*example_inputs(design))
    except RuntimeError as exc:
        return str(exc)
    return None


@pytest.mark.parametrize("mode", ["eval", "train"])
@pytest.mark.parametrize("mask_dtype", ["float16", "float64", "bfloat16", "float32", "bool"])
@pytest.mark.parametrize("which", ["attn_mask", "key_padding_mask"])
def test_a_multihead_attention_float_mask_in_another_dtype_than_the_query_is_refused_as_torch_refuses_it(
        which, mask_dtype, mode):
    shape = [5, 5] if which == "attn_mask" else [2, 5]
    inputs = [{"id": "q", "shape": [2, 5, 8], "dtype": "float32"}, {"id": "m", "shape": shape, "dtype": mask_dtype}]
    operands = ["q", "q", "q", "m"] if which == "attn_mask" else ["q", "q", "q", "none", "m"]
    nodes = [{"id": "att", "op": "MultiheadAttention", "args": {"embed_dim": 8, "num_heads": 2, "batch_first": True},
              "in": operands}]
    if which == "key_padding_mask":  # no attn_mask: a None operand is not in archgraph/1, so give a bool one
        inputs.append({"id": "none", "shape": [5, 5], "dtype": "bool"})
    design = Design.from_dict({"format": "archgraph/1", "name": "mha-mask", "inputs": inputs, "nodes": nodes,
                               "outputs": ["att:0"], "train": {"mode": mode}})
    report = verify_graph(design)
    torch_error = _run_in_torch(design, mode)
    # torch adds the two masks first: a float64 padding mask promotes the sum, which then fails (a false pass
    # until the verifier followed the sum)
    assert (report.verdict == "block") == (torch_error is not None), (torch_error, [f.message for f in report.findings])


def test_an_operand_of_unknown_type_is_not_read_as_float32():
    """A dangling key read as float32 beside a float16 query had said 'operand 1: float32' (a blind tester's
    find): the dangling reference is the one block."""
    design = Design.from_dict({
        "format": "archgraph/1", "name": "bl-dangling",
        "inputs": [{"id": "a", "shape": [2, 4], "dtype": "float16"}],
        "nodes": [{"id": "bl", "op": "Bilinear", "args": {"in1_features": 4, "in2_features": 5, "out_features": 3},
                   "in": ["a", "nowhere"]}],
        "outputs": ["bl"]})
    rules = [f.rule for f in verify_graph(design).findings]
    assert "dtype.mixed" not in rules and rules, rules

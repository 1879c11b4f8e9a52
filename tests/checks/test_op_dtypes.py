"""Grounding at the op level: every op of the table meets integer and float inputs alone in a
one-node design; the verifier blocks it exactly when torch fails on it (in the ground child)."""

from __future__ import annotations

import pytest

from archcurator.core.graph import Design
from archcurator.core.ops import OP_TABLE
from archcurator.core.verify import verify_graph

ARGS = {
    "Linear": {"in_features": 8, "out_features": 4}, "Bilinear": None,
    "Conv1d": {"in_channels": 4, "out_channels": 4, "kernel_size": 3},
    "Conv2d": {"in_channels": 4, "out_channels": 4, "kernel_size": 3},
    "Conv3d": {"in_channels": 4, "out_channels": 4, "kernel_size": 3},
    "ConvTranspose1d": {"in_channels": 4, "out_channels": 4, "kernel_size": 3},
    "ConvTranspose2d": {"in_channels": 4, "out_channels": 4, "kernel_size": 3},
    "ConvTranspose3d": {"in_channels": 4, "out_channels": 4, "kernel_size": 3},
    "BatchNorm1d": {"num_features": 4}, "BatchNorm2d": {"num_features": 4}, "BatchNorm3d": {"num_features": 4},
    "LayerNorm": {"normalized_shape": 8}, "RMSNorm": {"normalized_shape": 8},
    "GroupNorm": {"num_groups": 2, "num_channels": 4}, "InstanceNorm2d": {"num_features": 4},
    "Embedding": {"num_embeddings": 16, "embedding_dim": 4},
    "LSTM": {"input_size": 8, "hidden_size": 4}, "GRU": {"input_size": 8, "hidden_size": 4},
    "RNN": {"input_size": 8, "hidden_size": 4},
    "MultiheadAttention": {"embed_dim": 8, "num_heads": 2},
    "TransformerEncoderLayer": {"d_model": 8, "nhead": 2, "dim_feedforward": 16},
    "TransformerDecoderLayer": None,
    "Softmax": {"dim": -1}, "LogSoftmax": {"dim": -1},
    "Unflatten": {"dim": 1, "unflattened_size": [2, 2]}, "Reshape": {"shape": [2, -1]},
    "Permute": {"dims": [0, 1, 3, 2]}, "Transpose": {"dim0": 1, "dim1": 2}, "Unsqueeze": {"dim": 0},
    "Mean": {"dim": -1}, "Sum": {"dim": -1}, "Select": {"dim": 1, "index": 0},
    "Slice": {"dim": 1, "start": 0, "end": 2}, "Expand": {"shape": [2, 4, 8, 8]}, "Scale": {"value": 0.5},
    "Upsample": {"scale_factor": 2}, "Split": {"split_size_or_sections": 2, "dim": 1}, "Concat": {"dim": 1},
    "Stack": {"dim": 0},
}
MULTI_RESULT = {"LSTM", "GRU", "RNN", "MultiheadAttention", "Split"}
BINARY = {"Add", "Sub", "Mul", "Div", "MatMul", "Concat", "Stack"}
SEQUENCE = {"LSTM", "GRU", "RNN", "MultiheadAttention", "TransformerEncoderLayer", "BatchNorm1d"}


def _default_args(op, spec):
    if op.startswith(("MaxPool", "AvgPool")):
        return {"kernel_size": 2}
    if op.startswith("Adaptive"):
        return {"output_size": 1}
    if "Pad" in op:
        return {"padding": 1, "value": 0.0} if op.startswith("Constant") else {"padding": 1}
    args = ARGS.get(op, {})
    if args is None or any(a.required and a.name not in args for a in spec.args):
        return None
    return args


def one_node_designs():
    out = []
    for op, spec in sorted(OP_TABLE.items()):
        if spec.arity[0] != 1 and op not in BINARY:
            continue
        args = _default_args(op, spec)
        if args is None:
            continue
        if op in SEQUENCE or (op.endswith("1d") and not op.startswith("BatchNorm")):
            shape = [2, 4, 8]
        elif op.endswith("3d"):
            shape = [2, 4, 8, 8, 8]
        else:
            shape = [2, 4, 8, 8]
        for dtype in ("int64", "float32"):
            out.append({"case": f"{op}/{dtype}", "graph": {
                "format": "archgraph/1", "name": op, "inputs": [{"id": "x", "shape": shape, "dtype": dtype}],
                "nodes": [{"id": "n", "op": op, "args": args, "in": ["x", "x"] if op in BINARY else ["x"]}],
                "outputs": ["n:0" if op in MULTI_RESULT else "n"]}})
    return out


@pytest.mark.slow
def test_every_op_blocks_exactly_when_torch_fails_on_its_dtype():
    from archcurator.core.ground import observe_all

    cases = one_node_designs()
    assert len(cases) > 100
    obs = observe_all(cases, timeout=30)
    wrong = []
    for c in cases:
        report = verify_graph(Design.from_dict(c["graph"]))
        o = obs[c["case"]]
        if (report.verdict == "block") != (o["status"] != "ok"):
            wrong.append(f"{c['case']}: verdict {report.verdict} "
                         f"{[f.rule for f in report.findings if f.severity == 'block']}, torch {o['status']} "
                         f"{o['exception']}: {o['message'][:80]}")
    assert not wrong, "\n".join(wrong)


@pytest.mark.slow
def test_every_op_of_the_table_blocks_exactly_when_torch_fails_on_int_and_float_data():
    """Every op's example (core/ops/examples.py), its data operands given as int64 and as float32 values:
    the verdict blocks exactly when torch fails on it."""
    from archcurator.core.ground import observe_all
    from archcurator.core.ops.examples import EXAMPLES

    cases = []
    for op, (operands, args) in sorted(EXAMPLES.items()):
        if not operands:
            continue
        for dtype in ("int64", "float32"):
            # index and id operands declare their values' range (all zeros: valid for any size)
            inputs = [{"id": f"in{i}", "shape": list(s), "dtype": dtype if dt == "float32" else dt,
                       **({"vocab_size": 1} if dt == "int64" else {})} for i, (s, dt) in enumerate(operands)]
            cases.append({"case": f"{op}/{dtype}", "graph": {
                "format": "archgraph/1", "name": op, "inputs": inputs,
                "nodes": [{"id": "n", "op": op, "args": args, "in": [i["id"] for i in inputs]}],
                "outputs": ["n"]}})
    assert len(cases) > 280
    obs = observe_all(cases, timeout=30)
    wrong = []
    for c in cases:
        report = verify_graph(Design.from_dict(c["graph"]))
        o = obs[c["case"]]
        if (report.verdict == "block") != (o["status"] != "ok"):
            wrong.append(f"{c['case']}: verdict {report.verdict} "
                         f"{[f.rule for f in report.findings if f.severity == 'block']}, torch {o['status']} "
                         f"{o['exception']}: {o['message'][:80]}")
    assert not wrong, "\n".join(wrong)


@pytest.mark.slow
def test_the_measured_dtype_table_is_what_torch_does():
    from archcurator.core.ground.dtypes import measure
    from archcurator.core.ops.dtype_support import SUPPORT

    assert measure() == SUPPORT, "core/ops/dtype_support.py is stale: run python -m archcurator.core.ground.dtypes"

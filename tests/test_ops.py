"""Every op of the table agrees with PyTorch: shapes, parameter count, FLOPs.

One example per op, built with our builder and run on the meta device;
inference, the parameter rule and the FLOP rule must give what torch gives.
"""

from __future__ import annotations

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from archcurator.core import dims as D
from archcurator.core.build import build_module
from archcurator.core.graph import Design
from archcurator.core.ops import OP_TABLE
from archcurator.core.ops.examples import EXAMPLES, INT, F  # noqa: F401
from archcurator.core.shapes import infer_design

# torch.nn layer classes not in the op table, each with the reason (a test keeps this list honest)
NOT_OPS = {
    "Module": "the base class of every layer, not a layer",
    "Container": "a container (deprecated), not a layer",
    "Sequential": "a container: its layers are the design's nodes",
    "ModuleList": "a container: its layers are the design's nodes",
    "ModuleDict": "a container: its layers are the design's nodes",
    "ParameterList": "a container of parameters: each is a Parameter node",
    "ParameterDict": "a container of parameters: each is a Parameter node",
    "RNNBase": "the base class of RNN / LSTM / GRU, which are ops",
    "RNNCellBase": "the base class of RNNCell / LSTMCell / GRUCell, which are ops",
    "AdaptiveLogSoftmaxWithLoss": "a loss: its forward takes the target and returns the loss",
    "LazyLinear": "a lazy module infers in_features at its first call; archgraph/1 states every size: write Linear",
    "LazyConv1d": "lazy: write Conv1d with in_channels", "LazyConv2d": "lazy: write Conv2d with in_channels",
    "LazyConv3d": "lazy: write Conv3d with in_channels",
    "LazyConvTranspose1d": "lazy: write ConvTranspose1d", "LazyConvTranspose2d": "lazy: write ConvTranspose2d",
    "LazyConvTranspose3d": "lazy: write ConvTranspose3d",
    "LazyBatchNorm1d": "lazy: write BatchNorm1d", "LazyBatchNorm2d": "lazy: write BatchNorm2d",
    "LazyBatchNorm3d": "lazy: write BatchNorm3d",
    "LazyInstanceNorm1d": "lazy: write InstanceNorm1d", "LazyInstanceNorm2d": "lazy: write InstanceNorm2d",
    "LazyInstanceNorm3d": "lazy: write InstanceNorm3d",
}


def _design(op, operands, args):
    inputs = [{"id": f"in{i}", "shape": list(s), "dtype": dt} for i, (s, dt) in enumerate(operands)]
    return Design.from_dict({
        "format": "archgraph/1", "name": f"one-{op}", "inputs": inputs,
        "nodes": [{"id": "n", "op": op, "args": args, "in": [i["id"] for i in inputs]}],
        "outputs": ["n"],
    })


def test_every_op_has_an_example():
    assert set(OP_TABLE) == set(EXAMPLES)


def test_every_torch_nn_layer_is_an_op_or_has_a_written_reason():
    """Every public layer class of torch.nn.modules (losses aside) is in the op table, or in NOT_OPS with
    the reason it is not."""
    import inspect

    from torch import nn

    classes = {name for name in dir(nn.modules) if inspect.isclass(getattr(nn.modules, name))
               and issubclass(getattr(nn.modules, name), nn.Module) and not name.startswith("_")
               and getattr(nn.modules, name).__module__.split(".")[-1] != "loss"}
    missing = sorted(classes - set(OP_TABLE) - set(NOT_OPS))
    assert not missing, f"torch.nn layers neither in the op table nor given a reason: {missing}"
    assert not set(NOT_OPS) & set(OP_TABLE)
    assert all(len(why) > 10 for why in NOT_OPS.values())


@pytest.mark.parametrize("op", sorted(EXAMPLES))
def test_op_agrees_with_torch(op):
    operands, args = EXAMPLES[op]
    design = _design(op, operands, args)
    inf = infer_design(design)
    assert not [v for v in inf.violations if v.severity == "block"], inf.violations
    model = build_module(design, device="meta").eval()
    assert sum(p.numel() for p in model.parameters()) == inf.params["n"]
    xs = [torch.empty(s, dtype=getattr(torch, dt), device="meta") for s, dt in operands]
    with FlopCounterMode(display=False) as counter:
        env = model.forward_all(*xs)
    got = [tuple(t.shape) for t in env["n"]]
    want = [t.shape for t in inf.types["n"]]
    assert got == [tuple(w) for w in want]
    assert [str(t.dtype).removeprefix("torch.") for t in env["n"]] == \
        [{"float": "float32", "long": "int64"}.get(t.dtype, t.dtype) for t in inf.types["n"]]
    flops = inf.flops["n"]
    if op == "Bilinear":
        assert flops == 0  # documented: _trilinear is not counted by FlopCounterMode
    else:
        assert flops == counter.get_total_flops()


def test_symbols_propagate_and_unknowns_do_not_block():
    d = Design.from_dict({
        "format": "archgraph/1", "name": "sym",
        "inputs": [{"id": "x", "shape": ["B", "T", 16]}, {"id": "u", "shape": [None, 3]}],
        "nodes": [
            {"id": "fc", "op": "Linear", "args": {"in_features": 16, "out_features": 8}, "in": ["x"]},
            {"id": "flat", "op": "Flatten", "in": ["fc"]},
            {"id": "g", "op": "Linear", "args": {"in_features": 3, "out_features": 2}, "in": ["u"]},
            {"id": "odd", "op": "Linear", "args": {"in_features": 96, "out_features": 2}, "in": ["flat"]},
            {"id": "never", "op": "Linear", "args": {"in_features": 99, "out_features": 2}, "in": ["flat"]},
        ],
        "outputs": ["odd", "g", "never"],
    })
    inf = infer_design(d)
    assert inf.types["fc"][0].shape == ("B", "T", 8)
    assert inf.types["flat"][0].shape == ("B", "8*T")
    assert inf.types["g"][0].shape == (None, 2)
    # 8*T against 96: it runs only when T = 12, a condition stated as a warn; the unknown width never blocks
    by_node = {v.nodes[0]: v for v in inf.violations}
    assert by_node["odd"].severity == "warn" and by_node["odd"].rule == "shape.symbol-condition"
    assert "8*T = 96" in by_node["odd"].message
    assert "g" not in by_node
    # 8*T against 99: no size T satisfies it, so the design can never run
    assert by_node["never"].severity == "block" and "no size satisfies" in by_node["never"].message


def test_declared_sizes_decide_a_symbol_condition():
    def one(train):
        d = {"format": "archgraph/1", "name": "c", "inputs": [{"id": "x", "shape": ["B", "T", 16]}],
             "nodes": [{"id": "t", "op": "Transpose", "args": {"dim0": 1, "dim1": 2}, "in": ["x"]},
                       {"id": "fc", "op": "Linear", "args": {"in_features": 64, "out_features": 2}, "in": ["t"]}],
             "outputs": ["fc"]}
        if train:
            d["train"] = train
        return [(v.rule, v.severity) for v in infer_design(Design.from_dict(d)).violations]

    assert one(None) == [("shape.symbol-condition", "warn")]
    assert one({"seq_len": 64}) == []  # the declared sizes satisfy it: nothing for a curator to judge (issue 26)
    assert one({"seq_len": 128}) == [("shape.linear-width", "block")]


def test_every_violated_requirement_is_reported_and_the_walk_goes_on():
    d = Design.from_dict({
        "format": "archgraph/1", "name": "two-faults",
        "inputs": [{"id": "x", "shape": ["B", 10]}],
        "nodes": [
            {"id": "a", "op": "Linear", "args": {"in_features": 12, "out_features": 8}, "in": ["x"]},
            {"id": "b", "op": "ReLU", "in": ["a"]},
            {"id": "c", "op": "MultiheadAttention", "args": {"embed_dim": 10, "num_heads": 3}, "in": ["x", "x", "x"]},
        ],
        "outputs": ["b", "c"],
    })
    inf = infer_design(d)
    rules = sorted((v.rule, tuple(v.nodes)) for v in inf.violations)
    assert ("shape.linear-width", ("a",)) in rules
    assert ("shape.heads-divisibility", ("c",)) in rules
    assert all("a" in v.message or "c" in v.message for v in inf.violations)
    assert inf.types["a"][0].shape == ("B", 8)  # the output width is still known


def test_dims_arithmetic():
    assert D.mul("B", 3) == "3*B"
    assert D.mul("3*B", "T") == "3*B*T"
    assert D.exact_div("3*B*T", "T") == "3*B"
    assert D.conv_out("H", 3, 1, 1) == "H"
    assert D.substitute(D.conv_out("H", 3, 2, 1), {"H": 32}) == 16
    assert D.same("B", "B") is True and D.same("B", 3) is None and D.differ(3, 4)


def test_tied_head_shares_only_its_weight():
    d = Design.from_dict({
        "format": "archgraph/1", "name": "tied",
        "inputs": [{"id": "ids", "shape": ["B", 5], "dtype": "int64"}],
        "nodes": [
            {"id": "wte", "op": "Embedding", "args": {"num_embeddings": 40, "embedding_dim": 6}, "in": ["ids"]},
            {"id": "head", "op": "Linear", "args": {"in_features": 6, "out_features": 40}, "in": ["wte"],
             "shares": "wte"},
        ],
        "outputs": ["head"],
    })
    inf = infer_design(d)
    model = build_module(d, device="meta")
    assert sum(inf.params.values()) == sum(p.numel() for p in model.parameters()) == 40 * 6 + 40


def _tied(head_args):
    return Design.from_dict({
        "format": "archgraph/1", "name": "tied",
        "inputs": [{"id": "ids", "shape": [2, 5], "dtype": "int64"}],
        "nodes": [
            {"id": "wte", "op": "Embedding", "args": {"num_embeddings": 40, "embedding_dim": 6}, "in": ["ids"]},
            {"id": "head", "op": "Linear", "args": head_args, "in": ["wte"], "shares": "wte"},
        ],
        "outputs": ["head"],
    })


def test_a_tied_weight_wins_as_in_torch():
    """A tied head declared with other sizes runs in torch (the tied weight wins): a warn naming what is
    ignored; one whose own bias cannot fit the tied rows fails in torch: a block."""
    from archcurator.core.verify import verify_graph

    ignored = _tied({"in_features": 7, "out_features": 50, "bias": False})
    report = verify_graph(ignored)
    assert report.verdict == "warn" and [f.rule for f in report.findings] == ["shape.shares-ignored"]
    assert "in_features=7" in report.findings[0].message and "out_features=50" in report.findings[0].message
    model = build_module(ignored, device="cpu")
    out = model(torch.zeros(2, 5, dtype=torch.long))
    assert tuple(out.shape) == tuple(infer_design(ignored).types["head"][0].shape) == (2, 5, 40)
    assert sum(p.numel() for p in model.parameters()) == report.cost["params"] == 240

    bias = _tied({"in_features": 6, "out_features": 50})
    assert [f.rule for f in verify_graph(bias).findings if f.severity == "block"] == ["shape.shares-mismatch"]
    with pytest.raises(RuntimeError):
        build_module(bias, device="cpu")(torch.zeros(2, 5, dtype=torch.long))


def test_a_module_called_twice_runs_with_the_first_calls_arguments():
    from archcurator.core.verify import verify_graph

    d = Design.from_dict({
        "format": "archgraph/1", "name": "twice", "inputs": [{"id": "x", "shape": [2, 8]}],
        "nodes": [{"id": "a", "op": "Linear", "args": {"in_features": 8, "out_features": 8}, "in": ["x"]},
                  {"id": "b", "op": "Linear", "args": {"in_features": 8, "out_features": 8, "bias": False},
                   "in": ["a"], "shares": "a"}],
        "outputs": ["b"]})
    report = verify_graph(d)
    assert report.verdict == "warn" and "bias=False" in report.findings[0].message
    model = build_module(d, device="cpu")
    assert model(torch.zeros(2, 8)).shape == (2, 8)
    assert sum(p.numel() for p in model.parameters()) == report.cost["params"] == 72


def test_weight_norm_counts_as_torch_counts():
    from archcurator.core.verify import verify_graph

    d = Design.from_dict({
        "format": "archgraph/1", "name": "wn", "inputs": [{"id": "x", "shape": [2, 3, 8, 8]}],
        "nodes": [{"id": "c", "op": "Conv2d", "args": {"in_channels": 3, "out_channels": 4, "kernel_size": 3},
                   "in": ["x"], "parametrize": "weight_norm"},
                  {"id": "f", "op": "Flatten", "in": ["c"]},
                  {"id": "l", "op": "Linear", "args": {"in_features": 144, "out_features": 2}, "in": ["f"],
                   "parametrize": "spectral_norm"}],
        "outputs": ["l"]})
    report = verify_graph(d)
    model = build_module(d, device="cpu")
    model(torch.randn(2, 3, 8, 8))
    assert report.verdict != "block", report.findings
    assert sum(p.numel() for p in model.parameters()) == report.cost["params"] == (4 * 27 + 4 + 4) + (144 * 2 + 2)

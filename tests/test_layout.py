"""core/ops/layout.py against torch: which permuted layouts the layout-reading kernels refuse, and the
verifier's verdict on designs that permute before them."""

from __future__ import annotations

import random

import pytest
import torch

from archcurator.core.graph import Design
from archcurator.core.ground.child import observe_eager
from archcurator.core.ops.layout import KEEPS_LAYOUT, refusal
from archcurator.core.verify import verify_graph

KERNELS = {"LocalResponseNorm": lambda: torch.nn.LocalResponseNorm(2), "MaxPool3d": lambda: torch.nn.MaxPool3d(1),
           "PixelShuffle": lambda: torch.nn.PixelShuffle(1), "PixelUnshuffle": lambda: torch.nn.PixelUnshuffle(1)}


def _permuted(sizes, order):
    inv = [order.index(i) for i in range(len(sizes))]
    return torch.randn([sizes[d] for d in order]).permute(inv)


@pytest.mark.slow
def test_refusals_match_the_kernels_on_random_layouts():
    rng = random.Random(7)
    wrong = []
    for _ in range(400):
        r = rng.choice((4, 5, 6))
        sizes = tuple(rng.choice((1, 1, 2, 3, 4)) for _ in range(r))
        order = tuple(rng.sample(range(r), r))
        for op, make in KERNELS.items():
            try:
                make()(_permuted(sizes, order))
                fails = False
            except Exception as exc:  # noqa: BLE001 - the kernels' other refusals are not about layout
                fails = "memory format" in str(exc) or "view size" in str(exc)
            if fails != (refusal(op, sizes, order) is not None):
                wrong.append((op, sizes, order, fails))
    assert not wrong, wrong[:5]


@pytest.mark.parametrize("op", sorted(KEEPS_LAYOUT))
def test_ops_said_to_keep_the_layout_keep_it(op):
    from archcurator.core.ops import OP_TABLE
    from archcurator.core.ops.examples import EXAMPLES

    spec = OP_TABLE[op]
    x = _permuted((2, 3, 4, 5, 6), (0, 1, 2, 4, 3))
    for training in (True, False):
        mod = spec.build(spec.resolve_args(EXAMPLES.get(op, ([], {}))[1])[0])
        mod.train(training)
        assert mod(x).stride() == x.stride(), (op, training)


def _g(shape, nodes, train=None):
    d = {"format": "archgraph/1", "name": "layout", "inputs": [{"id": "x0", "shape": shape, "dtype": "float32"}],
         "nodes": [{"id": f"n{i}", "op": op, "args": args, "in": ins} for i, (op, args, ins) in enumerate(nodes)],
         "outputs": [f"n{len(nodes) - 1}"]}
    if train:
        d["train"] = train
    return d


DESIGNS = {
    # gen-120931: an einops reorder leaves an unbatched 4-D map channels-last for MaxPool3d
    "maxpool3d-after-repeat-reorder": _g([5, 12, 6, 7], [("Repeat", {"pattern": "a b c d -> a d b c"}, ["x0"]),
                                                         ("MaxPool3d", {"kernel_size": [1, 3, 3]}, ["n0"])]),
    # gen-144895: a Reduce that reduces nothing reorders; LocalResponseNorm's view cannot merge
    "lrn-after-reduce-reorder": _g([8, 12, 4, 2, 16], [("Reduce", {"pattern": "a b c d e -> d a b e c",
                                                                   "reduction": "prod"}, ["x0"]),
                                                       ("LocalResponseNorm", {"size": 3}, ["n0"])]),
    "lrn-through-relu-and-dropout": _g(["B", 3, 4, 5, 6], [("Transpose", {"dim0": 3, "dim1": 4}, ["x0"]),
                                                           ("ReLU", {}, ["n0"]), ("Dropout", {"p": 0.1}, ["n1"]),
                                                           ("LocalResponseNorm", {"size": 2}, ["n2"])]),
    "lrn-after-a-mergeable-permute": _g(["B", 3, 4, 5, 6], [("Permute", {"dims": [0, 2, 1, 3, 4]}, ["x0"]),
                                                            ("LocalResponseNorm", {"size": 2}, ["n0"])]),
    "lrn-after-permute-and-back": _g(["B", 3, 4, 5, 6], [("Transpose", {"dim0": 3, "dim1": 4}, ["x0"]),
                                                         ("Transpose", {"dim0": -1, "dim1": -2}, ["n0"]),
                                                         ("LocalResponseNorm", {"size": 2}, ["n1"])]),
    "lrn-after-logsigmoid-copies": _g(["B", 3, 4, 5, 6], [("Transpose", {"dim0": 3, "dim1": 4}, ["x0"]),
                                                          ("LogSigmoid", {}, ["n0"]),
                                                          ("LocalResponseNorm", {"size": 2}, ["n1"])]),
    # channels-last data (N, D, H, W, C) moved to (N, C, D, H, W) by a Permute alone
    "pixelshuffle-5d-channels-last-3d": _g([2, 3, 2, 2, 4], [("Permute", {"dims": [0, 4, 1, 2, 3]}, ["x0"]),
                                                             ("Tanh", {}, ["n0"]),
                                                             ("PixelShuffle", {"upscale_factor": 1}, ["n1"])]),
    "pixelshuffle-5d-permuted-back": _g([2, 3, 2, 2, 4], [("Permute", {"dims": [0, 4, 1, 2, 3]}, ["x0"]),
                                                          ("Permute", {"dims": [0, 2, 3, 4, 1]}, ["n0"]),
                                                          ("PixelShuffle", {"upscale_factor": 1}, ["n1"])]),
}


@pytest.mark.parametrize("name", sorted(DESIGNS))
def test_block_iff_torch_refuses_the_layout(name):
    graph = DESIGNS[name]
    seen = observe_eager(graph)
    report = verify_graph(Design.from_dict(graph))
    assert (report.verdict == "block") == (seen["status"] != "ok"), (seen, [(f.rule, f.message)
                                                                           for f in report.findings])

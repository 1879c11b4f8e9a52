"""Upsample, F.interpolate and the Upsampling*2d layers share one size / scale rule (core/ops/functional.py
`resized`): each case is measured against torch, and a case torch refuses with one error is refused under one
rule whichever op wrote it."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from archcurator.core.graph import Design
from archcurator.core.ops.rules import SHAPE_SPATIAL_COLLAPSE
from archcurator.core.verify import verify_graph

OPS = ("Upsample", "Interpolate", "UpsamplingNearest2d", "UpsamplingBilinear2d")
CASES = ({"size": 0}, {"size": [0, 4]}, {"size": [4, 0]}, {"size": -1}, {"size": [2, 3]}, {"size": 3},
         {"size": [2, 3, 4]}, {"scale_factor": 0.1}, {"scale_factor": 0.25}, {"scale_factor": 2},
         {"scale_factor": [2, 0.1]}, {"scale_factor": [2, 2, 2]}, {}, {"size": 2, "scale_factor": 2},
         {"scale_factor": 0}, {"scale_factor": -1}, {"scale_factor": 1.5})


def _torch_runs(op: str, args: dict) -> bool:
    x = torch.randn(1, 2, 4, 4)
    try:
        if op == "Interpolate":
            F.interpolate(x, **args)
        else:
            kw = dict(args)
            if op == "Upsample" and isinstance(kw.get("scale_factor"), list):
                kw["scale_factor"] = tuple(kw["scale_factor"])  # what the builder hands nn.Upsample
            getattr(nn, op)(**kw)(x)
    except (RuntimeError, ValueError, TypeError):
        return False
    return True


def _blocks(op: str, args: dict) -> list[str]:
    d = {"format": "archgraph/1", "name": "probe", "inputs": [{"id": "x", "shape": [1, 2, 4, 4], "dtype": "float32"}],
         "nodes": [{"id": "u", "op": op, "args": args, "in": ["x"]}], "outputs": ["u"]}
    return [f.rule for f in verify_graph(Design.from_dict(d)).findings if f.severity == "block"]


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("args", CASES, ids=repr)
def test_verdict_is_torchs(op, args):
    assert _torch_runs(op, args) == (not _blocks(op, args))


@pytest.mark.parametrize("args", [{"size": 0}, {"size": [0, 4]}, {"scale_factor": 0.1}], ids=repr)
def test_one_torch_error_names_one_rule_whatever_op_wrote_it(args):
    assert {tuple(_blocks(op, args)) for op in OPS} == {(SHAPE_SPATIAL_COLLAPSE,)}

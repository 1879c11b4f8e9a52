"""The cost quote says what it leaves out: a triage reads it as what one run would have cost."""

from __future__ import annotations

import torch

from archcurator.core.graph import Design
from archcurator.core.verify import verify_graph


def _design(second_in: int) -> Design:
    return Design.from_dict({
        "format": "archgraph/1", "name": "two-linears",
        "inputs": [{"id": "x", "shape": [8, 16]}],
        "nodes": [{"id": "a", "op": "Linear", "args": {"in_features": 16, "out_features": 32}, "in": ["x"]},
                  {"id": "r", "op": "ReLU", "in": ["a"]},
                  {"id": "b", "op": "Linear", "args": {"in_features": second_in, "out_features": 4}, "in": ["r"]}],
        "outputs": ["b"]})


def test_a_refused_layer_is_named_as_left_out_of_the_flops():
    report = verify_graph(_design(31))
    assert report.verdict == "block"
    # torch agrees the layer cannot run on this input
    try:
        torch.nn.Linear(31, 4)(torch.relu(torch.nn.Linear(16, 32)(torch.zeros(8, 16))))
        raise AssertionError("torch ran a Linear(31, 4) on 32 features")
    except RuntimeError:
        pass
    said = [a for a in report.cost["assumptions"] if "refused" in a]
    assert said == ["FLOPs of 1 refused node(s) not counted (first: b)"]
    # the FLOPs quoted are the first layer's alone: its share (16 x 32 multiply-adds against 32 x 4) of the
    # sound design's figure
    sound = verify_graph(_design(32)).cost["flops_per_sample"]
    assert report.cost["flops_per_sample"] * (16 * 32 + 32 * 4) == sound * (16 * 32)


def test_a_sound_design_says_nothing_is_left_out():
    report = verify_graph(_design(32))
    assert report.verdict == "pass"
    assert not [a for a in report.cost["assumptions"] if "refused" in a or "unknown" in a]

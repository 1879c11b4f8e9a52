"""Add and Mul take two or more operands, as torch runs a + b + c + d (WaveNet's sum of skips, from the
outside tester's blind set 1); Sub and Div stay binary. Truth: the design run eagerly in real torch."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from archcurator.core.graph import Design
from archcurator.core.ground.child import observe_eager
from archcurator.core.verify import verify_graph

WAVENET = json.loads((Path(__file__).parent / "fixtures" / "blind_set1" / "wavenet-c00.json").read_text())


def _skip_sum(graph: dict) -> dict:
    return next(n for n in graph["nodes"] if n["id"] == "skip_sum")


def test_a_sum_of_four_skips_runs_in_torch_and_is_not_blocked():
    assert len(_skip_sum(WAVENET)["in"]) == 4
    assert observe_eager(WAVENET)["status"] == "ok"
    report = verify_graph(Design.from_dict(WAVENET))
    assert report.verdict != "block", [f.message for f in report.findings if f.severity == "block"]


def test_an_nary_mul_runs_and_sub_stays_binary():
    graph = copy.deepcopy(WAVENET)
    _skip_sum(graph)["op"] = "Mul"
    assert observe_eager(graph)["status"] == "ok"
    assert verify_graph(Design.from_dict(graph)).verdict != "block"
    _skip_sum(graph)["op"] = "Sub"
    found = [f for f in verify_graph(Design.from_dict(graph)).findings if f.severity == "block"]
    assert any(f.rule == "shape.arity" for f in found)


def test_an_operand_that_cannot_broadcast_in_an_nary_add_blocks():
    graph = copy.deepcopy(WAVENET)
    node = _skip_sum(graph)
    src = next(n for n in graph["nodes"] if n["id"] == node["in"][-1].split(":")[0])
    graph["nodes"].append({"id": "odd", "op": "Conv1d", "in": [src["id"]],
                           "args": {"in_channels": 64, "out_channels": 3, "kernel_size": 1}})
    node["in"].append("odd")
    seen = observe_eager(graph)
    report = verify_graph(Design.from_dict(graph))
    assert seen["status"] != "ok"
    assert report.verdict == "block"


def test_batchnorm_at_batch_one_is_no_finding_in_eval():
    # blind set 1: BatchNorm in eval uses running statistics; torch runs it at batch 1 (train mode raises)
    graph = json.loads((Path(__file__).parent / "fixtures" / "blind_set1" / "misc_dtype_mode-c00.json").read_text())
    assert graph["train"]["mode"] == "eval" and graph["train"]["batch_size"] == 1
    assert observe_eager(graph)["status"] == "ok"
    rules = [f.rule for f in verify_graph(Design.from_dict(graph)).findings]
    assert "numerics.batchnorm-batch-one" not in rules
    graph["train"]["mode"] = "train"
    assert "numerics.batchnorm-batch-one" in [f.rule for f in verify_graph(Design.from_dict(graph)).findings]


def test_a_causal_trim_to_T_is_T_long_for_every_T():
    # blind set 1, mamba: Conv1d(padding=K-1) then Slice(end="T") is T long whatever T is; it was resolved
    # to the declared T (stating "32 = T"), and with no declared T the gate's Mul was blocked
    graph = json.loads((Path(__file__).parent / "fixtures" / "blind_set1" / "mamba-c00.json").read_text())
    for t in (5, 17, 40):
        graph["train"]["seq_len"] = t
        assert observe_eager(graph)["status"] == "ok"
        assert not [f for f in _findings(graph) if "T" in f.message and f.rule.startswith("shape.")]
    graph["train"].pop("seq_len")
    assert verify_graph(Design.from_dict(graph)).verdict != "block"


def _findings(graph):
    return verify_graph(Design.from_dict(graph)).findings

"""Repairs of blocked designs: found by the real verifier, the cheapest first, and (for a few small ones) run
in real torch through `archcurator repair --run`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from archcurator.core.graph import Design
from archcurator.core.repair import apply_edits, describe, repair_design
from archcurator.core.repair.search import no_worse
from archcurator.core.report import Finding, Report
from archcurator.core.verify import verify_graph

ROOT = Path(__file__).resolve().parents[1]


def _tiny() -> dict:
    return json.loads((ROOT / "tests" / "fixtures" / "tiny_cnn.json").read_text())


def _zoo(name: str) -> dict:
    return json.loads((ROOT / "assets" / "architectures" / f"{name}.json").read_text())


def _node(d: dict, nid: str) -> dict:
    return next(n for n in d["nodes"] if n["id"] == nid)


def _verdict(d: dict) -> str:
    return verify_graph(Design.from_dict(d)).verdict


def _flat_fc_width(width: int) -> dict:
    d = _tiny()
    _node(d, "fc")["args"]["in_features"] = width
    return d


def test_a_linear_one_width_off_gets_the_flattened_width_and_nothing_else():
    d = _flat_fc_width(32)
    assert _verdict(d) == "block"
    rep = repair_design(d)
    assert rep.found and rep.verdict != "block"
    assert rep.edits == [{"edit": "set-arg", "node": "fc", "arg": "in_features", "from": 32, "to": 16}]
    assert len(rep.repairs) == 1 and rep.repairs[0].finding["rule"] == "shape.flatten-linear-width"
    assert rep.design == apply_edits(d, rep.edits)
    assert d["nodes"][-1]["args"]["in_features"] == 32  # the original is not touched


@pytest.mark.parametrize("edit_design, expect", [
    # the convolution that reads 3 channels declares 6: its in_channels, not a layer inserted before it
    (lambda d: _node(d, "conv1")["args"].update(in_channels=6), ("set-arg", "conv1", "in_channels", 3)),
    # a BatchNorm after a 64-channel conv declares 128
    (lambda d: _node(d, "bn1")["args"].update(num_features=128), ("set-arg", "bn1", "num_features", 64)),
    # GroupNorm-free divisibility: a convolution's groups that divide neither 64 nor 3
    (lambda d: _node(d, "conv1")["args"].update(groups=2), ("set-arg", "conv1", "groups", 1)),
])
def test_resnet18_faults_are_repaired_by_the_argument_the_rule_names(edit_design, expect):
    d = _zoo("resnet18")
    edit_design(d)
    assert _verdict(d) == "block"
    rep = repair_design(d)
    assert rep.found and _verdict(rep.design) != "block"
    (e,) = rep.edits
    assert (e["edit"], e["node"], e["arg"], e["to"]) == expect


def test_a_head_count_becomes_the_nearest_divisor_of_the_width():
    d = _zoo("vit_b_16")
    attn = next(n for n in d["nodes"] if n["op"] == "MultiheadAttention")
    attn["args"]["num_heads"] = 13
    rep = repair_design(d)
    assert rep.found
    assert rep.edits == [{"edit": "set-arg", "node": attn["id"], "arg": "num_heads", "from": 13, "to": 12}]


def test_structural_faults_a_typo_an_empty_output_list_and_an_unknown_op():
    d = _tiny()
    _node(d, "fc")["in"] = ["flatt"]
    d["outputs"] = []
    _node(d, "features.1")["op"] = "Relu"
    assert _verdict(d) == "block"
    rep = repair_design(d)
    assert rep.found and _verdict(rep.design) != "block"
    edits = [(e["edit"], e.get("to")) for e in rep.edits]
    assert ("set-op", "ReLU") in edits and ("set-in", ["flat"]) in edits and ("set-outputs", ["fc"]) in edits
    assert len(edits) == 3
    # every step's design holds that step and every one before it; the last is the whole repair
    assert rep.repairs[-1].design == rep.design
    assert all(r.verdict == "block" for r in rep.repairs[:-1])


def test_a_stray_flatten_before_a_convolution_is_removed_rather_than_patched_around():
    d = _zoo("lenet5")
    first_conv = next(n for n in d["nodes"] if n["op"] == "Conv2d")
    src = first_conv["in"][0]
    flat = {"id": "stray.flatten", "op": "Flatten", "args": {"start_dim": 1}, "in": [src]}
    d["nodes"].insert(d["nodes"].index(first_conv), flat)
    first_conv["in"] = ["stray.flatten"]
    rep = repair_design(d)
    assert rep.found
    assert rep.edits == [{"edit": "remove", "node": "stray.flatten", "to": src}]


def test_a_design_that_does_not_block_needs_no_repair():
    d = _tiny()
    rep = repair_design(d)
    assert rep.found and rep.repairs == [] and rep.design == d
    assert rep.to_dict() == {"design": d, "verdict": _verdict(d), "ran": None, "repairs": []}


def test_the_search_is_bounded_and_says_which_block_it_could_not_repair():
    d = _flat_fc_width(32)
    rep = repair_design(d, max_candidates=1, time_limit_s=5)
    assert rep.tried <= 1
    if not rep.found:
        out = rep.to_dict()
        assert out["design"] is None and out["verdict"] == "block" and out["ran"] is None
        assert out["repairs"][-1]["design"] is None and out["repairs"][-1]["finding"]["rule"]
    rep = repair_design(d, time_limit_s=0.0)
    assert not rep.found and rep.stopped == "time"


def test_no_worse_refuses_a_block_that_appears_upstream_and_allows_one_the_fault_was_hiding():
    d = _tiny()
    target = Finding("shape.linear-width", "block", ("fc",), "m")
    before = Report([target, Finding("efficiency.x", "warn", ("features.0",), "w")])
    hidden_below = Report([Finding("shape.rank", "block", ("fc",), "now seen")])
    above = Report([Finding("shape.conv-channels", "block", ("features.0",), "new")])
    warn_to_block = Report([Finding("efficiency.x", "block", ("features.0",), "w")])
    assert no_worse(before, Report([]), target, d, d, set())
    assert not no_worse(before, before, target, d, d, set())
    assert no_worse(before, hidden_below, target, d, d, set())
    assert not no_worse(before, above, target, d, d, set())
    assert not no_worse(before, warn_to_block, target, d, d, set())


def test_edits_read_as_one_line_each():
    d = _flat_fc_width(32)
    rep = repair_design(d)
    assert [describe(e) for e in rep.edits] == ["fc: in_features 32 -> 16"]


# ---- the command line, with real torch for a few small designs ---------------------------------------

def _cli(*args, timeout=240):
    return subprocess.run([sys.executable, "-m", "archcurator", "repair", *map(str, args)], capture_output=True,
                          text=True, timeout=timeout)


@pytest.mark.slow
def test_repair_json_has_the_readme_shape_and_run_proves_it_in_torch(tmp_path):
    lenet = _zoo("lenet5")
    conv = next(n for n in lenet["nodes"] if n["op"] == "Conv2d" and n["id"] != lenet["nodes"][0]["id"])
    conv["args"]["in_channels"] += 3
    designs = {"fc.json": _flat_fc_width(32), "lenet.json": lenet}
    for name, d in designs.items():
        p = tmp_path / name
        p.write_text(json.dumps(d))
        out = _cli(p, "--json", "--run", "--device", "cpu", "--run-time-limit", "120")
        assert out.returncode == 0, out.stderr
        ans = json.loads(out.stdout)
        assert list(ans) == ["design", "verdict", "ran", "repairs"]
        assert ans["ran"] is True and ans["verdict"] != "block"
        assert _verdict(ans["design"]) != "block"
        for r in ans["repairs"]:
            assert list(r) == ["finding", "edits", "design", "verdict", "ran"]
            assert set(r["finding"]) == {"rule", "severity", "nodes", "message"} and r["finding"]["severity"] == "block"
        assert ans["repairs"][-1]["design"] == ans["design"] and ans["repairs"][-1]["ran"] is True
    # without --run nothing is claimed about torch
    ans = json.loads(_cli(tmp_path / "fc.json", "--json").stdout)
    assert ans["ran"] is None and all(r["ran"] is None for r in ans["repairs"])
    text = _cli(tmp_path / "fc.json").stdout
    assert "fc: in_features 32 -> 16" in text and "repaired with 1 edit(s)" in text


def test_repair_of_an_unreadable_file_is_one_error_line(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "archgraph/1", "nodes": [')
    out = _cli(bad)
    assert out.returncode == 2 and out.stdout == ""
    (line,) = out.stderr.strip().splitlines()
    assert line.startswith(f"archcurator repair: {bad}: ")
    out = _cli(tmp_path / "absent.json")
    assert out.returncode == 2 and out.stderr.strip() == f"archcurator repair: {tmp_path / 'absent.json'}: no such file"


@pytest.mark.slow
def test_when_torch_refuses_the_cheapest_repair_the_next_one_is_run():
    # a differential design (seed 370,019): a Gather of a bool input by itself. The cheapest repair
    # the verifier passes (the input declared int64) draws ids torch finds out of range; the next one runs
    from archcurator.tui.commands.repair_cmd import forward_runner

    d = json.loads((ROOT / "tests" / "fixtures" / "repair" / "gen-370019.json").read_text())
    rep = repair_design(d)
    assert rep.found
    tried = []
    run = forward_runner("cpu", 120.0, 4096)

    def go(design):
        tried.append(design)
        return run(design)

    assert rep.prove(go) is True
    assert rep.runs_tried == len(tried) and rep.ran is True and rep.to_dict()["ran"] is True
    assert rep.design == tried[-1] and _verdict(rep.design) != "block"
    assert len({json.dumps(t, sort_keys=True) for t in tried}) == len(tried)  # never the same design twice


def test_a_misspelt_argument_keeps_its_value_and_an_unknown_layer_reads_as_the_one_its_arguments_name():
    d = _tiny()
    conv = d["nodes"][0]
    conv["args"]["in_channel"] = conv["args"].pop("in_channels")
    _node(d, "fc")["op"] = "Dense"  # Keras' name; its arguments are Linear's
    rep = repair_design(d)
    assert rep.found and _verdict(rep.design) != "block"
    assert _node(rep.design, conv["id"])["args"]["in_channels"] == 3
    assert "in_channel" not in _node(rep.design, conv["id"])["args"]
    assert _node(rep.design, "fc")["op"] == "Linear"
    assert len(rep.repairs) == 2

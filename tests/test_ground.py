"""The grounding study: corruption generator, the ground child and `archcurator ground`."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import textwrap

import pytest

from archcurator.core.ground import (
    KINDS,
    clean_set,
    corrupt,
    corruption_set,
    ground_set,
    load_zoo,
    observe_all,
    run_study,
    summarize,
    verify_case,
)

ISSUE_KINDS = {"head-divisibility", "linear-width", "conv-channels", "severed-connection", "residual-shape",
               "concat-sizes", "norm-features", "spatial-collapse", "dtype-int-into-float",
               "dtype-float-into-embedding", "reshape-product", "index-range"}


@pytest.fixture(scope="module")
def zoo():
    return load_zoo()


@pytest.fixture(scope="module")
def study(zoo):
    return ground_set(zoo)


def test_kinds_cover_the_issue_and_both_claims():
    assert ISSUE_KINDS <= set(KINDS)
    assert {k.expect for k in KINDS.values()} == {"block", "warn"}
    for k in KINDS.values():
        assert k.rules and k.doc and k.bases, k.name


def test_corrupt_one_graph(zoo):
    base = zoo["resnet18"]
    out = corrupt(base, "linear-width", random.Random(0))
    assert out is not None and out != base
    assert out["meta"]["corruption"]["kind"] == "linear-width"
    assert base["nodes"][-1]["args"]["in_features"] == 512, "the zoo graph itself is untouched"
    assert corrupt(base, "rnn-input-size", random.Random(0)) is None, "no RNN in a ResNet: no site"
    again = corrupt(base, "linear-width", random.Random(0))
    assert again == out


def test_study_is_large_deterministic_and_well_formed(study, zoo):
    assert len(study) >= 264
    ids = [c["case"] for c in study]
    assert len(ids) == len(set(ids))
    assert len(clean_set(zoo)) == len(zoo)
    for c in study:
        assert set(c) >= {"case", "kind", "base", "expect", "graph"}
        assert c["expect"] in ("block", "warn", "pass")
        if c["kind"] != "clean":
            assert c["case"] == f"{c['base']}/{c['kind']}/{c['site']}"
    small = {k: zoo[k] for k in ("resnet18", "gpt-nano", "char_rnn")}
    assert json.dumps(corruption_set(small)) == json.dumps(corruption_set(small))


def test_corruptions_claim_what_the_verifier_sees(study):
    """Static half of the study: block kinds block with their rule, warn kinds warn with theirs."""
    wrong = []
    for c in study:
        verdict, fired, blocking = verify_case(c)
        if c["expect"] == "block" and not (verdict == "block" and set(c["rules"]) & set(blocking)):
            wrong.append(f"{c['case']}: {verdict} {blocking}")
        if c["expect"] == "warn" and not (verdict == "warn" and c["rules"][0] in fired):
            wrong.append(f"{c['case']}: {verdict} {fired}")
        if c["expect"] == "pass" and verdict == "block":
            wrong.append(f"{c['case']}: clean zoo graph blocks {blocking}")
    assert not wrong, "\n".join(wrong)


def _sample(study):
    """The smallest case of every kind, and the clean graphs of the small zoo designs."""
    out, best = [], {}
    for c in study:
        if c["kind"] == "clean":
            if len(c["graph"]["nodes"]) <= 40:
                out.append(c)
        elif c["kind"] not in best or len(c["graph"]["nodes"]) < len(best[c["kind"]]["graph"]["nodes"]):
            best[c["kind"]] = c
    return out + list(best.values())


@pytest.mark.slow
def test_block_iff_failure_on_a_sample(study):
    results = run_study(_sample(study), timeout=30)
    s = summarize(results)
    detail = {r.case: (r.verdict, r.blocking, r.status, r.exception, r.message[:120]) for r in results
              if not r.agrees or not r.claim_holds}
    assert s["agreement"] == 1.0, detail
    assert not s["warn_only_failed"] and not s["claims_broken"], detail
    assert s["matrix"]["block_failed"] > 25 and s["matrix"]["notblock_ran"] > 25


@pytest.mark.slow
def test_each_graph_has_its_own_time_limit(study):
    cases = [c for c in study if c["case"] in ("lenet5/clean", "mlp_mnist/clean")]
    obs = observe_all(cases, timeout=0.0005)
    assert [obs[c["case"]]["status"] for c in cases] == ["timeout", "timeout"]


def test_a_dead_child_costs_one_graph(monkeypatch, tmp_path, study):
    """The case in flight when the child dies is recorded as killed; a new child does the rest."""
    from archcurator.core.ground import study as ground

    fake = tmp_path / "fake_child.py"
    fake.write_text(textwrap.dedent("""
        import json, os, sys
        cases = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
        for c in cases:
            print(json.dumps({"start": c["case"]}), flush=True)
            if c["case"] == "boom":
                os._exit(9)
            print(json.dumps({"case": c["case"], "status": "ok", "exception": None, "message": "",
                              "stage": "meta", "seconds": 0.0}), flush=True)
    """))
    monkeypatch.setattr(ground, "child_command", lambda path, *a, **k: [sys.executable, str(fake), path])
    cases = [{"case": n, "graph": {}} for n in ("a", "boom", "b")]
    obs = ground.observe_all(cases)
    assert [obs[n]["status"] for n in ("a", "boom", "b")] == ["ok", "killed", "ok"]


@pytest.mark.slow
def test_cli_json_exits_zero():
    proc = subprocess.run([sys.executable, "-m", "archcurator.tui.cli", "ground", "--json", "--filter", "lenet5/"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    doc = json.loads(proc.stdout)
    s = doc["summary"]
    assert s["graphs"] + s["mutations"]["graphs"] == len(doc["cases"]) > 5
    assert set(s["matrix"]) == {"block_failed", "block_ran", "notblock_failed", "notblock_ran"}
    assert s["agreement"] == 1.0
    assert all({"case", "verdict", "status", "origin", "exception", "agrees"} <= set(c) for c in doc["cases"])
    # failures in torch apart from our builder's refusals, and the random-mutation arm apart from both
    assert s["failed_in_torch"] + s["refused_by_builder"] + s["timed_out_or_killed"] + s["ran"] == s["graphs"]
    assert s["failed_in_torch"] > 0
    assert {"graphs", "matrix", "agreement", "failed_in_torch", "refused_by_builder"} <= set(s["mutations"])


@pytest.mark.slow
def test_builder_refusals_are_counted_apart_from_torch_failures():
    from archcurator.core.ground import load_zoo, mutation_set

    base = load_zoo()["lenet5"]
    unknown = json.loads(json.dumps(base))
    unknown["nodes"][0]["op"] = "Swish"  # our builder refuses an op it does not know: torch never sees it
    heads = json.loads(json.dumps(base))
    heads["nodes"][0]["args"]["groups"] = 4  # torch's own constructor refuses 1 channel in 4 groups
    cases = [{"case": "unknown-op", "kind": "x", "graph": unknown, "expect": "block"},
             {"case": "torch-refuses", "kind": "x", "graph": heads, "expect": "block"}]
    cases += mutation_set({"lenet5": base}, 3, seed=1)
    results = {r.case: r for r in run_study(cases, timeout=30)}
    assert results["unknown-op"].origin == "builder" and results["torch-refuses"].origin == "torch"
    s = summarize(list(results.values()))
    assert s["refused_by_builder"] == 1 and s["failed_in_torch"] == 1 and s["graphs"] == 2
    assert s["mutations"]["graphs"] == 3

"""An honest headline: the no-KB solver is the best prior rule of the training task groups, and the
held-out unit is a whole task group, with a margin whose interval resamples candidate pools."""

from __future__ import annotations

import json

import pytest

from archcurator.core.kb.features import view
from archcurator.core.kb.replay import best_prior, leave_one_task_group_out, pool_bootstrap, replay


def test_pool_bootstrap_resamples_whole_pools():
    a = [True, True, True, False, True, False]
    b = [False, False, False, False, True, True]
    value, ci = pool_bootstrap(["p1", "p1", "p1", "p2", "p3", "p3"], a, b)
    assert value == (sum(a) - sum(b)) / len(a)
    assert ci[0] <= value <= ci[1]
    # one pool holds every question: resampling pools cannot move the margin, however many questions
    v1, ci1 = pool_bootstrap(["p"] * 6, a, b)
    assert ci1 == [v1, v1]
    # the same outcomes spread over independent pools give an interval, narrower with more pools
    _, wide = pool_bootstrap([f"p{i}" for i in range(6)], a, b)
    _, narrow = pool_bootstrap([f"p{i}" for i in range(60)], a * 10, b * 10)
    assert wide[1] - wide[0] > narrow[1] - narrow[0] > 0


def test_the_prior_is_the_best_rule_on_training_questions(shipped):
    train = [view(q) for q in shipped if q["split"] == "train"]
    rule, fn, acc = best_prior(train)
    always_a = sum(q.winner == 0 for q in train) / len(train)
    assert rule != "always A" and acc > always_a
    assert acc == sum(fn(q).index == q.winner for q in train) / len(train)


def test_leave_one_task_group_out_holds_out_whole_task_groups(small_db):
    from archcurator.store import kb

    views = [view(q, origin="shipped") for q in kb.list_questions(small_db)]
    r = leave_one_task_group_out(views)
    tasks = {v.task for v in views}
    assert set(r["folds"]) == tasks and len(tasks) >= 2
    assert r["pooled"]["n"] == len(views) == sum(f["n"] for f in r["folds"].values())
    for g, f in r["folds"].items():
        assert f["train_n"] == sum(1 for v in views if v.task != g)
        assert set(f["families"]) == {v.family for v in views if v.task == g}
        m = f["margin_over_prior"]
        assert abs(m["value"] - (f["with_kb"]["accuracy"] - f["prior"]["accuracy"])) < 1e-12
        assert m["ci"][0] <= m["value"] <= m["ci"][1]
    m = r["margin_over_prior"]
    p = r["pooled"]
    assert abs(m["value"] - (p["with_kb"]["accuracy"] - p["prior"]["accuracy"])) < 1e-12
    assert m["resampled"] == "candidate pools" and m["excludes_zero"] == (not m["ci"][0] <= 0 <= m["ci"][1])
    rep = replay(views, [], lofo=False)
    assert rep["leave_one_task_group_out"] is None
    for src in ("shipped", "imported"):
        assert set(rep["by_source"][src]["prior"]) == {"rule", "accuracy"}
    assert rep["prior"]["rule"] == rep["baselines"]["best_single_feature"]["rule"]


@pytest.mark.slow
def test_replay_compares_pack_versions_on_the_same_questions(seeded_db, tmp_path, capsys):
    from archcurator.store import kb
    from archcurator.tui.cli import main

    db = str(seeded_db)
    a = tmp_path / "a.json"
    assert main(["kb", "pack", "--json", "--out", str(a), "--db", db]) == 0
    # a second version: the first proposition of A retired
    first = json.loads(a.read_text())["propositions"][0]["id"]
    kb.retire(seeded_db, first)
    b = tmp_path / "b.json"
    assert main(["kb", "pack", "--json", "--out", str(b), "--db", db]) == 0
    capsys.readouterr()
    assert main(["kb", "replay", "--pack", str(a), "--pack", str(b), "--json", "--db", db]) == 0
    r = json.loads(capsys.readouterr().out)
    assert [p["pack"] for p in r["packs"]] == [str(a), str(b)]
    assert r["n"] == len(kb.list_questions(seeded_db, split="test")) == r["packs"][0]["n"]
    d = r["difference"][0]
    assert abs(d["value"] - (r["packs"][0]["accuracy"] - r["packs"][1]["accuracy"])) < 1e-12
    assert d["ci"][0] <= d["value"] <= d["ci"][1] and len(d["newcombe_ci95"]) == 2
    # the same pack twice differs by nothing, and says so
    assert main(["kb", "replay", "--pack", str(a), "--pack", str(a), "--json", "--db", db]) == 0
    same = json.loads(capsys.readouterr().out)["difference"][0]
    assert same["value"] == 0 and same["ci"] == [0.0, 0.0] and not same["excludes_zero"]
    # the raw miner and a held-out task group
    assert main(["kb", "replay", "--pack", "current", "--pack", "miner", "--task-group", "language_model",
                 "--db", db]) == 0
    out = capsys.readouterr().out
    assert "task group language_model" in out and "current minus miner" in out and "miner (20 propositions)" in out
    # a file that is not a pack is one line naming it
    bad = tmp_path / "bad.json"
    bad.write_text("Knowledge base (text, not JSON)\n")
    assert main(["kb", "replay", "--pack", str(bad), "--db", db]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(bad) in err[0] and "not JSON" in err[0]

"""The demo knowledge base, the 20-cap pack and its exports, the offline replay, the CLI."""

from __future__ import annotations

import json

import pytest

from archcurator.core.kb.pack import CAP, UNTESTED_SLOTS, build_pack, pack_status
from archcurator.core.kb.props import Structure
from archcurator.core.kb.replay import render, replay, rules_from_pack, solve
from archcurator.core.kb.suggest import PropLite, clusters
from archcurator.store import kb
from archcurator.store.connection import connect
from archcurator.tui.cli import main


def test_seeded_store_gives_every_operation_work(seeded_db):
    live = kb.list_propositions(seeded_db)
    assert len(live) > 20
    origins = {p.origin for p in live}
    assert {"seed", "miner", "import"} <= origins
    s = kb.suggestions(seeded_db)
    assert any(d.kind == "same structure" for d in s.duplicates)   # near-duplicates
    assert any(d.kind == "similar text" for d in s.duplicates)
    assert s.narrowing                                            # over-broad ones
    broad = {p.id for p in live if not p.structure.scope and p.contradict > 0}
    assert broad & {n.prop_id for n in s.narrowing}
    # evidence never comes from the held-out split
    with connect(seeded_db) as con:
        assert con.execute("SELECT count(*) FROM kb_evidence WHERE split <> 'train'").fetchone()[0] == 0
    assert kb.seed_kb(seeded_db) == {"seeded": False}  # once


def test_pack_cap_pinned_first_one_per_cluster_and_untested_slots(seeded_db):
    live = kb.list_propositions(seeded_db)
    worst = min((p for p in live if p.tested), key=lambda p: p.lower)
    kb.pin(seeded_db, worst.id)
    pack = kb.current_pack(seeded_db)
    assert len(pack) <= CAP
    assert pack[0].prop.id == worst.id and pack[0].reason == "pinned"
    assert len({e.cluster for e in pack}) == len(pack)
    assert sum(e.reason == "untested" for e in pack) <= UNTESTED_SLOTS
    ranked = [e.lower for e in pack if e.reason == "evidence"]
    assert ranked == sorted(ranked, reverse=True)
    assert all(e.prop.support > e.prop.contradict for e in pack if e.reason == "evidence")
    # every proposition has its rank, or why it is out
    kb.retire(seeded_db, next(p.id for p in live if p.id not in {e.prop.id for e in pack}))
    pack = kb.current_pack(seeded_db)
    status = kb.pack_status(seeded_db)
    every = kb.list_propositions(seeded_db, "all")
    assert set(status) == {p.id for p in every}
    for e in pack:
        assert status[e.prop.id] == (e.rank, e.reason)
    out = [status[p.id][1] for p in every if status[p.id][0] is None]
    assert out and all(why for why in out)
    assert any("duplicate of P" in why for why in out) and any("not live" in why for why in out)


def test_a_pinned_proposition_is_in_the_pack_even_beside_a_stronger_duplicate(seeded_db):
    """A miner duplicate sharing the pinned one's cluster used to keep it out."""
    live = kb.list_propositions(seeded_db)
    strong = max((p for p in live if p.tested), key=lambda p: p.lower)
    twin = kb.add(seeded_db, strong.text + " (curator's wording)", [str(c) for c in strong.structure.scope],
                  strong.structure.claim.to_obj())
    weak_twin = kb.add(seeded_db, "Pinned though weaker.", [str(c) for c in strong.structure.scope] + ["lr < 0.003"],
                       strong.structure.claim.to_obj())
    kb.pin(seeded_db, weak_twin)
    kb.pin(seeded_db, twin)
    pack = {e.prop.id: e for e in kb.current_pack(seeded_db)}
    assert twin in pack and weak_twin in pack
    assert pack[twin].reason == pack[weak_twin].reason == "pinned"
    assert strong.id not in pack
    assert "duplicate of P" in kb.pack_status(seeded_db)[strong.id][1]


def _word(i: int) -> str:
    import hashlib

    return hashlib.sha256(str(i).encode()).hexdigest()[:12]  # texts too different to cluster


def test_pack_rules_on_a_handmade_set():
    st = Structure.from_obj([], "optimizer == adam wins")
    props = [PropLite(1, "Adam wins.", st, support=30, contradict=2),
             PropLite(2, "Adam beats all.", st, support=30, contradict=2),          # same cluster as 1
             PropLite(3, _word(3), Structure.from_obj([], "higher lr wins"), support=5, contradict=5),  # never enters
             PropLite(4, _word(4), Structure.from_obj([], "higher width wins"), pinned=True, support=1, contradict=9)]
    props += [PropLite(10 + i, _word(10 + i), Structure.from_obj([f"input_dim >= {i + 1}"], "higher depth wins"))
              for i in range(5)]
    props += [PropLite(20 + i, _word(20 + i), Structure.from_obj([f"budget >= {1000 * (i + 1)}"], "lower lr wins"),
                       support=20 - i, contradict=1) for i in range(20)]
    pack = build_pack(props, clusters(props))
    ids = [e.prop.id for e in pack]
    assert len(pack) == CAP and ids[0] == 4
    assert not ({1, 2} <= set(ids)) and 3 not in ids
    assert sum(e.reason == "untested" for e in pack) == UNTESTED_SLOTS
    assert [e.reason for e in pack][-UNTESTED_SLOTS:] == ["untested"] * UNTESTED_SLOTS
    status = pack_status(props, clusters(props))
    assert status[4] == (1, "pinned")
    assert "contradicted as often as supported" in status[3][1]
    assert "duplicate of P1" in status[2][1]
    assert any("below the cut" in why for rank, why in status.values() if rank is None)
    assert any("slots kept for untested" in why for rank, why in status.values() if rank is None)


def test_showing_the_pack_records_nothing_and_writing_it_says_where(seeded_db, tmp_path):
    shown = json.loads(kb.show_pack(seeded_db, "json"))
    assert len(shown["propositions"]) <= CAP and kb.pack_exports(seeded_db) == []
    w = kb.write_pack(seeded_db, tmp_path / "pack.json")
    assert w["path"] == str((tmp_path / "pack.json").resolve()) and w["format"] == "json"
    assert json.loads((tmp_path / "pack.json").read_text())["count"] == w["count"]
    assert kb.pack_exports(seeded_db)[0]["destination"] == w["path"]
    with pytest.raises(kb.KBError, match="a folder"):
        kb.write_pack(seeded_db, tmp_path)
    with pytest.raises(kb.KBError, match="cannot write"):
        kb.write_pack(seeded_db, tmp_path / "missing" / "pack.txt")
    assert len(kb.pack_exports(seeded_db)) == 1


def test_pack_exports_are_recorded(seeded_db):
    content, eid = kb.export_pack(seeded_db, "json")
    data = json.loads(content)
    assert set(data) >= {"propositions", "cap", "count"} and len(data["propositions"]) <= 20
    p0 = data["propositions"][0]
    assert {"id", "text", "scope", "claim", "supports", "contradicts", "wilson_lower", "pinned"} <= set(p0)
    text, eid2 = kb.export_pack(seeded_db, "text", destination="pack.txt")
    assert text.startswith("Knowledge base (") and eid2 == eid + 1
    ex = kb.pack_exports(seeded_db)
    assert [e["format"] for e in ex[:2]] == ["text", "json"] and ex[0]["destination"] == "pack.txt"
    assert ex[1]["prop_ids"] == [p["id"] for p in data["propositions"]]


def test_solver_falls_back_to_the_first_choice_without_rules(seeded_db):
    v = kb.question_views(seeded_db, split="test")[0]
    a = solve(v, [])
    assert a.index == 0 and a.by == "fallback"


@pytest.mark.slow
def test_replay_on_held_out_questions(seeded_db):
    r = kb.replay_report(seeded_db)
    n_test = len(kb.list_questions(seeded_db, split="test"))
    assert r["n"] == n_test > 30 and r["split"] == "test"
    for k in ("with_kb", "without_kb"):
        lo, hi = r[k]["ci95"]
        assert 0 <= lo <= r[k]["accuracy"] <= hi <= 1 and r[k]["n"] == n_test
    assert set(r["by_category"]) <= {"optimizer_only", "architecture_only", "mixed"}
    assert r["pairs"]["n"] > 0
    assert r["pairs"]["switch_rate_without_kb"]["correct"] == 0  # pairs share the letter order
    lo, hi = r["difference"]["ci95"]
    assert r["difference"]["within_noise"] == (lo <= 0 <= hi)
    # SPEC §4's fields, exactly
    assert set(r["by_source"]) == {"shipped", "imported"}
    for src in r["by_source"].values():
        assert set(src) == {"n", "with_kb", "without_kb", "best_baseline", "prior"}
        assert set(src["prior"]) == {"rule", "accuracy"}
        assert set(src["with_kb"]) == set(src["without_kb"]) == {"correct", "accuracy"}
        assert set(src["best_baseline"]) == {"rule", "accuracy"}
    assert r["by_source"]["shipped"]["n"] == n_test and r["by_source"]["imported"]["n"] == 0
    assert sum(f["n"] for f in r["by_family"].values()) == n_test
    lofo = r["leave_one_family_out"]
    assert set(lofo["folds"]) == {q["family"] for q in kb.list_questions(seeded_db)}
    assert lofo["pooled"]["n"] == len(kb.list_questions(seeded_db))
    base = r["baselines"]
    assert base["best_single_feature"]["rule"] == r["headline"]["best_baseline"] == \
        r["by_source"]["shipped"]["best_baseline"]["rule"]
    assert 0.3 < base["chance"]["accuracy"] < 0.4
    text = render(r)
    for words in ("uniform chance (expected)", "always A", "best single-feature rule", "headline: KB minus",
                  "by source:", "by family:", "leave one family out"):
        assert words in text


def test_imported_questions_are_test_questions_reported_apart(seeded_db, shipped):
    test_q = next(q for q in shipped if q["split"] == "test")
    extra = [dict(test_q, question_id="q_imported1"), dict(test_q, question_id="q_imported2", split="train"),
             {k: v for k, v in test_q.items() if k != "split"} | {"question_id": "q_imported3"}]
    kb.import_questions(seeded_db, extra, source="bundle")
    r = kb.replay_report(seeded_db, lofo=False)
    assert r["by_source"]["imported"]["n"] == 2  # the one marked train is not a test question
    assert r["leave_one_family_out"] is None


def test_replay_with_an_empty_pack_is_the_fallback(seeded_db):
    views = kb.question_views(seeded_db)
    r = replay(views, [], lofo=False)
    assert r["with_kb"] == r["without_kb"] and r["difference"]["within_noise"]
    assert rules_from_pack([], views) == []


# --------------------------------------------------------------------------- the CLI

def _run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.slow
def test_cli_end_to_end(seeded_db, capsys, tmp_path):
    db = str(seeded_db)
    code, out, _ = _run(capsys, "kb", "list", "--json", "--db", db)
    assert code == 0 and len(json.loads(out)["propositions"]) > 20
    code, out, _ = _run(capsys, "--db", db, "kb", "pack", "--json")
    assert code == 0 and len(json.loads(out)["propositions"]) <= 20 and kb.pack_exports(seeded_db) == []
    code, _, err = _run(capsys, "--db", db, "kb", "pack", "--out", str(tmp_path / "p.txt"))
    assert code == 0 and err.startswith("wrote ") and str(tmp_path / "p.txt") in err
    assert (tmp_path / "p.txt").read_text().startswith("Knowledge base (")
    code, out, _ = _run(capsys, "kb", "replay", "--db", db, "--no-lofo")
    assert code == 0 and "with KB:" in out and "95% CI" in out
    code, out, _ = _run(capsys, "kb", "add", "--claim", "optimizer == rmsprop wins", "--scope", "budget < 4096",
                        "--db", db, "--json")
    new = json.loads(out)["id"]
    assert code == 0 and json.loads(out)["scope"] == ["budget < 4096"]
    code, out, _ = _run(capsys, "kb", "narrow", f"P{new}", "--when", "task == regression", "--db", db)
    assert code == 0 and out.startswith(f"narrowed P{new}: ")
    code, out, _ = _run(capsys, "kb", "narrow", f"P{new}", "--when", "lr < 0.01", "--as-new", "--db", db)
    assert code == 0 and out.startswith(f"narrowed P{new} into a new P{new + 1}: ")
    code, out, _ = _run(capsys, "kb", "merge", "P1", "P2", "--db", db, "--json")
    assert code == 0 and json.loads(out)["id"] == 1 and json.loads(out)["merged_from"] == [2]
    code, out, _ = _run(capsys, "kb", "list", "--db", db, "--json")
    rows = {p["id"]: p for p in json.loads(out)["propositions"]}
    assert all(("rank" in p["pack"]) for p in rows.values())
    assert all(p["pack"]["rank"] or p["pack"]["out_because"] for p in rows.values())
    code, out, _ = _run(capsys, "kb", "undo", "--db", db)
    assert code == 0 and out.startswith("undid")
    code, out, _ = _run(capsys, "kb", "show", "P1", "--db", db, "--json")
    assert code == 0 and json.loads(out)["status"] in ("active", "proposed") and json.loads(out)["evidence"]
    code, out, _ = _run(capsys, "kb", "suggest", "--db", db)
    assert code == 0 and "Near-duplicates" in out and "Narrowing candidates" in out
    code, out, _ = _run(capsys, "kb", "log", "--db", db)
    assert code == 0 and "undone by" in out
    code, _, err = _run(capsys, "kb", "pin", "P999", "--db", db)
    assert code == 2 and "no proposition P999" in err and err.startswith("archcurator kb pin: ")
    code, _, err = _run(capsys, "kb", "import-proposals", str(tmp_path / "missing.jsonl"), "--db", db)
    assert code == 2 and "missing.jsonl" in err
    code, out, _ = _run(capsys, "kb", "questions", "--db", db, "--json")
    assert code == 0 and json.loads(out)["devices"] == ["cpu"]


def test_cli_rerun_in_process_reproduces(seeded_db, capsys, shipped):
    q = min((q for q in shipped if q["family"] != "bigram_lm"),
            key=lambda q: (sum(c["candidate"]["budget"]["training_steps"] for c in q["choices"]), q["question_id"]))
    code, out, _ = _run(capsys, "kb", "rerun", q["question_id"], "--in-process", "--db", str(seeded_db), "--json")
    assert code == 0 and json.loads(out)["reproduced"] is True


@pytest.mark.slow
def test_cli_rerun_through_the_runner(seeded_db, capsys, shipped):
    q = min((q for q in shipped if q["family"] != "bigram_lm"),
            key=lambda q: (sum(c["candidate"]["budget"]["training_steps"] for c in q["choices"]), q["question_id"]))
    code, out, err = _run(capsys, "kb", "rerun", q["question_id"], "--db", str(seeded_db), "--json")
    assert code == 0, err
    assert json.loads(out)["reproduced"] is True
    with connect(seeded_db) as con:
        n = con.execute("SELECT count(*) FROM runs WHERE question_id = ? AND kind = 'aiq'",
                        [q["question_id"]]).fetchone()[0]
    assert n == 3


def test_cli_shows_a_propositions_words_as_text_never_markup(small_db, capsys):
    pid = kb.add(small_db, "[/bold] [red]loud[/red] \\[x]", [], "higher lr wins")
    for argv in (["kb", "show", f"P{pid}"], ["kb", "list"]):
        code, out, err = _run(capsys, *argv, "--db", str(small_db))
        assert code == 0 and not err
        assert "[/bold]" in out and "[red]loud[/red]" in out

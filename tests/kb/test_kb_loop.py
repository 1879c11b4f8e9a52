"""The loop (`kb cycle`) and the evidence a curator judges by (`kb show --json`), on a real store."""

from __future__ import annotations

import json

import pytest

from archcurator.core.kb import cycle as loop
from archcurator.core.kb.features import view
from archcurator.core.kb.props import Claim, Structure, applies
from archcurator.store import kb, kb_loop
from archcurator.store.connection import connect
from archcurator.tui.cli import main


def _run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_a_use_is_judged_by_the_outcome(shipped):
    q = next(q for q in shipped if q["family"] == "univariate_regression" and q["type"] == "mixed")
    v = view(q)
    for claim in ("higher params wins", "lower params wins"):
        st = Structure((), Claim.parse(claim))
        a = applies(st, v)
        if a is None:
            continue
        effect, fav, _ = loop.use_of(st, v, v.winner)
        assert effect == ("helpful" if v.winner in a[1] else "harmful")
        assert set(fav) == {v.letters[i] for i in a[1]}
        assert loop.use_of(st, v, None)[0] == "neutral"   # no retained outcome: neutral


@pytest.mark.slow
def test_cycle_answers_the_stream_records_uses_and_proposes(seeded_db):
    # a pinned proposition the training record contradicts about as often as it supports: the pack is
    # otherwise the strongest training rules, which a cycle over training questions rarely finds harmful
    live = kb.list_propositions(seeded_db)
    kb.pin(seeded_db, max((p for p in live if p.tested), key=lambda p: p.contradict).id)
    before = {p.id for p in kb.list_propositions(seeded_db, "all")}
    left = len(kb_loop.stream(seeded_db))
    r = kb_loop.cycle(seeded_db, questions=25)
    assert r["summary"]["questions"] == 25 and len(r["steps"]) == 25
    assert len(kb_loop.stream(seeded_db)) == left - 25   # answered questions leave the stream
    pack = set(r["pack_ids"])
    with connect(seeded_db) as con:
        uses = con.execute("SELECT question_id, prop_id, effect FROM kb_uses WHERE cycle_id = ?",
                           [r["cycle"]]).fetchall()
        answers = con.execute("SELECT count(*) FROM kb_answers WHERE cycle_id = ?", [r["cycle"]]).fetchone()[0]
    assert answers == 25 and uses
    assert {p for _, p, _ in uses} <= pack      # only what the pack holds is invoked
    # each use agrees with the question's recorded outcome
    props = {p.id: p for p in kb.list_propositions(seeded_db, "all")}
    for qid, pid, effect in uses:
        v = view(kb.get_question(seeded_db, qid))
        assert loop.use_of(props[pid].structure, v, v.winner)[0] == effect
    assert {e for *_, e in uses} >= {"helpful", "harmful"}
    # proposals enter as proposed, scoped by their question's family, with evidence derived
    new = [props[i] for i in r["proposed"]]
    assert {p.id for p in props.values()} - before == set(r["proposed"])
    for p in new:
        assert p.status == "proposed" and p.origin == "solver" and "cycle #" in p.source
        assert any(c.feature == "family" for c in p.structure.scope)
        assert p.support > p.contradict
    counts = kb_loop.use_counts(seeded_db)
    assert sum(sum(c.values()) for c in counts.values()) == len(uses)
    # undo withdraws the cycle's proposals; the answers and uses stay as what happened
    if r["proposed"]:
        kb.undo(seeded_db, actor=None)
        assert all(kb.get_proposition(seeded_db, i).status == "withdrawn" for i in r["proposed"])
        assert kb_loop.use_counts(seeded_db) == counts


def test_cycle_with_the_llm_solver_uses_the_same_loop(seeded_db):
    """A stand-in endpoint (the real client's contract: prompt in, reply out) that cites rank 1."""
    prompts = []

    def ask(prompt: str) -> str:
        prompts.append(prompt)
        return "I rely on the first one. <answer>B</answer> <used>1</used>"

    r = kb_loop.cycle(seeded_db, questions=3, solver="llm", ask=ask, solver_name="llm test")
    first = r["pack_ids"][0]
    assert len(prompts) == 3 and all("<used>" in p and "## Current question" in p for p in prompts)
    assert all(s["answer"] == "B" and s["by"] == "llm" for s in r["steps"])
    assert all([u["prop_id"] for u in s["uses"]] == [first] for s in r["steps"])
    assert r["proposed"] == []


@pytest.mark.slow
def test_kb_show_json_carries_evidence_a_curator_can_judge(seeded_db, capsys):
    db = str(seeded_db)
    kb_loop.cycle(seeded_db, questions=20)
    used = kb_loop.use_counts(seeded_db)
    pid = max(used, key=lambda p: sum(used[p].values()))
    code, out, _ = _run(capsys, "kb", "show", f"P{pid}", "--json", "--db", db)
    assert code == 0
    d = json.loads(out)
    assert d["evidence"]
    for row in d["evidence"]:
        assert {"question", "candidates", "means", "stds", "winner", "gap", "win_rate", "dataset", "pool"} <= set(row)
        assert len(row["candidates"]) == 3 and set(row["means"]) == {c["letter"] for c in row["candidates"]}
        assert row["winner"] in row["means"] and row["dataset"]["id"] and row["pool"].startswith("pool_")
        assert row["differs"] and all(k in row["candidates"][0] or k in row["candidates"][1]
                                      or k in row["candidates"][2] for k in row["differs"])
    recs = d["records"]
    assert set(recs) == {"train", "heldout", "imported"}
    tr = recs["train"]
    raw = sum(1 for r in d["evidence"] if r["verdict"] in ("support", "contradict") and r["split"] == "train")
    assert tr["support"] + tr["contradict"] == raw
    # independent units: never more than the raw count, and pools x datasets, not 3-subsets
    assert tr["units"] <= raw and tr["units_support"] + tr["units_contradict"] + tr["units_split"] == tr["units"]
    units = {(r["pool"], r["dataset"]["id"]) for r in d["evidence"] if r["split"] == "train"
             and r["verdict"] != "inapplicable"}
    assert tr["units"] == len(units)
    assert sum(d["use_counts"].values()) == len(d["uses"]) > 0
    assert all(u["effect"] in ("helpful", "harmful", "neutral") and "candidates" in u for u in d["uses"])
    # the text view shows the same: recipes, means +- std, pool, uses, the held-out record
    code, out, _ = _run(capsys, "kb", "show", f"P{pid}", "--limit", "2", "--db", db)
    assert code == 0
    assert "record heldout" in out and "units (pool x dataset)" in out and " ± " in out and "pool pool_" in out
    assert "uses (" in out and "lr=" in out


@pytest.mark.slow
def test_a_reversed_heldout_record_is_flagged(seeded_db):
    flagged = []
    for p in kb.list_propositions(seeded_db):
        recs = kb_loop.records(seeded_db, p.id)
        tr, ho = recs["train"], recs["heldout"]
        c = kb_loop.conflicts(seeded_db, p.id, recs)
        rev = tr["units_support"] > tr["units_contradict"] and ho["units_contradict"] > ho["units_support"] \
            and ho["support"] + ho["contradict"] >= 3
        assert rev == any(x["kind"] == "reversed" and x["record"] == "heldout" for x in c)
        flagged += [p.id] if rev else []
    assert flagged   # the demo pack holds at least one


def test_opposite_claims_over_overlapping_scopes_are_flagged(small_db):
    a = kb.add(small_db, None, [], "optimizer == adam wins")
    b = kb.add(small_db, None, ["budget < 4096"], "optimizer == adam loses")
    c = kb.add(small_db, None, [], "optimizer == sgd loses")
    assert any(x["kind"] == "opposite" and x["with"] == b for x in kb_loop.conflicts(small_db, a))
    assert not any(x["kind"] == "opposite" for x in kb_loop.conflicts(small_db, c))


@pytest.mark.slow
def test_execute_takes_the_outcome_from_a_run_made_now(seeded_db, shipped):
    """--execute: the outcome is the re-executed winner when the study's rule retains it (asserted
    as the winner and the rule, never a float)."""
    from archcurator.core.aiq.execute import execute_question

    q = min((q for q in shipped if q["split"] == "train" and q["family"] != "bigram_lm"),
            key=lambda q: (sum(c["candidate"]["budget"]["training_steps"] for c in q["choices"]),
                           -q["significance"]["gap"], q["question_id"]))
    entries = kb.current_pack(seeded_db)
    train = kb.question_views(seeded_db, split="train")
    ran = []

    def execute(question):
        ran.append(question["question_id"])
        return execute_question(question)

    [step] = loop.run_cycle([q], loop.RulesSolver(entries, train), train, execute=execute, propose=False)
    assert ran == [q["question_id"]] and step.outcome_from == "executed"
    assert step.reproduced and step.outcome == q["correct_letter"]


def test_cli_cycle(seeded_db, capsys):
    db = str(seeded_db)
    code, out, _ = _run(capsys, "kb", "cycle", "--questions", "4", "--json", "--db", db)
    assert code == 0
    r = json.loads(out)
    assert r["summary"]["questions"] == 4 and r["solver"] == "rules"
    code, out, _ = _run(capsys, "kb", "cycle", "--questions", "2", "--db", db)
    assert code == 0 and out.startswith("cycle #2 (rules, pack of ") and "left in the stream" in out
    code, _, err = _run(capsys, "kb", "cycle", "--solver", "rules", "extra", "--db", db)
    assert code != 0 and "--solver" in err
    code, out, _ = _run(capsys, "kb", "list", "--json", "--db", db)
    rows = json.loads(out)["propositions"]
    assert all(set(r["uses"]) == {"helpful", "harmful", "neutral"} for r in rows)
    assert sum(sum(r["uses"].values()) for r in rows) > 0


def test_narrowing_rewrites_the_words_with_the_scope(small_db):
    pid = kb.add(small_db, "Adam is the one to pick.", [], "optimizer == adam wins")
    kb.narrow(small_db, pid, ["budget < 4096"])
    assert kb.get_proposition(small_db, pid).text == "When budget < 4096: Adam is the one to pick."
    plain = kb.add(small_db, None, [], "higher lr wins")
    child = kb.narrow(small_db, plain, ["budget < 4096"], as_new=True)
    assert kb.get_proposition(small_db, child).text.startswith("When budget < 4096:")

"""Curator operations on a real store: each one, its audit row, and its undo."""

from __future__ import annotations

import json

import pytest

from archcurator.core.kb.features import view
from archcurator.core.kb.props import Structure, judge
from archcurator.store import kb
from archcurator.store.connection import connect


def _state(db):
    """Everything an undo must restore: propositions, evidence, distinct pairs."""
    with connect(db) as con:
        props = con.execute("SELECT id, text, structure, status, pinned, parent_id, merged_into, merged_from, note"
                            " FROM kb_propositions ORDER BY id").fetchall()
        evid = con.execute("SELECT prop_id, question_id, verdict, reason, split, via FROM kb_evidence"
                           " ORDER BY prop_id, question_id").fetchall()
        dist = con.execute("SELECT a, b, note FROM kb_distinct ORDER BY a, b").fetchall()
    return props, evid, dist


def _audit_rows(db):
    with connect(db) as con:
        return con.execute("SELECT * FROM kb_audit ORDER BY seq").fetchall()


def _live_ids(db):
    return [p.id for p in kb.list_propositions(db)]


def test_add_derives_evidence_from_the_training_split(small_db):
    pid = kb.add(small_db, None, [], "optimizer == adam wins")
    p = kb.get_proposition(small_db, pid)
    assert p.status == "active" and p.text == "A candidate with optimizer == adam wins."
    rows = kb.evidence(small_db, pid)
    assert rows and {r["split"] for r in rows} == {"train"}
    # the rows are exactly what judging every training question gives
    st = Structure.from_obj([], "optimizer == adam wins")
    expect = {}
    for q in kb.list_questions(small_db, split="train"):
        v = judge(st, view(q))
        if v:
            expect[q["question_id"]] = v.verdict
    assert {r["question_id"]: r["verdict"] for r in rows} == expect
    assert p.support == sum(v == "support" for v in expect.values())
    assert p.contradict == sum(v == "contradict" for v in expect.values())


def test_add_rejects_a_bad_structure(small_db):
    with pytest.raises(kb.KBError, match="unknown feature"):
        kb.add(small_db, "x", ["colour == red"], "optimizer == adam wins")
    with pytest.raises(kb.KBError, match="cannot read claim"):
        kb.add(small_db, "x", [], "adam is great")
    assert kb.audit_log(small_db) == []


def test_edit_and_undo(small_db):
    pid = kb.add(small_db, "Adam wins.", [], "optimizer == adam wins")
    s0 = _state(small_db)
    kb.edit(small_db, pid, text="Adam usually wins.")
    assert kb.get_proposition(small_db, pid).text == "Adam usually wins."
    assert _state(small_db)[1] == s0[1]  # text only: evidence untouched
    kb.edit(small_db, pid, scope=["budget < 4096"], claim="optimizer == adamw wins")
    p = kb.get_proposition(small_db, pid)
    assert [str(c) for c in p.structure.scope] == ["budget < 4096"]
    assert str(p.structure.claim) == "optimizer == adamw wins"
    assert _state(small_db)[1] != s0[1]  # structure: evidence re-derived
    kb.undo(small_db)
    kb.undo(small_db)
    assert _state(small_db) == s0
    with pytest.raises(kb.KBError, match="nothing to change"):
        kb.edit(small_db, pid, text="Adam wins.")


def test_merge_unions_evidence_keeps_sources_and_undoes(small_db):
    a = kb.add(small_db, "Adam wins.", [], "optimizer == adam wins")
    b = kb.add(small_db, "Adaptive optimizers win.", [], "adaptive == true wins")
    kb.pin(small_db, b)
    rows_a = {r["question_id"]: r["verdict"] for r in kb.evidence(small_db, a)}
    rows_b = {r["question_id"]: r["verdict"] for r in kb.evidence(small_db, b)}
    assert set(rows_b) - set(rows_a), "the test needs B to bring questions A lacks"
    before = _state(small_db)
    m = kb.merge(small_db, a, b)
    merged = kb.get_proposition(small_db, m)
    rows_m = kb.evidence(small_db, m)
    qids = [r["question_id"] for r in rows_m]
    assert len(qids) == len(set(qids)) == len(set(rows_a) | set(rows_b))  # union, one row per question
    for r in rows_m:  # A's verdict wins where both had one
        assert r["verdict"] == (rows_a[r["question_id"]] if r["question_id"] in rows_a else rows_b[r["question_id"]])
        assert r["via"] in (f"merged from P{a}", f"merged from P{b}")
    assert merged.merged_from == [a, b] and merged.pinned and merged.origin == "merge"
    assert merged.text == "Adam wins." and merged.structure.key == kb.get_proposition(small_db, a).structure.key
    for src in (a, b):
        s = kb.get_proposition(small_db, src)
        assert s.status == "merged" and s.merged_into == m
    assert m in _live_ids(small_db) and a not in _live_ids(small_db)
    with pytest.raises(kb.KBError, match="merged"):
        kb.merge(small_db, a, m)
    kb.undo(small_db)
    props, evid, dist = _state(small_db)
    assert kb.get_proposition(small_db, m).status == "withdrawn"
    assert [p for p in props if p[0] != m] == [p for p in before[0]]
    assert [e for e in evid if e[0] != m] == before[1]


def test_narrow_rechecks_evidence_marks_the_rest_inapplicable_and_undoes(small_db):
    parent = kb.add(small_db, "The highest learning rate wins.", [], "higher lr wins")
    before = _state(small_db)
    child = kb.narrow(small_db, parent, ["budget < 4096"])
    c = kb.get_proposition(small_db, child)
    assert c.parent_id == parent and [str(x) for x in c.structure.scope] == ["budget < 4096"]
    assert kb.get_proposition(small_db, parent).status == "narrowed"
    rows = kb.evidence(small_db, child)
    by_q = {r["question_id"]: r for r in rows}
    parent_rows = {r[1]: r for r in before[1] if r[0] == parent}
    assert set(parent_rows) <= set(by_q)  # every parent row re-checked
    qs = {q["question_id"]: q for q in kb.list_questions(small_db)}
    outside = [q for q in parent_rows if qs[q]["choices"][0]["candidate"]["budget"]["total_samples_seen"] >= 4096]
    assert outside, "the slice should hold questions with a large budget"
    for q in outside:
        assert by_q[q]["verdict"] == "inapplicable" and by_q[q]["via"] == f"narrowed from P{parent}"
    assert c.inapplicable == len(outside)
    kb.undo(small_db)
    props, evid, _ = _state(small_db)
    assert [p for p in props if p[0] != child] == before[0]
    assert kb.get_proposition(small_db, child).status == "withdrawn"
    with pytest.raises(kb.KBError, match="at least one condition"):
        kb.narrow(small_db, parent, [])


def test_retire_pin_accept_distinct_each_undo(small_db):
    a = kb.add(small_db, None, [], "optimizer == adam wins")
    b = kb.add(small_db, None, [], "optimizer == sgd loses", status="proposed")
    for op in (lambda: kb.retire(small_db, a, note="too broad"),
               lambda: kb.pin(small_db, a),
               lambda: kb.accept(small_db, b),
               lambda: kb.mark_distinct(small_db, a, b, note="different claims")):
        s0 = _state(small_db)
        op()
        assert _state(small_db) != s0
        kb.undo(small_db)
        assert _state(small_db) == s0
    kb.retire(small_db, a)
    assert kb.get_proposition(small_db, a).status == "retired" and a not in _live_ids(small_db)
    with pytest.raises(kb.KBError, match="retired"):
        kb.pin(small_db, a)
    with pytest.raises(kb.KBError, match="only active or proposed"):
        kb.edit(small_db, a, text="x")
    kb.accept(small_db, b)
    assert kb.get_proposition(small_db, b).status == "active"
    with pytest.raises(kb.KBError, match="active"):
        kb.accept(small_db, b)
    kb.pin(small_db, b)
    with pytest.raises(kb.KBError, match="already pinned"):
        kb.pin(small_db, b)
    kb.unpin(small_db, b)
    assert not kb.get_proposition(small_db, b).pinned


def test_undo_walks_back_and_the_log_is_append_only(small_db):
    with pytest.raises(kb.KBError, match="nothing to undo"):
        kb.undo(small_db)
    a = kb.add(small_db, None, [], "optimizer == adam wins")
    s1 = _state(small_db)
    kb.pin(small_db, a)
    kb.edit(small_db, a, text="Adam!")
    log_before = _audit_rows(small_db)
    r1 = kb.undo(small_db)
    r2 = kb.undo(small_db)
    assert (r1["op"], r2["op"]) == ("edit", "pin")
    assert _state(small_db) == s1
    log_after = _audit_rows(small_db)
    assert log_after[:len(log_before)] == log_before  # nothing rewritten
    assert [r[3] for r in log_after[len(log_before):]] == ["undo", "undo"]
    entries = kb.audit_log(small_db)
    assert entries[0]["op"] == "undo" and entries[0]["undo_of"] == log_before[1][0]
    undone = {e["seq"]: e["undone_by"] for e in entries}
    assert undone[log_before[2][0]] and undone[log_before[1][0]] and not undone[log_before[0][0]]
    kb.undo(small_db)  # the add: withdrawn
    assert kb.get_proposition(small_db, a).status == "withdrawn"
    with pytest.raises(kb.KBError, match="nothing to undo"):
        kb.undo(small_db)


def test_suggestions_structure_first_then_text_and_distinct_cuts(small_db):
    a = kb.add(small_db, "Adam wins.", [], "optimizer == adam wins")
    b = kb.add(small_db, "Adam beats every other optimizer.", [], "optimizer == adam wins")
    c = kb.add(small_db, "With a small budget, Adam wins.", ["budget < 4096"], "optimizer == adam wins")
    d = kb.add(small_db, "With a small budget, AdamW wins.", ["budget < 4096"], "optimizer == adamw wins")
    s = kb.suggestions(small_db)
    kinds = [(x.a, x.b, x.kind) for x in s.duplicates]
    assert kinds[0] == (a, b, "same structure")
    assert (a, c, "nested scope") in kinds and (b, c, "nested scope") in kinds
    assert (c, d, "similar text") in kinds
    order = [x.kind for x in s.duplicates]
    assert order == sorted(order, key=["same structure", "nested scope", "similar text"].index)
    kb.mark_distinct(small_db, d, c)
    assert (c, d, "similar text") not in [(x.a, x.b, x.kind) for x in kb.suggestions(small_db).duplicates]
    # nothing was merged by suggesting
    assert set(_live_ids(small_db)) == {a, b, c, d}


def test_mine_and_import_proposals(small_db, tmp_path):
    ids = kb.mine(small_db, min_support=3, max_props=8)
    assert 0 < len(ids) <= 8
    for pid in ids:
        p = kb.get_proposition(small_db, pid)
        assert p.status == "proposed" and p.origin == "miner" and p.support >= 3
        assert p.support / p.tested >= 0.7
    assert kb.mine(small_db, min_support=3, max_props=8) == []  # the same structures are not proposed twice
    f = tmp_path / "solver.jsonl"
    f.write_text("\n".join([
        json.dumps({"text": "Small budgets punish plain SGD.", "scope": ["budget < 4096"],
                    "claim": "optimizer == sgd & momentum == 0 loses", "source": "solver-x", "id": 7}),
        json.dumps({"claim": {"kind": "prefer", "feature": "width", "direction": "higher"}}),
        "{broken",
        json.dumps({"text": "no claim here"}),
        json.dumps({"claim": "higher colour wins"}),
    ]) + "\n")
    new, bad = kb.import_proposals(small_db, f)
    assert len(new) == 2 and len(bad) == 3
    assert bad[0].startswith(f"{f}:3: rejected") and ":4: rejected: no 'claim'" in bad[1]
    p = kb.get_proposition(small_db, new[0])
    assert p.source == "solver-x#7" and p.status == "proposed" and p.origin == "import"
    assert kb.get_proposition(small_db, new[1]).text == "The candidate with the highest width wins."
    kb.undo(small_db)
    assert all(kb.get_proposition(small_db, i).status == "withdrawn" for i in new)


def test_import_questions_skips_stored_ids_and_extends_evidence(small_db, shipped):
    pid = kb.add(small_db, None, [], "higher lr wins")
    n0 = kb.get_proposition(small_db, pid).tested
    have = {q["question_id"] for q in kb.list_questions(small_db)}
    extra = [q for q in shipped if q["question_id"] not in have and q["split"] == "train" and not q.get("pair")][:10]
    again = kb.list_questions(small_db)[:3]
    s = kb.import_questions(small_db, extra + again)
    assert len(s.imported) == 10 and len(s.skipped) == 3 and not s.rejected
    assert kb.get_proposition(small_db, pid).tested >= n0  # new questions judged for live propositions
    bad = dict(extra[0], question_id="q_broken")
    bad.pop("choices")
    s = kb.import_questions(small_db, [bad])
    assert s.rejected and "choices" in s.rejected[0][1]


def test_import_bundle_into_the_store(tmp_path):
    import aiq_bundle

    root = aiq_bundle.write(tmp_path / "b", tmp_path / "marker")
    db = tmp_path / "s.duckdb"
    s = kb.import_bundle(db, root)
    assert s.imported == ["q_suite01"]
    q = kb.get_question(db, "q_suite01")
    assert q["correct_letter"] == "B" and q["dataset_path"].endswith("sym_suite01")
    with connect(db) as con:
        assert con.execute("SELECT count(*) FROM aiq_outcomes WHERE question_id = 'q_suite01'").fetchone()[0] == 3
        assert con.execute("SELECT count(*) FROM aiq_candidates").fetchone()[0] == 3

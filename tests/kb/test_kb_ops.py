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


def _ids(db):
    return [p.id for p in kb.list_propositions(db, "all")]


def test_merge_keeps_the_target_id_counts_only_evidence_in_its_scope_and_undoes(small_db):
    a = kb.add(small_db, "Adam wins on small budgets.", ["budget < 4096"], "optimizer == adam wins")
    b = kb.add(small_db, "Adaptive optimizers win.", [], "adaptive == true wins")
    kb.pin(small_db, b)
    pa = kb.get_proposition(small_db, a)
    rows_a = {r["question_id"]: r for r in kb.evidence(small_db, a)}
    rows_b = {r["question_id"]: r for r in kb.evidence(small_db, b)}
    assert set(rows_b) - set(rows_a), "the test needs B to bring questions A does not test"
    before, ids = _state(small_db), _ids(small_db)
    kept = kb.merge(small_db, a, b)
    assert kept == a and _ids(small_db) == ids  # merging into P{a} makes no new proposition
    merged = kb.get_proposition(small_db, a)
    assert merged.status == "active" and merged.merged_from == [b] and merged.pinned
    assert merged.text == pa.text and merged.structure.key == pa.structure.key
    other = kb.get_proposition(small_db, b)
    assert other.status == "merged" and other.merged_into == a and not other.pinned
    rows_m = {r["question_id"]: r for r in kb.evidence(small_db, a)}
    assert set(rows_m) == set(rows_a) | set(rows_b)  # one row per question
    for q, r in rows_m.items():
        if q in rows_a:
            assert r["verdict"] == rows_a[q]["verdict"]
        else:  # B's questions outside A's scope or claim are kept, and count for nothing
            assert r["verdict"] == "inapplicable" and r["via"] == f"merged from P{b}"
    assert (merged.support, merged.contradict) == (pa.support, pa.contradict)
    assert a in _live_ids(small_db) and b not in _live_ids(small_db)
    with pytest.raises(kb.KBError, match="merged"):
        kb.merge(small_db, b, a)
    kb.undo(small_db)
    assert _state(small_db) == before


def test_narrow_keeps_the_id_rechecks_evidence_and_undoes(small_db):
    pid = kb.add(small_db, None, [], "higher lr wins")
    before, ids = _state(small_db), _ids(small_db)
    parent_rows = {r[1]: r for r in before[1] if r[0] == pid}
    assert kb.narrow(small_db, pid, ["budget < 4096"]) == pid
    assert _ids(small_db) == ids
    p = kb.get_proposition(small_db, pid)
    assert p.status == "active" and [str(x) for x in p.structure.scope] == ["budget < 4096"]
    assert p.text == "When budget < 4096: the candidate with the highest lr wins."
    by_q = {r["question_id"]: r for r in kb.evidence(small_db, pid)}
    assert set(parent_rows) <= set(by_q)
    qs = {q["question_id"]: q for q in kb.list_questions(small_db)}
    outside = [q for q in parent_rows if qs[q]["choices"][0]["candidate"]["budget"]["total_samples_seen"] >= 4096]
    assert outside, "the slice should hold questions with a large budget"
    for q in outside:
        assert by_q[q]["verdict"] == "inapplicable" and by_q[q]["via"] == "narrowed (+ budget < 4096)"
    assert p.inapplicable == len(outside)
    kb.undo(small_db)
    assert _state(small_db) == before
    with pytest.raises(kb.KBError, match="at least one condition"):
        kb.narrow(small_db, pid, [])


def test_narrow_as_new_leaves_the_parent_unless_asked(small_db):
    pid = kb.add(small_db, None, [], "higher lr wins")
    child = kb.narrow(small_db, pid, ["budget < 4096"], as_new=True)
    assert child != pid and kb.get_proposition(small_db, child).parent_id == pid
    assert kb.get_proposition(small_db, pid).status == "active"
    other = kb.narrow(small_db, pid, ["task == regression"], as_new=True, retire_parent=True)
    assert kb.get_proposition(small_db, pid).status == "narrowed"
    assert kb.get_proposition(small_db, other).status == "active"
    with pytest.raises(kb.KBError, match="as-new"):
        kb.narrow(small_db, other, ["lr < 0.01"], retire_parent=True)


def test_undo_reverts_only_the_acting_curators_own_steps(small_db):
    seed = kb.add(small_db, None, [], "optimizer == adam wins", actor="seed")
    mine = kb.add(small_db, None, [], "optimizer == sgd loses", actor="ada")
    kb.retire(small_db, seed, actor="bo")
    with pytest.raises(kb.KBError, match="nothing of cy's to undo"):
        kb.undo(small_db, actor="cy")
    r = kb.undo(small_db, actor="ada")  # ada's add, not bo's later retire
    assert "added P" in r["summary"] and kb.get_proposition(small_db, mine).status == "withdrawn"
    assert kb.get_proposition(small_db, seed).status == "retired"
    with pytest.raises(kb.KBError, match="nothing of ada's"):
        kb.undo(small_db, actor="ada")
    kb.undo(small_db, actor="bo")
    assert kb.get_proposition(small_db, seed).status == "active"
    with pytest.raises(kb.KBError, match="nothing of bo's"):
        kb.undo(small_db, actor="bo")  # the seed's own add is not bo's to undo
    # a step someone else has built on is not silently reverted
    kb.pin(small_db, seed, actor="ada")
    kb.edit(small_db, seed, text="Adam wins, mostly.", actor="bo")
    with pytest.raises(kb.KBError, match="changed since, by bo"):
        kb.undo(small_db, actor="ada")


@pytest.mark.slow
def test_a_pin_past_the_cap_is_refused_with_the_reason(small_db):
    from archcurator.core.kb.pack import CAP

    claims = ["higher lr wins", "lower lr wins", "higher width wins", "lower width wins", "higher depth wins",
              "lower depth wins", "higher params wins", "lower params wins", "higher batch_size wins",
              "lower batch_size wins", "higher weight_decay wins", "lower weight_decay wins",
              "higher steps wins", "lower steps wins"]
    ids = [kb.add(small_db, None, [f"input_dim >= {k}"] if k else [], c) for k in (0, 2) for c in claims]
    for pid in ids[:CAP]:
        kb.pin(small_db, pid)
    with pytest.raises(kb.KBError, match=f"already fill the pack of {CAP}"):
        kb.pin(small_db, ids[CAP])
    pack = kb.current_pack(small_db)
    assert {e.prop.id for e in pack} == set(ids[:CAP]) and all(e.reason == "pinned" for e in pack)


@pytest.mark.slow
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
    with pytest.raises(kb.KBError, match="to undo"):
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
    with pytest.raises(kb.KBError, match="to undo"):
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


@pytest.mark.slow
def test_mine_and_import_proposals(small_db, tmp_path):
    ids = kb.mine(small_db, min_support=3, max_props=8)
    assert 0 < len(ids) <= 8
    for pid in ids:
        p = kb.get_proposition(small_db, pid)
        assert p.status == "proposed" and p.origin == "miner" and p.support >= 3
        assert p.support / p.tested >= 0.6
        # the held-out record (cross-validated over families) travels with the proposal
        assert set(p.heldout) >= {"support", "contradict", "folds", "families_held", "family_specific"}
        assert "held out over families" in p.source
        if p.heldout["family_specific"]:
            assert "family-specific" in p.text
        else:
            assert len(p.heldout["families_held"]) >= 2
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
    assert str(bad[0]).startswith(f"{f}:3: not JSON") and str(bad[1]) == f"{f}:4: no 'claim'"
    p = kb.get_proposition(small_db, new[0])
    assert p.source == "solver-x#7" and p.status == "proposed" and p.origin == "import"
    assert kb.get_proposition(small_db, new[1]).text == "The candidate with the highest width wins."
    kb.undo(small_db)
    assert all(kb.get_proposition(small_db, i).status == "withdrawn" for i in new)


@pytest.mark.slow
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


@pytest.mark.slow
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

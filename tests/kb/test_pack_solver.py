"""The solver reads only what the pack holds, in pack order, and honours status and pins: a curator's
pack edit (retire, pin, reorder) changes the answer where it should, and nothing outside the pack
answers."""

from __future__ import annotations

import json

from archcurator.core.kb.cycle import RulesSolver
from archcurator.core.kb.features import view
from archcurator.core.kb.pack import build_pack, read_pack
from archcurator.core.kb.props import Structure, applies
from archcurator.core.kb.replay import rules_from_pack, solve
from archcurator.core.kb.suggest import PropLite
from archcurator.store import kb

HIGHER_LR = Structure.from_obj([], {"kind": "prefer", "feature": "lr", "direction": "higher"})
LOWER_LR = Structure.from_obj([], {"kind": "prefer", "feature": "lr", "direction": "lower"})


def _question_with_three_lrs(shipped):
    """A shipped question whose three candidates have three different learning rates."""
    for q in shipped:
        v = view(q)
        lrs = [c["lr"] for c in v.cands]
        if len(v.cands) == 3 and len(set(lrs)) == 3:
            return v, lrs.index(max(lrs)), lrs.index(min(lrs))
    raise AssertionError("no shipped question with three learning rates")


def _lite(pid, st, *, support=0, contradict=0, pinned=False, status="active"):
    return PropLite(pid, st.render(), st, status, pinned, support, contradict)


def test_pack_order_breaks_what_the_weights_leave_tied(shipped):
    v, hi, lo = _question_with_three_lrs(shipped)
    up, down = _lite(1, HIGHER_LR), _lite(2, LOWER_LR)
    # no training questions: both untested, both vote with the prior weight, so they tie
    first_up = solve(v, rules_from_pack(build_pack([up, down]), []))
    assert first_up.index == hi and first_up.by == "kb"
    # the same two propositions in the other order (a pack file the curator reordered)
    entries = build_pack([up, down])
    reordered = [entries[1], entries[0]]
    first_down = solve(v, rules_from_pack([type(e)(i + 1, e.prop, e.lower, e.reason, e.cluster)
                                           for i, e in enumerate(reordered)], []))
    assert first_down.index == lo and first_down.by == "kb"


def test_a_pin_is_consulted_first_and_outvotes_stronger_evidence(shipped):
    v, hi, lo = _question_with_three_lrs(shipped)
    train = [view(q) for q in shipped if q["split"] == "train"]
    strong_up = _lite(1, HIGHER_LR, support=40, contradict=2)
    weak_down = _lite(2, LOWER_LR, support=3, contradict=2)
    unpinned = build_pack([strong_up, weak_down])
    assert [e.prop.id for e in unpinned] == [1, 2]
    before = solve(v, rules_from_pack(unpinned, train))
    pinned = build_pack([strong_up, _lite(2, LOWER_LR, support=3, contradict=2, pinned=True)])
    assert [e.prop.id for e in pinned] == [2, 1]             # the pin is in the pack, first
    after = solve(v, rules_from_pack(pinned, train))
    assert after.index == lo and after.used[0] == 2
    assert before.index != after.index                       # the pin changed the answer


def test_a_retired_proposition_in_a_pack_file_never_answers(shipped, tmp_path):
    v, hi, lo = _question_with_three_lrs(shipped)
    entries = build_pack([_lite(1, HIGHER_LR), _lite(2, LOWER_LR)])
    obj = {"propositions": [e.to_dict() for e in entries]}
    path = tmp_path / "pack.json"
    path.write_text(json.dumps(obj))
    assert solve(v, rules_from_pack(read_pack(path), [])).index == hi
    obj["propositions"][0]["status"] = "retired"             # curated out since the file was written
    path.write_text(json.dumps(obj))
    a = solve(v, rules_from_pack(read_pack(path), []))
    assert a.index == lo and a.used == (2,)
    obj["propositions"][1]["status"] = "rejected"
    path.write_text(json.dumps(obj))
    a = solve(v, rules_from_pack(read_pack(path), []))
    assert a.by == "fallback" and a.used == () and a.index == 0


def test_store_curation_changes_the_rules_solvers_answers(seeded_db):
    views = kb.question_views(seeded_db)
    train = [q for q in views if q.split == "train"]
    test = [q for q in views if q.split == "test"]

    def answers():
        s = RulesSolver(kb.current_pack(seeded_db), train)
        return s, {q.question_id: solve(q, s.rules) for q in test}

    solver, before = answers()
    pack_ids = {e.prop.id for e in solver.entries}
    assert all(set(a.used) <= pack_ids for a in before.values())          # nothing outside the pack answers
    # retire the proposition the solver leans on most: it never answers again, and answers move
    counts: dict = {}
    for a in before.values():
        for pid in a.used:
            counts[pid] = counts.get(pid, 0) + 1
    busiest = max(counts, key=lambda p: (counts[p], -p))
    kb.retire(seeded_db, busiest)
    solver, after = answers()
    assert busiest not in {e.prop.id for e in solver.entries}
    assert all(busiest not in a.used for a in after.values())
    assert any(after[q].index != before[q].index for q in before)
    # pin a live proposition outside the pack that singles out another candidate on some question
    status = kb.pack_status(seeded_db)
    outside = [p for p in kb.list_propositions(seeded_db) if status[p.id][0] is None]
    target = None
    for p in outside:
        for q in test:
            a = applies(p.structure, q)
            if a and len(a[0]) == len(q.cands) and len(a[1]) == 1 and next(iter(a[1])) != after[q.question_id].index:
                target = (p.id, q, next(iter(a[1])))
                break
        if target:
            break
    assert target is not None
    pid, q, favoured = target
    kb.pin(seeded_db, pid)
    solver, pinned = answers()
    assert solver.entries[0].prop.id == pid
    assert pinned[q.question_id].index == favoured and pinned[q.question_id].used[0] == pid

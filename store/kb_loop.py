"""The knowledge base's loop and what a curator judges a proposition by.

    cycle(db, questions=N, solver="rules"|"llm", ask=..., execute=...) -> dict   # `kb cycle`
    stream(db, n) -> [question dicts]        # questions no cycle has answered yet (train split)
    uses(db, pid) -> [dict] ; use_counts(db) -> {pid: {"helpful", "harmful", "neutral"}}
    evidence_rows(db, pid) -> [dict]         # each with recipes, means ± std, gap, dataset, pool
    records(db, pid) -> {"train", "heldout", "imported"}   # raw and per independent unit
    conflicts(db, pid) -> [dict]             # opposite claims over overlapping scopes; reversals
    show(db, pid) -> dict                    # `kb show ID --json`

A cycle answers each question of the stream with the current pack, takes its outcome (the
record, or a run made now), records one use per invoked proposition and enters the solver's
proposals as ``proposed`` (one audit row, ``cycle``: undo withdraws its proposals; the answers
and uses stay, as what happened).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

from archcurator.core.kb import cycle as loop
from archcurator.core.kb.evidence import describe, unit_counts, unit_of
from archcurator.core.kb.features import QuestionView, view
from archcurator.core.kb.props import Structure, judge

from . import kb as K
from .connection import DB, one, reading, transaction, utcnow

EFFECTS = loop.EFFECTS


def _order(qid: str) -> str:
    """A fixed shuffle of the stream (families interleave rather than come in id order)."""
    return hashlib.sha256(qid.encode()).hexdigest()


def stream(db: DB = None, n: int | None = None, split: str = "train") -> list[dict]:
    """Questions of SPLIT no cycle has answered yet, in the stream's fixed order."""
    with reading(db) as con:
        rows = con.execute("SELECT question_id, question, origin, split FROM aiq_questions q WHERE split = ?"
                           " AND NOT EXISTS (SELECT 1 FROM kb_answers a WHERE a.question_id = q.question_id)",
                           [split]).fetchall()
    rows.sort(key=lambda r: _order(r[0]))
    if n is not None:
        rows = rows[:n]
    return [{**json.loads(r[1]), "origin": r[2] or "imported", "split": r[3]} for r in rows]


def cycle(db: DB = None, *, questions: int = 10, solver: str = "rules", ask: Callable[[str], str] | None = None,
          solver_name: str | None = None, execute: Callable[[dict], dict] | None = None, propose: bool = True,
          actor: str | None = None, progress: Callable[[int, int], None] | None = None) -> dict:
    """One cycle of the loop over the next QUESTIONS of the stream. SOLVER "rules" (the default) or
    "llm" (ASK(prompt) -> reply, an OpenAI-compatible endpoint's). EXECUTE(question): the outcome
    from a run made now (core.aiq.execute.execute_question's answer) instead of the record.
    Returns {"cycle", "steps": [...], "summary", "proposed": [ids]}."""
    if solver not in ("rules", "llm"):
        raise K.KBError(f"the solver is rules or llm, not {solver!r}")
    if solver == "llm" and ask is None:
        raise K.KBError("the llm solver needs an endpoint (--solver llm URL)")
    qs = stream(db, questions)
    entries = K.current_pack(db)
    train = K.question_views(db, split="train")
    with reading(db) as con:
        known = {r[0] for r in con.execute("SELECT structure_key FROM kb_propositions WHERE status <> 'withdrawn'"
                                           ).fetchall()}
    s: loop.RulesSolver | loop.LLMSolver
    if solver == "rules":
        s = loop.RulesSolver(entries, train)
    else:
        assert ask is not None  # refused above
        s = loop.LLMSolver(entries, ask)
    steps = loop.run_cycle(qs, s, train, execute=execute, known=known,
                           propose=propose and solver == "rules", progress=progress)
    info = loop.summary(steps)
    now = utcnow()
    with transaction(db) as con:
        allv = K._views_by_id(con)
        cid = int(one(con.execute(
            "INSERT INTO kb_cycles (started_at, actor, solver, executed, n_questions, correct, pack_ids, proposed)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
            [now, K._actor(actor), solver_name or solver, execute is not None, len(steps), info["correct"],
             json.dumps([e.prop.id for e in entries]), None]))[0])
        proposed: list[int] = []
        answers, use_rows = [], []
        for st in steps:
            answers.append((cid, st.question_id, st.answer, st.by, st.outcome, st.outcome_from, st.reproduced,
                            st.note, now))
            for u in st.uses:
                use_rows.append((cid, st.question_id, int(u.prop_id), u.effect, ",".join(u.favoured), u.reason, now))
            for structure in st.proposals:
                pid = K._insert_prop(con, text=structure.render(), structure=structure, status="proposed",
                                     origin="solver", source=f"{solver} solver, cycle #{cid}, from {st.question_id}")
                K._set_evidence(con, pid, K._derive(con, structure, allv))
                proposed.append(pid)
        K._insert_many(con, "kb_answers", ("cycle_id", "question_id", "answer", "answered_by", "outcome",
                                           "outcome_from", "reproduced", "note", "recorded_at"), answers)
        K._insert_many(con, "kb_uses", ("cycle_id", "question_id", "prop_id", "effect", "favoured", "reason",
                                        "recorded_at"), use_rows)
        con.execute("UPDATE kb_cycles SET proposed = ? WHERE id = ?", [json.dumps(proposed), cid])
        K._audit(con, "cycle", proposed, {"questions": questions, "solver": solver_name or solver,
                                          "executed": execute is not None},
                 f"cycle #{cid}: {len(steps)} questions, {info['correct']} right, {len(use_rows)} uses, "
                 f"{len(proposed)} proposed", {"props": {str(i): None for i in proposed}}, actor)
    return {"cycle": cid, "solver": solver_name or solver, "steps": [st.to_dict() for st in steps],
            "summary": info, "proposed": proposed, "pack_ids": [e.prop.id for e in entries],
            "stream_left": len(stream(db))}


def cycles(db: DB = None, limit: int = 20) -> list[dict]:
    with reading(db) as con:
        rows = con.execute("SELECT id, started_at, actor, solver, executed, n_questions, correct, proposed"
                           " FROM kb_cycles ORDER BY id DESC LIMIT ?", [limit]).fetchall()
    keys = ("id", "at", "actor", "solver", "executed", "questions", "correct", "proposed")
    return [{**dict(zip(keys, r)), "at": str(r[1]), "proposed": json.loads(r[7] or "[]")} for r in rows]


# --------------------------------------------------------------------------- uses

def use_counts(db: DB = None) -> dict[int, dict[str, int]]:
    with reading(db) as con:
        rows = con.execute("SELECT prop_id, effect, count(*) FROM kb_uses GROUP BY ALL").fetchall()
    out: dict[int, dict[str, int]] = {}
    for pid, effect, n in rows:
        out.setdefault(int(pid), dict.fromkeys(EFFECTS, 0))[effect] = int(n)
    return out


def _questions(con, qids) -> dict[str, dict]:
    qids = sorted(set(qids))
    out = {}
    for i in range(0, len(qids), 400):
        part = qids[i:i + 400]
        for qid, js, origin, split in con.execute(
                "SELECT question_id, question, origin, split FROM aiq_questions WHERE question_id IN ("
                + ", ".join("?" for _ in part) + ")", part).fetchall():
            out[qid] = {**json.loads(js), "origin": origin or "imported", "split": split}
    return out


def uses(db: DB, pid: int | str, limit: int | None = None) -> list[dict]:
    """Every use of one proposition, newest first, each with the question as a curator judges it."""
    pid = K.parse_id(pid)
    sql = ("SELECT u.cycle_id, u.question_id, u.effect, u.favoured, u.reason, u.recorded_at, a.answer,"
           " a.outcome, a.outcome_from FROM kb_uses u LEFT JOIN kb_answers a"
           " ON a.cycle_id = u.cycle_id AND a.question_id = u.question_id WHERE u.prop_id = ?"
           " ORDER BY u.cycle_id DESC, u.question_id")
    with reading(db) as con:
        rows = con.execute(sql + (f" LIMIT {int(limit)}" if limit else ""), [pid]).fetchall()
        qs = _questions(con, [r[1] for r in rows])
    out = []
    for cid, qid, effect, fav, reason, at, answer, outcome, came in rows:
        d = {"cycle": int(cid), "question": qid, "effect": effect, "favoured": [x for x in (fav or "").split(",") if x],
             "reason": reason, "at": str(at), "answer": answer, "outcome": outcome, "outcome_from": came}
        if qid in qs:
            d.update({k: v for k, v in describe(qs[qid]).items() if k != "question"})
        out.append(d)
    return out


# --------------------------------------------------------------------------- evidence a curator can judge

def evidence_rows(db: DB, pid: int | str) -> list[dict]:
    """The proposition's evidence rows (as `store.kb.evidence`), each with the question's recipes
    (the fields that differ), mean ± std per candidate, the winner, the gap, the seed win rate,
    the dataset and its features, and the candidate pool."""
    rows = K.evidence(db, pid)
    with reading(db) as con:
        qs = _questions(con, [r["question_id"] for r in rows])
    out = []
    for r in rows:
        q = qs.get(r["question_id"])
        d = {"question": r["question_id"], "verdict": r["verdict"], "reason": r["reason"], "split": r["split"],
             "via": r["via"]}
        if q is not None:
            d.update({k: v for k, v in describe(q).items() if k != "question"})
        out.append(d)
    return out


def _record(structure: Structure, views: list[tuple[dict, QuestionView]]) -> dict:
    pairs = []
    for q, v in views:
        j = judge(structure, v)
        if j is not None:
            pairs.append((unit_of(q), j.verdict))
    return unit_counts(pairs)


def _groups(con) -> dict[str, list[tuple[dict, QuestionView]]]:
    out: dict[str, list] = {"train": [], "heldout": [], "imported": []}
    for js, origin, split in con.execute("SELECT question, origin, split FROM aiq_questions"
                                              ).fetchall():
        q = {**json.loads(js), "split": split}
        v = view(q, origin=origin or "imported")
        if split == "train":   # what evidence rows are derived from, shipped or imported
            out["train"].append((q, v))
        elif (origin or "imported") == "imported":
            out["imported"].append((q, v))
        else:
            out["heldout"].append((q, v))
    return out


def records(db: DB, pid: int | str, _groups_cache: dict | None = None) -> dict:
    """The proposition's record on the training questions (the train split, whatever their origin),
    beside the held-out (our test split) and imported (test) ones: raw supports / contradictions
    and per independent unit (pool × dataset).
    Shown to the curator; nothing ranks by the held-out or imported records."""
    p = K.get_proposition(db, pid)
    if _groups_cache is None:
        with reading(db) as con:
            _groups_cache = _groups(con)
    return {name: _record(p.structure, vs) for name, vs in _groups_cache.items()}


def _opposite(a: Structure, b: Structure) -> bool:
    ca, cb = a.claim, b.claim
    if ca.kind == "prefer" and cb.kind == "prefer":
        return ca.feature == cb.feature and ca.direction != cb.direction
    return {ca.kind, cb.kind} == {"wins", "loses"} and ca.when == cb.when


def conflicts(db: DB, pid: int | str, _recs: dict | None = None) -> list[dict]:
    """Flags: a live proposition with the opposite claim whose scope overlaps this one's (both
    apply to a stored question); a held-out or imported record that reverses the training one."""
    from archcurator.core.kb.props import applies

    p = K.get_proposition(db, pid)
    out: list[dict[str, Any]] = []
    recs = _recs or records(db, p.id)
    tr = recs["train"]
    for name in ("heldout", "imported"):
        r = recs[name]
        # judged per independent unit: 3-subsets of one pool on one dataset do not reverse anything alone
        if tr["units_support"] > tr["units_contradict"] and r["units_contradict"] > r["units_support"] \
                and r["support"] + r["contradict"] >= 3:
            out.append({"kind": "reversed", "record": name,
                        "text": f"{tr['units_support']}-{tr['units_contradict']} units on training questions "
                                f"({tr['support']}-{tr['contradict']} raw), {r['units_support']}-"
                                f"{r['units_contradict']} units on {name} ones ({r['support']}-{r['contradict']} raw)"})
    others = [o for o in K.list_propositions(db, "live") if o.id != p.id and _opposite(p.structure, o.structure)]
    if others:
        with reading(db) as con:
            views = list(K._views_by_id(con).values())
        for o in others:
            both = sum(1 for v in views if applies(p.structure, v) is not None and applies(o.structure, v) is not None)
            if both:
                out.append({"kind": "opposite", "with": o.id,
                            "text": f"P{o.id} claims the opposite ({o.structure.claim}) and applies with it to "
                                    f"{both} stored questions"})
    return out


def show(db: DB, pid: int | str) -> dict[str, Any]:
    """`kb show ID --json`: the proposition, its evidence rows, its records, uses and conflicts."""
    p = K.get_proposition(db, pid)
    recs = records(db, p.id)
    counts = use_counts(db).get(p.id, dict.fromkeys(EFFECTS, 0))
    return {**p.to_dict(), "evidence": evidence_rows(db, p.id), "records": recs, "use_counts": counts,
            "uses": uses(db, p.id, limit=200), "conflicts": conflicts(db, p.id, recs)}


# --------------------------------------------------------------------------- pack versions side by side

def miner_pack(train: list[QuestionView], cap: int | None = None) -> list:
    """The raw miner's top CAP proposals on TRAIN as a pack (no curation, no selection)."""
    from archcurator.core.kb.miner import mine
    from archcurator.core.kb.pack import CAP, PackEntry
    from archcurator.core.kb.suggest import PropLite

    cap = cap or CAP
    out = []
    for i, m in enumerate(mine(train, max_props=cap), 1):
        out.append(PackEntry(i, PropLite(f"m{i}", m.structure.render(), m.structure, "proposed", False, m.support,
                                         m.contradict), m.lower, "miner", i))
    return out


def replay_packs(db: DB, specs: list[str], *, split: str = "test", task_group: str | None = None) -> dict:
    """`kb replay --pack A --pack B`: pack versions on the same questions. Each spec is a file
    written by `kb pack --json`, `current` (the store's pack now) or `miner` (the raw miner's top
    20 on the same training questions). One spec is compared with the current pack."""
    from archcurator.core.kb.pack import PackFileError, read_pack
    from archcurator.core.kb.replay import compare_packs

    views = K.question_views(db)
    if task_group is not None and task_group not in {v.task for v in views}:
        raise K.KBError(f"no task group {task_group!r} (stored: {', '.join(sorted({v.task for v in views}))})")
    if task_group is not None:
        train = [v for v in views if v.task != task_group and v.split == "train" and v.origin != "imported"]
    else:
        train = [v for v in views if v.split == "train"]
    specs = list(specs) if len(specs) > 1 else [*specs, "current"]
    packs = []
    for spec in specs:
        if spec == "current":
            packs.append(("current", K.current_pack(db)))
        elif spec == "miner":
            packs.append(("miner", miner_pack(train)))
        else:
            try:
                packs.append((spec, read_pack(spec)))
            except PackFileError as e:
                raise K.KBFileError(spec, str(e)) from None
    return compare_packs(views, packs, split=split, train=train, task_group=task_group)

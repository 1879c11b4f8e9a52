"""Curators' judgments: append-only events; the current verdict is a view.

Every judgment and every undo is a new row of `judgments`, committed before
the call returns, so a curator's work survives the process being killed at
any moment. `current_judgments` (a view) holds, per design, finding and
curator, the latest verdict event that has not been undone.

A finding's verdict is `real`, `false_alarm` or `unsure`. A design as a whole
(finding key None) can be judged `clean`: for designs with no findings.

Steps: every row a curator's action writes carries that action's step number
(one shared sequence, migration 0010): a verdict, a note edited, a bulk
verdict over many findings, a flag for later, a missed defect marked or
retracted, an adjudication. `undo_last_step` takes back the curator's newest
step not yet undone, whole (a bulk verdict is one step), by appending undo
events; it reads the log, so it works the same after a restart and can be
repeated. `recent_steps` lists them for the app's recent-verdicts panel.
"""

from __future__ import annotations

from .connection import DB, one, reading, transaction, utcnow
from .records import BulkResult, SeenResult, Step

VERDICT_WORDS = {"real": "real", "false_alarm": "false alarm", "unsure": "unsure", "clean": "clean"}

FINDING_VERDICTS = ("real", "false_alarm", "unsure")
DESIGN_VERDICTS = ("clean",)
VERDICTS = FINDING_VERDICTS + DESIGN_VERDICTS


class JudgmentError(ValueError):
    """A judgment that cannot be recorded (unknown design or finding, bad verdict, ...)."""


def new_step(con) -> int:
    """A fresh step number (call inside the transaction that writes the step's rows)."""
    return con.execute("SELECT nextval('curation_steps')").fetchone()[0]


def _check_verdict(finding_key, verdict) -> None:
    if finding_key is None:
        if verdict not in DESIGN_VERDICTS:
            raise JudgmentError(f"a design as a whole can only be judged 'clean', not {verdict!r}")
    elif verdict not in FINDING_VERDICTS:
        raise JudgmentError(f"a finding's verdict is one of {', '.join(FINDING_VERDICTS)}, not {verdict!r}")


def _check_target(con, design_id: str, finding_key: str | None) -> None:
    if not con.execute("SELECT 1 FROM designs WHERE id = ?", [design_id]).fetchone():
        raise JudgmentError(f"no design {design_id!r} in the store")
    if finding_key is not None and not con.execute(
            "SELECT 1 FROM findings WHERE design_id = ? AND key = ?", [design_id, finding_key]).fetchone():
        raise JudgmentError(f"design {design_id!r} has no finding {finding_key!r}")


def _insert_verdict(con, design_id, finding_key, curator, verdict, note, step, at) -> int:
    event = con.execute(
        "INSERT INTO judgments (design_id, finding_key, curator, verdict, note, judged_at, step)"
        " VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id",
        [design_id, finding_key, curator, verdict, note, at, step]).fetchone()[0]
    # a verdict ends a flag for later on the same finding, in the same step (undo brings it back)
    if con.execute("SELECT 1 FROM current_flags WHERE design_id = ? AND finding_key IS NOT DISTINCT FROM ?"
                   " AND curator = ?", [design_id, finding_key, curator]).fetchone():
        con.execute("INSERT INTO flags (design_id, finding_key, curator, flagged, flagged_at, step)"
                    " VALUES (?, ?, ?, false, ?, ?)", [design_id, finding_key, curator, at, step])
    return event


def _need_curator(curator) -> None:
    if not curator or not isinstance(curator, str):
        raise JudgmentError("a judgment needs a curator name")


def record_judgment(db: DB, design_id: str, finding_key: str | None, curator: str,
                    verdict: str, note: str | None = None) -> int:
    """Append a verdict event (one step) and commit it; returns its event id.

    `finding_key` is a finding's `rule@node,ids` key (stale findings may be
    judged too), or None to judge the whole design `clean`.
    """
    _need_curator(curator)
    _check_verdict(finding_key, verdict)
    with transaction(db) as con:
        _check_target(con, design_id, finding_key)
        return _insert_verdict(con, design_id, finding_key, curator, verdict, note, new_step(con), utcnow())


def record_judgment_seen(db: DB, design_id: str, finding_key: str | None, curator: str, verdict: str,
                         note: str | None, seen: dict) -> SeenResult:
    """`record_judgment`, saying which other curators' verdicts on the finding changed since the curator
    was shown it (`seen`: {curator: event id} as shown; None for no verdict then), the curator's own one
    too when `seen` has it: {"event", "changed": [{"curator", "verdict", "was", "same_curator"}]}. Both
    verdicts are kept: one curator's never replaces another's (and an own one replaced stays in the history)."""
    _need_curator(curator)
    _check_verdict(finding_key, verdict)
    with transaction(db) as con:
        _check_target(con, design_id, finding_key)
        now = con.execute("SELECT curator, id, verdict FROM current_judgments WHERE design_id = ?"
                          " AND finding_key IS NOT DISTINCT FROM ?", [design_id, finding_key]).fetchall()
        event = _insert_verdict(con, design_id, finding_key, curator, verdict, note, new_step(con), utcnow())
    seen = seen or {}
    # the curator's own verdict is compared only when `seen` names it: the same curator in another instance
    # of the app (or another terminal) judged the finding since this one showed it
    changed = [{"curator": who, "verdict": v, "was": seen.get(who), "same_curator": who == curator}
               for who, eid, v in now if (who != curator or curator in seen) and seen.get(who) != eid]
    return {"event": event, "changed": changed}


def record_note(db: DB, design_id: str, finding_key: str | None, curator: str, note: str | None) -> int:
    """Add or change the note on a finding the curator has already judged, keeping the verdict (one
    step: the verdict recorded again with the new note); returns the event id."""
    _need_curator(curator)
    with transaction(db) as con:
        _check_target(con, design_id, finding_key)
        row = con.execute("SELECT verdict FROM current_judgments WHERE design_id = ?"
                          " AND finding_key IS NOT DISTINCT FROM ? AND curator = ?",
                          [design_id, finding_key, curator]).fetchone()
        if row is None:
            raise JudgmentError(f"{finding_key or design_id} has no verdict of {curator}'s to attach a note to")
        return _insert_verdict(con, design_id, finding_key, curator, row[0], note or None, new_step(con), utcnow())


def record_bulk(db: DB, targets, curator: str, verdict: str, note: str | None = None) -> BulkResult:
    """The same verdict on many findings, as ONE step (one undo takes it all back).

    `targets`: (design_id, finding_key) pairs. Returns {"step", "n", "designs"}."""
    _need_curator(curator)
    targets = list(dict.fromkeys((d, k) for d, k in targets))
    if not targets:
        raise JudgmentError("no findings to judge")
    for _d, key in targets:
        _check_verdict(key, verdict)
    with transaction(db) as con:
        known = {tuple(r) for r in con.execute(
            "SELECT f.design_id, f.key FROM findings f JOIN (SELECT unnest(?::VARCHAR[]) AS d,"
            " unnest(?::VARCHAR[]) AS k) t ON t.d = f.design_id AND t.k = f.key",
            [[d for d, _ in targets], [k for _, k in targets]]).fetchall()}
        missing = [t for t in targets if t not in known]
        if missing:
            raise JudgmentError(f"design {missing[0][0]!r} has no finding {missing[0][1]!r}")
        step, at = new_step(con), utcnow()
        for design_id, key in targets:
            _insert_verdict(con, design_id, key, curator, verdict, note, step, at)
    return {"step": step, "n": len(targets), "designs": sorted({d for d, _ in targets})}


def set_flag(db: DB, design_id: str, finding_key: str | None, curator: str, flagged: bool = True,
             note: str | None = None) -> int:
    """Flag a finding (or a design, key None) for later, or clear the flag: one step; returns it."""
    _need_curator(curator)
    with transaction(db) as con:
        _check_target(con, design_id, finding_key)
        step = new_step(con)
        con.execute("INSERT INTO flags (design_id, finding_key, curator, flagged, note, flagged_at, step)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [design_id, finding_key, curator, bool(flagged), note, utcnow(), step])
        return step


def adjudicate(db: DB, design_id: str, finding_key: str, adjudicator: str, verdict: str,
               note: str | None = None) -> int:
    """Record the final verdict of a finding curators disagree on (one step); returns the event id."""
    _need_curator(adjudicator)
    if verdict not in FINDING_VERDICTS:
        raise JudgmentError(f"a finding's verdict is one of {', '.join(FINDING_VERDICTS)}, not {verdict!r}")
    with transaction(db) as con:
        _check_target(con, design_id, finding_key)
        return one(con.execute(
            "INSERT INTO adjudications (design_id, finding_key, adjudicator, verdict, note, adjudicated_at, step)"
            " VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id",
            [design_id, finding_key, adjudicator, verdict, note, utcnow(), new_step(con)]))[0]


def current_verdicts(db: DB, design_id: str, curator: str | None = None) -> dict:
    """{finding key (None: the design): {curator: verdict}} for one design."""
    sql = "SELECT finding_key, curator, verdict FROM current_judgments WHERE design_id = ?"
    params = [design_id]
    if curator:
        sql += " AND curator = ?"
        params.append(curator)
    out: dict = {}
    with reading(db) as con:
        for key, who, verdict in con.execute(sql, params).fetchall():
            out.setdefault(key, {})[who] = verdict
    return out


def judgment_events(db: DB, design_id: str | None = None, curator: str | None = None,
                    limit: int | None = None) -> list[dict]:
    """The event log (newest first): id, design_id, finding_key, curator, verdict, note, judged_at, undoes."""
    clauses, params = [], []
    if design_id is not None:
        clauses.append("design_id = ?")
        params.append(design_id)
    if curator is not None:
        clauses.append("curator = ?")
        params.append(curator)
    sql = "SELECT * FROM judgments"
    if clauses:
        sql += " WHERE " + " AND ".join(clauses)
    sql += " ORDER BY id DESC"
    if limit:
        sql += f" LIMIT {int(limit)}"
    with reading(db) as con:
        cur = con.execute(sql, params)
        names = [d[0] for d in cur.description]
        return [dict(zip(names, r)) for r in cur.fetchall()]


def curators(db: DB) -> list[str]:
    """Everyone who has judged anything."""
    with reading(db) as con:
        return [r[0] for r in con.execute("SELECT DISTINCT curator FROM judgments ORDER BY 1").fetchall()]


# ---- steps: the one undo model ---------------------------------------------------------------

# Every row a curator's step wrote, with whether it is undone. A missed defect's marking is undone
# when it was retracted by an undo (retracted_step NULL); its retraction is a step of its own.
_STEPS = """
steps AS (
    SELECT j.step, 'judgment' AS kind, j.id, j.design_id, j.finding_key, j.verdict AS what, j.note,
           j.judged_at AS happened, EXISTS (SELECT 1 FROM judgments u WHERE u.undoes = j.id) AS undone
    FROM judgments j WHERE j.curator = ? AND j.verdict IS NOT NULL AND j.step IS NOT NULL
    UNION ALL
    SELECT f.step, CASE WHEN f.flagged THEN 'flag' ELSE 'unflag' END, f.id, f.design_id, f.finding_key,
           NULL, f.note, f.flagged_at, EXISTS (SELECT 1 FROM flags u WHERE u.undoes = f.id)
    FROM flags f WHERE f.curator = ? AND f.flagged IS NOT NULL AND f.step IS NOT NULL
    UNION ALL
    SELECT m.step, 'missed', m.id, m.design_id, NULL, m.rule, m.description, m.marked_at,
           m.retracted_at IS NOT NULL AND m.retracted_step IS NULL
    FROM missed_defects m WHERE m.curator = ? AND m.step IS NOT NULL
    UNION ALL
    SELECT m.retracted_step, 'retract', m.id, m.design_id, NULL, m.rule, m.description, m.retracted_at, false
    FROM missed_defects m WHERE m.curator = ? AND m.retracted_step IS NOT NULL
    UNION ALL
    SELECT a.step, 'adjudication', a.id, a.design_id, a.finding_key, a.verdict, a.note, a.adjudicated_at,
           EXISTS (SELECT 1 FROM adjudications u WHERE u.undoes = a.id)
    FROM adjudications a WHERE a.adjudicator = ? AND a.verdict IS NOT NULL AND a.step IS NOT NULL
)"""
_STEP_COLS = ("step", "kind", "id", "design_id", "finding_key", "what", "note", "happened", "undone")


def _step_rows(con, curator: str, where: str, params: list) -> list[dict]:
    cur = con.execute(f"WITH {_STEPS} SELECT {', '.join(_STEP_COLS)} FROM steps WHERE {where}"
                      " ORDER BY step DESC, id", [curator] * 5 + params)
    return [dict(zip(_STEP_COLS, r)) for r in cur.fetchall()]


def describe_step(rows: list[dict]) -> str:
    """One line saying what a step did (its rows as `recent_steps` gives them)."""
    judged = [r for r in rows if r["kind"] == "judgment"]
    if judged:
        verdict = VERDICT_WORDS.get(judged[0]["what"], judged[0]["what"])
        if len(judged) == 1:
            r = judged[0]
            what = r["finding_key"] or "the design"
            return f"{verdict} on {what} ({r['design_id']})" + (f" · note: {r['note']}" if r["note"] else "")
        rules = {(r["finding_key"] or "").split("@")[0] for r in judged}
        designs = {r["design_id"] for r in judged}
        of = f" of {next(iter(rules))}" if len(rules) == 1 else ""
        return f"{verdict} on {len(judged)} findings{of} ({len(designs)} design{'s' if len(designs) != 1 else ''})"
    r = rows[0]
    where = f"{r['finding_key'] or 'the design'} ({r['design_id']})"
    if r["kind"] == "flag":
        return f"flagged for later: {where}"
    if r["kind"] == "unflag":
        return f"flag cleared: {where}"
    # the design before the free text (a description is as long as the curator typed it): a list that cuts
    # a long line still names the design the step was on
    what = r["what"] or r["note"]
    if r["kind"] == "missed":
        return f"missed defect on {r['design_id']}" + (f": {what}" if what else "")
    if r["kind"] == "retract":
        return f"missed defect retracted on {r['design_id']}" + (f": {what}" if what else "")
    if r["kind"] == "adjudication":
        return f"final verdict {VERDICT_WORDS.get(r['what'], r['what'])} on {where}"
    return f"{r['kind']} on {where}"


def _summary(rows: list[dict]) -> Step:
    at = max((r["happened"] for r in rows if r["happened"] is not None), default=None)
    return {"step": rows[0]["step"], "at": at,
            "kind": "bulk" if sum(r["kind"] == "judgment" for r in rows) > 1 else rows[0]["kind"],
            "summary": describe_step(rows), "n": len(rows),
            "designs": sorted({r["design_id"] for r in rows}),
            "keys": [(r["design_id"], r["finding_key"]) for r in rows], "undone": all(r["undone"] for r in rows)}


def recent_steps(db: DB, curator: str, limit: int = 12) -> list[Step]:
    """The curator's newest steps, newest first (undone ones included, marked): step, at, kind,
    summary, n (rows), designs, keys, undone."""
    with reading(db) as con:
        top = [r[0] for r in con.execute(
            f"WITH {_STEPS} SELECT step FROM steps GROUP BY step ORDER BY step DESC LIMIT {int(limit)}",
            [curator] * 5).fetchall()]
        if not top:
            return []
        rows = _step_rows(con, curator, f"step IN ({', '.join('?' for _ in top)})", top)
    by_step: dict = {}
    for r in rows:
        by_step.setdefault(r["step"], []).append(r)
    return [_summary(by_step[s]) for s in top if s in by_step]


def newest_step_at(db: DB, curator: str):
    """When the curator's newest step not undone yet was taken (None: nothing left to undo)."""
    _need_curator(curator)
    with transaction(db) as con:
        row = con.execute(f"WITH {_STEPS} SELECT max(happened) FROM steps WHERE NOT undone AND step = "
                          "(SELECT max(step) FROM steps WHERE NOT undone)", [curator] * 5).fetchone()
    return None if row is None else row[0]


def undo_last_step(db: DB, curator: str) -> Step | None:
    """Take back the curator's newest step not undone yet (all its rows, in one transaction).

    Returns what was undone (as `recent_steps` describes a step), or None when nothing is left."""
    _need_curator(curator)
    with transaction(db) as con:
        row = con.execute(f"WITH {_STEPS} SELECT max(step) FROM steps WHERE NOT undone", [curator] * 5).fetchone()
        if row is None or row[0] is None:
            return None
        rows = _step_rows(con, curator, "step = ? AND NOT undone", [row[0]])
        at = utcnow()
        for r in rows:
            kind = r["kind"]
            if kind == "judgment":
                con.execute("INSERT INTO judgments (design_id, finding_key, curator, verdict, note, judged_at, undoes)"
                            " VALUES (?, ?, ?, NULL, NULL, ?, ?)", [r["design_id"], r["finding_key"], curator, at,
                                                                    r["id"]])
            elif kind in ("flag", "unflag"):
                con.execute("INSERT INTO flags (design_id, finding_key, curator, flagged, flagged_at, undoes)"
                            " VALUES (?, ?, ?, NULL, ?, ?)", [r["design_id"], r["finding_key"], curator, at, r["id"]])
            elif kind == "missed":
                con.execute("UPDATE missed_defects SET retracted_at = ?, retracted_step = NULL WHERE id = ?",
                            [at, r["id"]])
            elif kind == "retract":
                con.execute("UPDATE missed_defects SET retracted_at = NULL, retracted_step = NULL WHERE id = ?",
                            [r["id"]])
            elif kind == "adjudication":
                con.execute("INSERT INTO adjudications (design_id, finding_key, adjudicator, verdict, adjudicated_at,"
                            " undoes) VALUES (?, ?, ?, NULL, ?, ?)",
                            [r["design_id"], r["finding_key"], curator, at, r["id"]])
    out = _summary(rows)
    out["undone"] = True
    return out

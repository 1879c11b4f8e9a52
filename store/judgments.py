"""Curators' judgments: append-only events; the current verdict is a view.

Every judgment and every undo is a new row of `judgments`, committed before
the call returns, so a curator's work survives the process being killed at
any moment. `current_judgments` (a view) holds, per design, finding and
curator, the latest verdict event that has not been undone.

A finding's verdict is `real`, `false_alarm` or `unsure`. A design as a whole
(finding key None) can be judged `clean`: for designs with no findings.
"""

from __future__ import annotations

from .connection import DB, reading, transaction, utcnow

FINDING_VERDICTS = ("real", "false_alarm", "unsure")
DESIGN_VERDICTS = ("clean",)
VERDICTS = FINDING_VERDICTS + DESIGN_VERDICTS


class JudgmentError(ValueError):
    """A judgment that cannot be recorded (unknown design or finding, bad verdict, ...)."""


def record_judgment(db: DB, design_id: str, finding_key: str | None, curator: str,
                    verdict: str, note: str | None = None) -> int:
    """Append a verdict event and commit it; returns its event id.

    `finding_key` is a finding's `rule@node,ids` key (stale findings may be
    judged too), or None to judge the whole design `clean`.
    """
    if not curator or not isinstance(curator, str):
        raise JudgmentError("a judgment needs a curator name")
    if finding_key is None:
        if verdict not in DESIGN_VERDICTS:
            raise JudgmentError(f"a design as a whole can only be judged 'clean', not {verdict!r}")
    elif verdict not in FINDING_VERDICTS:
        raise JudgmentError(f"a finding's verdict is one of {', '.join(FINDING_VERDICTS)}, not {verdict!r}")
    with transaction(db) as con:
        if not con.execute("SELECT 1 FROM designs WHERE id = ?", [design_id]).fetchone():
            raise JudgmentError(f"no design {design_id!r} in the store")
        if finding_key is not None and not con.execute(
                "SELECT 1 FROM findings WHERE design_id = ? AND key = ?", [design_id, finding_key]).fetchone():
            raise JudgmentError(f"design {design_id!r} has no finding {finding_key!r}")
        return con.execute(
            "INSERT INTO judgments (design_id, finding_key, curator, verdict, note, judged_at)"
            " VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
            [design_id, finding_key, curator, verdict, note, utcnow()]).fetchone()[0]


def undo_judgment(db: DB, event_id: int, curator: str) -> int:
    """Append an event undoing verdict event `event_id` (the curator's own); returns its id.

    The finding's current verdict for that curator falls back to their latest
    earlier verdict that is not undone (or none). Undo events cannot be undone:
    to redo, record the verdict again.
    """
    with transaction(db) as con:
        row = con.execute(
            "SELECT design_id, finding_key, curator, verdict FROM judgments WHERE id = ?", [event_id]).fetchone()
        if row is None:
            raise JudgmentError(f"no judgment event {event_id}")
        design_id, key, owner, verdict = row
        if verdict is None:
            raise JudgmentError(f"event {event_id} is an undo; record the verdict again instead")
        if owner != curator:
            raise JudgmentError(f"event {event_id} is {owner}'s judgment, not {curator}'s")
        if con.execute("SELECT 1 FROM judgments WHERE undoes = ?", [event_id]).fetchone():
            raise JudgmentError(f"event {event_id} is already undone")
        return con.execute(
            "INSERT INTO judgments (design_id, finding_key, curator, verdict, note, judged_at, undoes)"
            " VALUES (?, ?, ?, NULL, NULL, ?, ?) RETURNING id",
            [design_id, key, curator, utcnow(), event_id]).fetchone()[0]


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

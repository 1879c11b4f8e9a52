"""Missed defects: what a curator saw on a design that no rule reported (for recall per rule).

The rule named must be a known rule: one of the check catalogue's
(core.checks.CATALOGUE), or one that has fired in this store (a store
verified by another verifier version); a defect no rule covers is recorded
as `other: TEXT` (`OTHER_PREFIX`), which reports keep apart from the rules. Marking and retracting are
curation steps (store/judgments.py: one undo model).
"""

from __future__ import annotations

from .connection import DB, one, reading, transaction, utcnow

OTHER_PREFIX = "other: "


class MissedDefectError(ValueError):
    """A missed defect that cannot be recorded (unknown rule or node, nothing said about it, ...)."""


def catalogue_rules() -> set[str]:
    from archcurator.core.checks import CATALOGUE

    return set(CATALOGUE)


def known_rules(con) -> set[str]:
    """The catalogue's rules and every rule that has fired in this store."""
    return catalogue_rules() | {r[0] for r in con.execute("SELECT DISTINCT rule FROM findings").fetchall()}


def _graph_nodes(con, design_id: str) -> set[str] | None:
    import json

    row = con.execute("SELECT graph FROM designs WHERE id = ?", [design_id]).fetchone()
    if row is None or row[0] is None:
        return None
    graph = json.loads(row[0])
    ids = {n.get("id") for n in graph.get("nodes") or [] if isinstance(n, dict)}
    ids |= {i.get("id") for i in graph.get("inputs") or [] if isinstance(i, dict)}
    return {i for i in ids if isinstance(i, str)}


def record_missed_defect(db: DB, design_id: str, curator: str, nodes, rule: str | None = None,
                         description: str | None = None) -> int:
    """Mark a defect no finding reported; returns its id. `nodes`: a list of node ids or "a,b".

    Name the rule that should have fired (a catalogue id, or `other: TEXT`),
    or describe it (or both). Nodes must be the design's own.
    """
    if isinstance(nodes, str):
        node_list = [n.strip() for n in nodes.split(",") if n.strip()]
    else:
        node_list = [str(n) for n in (nodes or [])]
    if not curator:
        raise MissedDefectError("a missed defect needs a curator name")
    rule = (rule or "").strip() or None
    if rule is not None and rule.startswith(OTHER_PREFIX):
        if not rule[len(OTHER_PREFIX):].strip():
            raise MissedDefectError("say what the other defect is after 'other: '")
    if not rule and not description:
        raise MissedDefectError("a missed defect needs the rule that should have fired or a description")
    with transaction(db) as con:
        if rule is not None and not rule.startswith(OTHER_PREFIX) and rule not in known_rules(con):
            raise MissedDefectError(f"{rule!r} is not a rule of the check catalogue (name one, or record it as "
                                    f"'{OTHER_PREFIX}{rule}')")
        if not con.execute("SELECT 1 FROM designs WHERE id = ?", [design_id]).fetchone():
            raise MissedDefectError(f"no design {design_id!r} in the store")
        known = _graph_nodes(con, design_id)
        unknown = [n for n in node_list if known is not None and n not in known]
        if unknown:
            raise MissedDefectError(f"design {design_id!r} has no node {unknown[0]!r}")
        step = one(con.execute("SELECT nextval('curation_steps')"))[0]
        return one(con.execute(
            "INSERT INTO missed_defects (design_id, curator, nodes, node_list, rule, description, marked_at, step)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
            [design_id, curator, ",".join(node_list), node_list, rule, description or None,
             utcnow(), step]))[0]


def retract_missed_defect(db: DB, defect_id: int, curator: str) -> None:
    """Withdraw a missed defect (kept, marked retracted; no longer counted): a step undo can take back."""
    with transaction(db) as con:
        row = con.execute("SELECT curator, retracted_at FROM missed_defects WHERE id = ?", [defect_id]).fetchone()
        if row is None:
            raise MissedDefectError(f"no missed defect {defect_id}")
        if row[0] != curator:
            raise MissedDefectError(f"missed defect {defect_id} is {row[0]}'s, not {curator}'s")
        if row[1] is None:
            step = one(con.execute("SELECT nextval('curation_steps')"))[0]
            con.execute("UPDATE missed_defects SET retracted_at = ?, retracted_step = ? WHERE id = ?",
                        [utcnow(), step, defect_id])


def list_missed_defects(db: DB, design_id: str | None = None) -> list[dict]:
    sql = "SELECT * FROM missed_defects WHERE retracted_at IS NULL"
    params = []
    if design_id is not None:
        sql += " AND design_id = ?"
        params.append(design_id)
    with reading(db) as con:
        cur = con.execute(sql + " ORDER BY id", params)
        names = [d[0] for d in cur.description]
        rows = [dict(zip(names, r)) for r in cur.fetchall()]
    for r in rows:
        r["node_list"] = list(r["node_list"] or [])
    return rows

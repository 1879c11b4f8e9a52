"""Missed defects: what a curator saw on a design that no rule reported (for recall per rule)."""

from __future__ import annotations

from .connection import DB, reading, transaction, utcnow


def record_missed_defect(db: DB, design_id: str, curator: str, nodes, rule: str | None = None,
                         description: str | None = None) -> int:
    """Mark a defect no finding reported; returns its id. `nodes`: a list of node ids or "a,b".

    Name the rule that should have fired, or describe it (or both).
    """
    if isinstance(nodes, str):
        node_list = [n.strip() for n in nodes.split(",") if n.strip()]
    else:
        node_list = [str(n) for n in (nodes or [])]
    if not curator:
        raise ValueError("a missed defect needs a curator name")
    if not rule and not description:
        raise ValueError("a missed defect needs the rule that should have fired or a description")
    with transaction(db) as con:
        if not con.execute("SELECT 1 FROM designs WHERE id = ?", [design_id]).fetchone():
            raise ValueError(f"no design {design_id!r} in the store")
        return con.execute(
            "INSERT INTO missed_defects (design_id, curator, nodes, node_list, rule, description, marked_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id",
            [design_id, curator, ",".join(node_list), node_list, rule or None, description or None,
             utcnow()]).fetchone()[0]


def retract_missed_defect(db: DB, defect_id: int, curator: str) -> None:
    """Withdraw a missed defect (kept, marked retracted; no longer counted)."""
    with transaction(db) as con:
        row = con.execute("SELECT curator, retracted_at FROM missed_defects WHERE id = ?", [defect_id]).fetchone()
        if row is None:
            raise ValueError(f"no missed defect {defect_id}")
        if row[0] != curator:
            raise ValueError(f"missed defect {defect_id} is {row[0]}'s, not {curator}'s")
        if row[1] is None:
            con.execute("UPDATE missed_defects SET retracted_at = ? WHERE id = ?", [utcnow(), defect_id])


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

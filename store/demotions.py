"""The project's demoted rules (migration 0011): a rule curators judged noisy keeps firing, its findings
are shown with the reason, and the queue's "to judge" counts skip them (store.app_queries, judged_cte)."""

from __future__ import annotations

from .connection import DB, one, reading, transaction, utcnow

REASON_LIMIT = 512
DEMOTED_RULES_SQL = "SELECT rule FROM rule_demotions"  # what the queue's counts leave out


def demotions(db: DB) -> dict[str, dict]:
    """{rule: {"reason", "by", "at"}} of every demoted rule."""
    with reading(db) as con:
        rows = con.execute("SELECT rule, reason, demoted_by, demoted_at FROM rule_demotions ORDER BY rule").fetchall()
    return {r: {"reason": why, "by": by, "at": str(at)} for r, why, by, at in rows}


def demote_rule(db: DB, rule: str, reason: str, by: str) -> None:
    """Demote `rule` with `reason` (replacing an earlier reason). ValueError for an empty reason."""
    reason = " ".join(str(reason).split())
    if not reason:
        raise ValueError("a demotion needs a reason (it is shown on the rule's findings)")
    if len(reason) > REASON_LIMIT:
        raise ValueError(f"the reason is {len(reason):,} characters long (at most {REASON_LIMIT})")
    with transaction(db) as con:
        con.execute("DELETE FROM rule_demotions WHERE rule = ?", [rule])
        con.execute("INSERT INTO rule_demotions VALUES (?, ?, ?, ?)", [rule, reason, by, utcnow()])


def restore_rule(db: DB, rule: str) -> bool:
    """Take back a demotion; False when the rule was not demoted."""
    with transaction(db) as con:
        had = one(con.execute("SELECT count(*) FROM rule_demotions WHERE rule = ?", [rule]))[0]
        con.execute("DELETE FROM rule_demotions WHERE rule = ?", [rule])
    return bool(had)

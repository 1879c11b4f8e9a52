"""The curator app's reads and writes: the one narrow door between the UI and the store.

The app (tui/) calls only `AppStore` methods, always from worker threads.
Each method is one unit of work: it opens the store, does its queries on
that one connection and closes it, so `archcurator import` or `report` can
use the file between two calls (see store/connection.py).

The queue is virtualised in two steps, so scrolling 100,000 designs never
sorts them twice:

- `queue_ids(filters, sort)`: the ordered ids of the whole filtered queue
  (one query; ~100k short strings is a few MB). The row count, a jump to an
  id and "next design" are then answered from memory;
- `rows_for(ids)`: the list columns and judged state of one window of ids,
  fetched as the list scrolls.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .connection import DB, connect, reading, transaction
from .designs import LIST_COLUMNS, filters_sql, get_design, judged_cte, order_sql

JUDGED_SORTS = {"judged", "n_judged"}


def _sort_keys(sort) -> list[str]:
    if sort is None:
        return []
    items = sort if isinstance(sort, (list, tuple)) else [sort]
    out = []
    for it in items:
        col = it[0] if isinstance(it, (list, tuple)) else str(it)
        out.append(col.lstrip("-"))
    return out


def _clean_filters(filters: dict | None) -> dict:
    return {k: v for k, v in (filters or {}).items() if v not in (None, "", [], ())}


# ---- the queue ------------------------------------------------------------------

def queue_ids(db: DB, filters: dict | None = None, sort=None, curator: str | None = None) -> list[str]:
    """Every design id matching `filters`, in `sort` order (see store.designs.list_designs).

    The judged state (filter `judged`, sorts `judged` / `n_judged`) is
    `curator`'s own when given."""
    f = _clean_filters(filters)
    f.pop("curator", None)
    needs_judged = "judged" in f or bool(JUDGED_SORTS & set(_sort_keys(sort)))
    where, params = filters_sql(f)
    order = order_sql(sort)
    if needs_judged:
        cte, p1 = judged_cte(curator)
        sql = f"WITH {cte} SELECT id FROM base{where}{order}"
        params = p1 + params
    else:
        sql = (f"WITH base AS (SELECT d.*, d.n_block + d.n_warn AS n_findings FROM designs d)"
               f" SELECT id FROM base{where}{order}")
    with reading(db) as con:
        return [r[0] for r in con.execute(sql, params).fetchall()]


_ROWS_SQL = """
WITH ids AS (SELECT unnest(?::VARCHAR[]) AS id),
cj AS (SELECT design_id, finding_key FROM current_judgments
       WHERE design_id IN (SELECT id FROM ids) {curator}),
jf AS (SELECT f.design_id, count(DISTINCT f.key) AS n_judged
       FROM findings f JOIN cj ON cj.design_id = f.design_id AND cj.finding_key = f.key
       WHERE NOT f.stale GROUP BY f.design_id),
clean AS (SELECT DISTINCT design_id FROM cj WHERE finding_key IS NULL),
md AS (SELECT design_id, count(*) AS n_missed FROM missed_defects
       WHERE retracted_at IS NULL AND design_id IN (SELECT id FROM ids) GROUP BY design_id)
SELECT {cols}, d.n_block + d.n_warn AS n_findings, coalesce(jf.n_judged, 0) AS n_judged,
       CASE WHEN d.error IS NOT NULL THEN NULL
            WHEN d.n_block + d.n_warn = 0 THEN
                 CASE WHEN clean.design_id IS NULL THEN 'unjudged' ELSE 'judged' END
            WHEN coalesce(jf.n_judged, 0) = 0 THEN 'unjudged'
            WHEN jf.n_judged < d.n_block + d.n_warn THEN 'partly'
            ELSE 'judged' END AS judged,
       coalesce(md.n_missed, 0) AS n_missed
FROM designs d
JOIN ids ON ids.id = d.id
LEFT JOIN jf ON jf.design_id = d.id
LEFT JOIN clean ON clean.design_id = d.id
LEFT JOIN md ON md.design_id = d.id
"""


def rows_for(db: DB, ids: Iterable[str], curator: str | None = None) -> dict[str, dict]:
    """{id: row} for these designs: the list columns, n_findings, n_judged, judged, n_missed."""
    ids = list(ids)
    if not ids:
        return {}
    sql = _ROWS_SQL.format(cols=", ".join("d." + c for c in LIST_COLUMNS),
                           curator="AND curator = ?" if curator else "")
    params: list[Any] = [ids] + ([curator] if curator else [])
    with reading(db) as con:
        cur = con.execute(sql, params)
        names = [d[0] for d in cur.description]
        return {row[0]: dict(zip(names, row)) for row in cur.fetchall()}


def first_unfinished(db: DB, ids: list[str], curator: str | None = None, chunk: int = 400) -> int | None:
    """Index in `ids` of the first design `curator` has not finished judging (ungenerated ones skipped)."""
    with reading(db) as con:
        for start in range(0, len(ids), chunk):
            part = ids[start:start + chunk]
            rows = rows_for(con, part, curator)
            for k, did in enumerate(part):
                r = rows.get(did)
                if r is not None and r["judged"] in ("unjudged", "partly"):
                    return start + k
    return None


def facets(db: DB) -> dict:
    """What the queue can be filtered by, with counts: authors, models, task sets, runs, verdicts, rules."""
    out: dict[str, list] = {}
    with reading(db) as con:
        for col in ("author", "model", "task_set", "run"):
            out[col] = [tuple(r) for r in con.execute(
                f"SELECT {col}, count(*) FROM designs WHERE archived_at IS NULL"
                f" GROUP BY {col} ORDER BY 2 DESC, 1 NULLS LAST").fetchall()]
        out["verdict"] = [tuple(r) for r in con.execute(
            "SELECT coalesce(verdict, 'ungenerated'), count(*) FROM designs WHERE archived_at IS NULL"
            " GROUP BY 1 ORDER BY 2 DESC").fetchall()]
        out["rule"] = [tuple(r) for r in con.execute(
            "SELECT rule, count(DISTINCT design_id) FROM findings WHERE NOT stale"
            " AND design_id IN (SELECT id FROM designs WHERE archived_at IS NULL)"
            " GROUP BY rule ORDER BY 2 DESC, 1").fetchall()]
    return out


def progress(db: DB, filters: dict | None = None, curator: str | None = None) -> dict:
    """Judging progress over the filtered queue, by `curator` (anyone when None):
    designs, designs judged, live findings, findings judged."""
    f = _clean_filters(filters)
    f.pop("curator", None)
    cte, p1 = judged_cte(curator)
    where, p2 = filters_sql(f)
    with reading(db) as con:
        row = con.execute(
            f"WITH {cte} SELECT count(*) FILTER (WHERE error IS NULL),"
            f" count(*) FILTER (WHERE judged = 'judged'),"
            f" coalesce(sum(n_findings), 0), coalesce(sum(n_judged), 0) FROM base{where}",
            p1 + p2).fetchone()
    return {"designs": int(row[0]), "designs_judged": int(row[1]),
            "findings": int(row[2]), "findings_judged": int(row[3])}


# ---- one design ----------------------------------------------------------------------

def design_bundle(db: DB, design_id: str, curator: str | None = None) -> dict | None:
    """Everything the design screen shows: `store.designs.get_design` plus
    `children` (ids derived from it) and `parent_stored` (whether its parent is here)."""
    with reading(db) as con:
        d = get_design(con, design_id, curator)
        if d is None:
            return None
        d["children"] = [r[0] for r in con.execute(
            "SELECT id FROM designs WHERE parent = ? ORDER BY id LIMIT 50", [design_id]).fetchall()]
        d["parent_stored"] = bool(d.get("parent")) and con.execute(
            "SELECT 1 FROM designs WHERE id = ?", [d["parent"]]).fetchone() is not None
    return d


def design_graph(db: DB, design_id: str) -> dict | None:
    """Just a stored design's graph (parsed), or None."""
    with reading(db) as con:
        row = con.execute("SELECT graph FROM designs WHERE id = ?", [design_id]).fetchone()
    return None if row is None or row[0] is None else json.loads(row[0])


def architectures_dir() -> Path:
    from archcurator.core.assets import ASSETS

    return ASSETS / "architectures"


def reference_graph(db: DB, name: str) -> tuple[dict | None, str]:
    """The graph of reference architecture `name` and where it came from:
    `assets/architectures/NAME.json` (SPEC §3), else a stored design with that id."""
    if name and os.sep not in name and "/" not in name:
        path = architectures_dir() / f"{name}.json"
        if path.is_file():
            return json.loads(path.read_text(encoding="utf-8")), str(path)
    graph = design_graph(db, name)
    return graph, (f"store:{name}" if graph is not None else "")


# ---- the adapter the app holds ------------------------------------------------------------

class AppStore:
    """The app's view of one store file, for one curator. Every method is one unit of work."""

    def __init__(self, db: str | os.PathLike, curator: str):
        self.db = db
        self.curator = curator

    # reads
    def queue_ids(self, filters: dict | None, sort) -> list[str]:
        return queue_ids(self.db, filters, sort, self.curator)

    def queue_start(self, filters: dict | None, sort, around: str | None = None,
                    window: int = 120) -> tuple[list[str], dict[str, dict]]:
        """The queue's ids and the rows of its first window (or the window around `around`), in one unit
        of work: what the list needs to draw its first screen."""
        with connect(self.db) as con:
            ids = queue_ids(con, filters, sort, self.curator)
            start = 0
            if around is not None:
                try:
                    start = max(ids.index(around) - window // 2, 0)
                except ValueError:
                    start = 0
            rows = rows_for(con, ids[start:start + window], self.curator)
        return ids, rows

    def rows_for(self, ids: list[str]) -> dict[str, dict]:
        return rows_for(self.db, ids, self.curator)

    def first_unfinished(self, ids: list[str]) -> int | None:
        return first_unfinished(self.db, ids, self.curator)

    def facets(self) -> dict:
        return facets(self.db)

    def progress(self, filters: dict | None) -> dict:
        return progress(self.db, filters, self.curator)

    def design(self, design_id: str) -> dict | None:
        return design_bundle(self.db, design_id, self.curator)

    def designs(self, ids: list[str]) -> dict[str, dict]:
        """Several designs in one unit of work (prefetching neighbours)."""
        out = {}
        with connect(self.db) as con:
            for did in ids:
                d = design_bundle(con, did, self.curator)
                if d is not None:
                    out[did] = d
        return out

    def graph(self, design_id: str) -> dict | None:
        return design_graph(self.db, design_id)

    def reference(self, name: str) -> tuple[dict | None, str]:
        return reference_graph(self.db, name)

    def refusals(self) -> dict:
        from .reports import refusal_report

        return refusal_report(self.db)

    def rules(self, curator: str | None = None) -> dict:
        from .reports import rules_report

        return rules_report(self.db, curator=curator)

    # writes (each committed before it returns)
    def judge(self, design_id: str, finding_key: str | None, verdict: str, note: str | None = None) -> int:
        from .judgments import record_judgment

        return record_judgment(self.db, design_id, finding_key, self.curator, verdict, note or None)

    def undo(self, event_id: int) -> int:
        from .judgments import undo_judgment

        return undo_judgment(self.db, event_id, self.curator)

    def mark_missed(self, design_id: str, nodes, rule: str | None, description: str | None) -> int:
        from .missed import record_missed_defect

        return record_missed_defect(self.db, design_id, self.curator, nodes, rule or None, description or None)

    def retract_missed(self, defect_id: int) -> None:
        from .missed import retract_missed_defect

        retract_missed_defect(self.db, defect_id, self.curator)

    # the knowledge base
    def kb_view(self, status: str = "live") -> dict:
        return kb_view(self.db, status)

    def kb_evidence(self, pid: int) -> list[dict]:
        from . import kb as K

        return K.evidence(self.db, pid)

    def kb_suggestions(self):
        from . import kb as K

        return K.suggestions(self.db)

    def kb_op(self, op: str, *args, **kwargs):
        return kb_op(self.db, op, *args, actor=self.curator, **kwargs)

    def touch(self) -> None:
        """Open the store once (creating and migrating it): a cheap check that it can be used."""
        with transaction(self.db):
            pass


# ---- the knowledge base (store/kb.py), for the app's KB screen --------------------------------------

KB_OPS = ("add", "edit", "merge", "narrow", "retire", "pin", "unpin", "accept", "mark_distinct", "undo",
          "export_pack", "write_pack", "seed_kb")


def kb_view(db: DB, status: str = "live") -> dict:
    """Propositions (with evidence counts), the current 20-cap pack and the audit log's head."""
    from . import kb as K

    with connect(db) as con:
        return {"props": K.list_propositions(con, status), "pack": K.current_pack(con),
                "pack_status": K.pack_status(con), "audit": K.audit_log(con, 30),
                "questions": K.question_summary(con)}


def kb_op(db: DB, op: str, *args, actor: str | None = None, **kwargs):
    """One curator operation of store.kb (KBError, one line, when refused)."""
    from . import kb as K

    if op not in KB_OPS:
        raise ValueError(f"not a knowledge-base operation: {op!r}")
    fn = getattr(K, op)
    if op == "seed_kb":
        return fn(db)
    return fn(db, *args, actor=actor, **kwargs)

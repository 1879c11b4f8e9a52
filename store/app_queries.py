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
from typing import TYPE_CHECKING, Any, TypeVar, cast

from .connection import DB, connect, one, reading, transaction
from .designs import JUDGED_CASE, LIST_COLUMNS, filters_sql, get_design, judged_cte, order_sql
from .kb_ops import KbOp
from .records import (
    BulkPreview,
    BulkResult,
    DesignBundle,
    Disagreement,
    KbView,
    Progress,
    QueueRow,
    QueueState,
    RunTiming,
    SeenResult,
    Step,
)

if TYPE_CHECKING:
    from .kb import Suggestions

R = TypeVar("R")

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

def _where(f: dict, curator: str | None) -> tuple[str, list]:
    """`filters_sql` of the queue's filters, with the app's own `flagged` (designs with findings `curator`
    flagged for later), which only the app's queries know."""
    f = dict(f)
    flagged = f.pop("flagged", None)
    where, params = filters_sql(f)
    if flagged:
        where += (" AND " if where else " WHERE ") + "id IN (SELECT design_id FROM current_flags" + \
            (" WHERE curator = ?)" if curator else ")")
        params = params + ([curator] if curator else [])
    return where, params


def queue_ids(db: DB, filters: dict | None = None, sort=None, curator: str | None = None) -> list[str]:
    """Every design id matching `filters`, in `sort` order (see store.designs.list_designs).

    The judged state (filter `judged`, sorts `judged` / `n_judged`) is
    `curator`'s own when given."""
    f = _clean_filters(filters)
    f.pop("curator", None)
    needs_judged = "judged" in f or bool(JUDGED_SORTS & set(_sort_keys(sort)))
    where, params = _where(f, curator)
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
       WHERE NOT f.stale AND f.rule NOT IN (SELECT rule FROM rule_demotions) GROUP BY f.design_id),
dem AS (SELECT design_id, count(*) AS n FROM findings
        WHERE design_id IN (SELECT id FROM ids) AND NOT stale AND rule IN (SELECT rule FROM rule_demotions)
        GROUP BY design_id),
clean AS (SELECT DISTINCT design_id FROM cj WHERE finding_key IS NULL),
md AS (SELECT design_id, count(*) AS n_missed FROM missed_defects
       WHERE retracted_at IS NULL AND design_id IN (SELECT id FROM ids) GROUP BY design_id),
fl AS (SELECT design_id, count(*) AS n_flagged FROM current_flags
       WHERE design_id IN (SELECT id FROM ids) {curator} GROUP BY design_id),
br AS (SELECT design_id, min(rule) AS block_rule, count(DISTINCT rule) AS n_block_rules FROM findings
       WHERE design_id IN (SELECT id FROM ids) AND NOT stale AND severity = 'block' GROUP BY design_id)
SELECT {cols}, d.n_block + d.n_warn - coalesce(dem.n, 0) AS n_findings, coalesce(jf.n_judged, 0) AS n_judged,
       {judged} AS judged,
       coalesce(md.n_missed, 0) AS n_missed, coalesce(fl.n_flagged, 0) AS n_flagged,
       br.block_rule, coalesce(br.n_block_rules, 0) AS n_block_rules
FROM designs d
JOIN ids ON ids.id = d.id
LEFT JOIN jf ON jf.design_id = d.id
LEFT JOIN dem ON dem.design_id = d.id
LEFT JOIN clean ON clean.design_id = d.id
LEFT JOIN md ON md.design_id = d.id
LEFT JOIN fl ON fl.design_id = d.id
LEFT JOIN br ON br.design_id = d.id
"""


def rows_for(db: DB, ids: Iterable[str], curator: str | None = None) -> dict[str, QueueRow]:
    """{id: row} for these designs: the list columns, n_findings, n_judged, judged, n_missed, n_flagged
    (findings flagged for later by `curator`), block_rule (the first blocking rule) and n_block_rules."""
    ids = list(ids)
    if not ids:
        return {}
    sql = _ROWS_SQL.format(cols=", ".join("d." + c for c in LIST_COLUMNS), judged=JUDGED_CASE,
                           curator="AND curator = ?" if curator else "")
    params: list[Any] = [ids] + ([curator, curator] if curator else [])
    with reading(db) as con:
        cur = con.execute(sql, params)
        names = [d[0] for d in cur.description]
        return {row[0]: cast(QueueRow, dict(zip(names, row))) for row in cur.fetchall()}


def first_unfinished(db: DB, ids: list[str], curator: str | None = None, chunk: int = 400) -> int | None:
    """Index in `ids` of the first design `curator` has not finished judging (ungenerated ones skipped)."""
    with reading(db) as con:
        for start in range(0, len(ids), chunk):
            part = ids[start:start + chunk]
            rows = rows_for(con, part, curator)
            for k, did in enumerate(part):
                r = rows.get(did)
                if r is not None and r["judged"] in ("unjudged", "partly") and not _all_left_flagged(r):
                    return start + k
    return None


def _all_left_flagged(row: QueueRow) -> bool:
    """Every finding the curator has not judged is flagged for later: "next to judge" passes it by."""
    flagged = row.get("n_flagged") or 0
    return flagged > 0 and (row.get("n_judged") or 0) + flagged >= (row.get("n_findings") or 0)


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


def progress(db: DB, filters: dict | None = None, curator: str | None = None) -> Progress:
    """Judging progress over the filtered queue, by `curator` (anyone when None):
    designs, designs judged, live findings, findings judged."""
    f = _clean_filters(filters)
    f.pop("curator", None)
    cte, p1 = judged_cte(curator)
    where, p2 = _where(f, curator)
    with reading(db) as con:
        row = one(con.execute(
            f"WITH {cte} SELECT count(*) FILTER (WHERE error IS NULL),"
            f" count(*) FILTER (WHERE judged = 'judged'),"
            f" coalesce(sum(n_findings), 0), coalesce(sum(n_judged), 0) FROM base{where}",
            p1 + p2))
    return {"designs": int(row[0]), "designs_judged": int(row[1]),
            "findings": int(row[2]), "findings_judged": int(row[3])}


# ---- one design ----------------------------------------------------------------------

def design_bundle(db: DB, design_id: str, curator: str | None = None) -> DesignBundle | None:
    """Everything the design screen shows: `store.designs.get_design` plus
    `children` (ids derived from it), `parent_stored` (whether its parent is here) and `flags`
    ({finding key (None: the design): note} flagged for later by `curator`)."""
    with reading(db) as con:
        found = get_design(con, design_id, curator)
        if found is None:
            return None
        d = cast(DesignBundle, found)
        d["flags"] = {k: n for k, n in con.execute(
            "SELECT finding_key, note FROM current_flags WHERE design_id = ? AND curator = ?",
            [design_id, curator or ""]).fetchall()}
        d["children"] = [r[0] for r in con.execute(
            "SELECT id FROM designs WHERE parent = ? ORDER BY id LIMIT 50", [design_id]).fetchall()]
        d["parent_stored"] = bool(d.get("parent")) and con.execute(
            "SELECT 1 FROM designs WHERE id = ?", [d["parent"]]).fetchone() is not None
    return d


def keep_repair(db: DB, design_id: str, graph: dict, edits: list) -> str:
    """See `AppStore.keep_repair`. The new id is `ID.repair`, then `ID.repair-2`, … for later ones."""
    from .importers import import_records

    with reading(db) as con:
        row = con.execute("SELECT author, model, task_set, run FROM designs WHERE id = ?", [design_id]).fetchone()
        if row is None:
            raise LookupError(f"design {design_id!r} is not in the store")
        taken = {r[0]: r[1] for r in con.execute(
            "SELECT id, parent FROM designs WHERE id LIKE ? ESCAPE '\\'",
            [design_id.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + ".repair%"]).fetchall()}
    graph = json.loads(json.dumps(graph))
    meta = dict(graph.get("meta") or {})
    meta["repair"] = {"of": design_id, "edits": edits}
    graph["meta"] = meta
    author, model, task_set, run = row
    base = f"{design_id}.repair"
    k = 1
    new_id = base
    while new_id in taken:
        k += 1
        new_id = f"{base}-{k}"
    record = {"id": new_id, "author": author, "model": model, "task_set": task_set, "run": run,
              "parent": design_id, "graph": graph}
    result = import_records(db, [record], label=f"repair of {design_id}")
    if result.rejected:
        raise ValueError(f"the repair of {design_id} was not stored: {result.rejected[0]}")
    return new_id


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


# ---- bulk verdicts, disagreements --------------------------------------------------------------

def bulk_targets(db: DB, rule: str, curator: str, *, design_id: str | None = None,
                 filters: dict | None = None) -> BulkPreview:
    """The live findings of `rule` on one design (`design_id`) or on every design of the filtered queue:
    {"targets": [(design_id, key)] not yet judged by `curator`, "findings": all of them, "designs": designs
    the targets are on, "judged": those already judged (left as they are)}."""
    with reading(db) as con:
        if design_id is not None:
            ids = [design_id]
        else:
            ids = queue_ids(con, filters, None, curator)
        rows = con.execute("""
            SELECT f.design_id, f.key, cj.verdict IS NOT NULL AS judged
            FROM findings f
            JOIN (SELECT unnest(?::VARCHAR[]) AS id) q ON q.id = f.design_id
            LEFT JOIN current_judgments cj ON cj.design_id = f.design_id AND cj.finding_key = f.key
                 AND cj.curator = ?
            WHERE f.rule = ? AND NOT f.stale ORDER BY f.design_id, f.key""", [ids, curator, rule]).fetchall()
    targets = [(d, k) for d, k, judged in rows if not judged]
    return {"targets": targets, "findings": len(rows), "judged": len(rows) - len(targets),
            "designs": len({d for d, _ in targets})}


def disagreements(db: DB, limit: int = 2000) -> list[Disagreement]:
    """Findings whose current verdicts differ between curators, with every curator's verdict and note and
    the adjudicated final verdict if any: design_id, key, rule, severity, message, votes {curator: {verdict,
    note}}, final, adjudicator."""
    with reading(db) as con:
        rows = con.execute(f"""
            WITH split AS (
                SELECT design_id, finding_key FROM current_judgments WHERE finding_key IS NOT NULL
                GROUP BY design_id, finding_key HAVING count(DISTINCT verdict) > 1
                ORDER BY design_id, finding_key LIMIT {int(limit)})
            SELECT s.design_id, s.finding_key, f.rule, f.severity, f.message, cj.curator, cj.verdict, cj.note,
                   ca.verdict, ca.adjudicator
            FROM split s
            JOIN current_judgments cj ON cj.design_id = s.design_id AND cj.finding_key = s.finding_key
            LEFT JOIN findings f ON f.design_id = s.design_id AND f.key = s.finding_key
            LEFT JOIN current_adjudications ca ON ca.design_id = s.design_id AND ca.finding_key = s.finding_key
            ORDER BY s.design_id, s.finding_key, cj.curator""").fetchall()
    out: dict[tuple[str, str], Disagreement] = {}
    for did, key, rule, severity, message, who, verdict, note, final, adjudicator in rows:
        item = out.setdefault((did, key), {"design_id": did, "key": key, "rule": rule, "severity": severity,
                                           "message": message, "votes": {}, "final": final,
                                           "adjudicator": adjudicator})
        item["votes"][who] = {"verdict": verdict, "note": note}
    return list(out.values())


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
                    window: int = 120) -> tuple[list[str], dict[str, QueueRow]]:
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

    def rows_for(self, ids: list[str]) -> dict[str, QueueRow]:
        return rows_for(self.db, ids, self.curator)

    def outside_token(self) -> tuple[int, int, int]:
        """What of the queue only another process changes: the designs stored and which of them are
        archived (`archcurator import`, `archive`, `archive --restore`). The app's own verdicts, notes and
        runs leave it as it was, so comparing it tells a change from outside from the app's own writes.

        So another app instance's curation writes (a verdict, a note, a flag, an undo, which is a judgment row
        marking the one it takes back, an adjudication, a KB operation) change the file (the app's stat sees
        it and reads this token) but not the token: they show in this app only after F5. Noticing them needs
        the token to count those rows while telling this app's own from the others' (a row count the app
        keeps of what it wrote, or a writer id on each row), which the tables do not record."""
        with connect(self.db) as con:
            return tuple(one(con.execute(
                "SELECT count(*), count(archived_at),"
                " coalesce(sum(hash(id)) FILTER (WHERE archived_at IS NOT NULL), 0) FROM designs")))

    def first_unfinished(self, ids: list[str]) -> int | None:
        return first_unfinished(self.db, ids, self.curator)

    def facets(self) -> dict[str, list[tuple[Any, int]]]:
        return facets(self.db)

    def progress(self, filters: dict | None) -> Progress:
        return progress(self.db, filters, self.curator)

    def design(self, design_id: str) -> DesignBundle | None:
        return design_bundle(self.db, design_id, self.curator)

    def designs(self, ids: list[str]) -> dict[str, DesignBundle]:
        """Several designs in one unit of work (prefetching neighbours)."""
        out: dict[str, DesignBundle] = {}
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

    def judge_seen(self, design_id: str, finding_key: str | None, verdict: str, note: str | None,
                   seen: dict) -> SeenResult:
        """A verdict, and which other curators changed theirs on the finding since it was shown."""
        from .judgments import record_judgment_seen

        return record_judgment_seen(self.db, design_id, finding_key, self.curator, verdict, note or None, seen)

    def note(self, design_id: str, finding_key: str | None, note: str | None) -> int:
        from .judgments import record_note

        return record_note(self.db, design_id, finding_key, self.curator, note)

    def flag(self, design_id: str, finding_key: str | None, flagged: bool = True) -> int:
        from .judgments import set_flag

        return set_flag(self.db, design_id, finding_key, self.curator, flagged)

    def bulk_preview(self, rule: str, design_id: str | None, filters: dict | None) -> BulkPreview:
        return bulk_targets(self.db, rule, self.curator, design_id=design_id, filters=filters)

    def judge_bulk(self, rule: str, verdict: str, design_id: str | None, filters: dict | None) -> BulkResult:
        """Judge the findings the preview counted (read again, in the same way) as one step."""
        from .judgments import record_bulk

        found = bulk_targets(self.db, rule, self.curator, design_id=design_id, filters=filters)
        if not found["targets"]:
            return {"step": None, "n": 0, "designs": []}
        return record_bulk(self.db, found["targets"], self.curator, verdict)

    def undo_last(self) -> dict[str, Any] | None:
        """The curator's newest step of any kind taken back: a curation step or a KB operation
        (store/undo.py, the one undo model; `room` says which)."""
        from .undo import undo_newest

        return undo_newest(self.db, self.curator)

    def recent(self, limit: int = 12) -> list[Step]:
        from .judgments import recent_steps

        return recent_steps(self.db, self.curator, limit)

    def mark_missed(self, design_id: str, nodes, rule: str | None, description: str | None) -> int:
        from .missed import record_missed_defect

        return record_missed_defect(self.db, design_id, self.curator, nodes, rule or None, description or None)

    def retract_missed(self, defect_id: int) -> None:
        from .missed import retract_missed_defect

        retract_missed_defect(self.db, defect_id, self.curator)

    def keep_repair(self, design_id: str, graph: dict, edits: list) -> str:
        """Store a repaired design as a new version of `design_id`: a design of its own (same author,
        model, task set and run; parent = the original; the edits in its meta), verified on import.
        The original and every judgment on it stay as they are. Returns the new design's id."""
        return keep_repair(self.db, design_id, graph, edits)

    # two curators
    def disagreements(self) -> list[Disagreement]:
        return disagreements(self.db)

    def adjudicate(self, design_id: str, finding_key: str, verdict: str, note: str | None = None) -> int:
        from .judgments import adjudicate

        return adjudicate(self.db, design_id, finding_key, self.curator, verdict, note)

    def curators(self) -> list[str]:
        from .judgments import curators

        return curators(self.db)

    def agreement(self, a: str, b: str) -> dict:
        from .reports import agreement_report

        return agreement_report(self.db, a, b)

    # runs
    def runs(self, limit: int = 300) -> list[dict]:
        """Runs of designs, newest first (what the runs screen lists after a restart)."""
        from .runs import list_design_runs

        return list_design_runs(self.db, limit=limit)

    def queue_state(self) -> QueueState | None:
        """The curator's queue filters and sort as last left ({"filters", "sort"}), or None."""
        import json

        from .connection import reading

        with reading(self.db) as con:
            row = con.execute("SELECT value FROM store_meta WHERE key = ?", [f"queue:{self.curator}"]).fetchone()
        try:
            state = json.loads(row[0]) if row else None
        except ValueError:
            return None
        return cast(QueueState, state) if isinstance(state, dict) else None

    def save_queue_state(self, filters: dict, sort: str) -> None:
        import json

        from .connection import transaction

        with transaction(self.db) as con:
            con.execute("INSERT OR REPLACE INTO store_meta VALUES (?, ?)",
                        [f"queue:{self.curator}", json.dumps({"filters": filters, "sort": sort}, default=str)])

    def run_timings(self, limit: int = 200) -> list[RunTiming]:
        """The runs that finished here (status ok, with a time), newest first, with their design's FLOPs
        per sample and their spec (batch, steps): what run estimates are calibrated on."""
        import json

        from .connection import reading

        with reading(self.db) as con:
            rows = con.execute(
                "SELECT r.kind, r.device, r.seconds, r.spec, d.flops FROM runs r JOIN designs d ON d.id = r.design_id"
                " WHERE r.status = 'ok' AND r.seconds > 0 AND d.flops > 0 ORDER BY r.id DESC LIMIT ?",
                [limit]).fetchall()
        out: list[RunTiming] = []
        for kind, device, seconds, spec, flops in rows:
            try:
                spec = json.loads(spec) if isinstance(spec, str) else (spec or {})
            except ValueError:
                spec = {}
            out.append({"kind": kind, "device": device, "seconds": float(seconds), "flops": float(flops),
                        "batch": spec.get("batch_size"), "steps": spec.get("steps")})
        return out

    def design_runs(self, design_id: str) -> list[dict]:
        from .runs import list_runs

        return list_runs(self.db, design_id=design_id, limit=50)

    # the knowledge base
    def kb_view(self, status: str = "live") -> KbView:
        return kb_view(self.db, status)

    def kb_evidence(self, pid: int) -> list[dict]:
        from . import kb as K

        return K.evidence(self.db, pid)

    def kb_judge(self, pid: int) -> dict:
        """Evidence rows a curator can judge, records, uses and conflicts (store.kb_loop.show)."""
        from . import kb_loop

        return kb_loop.show(self.db, pid)

    def kb_suggestions(self) -> Suggestions:
        from . import kb as K

        return K.suggestions(self.db)

    def kb_compare_packs(self) -> dict:
        """The current pack beside the previous version (the latest JSON export, when there is one)
        and the raw miner's top 20, on the same held-out questions (`kb replay --pack`)."""
        from . import kb_loop

        specs = ["current", "previous", "miner"] if kb_loop.previous_pack_text(self.db) else ["current", "miner"]
        return kb_loop.replay_packs(self.db, specs)

    def kb_apply(self, op: KbOp[R]) -> R:
        """One curator operation on the knowledge base (store/kb_ops.py), as this curator; its result
        (store.kb.KBError, one line, when refused)."""
        return op.apply(self.db, self.curator)

    def touch(self) -> None:
        """Open the store once (creating and migrating it): a cheap check that it can be used."""
        with transaction(self.db):
            pass


# ---- the knowledge base (store/kb.py), for the app's KB screen --------------------------------------

def kb_view(db: str | os.PathLike | None, status: str = "live") -> KbView:
    """Propositions (with evidence counts), the current 20-cap pack and the audit log's head."""
    from . import kb as K

    with connect(db) as con:
        return {"props": K.list_propositions(con, status), "pack": K.current_pack(con),
                "pack_status": K.pack_status(con), "audit": K.audit_log(con, 30),
                "questions": K.question_summary(con)}


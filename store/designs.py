"""Designs and their findings: bulk insert, re-verification, the paged list, one design.

A finding is keyed by design + `rule@node,ids`, so re-verifying with a newer
catalogue keeps every judgment attached: a finding that still fires is
updated in place; one that no longer fires is kept and marked stale when a
curator has judged it, and dropped when nobody has.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

import duckdb

from archcurator.core.report import display_key, graph_positions

from .connection import DB, one, reading, transaction, utcnow
from .demotions import DEMOTED_RULES_SQL

DESIGN_COLUMNS = (
    "id", "name", "author", "model", "task_set", "run", "parent", "reference", "source",
    "graph", "content_hash", "verdict", "n_nodes", "n_block", "n_warn", "params", "flops",
    "quoted_cost_usd", "quote_device", "cost_a10g_usd", "cost", "error", "extra",
    "verifier_version", "imported_at", "verified_at",
)
FINDING_COLUMNS = (
    "design_id", "key", "rule", "severity", "nodes", "node_list", "message",
    "verifier_version", "stale", "first_seen", "last_seen",
)
_ARROW_TYPES = {
    "n_nodes": "int32", "n_block": "int32", "n_warn": "int32", "params": "int64",
    "flops": "float64", "quoted_cost_usd": "float64", "cost_a10g_usd": "float64",
    "imported_at": "ts", "verified_at": "ts", "first_seen": "ts", "last_seen": "ts",
    "stale": "bool_", "node_list": "list",
}
_SQL_TYPES = {
    "n_nodes": "INTEGER", "n_block": "INTEGER", "n_warn": "INTEGER", "params": "BIGINT",
    "flops": "DOUBLE", "quoted_cost_usd": "DOUBLE", "cost_a10g_usd": "DOUBLE",
    "imported_at": "TIMESTAMP", "verified_at": "TIMESTAMP", "first_seen": "TIMESTAMP",
    "last_seen": "TIMESTAMP", "stale": "BOOLEAN", "node_list": "VARCHAR[]",
}

_INSERT_EXPR = {
    "graph": "CAST(json(graph) AS VARCHAR)",
    "content_hash": "coalesce(content_hash, sha256(CAST(json(graph) AS VARCHAR)))",
}

# columns the list view returns (never the graph: a list of 100k rows must stay light)
LIST_COLUMNS = (
    "id", "name", "author", "model", "task_set", "run", "parent", "reference", "verdict",
    "n_nodes", "n_block", "n_warn", "params", "flops", "quoted_cost_usd", "cost_a10g_usd",
    "error", "imported_at", "archived_at",
)
SORTABLE = set(LIST_COLUMNS) | {"n_findings", "judged", "n_judged"}
JUDGED_STATES = ("unjudged", "partly", "judged")
#: filter `archived`: None (the default) hides archived designs, "only" shows just them, "all" both
ARCHIVED_STATES = (None, "only", "all")


# ---- bulk writing ---------------------------------------------------------

def _arrow_table(columns: tuple, rows: list[dict]):
    import pyarrow as pa

    def typ(c):
        t = _ARROW_TYPES.get(c)
        if t == "ts":
            return pa.timestamp("us")
        if t == "list":
            return pa.list_(pa.string())
        if t is None:
            return pa.string()
        return getattr(pa, t)()

    return pa.table({c: pa.array([r.get(c) for r in rows], type=typ(c)) for c in columns})


def _stage(con: duckdb.DuckDBPyConnection, name: str, columns: tuple, rows: list[dict]) -> Callable[[], None]:
    """Make `rows` readable as relation `name`; returns the clean-up."""
    try:
        table = _arrow_table(columns, rows)
    except ImportError:
        cols = ", ".join(f'"{c}" {_SQL_TYPES.get(c, "VARCHAR")}' for c in columns)
        con.execute(f"CREATE OR REPLACE TEMP TABLE {name} ({cols})")
        marks = ", ".join("?" for _ in columns)
        con.executemany(f"INSERT INTO {name} VALUES ({marks})", [[r.get(c) for c in columns] for r in rows])
        return _quietly(lambda: con.execute(f"DROP TABLE IF EXISTS {name}"))
    con.register(name, table)
    return _quietly(lambda: con.unregister(name))


def _quietly(clean_up: Callable[[], object]) -> Callable[[], None]:
    """A clean-up that cannot hide the error it runs after: in a transaction a failed write has
    aborted (a read-only or full store), DuckDB refuses it too, and the rollback drops it anyway."""
    def run() -> None:
        try:
            clean_up()
        except duckdb.TransactionException:
            pass
    return run


class Inserted(NamedTuple):
    inserted: list[str]
    skipped: list[str]  # ids already stored, ids repeated in the input, and `present`'s keys
    present: dict[str, str]  # id -> the stored design with the same graph and provenance


def insert_designs(db: DB, designs: list[dict], findings: Iterable[dict] = (),
                   by_content: Iterable[str] = ()) -> Inserted:
    """Store new designs and their findings in one transaction.

    A design whose id is already stored adds nothing (nor do its findings).
    The designs named in `by_content` (those whose id was derived, not given:
    design files and parsed sources) are also already present when a stored
    design, or an earlier one of this call, has the same graph (content hash)
    and the same author, model, task set and run.
    Returns the inserted and skipped ids, in input order.
    """
    seen: set[str] = set()
    unique = []
    dup = []
    for row in designs:
        if row["id"] in seen:
            dup.append(row["id"])
        else:
            seen.add(row["id"])
            unique.append(row)
    findings = list(findings)
    by_content = set(by_content)
    present: dict[str, str] = {}
    with transaction(db) as con:
        if not unique:
            return Inserted([], dup, {})
        drop = _stage(con, "_stage_designs", DESIGN_COLUMNS, unique)
        try:
            stored = {r[0] for r in con.execute(
                "SELECT s.id FROM _stage_designs s JOIN designs d ON d.id = s.id").fetchall()}
            if by_content:
                present = _present_by_content(con, unique, by_content - stored)
                stored |= set(present)
            cols = ", ".join(DESIGN_COLUMNS)
            # the graph is stored minified (DuckDB's json()), content_hash = sha256 of that text
            exprs = ", ".join(_INSERT_EXPR.get(c, c) for c in DESIGN_COLUMNS)
            con.execute(
                f"INSERT INTO designs ({cols}) SELECT {exprs} FROM _stage_designs s"
                " WHERE s.id NOT IN (SELECT id FROM designs) AND s.id NOT IN (SELECT unnest(?::VARCHAR[]))",
                [list(present)])
        finally:
            drop()
        new_ids = [r["id"] for r in unique if r["id"] not in stored]
        if findings:
            keep = set(new_ids)
            rows = [f for f in findings if f["design_id"] in keep]
            if rows:
                drop = _stage(con, "_stage_findings", FINDING_COLUMNS, rows)
                try:
                    cols = ", ".join(FINDING_COLUMNS)
                    con.execute(f"INSERT OR IGNORE INTO findings ({cols}) SELECT {cols} FROM _stage_findings")
                finally:
                    drop()
    skipped = [r["id"] for r in unique if r["id"] in stored] + dup
    return Inserted(new_ids, skipped, present)


def _present_by_content(con: duckdb.DuckDBPyConnection, rows: list[dict], staged: set[str]) -> dict[str, str]:
    """{id: the id it duplicates} for the staged designs in `staged`: same content hash and provenance
    as a stored design, or as one earlier in `rows`."""
    ids = [r["id"] for r in rows if r["id"] in staged and r["graph"] is not None]
    if not ids:
        return {}
    hashes = dict(con.execute(
        "SELECT id, sha256(CAST(json(graph) AS VARCHAR)) FROM _stage_designs"
        " WHERE id IN (SELECT unnest(?::VARCHAR[]))", [ids]).fetchall())
    by_row = {r["id"]: r for r in rows}

    def provenance(r) -> tuple:
        return (r["author"], r.get("model"), r.get("task_set"), r.get("run"))

    stored: dict[tuple, str] = {}
    for did, h, author, model, task_set, run in con.execute(
            "SELECT id, content_hash, author, model, task_set, run FROM designs"
            " WHERE content_hash IN (SELECT unnest(?::VARCHAR[])) ORDER BY id", [sorted(set(hashes.values()))]
    ).fetchall():
        stored.setdefault((h, author, model, task_set, run), did)
    out: dict[str, str] = {}
    for did in ids:
        key = (hashes[did], *provenance(by_row[did]))
        if key in stored:
            out[did] = stored[key]
        else:
            stored[key] = did  # a later one in this input with the same graph duplicates this one
    return out


_HASH_LOCK = threading.Lock()
_HASH_CON: duckdb.DuckDBPyConnection | None = None


def canonical_hash(graph: Any) -> str:
    """The `content_hash` a graph gets in the store: sha256 of its DuckDB-minified JSON text
    (what `designs.graph` holds), computed on a private in-memory DuckDB."""
    global _HASH_CON
    text = graph if isinstance(graph, str) else json.dumps(graph, ensure_ascii=False)
    with _HASH_LOCK:
        if _HASH_CON is None:
            _HASH_CON = duckdb.connect(":memory:")
        return one(_HASH_CON.execute("SELECT sha256(CAST(json(?) AS VARCHAR))", [text]))[0]


def design_id_by_content(db: DB, graph: dict) -> str | None:
    """The id of a stored design with the same content (`canonical_hash`), if any: the first by id."""
    with reading(db) as con:
        row = con.execute("SELECT id FROM designs WHERE content_hash = ? ORDER BY id LIMIT 1",
                          [canonical_hash(graph)]).fetchone()
    return row[0] if row else None


def stored_ids(db: DB, ids: Iterable[str] | None = None) -> set[str]:
    """Which of `ids` are stored (all stored ids when None)."""
    with reading(db) as con:
        if ids is None:
            return {r[0] for r in con.execute("SELECT id FROM designs").fetchall()}
        ids = list(ids)
        if not ids:
            return set()
        return {r[0] for r in con.execute(
            "SELECT id FROM designs WHERE id IN (SELECT unnest(?::VARCHAR[]))", [ids]).fetchall()}


# ---- re-verification ---------------------------------------------------------

def apply_verification(con: duckdb.DuckDBPyConnection, design_id: str, verified, now=None) -> None:
    """Write one design's fresh verification: verdict, cost, findings (upsert + stale)."""
    now = now or utcnow()
    fresh = {f["key"]: f for f in verified.findings}
    old = {r[0]: r[1] for r in con.execute(
        "SELECT key, stale FROM findings WHERE design_id = ?", [design_id]).fetchall()}
    judged = {r[0] for r in con.execute(
        "SELECT DISTINCT finding_key FROM judgments WHERE design_id = ? AND finding_key IS NOT NULL",
        [design_id]).fetchall()}
    for key, f in fresh.items():
        if key in old:
            con.execute(
                "UPDATE findings SET rule = ?, severity = ?, nodes = ?, node_list = ?, message = ?,"
                " verifier_version = ?, stale = false, last_seen = ? WHERE design_id = ? AND key = ?",
                [f["rule"], f["severity"], f["nodes"], f["node_list"], f["message"], verified.version,
                 now, design_id, key])
        else:
            con.execute(
                "INSERT INTO findings (design_id, key, rule, severity, nodes, node_list, message,"
                " verifier_version, stale, first_seen, last_seen) VALUES (?, ?, ?, ?, ?, ?, ?, ?, false, ?, ?)",
                [design_id, key, f["rule"], f["severity"], f["nodes"], f["node_list"], f["message"],
                 verified.version, now, now])
    for key, stale in old.items():
        if key in fresh:
            continue
        if key in judged:
            if not stale:
                con.execute("UPDATE findings SET stale = true WHERE design_id = ? AND key = ?", [design_id, key])
        else:
            con.execute("DELETE FROM findings WHERE design_id = ? AND key = ?", [design_id, key])
    con.execute(
        "UPDATE designs SET verdict = ?, n_block = ?, n_warn = ?, params = ?, flops = ?,"
        " quoted_cost_usd = ?, quote_device = ?, cost_a10g_usd = ?, cost = ?, verifier_version = ?,"
        " verified_at = ? WHERE id = ?",
        [verified.verdict, verified.n_block, verified.n_warn, verified.params, verified.flops,
         verified.quoted_cost_usd, verified.quote_device, verified.cost_a10g_usd, verified.cost_json,
         verified.version, now, design_id])


def verifiable_ids(db: DB, ids: Iterable[str] | None = None) -> list[str]:
    """The ids (all, or those of `ids`) in order to re-verify; ungenerated designs have no graph."""
    with reading(db) as con:
        if ids is None:
            return [r[0] for r in con.execute(
                "SELECT id FROM designs WHERE graph IS NOT NULL ORDER BY id").fetchall()]
    return list(ids)


def stored_graphs(db: DB, ids: list[str]) -> list[tuple[str, str]]:
    """(id, graph JSON text) of the stored designs among `ids` that have a graph."""
    with reading(db) as con:
        return con.execute(
            "SELECT id, graph FROM designs WHERE graph IS NOT NULL AND id IN (SELECT unnest(?::VARCHAR[]))",
            [ids]).fetchall()


def write_verifications(db: DB, results: Iterable[tuple[str, Any]]) -> int:
    """Write fresh verifications [(design id, `core.imports.verified.Verified`)] in one transaction
    (see `apply_verification`); returns how many."""
    n = 0
    with transaction(db) as con:
        now = utcnow()
        for did, verified in results:
            apply_verification(con, did, verified, now)
            n += 1
    return n


# ---- reading -----------------------------------------------------------------

# a design's judged state; the findings of demoted rules (store.demotions) are not there to judge, so a design
# whose every finding is of a demoted rule is judged (needs `d`, `jf`, `dem` and `clean` joined)
JUDGED_CASE = """CASE WHEN d.error IS NOT NULL THEN NULL
                        WHEN d.n_block + d.n_warn = 0 THEN
                             CASE WHEN clean.design_id IS NULL THEN 'unjudged' ELSE 'judged' END
                        WHEN d.n_block + d.n_warn - coalesce(dem.n, 0) <= 0 THEN 'judged'
                        WHEN coalesce(jf.n_judged, 0) = 0 THEN 'unjudged'
                        WHEN jf.n_judged < d.n_block + d.n_warn - coalesce(dem.n, 0) THEN 'partly'
                        ELSE 'judged' END"""


def judged_cte(curator: str | None) -> tuple[str, list]:
    where = "WHERE curator = ?" if curator else ""
    params = [curator] if curator else []
    sql = f"""
        cj AS (SELECT design_id, finding_key FROM current_judgments {where}),
        jf AS (SELECT f.design_id, count(DISTINCT f.key) AS n_judged
               FROM findings f JOIN cj ON cj.design_id = f.design_id AND cj.finding_key = f.key
               WHERE NOT f.stale AND f.rule NOT IN ({DEMOTED_RULES_SQL}) GROUP BY f.design_id),
        dem AS (SELECT design_id, count(*) AS n FROM findings
                WHERE NOT stale AND rule IN ({DEMOTED_RULES_SQL}) GROUP BY design_id),
        clean AS (SELECT DISTINCT design_id FROM cj WHERE finding_key IS NULL),
        base AS (
            SELECT {", ".join("d." + c for c in LIST_COLUMNS)},
                   d.n_block + d.n_warn - coalesce(dem.n, 0) AS n_findings,
                   coalesce(jf.n_judged, 0) AS n_judged,
                   {JUDGED_CASE} AS judged
            FROM designs d
            LEFT JOIN jf ON jf.design_id = d.id
            LEFT JOIN dem ON dem.design_id = d.id
            LEFT JOIN clean ON clean.design_id = d.id
        )"""
    return sql, params


def _as_list(v) -> list:
    if v is None:
        return []
    if isinstance(v, (list, tuple, set, frozenset)):
        return list(v)
    return [v]


def filters_sql(filters: dict | None) -> tuple[str, list]:
    """WHERE clause over `base` for the list filters (see `list_designs`)."""
    filters = dict(filters or {})
    clauses: list[str] = []
    params: list = []
    for col in ("author", "model", "task_set", "run"):
        vals = _as_list(filters.pop(col, None))
        if vals:
            non_null = [v for v in vals if v is not None]
            parts = []
            if non_null:
                parts.append(f"{col} IN ({', '.join('?' for _ in non_null)})")
                params.extend(non_null)
            if len(non_null) < len(vals):
                parts.append(f"{col} IS NULL")
            clauses.append("(" + " OR ".join(parts) + ")")
    verdicts = _as_list(filters.pop("verdict", None))
    if verdicts:
        parts = []
        plain = [v for v in verdicts if v != "ungenerated"]
        if plain:
            parts.append(f"verdict IN ({', '.join('?' for _ in plain)})")
            params.extend(plain)
        if "ungenerated" in verdicts:
            parts.append("error IS NOT NULL")
        clauses.append("(" + " OR ".join(parts) + ")")
    rules = _as_list(filters.pop("rule", None))
    if rules:
        clauses.append(
            f"id IN (SELECT design_id FROM findings WHERE NOT stale AND rule IN ({', '.join('?' for _ in rules)}))")
        params.extend(rules)
    states = _as_list(filters.pop("judged", None))
    if states:
        bad = [s for s in states if s not in JUDGED_STATES]
        if bad:
            raise ValueError(f"judged filter must be one of {', '.join(JUDGED_STATES)}, got {bad[0]!r}")
        clauses.append(f"judged IN ({', '.join('?' for _ in states)})")
        params.extend(states)
    text = filters.pop("text", None)
    if text:
        pat = "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        clauses.append("(id ILIKE ? ESCAPE '\\' OR coalesce(name, '') ILIKE ? ESCAPE '\\')")
        params.extend([pat, pat])
    filters.pop("curator", None)
    archived = filters.pop("archived", None)
    if archived not in ARCHIVED_STATES:
        raise ValueError(f"archived filter must be one of {', '.join(map(str, ARCHIVED_STATES))}, got {archived!r}")
    if archived is None:
        clauses.append("archived_at IS NULL")
    elif archived == "only":
        clauses.append("archived_at IS NOT NULL")
    if filters:
        raise ValueError(f"unknown design filter {next(iter(filters))!r}")
    return (" WHERE " + " AND ".join(clauses)) if clauses else "", params


def order_sql(sort) -> str:
    keys = []
    for item in _as_list(sort):
        if isinstance(item, (tuple, list)):
            col, desc = item[0], bool(item[1])
        else:
            col, desc = str(item), False
            if col.startswith("-"):
                col, desc = col[1:], True
        if col not in SORTABLE:
            raise ValueError(f"cannot sort designs by {col!r}")
        expr = col
        if col == "verdict":
            expr = "CASE verdict WHEN 'block' THEN 3 WHEN 'warn' THEN 2 WHEN 'pass' THEN 1 ELSE 0 END"
        elif col == "judged":
            expr = "CASE judged WHEN 'judged' THEN 3 WHEN 'partly' THEN 2 WHEN 'unjudged' THEN 1 ELSE 0 END"
        keys.append(f"{expr} {'DESC' if desc else 'ASC'} NULLS LAST")
    keys.append("id ASC")
    return " ORDER BY " + ", ".join(keys)


def list_designs(db: DB, filters: dict | None = None, sort=None, offset: int = 0,
                 limit: int | None = 100) -> list[dict]:
    """One page of designs (no graphs), for a virtualised list.

    filters (a key set to None is no filter): `author`, `model`, `task_set`,
    `run` (a value or a list; a list holding None matches null), `verdict`
    (pass | warn | block | ungenerated, or a list),
    `rule` (designs on which that rule fires now), `judged` (unjudged |
    partly | judged, counted over live findings; a design without findings
    is judged once marked clean; ungenerated designs have no judged state),
    `curator` (judged state by that curator only; default any curator),
    `text` (case-insensitive substring of id or name), `archived` (None:
    archived designs hidden, the default; "only"; "all").
    sort: a column name, `-column` for descending, or a list of them
    (ties broken by id). Columns: those returned, plus n_findings / n_judged /
    judged. Each row: LIST_COLUMNS + n_findings, n_judged, judged.
    """
    cte, p1 = judged_cte((filters or {}).get("curator"))
    where, p2 = filters_sql(filters)
    sql = f"WITH {cte} SELECT * FROM base{where}{order_sql(sort)}"
    params = p1 + p2
    if limit is not None:
        sql += " LIMIT ?"
        params.append(int(limit))
    if offset:
        sql += " OFFSET ?"
        params.append(int(offset))
    with reading(db) as con:
        cur = con.execute(sql, params)
        names = [d[0] for d in cur.description]
        return [dict(zip(names, row)) for row in cur.fetchall()]


def count_designs(db: DB, filters: dict | None = None) -> int:
    """How many designs match `filters` (as `list_designs`)."""
    cte, p1 = judged_cte((filters or {}).get("curator"))
    where, p2 = filters_sql(filters)
    with reading(db) as con:
        return one(con.execute(f"WITH {cte} SELECT count(*) FROM base{where}", p1 + p2))[0]


def archive_designs(db: DB, ids: Iterable[str], curator: str, *, restore: bool = False) -> list[str]:
    """Archive (or, with `restore`, bring back) these designs; returns the ids whose state changed.

    Archived designs leave the queue (see `filters_sql`) and keep everything
    attached to them. An unknown id raises KeyError naming it and changes nothing.
    """
    ids = list(dict.fromkeys(ids))
    with transaction(db) as con:
        known = {r[0] for r in con.execute(
            "SELECT id FROM designs WHERE id IN (SELECT unnest(?::VARCHAR[]))", [ids]).fetchall()}
        missing = [i for i in ids if i not in known]
        if missing:
            raise KeyError(missing[0])
        if restore:
            changed = [r[0] for r in con.execute(
                "UPDATE designs SET archived_at = NULL, archived_by = NULL"
                " WHERE archived_at IS NOT NULL AND id IN (SELECT unnest(?::VARCHAR[])) RETURNING id",
                [ids]).fetchall()]
        else:
            changed = [r[0] for r in con.execute(
                "UPDATE designs SET archived_at = ?, archived_by = ?"
                " WHERE archived_at IS NULL AND id IN (SELECT unnest(?::VARCHAR[])) RETURNING id",
                [utcnow(), curator, ids]).fetchall()]
    order = {d: i for i, d in enumerate(ids)}
    return sorted(changed, key=order.__getitem__)


def _rows(con, sql, params=()) -> list[dict]:
    cur = con.execute(sql, list(params))
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row)) for row in cur.fetchall()]


def _loads(text):
    return None if text is None else json.loads(text)


def get_design(db: DB, design_id: str, curator: str | None = None) -> dict | None:
    """One design in full, or None.

    Returns the design's columns with `graph`, `cost`, `extra` parsed from
    JSON, and:
    - `findings`: every finding (live first, then stale; block before warn, likely defects before the
      other warns, then in graph order: `core.report.display_key`),
      each with `key rule severity nodes (list) nodes_text message stale
      verifier_version first_seen last_seen`, `judgments` {curator: {verdict,
      note, event_id, judged_at}} (current verdicts) and `verdict` (the current verdict
      of `curator`, or None);
    - `design_judgments`: {curator: {...}} current design-level verdicts ('clean');
    - `missed_defects`: live ones (not retracted);
    - `runs`: the design's runs, newest first;
    - `judged`: unjudged | partly | judged (by `curator`, else anyone) or None.
    """
    with reading(db) as con:
        rows = _rows(con, "SELECT * FROM designs WHERE id = ?", [design_id])
        if not rows:
            return None
        d = rows[0]
        for k in ("graph", "cost", "extra"):
            d[k] = _loads(d[k])
        findings = _rows(con, """
            SELECT key, rule, severity, node_list AS nodes, nodes AS nodes_text, message, stale,
                   verifier_version, first_seen, last_seen
            FROM findings WHERE design_id = ?
            ORDER BY stale, CASE severity WHEN 'block' THEN 0 ELSE 1 END, rule, key""", [design_id])
        current = _rows(con, """
            SELECT id AS event_id, finding_key, curator, verdict, note, judged_at
            FROM current_judgments WHERE design_id = ? ORDER BY id""", [design_id])
        by_key: dict[Any, dict] = {}
        for j in current:
            by_key.setdefault(j["finding_key"], {})[j["curator"]] = {
                "verdict": j["verdict"], "note": j["note"], "event_id": j["event_id"], "judged_at": j["judged_at"]}
        for f in findings:
            f["nodes"] = list(f["nodes"] or [])
            f["judgments"] = by_key.get(f["key"], {})
            f["verdict"] = f["judgments"].get(curator, {}).get("verdict") if curator else None
        demoted = dict(con.execute("SELECT rule, reason FROM rule_demotions").fetchall())
        for f in findings:
            f["demoted"] = demoted.get(f["rule"])
        positions = graph_positions(d["graph"])
        findings.sort(key=lambda f: (bool(f["stale"]), *display_key(f["rule"], f["severity"], f["nodes"], positions)))
        d["findings"] = findings
        d["design_judgments"] = by_key.get(None, {})
        d["missed_defects"] = _rows(con, """
            SELECT id, curator, node_list AS nodes, rule, description, marked_at FROM missed_defects
            WHERE design_id = ? AND retracted_at IS NULL ORDER BY id""", [design_id])
        for m in d["missed_defects"]:
            m["nodes"] = list(m["nodes"] or [])
        d["runs"] = _rows(con, "SELECT * FROM runs WHERE design_id = ? ORDER BY id DESC", [design_id])
        for r in d["runs"]:
            for k in ("metrics", "spec"):
                r[k] = _loads(r[k])
    live = [f for f in findings if not f["stale"] and not f["demoted"]]

    def has(judgments: dict) -> bool:
        return bool(judgments.get(curator)) if curator else bool(judgments)

    if d["error"] is not None:
        d["judged"] = None
    elif not live:
        d["judged"] = "judged" if has(d["design_judgments"]) or findings else "unjudged"
    else:
        n = sum(1 for f in live if has(f["judgments"]))
        d["judged"] = "unjudged" if n == 0 else ("partly" if n < len(live) else "judged")
    return d


def children(db: DB, design_id: str) -> list[str]:
    """Ids of designs derived from this one (`parent` = it)."""
    with reading(db) as con:
        return [r[0] for r in con.execute(
            "SELECT id FROM designs WHERE parent = ? ORDER BY id", [design_id]).fetchall()]

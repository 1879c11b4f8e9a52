"""A checked record as the rows the store keeps: the design row and its finding rows, verified.

Pure: `build_rows(record, source, verifier)` verifies the record's graph (`verified.verify_design`)
and returns plain dicts keyed by the columns of the store's `designs` and `findings` tables.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime, timezone

from .records import Refused


def utcnow() -> datetime:
    """Naive UTC timestamp, the store's time convention."""
    return datetime.now(timezone.utc).replace(tzinfo=None)


def build_rows(rec: dict, source: str, verifier: Callable | None, now=None) -> tuple[dict, list[dict]]:
    """Design row and finding rows of one record (raises Refused when the graph is unreadable)."""
    from ..graph import Design, DesignError
    from .verified import verify_design

    now = now or utcnow()
    row = {
        "id": rec["id"], "name": None, "author": rec["author"], "model": rec["model"],
        "task_set": rec["task_set"], "run": rec["run"], "parent": rec["parent"],
        "reference": rec["reference"], "source": source, "graph": None, "content_hash": None,
        "verdict": None, "n_nodes": None, "n_block": 0, "n_warn": 0, "params": None, "flops": None,
        "quoted_cost_usd": None, "quote_device": None, "cost_a10g_usd": None, "cost": None,
        "error": rec["error"], "extra": json.dumps(rec["extra"]) if rec.get("extra") else None,
        "verifier_version": None, "imported_at": now, "verified_at": None,
    }
    if rec["graph"] is None:
        return row, []
    graph = rec["graph"]
    try:
        design = Design.from_dict(graph, source=None)
    except DesignError as exc:
        raise Refused(str(exc).removeprefix("<design>: ")) from None
    try:
        v = verify_design(design, verifier)
    except Exception as exc:
        raise Refused(f"the verifier failed: {type(exc).__name__}: {' '.join(str(exc).split())}") from None
    # stored minified by DuckDB, which also computes content_hash (see designs.insert_designs)
    text = rec.get("graph_text") or json.dumps(graph, separators=(",", ":"), ensure_ascii=False)
    row.update({
        "name": design.name or None,
        "graph": text,
        "verdict": v.verdict, "n_nodes": len(design.nodes), "n_block": v.n_block, "n_warn": v.n_warn,
        "params": v.params, "flops": v.flops, "quoted_cost_usd": v.quoted_cost_usd,
        "quote_device": v.quote_device, "cost_a10g_usd": v.cost_a10g_usd, "cost": v.cost_json,
        "verifier_version": v.version, "verified_at": now,
    })
    findings = [{
        "design_id": rec["id"], "key": f["key"], "rule": f["rule"], "severity": f["severity"],
        "nodes": f["nodes"], "node_list": f["node_list"], "message": f["message"],
        "verifier_version": v.version, "stale": False, "first_seen": now, "last_seen": now,
    } for f in v.findings]
    return row, findings

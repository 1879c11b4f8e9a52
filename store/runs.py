"""Runs: a forward check, a training run or a question's execution, and how it went."""

from __future__ import annotations

import json
from datetime import datetime, timedelta

from .connection import DB, one, reading, transaction, utcnow
from .designs import design_id_by_content

STATUSES = ("queued", "running", "ok", "failed", "timeout", "killed", "cancelled")
_UPDATABLE = ("status", "backend", "device", "started_at", "ended_at", "seconds", "exception",
              "message", "log_tail", "metrics", "spec")
LOG_TAIL_CHARS = 20_000


def _json(v):
    return None if v is None else (v if isinstance(v, str) else json.dumps(v, default=str))


def _check_status(status):
    if status not in STATUSES:
        raise ValueError(f"run status must be one of {', '.join(STATUSES)}, not {status!r}")


def record_run(db: DB, *, kind: str, design_id: str | None = None, question_id: str | None = None,
               backend: str | None = None, device: str | None = None, status: str = "queued",
               started_at: datetime | None = None, spec: dict | None = None, **outcome) -> int:
    """Record a run (of a design or of a question); returns its id.

    `outcome` may already carry the end: ended_at, seconds, exception,
    message, log_tail, metrics (dict). Times are naive UTC.
    """
    _check_status(status)
    if design_id is None and question_id is None:
        raise ValueError("a run belongs to a design or a question")
    bad = set(outcome) - set(_UPDATABLE)
    if bad:
        raise ValueError(f"unknown run field {sorted(bad)[0]!r}")
    fields = {"kind": kind, "design_id": design_id, "question_id": question_id, "backend": backend,
              "device": device, "status": status, "created_at": utcnow(), "started_at": started_at,
              "spec": _json(spec)}
    for k, v in outcome.items():
        fields[k] = _json(v) if k == "metrics" else v
    if fields.get("log_tail"):
        fields["log_tail"] = fields["log_tail"][-LOG_TAIL_CHARS:]
    cols = ", ".join(fields)
    marks = ", ".join("?" for _ in fields)
    with transaction(db) as con:
        return one(con.execute(f"INSERT INTO runs ({cols}) VALUES ({marks}) RETURNING id",
                           list(fields.values())))[0]


def update_run(db: DB, run_id: int, **fields) -> None:
    """Change a run's status / outcome: status, backend, device, started_at, ended_at,
    seconds, exception, message, log_tail, metrics (dict), spec."""
    bad = set(fields) - set(_UPDATABLE)
    if bad:
        raise ValueError(f"unknown run field {sorted(bad)[0]!r}")
    if not fields:
        return
    if "status" in fields:
        _check_status(fields["status"])
    for k in ("metrics", "spec"):
        if k in fields:
            fields[k] = _json(fields[k])
    if fields.get("log_tail"):
        fields["log_tail"] = fields["log_tail"][-LOG_TAIL_CHARS:]
    sets = ", ".join(f"{k} = ?" for k in fields)
    with transaction(db) as con:
        if not con.execute("SELECT 1 FROM runs WHERE id = ?", [run_id]).fetchone():
            raise ValueError(f"no run {run_id}")
        con.execute(f"UPDATE runs SET {sets} WHERE id = ?", list(fields.values()) + [run_id])


def get_run(db: DB, run_id: int) -> dict | None:
    rows = list_runs(db, run_id=run_id)
    return rows[0] if rows else None


def list_runs(db: DB, *, design_id: str | None = None, question_id: str | None = None,
              run_id: int | None = None, status: str | None = None, limit: int | None = 100) -> list[dict]:
    """Runs, newest first, with metrics/spec parsed."""
    clauses, params = [], []
    for col, v in (("design_id", design_id), ("question_id", question_id), ("id", run_id), ("status", status)):
        if v is not None:
            clauses.append(f"{col} = ?")
            params.append(v)
    sql = "SELECT * FROM runs" + (" WHERE " + " AND ".join(clauses) if clauses else "") + " ORDER BY id DESC"
    if limit:
        sql += f" LIMIT {int(limit)}"
    with reading(db) as con:
        cur = con.execute(sql, params)
        names = [d[0] for d in cur.description]
        rows = [dict(zip(names, r)) for r in cur.fetchall()]
    for r in rows:
        for k in ("metrics", "spec"):
            r[k] = None if r[k] is None else json.loads(r[k])
    return rows


def list_design_runs(db: DB, *, limit: int | None = 300) -> list[dict]:
    """Runs of designs (not of questions), newest first, metrics and spec parsed: what the app's runs
    screen lists, so runs launched before a restart are still there."""
    sql = "SELECT * FROM runs WHERE design_id IS NOT NULL ORDER BY id DESC"
    if limit:
        sql += f" LIMIT {int(limit)}"
    with reading(db) as con:
        cur = con.execute(sql)
        names = [d[0] for d in cur.description]
        rows = [dict(zip(names, r)) for r in cur.fetchall()]
    for r in rows:
        for k in ("metrics", "spec"):
            r[k] = None if r[k] is None else json.loads(r[k])
    return rows


def persist_result(db, spec, result, *, design_id: str | None = None,
                   question_id: str | None = None) -> int:
    """Record a finished run (a `core.runs` RunSpec and its RunResult) with `record_run`; returns
    the store's run id. The launching process calls this (the CLI here, the
    app for runs it launched); the child never touches the store.

    design_id / question_id default to `spec.tags["design_id"]` /
    `spec.tags["question_id"]`; for a design with neither, the stored design
    with the same content, else ``file:<path>`` from `spec.tags["source"]`.
    The stored spec leaves the design out (it is the design's row).
    """
    tags = spec.tags or {}
    design_id = design_id or tags.get("design_id")
    question_id = question_id or tags.get("question_id")
    if design_id is None and question_id is None:
        if spec.design is not None:
            try:
                design_id = design_id_by_content(db, spec.design)
            except Exception:  # noqa: BLE001 - an empty or older store has no match
                design_id = None
        if design_id is None:
            design_id = f"file:{tags.get('source') or (spec.design or {}).get('name') or '?'}"
    ended = utcnow()
    stored_spec = {k: v for k, v in spec.to_dict().items() if k != "design"}
    return record_run(
        db, kind=spec.kind, design_id=design_id, question_id=question_id,
        backend=result.backend, device=result.device, status=result.status,
        started_at=ended - timedelta(seconds=result.seconds or 0), spec=stored_spec,
        ended_at=ended, seconds=result.seconds, exception=result.exception,
        message=result.message, log_tail=result.log_tail, metrics=result.metrics)

"""The DuckDB store: designs, findings, judgments, missed defects, runs; imports, reports, export.

Every function takes `db`: a store path (None: the default store,
`$ARCHCURATOR_DB` or the user's data folder) or an open connection from
`store.connect(...)`. Given a path, each call opens the file, does its work
in one transaction and closes it, so the store is never held between calls
and another process (an import, a report) can use it in between. See
store/README.md.
"""

from store.connection import (  # noqa: F401
    DEFAULT_TIMEOUT, StoreBusy, StoreError, connect, migrate_schema, reading, schema_version, transaction,
)
from store.paths import default_db_path, resolve_db_path  # noqa: F401

_LAZY = {
    "list_designs": "store.designs", "count_designs": "store.designs", "get_design": "store.designs",
    "insert_designs": "store.designs", "reverify": "store.designs", "stored_ids": "store.designs",
    "children": "store.designs",
    "record_judgment": "store.judgments", "undo_judgment": "store.judgments",
    "current_verdicts": "store.judgments", "judgment_events": "store.judgments", "curators": "store.judgments",
    "JudgmentError": "store.judgments",
    "record_missed_defect": "store.missed", "retract_missed_defect": "store.missed",
    "list_missed_defects": "store.missed",
    "record_run": "store.runs", "update_run": "store.runs", "get_run": "store.runs", "list_runs": "store.runs",
    "refusal_report": "store.reports", "rules_report": "store.reports", "agreement_report": "store.reports",
    "export": "store.exports", "ExportError": "store.exports",
    "import_paths": "store.importers", "import_records": "store.importers", "ImportResult": "store.importers",
    "ImportInputError": "store.importers", "Defaults": "store.importers",
    "seed_demo": "store.demo", "ensure_demo": "store.demo",
}

__all__ = ["StoreBusy", "StoreError", "connect", "transaction", "reading", "schema_version",
           "default_db_path", "resolve_db_path", "DEFAULT_TIMEOUT", *_LAZY]


def __getattr__(name):
    mod = _LAZY.get(name)
    if mod is None:
        raise AttributeError(f"module 'store' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(mod), name)
    globals()[name] = value
    return value

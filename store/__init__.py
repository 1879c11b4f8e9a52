"""The DuckDB store: designs, findings, judgments, missed defects, runs; imports, reports, export.

Every function takes `db`: a store path (None: the default store,
`$ARCHCURATOR_DB` or the user's data folder) or an open connection from
`store.connect(...)`. Given a path, each call opens the file, does its work
in one transaction and closes it, so the store is never held between calls
and another process (an import, a report) can use it in between. See
store/README.md.
"""

from .connection import (  # noqa: F401
    DEFAULT_TIMEOUT,
    StoreBusy,
    StoreError,
    connect,
    migrate_schema,
    reading,
    schema_version,
    transaction,
)
from .paths import default_db_path, resolve_db_path  # noqa: F401

_LAZY = {
    "list_designs": ".designs", "count_designs": ".designs", "get_design": ".designs",
    "insert_designs": ".designs", "reverify": ".importers", "stored_ids": ".designs",
    "children": ".designs", "archive_designs": ".designs",
    "record_judgment": ".judgments", "undo_last_step": ".judgments",
    "current_verdicts": ".judgments", "judgment_events": ".judgments", "curators": ".judgments",
    "JudgmentError": ".judgments",
    "record_missed_defect": ".missed", "retract_missed_defect": ".missed",
    "list_missed_defects": ".missed",
    "record_run": ".runs", "update_run": ".runs", "get_run": ".runs", "list_runs": ".runs",
    "refusal_report": ".reports", "rules_report": ".reports", "agreement_report": ".reports",
    "export": ".exports", "ExportError": ".exports",
    "import_paths": ".importers", "import_records": ".importers", "ImportResult": ".importers",
    "ImportInputError": ".importers", "Defaults": ".importers",
    "seed_demo": ".demo", "ensure_demo": ".demo",
    "demotions": ".demotions", "demote_rule": ".demotions", "restore_rule": ".demotions",
}

__all__ = ["StoreBusy", "StoreError", "connect", "transaction", "reading", "schema_version",
           "default_db_path", "resolve_db_path", "DEFAULT_TIMEOUT", *_LAZY]


def __getattr__(name):
    mod = _LAZY.get(name)
    if mod is None:
        raise AttributeError(f"module 'store' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(mod, __name__), name)
    globals()[name] = value
    return value

"""The store's end of an import: which design ids it holds, and writing one batch it is handed.

The import itself (planning files and folders, reading, the checks at the
door, parsing `.py` sources, verifying in a process pool) is
`core.imports`, a pure room; this module only binds it to a store:
`StoreSink(db)` answers `known_ids()` and writes each batch with
`designs.insert_designs` in one short transaction. `import_paths(db, …)`,
`import_batches(db, …)` and `import_records(db, …)` are `core.imports`'
functions writing into `db`; `reverify(db, …)` re-runs the verifier (`core.imports.verified`)
over stored graphs and writes what it says.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable

from archcurator.core import imports as core_imports
from archcurator.core.imports import (  # noqa: F401 - the import's vocabulary, as callers of the store know it
    Batch,
    Defaults,
    ImportInputError,
    ImportResult,
    PyOptions,
    Rejection,
    Written,
)

from .connection import DB
from .designs import insert_designs, stored_graphs, stored_ids, verifiable_ids, write_verifications


class StoreSink:
    """`core.imports.ImportSink` over one store."""

    def __init__(self, db: DB):
        self.db = db

    def known_ids(self) -> set[str]:
        return stored_ids(self.db)

    def write(self, rows: list[dict], findings: list[dict], by_content: set[str]) -> Written:
        inserted, skipped, present = insert_designs(self.db, rows, findings, by_content)
        return Written(inserted, skipped, present)


def import_paths(db: DB, paths: Iterable[str | os.PathLike], *, defaults: Defaults | None = None,
                 py: PyOptions | None = None, verifier: Callable | None = None,
                 workers: int | None = None, progress: Callable[[int, int], None] | None = None,
                 on_total: Callable[[int], None] | None = None) -> ImportResult:
    """`core.imports.import_paths` into the store `db` (ImportInputError: nothing written)."""
    return core_imports.import_paths(StoreSink(db), paths, defaults=defaults, py=py, verifier=verifier,
                                     workers=workers, progress=progress, on_total=on_total)


def import_batches(db: DB, batches: list[Batch], *, defaults: Defaults | None = None,
                   verifier: Callable | None = None, workers: int | None = None,
                   progress: Callable[[int, int], None] | None = None,
                   on_total: Callable[[int], None] | None = None) -> ImportResult:
    """`core.imports.import_batches` (batches from `core.imports.plan`) into the store `db`."""
    return core_imports.import_batches(StoreSink(db), batches, defaults=defaults, verifier=verifier,
                                       workers=workers, progress=progress, on_total=on_total)


def import_records(db: DB, records: Iterable[dict], *, label: str = "<records>",
                   defaults: Defaults | None = None, verifier: Callable | None = None,
                   workers: int | None = 0) -> ImportResult:
    """SPEC §2 records given as dicts, into the store `db` (one batch, one transaction)."""
    return core_imports.import_records(StoreSink(db), records, label=label, defaults=defaults,
                                       verifier=verifier, workers=workers)


def reverify(db: DB, ids: Iterable[str] | None = None, *, verifier: Callable | None = None,
             chunk: int = 200) -> int:
    """Re-run the verifier over stored graphs (all, or `ids`); one transaction per chunk.

    Judgments stay attached: see `designs.apply_verification`. Returns how many were re-verified.
    """
    from archcurator.core.imports.verified import verify_graphs

    todo = verifiable_ids(db, ids)
    done = 0
    for i in range(0, len(todo), chunk):
        done += write_verifications(db, verify_graphs(stored_graphs(db, todo[i:i + chunk]), verifier))
    return done

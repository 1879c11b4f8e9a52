"""The whole import: plan, then per batch read, check, verify (in the pool for big ones), hand to the sink.

The sink is whatever keeps designs (the store: `store.importers.StoreSink`);
this module never writes anything itself. Per batch it hands the sink one
call, `write(rows, findings, by_content)`, so a batch is one short
transaction there while the reading and verifying happen here.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Iterator
from typing import NamedTuple, Protocol

from ..budget import design_budget_s
from .inputs import Batch, Item, plan
from .pool import CHUNK, chunks, init_worker, pool_size, process, start_pool
from .records import check_defaults
from .types import BatchSummary, Defaults, ImportResult, PyOptions, Rejection


class Written(NamedTuple):
    inserted: list[str]
    skipped: list[str]  # ids already kept, ids repeated in the batch, and `present`'s keys
    present: dict[str, str]  # id -> the kept design with the same graph and provenance


class ImportSink(Protocol):
    """Where imported designs go."""

    def known_ids(self) -> Iterable[str]:
        """The ids already kept (a record with one of them is skipped before it is verified)."""

    def write(self, rows: list[dict], findings: list[dict], by_content: set[str]) -> Written:
        """Keep one batch's new design rows and finding rows at once. `by_content`: ids that were
        derived, not given (design files, parsed sources), which are already present when a kept
        design has the same graph and provenance."""


def import_paths(sink: ImportSink, paths: Iterable[str | os.PathLike], *, defaults: Defaults | None = None,
                 py: PyOptions | None = None, verifier: Callable | None = None,
                 workers: int | None = None, progress: Callable[[int, int], None] | None = None,
                 on_total: Callable[[int], None] | None = None) -> ImportResult:
    """Import designs from files, folders and batches (see the package doc).

    Raises ImportInputError (nothing written) when an input cannot be read
    at all. `verifier`: a picklable `design -> Report` (default
    `core.verify.verify_graph`). `workers`: processes verifying a batch (None:
    2 for batches of 400+ designs, else in-process; 0: in-process).
    `on_total(n)` is told the number of designs first, `progress(done, n)` after each chunk.
    """
    batches = plan(paths, py)
    return import_batches(sink, batches, defaults=defaults, verifier=verifier, workers=workers,
                          progress=progress, on_total=on_total)


def import_batches(sink: ImportSink, batches: list[Batch], *, defaults: Defaults | None = None,
                   verifier: Callable | None = None, workers: int | None = None,
                   progress: Callable[[int, int], None] | None = None,
                   on_total: Callable[[int], None] | None = None) -> ImportResult:
    defaults = defaults or Defaults()
    check_defaults(defaults)
    budget = design_budget_s()
    total = sum(b.count for b in batches)
    if on_total:
        on_total(total)
    known = frozenset(sink.known_ids())
    result = ImportResult()
    done = 0
    pool = None
    try:
        for batch in batches:
            summary = BatchSummary(batch.label)
            rows: list[dict] = []
            findings: list[dict] = []
            by_content: set[str] = set()
            seen: dict[str, str] = {}
            size = pool_size(batch.count, workers)
            if size:
                if pool is None:
                    pool = start_pool(size, defaults, known, verifier, budget)
                chunk_results: Iterator[list[tuple]] = pool.map(process, chunks(batch.iter_items(), CHUNK))
            else:
                init_worker(defaults, known, verifier, budget)
                chunk_results = map(process, chunks(batch.iter_items(), CHUNK))
            for res in chunk_results:
                for r in res:
                    kind, file, line = r[0], r[1], r[2]
                    if kind == "bad":
                        result.rejected.append(Rejection(file, line, r[3]))
                        summary.rejected += 1
                    elif kind == "skip":
                        result.skipped.append(r[3])
                        summary.skipped += 1
                    else:
                        row = r[3]
                        if row["id"] in seen:
                            result.skipped.append(row["id"])
                            summary.skipped += 1
                            continue
                        seen[row["id"]] = row["source"]
                        rows.append(row)
                        if r[5]:
                            by_content.add(row["id"])
                        findings.extend(r[4])
                done += len(res)
                if progress:
                    progress(done, total)
            inserted, skipped, present = sink.write(rows, findings, by_content)
            result.present.update(present)
            if pool is None:
                known = known | set(inserted)
            result.imported.extend(inserted)
            result.skipped.extend(skipped)
            summary.imported += len(inserted)
            summary.skipped += len(skipped)
            new = set(inserted)
            ung = [r["id"] for r in rows if r["error"] is not None and r["id"] in new]
            result.ungenerated.extend(ung)
            summary.ungenerated = len(ung)
            result.batches.append(summary)
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)
    return result


def import_records(sink: ImportSink, records: Iterable[dict], *, label: str = "<records>",
                   defaults: Defaults | None = None, verifier: Callable | None = None,
                   workers: int | None = 0) -> ImportResult:
    """Import SPEC §2 records given as dicts (one batch, one write)."""
    items = [Item(label, i, json.dumps(r)) for i, r in enumerate(records, 1)]
    batch = Batch(label, "files", items=items, count=len(items))
    return import_batches(sink, [batch], defaults=defaults, verifier=verifier, workers=workers)

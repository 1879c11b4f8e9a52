"""Export every table (and the current-verdict view) as Parquet, CSV or JSON files."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from store.connection import DB, reading

FORMATS = {"parquet": "(FORMAT parquet, COMPRESSION zstd)", "csv": "(FORMAT csv, HEADER true)",
           "json": "(FORMAT json, ARRAY true)"}
SKIP = {"schema_version"}
VIEWS = ("current_judgments",)


class ExportError(RuntimeError):
    """One line naming the output and the problem."""


def export_tables(db: DB) -> list[str]:
    with reading(db) as con:
        tables = [r[0] for r in con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database()"
            " AND schema_name = 'main' AND NOT temporary ORDER BY table_name").fetchall()]
    return [t for t in tables if t not in SKIP] + list(VIEWS)


def export(db: DB, fmt: str, out: str | os.PathLike, tables: list[str] | None = None) -> list[Path]:
    """Write one file per table into folder `out` (`designs.parquet`, `findings.parquet`,
    `judgments.parquet`, `current_judgments.parquet`, ...); returns the files.

    JSON files are one array of row objects each. Files are written to a
    temporary folder beside `out` and moved in when all are done, so a failed
    export leaves nothing half-written. Existing files of the same names are replaced.
    """
    if fmt not in FORMATS:
        raise ExportError(f"{out}: unknown format {fmt!r} (parquet, csv or json)")
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ExportError(f"{out}: exists and is not a folder")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".export-", dir=out.parent))
    except OSError as exc:
        raise ExportError(f"{out}: cannot write there: {exc.strerror or exc}") from None
    written = []
    try:
        with reading(db) as con:
            names = tables or [t for t in export_tables(con)]
            for name in names:
                target = tmp / f"{name}.{fmt}"
                path = str(target).replace("'", "''")
                con.execute(f'COPY (SELECT * FROM "{name}") TO \'{path}\' {FORMATS[fmt]}')
                written.append(name)
        out.mkdir(parents=True, exist_ok=True)
        result = []
        for name in written:
            dest = out / f"{name}.{fmt}"
            os.replace(tmp / f"{name}.{fmt}", dest)
            result.append(dest)
        return result
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

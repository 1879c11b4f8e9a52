"""Export every table (and the current-verdict view) as Parquet, CSV or JSON files."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from .connection import DB, reading

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


def is_file_target(out: str | os.PathLike, fmt: str) -> bool:
    """`--out FILE.parquet` (the format's own suffix, not an existing folder) names one file."""
    out = Path(out)
    return out.suffix.lower() == f".{fmt}" and not out.is_dir()


def export(db: DB, fmt: str, out: str | os.PathLike, tables: list[str] | None = None) -> list[Path]:
    """Export the store; returns the files written.

    `out` ending in the format's suffix (`store.parquet`) is one file holding
    one table: the one named in `tables`, else `designs`. Any other `out` is a
    folder that gets one file per table (`designs.parquet`, `findings.parquet`,
    `judgments.parquet`, `current_judgments.parquet`, ...; existing files of
    the same names are replaced).

    JSON files are one array of row objects each. Everything is written
    beside its destination first and moved in when all is done, so a failed
    export leaves nothing half-written.
    """
    if fmt not in FORMATS:
        raise ExportError(f"{out}: unknown format {fmt!r} (parquet, csv or json)")
    if str(out).strip() in ("", "-"):
        raise ExportError(f"--out {str(out)!r}: name a file (store.{fmt}) or a folder to write")
    suffix = Path(out).suffix.lower().lstrip(".")
    if suffix in FORMATS and suffix != fmt and not Path(out).is_dir():
        raise ExportError(f"{out}: a .{suffix} file, but --format is {fmt}; pass --format {suffix}")
    if is_file_target(out, fmt):
        return [_export_file(db, fmt, Path(out), tables)]
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ExportError(f"{out}: exists and is not a folder (a file to write must end in .{fmt})")
    tmp = _scratch(out)
    written = []
    try:
        with reading(db) as con:
            names = tables or [t for t in export_tables(con)]
            for name in names:
                _copy(con, name, tmp / f"{name}.{fmt}", fmt)
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


def _export_file(db: DB, fmt: str, out: Path, tables: list[str] | None) -> Path:
    if tables and len(tables) > 1:
        raise ExportError(f"{out}: one file holds one table; give --out a folder for {len(tables)} tables")
    name = tables[0] if tables else "designs"
    tmp = _scratch(out)
    try:
        with reading(db) as con:
            _copy(con, name, tmp / out.name, fmt)
        os.replace(tmp / out.name, out)
        return out
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _scratch(out: Path) -> Path:
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        return Path(tempfile.mkdtemp(prefix=".export-", dir=out.parent))
    except OSError as exc:
        raise ExportError(f"{out}: cannot write there: {exc.strerror or exc}") from None


def _copy(con, name: str, target: Path, fmt: str) -> None:
    path = str(target).replace("'", "''")
    con.execute(f'COPY (SELECT * FROM "{name}") TO \'{path}\' {FORMATS[fmt]}')

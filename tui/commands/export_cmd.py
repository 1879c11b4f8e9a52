"""`archcurator export --format parquet|csv|json --out FILE.EXT|FOLDER`: one table to a file, or every table
to a folder, one file each."""

from __future__ import annotations

import argparse

from .errors import fail, no_store
from .output import say


def register(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "export", help="write the store's tables as Parquet, CSV or JSON files",
        description="--out FILE ending in the format's suffix (store.parquet) writes that one file: the "
                    "designs table, or the one --table names. --out FOLDER writes every table (designs, "
                    "findings, judgments (the events), current_judgments (the current verdicts), "
                    "missed_defects, runs, the knowledge base's tables) into the folder, one file each "
                    "(NAME.parquet ...), replacing files of the same names.")
    p.add_argument("--format", dest="fmt", choices=("parquet", "csv", "json"), default="parquet",
                   help="file format (default: parquet)")
    p.add_argument("--out", required=True, metavar="FILE.EXT|FOLDER",
                   help="a file ending in .parquet/.csv/.json (one table), else a folder (a file per table)")
    p.add_argument("--table", dest="tables", action="append", metavar="NAME",
                   help="only this table (repeatable with a folder; one with a file)")
    p.set_defaults(func=run)
    return p


def run(args) -> int:
    from archcurator.store.connection import StoreError
    from archcurator.store.exports import ExportError, export, export_tables

    db = getattr(args, "db", None)
    from archcurator.store.paths import resolve_db_path

    if not resolve_db_path(db).exists():
        return no_store("export", resolve_db_path(db))
    try:
        if args.tables:
            known = export_tables(db)
            for t in args.tables:
                if t not in known:
                    return fail("export", "--table", f"no table {t!r} to export (have: {', '.join(known)})")
        files = export(db, args.fmt, args.out, args.tables)
    except (ExportError, StoreError) as exc:
        return fail("export", None, exc)
    for f in files:
        say(f)
    return 0

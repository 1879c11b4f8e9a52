"""`archcurator export --format parquet|csv|json --out FOLDER`: every table, one file each."""

from __future__ import annotations

import argparse
import sys


def register(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "export", help="write every table of the store as Parquet, CSV or JSON files",
        description="Writes designs, findings, judgments (the events), current_judgments (the current "
                    "verdicts), missed_defects, runs and any other table, one file each, into folder --out.")
    p.add_argument("--format", dest="fmt", choices=("parquet", "csv", "json"), default="parquet")
    p.add_argument("--out", required=True, metavar="FOLDER")
    p.add_argument("--table", dest="tables", action="append", metavar="NAME",
                   help="only this table (repeatable)")
    p.set_defaults(func=run)
    return p


def run(args) -> int:
    from store.connection import StoreError
    from store.exports import ExportError, export, export_tables

    db = getattr(args, "db", None)
    from store.paths import resolve_db_path

    if not resolve_db_path(db).exists():
        print(f"{resolve_db_path(db)}: no such store (import designs first, or pass --db)", file=sys.stderr)
        return 2
    try:
        if args.tables:
            known = export_tables(db)
            for t in args.tables:
                if t not in known:
                    print(f"{args.out}: no table {t!r} to export (have: {', '.join(known)})", file=sys.stderr)
                    return 2
        files = export(db, args.fmt, args.out, args.tables)
    except (ExportError, StoreError) as exc:
        print(str(exc), file=sys.stderr)
        return 2
    for f in files:
        print(f)
    return 0

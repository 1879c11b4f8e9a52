"""`archcurator checks`: the published check catalogue (generated from the code)."""

from __future__ import annotations

import json


def register(sub) -> None:
    p = sub.add_parser("checks", help="list the check catalogue")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=run)


def run(args) -> int:
    from archcurator.core.checks import catalogue_document

    doc = catalogue_document()
    from .output import console, say

    if args.json:
        say(json.dumps(doc, indent=2))
        return 0
    from rich.table import Table

    table = Table(title=f"{doc['count']} checks", expand=True)
    for col in ("id", "severity", "category", "title"):
        table.add_column(col, overflow="fold")
    for c in doc["checks"]:
        table.add_row(c["id"], c["severity"], c["category"], c["title"])
    console().print(table)
    return 0

"""`archcurator archive ID… [--restore]`: hide designs from the queue, keeping their judgments."""

from __future__ import annotations

import argparse
import json

from .errors import fail, no_store
from .output import say


def register(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "archive", help="hide designs from the queue (their findings, judgments and runs are kept)",
        description="Archived designs leave the app's queue, its counts and filters; everything attached "
                    "to them stays in the store and in exports, and --restore brings them back as they were. "
                    "Reports still count them. An unknown id changes nothing.")
    p.add_argument("ids", nargs="+", metavar="ID", help="design ids")
    p.add_argument("--restore", action="store_true", help="bring archived designs back into the queue")
    p.add_argument("--curator", default=None, help="who archives (default: the config's curator or login name)")
    p.add_argument("--json", action="store_true", help='print {"changed": [...], "unchanged": [...]}')
    p.set_defaults(func=run)
    return p


def run(args) -> int:
    from archcurator.store.connection import StoreError
    from archcurator.store.designs import archive_designs
    from archcurator.store.paths import resolve_db_path

    from ..config import load_config

    db = getattr(args, "db", None)
    path = resolve_db_path(db)
    if not path.exists():
        return no_store("archive", path)
    curator = args.curator or load_config().curator
    try:
        changed = archive_designs(db, args.ids, curator, restore=args.restore)
    except KeyError as exc:
        return fail("archive", path, f"no design {exc.args[0]!r}; nothing was changed")
    except StoreError as exc:
        return fail("archive", None, exc)
    unchanged = [i for i in dict.fromkeys(args.ids) if i not in set(changed)]
    if args.json:
        say(json.dumps({"changed": changed, "unchanged": unchanged}, indent=2))
        return 0
    verb = "restored" if args.restore else "archived"
    say(f"{verb} {len(changed)}" + (f" ({len(unchanged)} already {verb})" if unchanged else ""))
    return 0

"""`archcurator demote RULE --reason TEXT` / `--restore`: the project's demoted rules (store.demotions).

A demoted rule keeps firing; its findings show the reason, and the queue's "to judge" counts pass them by.
`report rules` shows each rule's judged false-alarm rate, the figure a demotion should rest on.
"""

from __future__ import annotations

import argparse
import json

from .errors import fail, no_store
from .output import say


def register(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "demote", help="demote a noisy rule for this project (its findings stay, shown with the reason)",
        description="A demoted rule keeps firing and its findings stay in the store, each shown with the reason; "
                    "the queue's judged state and 'next to judge' pass them by. --restore takes a demotion back; "
                    "--list prints the demoted rules.")
    p.add_argument("rule", nargs="?", help="a rule id of the catalogue (archcurator checks)")
    p.add_argument("--reason", help="why (shown on the rule's findings), e.g. 'false-alarm rate 62%% (41-79%%)'")
    p.add_argument("--restore", action="store_true", help="take the demotion back")
    p.add_argument("--list", action="store_true", help="print the demoted rules")
    p.add_argument("--curator", default=None, help="who demotes (default: the config's curator or login name)")
    p.add_argument("--json", action="store_true", help="print the demoted rules as JSON afterwards")
    p.set_defaults(func=run)
    return p


def run(args) -> int:
    from archcurator.core.checks import CATALOGUE
    from archcurator.store.connection import StoreError
    from archcurator.store.demotions import demote_rule, demotions, restore_rule
    from archcurator.store.paths import resolve_db_path

    from ..config import load_config

    db = getattr(args, "db", None)
    path = resolve_db_path(db)
    if not path.exists():
        return no_store("demote", path)
    if not args.list and not args.rule:
        return fail("demote", "RULE", "name the rule to demote (or --list)")
    try:
        if args.rule:
            if args.rule not in CATALOGUE:
                return fail("demote", args.rule, "no such rule in the catalogue (archcurator checks lists them)")
            if args.restore:
                if not restore_rule(db, args.rule):
                    say(f"{args.rule} was not demoted")
            elif not args.reason:
                return fail("demote", "--reason", "a demotion needs a reason (it is shown on the rule's findings)")
            else:
                try:
                    demote_rule(db, args.rule, args.reason, args.curator or load_config().curator)
                except ValueError as exc:
                    return fail("demote", "--reason", exc)
        current = demotions(db)
    except StoreError as exc:
        return fail("demote", None, exc)
    if args.json:
        say(json.dumps(current, indent=2))
    else:
        for rule, d in current.items():
            say(f"{rule}: demoted by {d['by']}: {d['reason']}")
        if not current:
            say("no rule is demoted")
    return 0

"""The `archcurator` command line.

Textual is imported only when the app opens; every other command runs
without it (a test keeps it so).
"""

from __future__ import annotations

import argparse
import importlib
import sys

from tui.commands import COMMAND_MODULES


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="archcurator",
        description="Pre-flight verifier and curator's workbench for neural-network designs. "
                    "With no command, opens the curator's app.",
    )
    parser.add_argument("--db", help="DuckDB store (default: user data folder; $ARCHCURATOR_DB overrides)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        try:
            mod = importlib.import_module(f"tui.commands.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"tui.commands.{name}":
                continue  # listed but not shipped in this build
            raise
        before = set(sub.choices)
        mod.register(sub)
        for cmd in set(sub.choices) - before:
            sp = sub.choices[cmd]
            if not any("--db" in a.option_strings for a in sp._actions):
                sp.add_argument("--db", default=argparse.SUPPRESS,
                                help="DuckDB store (default: user data folder; $ARCHCURATOR_DB overrides)")
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser()
    args = parser.parse_args(argv)
    if not args.command:
        from tui.app_entry import open_app

        return open_app(args.db)
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("archcurator: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())

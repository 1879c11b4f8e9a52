"""The `archcurator` command line.

Textual is imported only when the app opens; every other command runs
without it (a test keeps it so). `verify FILE --json`, the command scripts
run once per design, skips argparse and the other commands' modules: its
start-up was four times Python's, most of it building the parser of every
command (tests/test_cli_fast_path.py keeps its answer the full path's).
"""

from __future__ import annotations

import sys
from types import SimpleNamespace

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the start-up of verify --json)

if TYPE_CHECKING:
    import argparse


def _argument_parser_class():
    import argparse

    class ArgumentParser(argparse.ArgumentParser):
        """argparse's usage and error lines echo what was typed: shown through the one sanitiser."""

        def _print_message(self, message, file=None) -> None:
            from .sanitise import visible_lines

            super()._print_message(visible_lines(message) if message else message, file)

    return ArgumentParser


def build_parser() -> argparse.ArgumentParser:
    import argparse
    import importlib

    from .commands import COMMAND_MODULES

    parser = _argument_parser_class()(
        prog="archcurator",
        description="Pre-flight verifier and curator's workbench for neural-network designs. "
                    "With no command, opens the curator's app.",
    )
    parser.add_argument("--db", help="DuckDB store (default: user data folder; $ARCHCURATOR_DB overrides)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        mod = importlib.import_module(f"{__package__}.commands.{name}")
        before = set(sub.choices)
        mod.register(sub)
        for cmd in set(sub.choices) - before:
            sp = sub.choices[cmd]
            if not any("--db" in a.option_strings for a in sp._actions):
                sp.add_argument("--db", default=argparse.SUPPRESS,
                                help="DuckDB store (default: user data folder; $ARCHCURATOR_DB overrides)")
    return parser


def _subparsers(parser: argparse.ArgumentParser):
    import argparse

    return next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)


def _innermost(parser: argparse.ArgumentParser, args) -> argparse.ArgumentParser:
    """The (sub)parser of the command the arguments named: `archcurator kb merge` -> kb merge's."""
    while (action := _subparsers(parser)) is not None:
        chosen = getattr(args, action.dest, None)
        if chosen not in action.choices:
            break
        parser = action.choices[chosen]
    return parser


def _take_late_positionals(parser: argparse.ArgumentParser, args, extra: list[str]) -> list[str]:
    """`import a.json --json b.json`: argparse stops filling a many-valued positional at the first
    flag; the files after it belong to it as much as the ones before."""
    import argparse

    many = [a for a in parser._actions if not a.option_strings and a.nargs in ("+", "*")
            and not isinstance(a, argparse._SubParsersAction)]
    if len(many) != 1 or any(x.startswith("-") and x != "-" for x in extra):
        return extra
    getattr(args, many[0].dest).extend(extra)
    return []


def _command_name(parser: argparse.ArgumentParser, args) -> str:
    return _innermost(parser, args).prog.removeprefix("archcurator").strip()


def _verify_json_file(argv: list[str]) -> str | None:
    """The FILE of `verify FILE --json` or `verify --json FILE`, the forms argparse reads the one way; None
    for any other command line (a flag-like FILE, `--`, `--db`, an abbreviation, -h), which argparse reads."""
    if len(argv) != 3 or argv[0] != "verify":
        return None
    rest = argv[1:]
    if rest.count("--json") != 1:
        return None
    rest.remove("--json")
    file = rest[0]
    return None if file.startswith("-") else file


def main(argv: list[str] | None = None) -> int:
    own_process = argv is None  # the process's own command line (a test passes its own argv)
    argv = sys.argv[1:] if argv is None else argv
    file = _verify_json_file(argv)
    if file is not None:
        from .commands import verify_cmd

        if own_process:
            return _verify_json_then_exit(verify_cmd.run, SimpleNamespace(command="verify", file=file, json=True))
        return _run("verify", verify_cmd.run, SimpleNamespace(command="verify", file=file, json=True))
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra:
        extra = _take_late_positionals(_innermost(parser, args), args, extra)
    if extra:
        # argparse leaves flags it does not know to the top parser, whose usage says nothing
        # of the subcommand the user was typing: the subcommand's own usage does
        _innermost(parser, args).error(f"unrecognized arguments: {' '.join(extra)}")
    if not args.command:
        if sys.stdout is None or not sys.stdout.isatty():
            # the app draws on a terminal: piped or redirected (`archcurator | head`), it would wait
            # for keys nobody sees, so one line says so and where the commands are listed
            print("archcurator: the app needs a terminal (standard output is not one); "
                  "`archcurator --help` lists the commands", file=sys.stderr)
            return 2
        from .app_entry import open_app

        return open_app(args.db)
    return _run(_command_name(parser, args), args.func, args)


def _verify_json_then_exit(run, args) -> int:
    """`verify FILE --json` as a process of its own, which ends when it has answered: the cyclic garbage
    collector is off (the verifier turns it off for its walk anyway; imports make almost no garbage), and
    what is left is frozen before Python's exit, whose collections walked every object the imports made:
    the collector's passes were a sixth of the command's start-up and exit."""
    import gc

    gc.disable()
    try:
        return _run("verify", run, args)
    finally:
        gc.freeze()


# The status of `archcurator … | head -1` once head has gone: what a process killed by SIGPIPE reports from a
# shell (128 + 13), the convention of cat, grep and ls; none of SPEC §4's statuses (0, 1, 2) nor 130 (interrupted)
PIPE_CLOSED = 141


def _run(command: str, func, args) -> int:
    try:
        rc = int(func(args) or 0)
        # a short answer sits in stdout's buffer until here: a reader gone early is met now, inside this
        # guard, not in the interpreter's exit flush (an "Exception ignored" message and status 120)
        if sys.stdout is not None:  # None when started with stdout closed (>&-): print() wrote nowhere
            sys.stdout.flush()
        return rc
    except BrokenPipeError:
        # before OSError (it is one): a reader that stopped reading is not a file system refusal
        return _pipe_closed()
    except OSError as exc:
        # the last guard: a file system refusal a command did not foresee (a name too long,
        # a full disk) is still one line naming the file
        from .commands.errors import fail

        where = exc.filename if exc.filename is not None else "(file system)"
        return fail(command, where, exc.strerror or exc)
    except KeyboardInterrupt:
        print("archcurator: interrupted", file=sys.stderr)
        return 130


def _pipe_closed() -> int:
    """Silent: what is still buffered for the closed pipe goes to /dev/null, so that the exit flush does not
    raise again. Only the process's own stdout is pointed there (a caller's capture is left alone)."""
    import os

    if sys.stdout is sys.__stdout__ and sys.stdout is not None:
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            os.close(devnull)
        except (OSError, ValueError):
            pass
    return PIPE_CLOSED


if __name__ == "__main__":
    sys.exit(main())

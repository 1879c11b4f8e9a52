"""`archcurator import PATH…`: store designs from archgraph files, folders, JSONL batches and .py sources.

Exit 0 when nothing was rejected, 1 when some lines were rejected (the rest
imported), 2 when an input could not be read at all (nothing is written) or
the store could not be opened.
"""

from __future__ import annotations

import argparse
import json
import sys

from .argtypes import positive_int
from .errors import error_line
from .output import say

PROGRESS_MIN = 200  # designs before a progress bar is worth showing


def register(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "import",
        help="store designs from archgraph files, folders, JSONL batches or .py files",
        description=(
            "Verify and store designs. PATH is an archgraph/1 .json file, a folder of them (and of "
            ".jsonl batches), a .jsonl batch (one design a line, SPEC §2) or a .py file (with --entry). "
            "A design whose id is already stored adds nothing. Design files get their id from their "
            "'name' (else the file name) and author 'human' unless --author says otherwise."),
    )
    p.add_argument("paths", nargs="+", metavar="PATH")
    p.add_argument("--author", choices=("human", "agent", "reference"),
                   help="author of design files (default human) and of batch lines that do not say")
    p.add_argument("--model", help="model of design files / batch lines that do not say")
    p.add_argument("--task-set", dest="task_set", help="task set of design files / batch lines that do not say")
    p.add_argument("--run", dest="run_name", metavar="RUN",
                   help="recorded run of design files / batch lines that do not say")
    p.add_argument("--entry", help=".py files: the class or builder function to read")
    p.add_argument("--args", dest="py_args", metavar="JSON", help=".py files: keyword arguments of the entry")
    p.add_argument("--input", dest="py_inputs", action="append", default=[], metavar="SHAPE[:DTYPE]",
                   help=".py files: one per forward argument, e.g. 2,3,32,32 or 2,16:int64")
    p.add_argument("--workers", type=positive_int, default=None,
                   help="processes verifying a big batch (default: 2 from 400 designs on; 1: none)")
    p.add_argument("--json", action="store_true", help="print what happened as JSON")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    p.set_defaults(func=run)
    return p


def _err(line: str) -> None:
    say(error_line("import", None, line), file=sys.stderr)


def run(args) -> int:
    from archcurator.core import jsontext
    from archcurator.core.imports import Defaults, ImportInputError, PyOptions, plan
    from archcurator.store.connection import StoreError
    from archcurator.store.importers import import_batches

    py_args = None
    if getattr(args, "py_args", None):
        try:
            py_args = jsontext.loads(args.py_args)
        except json.JSONDecodeError as exc:
            _err(f"--args: not JSON: {exc.msg}")
            return 2
        if not isinstance(py_args, dict):
            _err("--args: must be a JSON object of keyword arguments")
            return 2
    defaults = Defaults(author=args.author, model=args.model, task_set=args.task_set, run=args.run_name)
    py = PyOptions(entry=args.entry, args=py_args, inputs=list(args.py_inputs or []))
    db = getattr(args, "db", None)
    bundles, paths = _split_question_bundles(args.paths)
    try:
        batches = plan(paths, py) if paths else []
    except ImportInputError as exc:
        _err(str(exc))
        return 2
    code = _import_bundles(db, bundles, args) if bundles else 0
    if code == 2 or not batches:
        return code
    total = sum(b.count for b in batches)
    show = not args.quiet and not args.json and (sys.stderr.isatty() or total >= 10 * PROGRESS_MIN) \
        and total >= PROGRESS_MIN
    bar = None
    try:
        if show:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

            bar = Progress(TextColumn("importing"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                           console=Console(stderr=True), transient=True)
            bar.start()
            task = bar.add_task("import", total=total)
            progress = lambda done, n: bar.update(task, completed=done)  # noqa: E731
        else:
            progress = None
        result = import_batches(db, batches, defaults=defaults, workers=args.workers, progress=progress)
    except (ImportInputError, StoreError) as exc:
        if bar:
            bar.stop()
        _err(str(exc))
        return 2
    finally:
        if bar:
            bar.stop()
    for rej in result.rejected:
        _err(str(rej))
    if args.json:
        say(json.dumps(result.to_dict(), indent=2, default=str))
        return max(code, result.exit_code)
    ung = len(result.ungenerated)
    say(f"imported {len(result.imported)}" + (f" ({ung} ungenerated)" if ung else "")
          + f", skipped {len(result.skipped)} (already stored), rejected {len(result.rejected)}")
    for new, old in result.present.items():
        say(f"  {new}: already present as {old} (same graph)")
    if len(result.batches) > 1:
        for b in result.batches:
            say(f"  {b.label}: imported {b.imported}, skipped {b.skipped}, rejected {b.rejected}")
    return max(code, result.exit_code)


def _split_question_bundles(paths):
    """ArchitectureIQ bundles (and our question files) go to the knowledge base, the rest to designs."""
    from archcurator.core.aiq.bundle import is_bundle

    bundles, rest = [], []
    for p in paths:
        (bundles if is_bundle(p) else rest).append(p)
    return bundles, rest


def _import_bundles(db, bundles, args) -> int:
    from archcurator.core.aiq.bundle import BundleError
    from archcurator.store.connection import StoreError
    from archcurator.store.kb import import_bundle

    code = 0
    for path in bundles:
        try:
            s = import_bundle(db, path)
        except BundleError as exc:  # this bundle cannot be read at all: one line, the others still import
            _err(str(exc))
            code = 2
            continue
        except StoreError as exc:
            _err(str(exc))
            return 2
        for where, message in s.rejected:
            _err(f"{where}: rejected: {message}")
        if s.rejected:
            code = max(code, 1)
        if args.json:
            say(json.dumps({"questions": s.to_dict(), "path": str(path)}, indent=2))
        else:
            say(f"{path}: questions imported {len(s.imported)}, skipped {len(s.skipped)} (already stored), "
                  f"rejected {len(s.rejected)}")
    return code

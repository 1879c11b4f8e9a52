"""`archcurator parse FILE.py --entry NAME [--args JSON] --input SHAPE[:DTYPE] ... [--json]`.

Reads PyTorch source without importing or executing it (core.parse) and
prints the archgraph/1 design (``--json``) or a short summary.  A file that
cannot be read, a NAME that is not there or nothing of it recognised: one
line on stderr naming the file and the problem, exit 2.  Imports neither
textual nor torch.
"""

from __future__ import annotations

import json
import sys

from .errors import fail
from .output import say


def register(subparsers):
    p = subparsers.add_parser(
        "parse",
        help="read a PyTorch model from source (never imported or executed) into an archgraph/1 design",
        description="Read the class or builder function NAME in FILE.py by static analysis only: the file and "
                    "its package are never imported or executed. What cannot be followed becomes a warning "
                    "naming file:line (kept in meta.parser_warnings).",
    )
    p.add_argument("file", metavar="FILE.py", help="Python source holding the model")
    p.add_argument("--entry", required=True, metavar="NAME", help="nn.Module class or builder function to read")
    p.add_argument("--args", dest="entry_args", metavar="JSON",
                   help="keyword arguments of NAME as a JSON object, e.g. '{\"num_classes\": 10}'")
    p.add_argument("--input", dest="inputs", action="append", default=[], metavar="SHAPE[:DTYPE]",
                   help="one per forward argument, e.g. 2,3,32,32 or 2,16:int64 (symbols allowed: B,3,H,W); "
                        "dim 0 is the batch (the cost is quoted per sample); without it the inputs are symbolic")
    p.add_argument("--package-root", dest="package_roots", action="append", default=[], metavar="DIR",
                   help="a folder holding installed packages the file imports (an unpacked wheel); searched "
                        "before site-packages; their source is read, never imported")
    p.add_argument("--mode", choices=("train", "eval"),
                   help="the mode the model runs in, written into the design's train.mode and checked by verify "
                        "(eval: batch statistics are not needed, so BatchNorm at batch 1 is fine); forward's "
                        "self.training reads it")
    p.add_argument("--json", action="store_true", help="print the archgraph/1 design as JSON")
    p.set_defaults(func=run)
    return p


def _fail(path, message):
    return fail("parse", path, message)


def run(args) -> int:
    from archcurator.core import jsontext
    from archcurator.core.parse import ParseFailure, parse_input_spec, parse_source

    path = args.file
    entry_args = None
    if getattr(args, "entry_args", None):
        try:
            entry_args = jsontext.loads(args.entry_args)
        except json.JSONDecodeError as exc:
            return _fail(path, f"--args is not valid JSON ({exc.msg} at column {exc.colno})")
        if not isinstance(entry_args, dict):
            return _fail(path, "--args must be a JSON object")
    from archcurator.core.budget import AddressSpace
    from archcurator.core.parse.interp import MEMORY_LIMIT

    try:
        inputs = [parse_input_spec(s) for s in (args.inputs or [])] or None
        # the parse's memory budget as a hard limit on this process: reading the source into a syntax
        # tree is one C call that no polling check can stop (a 2.6 MB list literal grew it by 1.2 GB)
        with AddressSpace(MEMORY_LIMIT):
            result = parse_source(path, args.entry, entry_args, inputs, memory_limit=MEMORY_LIMIT,
                                  package_roots=getattr(args, "package_roots", None) or (),
                                  mode=getattr(args, "mode", None))
    except ParseFailure as exc:
        return _fail(path, exc)
    design = result.design
    if args.json:
        json.dump(design, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    _summary(design, result.warnings)
    return 0


def _summary(design, warnings):
    from collections import Counter

    nodes = design["nodes"]
    ops = Counter(n["op"] for n in nodes)
    ins = ", ".join(f"{i['id']} {i['shape']} {i['dtype']}" for i in design["inputs"])
    say(f"{design['name']}  ({design['meta']['source']})")
    say(f"  inputs:  {ins}")
    say(f"  nodes:   {len(nodes)}  (" + ", ".join(f"{op} {n}" for op, n in ops.most_common(8))
          + (", ..." if len(ops) > 8 else "") + ")")
    say(f"  outputs: {', '.join(design['outputs'])}")
    try:
        from archcurator.core.parse import design_params
        params = design_params(design)
        if params is not None:
            say(f"  params:  {params:,}")
    except Exception:  # noqa: BLE001 - the summary is best effort
        pass
    if warnings:
        not_kept = (design.get("meta") or {}).get("parser_warnings_not_kept") or 0
        say(f"  {len(warnings) + not_kept} thing(s) not followed"
            + (f" ({len(warnings)} kept in meta.parser_warnings)" if not_kept else "") + ":")
        for w in warnings[:20]:
            say(f"    {w}")
        if len(warnings) > 20:
            say(f"    ... and {len(warnings) - 20} more (see --json meta.parser_warnings)")

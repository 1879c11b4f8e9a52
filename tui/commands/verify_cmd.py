"""`archcurator verify FILE.json [--json]`: the verifier's answer for one design."""

from __future__ import annotations

import json


def register(sub) -> None:
    p = sub.add_parser("verify", help="verify one archgraph/1 design (verdict, findings, cost)")
    p.add_argument("file", help="an archgraph/1 JSON file, or - for standard input")
    p.add_argument("--json", action="store_true", help="print the SPEC §4 JSON answer")
    p.set_defaults(func=run)


def run(args) -> int:
    from archcurator.core.graph import DesignError

    try:
        design, report = _verify_within_budget(args.file)
    except (DesignError, TooCostly) as exc:
        name = STDIN_NAME if args.file == "-" else args.file
        # the error line's sanitiser is imported only for a design that fails: `verify --json` is run once
        # per design by scripts, and its start-up counts
        from .errors import fail

        problem = exc if isinstance(exc, DesignError) else f"too costly to verify: {exc}"
        return fail("verify", name, problem)
    if args.json:
        # SPEC's JSON: no NaN, no Infinity. json.dumps escapes every control and non-ASCII character, so the text
        # is already what the sanitiser would show (commands/output.py) and is printed without it
        print(json.dumps(report.to_dict(), indent=2, allow_nan=False))
        return 0
    print_report(design, report)
    return 0


#: how standard input (FILE given as -) is named in an error line
STDIN_NAME = "<stdin>"


class TooCostly(Exception):
    """Reading and verifying the design ran past the command's CPU or memory budget."""


def _verify_within_budget(path):
    """Read and verify one design inside the budget an import gives each design: its CPU seconds
    ($ARCHCURATOR_DESIGN_BUDGET_S) and a bounded growth of this process's memory."""
    import gc

    from archcurator.core.budget import MEMORY_BUDGET, AddressSpace, Budget, OverBudget, design_budget_s
    from archcurator.core.graph import Design
    from archcurator.core.verify import verify_graph

    seconds = design_budget_s()
    collecting = gc.isenabled()
    try:
        with AddressSpace(MEMORY_BUDGET), Budget(seconds):
            design = Design.load(path) if path != "-" else _from_stdin(Design)
            return design, verify_graph(design)
    except OverBudget:
        raise TooCostly(f"takes more than {seconds:g} s of CPU ($ARCHCURATOR_DESIGN_BUDGET_S sets the "
                        "budget)") from None
    except MemoryError:
        raise TooCostly(f"needs more than {MEMORY_BUDGET >> 20} MB") from None
    finally:
        if collecting and not gc.isenabled():
            gc.enable()  # the budget may end the verifier between its gc.disable() and its finally


def _from_stdin(design_class):
    import sys

    from archcurator.core import jsontext
    from archcurator.core.graph import DesignError

    if sys.stdin is None:  # started with stdin closed (<&-): Python leaves no stream to read
        raise DesignError("cannot read: standard input is closed")
    try:
        text = jsontext.read_stream(sys.stdin.buffer)
    except (OSError, UnicodeDecodeError, jsontext.FileRefused) as exc:
        raise DesignError(jsontext.read_problem(exc)) from None
    return design_class.from_json(text, source=STDIN_NAME)


ROWS_PER_RULE = 20
NODES_SHOWN = 8


def _node_list(nodes) -> str:
    if len(nodes) <= NODES_SHOWN:
        return ", ".join(nodes)
    return ", ".join(nodes[:NODES_SHOWN]) + f", … ({len(nodes):,} in all)"


def print_report(design, report) -> None:
    from rich.table import Table
    from rich.text import Text

    from .output import console as safe_console

    console = safe_console()
    colour = {"pass": "green", "warn": "yellow", "block": "red"}[report.verdict]
    console.print(Text.assemble((str(design.name or design.source), "bold"), "  verdict: ",
                                (report.verdict.upper(), f"bold {colour}"),
                                f"  ({report.count('block')} block, {report.count('warn')} warn)"))
    if report.findings:
        table = Table(show_lines=False, expand=True)
        table.add_column("severity", no_wrap=True)
        table.add_column("rule", no_wrap=True)
        table.add_column("nodes", overflow="fold")
        table.add_column("message", overflow="fold", ratio=3)
        # a design of thousands of self-loops has thousands of findings of one rule: the table shows
        # a few of each rule and counts the rest (--json lists them all); rendering every row took
        # rich a minute for a 2 MB design whose verification took three seconds
        shown: dict[str, int] = {}
        from archcurator.core.report import display_key

        positions = {nid: i for i, nid in enumerate([*design.input_ids, *(n.id for n in design.nodes)])}
        for f in sorted(report.findings, key=lambda f: display_key(f.rule, f.severity, f.nodes, positions)):
            shown[f.rule] = shown.get(f.rule, 0) + 1
            sev = Text("block", style="red") if f.severity == "block" else Text("warn", style="yellow")
            if shown[f.rule] <= ROWS_PER_RULE:
                table.add_row(sev, f.rule, _node_list(f.nodes), f.message)
            elif shown[f.rule] == ROWS_PER_RULE + 1:
                more = sum(1 for g in report.findings if g.rule == f.rule) - ROWS_PER_RULE
                table.add_row(sev, f.rule, "", f"… and {more:,} more findings of this rule (verify --json lists all)")
        console.print(table)
    c = report.cost
    if c:
        q = c["quote"]
        flops = c["flops_per_sample"]
        console.print(
            f"params {c['params']:,}   forward {flops / 1e9:.3f} GFLOPs/sample   "
            f"train memory {c['memory']['total_bytes'] / 1024 ** 3:.2f} GiB\n"
            f"one run: ${q['usd']:,.4f} on {q['device']} (${q['price_per_hour']}/h, {q['peak_tflops']} TFLOP/s peak at "
            f"{q['utilisation']:.0%} utilisation, {q['steps']} steps x batch {q['batch_size']}, "
            f"prices of {q['price_date']})"
        )
        for a in c.get("assumptions", []):
            console.print(Text(f"  assumed: {a}", style="dim"))

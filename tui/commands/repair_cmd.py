"""`archcurator repair FILE.json [--run] [--json]`: the smallest verified edits that remove every block.

The search is `core.repair` (pure: the verifier only). With `--run` the repaired design is built and
run one forward pass in torch through the runs machinery (a child process under a time and memory
limit), and `ran` is true only when it did. The answer's shape is README's (SPEC §4's row):
{"design", "verdict", "ran", "repairs": [{"finding", "edits", "design", "verdict", "ran"}]}.
Exit 0 when the answer was produced (a repair found or not), 2 when the file cannot be read.
"""

from __future__ import annotations

import json

from .argtypes import positive_float, positive_int
from .errors import fail
from .output import say


def register(sub) -> None:
    p = sub.add_parser(
        "repair", help="the smallest verified edits that make a blocked design verify (optionally run in torch)",
        description="For each block finding, tries candidate edits from the rule's fix (an argument, an inserted "
                    "Flatten/Transpose/Unsqueeze/projection, a rewired operand, a removed node), cheapest first, "
                    "re-verifying each; the first that removes the block without making another finding worse "
                    "is the repair.")
    p.add_argument("file", help="an archgraph/1 JSON file (or one JSONL batch record with a graph)")
    p.add_argument("--run", action="store_true",
                   help="build and run the repaired design one forward pass in torch (a child process with a "
                        "time and memory limit); `ran` is true only when it ran")
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto", help="device of --run")
    p.add_argument("--time-limit", type=positive_float, default=20.0, metavar="S",
                   help="seconds the search may take (default 20)")
    p.add_argument("--max-candidates", type=positive_int, default=3000, metavar="N",
                   help="candidate designs the search may verify (default 3000)")
    p.add_argument("--run-time-limit", type=positive_float, default=120.0, metavar="S",
                   help="wall-time limit of the --run child in seconds (default 120)")
    p.add_argument("--run-tries", type=positive_int, default=3, metavar="N",
                   help="when torch refuses the repair, run the next one in cost order, up to N in all (default 3)")
    p.add_argument("--memory-limit", type=positive_int, default=None, metavar="MB",
                   help="memory limit of the --run child (default: the runs' default)")
    p.add_argument("--json", action="store_true", help="print the JSON answer (README)")
    p.set_defaults(func=run)


def forward_runner(device: str = "auto", time_limit_s: float = 120.0, memory_limit_mb: int | None = None):
    """run(design_dict) -> RunResult: one forward pass in a child process (core.runs)."""
    from archcurator.core.runs import RunSpec, run_sync

    def go(design: dict):
        return run_sync(RunSpec(kind="forward", design=design, device=device, time_limit_s=time_limit_s,
                                memory_limit_mb=memory_limit_mb, tags={"source": "repair"}))

    return go


def run(args) -> int:
    from archcurator.core.repair import repair_design

    from .run_cmd import read_design

    try:
        design, _ = read_design(args.file)
    except ValueError as exc:
        return fail("repair", args.file, exc)
    rep = repair_design(design, time_limit_s=args.time_limit, max_candidates=args.max_candidates)
    if args.run:
        rep.prove(forward_runner(args.device, args.run_time_limit, args.memory_limit), tries=args.run_tries)
    if args.json:
        say(json.dumps(rep.to_dict(), indent=2, allow_nan=False))
        return 0
    _print(design, rep)
    return 0


def _print(design: dict, rep) -> None:
    from archcurator.core.repair import describe

    name = design.get("name") or "design"
    before = rep.original_report
    if before.verdict != "block":
        say(f"{name}: verdict {before.verdict}; nothing blocks, nothing to repair")
        return
    for i, r in enumerate(rep.repairs, 1):
        f = r.finding
        say(f"{i}. {f['rule']} at {', '.join(f['nodes']) or 'the graph'}: {f['message']}")
        if r.design is None:
            say("   no repair found" + (f" (stopped by the {rep.stopped} limit)" if rep.stopped else ""))
            continue
        for e in r.edits:
            say(f"   {describe(e)}")
        say(f"   then: {r.verdict}")
    if rep.found:
        ran = {True: "; runs in torch", False: "; but it did NOT run in torch", None: ""}[rep.ran]
        msg = f"{name}: repaired with {len(rep.edits)} edit(s), verdict {rep.verdict}{ran}"
        if rep.ran is False and rep.run:
            msg += f" ({rep.run.get('exception')}: {str(rep.run.get('message'))[:200]})"
        say(msg)
    else:
        say(f"{name}: no repair found ({rep.tried} candidates verified in {rep.seconds:.1f} s)")

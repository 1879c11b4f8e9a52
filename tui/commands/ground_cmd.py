"""`archcurator ground [--json]`: the grounding study — verdict vs observed failure in torch."""

from __future__ import annotations

import json
import time


def register(sub) -> None:
    p = sub.add_parser("ground", help="run every zoo and corrupted graph in torch; verdict vs observed failure")
    p.add_argument("--json", action="store_true", help="print the summary and every case as JSON")
    p.add_argument("--timeout", type=float, default=None, help="seconds per graph (default 20)")
    p.add_argument("--device", default="auto",
                   help="where what meta cannot see runs: auto (GPU if present) | cpu | cuda")
    p.add_argument("--filter", default=None, help="only cases whose id contains this text")
    p.add_argument("--full", action="store_true",
                   help="run every whole graph for real after meta (slow on a CPU; checks the fast protocol)")
    p.add_argument("--threads", type=int, default=0, help="torch threads in the child (default: torch's)")
    p.add_argument("--mutations", type=int, default=100,
                   help="random mutations of zoo graphs to add as the out-of-distribution arm (default 100; 0: none)")
    p.set_defaults(func=run)


def run(args) -> int:
    from archcurator.core.ground import DEFAULT_TIMEOUT, ground_set, load_zoo, mutation_set, run_study, summarize

    t0 = time.perf_counter()
    cases = ground_set()
    if args.mutations:
        cases += mutation_set(load_zoo(), args.mutations)
    if args.filter:
        cases = [c for c in cases if args.filter in c["case"]]
    timeout = args.timeout or DEFAULT_TIMEOUT
    if args.json:
        results = run_study(cases, timeout=timeout, device=args.device, threads=args.threads, full=args.full)
        summary = summarize(results)
        summary["wall_s"] = round(time.perf_counter() - t0, 2)
        from .output import say

        say(json.dumps({"summary": summary, "cases": [r.to_dict() for r in results]}, indent=2))
        return 0

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from .output import console as safe_console

    console = safe_console(stderr=False)
    with Progress(TextColumn("[bold]ground"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  TextColumn("{task.fields[last]}", style="dim", markup=False), console=console,
                  transient=False) as bar:
        task = bar.add_task("ground", total=len(cases), last="starting torch…")

        def on_result(r):
            mark = "ok" if r.agrees else "DISAGREES"
            bar.update(task, advance=1, last=f"{r.case} {r.status} {mark}"[:70])

        results = run_study(cases, timeout=timeout, device=args.device, threads=args.threads, full=args.full,
                             on_result=on_result)
        bar.update(task, last="")
    summary = summarize(results)
    summary["wall_s"] = round(time.perf_counter() - t0, 2)
    print_summary(console, summary, results)
    return 0


def print_summary(console, s: dict, results) -> None:
    from rich.table import Table

    m = s["matrix"]
    from rich.text import Text

    console.print(Text.assemble((f"{s['graphs']} graphs", "bold"),
                                f" ({s['clean']} clean zoo, {s['corrupted']} corrupted) in {s['wall_s']:.1f} s: "
                                f"{s['ran']} ran, {s['failed_in_torch']} failed in torch, "
                                f"{s['refused_by_builder']} refused by our builder, "
                                f"{s.get('timed_out_or_killed', 0)} stopped by the time or memory limit"))
    t = Table(title="verdict vs observed (overall)", show_lines=False)
    t.add_column("")
    t.add_column("did not run", justify="right")
    t.add_column("ran", justify="right")
    t.add_row("verdict block", str(m["block_failed"]), str(m["block_ran"]))
    t.add_row("not block", str(m["notblock_failed"]), str(m["notblock_ran"]))
    console.print(t)
    colour = "green" if not s["disagreements"] else "red"
    console.print(Text.assemble("block ⇔ failure: ", (f"{s['agreement']:.1%}", f"bold {colour}"), " of graphs "
                  f"({s['graphs'] - len(s['disagreements'])}/{s['graphs']}); "
                  f"warn-only graphs that failed: {len(s['warn_only_failed'])}; "
                  f"corruptions not what they claim: {len(s['claims_broken'])}; "
                  f"timeouts: {len(s['timeouts'])}"))
    mu = s.get("mutations") or {}
    if mu.get("graphs"):
        mm = mu["matrix"]
        console.print(f"out of distribution: {mu['graphs']} random mutations of zoo graphs: block ⇔ failure on "
                      f"{mu['agreement']:.1%} (block & failed {mm['block_failed']}, block & ran {mm['block_ran']}, "
                      f"not block & failed {mm['notblock_failed']}, not block & ran {mm['notblock_ran']}); "
                      f"{mu['failed_in_torch']} failed in torch, {mu['refused_by_builder']} refused by our builder, "
                      f"{mu.get('timed_out_or_killed', 0)} stopped by the time or memory limit")
    rt = Table(title="per rule (every case where the rule fires)")
    for col in ("rule", "severity", "cases", "failed", "ran", "holds"):
        rt.add_column(col, justify="right" if col in ("cases", "failed", "ran") else "left")
    for rule, row in s["per_rule"].items():
        holds = row["ran"] == 0 if row["severity"] == "block" else True
        if row["severity"] == "warn":
            # a warn rule holds when none of its graphs failed for a reason no block rule saw
            bad = [r for r in results if rule in r.fired and r.failed and not r.blocked]
            holds = not bad
        rt.add_row(rule, row["severity"], str(row["cases"]), str(row["failed"]), str(row["ran"]),
                   Text("yes", style="green") if holds else Text("NO", style="red"))
    console.print(rt)
    if s["exceptions"]:
        console.print("observed failures by class: " + ", ".join(f"{k} {v}" for k, v in s["exceptions"].items()))
    for title, ids in (("disagree", s["disagreements"]), ("claims broken", s["claims_broken"]),
                       ("timeouts", s["timeouts"]), ("killed", s["killed"])):
        if ids:
            console.print(Text(f"{title}:", style="red"))
            byid = {r.case: r for r in results}
            for cid in ids:
                r = byid[cid]
                console.print(f"  {cid}: verdict {r.verdict} {r.blocking or ''}; {r.status} "
                              f"{r.exception or ''} at {r.stage}: {r.message[:120]}")

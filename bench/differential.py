"""Differential testing of the verifier against real torch (NNSmith-style), in the project.

    python bench/differential.py [--first 0] [--count 10000] [--json OUT] [--show 20]

Draws `count` random designs from the op table (core.ground.generate: it
knows nothing of the checks), runs each for real, eagerly on the CPU, in
the mode and at the sizes it declares (one child process), verifies each one
here, and prints: agreement (block <=> torch fails), false blocks, crashes
that got no block (apart: those whose warn states a condition on a symbolic
size), builder refusals apart from failures in torch, and the table per op.
The goal: agreement >= 99%, no false block, no crash without a block unless
its warn states a condition some value satisfies.
"""

from __future__ import annotations

import argparse
import json
import sys
import time


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="differential", description=__doc__.splitlines()[0])
    ap.add_argument("--first", type=int, default=0)
    ap.add_argument("--count", type=int, default=10_000)
    ap.add_argument("--timeout", type=float, default=20.0)
    ap.add_argument("--json", default=None, help="write the summary and every disagreement here")
    ap.add_argument("--show", type=int, default=15, help="disagreements to print")
    args = ap.parse_args(argv)

    from archcurator.core.ground.differential import run_differential, summarize_differential

    t0 = time.perf_counter()
    done = [0]

    def progress(r):
        done[0] += 1
        if done[0] % 500 == 0:
            print(f"  {done[0]} designs, {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)

    results = run_differential(args.first, args.count, timeout=args.timeout, on_result=progress)
    s = summarize_differential(results)
    wall = time.perf_counter() - t0
    m = s["matrix"]
    print(f"{s['designs']} random designs (seeds {args.first}..{args.first + args.count - 1}) in {wall:.0f} s: "
          f"{s['ran']} ran, {s['failed_in_torch']} failed in torch, {s['refused_by_builder']} refused by our "
          f"builder, {s['killed']} killed; verifier crashes: {len(s['verifier_crashes'])} (goal 0)")
    for r in s["resource_limited"]:
        print(f"  not judged, {r['status']}: {r['case']} ({r['message'][:110]}); verdict {r['verdict']} "
              f"{r['fired'][:3]}")
    print(f"block <=> torch fails: {s['agreement']:.2%} (goal >= 99%); counting a crash whose warn states a "
          f"symbol condition as agreement: {s['agreement_counting_conditions']:.2%}")
    print(f"  block & failed {m['block_failed']}, block & ran {m['block_ran']} (false blocks; goal 0), "
          f"not block & failed {m['notblock_failed']} ({len(s['crashes_with_condition_warn'])} with a symbol "
          f"condition warn, {len(s['crashes_without_block'])} without; goal 0), not block & ran {m['notblock_ran']}")
    print(f"{'op':<28}{'designs':>8}{'agree':>8}{'false block':>12}{'crash, no block':>16}{'crash, cond. warn':>18}")
    for op, row in s["per_op"].items():
        if row["designs"] == row["agree"] and not row["false_block"] and not row["crash_no_block"]:
            continue
        print(f"{op:<28}{row['designs']:>8}{row['agree']:>8}{row['false_block']:>12}{row['crash_no_block']:>16}"
              f"{row['crash_condition_warn']:>18}")
    agreed = sum(1 for r in s["per_op"].values() if r["designs"] == r["agree"])
    print(f"(ops where everything agreed are not listed: {agreed} of {len(s['per_op'])})")
    byid = {r.case: r for r in results}
    shown = 0
    for cid in s["false_blocks"] + s["crashes_without_block"]:
        if shown >= args.show:
            break
        r = byid[cid]
        shown += 1
        print(f"  {cid}: verdict {r.verdict} {r.blocking[:2]}; torch {r.status} {r.exception} at "
              f"{r.node}({r.op_of(r.node)}): {r.message[:150]}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"summary": s, "disagreements": [byid[c].to_dict() for c in
                                                       s["false_blocks"] + s["crashes_without_block"]]}, fh,
                      indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

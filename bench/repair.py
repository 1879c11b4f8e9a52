"""Repairs of blocked designs, measured: found, verified, and run in torch.

    python bench/repair.py [--zoo] [--first 370000 --count 400] [--run 100] [--json OUT]

The blocked designs: every corrupted zoo graph the verifier blocks (`core.ground.corruption_set`,
with `--zoo`) and the blocked ones among the differential generator's designs of seeds
first..first+count-1 (`core.ground.generate`, which knows nothing of the checks or the repairs).
For each, `core.repair.repair_design` searches a repair; the run prints how many were found, checks
that every repaired design verifies without a block, and, with `--run N`, proves a sample of N
repaired designs the way `archcurator repair --run` does (one forward pass in torch in a child
process, under the runs' time and memory limits; the zoo's at a batch of 2), counting those that ran.
The sample is drawn from each source in proportion to its repairs.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
import warnings
from collections import Counter


def blocked_designs(zoo: bool, first: int, count: int) -> list[tuple[str, str, dict]]:
    from archcurator.core.graph import Design
    from archcurator.core.verify import verify_graph

    out = []
    if zoo:
        from archcurator.core.ground import corruption_set

        for case in corruption_set():
            if verify_graph(Design.from_dict(case["graph"])).verdict == "block":
                out.append(("zoo", case["case"], case["graph"]))
    if count:
        from archcurator.core.ground.generate import generate

        warnings.filterwarnings("ignore")
        for seed in range(first, first + count):
            d = generate(seed)
            if verify_graph(Design.from_dict(d)).verdict == "block":
                out.append(("differential", f"gen-{seed}", d))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="repair", description=__doc__.splitlines()[0])
    ap.add_argument("--zoo", action="store_true", help="the zoo's corruptions")
    ap.add_argument("--first", type=int, default=370_000)
    ap.add_argument("--count", type=int, default=0, help="differential designs to draw (blocked ones are kept)")
    ap.add_argument("--run", type=int, default=0, metavar="N", help="prove a sample of N repairs in torch")
    ap.add_argument("--seed", type=int, default=0, help="seed of the --run sample")
    ap.add_argument("--time-limit", type=float, default=20.0, help="search seconds per design")
    ap.add_argument("--json", default=None, help="write every case's outcome here")
    args = ap.parse_args(argv)

    from archcurator.core.graph import Design
    from archcurator.core.repair import describe, repair_design
    from archcurator.core.verify import verify_graph

    t0 = time.perf_counter()
    cases = blocked_designs(args.zoo, args.first, args.count)
    print(f"{len(cases)} blocked designs ({Counter(c[0] for c in cases)}) in {time.perf_counter() - t0:.0f} s",
          flush=True)
    rows = []
    reps = {}
    for source, cid, d in cases:
        t = time.perf_counter()
        rep = repair_design(d, time_limit_s=args.time_limit)
        reps[cid] = rep
        row = {"source": source, "case": cid, "found": rep.found, "seconds": round(time.perf_counter() - t, 2),
               "edits": rep.edits, "kinds": sorted({e["edit"] for e in rep.edits}), "stopped": rep.stopped,
               "blocks": [f.rule for f in rep.original_report.findings if f.severity == "block"]}
        if rep.found:
            after = verify_graph(Design.from_dict(rep.design))
            row["verdict"] = after.verdict
            row["design"] = rep.design
        rows.append(row)
    by_source: dict = {}
    for r in rows:
        s = by_source.setdefault(r["source"], {"blocked": 0, "found": 0, "only_removal": 0})
        s["blocked"] += 1
        s["found"] += r["found"]
        s["only_removal"] += r["found"] and r["kinds"] == ["remove"]
    found = [r for r in rows if r["found"]]
    still_block = [r["case"] for r in found if r["verdict"] == "block"]
    for src, s in by_source.items():
        print(f"{src}: repair found for {s['found']}/{s['blocked']} blocked designs "
              f"({s['found'] / max(s['blocked'], 1):.1%}); {s['only_removal']} of them only remove nodes")
    total = sum(s["blocked"] for s in by_source.values())
    print(f"all: {len(found)}/{total} ({len(found) / max(total, 1):.1%}); repaired designs that still block: "
          f"{len(still_block)} (goal 0) {still_block[:5]}")
    print("not repaired:", Counter(b for r in rows if not r["found"] for b in r["blocks"][:1]).most_common(12))
    if args.run and found:
        from archcurator.core.runs import RunSpec, run_sync

        def run(design: dict, source: str):
            # the differential designs run at the sizes they declare, as `repair --run` does; the zoo's at a
            # batch of 2 (a resnet's declared 32 at 224x224 in training mode takes minutes and gigabytes of a
            # shared CPU, and says nothing more of its shapes)
            return run_sync(RunSpec(kind="forward", design=design, device="cpu", time_limit_s=120.0,
                                    memory_limit_mb=4096, batch_size=2 if source == "zoo" else None))

        pool = {s: [r for r in found if r["source"] == s] for s in by_source}
        rng = random.Random(args.seed)
        share = {s: round(args.run * len(p) / len(found)) for s, p in pool.items()}
        sample = [r for s, p in pool.items() for r in rng.sample(p, min(share[s], len(p)))]
        outcome = Counter()
        for i, r in enumerate(sample, 1):
            rep = reps[r["case"]]
            results = []

            def go(design, source=r["source"], results=results):
                results.append(run(design, source))
                return results[-1]

            r["ran"] = rep.prove(go)  # as `repair --run` does: the next repair when torch refuses one
            res = next((x for x in results if x.status == "ok"), results[0])
            r["runs_tried"] = rep.runs_tried
            r["run"] = {"status": res.status, "exception": res.exception, "message": (res.message or "")[:300]}
            outcome[res.status] += 1
            outcome[f"{r['source']} {'ran' if res.status == 'ok' else 'did not run'}"] += 1
            if res.status != "ok":
                print(f"  did not run: {r['case']} {res.status} {res.exception}: {(res.message or '')[:160]} "
                      f"| {'; '.join(describe(e) for e in r['edits'])[:160]}", flush=True)
            elif rep.runs_tried > 1:
                outcome["ran after torch refused an earlier repair"] += 1
                print(f"  ran at try {rep.runs_tried}: {r['case']} | {'; '.join(describe(e) for e in rep.edits)[:160]}",
                      flush=True)
            if i % 20 == 0:
                print(f"  {i} run, {outcome['ok']} ok, {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
        ran = outcome["ok"]
        print(f"--run sample: {ran}/{len(sample)} repaired designs ran in torch ({ran / len(sample):.1%}); "
              f"{dict(outcome)}")
        if rows:
            print(f"torch-proven repair over the blocked designs sampled: {ran}/{len(sample)} of the found, "
                  f"i.e. about {ran / len(sample) * len(found) / total:.1%} of all blocked designs")
    print(f"{time.perf_counter() - t0:.0f} s in all")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"by_source": by_source, "rows": [{k: v for k, v in r.items() if k != "design"}
                                                        for r in rows]}, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

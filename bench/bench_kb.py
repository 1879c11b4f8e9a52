"""Benchmarks for the ArchitectureIQ executor and the knowledge base; ratios against a
baseline measured in the same run.

    python bench/bench_kb.py [--candidates 6] [--reps 1]

1. Executor: one candidate across 10 seeds, seed-batched (parameters stacked on
   a leading seed dimension, one optimizer) vs the baseline of 10 separate
   single-seed runs of the same code. The finals agree to float rounding (a
   batch of one seed takes another matmul path; two or more seeds give
   bit-identical per-seed results, whatever the others).
2. Knowledge base on the shipped questions: mining the training split, judging
   one proposition on every question (the evidence derivation), building the
   pack, and the replay; the baseline is one pass of feature extraction over the
   questions (what every step needs first).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _t(fn, reps: int = 1) -> float:
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def bench_executor(n: int, reps: int) -> None:
    from archcurator.core.aiq.execute import run_candidate

    qs = [json.loads(line) for line in (ROOT / "assets/aiq/questions.jsonl").read_text().splitlines() if line.strip()]
    picks, fams = [], {}
    for q in qs:  # spread over the families
        if len(picks) >= n:
            break
        if fams.get(q["family"], 0) >= max(1, n // 4):
            continue
        fams[q["family"]] = fams.get(q["family"], 0) + 1
        picks.append((q["dataset"], q["choices"][0]["candidate"]))
    run_candidate({"candidate": picks[0][1], "dataset": picks[0][0], "n_seeds": 1})  # warm-up
    print(f"executor: {len(picks)} shipped candidates x 10 seeds (CPU, 1 thread)")
    ratios = []
    for ds, c in picks:
        fam, steps = ds["family"], c["budget"]["training_steps"]
        batched = {}

        def run_batched(batched=batched, c=c, ds=ds):
            batched["r"] = run_candidate({"candidate": c, "dataset": ds, "n_seeds": 10})

        singles = {}

        def run_single(singles=singles, c=c, ds=ds):
            singles["f"] = [run_candidate({"candidate": c, "dataset": ds, "seeds": [s]})["finals"][0]
                            for s in range(10)]

        tb = _t(run_batched, reps)
        ts = _t(run_single, reps)
        diff = max(abs(x - y) / max(abs(y), 1e-12) for x, y in zip(batched["r"]["finals"], singles["f"]))
        ratios.append(ts / tb)
        print(f"  {fam:<34} {c['model']['type']:<15} {steps:>4} steps: batched {tb:6.2f}s, "
              f"10 single-seed runs {ts:6.2f}s -> {ts / tb:4.1f}x faster; finals agree to {diff:.0e} (relative)")
    print(f"  median speed-up of seed batching: {statistics.median(ratios):.1f}x")


def bench_kb() -> None:
    from archcurator.core.kb.features import view
    from archcurator.core.kb.miner import mine
    from archcurator.core.kb.pack import build_pack
    from archcurator.core.kb.props import Structure, judge
    from archcurator.core.kb.replay import replay
    from archcurator.core.kb.suggest import PropLite, clusters

    qs = [json.loads(line) for line in (ROOT / "assets/aiq/questions.jsonl").read_text().splitlines() if line.strip()]
    views: list = []
    base = _t(lambda: views.__setitem__(slice(None), [view(q) for q in qs]))
    train = [v for v in views if v.split == "train"]
    found: list = []
    t_mine = _t(lambda: found.__setitem__(slice(None), mine(train)))
    st = Structure.from_obj(["budget < 4096"], "optimizer == sgd & momentum == 0 loses")
    t_judge = _t(lambda: [judge(st, v) for v in views])
    props = [PropLite(i + 1, m.structure.render(), m.structure, "proposed", False, m.support, m.contradict)
             for i, m in enumerate(found)]
    pack: list = []
    t_pack = _t(lambda: pack.__setitem__(slice(None), build_pack(props, clusters(props))))
    t_replay = _t(lambda: replay(views, pack, lofo=False))
    from archcurator.core.kb.replay import leave_one_family_out

    t_lofo = _t(lambda: leave_one_family_out(views))
    print(f"knowledge base: {len(qs)} questions ({len(train)} train); baseline = features of every question "
          f"{base * 1000:.0f} ms")
    for name, t in (("mine the training split", t_mine), ("judge one proposition on all", t_judge),
                    ("pack (with duplicate clusters)", t_pack), ("replay the held-out split", t_replay),
                    ("leave one family out (mines per family)", t_lofo)):
        print(f"  {name:<32} {t * 1000:8.0f} ms  = {t / base:6.1f}x the baseline")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--candidates", type=int, default=6)
    ap.add_argument("--reps", type=int, default=1)
    a = ap.parse_args()
    bench_executor(a.candidates, a.reps)
    bench_kb()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The curator app's benchmarks: cold start, next-design latency at 100,000 designs, diff at 1,000 nodes.

    python bench/bench_app.py [--designs 100000] [--steps 150] [--keep DIR]

Prints, each with a ratio against a baseline measured in the same run:

1. **cold start** (goal <= 1.0 s): a fresh `python` process, from its start
   to the queue's first page drawn with its rows, on the 100,000-design store
   (and on the small fixture store). Baseline: a fresh process running an
   empty Textual app to its first frame.
2. **next design** (goals p50 <= 16 ms, p95 <= 50 ms): in the running app
   (headless, 120x40), from the `]` key press to the next design drawn
   (graph laid out with shapes, findings, cost, metadata), stepping through
   the 100,000-design queue. "curator pace" leaves 150 ms between presses
   (the app prefetches the neighbours meanwhile, as it does for a curator
   reading a design); "held key" presses again as soon as a design is shown
   (prefetch mostly misses: each step reads the store). Baseline: a bare
   DuckDB point query of one design row on an open connection, and the same
   with the open and close every unit of work pays.
3. **diff at 1,000 nodes** (goal <= 50 ms): `core.diff.diff_designs` with
   shape consequences, for an insertion, a removal, an argument change and
   a rewiring (median of runs each). Baseline: one shape-inference walk
   (`core.shapes.infer_design`) of the same graph.

The machine's load matters: compare the ratios, not only the seconds.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from archcurator.core.checks.connectivity import CONNECTIVITY_DEAD_NODE
from archcurator.core.ops.rules import SHAPE_CONV_CHANNELS, SHAPE_FLATTEN_LINEAR_WIDTH

ROOT = Path(__file__).resolve().parents[1]

AUTHORS = [("agent", "model-a"), ("agent", "model-b"), ("agent", "model-c"), ("human", None)]
TASK_SETS = ["plain-sentence", "repair", "open-source"]
RULES = [SHAPE_FLATTEN_LINEAR_WIDTH, CONNECTIVITY_DEAD_NODE, SHAPE_CONV_CHANNELS, "numerics.softmax-then-ce",
         "efficiency.bias-before-norm"]


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    if not values:
        return float("nan")
    k = (len(values) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(values) - 1)
    return values[lo] + (values[hi] - values[lo]) * (k - lo)


# ---- the 100,000-design store ---------------------------------------------------------------

def build_store(path: Path, n: int, seed: int = 7) -> None:
    """n designs (tiny CNNs and resnet18 variants, a third with findings), written with the store's
    bulk insert (the verifier is not the subject here)."""
    from archcurator.store.connection import utcnow
    from archcurator.store.designs import insert_designs

    rng = random.Random(seed)
    tiny = json.loads((ROOT / "tests" / "fixtures" / "tiny_cnn.json").read_text())
    r18 = json.loads((ROOT / "assets" / "architectures" / "resnet18.json").read_text())
    graphs = [json.dumps(tiny, separators=(",", ":")), json.dumps(r18, separators=(",", ":"))]
    cost = json.dumps({"params": 11689512, "flops_per_sample": 3.6e9, "quote": {"usd": 12.5, "device": "A10G",
                                                                               "hours": 12.4}})
    now = utcnow()
    chunk = 20000
    for start in range(0, n, chunk):
        rows, finds = [], []
        for i in range(start, min(n, start + chunk)):
            did = f"b{i:06d}"
            big = i % 10 == 0
            author, model = AUTHORS[i % len(AUTHORS)]
            k = rng.random()
            nb, nw = (1, 1) if k < 0.2 else ((0, 1) if k < 0.35 else (0, 0))
            verdict = "block" if nb else ("warn" if nw else "pass")
            rows.append({"id": did, "name": "resnet18" if big else "tiny-cnn", "author": author, "model": model,
                         "task_set": TASK_SETS[i % 3], "run": f"2026-11-{1 + i % 3:02d}a",
                         "graph": graphs[big], "verdict": verdict, "n_nodes": 69 if big else 5,
                         "n_block": nb, "n_warn": nw, "params": 11689512 if big else 1000, "flops": 3.6e9,
                         "quoted_cost_usd": 12.5, "quote_device": "A10G", "cost_a10g_usd": 12.5, "cost": cost,
                         "imported_at": now})
            node = "layer2.0.conv1" if big else "fc"
            if nb:
                finds.append({"design_id": did, "key": f"{RULES[0]}@{node}", "rule": RULES[0], "severity": "block",
                              "nodes": node, "node_list": [node], "message": "bench finding", "stale": False,
                              "first_seen": now, "last_seen": now})
            if nw:
                rule = RULES[1 + i % 4]
                finds.append({"design_id": did, "key": f"{rule}@{node}", "rule": rule, "severity": "warn",
                              "nodes": node, "node_list": [node], "message": "bench finding", "stale": False,
                              "first_seen": now, "last_seen": now})
        insert_designs(path, rows, finds)


# ---- 1. cold start -------------------------------------------------------------------------------

_APP_START = r"""
import sys, time
from archcurator.tui.app import CuratorApp
from archcurator.tui.config import Config
app = CuratorApp(sys.argv[1], Config(curator="bench"), cursor_blink=False, prefetch=False)
async def pilot(p):
    while not app.main_queue.rows:
        await p.pause(0.002)
    await p.pause()
    print("ready", flush=True)
    app.exit()
app.run(headless=True, auto_pilot=pilot, size=(120, 40))
"""

_EMPTY_START = r"""
from textual.app import App
from textual.widgets import Static
class Empty(App):
    def compose(self):
        yield Static("hello")
app = Empty()
async def pilot(p):
    await p.pause()
    print("ready", flush=True)
    app.exit()
app.run(headless=True, auto_pilot=pilot, size=(120, 40))
"""


def time_to_ready(code: str, *args: str) -> float:
    env = dict(os.environ)
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", code, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env, cwd=str(ROOT))
    line = proc.stdout.readline()
    t = time.perf_counter() - t0
    _, err = proc.communicate(timeout=60)
    if "ready" not in line:
        raise RuntimeError(f"did not start: {err[-2000:]}")
    return t


def bench_cold_start(big_store: Path, small_store: Path, repeat: int) -> dict:
    time_to_ready(_EMPTY_START)  # warm the OS file cache for both
    time_to_ready(_APP_START, str(big_store))
    base = statistics.median(time_to_ready(_EMPTY_START) for _ in range(repeat))
    big = statistics.median(time_to_ready(_APP_START, str(big_store)) for _ in range(repeat))
    small = statistics.median(time_to_ready(_APP_START, str(small_store)) for _ in range(repeat))
    return {"baseline": base, "big": big, "small": small}


# ---- 2. next design ------------------------------------------------------------------------------

async def _step_through(store: Path, steps: int, dwell: float) -> tuple[list[float], list[float]]:
    from archcurator.tui.app import CuratorApp
    from archcurator.tui.config import Config
    from archcurator.tui.screens.design import DesignScreen

    app = CuratorApp(store, Config(curator="bench"), cursor_blink=False)
    out: list[float] = []
    cpu: list[float] = []
    async with app.run_test(size=(120, 40)) as pilot:
        while not app.main_queue.loaded:
            await pilot.pause(0.01)
        await pilot.press("enter")
        while not (isinstance(app.screen, DesignScreen) and app.screen.shown_at):
            await pilot.pause(0.01)
        screen = app.screen
        ids = app.main_queue.ids
        for _ in range(steps):
            if dwell:
                await asyncio.sleep(dwell)
            target = ids[screen.index + 1]
            t0 = time.perf_counter()
            c0 = time.thread_time()
            await pilot.press("right_square_bracket")
            while not (screen.shown_id == target and screen.shown_at > t0):
                await asyncio.sleep(0.0005)
            out.append(screen.shown_at - t0)
            cpu.append(screen.shown_cpu - c0)
    return out, cpu


async def _repaint_baseline(steps: int) -> list[float]:
    """Key press to a full-screen Static redrawn with new text: what any whole-screen change costs."""
    from textual.app import App
    from textual.widgets import Static

    class Repaint(App):
        BINDINGS = [("n", "next", "")]
        shown_at = 0.0
        k = 0

        def compose(self):
            yield Static(id="s")

        def action_next(self) -> None:
            self.k += 1
            line = f"{self.k:06d} " + "design graph findings cost " * 4
            self.query_one(Static).update("\n".join(line[i % 7:] for i in range(40)))
            self.call_after_refresh(self._shown)

        def _shown(self) -> None:
            self.shown_at = time.perf_counter()

    app = Repaint()
    out = []
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        for _ in range(steps):
            await asyncio.sleep(0.05)
            t0 = time.perf_counter()
            await pilot.press("n")
            while not app.shown_at > t0:
                await asyncio.sleep(0.0005)
            out.append(app.shown_at - t0)
    return out


def bench_next_design(store: Path, steps: int) -> dict:
    import duckdb

    pace, pace_cpu = asyncio.run(_step_through(store, steps, dwell=0.15))
    held, _ = asyncio.run(_step_through(store, max(steps // 2, 10), dwell=0.0))
    repaint = asyncio.run(_repaint_baseline(40))
    con = duckdb.connect(str(store))
    ids = [f"b{i:06d}" for i in range(1000, 1200)]
    t = []
    for did in ids:
        t0 = time.perf_counter()
        con.execute("SELECT * FROM designs WHERE id = ?", [did]).fetchall()
        t.append(time.perf_counter() - t0)
    con.close()
    point = statistics.median(t)
    t = []
    for did in ids[:30]:
        t0 = time.perf_counter()
        c = duckdb.connect(str(store))
        c.execute("SELECT * FROM designs WHERE id = ?", [did]).fetchall()
        c.close()
        t.append(time.perf_counter() - t0)
    return {"pace": pace, "pace_cpu": pace_cpu, "held": held, "point": point,
            "open_point": statistics.median(t), "repaint": repaint}


# ---- 3. diff ---------------------------------------------------------------------------------------------

def residual_mlp(n_nodes: int = 1000, width: int = 64) -> dict:
    nodes, prev, k = [], "x", 0
    while len(nodes) + 4 <= n_nodes:
        b = f"blocks.{k}"
        nodes += [
            {"id": f"{b}.fc", "op": "Linear", "args": {"in_features": width, "out_features": width}, "in": [prev]},
            {"id": f"{b}.norm", "op": "LayerNorm", "args": {"normalized_shape": width}, "in": [f"{b}.fc"]},
            {"id": f"{b}.act", "op": "ReLU", "in": [f"{b}.norm"]},
            {"id": f"{b}.add", "op": "Add", "in": [prev, f"{b}.act"]},
        ]
        prev, k = f"{b}.add", k + 1
    return {"format": "archgraph/1", "name": "residual-mlp",
            "inputs": [{"id": "x", "shape": ["B", width], "dtype": "float32"}], "nodes": nodes, "outputs": [prev]}


def _edits(base: dict) -> dict:
    def node(g, nid):
        return next(n for n in g["nodes"] if n["id"] == nid)

    out = {}
    g = copy.deepcopy(base)
    i = next(k for k, n in enumerate(g["nodes"]) if n["id"] == "blocks.100.norm")
    g["nodes"].insert(i, {"id": "blocks.100.drop", "op": "Dropout", "args": {"p": 0.1}, "in": ["blocks.100.fc"]})
    g["nodes"][i + 1]["in"] = ["blocks.100.drop"]
    out["insertion"] = g
    g = copy.deepcopy(base)
    g["nodes"] = [n for n in g["nodes"] if n["id"] != "blocks.200.act"]
    node(g, "blocks.200.add")["in"] = ["blocks.199.add", "blocks.200.norm"]
    out["removal"] = g
    g = copy.deepcopy(base)
    node(g, "blocks.50.fc")["args"]["out_features"] = 32
    out["argument"] = g
    g = copy.deepcopy(base)
    node(g, "blocks.150.add")["in"] = ["blocks.148.add", "blocks.150.act"]
    out["rewiring"] = g
    return out


def bench_diff(runs: int) -> dict:
    from archcurator.core.diff import diff_designs
    from archcurator.core.graph import Design
    from archcurator.core.shapes import infer_design

    base = residual_mlp(1000)
    a = Design.from_dict(base)
    times = {}
    for name, g in _edits(base).items():
        b = Design.from_dict(g)
        diff_designs(a, b)
        t = []
        for _ in range(runs):
            t0 = time.perf_counter()
            diff_designs(a, b)
            t.append(time.perf_counter() - t0)
        times[name] = statistics.median(t)
    t = []
    for _ in range(runs):
        t0 = time.perf_counter()
        infer_design(a)
        t.append(time.perf_counter() - t0)
    return {"times": times, "baseline": statistics.median(t)}


# ---- main -------------------------------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--designs", type=int, default=100_000)
    ap.add_argument("--steps", type=int, default=150, help="next-design presses measured (curator pace)")
    ap.add_argument("--repeat", type=int, default=3, help="cold starts per measurement (median)")
    ap.add_argument("--keep", type=Path, help="build the store here and keep it (reused when present)")
    args = ap.parse_args(argv)

    tmp = Path(tempfile.mkdtemp(prefix="bench_app_"))
    try:
        big = (args.keep or tmp) / f"app_bench_{args.designs}.duckdb"
        big.parent.mkdir(parents=True, exist_ok=True)
        if not big.exists():
            t0 = time.perf_counter()
            build_store(big, args.designs)
            print(f"built a {args.designs:,}-design store in {time.perf_counter() - t0:.1f} s ({big})")
        sys.path.insert(0, str(ROOT / "tests" / "tui"))
        from storefix import make_store

        small = make_store(tmp / "small.duckdb")

        d = bench_diff(runs=15)
        worst = max(d["times"].values())
        parts = ", ".join(f"{k} {1000 * v:.1f} ms" for k, v in d["times"].items())
        print(f"diff at 1,000 nodes (with shape consequences): {parts}; worst {1000 * worst:.1f} ms "
              f"[goal <= 50 ms]; baseline one shape walk {1000 * d['baseline']:.1f} ms, "
              f"ratio {worst / d['baseline']:.1f}x")

        c = bench_cold_start(big, small, args.repeat)
        print(f"cold start to the first page drawn: {c['big']:.2f} s on {args.designs:,} designs, "
              f"{c['small']:.2f} s on 8 designs [goal <= 1.0 s]; baseline empty Textual app {c['baseline']:.2f} s, "
              f"ratio {c['big'] / c['baseline']:.1f}x")

        n = bench_next_design(big, args.steps)
        p50, p95 = 1000 * pct(n["pace"], 0.5), 1000 * pct(n["pace"], 0.95)
        c50, c95 = 1000 * pct(n["pace_cpu"], 0.5), 1000 * pct(n["pace_cpu"], 0.95)
        h50, h95 = 1000 * pct(n["held"], 0.5), 1000 * pct(n["held"], 0.95)
        r50 = 1000 * pct(n["repaint"], 0.5)
        base = 1000 * n["point"]
        print(f"next design on {args.designs:,} designs, curator pace (150 ms between keys, prefetch): "
              f"p50 {p50:.1f} ms, p95 {p95:.1f} ms over {len(n['pace'])} steps [goals 16 / 50 ms] "
              f"(UI-thread CPU p50 {c50:.1f} ms, p95 {c95:.1f} ms); held key: p50 {h50:.1f} ms, p95 {h95:.1f} ms; "
              f"baseline full-screen repaint of one Static {r50:.1f} ms, ratio p50 {p50 / r50:.1f}x; "
              f"bare DuckDB point query {base:.2f} ms (with open+close {1000 * n['open_point']:.1f} ms)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

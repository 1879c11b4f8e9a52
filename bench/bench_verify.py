"""Verifier benchmarks: how cheap a pre-flight check is next to running the design.

    python bench/bench_verify.py [--runs 300] [--no-ground]

Prints:

1. the median time of `verify_graph` (the whole catalogue, cost quote
   included) on a 100-layer graph (goal <= 1 ms), and its ratio to a forward
   pass of the same design built as a torch module on the meta device —
   shapes only, no arithmetic — measured in the same run (goal >= 100x);
2. the same for a 10,000-node graph, and the time per node against the
   100-layer graph's (linear growth: ratio ~1);
3. the wall time of `archcurator ground` on the full study set (goal <= 60 s
   on two CPU cores), run as a user would.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def residual_mlp(n_nodes: int, width: int = 256) -> dict:
    """A pre-norm residual MLP: blocks of LayerNorm, Linear, GELU, Linear, Add (5 layers each)."""
    nodes = []
    prev = "x"
    i = 0
    while len(nodes) + 5 <= n_nodes:
        p = f"blocks.{i}"
        nodes += [
            {"id": f"{p}.norm", "op": "LayerNorm", "args": {"normalized_shape": width}, "in": [prev]},
            {"id": f"{p}.fc1", "op": "Linear", "args": {"in_features": width, "out_features": 4 * width},
             "in": [f"{p}.norm"]},
            {"id": f"{p}.act", "op": "GELU", "args": {}, "in": [f"{p}.fc1"]},
            {"id": f"{p}.fc2", "op": "Linear", "args": {"in_features": 4 * width, "out_features": width},
             "in": [f"{p}.act"]},
            {"id": f"{p}.add", "op": "Add", "args": {}, "in": [f"{p}.fc2", prev]},
        ]
        prev = f"{p}.add"
        i += 1
    return {"format": "archgraph/1", "name": f"residual-mlp-{len(nodes)}",
            "inputs": [{"id": "x", "shape": ["B", "T", width], "dtype": "float32"}],
            "nodes": nodes, "outputs": [prev],
            "train": {"loss": "mse", "batch_size": 32, "steps": 1000, "seq_len": 128}}


def median_time(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def bench_verify(design_dict: dict, runs: int) -> float:
    from core.graph import Design
    from core.verify import verify_graph

    design = Design.from_dict(design_dict)
    for _ in range(3):
        verify_graph(design)
    return median_time(lambda: verify_graph(design), runs)


def bench_meta_forward(design_dict: dict, runs: int) -> float:
    import torch

    from core.build import build_module, example_inputs
    from core.graph import Design

    design = Design.from_dict(design_dict)
    model = build_module(design, "meta").eval()
    inputs = example_inputs(design, batch=2, device="meta")
    with torch.no_grad():
        for _ in range(3):
            model(*inputs)
        return median_time(lambda: model(*inputs), runs)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench_verify", description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=300)
    ap.add_argument("--no-ground", action="store_true", help="skip the archcurator ground wall time")
    args = ap.parse_args(argv)

    g100 = residual_mlp(100)
    g10k = residual_mlp(10_000)
    assert len(g100["nodes"]) == 100 and len(g10k["nodes"]) == 10_000

    from core.graph import Design
    from core.verify import verify_graph

    verdict = verify_graph(Design.from_dict(g100)).verdict
    t_verify = bench_verify(g100, args.runs)
    t_meta = bench_meta_forward(g100, max(20, args.runs // 10))
    print(f"verify, 100-layer graph ({verdict}, whole catalogue of {_catalogue_size()} checks + cost): "
          f"median {t_verify * 1e3:.3f} ms (goal <= 1 ms) {'OK' if t_verify <= 1e-3 else 'OVER'}")
    print(f"meta-device forward of the same design built in torch: median {t_meta * 1e3:.2f} ms; "
          f"verify is {t_meta / t_verify:.0f}x faster (goal >= 100x) {'OK' if t_meta / t_verify >= 100 else 'UNDER'}")
    t10k = bench_verify(g10k, max(3, args.runs // 100))
    per100, per10k = t_verify / 100, t10k / 10_000
    print(f"verify, 10,000-node graph: median {t10k * 1e3:.1f} ms = {per10k * 1e6:.2f} us/node vs "
          f"{per100 * 1e6:.2f} us/node at 100 (ratio {per10k / per100:.2f}; linear growth ~1)")
    if not args.no_ground:
        env = dict(os.environ)
        t = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "tui.cli", "ground", "--json"], cwd=ROOT, env=env,
                              capture_output=True, text=True)
        wall = time.perf_counter() - t
        if proc.returncode != 0:
            print(f"archcurator ground failed ({proc.returncode}): {proc.stderr[-500:]}")
            return 1
        s = json.loads(proc.stdout)["summary"]
        print(f"archcurator ground, full set: {s['graphs']} graphs in {wall:.1f} s wall on {os.cpu_count()} CPU(s) "
              f"(goal <= 60 s on 2) {'OK' if wall <= 60 else 'OVER'}; block <=> failure on "
              f"{s['agreement']:.1%}, warn-only graphs that failed: {len(s['warn_only_failed'])}")
    return 0


def _catalogue_size() -> int:
    from core.checks import CATALOGUE

    return len(CATALOGUE)


if __name__ == "__main__":
    raise SystemExit(main())

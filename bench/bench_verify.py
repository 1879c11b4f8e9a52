"""Verifier benchmarks: how cheap a pre-flight check is next to running the design.

    python bench/bench_verify.py [--runs 300] [--no-ground]

Prints:

1. the median time of `verify_graph` (the whole catalogue, cost quote
   included) on a 100-layer graph (goal <= 1 ms), and its ratio to a forward
   pass of the same design built as a torch module on the meta device —
   shapes only, no arithmetic — measured in the same run (goal >= 100x). Two
   100-layer graphs: a pre-norm residual MLP (transformer-style blocks) and
   a ResNet-style CNN (conv, BatchNorm, ReLU, residual Add). The meta forward
   is timed twice: in eval mode under `torch.no_grad()` (the fastest shape
   check a user would run: no autograd graph, no batch statistics) and in
   training mode with autograd on; the goal is against the faster of the two;
2. the same for a 10,000-node graph, and the time per node against the
   100-layer graph's (linear growth: ratio ~1; what remains above 1 is the
   memory hierarchy — no step of the verifier is more than linear);
3. the wall time of `archcurator ground` on the full study set (goal <= 60 s
   on two CPU cores), run as a user would.

Times are medians of this process's CPU time (`time.process_time`), so that
other work on the machine does not skew the ratio: on a busy machine wall
clock inflates the long meta forward more than the short verify. The ground
line is wall time.
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


def residual_cnn(n_nodes: int, channels: int = 64, size: int = 56) -> dict:
    """A ResNet-style CNN: a stem, then basic blocks (conv, BN, ReLU, conv, BN, Add, ReLU)."""
    nodes = [{"id": "stem", "op": "Conv2d", "args": {"in_channels": 3, "out_channels": channels, "kernel_size": 3,
                                                     "padding": 1, "bias": False}, "in": ["x"]},
             {"id": "stem_bn", "op": "BatchNorm2d", "args": {"num_features": channels}, "in": ["stem"]},
             {"id": "stem_relu", "op": "ReLU", "args": {}, "in": ["stem_bn"]}]
    prev = "stem_relu"
    conv = {"in_channels": channels, "out_channels": channels, "kernel_size": 3, "padding": 1, "bias": False}
    i = 0
    while len(nodes) + 7 <= n_nodes:
        p = f"blocks.{i}"
        nodes += [
            {"id": f"{p}.conv1", "op": "Conv2d", "args": conv, "in": [prev]},
            {"id": f"{p}.bn1", "op": "BatchNorm2d", "args": {"num_features": channels}, "in": [f"{p}.conv1"]},
            {"id": f"{p}.relu1", "op": "ReLU", "args": {}, "in": [f"{p}.bn1"]},
            {"id": f"{p}.conv2", "op": "Conv2d", "args": conv, "in": [f"{p}.relu1"]},
            {"id": f"{p}.bn2", "op": "BatchNorm2d", "args": {"num_features": channels}, "in": [f"{p}.conv2"]},
            {"id": f"{p}.add", "op": "Add", "args": {}, "in": [f"{p}.bn2", prev]},
            {"id": f"{p}.relu2", "op": "ReLU", "args": {}, "in": [f"{p}.add"]},
        ]
        prev = f"{p}.relu2"
        i += 1
    while len(nodes) < n_nodes:
        nodes.append({"id": f"tail.{len(nodes)}", "op": "Identity", "args": {}, "in": [prev]})
        prev = nodes[-1]["id"]
    return {"format": "archgraph/1", "name": f"residual-cnn-{len(nodes)}",
            "inputs": [{"id": "x", "shape": ["B", 3, size, size], "dtype": "float32"}],
            "nodes": nodes, "outputs": [prev], "train": {"loss": "mse", "batch_size": 32, "steps": 1000}}


def median_time(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        t = time.process_time()
        fn()
        times.append(time.process_time() - t)
    return statistics.median(times)


def bench_verify(design_dict: dict, runs: int) -> float:
    from archcurator.core.graph import Design
    from archcurator.core.verify import verify_graph

    design = Design.from_dict(design_dict)
    for _ in range(3):
        verify_graph(design)
    return median_time(lambda: verify_graph(design), runs)


def bench_meta_forward(design_dict: dict, runs: int, train: bool) -> float:
    import torch

    from archcurator.core.build import build_module, example_inputs
    from archcurator.core.graph import Design

    design = Design.from_dict(design_dict)
    model = build_module(design, "meta").train(train)
    inputs = example_inputs(design, batch=2, device="meta")

    def forward():
        with torch.set_grad_enabled(train):
            model(*inputs)

    for _ in range(3):
        forward()
    return median_time(forward, runs)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench_verify", description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=300)
    ap.add_argument("--no-ground", action="store_true", help="skip the archcurator ground wall time")
    args = ap.parse_args(argv)

    from archcurator.core.graph import Design
    from archcurator.core.verify import verify_graph

    print(f"(median CPU time of this process; whole catalogue of {_catalogue_size()} checks + the cost quote)")
    t_verify = None
    for label, g in (("residual MLP", residual_mlp(100)), ("ResNet-style CNN", residual_cnn(100))):
        assert len(g["nodes"]) == 100
        verdict = verify_graph(Design.from_dict(g)).verdict
        tv = bench_verify(g, args.runs)
        t_eval = bench_meta_forward(g, max(20, args.runs // 10), train=False)
        t_train = bench_meta_forward(g, max(20, args.runs // 10), train=True)
        tm = min(t_eval, t_train)
        t_verify = t_verify or tv
        print(f"verify, 100-layer {label} ({verdict}): median {tv * 1e3:.3f} ms (goal <= 1 ms) "
              f"{'OK' if tv <= 1e-3 else 'OVER'}; meta-device forward of it built in torch: eval + no_grad "
              f"{t_eval * 1e3:.1f} ms, training {t_train * 1e3:.1f} ms; verify is {tm / tv:.0f}x faster than the "
              f"faster one (goal >= 100x) {'OK' if tm / tv >= 100 else 'UNDER'} ({t_train / tv:.0f}x vs training)")
    g10k = residual_mlp(10_000)
    assert len(g10k["nodes"]) == 10_000
    t10k = bench_verify(g10k, max(3, args.runs // 100))
    per100, per10k = t_verify / 100, t10k / 10_000
    print(f"verify, 10,000-node residual MLP: median {t10k * 1e3:.1f} ms = {per10k * 1e6:.2f} us/node vs "
          f"{per100 * 1e6:.2f} us/node at 100 (ratio {per10k / per100:.2f}; linear growth ~1)")
    if not args.no_ground:
        env = dict(os.environ)
        t = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "archcurator.tui.cli", "ground", "--json"], cwd=ROOT, env=env,
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
    from archcurator.core.checks import CATALOGUE

    return len(CATALOGUE)


if __name__ == "__main__":
    raise SystemExit(main())

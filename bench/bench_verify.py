"""Verifier benchmark: verify next to its peers, on real models and on layers that never repeat.

    python bench/bench_verify.py [--rounds 15] [--quick] [--cases resnet50,chain-100] [--no-ground]

What is timed, per case, interleaved (one round runs every contender once, in turn, so a busy machine
slows them alike, each round starting one contender further on so that none always follows torch's; each
figure is the median over the rounds, and a ratio's spread is the 10th..90th percentile of the per-round
ratios):

- verify: `Design.from_json(text)` + `verify_graph` (the whole catalogue of checks and the cost quote),
  from the JSON text, with the repeat cache on, and again with it off (`core.shapes.REPEAT_CACHE`: a
  repeated layer, same op, arguments and operand types, is inferred once); each run first clears the process-wide
  size caches of core.dims, so no run is helped by the one before it;
- floor: the pure-Python floor (bench/shape_floor.py): `json.loads` + one topological walk computing the
  same shapes and nothing else (checked equal to verify's shapes before timing);
- meta eval: the design built by our builder on the meta device, a forward in eval mode under
  `torch.no_grad()` (the cheapest shape check torch offers a user); meta train: training mode, autograd on;
- fake: the same module's forward under FakeTensorMode (what FX's ShapeProp runs per node; our built
  module is not symbolically traceable, so the forward is run directly, parameters converted once);
- flopcounter: the meta forward in eval mode (autograd on: its module tracker needs it) under
  `torch.utils.flop_counter.FlopCounterMode`, torch's way to a cost figure; the FLOPs it counts are
  printed beside the quote's (both count matmuls and convolutions only: they are equal on every case);
- onnx: `onnx.shape_inference.infer_shapes` (C++) on the model exported by `torch.onnx.export` without
  its weights (they become typed graph inputs: the shapes are all it needs), batch left symbolic; skipped,
  with a line saying so, when onnx is not installed (`pip install onnx`, in the dev extra).

Cases: the zoo's resnet18, resnet50, vit_b_16, gpt2 (a transformer LM) and unet, and chains of 100,
1,000 and 10,000 distinct layers (Linear, LayerNorm, GELU blocks of widths that never repeat, so the
repeat cache finds nothing), plus the old bench's 100-layer MLP of one repeated block for reference.
A last table gives verify's time per node on chains of 100 .. 50,000 distinct nodes (linear: ~flat).

Times are this process's CPU time (`time.process_time`); torch runs on one thread.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

import shape_floor  # noqa: E402 - the floor lives beside this file

sys.path.insert(0, str(ROOT / "tests"))
from verify_golden import chain  # noqa: E402 - the chains the golden record holds

ONNX_MAX_PARAMS = 200_000_000
ZOO = ("resnet18", "resnet50", "vit_b_16", "gpt2", "unet")


def distinct_chain(n_nodes: int) -> dict:
    """n_nodes layers, no two alike: blocks of Linear(w_i -> w_i + 1), LayerNorm, GELU over [B, T, w] (the
    golden record's chains: tests/verify_golden.py)."""
    return chain(n_nodes)


def repeated_mlp(n_nodes: int, width: int = 256) -> dict:
    """The old bench's graph: a pre-norm residual MLP of one repeated block (LayerNorm, Linear, GELU, Linear, Add)."""
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
    return {"format": "archgraph/1", "name": f"repeated-mlp-{len(nodes)}",
            "inputs": [{"id": "x", "shape": ["B", "T", width], "dtype": "float32"}],
            "nodes": nodes, "outputs": [prev],
            "train": {"loss": "mse", "batch_size": 32, "steps": 1000, "seq_len": 128}}


def case_text(name: str) -> str:
    if name.startswith("chain-"):
        return json.dumps(distinct_chain(int(name.split("-")[1])))
    if name == "repeated-100":
        return json.dumps(repeated_mlp(100))
    return (ROOT / "assets" / "architectures" / f"{name}.json").read_text()


# ---- contenders: each is a function of no arguments doing one run ------------------------------------

def verify_fn(text: str, cache: bool):
    from archcurator.core import dims, shapes
    from archcurator.core.graph import Design
    from archcurator.core.verify import verify_graph

    def run():
        # the process-wide size caches would hold every size of this design from the round before: each
        # run starts without them, as a design the process has not verified yet (clearing is timed too)
        dims.clear_caches()
        shapes.REPEAT_CACHE = cache
        try:
            return verify_graph(Design.from_json(text))
        finally:
            shapes.REPEAT_CACHE = True
    return run


def floor_fn(text: str):
    return lambda: shape_floor.infer(text)


class TorchPeers:
    """The design built once by our builder; forwards of it on the meta device and under FakeTensorMode."""

    def __init__(self, text: str):
        import torch

        from archcurator.core.build import build_module, example_inputs, symbol_env
        from archcurator.core.graph import Design

        torch.set_num_threads(1)
        self.torch = torch
        self.design = Design.from_json(text)
        self.sizes = symbol_env(self.design, batch=1)
        self.model = build_module(self.design, "meta", sizes=self.sizes)
        self.inputs = example_inputs(self.design, batch=1, device="meta", env=self.sizes)
        self._fake = None

    def meta(self, train: bool):
        torch, model, inputs = self.torch, self.model, self.inputs

        def run():
            model.train(train)
            with torch.set_grad_enabled(train):
                return model(*inputs)
        return run

    def fake(self):
        from torch._subclasses.fake_tensor import FakeTensorMode

        torch, model = self.torch, self.model
        mode = FakeTensorMode(allow_non_fake_inputs=True)
        state = {k: mode.from_tensor(v) for k, v in {**dict(model.named_parameters()),
                                                      **dict(model.named_buffers())}.items()}
        fake_inputs = [mode.from_tensor(t) for t in self.inputs]

        def run():
            model.eval()
            with mode, torch.no_grad():
                return torch.func.functional_call(model, state, tuple(fake_inputs))
        return run

    def flopcounter(self):
        from torch.utils.flop_counter import FlopCounterMode

        model, inputs = self.model, self.inputs
        box = {}

        def run():
            model.eval()
            counter = FlopCounterMode(display=False)
            with counter:  # autograd on: its module tracker hooks the outputs' grad functions
                model(*inputs)
            box["flops"] = counter.get_total_flops()
        run.box = box
        return run

    def onnx(self):
        """infer_shapes on the exported graph (weights as typed inputs); None when onnx is missing."""
        try:
            import onnx
        except ImportError:
            return None
        params = sum(p.numel() for p in self.model.parameters())
        if params > ONNX_MAX_PARAMS:  # the export builds the model with real weights on the CPU
            return f"skipped: {params:,} parameters are more than the export can hold in memory here"
        import warnings

        from archcurator.core.build import build_module

        torch = self.torch
        model = build_module(self.design, "cpu", sizes=self.sizes).eval()
        cpu = tuple(torch.zeros(t.shape, dtype=t.dtype) for t in self.inputs)
        names = [spec.id for spec in self.design.inputs]
        buf = io.BytesIO()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(model, cpu, buf, dynamo=False, export_params=False, input_names=names,
                              dynamic_axes={n: {0: "B"} for n in names})
        proto = onnx.load_from_string(buf.getvalue())
        del proto.graph.value_info[:]
        for out in proto.graph.output:  # left for inference to find
            out.type.tensor_type.ClearField("shape")
        infer = onnx.shape_inference.infer_shapes
        return lambda: infer(proto)


def interleaved(contenders: dict, rounds: int, warmup: int = 2) -> dict:
    """name -> list of per-round CPU times; every round runs every contender once, in turn, each round
    starting one contender further on. A fixed order made the first contender (verify) always run right
    after torch's peers, whose code had filled the CPU's caches: it paid 15-40% more than the same call run
    second (chain-100 with the repeat cache on then read slower than with it off)."""
    for _ in range(warmup):
        for fn in contenders.values():
            fn()
    names = list(contenders)
    times: dict = {name: [] for name in names}
    for r in range(rounds):
        k = r % len(names)
        for name in names[k:] + names[:k]:
            fn = contenders[name]
            t = time.process_time()
            fn()
            times[name].append(time.process_time() - t)
    return times


def spread(ratios: list) -> str:
    q = sorted(ratios)
    lo, hi = q[int(0.1 * (len(q) - 1))], q[int(round(0.9 * (len(q) - 1)))]
    return f"{statistics.median(q):.1f}x ({lo:.1f}-{hi:.1f})"


def same_shapes(text: str, report) -> str | None:
    """Why the floor's shapes differ from verify's (None when they agree on every node)."""
    floor = shape_floor.infer(text)
    for nid, results in floor.items():
        ours = report.types.get(nid) or []
        for k, shape in enumerate(results):
            if shape is None:
                continue
            theirs = ours[k].shape if k < len(ours) else None
            if theirs is not None and list(theirs) != list(shape):
                return f"{nid}: floor {shape}, verify {list(theirs)}"
    return None


def bench_case(name: str, rounds: int) -> dict:
    text = case_text(name)
    run_verify = verify_fn(text, cache=True)
    report = run_verify()
    why = same_shapes(text, report)
    if why:
        raise SystemExit(f"{name}: the floor and verify disagree ({why})")
    peers = TorchPeers(text)
    flop = peers.flopcounter()
    contenders = {"verify": run_verify, "verify, no cache": verify_fn(text, cache=False),
                  "floor": floor_fn(text), "meta eval": peers.meta(False), "meta train": peers.meta(True),
                  "fake": peers.fake(), "flopcounter": flop}
    onnx_fn = peers.onnx()
    if callable(onnx_fn):
        contenders["onnx"] = onnx_fn
    elif onnx_fn is not None:
        print(f"  {name}: ONNX infer_shapes {onnx_fn}", file=sys.stderr)
    n = len(json.loads(text)["nodes"])
    times = interleaved(contenders, rounds, warmup=1 if n > 5_000 else 2)
    return {"name": name, "nodes": n, "verdict": report.verdict, "times": times,
            "flops": (report.cost["flops_per_sample"], flop.box.get("flops")), "onnx": onnx_fn,
            "note": None if onnx_fn is None or callable(onnx_fn) else f"{name}: ONNX infer_shapes {onnx_fn}"}


def print_table(results: list, out=None) -> None:
    out = out or sys.stdout
    print(f"{'case':<14}{'nodes':>6} {'verdict':<8}{'verify':>9}{'no cache':>9}{'floor':>8}{'meta ev':>9}"
          f"{'meta tr':>9}{'fake':>8}{'flopc':>8}{'onnx':>8}   {'meta eval / verify':<20}{'verify / floor':<18}"
          f"{'onnx / verify':<16}{'no-cache meta/verify':<22}", file=out)
    for r in results:
        t = r["times"]

        def ms(k, t=t):
            return f"{statistics.median(t[k]) * 1e3:.2f}" if k in t else "-"

        def ratio(a, b, t=t):
            return spread([x / y for x, y in zip(t[a], t[b])]) if a in t and b in t else "-"
        print(f"{r['name']:<14}{r['nodes']:>6} {r['verdict']:<8}{ms('verify'):>9}{ms('verify, no cache'):>9}"
              f"{ms('floor'):>8}{ms('meta eval'):>9}{ms('meta train'):>9}{ms('fake'):>8}{ms('flopcounter'):>8}"
              f"{ms('onnx'):>8}   {ratio('meta eval', 'verify'):<20}{ratio('verify', 'floor'):<18}"
              f"{ratio('onnx', 'verify'):<16}{ratio('meta eval', 'verify, no cache'):<22}", file=out)
    print("(ms: median CPU time per run; ratios: median over rounds, 10th-90th percentile in brackets)", file=out)
    print("FLOPs per sample, the quote's vs FlopCounterMode's (matmuls and convolutions only):", file=out)
    for r in results:
        ours, theirs = r["flops"]
        print(f"  {r['name']:<14} quote {ours:,}  FlopCounterMode {theirs:,}"
              + (f"  ({ours / theirs:.3f}x)" if theirs else ""), file=out)
    if results and results[0]["onnx"] is None:
        print("onnx: not installed, so ONNX infer_shapes was skipped (pip install onnx)", file=out)
    for r in results:
        if r["note"]:
            print(r["note"], file=out)


def growth(sizes: list, rounds: int) -> None:
    """verify's time per node on distinct chains: linear growth keeps it flat."""
    print("verify on chains of distinct layers (JSON text to report, repeat cache on):")
    base = None
    for n in sizes:
        text = json.dumps(distinct_chain(n))
        run = verify_fn(text, cache=True)
        run()
        t = statistics.median(interleaved({"v": run}, max(3, rounds * 100 // n), warmup=0)["v"])
        per = t / n
        base = base or per
        print(f"  {n:>6,} nodes: {t * 1e3:9.1f} ms = {per * 1e6:6.2f} us/node ({per / base:.2f}x the first)")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench_verify", description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=15, help="interleaved rounds per case")
    ap.add_argument("--cases", default=None, help="comma-separated cases (default: all)")
    ap.add_argument("--quick", action="store_true", help="5 rounds, no 10,000-layer chain, growth up to 10,000")
    ap.add_argument("--no-ground", action="store_true", help="skip the archcurator ground wall time")
    ap.add_argument("--growth", action="store_true", help="the per-node table even with --cases")
    args = ap.parse_args(argv)
    cases = args.cases.split(",") if args.cases else \
        [*ZOO, "chain-100", "chain-1000"] + ([] if args.quick else ["chain-10000"]) + ["repeated-100"]
    rounds = 5 if args.quick else args.rounds
    from archcurator.core.checks import CATALOGUE

    print(f"verify = Design.from_json + verify_graph: {len(CATALOGUE)} checks and the cost quote; "
          f"{rounds} interleaved rounds per case")
    results = []
    for name in cases:
        r = max(3, rounds // 5) if name == "chain-10000" else rounds
        results.append(bench_case(name, r))
        print_table(results[-1:], out=sys.stderr)  # as it goes: the whole run takes minutes
    print_table(results)
    if args.cases is None or args.growth:
        growth([100, 1_000, 10_000] if args.quick else [100, 1_000, 10_000, 50_000], rounds)
    if not args.no_ground and args.cases is None:
        t = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "archcurator.tui.cli", "ground", "--json"], cwd=ROOT,
                              env=dict(os.environ), capture_output=True, text=True)
        wall = time.perf_counter() - t
        if proc.returncode != 0:
            print(f"archcurator ground failed ({proc.returncode}): {proc.stderr[-500:]}")
            return 1
        s = json.loads(proc.stdout)["summary"]
        print(f"archcurator ground, full set: {s['graphs']} graphs in {wall:.1f} s wall on {os.cpu_count()} CPU(s) "
              f"(goal <= 60 s on 2) {'OK' if wall <= 60 else 'OVER'}; block <=> failure on "
              f"{s['agreement']:.1%}, warn-only graphs that failed: {len(s['warn_only_failed'])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The child of `archcurator ground`:
``python -m archcurator.core.ground.child CASES.jsonl [--timeout S] [--device D]``.

Reads the study's cases (one JSON object a line, each with "case" and
"graph"), runs every graph in torch, one after the other in this one process,
and writes one JSON line per graph on stdout as soon as it is known:

    {"case": ..., "status": "ok" | "failed" | "timeout", "exception": "RuntimeError" | null,
     "message": ..., "stage": "build" | "meta" | "replay", "device": ..., "seconds": ...}

A ``{"start": case}`` line goes out before each graph, so the parent knows
which graph was in flight if this process dies.

How a graph is run (what catches the most for the least time):

1. **build** on the meta device (``core.build.build_module``): a design the
   builder refuses fails here with class ``BuildError``; torch's own
   constructors (head counts, groups) fail here too.
2. **meta** forward at batch 2 (a declared batch of at most 16: that one;
   a declared seq_len for the sequence symbol; other symbols 8), in the mode
   the design declares (training, with autograd, unless train.mode is
   "eval"): every shape error torch checks without data, at any size, in
   milliseconds, and the training-only ones (batch statistics over one
   value, in-place ops on parameters).
3. **replay**: what meta cannot see, run for real on the CPU (the GPU when
   one is present), node by node, in training mode, with the sizes the meta
   forward gave each node:
   - the integer-valued part of the graph (token ids from the example
     inputs, positions from Arange, and what views them) is computed for
     real, so every node that reads integers gets the real values: an
     Embedding meets the real largest id (index range), a float layer meets
     real integers (dtype);
   - the ops whose meta kernels skip a check (Softmax / LogSoftmax: their
     dim; transposed convolutions: their channels) run on random floats of
     their meta sizes.
   Weights are allocated, not initialised (``to_empty``): whether a kernel
   raises does not depend on their values.

``--full`` replaces the replay by a forward of the whole graph on the device
(slow on a CPU: it is how the fast protocol above is itself checked).

``--generate FIRST:END`` is the differential mode: each design comes from
`core.ground.generate` and runs eagerly (`observe_eager`) on the CPU, in its
declared mode and at its declared sizes; each line also carries the graph.

Each graph runs under its own alarm (``signal.setitimer``): one that hangs is
recorded as ``timeout`` and the next graph starts.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time

from ..graph import Design, parse_ref
from ..ops import ops_with
from ..sizes import run_batch, run_mode, run_sizes  # noqa: F401 - run_batch: the forward check and these runs share it

# ops whose meta kernels skip a check their CPU kernels make (found by the study itself, and by
# `archcurator ground --full`, which runs every graph for real): Softmax / LogSoftmax do not check
# their dim, transposed convolutions do not check their input channels
META_BLIND_OPS = ops_with("meta-blind")
MESSAGE_MAX = 300
BATCH = 2
SYMBOL_SIZE = 8


class GraphTimeout(BaseException):
    """Raised by the alarm; a BaseException so that no `except Exception` swallows it."""


def _alarm(signum, frame):
    raise GraphTimeout()


STUDY_MAX_BATCH = 16
# the child's memory limit in MB (`--memory-mb`; the run's default when not given), set once it is armed
MEMORY_LIMIT: list = [None]
DIFFERENTIAL_MEMORY_MB = 4096  # a fixed limit: the same designs are killed on every machine


def sizes_for(design: Design) -> dict:
    """Batch symbols (dim 0) -> the declared train.batch_size when it is at most 16 (a small batch is
    part of what the design says), else 2; a sequence symbol -> the declared train.seq_len; any other
    -> 8."""
    from ..sizes import symbol_env

    batch = (design.train or {}).get("batch_size")
    return symbol_env(design, batch=batch if type(batch) is int and 0 < batch <= STUDY_MAX_BATCH else BATCH)


def _failure(exc, stage: str) -> dict:
    from ..build import BuildError

    if isinstance(exc, BuildError):
        cause = exc.__cause__
        return {"status": "failed", "origin": exc.origin, "node": exc.node, "stage": "build",
                "exception": type(cause).__name__ if exc.origin == "torch" and cause is not None else "BuildError",
                "message": str(exc)[:MESSAGE_MAX]}
    from ..runs.child import classify

    # past the child's memory limit an allocation fails: a resource outcome (SPEC's run answers it
    # `killed`), not something the design's shapes decide; it is reported apart from torch's failures
    status, _, why = classify(exc, MEMORY_LIMIT[0])
    if status == "killed":
        return {"status": "killed", "origin": "memory", "node": getattr(exc, "archcurator_node", None),
                "stage": stage, "exception": type(exc).__name__, "message": why[:MESSAGE_MAX]}
    return {"status": "failed", "origin": "torch", "node": getattr(exc, "archcurator_node", None), "stage": stage,
            "exception": type(exc).__name__, "message": str(exc)[:MESSAGE_MAX]}


def observe_eager(graph: dict, device: str = "cpu") -> dict:
    """Build the design and run one forward for real (eager, on the CPU by default), in the mode it
    declares (train.mode: "train", the default, or "eval"), at its declared sizes."""
    import torch

    from ..build import build_module, example_inputs

    stage = "build"
    try:
        design = Design.from_dict(graph)
        sizes = run_sizes(design)
        model = build_module(design, device, sizes=sizes)
        stage = "forward"
        mode = run_mode(design)
        model.train(mode != "eval")
        inputs = example_inputs(design, batch=sizes.get("B", BATCH), device=device, env=sizes)
        with torch.set_grad_enabled(mode != "eval"):
            model(*inputs)  # the outputs too: one naming a result its node lacks fails there
        return {"status": "ok", "origin": None, "node": None, "exception": None, "message": "", "stage": stage}
    except GraphTimeout:
        raise
    except Exception as exc:  # noqa: BLE001 - what torch (or the builder) raises is the observation
        return _failure(exc, stage)


def observe(graph: dict, device: str, full: bool = False) -> dict:
    """Run one graph; the observation (status, exception class, stage)."""
    import torch

    from ..build import build_module, example_inputs

    stage = "build"
    try:
        design = Design.from_dict(graph)
        sizes = sizes_for(design)
        model = build_module(design, "meta", sizes=sizes)
        stage = "meta"
        # in the mode the design declares (training by default, with autograd: in-place ops on parameters and
        # batch statistics over one value fail only there)
        training = (design.train or {}).get("mode", "train") != "eval"
        model.train(training)
        inputs = example_inputs(design, batch=sizes.get(_batch_symbol(design), BATCH), device="meta", env=sizes)
        with torch.set_grad_enabled(training):
            values = model.forward_all(*inputs)
            for ref in design.outputs:  # as forward returns them: a result its node lacks fails there
                rid, idx = parse_ref(ref)
                values[rid][idx]
        with torch.no_grad():
            if full:
                # the slow check of the fast protocol: the whole graph for real
                stage = "forward"
                model = model.to_empty(device=device).train()
                model(*[t.to(device) for t in example_inputs(design, batch=BATCH, device="cpu", env=sizes)])
            else:
                stage = "replay"
                _replay(design, model, values, example_inputs(design, batch=BATCH, device="cpu", env=sizes),
                        device)
        return {"status": "ok", "exception": None, "message": "", "stage": stage}
    except GraphTimeout:
        raise
    except Exception as exc:  # what torch raises is the observation
        return _failure(exc, stage)


def _batch_symbol(design: Design):
    for spec in design.inputs:
        if spec.shape and isinstance(spec.shape[0], str):
            return spec.shape[0]
    return None


def _is_int(t) -> bool:
    return not (t.is_floating_point() or t.is_complex())


def _replay(design: Design, model, values: dict, cpu_inputs: list, device: str) -> None:
    """Run for real, in training mode, what meta cannot see: every node that reads integer
    values (with the real values, computed along the integer-valued part of the graph from the
    example inputs: ids, positions) and the meta-blind ops (on random floats of the sizes meta
    gave them)."""
    import copy

    import torch

    from ..build import module_key

    real: dict = {}  # node/input id -> tuple of real integer results
    for spec, t in zip(design.inputs, cpu_inputs):
        if _is_int(t):
            real[spec.id] = (t.to(device),)
    nodes = design.node_map()
    for node in design.topo_order():
        metas = []
        for ref in node.inputs:
            rid, idx = parse_ref(ref)
            metas.append((rid, idx, values[rid][idx]))
        outs = values.get(node.id, ())
        reads_int = any(_is_int(t) for _, _, t in metas)
        # meta kernels do not compare a float64 / float16 input with float32 weights: run those for real
        reads_int = reads_int or any(t.is_floating_point() and t.dtype != torch.float32 for _, _, t in metas)
        makes_int = not node.inputs and any(_is_int(t) for t in outs)
        if not (reads_int or makes_int or node.op in META_BLIND_OPS):
            continue
        key = node.id
        if node.shares is not None and nodes[node.shares].op == node.op:
            key = node.shares
        mod = copy.deepcopy(model.layers[module_key(key)]).to_empty(device=device).train()
        args = []
        for rid, idx, t in metas:
            if rid in real and idx < len(real[rid]):
                args.append(real[rid][idx])
            elif t.is_floating_point():
                args.append(torch.randn(t.shape, dtype=t.dtype, device=device))
            else:
                args.append(torch.zeros(t.shape, dtype=t.dtype, device=device))
        res = mod(*args)
        res = tuple(res) if isinstance(res, (tuple, list)) else (res,)
        if any(_is_int(r) for r in res):
            real[node.id] = res


def pick_device(wanted: str) -> str:
    if wanted != "auto":
        return wanted
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m archcurator.core.ground.child")
    ap.add_argument("cases", nargs="?", default=None,
                    help="JSONL file of cases ({'case', 'graph'}), or - for stdin")
    ap.add_argument("--generate", default=None, metavar="FIRST:END",
                    help="differential mode: generate the designs of seeds FIRST..END-1 (core.ground.generate), "
                         "run each eagerly, and write each line with its graph")
    ap.add_argument("--timeout", type=float, default=20.0, help="seconds per graph")
    ap.add_argument("--device", default="auto", help="device for what meta cannot see: auto | cpu | cuda")
    ap.add_argument("--full", action="store_true",
                    help="after meta, run every whole graph for real on the device (slow; checks the fast protocol)")
    ap.add_argument("--threads", type=int, default=0, help="torch intra-op threads (0: torch's default)")
    ap.add_argument("--memory-mb", type=int, default=None,
                    help="memory the runs may take on top of torch (default: a run's default on this host; "
                         f"{DIFFERENTIAL_MEMORY_MB} with --generate); an allocation past it is recorded as killed")
    args = ap.parse_args(argv)

    # stdout carries our lines only: anything else written there goes to stderr
    out = os.fdopen(os.dup(sys.stdout.fileno()), "w", buffering=1)
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())

    import warnings

    import torch

    warnings.filterwarnings("ignore")
    if args.threads:
        torch.set_num_threads(args.threads)
    device = pick_device(args.device)
    _arm_memory_limit(args.memory_mb or (DIFFERENTIAL_MEMORY_MB if args.generate else None), torch)
    signal.signal(signal.SIGALRM, _alarm)
    if args.generate:
        return _generate_and_run(args.generate, args.timeout, out)
    src = sys.stdin if args.cases == "-" else open(args.cases, encoding="utf-8")
    with src:
        for line in src:
            if not line.strip():
                continue
            case = json.loads(line)
            cid = case["case"]
            out.write(json.dumps({"start": cid}) + "\n")
            t0 = time.perf_counter()
            signal.setitimer(signal.ITIMER_REAL, args.timeout)
            try:
                obs = observe(case["graph"], device, args.full)
            except GraphTimeout:
                obs = {"status": "timeout", "exception": None, "message": f"ran past {args.timeout:g} s",
                       "stage": "timeout"}
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
            obs.update(case=cid, device=device, seconds=round(time.perf_counter() - t0, 4))
            out.write(json.dumps(obs) + "\n")
    return 0


def _arm_memory_limit(limit_mb: int | None, torch) -> None:
    """The runs' own guard (core.runs): on the CPU, the address space torch may grow to."""
    from ..runs.child import MemoryGuard

    guard = MemoryGuard(limit_mb, emit=None)
    guard.arm(torch.device("cpu"), torch)
    MEMORY_LIMIT[0] = guard.limit


def _generate_and_run(seeds: str, timeout: float, out) -> int:
    from .generate import generate

    first, _, end = seeds.partition(":")
    for seed in range(int(first), int(end)):
        cid = f"gen-{seed}"
        out.write(json.dumps({"start": cid}) + "\n")
        t0 = time.perf_counter()
        signal.setitimer(signal.ITIMER_REAL, timeout)
        graph = None
        try:
            graph = generate(seed)
            obs = observe_eager(graph)
        except Exception as exc:  # noqa: BLE001 - a generator fault costs its seed, not the run
            obs = {"status": "skipped", "origin": None, "node": None, "exception": type(exc).__name__,
                   "message": f"the generator failed: {exc}"[:MESSAGE_MAX], "stage": "generate"}
        except GraphTimeout:
            obs = {"status": "timeout", "origin": None, "node": None, "exception": None,
                   "message": f"ran past {timeout:g} s", "stage": "timeout"}
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        obs.update(case=cid, device="cpu", seconds=round(time.perf_counter() - t0, 4), graph=graph)
        out.write(json.dumps(obs) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

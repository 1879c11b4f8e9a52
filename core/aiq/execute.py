"""The executor: one candidate across seeds, and a question's ground truth.

``run_candidate(payload) -> dict`` is the unit of work the runner's child
process calls (``core/runs/child.py``, kind ``aiq``). It rebuilds the
candidate from its spec with our own code (never the generated Python of an
ArchitectureIQ bundle), trains all seeds at once (parameters stacked on a
leading seed dimension, see ``core.aiq.models``) and returns the final test
metric per seed and the curves.

``execute_question`` runs every candidate of a question and applies the
study's retention rule: the same candidate must win on all seeds (we also
record the gap, the win rate and the smallest per-seed margin).

Determinism on the CPU: every seed draws its initialisation and its batches
from its own generator, one intra-op thread, and deterministic algorithms
where torch offers them. On CUDA also (`_cuda_determinism`): cuBLAS's fixed
workspace, cuDNN's deterministic algorithms without benchmarking, full fp32
matrix products (no TF32) and the math kernel of scaled_dot_product_attention
(the fused kernels' backward is not reproducible). Initialisation and batch
order are drawn on the CPU on every device, so a CUDA run answers the same
question as the CPU's; CPU and CUDA floats still differ in their last bits,
so the device is part of every result.
"""

from __future__ import annotations

import contextlib
import math
import os
import time
from collections.abc import Callable
from typing import Any

from .spec import (
    EXECUTOR_VERSION,
    METRIC_BY_FAMILY,
    SpecError,
    recipe_id,
    validate_candidate,
)

N_SEEDS = 10
BASE_SEED = 0
EVAL_POINTS = 12
MIN_MARGIN = 0.02  # smallest per-seed relative lead the winner must hold to be kept (float noise
                   # can grow to ~1% over a few hundred steps on another machine)


def _resolve_device(requested: str | None) -> str:
    import torch

    req = (requested or "cpu").lower()
    if req == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if req.startswith("cuda") and not torch.cuda.is_available():
        raise SpecError("device 'cuda' requested but CUDA is not available")
    return req


def _dataset_tensors(payload: dict) -> tuple:
    from . import datasets

    if payload.get("tensors") is not None:
        return tuple(payload["tensors"])
    if payload.get("dataset_path"):
        return datasets.load_tensors(payload["dataset_path"])
    spec = payload.get("dataset")
    if not isinstance(spec, dict):
        raise SpecError("payload needs 'dataset' (a spec), 'dataset_path' or 'tensors'")
    if not datasets.is_synthesisable(spec):
        raise SpecError(f"dataset {spec.get('dataset_id')}: no tensors and not one of ours to rebuild")
    return datasets.materialize(spec)


def run_candidate(payload: dict, *, emit: Any = None, **_offered: Any) -> dict:
    """Train one candidate on every seed; the final test metric per seed and the curves.

    payload: ``candidate`` (candidate_spec), one of ``dataset`` (our spec) /
    ``dataset_path`` (a folder with train.pt, test.pt) / ``tensors``; optional
    ``family`` (else the candidate's), ``seeds`` (list) or ``n_seeds`` +
    ``base_seed``, ``device`` ("cpu", "cuda", "auto"), ``eval_points``,
    ``threads`` (default 1). EMIT (the runs child's event sink) gets a
    progress event at each evaluation point and the mean test metric.
    """
    import torch

    from .models import build_batched, build_optimizer

    t0 = time.perf_counter()
    cand = payload["candidate"]
    validate_candidate(cand)
    family = payload.get("family") or cand.get("family") or (payload.get("dataset") or {}).get("family")
    metric = METRIC_BY_FAMILY.get(family)
    if metric is None:
        raise SpecError(f"unknown dataset family {family!r}")
    base = int(payload.get("base_seed", BASE_SEED))
    seeds = list(payload.get("seeds") or range(base, base + int(payload.get("n_seeds", N_SEEDS))))
    device = _resolve_device(payload.get("device"))
    tx, ty, vx, vy = _dataset_tensors(payload)

    prev_threads = torch.get_num_threads()
    prev_det = torch.are_deterministic_algorithms_enabled()
    torch.set_num_threads(int(payload.get("threads", 1)))
    torch.use_deterministic_algorithms(True, warn_only=True)
    try:
        with _cuda_determinism(torch, device):
            out = _train(cand, metric, seeds, device, tx, ty, vx, vy, int(payload.get("eval_points", EVAL_POINTS)),
                         build_batched, build_optimizer, emit)
    finally:
        torch.set_num_threads(prev_threads)
        torch.use_deterministic_algorithms(prev_det)
    out.update({
        "candidate_id": cand.get("candidate_id"),
        "recipe_id": recipe_id(cand),
        "metric": metric,
        "seeds": seeds,
        "device": device,
        "torch": torch.__version__,
        "executor": EXECUTOR_VERSION,
        "seconds": round(time.perf_counter() - t0, 3),
    })
    return out


#: cuBLAS is reproducible only with a fixed workspace, read when its first handle is made (the
#: runs child sets it before torch starts; this covers run_candidate called in-process).
CUBLAS_WORKSPACE = ":4096:8"


def _fp32_flags(torch) -> list[tuple[object, str]]:
    """(object, attribute) of each switch that lets CUDA compute fp32 in TF32."""
    b = torch.backends
    if hasattr(b.cuda.matmul, "fp32_precision") or hasattr(b, "fp32_precision"):  # torch >= 2.9
        return [(b.cuda.matmul, "fp32_precision"), (b.cudnn.conv, "fp32_precision"),
                (b.cudnn.rnn, "fp32_precision")]
    return [(b.cuda.matmul, "allow_tf32"), (b.cudnn, "allow_tf32")]


@contextlib.contextmanager
def _cuda_determinism(torch, device: str):
    """On CUDA, the switches that make a run repeat itself and stay close to the
    CPU's numbers; each is put back afterwards. Nothing changes on the CPU."""
    if not str(device).startswith("cuda"):
        yield
        return
    from torch.nn.attention import SDPBackend, sdpa_kernel

    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", CUBLAS_WORKSPACE)
    cudnn = torch.backends.cudnn
    flags = _fp32_flags(torch)
    saved = (cudnn.deterministic, cudnn.benchmark, [getattr(o, a) for o, a in flags])
    try:
        cudnn.deterministic, cudnn.benchmark = True, False
        for o, a in flags:
            setattr(o, a, "ieee" if a == "fp32_precision" else False)
        with sdpa_kernel([SDPBackend.MATH]):
            yield
    finally:
        cudnn.deterministic, cudnn.benchmark = saved[0], saved[1]
        for (o, a), v in zip(flags, saved[2]):
            setattr(o, a, v)


def _train(cand, metric, seeds, device, tx, ty, vx, vy, eval_points, build_batched, build_optimizer,
           emit=None) -> dict:
    import torch
    import torch.nn.functional as F

    S = len(seeds)
    steps = int(cand["budget"]["training_steps"])
    bs = int(cand["budget"]["batch_size"])
    m = cand["model"]
    lm = m["type"] == "transformer_lm"
    classify = metric == "test_ce"
    if lm:
        vocab = int(m.get("vocab_size") or int(max(tx.max(), ty.max(), vx.max(), vy.max())) + 1)
        context = int(m.get("context_length") or tx.shape[1])
        model = build_batched(m, input_dim=0, output_dim=0, vocab=vocab, context=context, seeds=seeds)
    else:
        if tx.dim() == 1:
            tx, vx = tx.unsqueeze(-1), vx.unsqueeze(-1)
        tx, vx = tx.float(), vx.float()
        if classify:
            n_cls = int(m.get("output_dim") or int(max(ty.max(), vy.max())) + 1)
            ty, vy = ty.reshape(-1).long(), vy.reshape(-1).long()
        else:
            n_cls = 1
            ty, vy = ty.float().reshape(ty.shape[0], -1), vy.float().reshape(vy.shape[0], -1)
        model = build_batched(m, input_dim=int(m.get("input_dim") or tx.shape[1]), output_dim=n_cls,
                              vocab=0, context=0, seeds=seeds)
    if device != "cpu":
        model.to(device)
        tx, ty, vx, vy = (t.to(device) for t in (tx, ty, vx, vy))
    opt = build_optimizer(cand["optimizer"], model.params)
    loss_id = cand["loss"]["loss_id"]
    lam = float(cand["loss"].get("lambda", 0.0) or 0.0)
    penalty = "l2" if loss_id.endswith("_l2") else "l1" if loss_id.endswith("_l1") else None

    n = tx.shape[0]
    # each seed's batch indices come from its own stream (independent of S)
    idx = torch.stack([
        torch.randint(0, n, (steps, bs), generator=torch.Generator().manual_seed(10_007 * int(s) + 1))
        for s in seeds
    ]).to(device)  # [S, steps, bs]

    def per_seed_loss(pred, y):
        if classify:
            C = pred.shape[-1]
            yy = y.expand(S, *y.shape[1:]) if y.shape[0] == 1 else y
            ce = F.cross_entropy(pred.reshape(-1, C), yy.reshape(-1), reduction="none")
            return ce.reshape(S, -1).mean(1)
        return (pred - y).pow(2).reshape(S, -1).mean(1)

    @torch.no_grad()
    def evaluate() -> list[float]:
        vals = torch.zeros(S, dtype=torch.float64, device=vx.device)
        chunk = 256
        total = vx.shape[0]
        for i in range(0, total, chunk):
            xb = vx[i:i + chunk]
            yb = vy[i:i + chunk]
            xs = xb.unsqueeze(0).expand(S, *xb.shape).contiguous()
            pred = model.forward(xs)
            vals += per_seed_loss(pred, yb.unsqueeze(0)).double() * xb.shape[0]
        return (vals / total).tolist()

    eval_at = sorted({max(1, round(steps * (k + 1) / eval_points)) for k in range(eval_points)})
    failed = [False] * S
    curves: list[list[float]] = []
    samples: list[int] = []
    for step in range(1, steps + 1):
        b = idx[:, step - 1]  # [S, bs]
        xb, yb = tx[b], ty[b]
        pred = model.forward(xb)
        losses = per_seed_loss(pred, yb)
        if penalty:
            losses = losses + lam * model.penalty(penalty)
        finite = torch.isfinite(losses)
        if not bool(finite.all()):
            for s in range(S):
                if not bool(finite[s]):
                    failed[s] = True
        total = torch.where(finite, losses, torch.zeros_like(losses)).sum()
        opt.zero_grad(set_to_none=True)
        total.backward()
        opt.step()
        if step in eval_at:
            curves.append(evaluate())
            samples.append(step * bs)
            if emit is not None:
                ok = [v for v in curves[-1] if math.isfinite(v)]
                emit.progress("aiq", f"step {step}/{steps}", step=step, total=steps)
                if ok:
                    emit.metric(metric, sum(ok) / len(ok), step=step)
    final = curves[-1] if curves else [math.inf] * S
    finals: list[float | None] = []
    for s in range(S):
        v = final[s]
        if failed[s] or not math.isfinite(v):
            failed[s] = True
            finals.append(None)
        else:
            finals.append(float(v))
    ok = [v for v in finals if v is not None]
    mean = sum(ok) / len(ok) if ok else None
    std = (sum((v - mean) ** 2 for v in ok) / len(ok)) ** 0.5 if ok else None
    per_seed_curves = [[(None if not math.isfinite(c[s]) else float(c[s])) for c in curves] for s in range(S)]
    return {
        "finals": finals,
        "failed": failed,
        "failed_seeds": sum(failed),
        "mean": mean,
        "std": std,
        "params": model.num_params(),
        "curves": {"samples": samples, "values": per_seed_curves},
    }


# --------------------------------------------------------------------------- significance

def significance(results: list[dict], *, min_margin: float = MIN_MARGIN) -> dict:
    """The study's rule: the same candidate wins on every seed. Lower metric is better.

    Returns winner index (by mean), win_rate, gap (runner-up mean - winner mean),
    rel_gap, min_margin (smallest per-seed relative lead over the next best)
    and ``passed`` (win_rate == 1, no failed seed for the winner, margin held).
    """
    n = len(results)
    means = [r["mean"] if r["mean"] is not None else math.inf for r in results]
    order = sorted(range(n), key=lambda i: means[i])
    winner, runner = order[0], order[1]
    n_seeds = len(results[0]["finals"])
    wins, margins = 0, []
    for s in range(n_seeds):
        vals = [math.inf if r["finals"][s] is None else r["finals"][s] for r in results]
        best = min(range(n), key=lambda i: vals[i])
        if best == winner and math.isfinite(vals[winner]):
            wins += 1
            second = min(v for i, v in enumerate(vals) if i != winner)
            margins.append((second - vals[winner]) / max(abs(vals[winner]), 1e-12))
        else:
            margins.append(-1.0)
    gap = means[runner] - means[winner]
    rel = gap / max(abs(means[runner]), 1e-12) if math.isfinite(gap) else math.inf
    mm = min(margins) if margins else -1.0
    passed = (wins == n_seeds and results[winner]["failed_seeds"] == 0 and mm >= min_margin)
    reason = "" if passed else (
        f"win_rate {wins}/{n_seeds}" if wins != n_seeds else
        "winner has failed seeds" if results[winner]["failed_seeds"] else
        f"per-seed margin {mm:.4f} < {min_margin}")
    return {
        "passed": passed,
        "winner_index": winner,
        "win_rate": wins / n_seeds,
        "gap": gap if math.isfinite(gap) else None,
        "rel_gap": rel if math.isfinite(rel) else None,
        "min_margin": mm,
        "n_seeds": n_seeds,
        "rule": "same candidate wins on all seeds",
        "reason": reason,
    }


Runner = Callable[[dict], dict]


def execute_candidates(candidates: list[dict], *, dataset: dict | None = None, dataset_path: str | None = None,
                       tensors: tuple | None = None, device: str = "cpu", runner: Runner | None = None,
                       n_seeds: int = N_SEEDS, base_seed: int = BASE_SEED) -> list[dict]:
    """run_candidate for each (through RUNNER when given: the runs backend's child)."""
    call = runner or run_candidate
    out = []
    for c in candidates:
        payload: dict[str, Any] = {"candidate": c, "device": device, "n_seeds": n_seeds, "base_seed": base_seed}
        if tensors is not None and runner is None:
            payload["tensors"] = tensors
        elif dataset_path:
            payload["dataset_path"] = str(dataset_path)
        if dataset is not None:
            payload["dataset"] = dataset
            payload["family"] = dataset.get("family")
        out.append(call(payload))
    return out


def execute_question(question: dict, *, device: str = "cpu", runner: Runner | None = None,
                     dataset_path: str | None = None, tensors: tuple | None = None,
                     n_seeds: int = N_SEEDS, base_seed: int = BASE_SEED,
                     min_margin: float = MIN_MARGIN) -> dict:
    """Re-execute every choice of QUESTION; report the winner we find and whether it is kept.

    Returns {"results": [...per choice], "significance": {...}, "winner_letter",
    "recorded_letter", "reproduced": bool}.
    """
    cands = [ch["candidate"] for ch in question["choices"]]
    dataset_path = dataset_path or question.get("dataset_path")
    results = execute_candidates(cands, dataset=question.get("dataset"), dataset_path=dataset_path,
                                 tensors=tensors, device=device, runner=runner,
                                 n_seeds=n_seeds, base_seed=base_seed)
    sig = significance(results, min_margin=min_margin)
    letter = question["choices"][sig["winner_index"]]["letter"]
    return {
        "results": results,
        "significance": sig,
        "winner_letter": letter,
        "recorded_letter": question.get("correct_letter"),
        "reproduced": letter == question.get("correct_letter"),
    }


class RunFailed(RuntimeError):
    """A candidate's run through the runner did not end ok."""


def runs_runner(*, device: str = "cpu", time_limit_s: float | None = 900, on_result=None) -> Runner:
    """A Runner that sends each candidate through ``core.runs`` (kind ``aiq``, a child
    process, the local or Ray backend). ON_RESULT(spec, result) sees every finished run
    (the CLI records it in the store)."""
    from ..runs import RunSpec, run_sync

    def call(payload: dict) -> dict:
        payload = {k: v for k, v in payload.items() if k != "tensors"}
        spec = RunSpec(kind="aiq", payload=payload, device=device if device in ("auto", "cpu", "cuda") else "auto",
                       time_limit_s=time_limit_s,
                       tags={"candidate_id": payload["candidate"].get("candidate_id")})
        res = run_sync(spec)
        if on_result is not None:
            on_result(spec, res)
        if res.status != "ok":
            raise RunFailed(f"candidate {payload['candidate'].get('candidate_id')}: run {res.status}"
                            f" ({res.exception or ''}: {res.message})")
        return res.metrics
    return call

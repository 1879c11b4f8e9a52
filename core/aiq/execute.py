"""The executor: one candidate across seeds, and a question's ground truth.

``run_candidate(payload) -> dict`` is the unit of work the runner's child
process calls (``core/runs/child.py``, kind ``aiq``). It rebuilds the
candidate from its spec with our own code (never the generated Python of an
ArchitectureIQ bundle), trains all seeds at once (parameters stacked on a
leading seed dimension, see ``core.aiq.models``) and returns the final test
metric per seed and the curves.

``execute_question`` runs every candidate of a question and applies a
retention rule (``significance``): the study's by default (absolute gap >=
0.05, seed win rate >= 0.7, mean +- std not overlapping), or our stricter
one as an option (10/10 seeds, a 2% per-seed margin). A seed whose final
metric passes the study's failure threshold fails, as in the study.

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
MIN_MARGIN = 0.02  # the strict rule: smallest per-seed relative lead the winner must hold (float
                   # noise can grow to ~1% over a few hundred steps on another machine)

# The study's retention rule (profiles v1-v2.2 `significance`, `ground_truth`): the winner by
# mean beats the runner-up by an absolute gap >= 0.05, wins on >= 70% of the seeds, and
# mean +- std of the two do not overlap; a pool with a candidate that failed 3+ seeds is out.
GAP_MIN = 0.05
WIN_RATE_MIN = 0.7
MAX_FAILED_SEEDS = 3
RULES = ("study", "strict")
DEFAULT_RULE = "study"
# A seed fails when its final test metric is above this (the study's `fail_threshold`;
# its bigram family raises it to 4.0, above the 3.47 nats of a uniform guess over 32 tokens).
FAIL_THRESHOLD = 2.0
FAIL_THRESHOLD_BY_FAMILY = {"bigram_lm": 4.0}


def fail_threshold_for(family: str | None, dataset: dict | None = None) -> float:
    """The dataset spec's own threshold when it states one, else the study's default for FAMILY."""
    sig = (dataset or {}).get("significance") if isinstance(dataset, dict) else None
    if isinstance(sig, dict):
        try:
            v = float(sig["fail_threshold"])
            if math.isfinite(v) or v == math.inf:
                return v
        except (KeyError, TypeError, ValueError):
            pass
    return FAIL_THRESHOLD_BY_FAMILY.get(family or "", FAIL_THRESHOLD)


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
        spec = payload.get("dataset") if isinstance(payload.get("dataset"), dict) else None
        return datasets.load_tensors(payload["dataset_path"], spec)
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
    threshold = payload.get("fail_threshold")
    threshold = float(threshold) if threshold is not None else fail_threshold_for(family, payload.get("dataset"))

    prev_threads = torch.get_num_threads()
    prev_det = torch.are_deterministic_algorithms_enabled()
    torch.set_num_threads(int(payload.get("threads", 1)))
    torch.use_deterministic_algorithms(True, warn_only=True)
    try:
        with _cuda_determinism(torch, device):
            out = _train(cand, metric, seeds, device, tx, ty, vx, vy, int(payload.get("eval_points", EVAL_POINTS)),
                         build_batched, build_optimizer, emit, threshold)
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
        "fail_threshold": threshold,
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
           emit=None, fail_threshold: float = math.inf) -> dict:
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
        # the study's per-seed failure: a non-finite loss or metric, or a final metric past the threshold
        if failed[s] or not math.isfinite(v) or v > fail_threshold:
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

def _per_seed_wins(results: list[dict], winner: int) -> tuple[int, list[float]]:
    """Seeds the WINNER is best on (a failed seed counts as infinitely bad), and its relative
    lead over the next best on each seed (-1 where it does not win)."""
    n = len(results)
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
    return wins, margins


def _std(r: dict) -> float:
    if r.get("std") is not None:
        return float(r["std"])
    ok = [v for v in r["finals"] if v is not None]
    if not ok:
        return math.inf
    m = sum(ok) / len(ok)
    return (sum((v - m) ** 2 for v in ok) / len(ok)) ** 0.5


def significance(results: list[dict], *, rule: str = DEFAULT_RULE, min_margin: float = MIN_MARGIN,
                 gap_min: float = GAP_MIN, win_rate_min: float = WIN_RATE_MIN,
                 max_failed_seeds: int = MAX_FAILED_SEEDS) -> dict:
    """Is the question's winner significant? Lower metric is better.

    ``rule="study"`` (the default) is ArchitectureIQ's: no candidate failed
    MAX_FAILED_SEEDS seeds or more, the winner by mean beats the runner-up by
    an absolute gap >= GAP_MIN, wins on >= WIN_RATE_MIN of the seeds, and
    winner mean + std < runner-up mean - std. ``rule="strict"`` is ours: the
    winner wins every seed, has no failed seed, and leads by a relative
    margin >= MIN_MARGIN on every seed.

    Returns winner index (by mean), win_rate, gap (runner-up mean - winner
    mean), rel_gap, min_margin (smallest per-seed relative lead), ``passed``,
    the ``rule`` and, when not passed, the ``reason``.
    """
    if rule not in RULES:
        raise SpecError(f"unknown retention rule {rule!r} (use {' or '.join(RULES)})")
    n = len(results)
    means = [r["mean"] if r.get("mean") is not None else math.inf for r in results]
    order = sorted(range(n), key=lambda i: means[i])
    winner, runner = order[0], order[1]
    n_seeds = len(results[0]["finals"])
    wins, margins = _per_seed_wins(results, winner)
    gap = means[runner] - means[winner]
    rel = gap / max(abs(means[runner]), 1e-12) if math.isfinite(gap) else math.inf
    mm = min(margins) if margins else -1.0
    win_rate = wins / n_seeds if n_seeds else 0.0
    if rule == "strict":
        passed = (wins == n_seeds and results[winner]["failed_seeds"] == 0 and mm >= min_margin)
        reason = "" if passed else (
            f"win_rate {wins}/{n_seeds}" if wins != n_seeds else
            "winner has failed seeds" if results[winner]["failed_seeds"] else
            f"per-seed margin {mm:.4f} < {min_margin}")
        text = f"same candidate wins on all {n_seeds} seeds, per-seed relative margin >= {min_margin}"
    else:
        reason = ""
        excluded = [i for i, r in enumerate(results) if int(r.get("failed_seeds") or 0) >= max_failed_seeds]
        if excluded:
            reason = f"a candidate failed {max_failed_seeds}+ seeds"
        elif not all(math.isfinite(m) for m in means):
            reason = "non-finite mean"
        elif gap < gap_min:
            reason = f"gap {gap:.4f} < {gap_min}"
        elif win_rate < win_rate_min:
            reason = f"win_rate {win_rate:.2f} < {win_rate_min}"
        elif means[winner] + _std(results[winner]) >= means[runner] - _std(results[runner]):
            reason = "mean +- std overlap"
        passed = not reason
        text = (f"gap >= {gap_min}, seed win rate >= {win_rate_min}, mean +- std not overlapping, "
                f"no candidate with {max_failed_seeds}+ failed seeds")
    return {
        "passed": passed,
        "winner_index": winner,
        "win_rate": win_rate,
        "gap": gap if math.isfinite(gap) else None,
        "rel_gap": rel if math.isfinite(rel) else None,
        "min_margin": mm,
        "n_seeds": n_seeds,
        "rule": f"{rule}: {text}",
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
                     min_margin: float = MIN_MARGIN, rule: str = DEFAULT_RULE) -> dict:
    """Re-execute every choice of QUESTION; report the winner we find and whether it is kept.

    Returns {"results": [...per choice], "significance": {...}, "winner_letter",
    "recorded_letter", "reproduced": bool}.
    """
    cands = [ch["candidate"] for ch in question["choices"]]
    dataset_path = dataset_path or question.get("dataset_path")
    results = execute_candidates(cands, dataset=question.get("dataset"), dataset_path=dataset_path,
                                 tensors=tensors, device=device, runner=runner,
                                 n_seeds=n_seeds, base_seed=base_seed)
    sig = significance(results, min_margin=min_margin, rule=rule)
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
    from . import run_kind  # noqa: F401 - registers the aiq run kind

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

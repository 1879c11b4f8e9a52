"""The work of the built-in run kinds, run inside the child (torch is imported).

- ``forward``: build the design with `core.build.build_module`, make inputs
  with `core.build.example_inputs`, run one forward pass at the design's declared
  sizes and in its declared mode (training, with autograd, unless train.mode is eval).
- ``train``: a short training on a synthetic task. A second copy of the
  design, built with another seed, is a fixed random *teacher*; the student
  (the design under test) learns to reproduce the teacher's outputs on a few
  fixed random batches, so the task is learnable by construction and the
  loss can fall. The loss is `design.train.loss` when it names one we know,
  else chosen from the output's shape: a 2-D output [B, C>1] is a
  classification (cross-entropy against the teacher's argmax), anything else
  a regression (MSE against the teacher's output). Classes are always the
  last dimension. Adam, lr `train.lr` (default 1e-3). One ``metric`` event
  (name ``loss``) per step when there are at most `METRIC_POINTS` steps,
  else one every ceil(steps / METRIC_POINTS) steps, the first and the last,
  and at least one every `METRIC_EVERY_S` seconds.

Other kinds belong to the rooms that define them and register into `registry`
(``aiq``: `core.aiq.run_kind`).
"""

from __future__ import annotations

import math
import resource
import time

METRIC_POINTS = 2000
#: On long runs, a loss point at least this often (seconds) for a live plot.
METRIC_EVERY_S = 0.5
CURVE_POINTS = 500
N_BATCHES = 4


def run(spec, device, torch, emit) -> dict:
    """The work of the built-in kinds (`registry`); a client's kind has its own module."""
    if spec.kind == "forward":
        return forward(spec, device, torch, emit)
    if spec.kind == "train":
        return train(spec, device, torch, emit)
    raise ValueError(f"unknown run kind {spec.kind!r}")


# ---- helpers -------------------------------------------------------------------


def _load_builder():
    from ..build import build_module, example_inputs  # noqa: PLC0415

    return build_module, example_inputs


def _design(spec):
    from ..graph import Design  # noqa: PLC0415

    name = (spec.design or {}).get("name") or "<design>"
    return Design.from_dict(spec.design, source=name)


def _as_args(inputs) -> tuple:
    if isinstance(inputs, (list, tuple)):
        return tuple(inputs)
    if isinstance(inputs, dict):
        return tuple(inputs.values())
    return (inputs,)


def _tensors(out, torch) -> list:
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, dict):
        out = list(out.values())
    if isinstance(out, (list, tuple)):
        res = []
        for o in out:
            res.extend(_tensors(o, torch))
        return res
    return []


def _inputs(example_inputs, design, batch, device, seed, env=None):
    """`example_inputs`, seeded when the builder takes a seed."""
    try:
        return example_inputs(design, batch=batch, device=str(device), seed=seed, env=env)
    except TypeError as exc:
        if "seed" not in str(exc):
            raise
        return example_inputs(design, batch=batch, device=str(device), env=env)


def _param_count(model) -> int:
    seen, n = set(), 0
    for p in model.parameters():
        if id(p) not in seen:
            seen.add(id(p))
            n += p.numel()
    return n


def _sync(device, torch) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _peak_memory_mb(device, torch) -> float:
    if device.type == "cuda":
        return round(torch.cuda.max_memory_allocated(device) / (1 << 20), 1)
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def _build(spec, device, torch, emit, seed: int, label: str = "design", sizes: dict | None = None):
    build_module, _ = _load_builder()
    design = _design(spec)
    emit.progress("build", f"building the {label}")
    torch.manual_seed(seed)
    model = build_module(design, device=str(device), sizes=sizes)
    return design, model


# ---- forward ---------------------------------------------------------------------


def forward(spec, device, torch, emit) -> dict:
    """One forward pass at the sizes and in the mode the design declares (train.batch_size unless the
    spec chose a batch, train.seq_len, train.mode: training by default, with autograd), as the verifier
    judges it and the differential runs observe it (core.ground.child): batch statistics over one
    value or dropout on integer ids fail there, and only there."""
    from ..sizes import run_batch, run_mode, run_sizes  # noqa: PLC0415

    _, example_inputs = _load_builder()
    design = _design(spec)
    batch, sizes, training = run_batch(design, spec.batch_size), run_sizes(design, spec.batch_size), \
        run_mode(design) != "eval"
    design, model = _build(spec, device, torch, emit, spec.seed, sizes=sizes)
    model.train(training)
    inputs = _as_args(_inputs(example_inputs, design, batch, device, spec.seed, env=sizes))
    emit.progress("forward", f"forward pass, batch {batch}, {'training' if training else 'eval'} mode", step=0,
                  total=1)
    with torch.set_grad_enabled(training):
        _sync(device, torch)
        t = time.perf_counter()
        out = model(*inputs)
        _sync(device, torch)
        ms = (time.perf_counter() - t) * 1000
    emit.progress("forward", "done", step=1, total=1)
    shapes = [list(o.shape) for o in _tensors(out, torch)]
    return {
        "params": _param_count(model),
        "batch_size": batch,
        "mode": "train" if training else "eval",
        "output_shapes": shapes,
        "forward_ms": round(ms, 3),
        "peak_memory_mb": _peak_memory_mb(device, torch),
    }


# ---- train -----------------------------------------------------------------------

_LOSS_ALIASES = {
    "cross_entropy": "cross_entropy", "crossentropy": "cross_entropy", "ce": "cross_entropy",
    "crossentropyloss": "cross_entropy", "categorical_crossentropy": "cross_entropy",
    "softmax_cross_entropy": "cross_entropy",
    "nll": "nll", "nll_loss": "nll", "nllloss": "nll",
    "mse": "mse", "mse_loss": "mse", "mseloss": "mse", "l2": "mse", "mean_squared_error": "mse",
    "l1": "l1", "l1_loss": "l1", "l1loss": "l1", "mae": "l1",
    "smooth_l1": "smooth_l1", "smooth_l1_loss": "smooth_l1", "huber": "smooth_l1",
    "huber_loss": "smooth_l1",
    "bce": "bce", "bce_with_logits": "bce", "bcewithlogitsloss": "bce",
    "binary_cross_entropy": "bce", "binary_cross_entropy_with_logits": "bce",
}


def choose_loss(declared, out, emit=None) -> str:
    """The loss used for a training run (see the module docstring)."""
    if isinstance(declared, str):
        key = declared.strip().lower().replace("-", "_").replace(" ", "_")
        name = _LOSS_ALIASES.get(key)
        if name in ("cross_entropy", "nll") and (out.ndim < 2 or out.shape[-1] < 2):
            name = "mse"
        if name:
            return name
        if emit is not None:
            emit.log(f"loss {declared!r} is not one the synthetic task knows; "
                     "choosing from the output's shape", level="warning")
    if out.ndim == 2 and out.shape[-1] > 1:
        return "cross_entropy"
    return "mse"


def _target(name: str, teacher_out, torch):
    if name in ("cross_entropy", "nll"):
        return teacher_out.argmax(dim=-1)
    if name == "bce":
        return (teacher_out > 0).to(teacher_out.dtype)
    return teacher_out


def _loss(name: str, out, target, torch):
    F = torch.nn.functional
    if name in ("cross_entropy", "nll"):
        c = out.shape[-1]
        flat, labels = out.reshape(-1, c), target.reshape(-1)
        return F.cross_entropy(flat, labels) if name == "cross_entropy" else F.nll_loss(flat, labels)
    if name == "bce":
        return F.binary_cross_entropy_with_logits(out, target)
    if name == "l1":
        return F.l1_loss(out, target)
    if name == "smooth_l1":
        return F.smooth_l1_loss(out, target)
    return F.mse_loss(out, target)


def _first_float(out, torch):
    for t in _tensors(out, torch):
        if t.is_floating_point():
            return t
    raise TypeError("the design has no floating-point output to train against")


def _downsample(xs: list, n: int) -> list:
    if len(xs) <= n:
        return list(xs)
    step = len(xs) / n
    picked = [xs[int(i * step)] for i in range(n - 1)]
    return picked + [xs[-1]]


def train(spec, device, torch, emit) -> dict:
    _, example_inputs = _load_builder()
    steps = spec.train_steps
    design, model = _build(spec, device, torch, emit, spec.seed, "student")
    params = [p for p in model.parameters() if p.requires_grad]
    if not params:
        raise ValueError("the design has no trainable parameters")
    _, teacher = _build(spec, device, torch, emit, spec.seed + 1, "teacher")
    teacher.eval()
    torch.manual_seed(spec.seed + 2)
    n = min(N_BATCHES, steps)
    batches = [_as_args(_inputs(example_inputs, design, spec.batch, device, spec.seed + 2 + i))
               for i in range(n)]
    with torch.no_grad():
        teacher_outs = [_first_float(teacher(*b), torch).detach() for b in batches]
    del teacher
    train_cfg = design.train or {}
    loss_name = choose_loss(train_cfg.get("loss"), teacher_outs[0], emit)
    targets = [_target(loss_name, t, torch) for t in teacher_outs]
    lr = float(train_cfg.get("lr", 1e-3))
    opt = torch.optim.Adam(params, lr=lr)
    model.train()
    every = max(1, math.ceil(steps / METRIC_POINTS))
    emit.progress("train", f"{steps} steps, loss {loss_name}, Adam lr {lr:g}", step=0, total=steps)
    losses: list[float] = []  # the emitted points (every step on short runs)
    first, lowest = None, math.inf
    t0 = last_emit = time.perf_counter()
    for step in range(1, steps + 1):
        i = (step - 1) % n
        opt.zero_grad(set_to_none=True)
        out = _first_float(model(*batches[i]), torch)
        loss = _loss(loss_name, out, targets[i], torch)
        loss.backward()
        opt.step()
        value = float(loss.detach())
        if not math.isfinite(value):
            raise FloatingPointError(f"training loss became {value} at step {step}")
        first = value if first is None else first
        lowest = min(lowest, value)
        now = time.perf_counter()
        if step % every == 0 or step in (1, steps) or now - last_emit >= METRIC_EVERY_S:
            last_emit = now
            losses.append(value)
            emit.metric("loss", value, step=step)
            emit.progress("train", "", step=step, total=steps)
    _sync(device, torch)
    secs = time.perf_counter() - t0
    return {
        "steps": steps,
        "loss": loss_name,
        "lr": lr,
        "batch_size": spec.batch,
        "loss_first": first,
        "loss_last": value,
        "loss_min": lowest,
        "loss_curve": _downsample(losses, CURVE_POINTS),
        "params": _param_count(model),
        "steps_per_s": round(steps / secs, 3) if secs > 0 else None,
        "peak_memory_mb": _peak_memory_mb(device, torch),
    }

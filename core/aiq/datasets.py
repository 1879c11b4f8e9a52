"""Synthetic dataset families, rebuilt from their spec by our own code.

Each spec mirrors ArchitectureIQ's ``dataset_spec.json`` (``family``,
``dataset_id``, ``params``, ``selection_metric``, ``significance``). The
tensors are a pure function of ``params`` (seeded torch generators), so a
question carries its dataset as a few numbers and anyone can rebuild it bit
for bit on the CPU. Imported ArchitectureIQ bundles bring their own tensors
(``train.pt`` / ``test.pt``); those are used as they are.

The families and their sizes follow the study's profiles (v1-v2.2):

- ``univariate_regression``: a target expression of ``x`` on ``[0, 1]``
  (``core.aiq.expressions``), 256 train and 256 test points, no noise, the
  target not normalised; ``multivariate_regression`` the same over
  ``x0..x{n-1}``, n in {2, 3, 4, 5, 8}. The expression text is the spec:
  the tensors are rebuilt by reading it back.
- ``bigram_lm``: windows of 16 tokens over a vocabulary of 32 from one
  bigram table (softmax of standard-normal logits times ``alpha`` = 1),
  the first token from the table's stationary law; 800 train and 200 test
  windows.
- ``xor_classification`` and ``spiral_classification`` (ours, two classes
  in the plane: the signs of ``x0 * x1``, or two interleaved spiral arms),
  with label noise.
- ``synthetic_tabular_classification`` (ours, the older shape).

torch is imported inside the functions that need it.
"""

from __future__ import annotations

import math
import random
from typing import Any

from .expressions import parse, render, sample_target, target_features
from .spec import METRIC_BY_FAMILY, SCHEMA_VERSION, SpecError, short_hash

ID_PREFIX = {
    "univariate_regression": "sym",
    "multivariate_regression": "mvar",
    "bigram_lm": "bg",
    "xor_classification": "xor",
    "spiral_classification": "spiral",
    "synthetic_tabular_classification": "stabcls",
}
#: the families the question generator draws (the study's three plus two classification tasks)
GENERATED_FAMILIES = ("univariate_regression", "multivariate_regression", "bigram_lm",
                      "xor_classification", "spiral_classification")

GENERATOR = "archcurator.core.aiq.datasets/2"
GENERATORS = ("archcurator.core.aiq.datasets/1", GENERATOR)
MULTIVARIATE_DIMS = (2, 3, 4, 5, 8)
FAIL_THRESHOLD = {"bigram_lm": 4.0}


# --------------------------------------------------------------------------- sampling

def _regression_params(family: str, seed: int, options: dict) -> dict:
    rng = random.Random(f"{family}:{seed}")
    dims = 1 if family == "univariate_regression" else int(options.get("input_dim", rng.choice(MULTIVARIATE_DIMS)))
    node, retry = sample_target(seed, dims)
    return {
        "instance_seed": seed,
        "input_dim": dims,
        "sampler": {"id": "symbolic_expr" if dims == 1 else "symbolic_expr_mv", "seed": seed, "max_depth": 3,
                    "retry": retry},
        "expression": render(node, univariate=dims == 1),
        "domain": [0.0, 1.0],
        "train_size": int(options.get("train_size", 256)),
        "test_size": int(options.get("test_size", 256)),
        "noise": _noise_spec(options, seed),
        "point_sampling": {"distribution": "uniform", "seed": seed + 1_000},
    }


def _noise_spec(options: dict, seed: int) -> dict:
    """The regression target noise a spec states: the study's is none; ``noise_std`` > 0 adds
    Gaussian noise of that std to the training targets only (the test targets stay the clean
    function, so a model that fits the noise is the one that loses)."""
    std = float(options.get("noise_std", 0.0) or 0.0)
    if std <= 0:
        return {"enabled": False}
    return {"enabled": True, "std": std, "seed": seed + 2_000, "split": "train"}


def sample_dataset_spec(family: str, seed: int, **options: Any) -> dict:
    """A new dataset spec of FAMILY drawn from SEED (options pin a parameter)."""
    rng = random.Random(f"{family}:{seed}")
    if family in ("univariate_regression", "multivariate_regression"):
        params = _regression_params(family, seed, options)
    elif family == "bigram_lm":
        params = {
            "instance_seed": seed,
            "vocab_size": int(options.get("vocab_size", 32)),
            "context_length": int(options.get("context_length", 16)),
            "train_size": int(options.get("train_size", 800)),
            "test_size": int(options.get("test_size", 200)),
            "alpha": float(options.get("alpha", 1.0)),
            "layout": "lm",
            "sequence_seed": seed,
            "table_seed": seed + 10_000,
        }
    elif family in ("xor_classification", "spiral_classification"):
        params = {
            "instance_seed": seed,
            "input_dim": 2,
            "num_classes": 2,
            "domain": [-1.0, 1.0],
            "label_noise": float(options.get("label_noise", rng.choice([0.0, 0.05, 0.1]))),
            "train_size": int(options.get("train_size", rng.choice([256, 512]))),
            "test_size": int(options.get("test_size", 1024)),
            "point_seed": seed + 1_000,
        }
        if family == "spiral_classification":
            params["turns"] = float(options.get("turns", rng.choice([0.75, 1.0, 1.5])))
            params["noise_std"] = float(options.get("noise_std", rng.choice([0.02, 0.05])))
    elif family == "synthetic_tabular_classification":
        input_dim = int(options.get("input_dim", rng.choice([2, 4, 8])))
        rule = options.get("rule_family",
                           rng.choice(["smooth_additive", "sparse_interaction", "piecewise_boundary", "xor"]))
        active = sorted(rng.sample(range(input_dim), 2))
        params = {
            "instance_seed": seed,
            "input_dim": input_dim,
            "num_classes": 2,
            "rule_family": rule,
            "active_features": active,
            "rule_weights": [round(rng.uniform(0.8, 1.6) * rng.choice([-1, 1]), 3) for _ in range(3)],
            "piecewise_breakpoint": round(rng.uniform(-0.5, 0.5), 3),
            "noise_std": float(options.get("noise_std", rng.choice([0.05, 0.3]))),
            "train_size": int(options.get("train_size", 512)),
            "test_size": int(options.get("test_size", 1024)),
            "point_seed": seed + 1_000,
        }
    else:
        raise SpecError(f"cannot synthesise dataset family {family!r}")
    spec = {
        "schema_version": SCHEMA_VERSION,
        "family": family,
        "params": params,
        "selection_metric": METRIC_BY_FAMILY[family],
        "significance": {"gap_min": 0.05, "fail_threshold": FAIL_THRESHOLD.get(family, 2.0)},
        "synthetic": True,
        "generator": GENERATOR,
        "files": {"train": "train.pt", "test": "test.pt"},
    }
    spec["dataset_id"] = f"{ID_PREFIX[family]}_{short_hash(params)}"
    return spec


# --------------------------------------------------------------------------- features

def dataset_features(spec: dict) -> dict:
    """Question-level features the propositions can condition on; the same for our specs and a
    bundle's (an expression is read back, never run). The stated ones come from the spec's params;
    for a spec our generator rebuilds, the measured ones (``core.aiq.measure``) are added."""
    p = spec.get("params") or {}
    if not isinstance(p, dict):
        p = {}
    family = spec.get("family")
    from .spec import TASK_BY_FAMILY
    f: dict[str, Any] = {"family": family, "task": TASK_BY_FAMILY.get(family, "unknown")}
    if family == "univariate_regression":
        f["input_dim"] = 1
    elif isinstance(p.get("input_dim"), (int, float)) and not isinstance(p.get("input_dim"), bool):
        f["input_dim"] = int(p["input_dim"])
    if family in ("univariate_regression", "multivariate_regression"):
        nz = p.get("noise") if isinstance(p.get("noise"), dict) else {}
        noise = p.get("noise_std", nz.get("std", 0.0) if nz.get("enabled", "std" in nz) else 0.0)
        try:
            f["noise_std"] = float(noise or 0.0)
        except (TypeError, ValueError):
            f["noise_std"] = 0.0
        if isinstance(p.get("expression"), str):
            f.update(target_features(p["expression"], f.get("input_dim", 1), p.get("domain") or (0.0, 1.0)))
        elif "max_freq" in p:  # our first generator's targets
            f["target_freq"] = float(p["max_freq"]) / (2 * math.pi)
    elif family == "bigram_lm":
        for k in ("vocab_size", "context_length"):
            if isinstance(p.get(k), int):
                f[k] = int(p[k])
        f["alpha"] = float(p.get("alpha", 1.0) or 1.0)
    elif family in ("xor_classification", "spiral_classification"):
        f["noise_std"] = float(p.get("label_noise", 0.0) or 0.0)
        if family == "spiral_classification":
            try:   # how tightly the arms wind: what separates one spiral instance from another
                f["turns"] = float(p.get("turns", 1.0))
            except (TypeError, ValueError):
                pass
    elif family == "synthetic_tabular_classification":
        f["rule_family"] = p.get("rule_family")
        f["noise_std"] = float(p.get("noise_std", 0.0) or 0.0)
    if isinstance(p.get("train_size"), int):
        f["train_size"] = int(p["train_size"])
    from .measure import measured_features

    f.update(measured_features(spec))
    return f


# --------------------------------------------------------------------------- tensors

def _eval_terms(terms: list[dict], x):
    import torch

    y = torch.zeros(x.shape[0], dtype=x.dtype)
    for t in terms:
        fn = t["fn"]
        if fn == "prod":
            v = x[:, t["vars"][0]] * x[:, t["vars"][1]]
        else:
            xi = x[:, t["var"]]
            if fn == "sin":
                v = torch.sin(t["freq"] * xi + t["phase"])
            elif fn == "cos":
                v = torch.cos(t["freq"] * xi + t["phase"])
            elif fn == "tanh":
                v = torch.tanh(t["freq"] * xi + t["phase"])
            elif fn == "gauss":
                v = torch.exp(-((t["freq"] * xi + t["phase"]) ** 2))
            elif fn == "square":
                v = xi * xi
            elif fn == "abs":
                v = xi.abs()
            else:
                raise SpecError(f"unknown term function {fn!r}")
        y = y + t["coef"] * v
    return y


def _expression_regression(p: dict):
    """The study's regression data: uniform points on the domain, the target read back from its
    expression, not normalised, no noise (train points drawn first, then test, one generator)."""
    import torch

    d = int(p.get("input_dim", 1))
    lo, hi = (float(v) for v in p.get("domain", [0.0, 1.0]))
    seed = int((p.get("point_sampling") or {}).get("seed", int(p.get("instance_seed", 0)) + 1_000))
    node = parse(p["expression"])
    g = torch.Generator().manual_seed(seed)
    tx = torch.rand(int(p["train_size"]), d, generator=g) * (hi - lo) + lo
    vx = torch.rand(int(p["test_size"]), d, generator=g) * (hi - lo) + lo
    from .expressions import evaluate

    ty, vy = evaluate(node, tx), evaluate(node, vx)
    noise = p.get("noise") if isinstance(p.get("noise"), dict) else {}
    if noise.get("enabled") and float(noise.get("std", 0.0)) > 0:
        gn = torch.Generator().manual_seed(int(noise.get("seed", seed + 1_000)))
        ty = ty + float(noise["std"]) * torch.randn(ty.shape, generator=gn, dtype=ty.dtype)
    return tx, ty.unsqueeze(-1), vx, vy.unsqueeze(-1)


def _regression(p: dict):
    import torch

    if "expression" in p and "terms" not in p:
        return _expression_regression(p)
    d = int(p["input_dim"])
    lo, hi = p["domain"]
    g = torch.Generator().manual_seed(int(p["point_seed"]))
    tx = torch.rand(int(p["train_size"]), d, generator=g) * (hi - lo) + lo
    vx = torch.rand(int(p["test_size"]), d, generator=g) * (hi - lo) + lo
    # normalise the target with statistics of a fixed grid sample, so every
    # dataset's test MSE is on the same scale (unit variance).
    gg = torch.Generator().manual_seed(7)
    grid = torch.rand(4096, d, generator=gg) * (hi - lo) + lo
    gy = _eval_terms(p["terms"], grid)
    mu, sd = float(gy.mean()), float(gy.std()) or 1.0
    ty = (_eval_terms(p["terms"], tx) - mu) / sd
    vy = (_eval_terms(p["terms"], vx) - mu) / sd
    if p.get("noise_std", 0.0) > 0:
        gn = torch.Generator().manual_seed(int(p["noise_seed"]))
        ty = ty + float(p["noise_std"]) * torch.randn(ty.shape, generator=gn)
    return tx, ty.unsqueeze(-1), vx, vy.unsqueeze(-1)


def _bigram(p: dict):
    import torch

    v, length = int(p["vocab_size"]), int(p["context_length"]) + 1
    gt = torch.Generator().manual_seed(int(p["table_seed"]))
    probs = torch.softmax(torch.randn(v, v, generator=gt, dtype=torch.float64) * float(p["alpha"]), dim=1)

    # the study starts each window from the table's stationary law; our first generator, uniformly
    start = torch.full((v,), 1.0 / v, dtype=torch.float64)
    if p.get("layout") == "lm":
        for _ in range(256):
            start = start @ probs
            start = start / start.sum()

    def sample(n: int, seed: int):
        g = torch.Generator().manual_seed(seed)
        seq = torch.empty(n, length, dtype=torch.int64)
        seq[:, 0] = torch.multinomial(start.expand(n, v), 1, replacement=True, generator=g).squeeze(1)
        for t in range(1, length):
            seq[:, t] = torch.multinomial(probs[seq[:, t - 1]], 1, generator=g).squeeze(1)
        return seq

    tr = sample(int(p["train_size"]), int(p["sequence_seed"]))
    te = sample(int(p["test_size"]), int(p["sequence_seed"]) + 1)
    return tr[:, :-1].contiguous(), tr[:, 1:].contiguous(), te[:, :-1].contiguous(), te[:, 1:].contiguous()


def _tabular(p: dict):
    import torch

    d = int(p["input_dim"])
    a, b = p["active_features"]
    w = p["rule_weights"]
    rule = p["rule_family"]

    def score(x):
        if rule == "smooth_additive":
            return w[0] * (torch.sin(x[:, a]) + 0.25 * x[:, a] ** 2) + w[1] * (torch.sin(x[:, b]) + 0.25 * x[:, b] ** 2)
        if rule == "sparse_interaction":
            return w[0] * x[:, a] * x[:, b]
        if rule == "xor":
            return -x[:, a] * x[:, b]
        if rule == "piecewise_boundary":
            bw = torch.where(x[:, a] > p["piecewise_breakpoint"],
                             torch.full_like(x[:, a], w[1]), torch.full_like(x[:, a], w[0]))
            return bw * x[:, b] + w[2] * x[:, a]
        raise SpecError(f"unknown rule family {rule!r}")

    g = torch.Generator().manual_seed(int(p["point_seed"]))
    tx = torch.randn(int(p["train_size"]), d, generator=g)
    vx = torch.randn(int(p["test_size"]), d, generator=g)
    ts = score(tx) + float(p["noise_std"]) * torch.randn(tx.shape[0], generator=g)
    vs = score(vx) + float(p["noise_std"]) * torch.randn(vx.shape[0], generator=g)
    thr = float(torch.median(torch.cat([ts, vs])))
    return tx, (ts > thr).long(), vx, (vs > thr).long()


def _plane(p: dict, label) -> tuple:
    """Two-class points in the plane, uniform on the domain; LABEL(x) -> 0/1; label noise flips."""
    import torch

    lo, hi = (float(v) for v in p.get("domain", [-1.0, 1.0]))
    g = torch.Generator().manual_seed(int(p["point_seed"]))
    out = []
    for n in (int(p["train_size"]), int(p["test_size"])):
        x = torch.rand(n, 2, generator=g) * (hi - lo) + lo
        y = label(x, g)
        flip = torch.rand(n, generator=g) < float(p.get("label_noise", 0.0))
        out += [x, torch.where(flip, 1 - y, y)]
    return tuple(out)


def _xor(p: dict):
    return _plane(p, lambda x, g: (x[:, 0] * x[:, 1] > 0).long())


def _spiral(p: dict):
    """Two interleaved arms r = t, angle = 2 pi turns t (+ pi for the second arm), t in (0, 1]."""
    import torch

    turns, noise = float(p.get("turns", 1.0)), float(p.get("noise_std", 0.05))
    g = torch.Generator().manual_seed(int(p["point_seed"]))
    out = []
    for n in (int(p["train_size"]), int(p["test_size"])):
        arm = torch.randint(0, 2, (n,), generator=g)
        t = torch.rand(n, generator=g) * 0.95 + 0.05
        angle = 2 * math.pi * turns * t + math.pi * arm
        x = torch.stack([t * torch.cos(angle), t * torch.sin(angle)], 1)
        x = x + noise * torch.randn(n, 2, generator=g)
        flip = torch.rand(n, generator=g) < float(p.get("label_noise", 0.0))
        out += [x, torch.where(flip, 1 - arm, arm)]
    return tuple(out)


_CACHE: dict[str, tuple] = {}


def materialize(spec: dict) -> tuple:
    """(train_x, train_y, test_x, test_y) for a synthetic spec (cached per id)."""
    key = spec.get("dataset_id") or short_hash(spec)
    if key in _CACHE:
        return _CACHE[key]
    family, p = spec["family"], spec["params"]
    if family in ("univariate_regression", "multivariate_regression"):
        out = _regression(p)
    elif family == "bigram_lm":
        out = _bigram(p)
    elif family == "synthetic_tabular_classification":
        out = _tabular(p)
    elif family == "xor_classification":
        out = _xor(p)
    elif family == "spiral_classification":
        out = _spiral(p)
    else:
        raise SpecError(f"cannot synthesise dataset family {family!r}; import its tensors instead")
    if len(_CACHE) > 64:
        _CACHE.clear()
    _CACHE[key] = out
    return out


def _check_tensors(name: str, x, y, spec: dict | None, split: str) -> None:
    """Shapes and types as the dataset spec declares them (SpecError naming the file)."""
    import torch

    if not isinstance(x, torch.Tensor) or not isinstance(y, torch.Tensor):
        raise SpecError(f"{name}: 'x' and 'y' must be tensors")
    if x.dim() == 0 or y.dim() == 0 or x.shape[0] != y.shape[0]:
        raise SpecError(f"{name}: x {tuple(x.shape)} and y {tuple(y.shape)} do not hold the same examples")
    if not spec:
        return
    p = spec.get("params") if isinstance(spec.get("params"), dict) else {}
    family = spec.get("family")
    n = p.get(f"{split}_size")
    if isinstance(n, int) and x.shape[0] != n:
        raise SpecError(f"{name}: {x.shape[0]} examples, the spec declares {split}_size {n}")
    if family == "bigram_lm":
        ctx, vocab = p.get("context_length"), p.get("vocab_size")
        if x.dtype not in (torch.int64, torch.int32) or y.dtype not in (torch.int64, torch.int32):
            raise SpecError(f"{name}: token ids must be integers, got {x.dtype} / {y.dtype}")
        if x.dim() != 2 or tuple(y.shape) != tuple(x.shape):
            raise SpecError(f"{name}: expected x and y of shape [N, context_length], got {tuple(x.shape)} / "
                            f"{tuple(y.shape)}")
        if isinstance(ctx, int) and x.shape[1] != ctx:
            raise SpecError(f"{name}: windows of {x.shape[1]} tokens, the spec declares context_length {ctx}")
        if isinstance(vocab, int) and x.numel() and (int(x.min()) < 0 or int(max(x.max(), y.max())) >= vocab):
            raise SpecError(f"{name}: token ids outside the vocabulary of {vocab}")
        return
    if not x.is_floating_point():
        raise SpecError(f"{name}: inputs must be floating point, got {x.dtype}")
    if x.numel() and not bool(torch.isfinite(x).all()):
        raise SpecError(f"{name}: inputs hold NaN or infinity")
    dims = 1 if family == "univariate_regression" else p.get("input_dim")
    width = x.shape[1] if x.dim() == 2 else (1 if x.dim() == 1 else None)
    if width is None or (isinstance(dims, int) and width != dims):
        raise SpecError(f"{name}: inputs of shape {tuple(x.shape)}, the spec declares input_dim {dims}")
    if family in METRIC_BY_FAMILY and METRIC_BY_FAMILY[family] == "test_ce":
        k = p.get("num_classes", 2)
        if y.is_floating_point() or y.dim() > 2 or (y.dim() == 2 and y.shape[1] != 1):
            raise SpecError(f"{name}: class labels must be integers of shape [N], got {y.dtype} {tuple(y.shape)}")
        if isinstance(k, int) and y.numel() and (int(y.min()) < 0 or int(y.max()) >= k):
            raise SpecError(f"{name}: class labels outside 0..{k - 1}")
    else:
        if not y.is_floating_point() or y.dim() > 2 or (y.dim() == 2 and y.shape[1] != 1):
            raise SpecError(f"{name}: targets must be floats of shape [N, 1], got {y.dtype} {tuple(y.shape)}")
        if y.numel() and not bool(torch.isfinite(y).all()):
            raise SpecError(f"{name}: targets hold NaN or infinity")


def load_tensors(path, spec: dict | None = None) -> tuple:
    """A bundle's tensors: train.pt / test.pt in folder PATH, each {"x", "y"}.

    Each file must be a regular file (no link, FIFO or device) under the size
    cap; it is read into memory and loaded with ``torch.load(...,
    weights_only=True)`` (never unpickled otherwise), then checked against
    SPEC's declared shapes. SpecError (one line, naming the file) otherwise.
    """
    import io
    from pathlib import Path

    import torch

    from .safefiles import MAX_TENSOR_BYTES, UnsafeFile, read_capped

    path = Path(path)
    out = []
    for split in ("train", "test"):
        f = path / f"{split}.pt"
        try:
            data = read_capped(f, MAX_TENSOR_BYTES)
        except UnsafeFile as e:
            raise SpecError(str(e)) from None
        try:
            d = torch.load(io.BytesIO(data), weights_only=True, map_location="cpu")
        except Exception as e:  # noqa: BLE001 - report, never crash
            msg = str(e).strip().splitlines()[0][:160] if str(e).strip() else ""
            raise SpecError(f"{f}: cannot load tensors weights-only ({type(e).__name__}: {msg})") from None
        if not isinstance(d, dict) or "x" not in d or "y" not in d:
            raise SpecError(f"{f}: expected a dict with tensors 'x' and 'y'")
        _check_tensors(str(f), d["x"], d["y"], spec, split)
        out += [d["x"], d["y"]]
    return tuple(out)


def save_tensors(spec: dict, path) -> None:
    from pathlib import Path

    import torch

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    tx, ty, vx, vy = materialize(spec)
    torch.save({"x": tx, "y": ty}, path / "train.pt")
    torch.save({"x": vx, "y": vy}, path / "test.pt")


def is_synthesisable(spec: dict) -> bool:
    """True for specs our own generator wrote (their tensors follow from params)."""
    return spec.get("generator") in GENERATORS and spec.get("family") in ID_PREFIX

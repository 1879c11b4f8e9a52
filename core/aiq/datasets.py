"""Synthetic dataset families, rebuilt from their spec by our own code.

Each spec mirrors ArchitectureIQ's ``dataset_spec.json`` (``family``,
``dataset_id``, ``params``, ``selection_metric``). The tensors are a pure
function of ``params`` (seeded torch generators), so a question carries its
dataset as a few numbers and anyone can rebuild it bit for bit on the CPU.
Imported ArchitectureIQ bundles bring their own tensors (``train.pt`` /
``test.pt``); those are used as they are.

torch is imported inside the functions that need it.
"""

from __future__ import annotations

import random
from typing import Any

from .spec import METRIC_BY_FAMILY, SCHEMA_VERSION, SpecError, short_hash

ID_PREFIX = {
    "univariate_regression": "sym",
    "multivariate_regression": "mvar",
    "bigram_lm": "bg",
    "synthetic_tabular_classification": "stabcls",
}

GENERATOR = "archcurator.core.aiq.datasets/1"
UNARY = ("sin", "cos", "tanh", "square", "abs", "gauss")


# --------------------------------------------------------------------------- sampling

def _sample_terms(rng: random.Random, input_dim: int, rough: bool) -> list[dict]:
    n_terms = rng.choice([2, 3]) if input_dim == 1 else rng.choice([2, 3, 4])
    freqs = [4.0, 6.0, 8.0] if rough else [0.5, 1.0, 1.5]
    terms = []
    for _ in range(n_terms):
        if input_dim > 1 and rng.random() < 0.35:
            a, b = sorted(rng.sample(range(input_dim), 2))
            terms.append({"fn": "prod", "vars": [a, b], "coef": round(rng.uniform(0.5, 1.5) * rng.choice([-1, 1]), 3)})
            continue
        fn = rng.choice(UNARY)
        term = {"fn": fn, "var": rng.randrange(input_dim),
                "coef": round(rng.uniform(0.5, 1.5) * rng.choice([-1, 1]), 3)}
        if fn in ("sin", "cos", "tanh", "gauss"):
            term["freq"] = rng.choice(freqs)
            term["phase"] = round(rng.uniform(-1.0, 1.0), 3)
        terms.append(term)
    return terms


def render_expression(terms: list[dict]) -> str:
    parts = []
    for t in terms:
        x = f"x{t['var']}" if "var" in t else ""
        fn = t["fn"]
        if fn == "prod":
            body = f"x{t['vars'][0]}*x{t['vars'][1]}"
        elif fn == "square":
            body = f"{x}^2"
        elif fn == "abs":
            body = f"|{x}|"
        elif fn == "gauss":
            body = f"exp(-({t['freq']}*{x}+{t['phase']})^2)"
        else:
            body = f"{fn}({t['freq']}*{x}+{t['phase']})"
        parts.append(f"{t['coef']}*{body}")
    return " + ".join(parts).replace("+ -", "- ")


def sample_dataset_spec(family: str, seed: int, **options: Any) -> dict:
    """A new dataset spec of FAMILY drawn from SEED (options pin a parameter)."""
    rng = random.Random(f"{family}:{seed}")
    if family in ("univariate_regression", "multivariate_regression"):
        input_dim = 1 if family == "univariate_regression" else int(options.get("input_dim", rng.choice([2, 3, 4, 8])))
        rough = bool(options.get("rough", rng.random() < 0.5))
        noise = float(options.get("noise_std", rng.choice([0.0, 0.0, 0.1, 0.3])))
        terms = _sample_terms(rng, input_dim, rough)
        params = {
            "instance_seed": seed,
            "input_dim": input_dim,
            "terms": terms,
            "expression": render_expression(terms),
            "max_freq": max([t.get("freq", 0.0) for t in terms] + [0.0]),
            "domain": [-2.0, 2.0],
            "train_size": int(options.get("train_size", 256)),
            "test_size": int(options.get("test_size", 256)),
            "noise_std": noise,
            "point_seed": seed + 1_000,
            "noise_seed": seed + 2_000,
        }
    elif family == "bigram_lm":
        params = {
            "instance_seed": seed,
            "vocab_size": int(options.get("vocab_size", 16)),
            "context_length": int(options.get("context_length", 8)),
            "alpha": float(options.get("alpha", rng.choice([0.5, 1.5, 3.0]))),
            "train_size": int(options.get("train_size", 384)),
            "test_size": int(options.get("test_size", 128)),
            "table_seed": seed + 10_000,
            "sequence_seed": seed,
        }
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
        "synthetic": True,
        "generator": GENERATOR,
        "files": {"train": "train.pt", "test": "test.pt"},
    }
    spec["dataset_id"] = f"{ID_PREFIX[family]}_{short_hash(params)}"
    return spec


# --------------------------------------------------------------------------- features

def dataset_features(spec: dict) -> dict:
    """Question-level features the propositions can condition on."""
    p = spec.get("params", {})
    family = spec.get("family")
    f: dict[str, Any] = {"family": family}
    from .spec import TASK_BY_FAMILY
    f["task"] = TASK_BY_FAMILY.get(family, "unknown")
    if "input_dim" in p:
        f["input_dim"] = int(p["input_dim"])
    if family in ("univariate_regression", "multivariate_regression"):
        f["noise_std"] = float(p.get("noise_std", p.get("noise", {}).get("std", 0.0)) or 0.0)
        if "max_freq" in p:
            f["target_freq"] = float(p["max_freq"])
    elif family == "bigram_lm":
        f["vocab_size"] = int(p.get("vocab_size", 0))
        f["context_length"] = int(p.get("context_length", 0))
        f["alpha"] = float(p.get("alpha", 1.0))
    elif family == "synthetic_tabular_classification":
        f["rule_family"] = p.get("rule_family")
        f["noise_std"] = float(p.get("noise_std", 0.0))
    if "train_size" in p:
        f["train_size"] = int(p["train_size"])
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


def _regression(p: dict):
    import torch

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

    def sample(n: int, seed: int):
        g = torch.Generator().manual_seed(seed)
        seq = torch.empty(n, length, dtype=torch.int64)
        seq[:, 0] = torch.randint(0, v, (n,), generator=g)
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
    else:
        raise SpecError(f"cannot synthesise dataset family {family!r}; import its tensors instead")
    if len(_CACHE) > 64:
        _CACHE.clear()
    _CACHE[key] = out
    return out


def load_tensors(path) -> tuple:
    """ArchitectureIQ tensors: train.pt / test.pt, each {"x", "y"}, loaded weights-only."""
    from pathlib import Path

    import torch

    path = Path(path)
    out = []
    for name in ("train.pt", "test.pt"):
        f = path / name
        try:
            d = torch.load(f, weights_only=True, map_location="cpu")
        except Exception as e:  # noqa: BLE001 - report, never crash
            raise SpecError(f"{f}: cannot load tensors ({type(e).__name__}: {e})") from None
        if not isinstance(d, dict) or "x" not in d or "y" not in d:
            raise SpecError(f"{f}: expected a dict with tensors 'x' and 'y'")
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
    return spec.get("generator") == GENERATOR and spec.get("family") in ID_PREFIX

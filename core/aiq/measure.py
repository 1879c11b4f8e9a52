"""Dataset features measured on the data itself, so two instances of one family read differently.

The spec's own numbers (label noise, input dimension, sample count, the target expression) say how
an instance was drawn; they are the same for most instances of a family (every bigram spec has
alpha 1 over 32 tokens, 800 windows). What a recipe meets is the data: how peaked the bigram law
is and how much of its table the training windows cover, how large and how offset a regression
target is, how close the two classes come. Each is measured here on the tensors our generator
rebuilds from the spec (``datasets.materialize``) or, for the bigram table, exactly from the
generating parameters (the table is a pure function of ``table_seed`` and ``alpha``).

- bigram: ``transition_entropy`` (nats per token of the table, weighted by its stationary law;
  log 32 = 3.47 is a uniform table), ``transition_sparsity`` (share of the V x V transitions the
  training windows never show), ``tokens_per_transition`` (training tokens / V^2);
- regression: ``target_std`` and ``target_offset`` (the std and the absolute mean of the training
  targets, noise included: an offset target rewards the recipe that moves its output bias fastest);
- classification: ``margin`` (median distance from a training point to the nearest training
  point of the other class), ``neighbour_agreement`` (share of training points whose nearest
  training neighbour carries the same label: falls with label noise and a winding boundary).

Results are cached per spec (its params' hash); torch is imported only here, inside the calls.
"""

from __future__ import annotations

import math
from typing import Any

from .spec import short_hash

_MEASURED: dict[str, dict[str, float]] = {}
#: classification: at most this many training points enter the neighbour search (bounded memory)
MAX_POINTS = 2048


def _round(v: float) -> float:
    return float(f"{v:.4g}")


def _bigram_table(p: dict):
    import torch

    v = int(p["vocab_size"])
    gt = torch.Generator().manual_seed(int(p["table_seed"]))
    return torch.softmax(torch.randn(v, v, generator=gt, dtype=torch.float64) * float(p["alpha"]), dim=1)


def _bigram(spec: dict, tensors) -> dict[str, float]:
    import torch

    p = spec["params"]
    probs = _bigram_table(p)
    v = probs.shape[0]
    start = torch.full((v,), 1.0 / v, dtype=torch.float64)
    for _ in range(256):
        start = start @ probs
        start = start / start.sum()
    row_h = -(probs * torch.log(probs.clamp_min(1e-300))).sum(1)
    tx, ty = tensors[0], tensors[1]
    seen = torch.zeros(v * v, dtype=torch.bool)
    seen[(tx.reshape(-1) * v + ty.reshape(-1)).clamp(0, v * v - 1)] = True
    return {"transition_entropy": _round(float((start * row_h).sum())),
            "transition_sparsity": _round(1.0 - float(seen.float().mean())),
            "tokens_per_transition": _round(ty.numel() / (v * v))}


def _regression(tensors) -> dict[str, float]:
    ty = tensors[1].double().reshape(-1)
    return {"target_std": _round(float(ty.std())) if ty.numel() > 1 else 0.0,
            "target_offset": _round(abs(float(ty.mean())))}


def _classification(tensors) -> dict[str, float]:
    import torch

    x, y = tensors[0].double(), tensors[1].reshape(-1)
    if x.ndim != 2 or x.shape[0] < 2:
        return {}
    x, y = x[:MAX_POINTS], y[:MAX_POINTS]
    d = torch.cdist(x, x)
    d.fill_diagonal_(math.inf)
    same = y[:, None] == y[None, :]
    other = torch.where(same, torch.full_like(d, math.inf), d).min(1).values
    nearest = d.argmin(1)
    finite = other[torch.isfinite(other)]
    out = {"neighbour_agreement": _round(float((y[nearest] == y).double().mean()))}
    if finite.numel():
        out["margin"] = _round(float(finite.median()))
    return out


def measured_features(spec: dict) -> dict[str, float]:
    """The measured features of SPEC (one of our generator's; {} for a spec we cannot rebuild or
    whose data cannot be read)."""
    from .datasets import is_synthesisable, materialize

    if not isinstance(spec, dict) or not is_synthesisable(spec) or not isinstance(spec.get("params"), dict):
        return {}
    key = f"{spec.get('family')}:{short_hash(spec['params'])}"
    if key in _MEASURED:
        return dict(_MEASURED[key])
    family = spec.get("family")
    out: dict[str, Any] = {}
    try:
        tensors = materialize(spec)
        if family == "bigram_lm":
            out = _bigram(spec, tensors)
        elif family in ("univariate_regression", "multivariate_regression"):
            out = _regression(tensors)
        elif family in ("xor_classification", "spiral_classification", "synthetic_tabular_classification"):
            out = _classification(tensors)
    except Exception:   # a spec our generator refuses has no measured features; the stated ones stay
        out = {}
    if len(_MEASURED) > 4096:
        _MEASURED.clear()
    _MEASURED[key] = out
    return dict(out)

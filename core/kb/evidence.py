"""Evidence: one row per proposition and question, derived from executed outcomes.

``derive`` judges every question of the evidence split (``train`` by
default: the replay's ``test`` questions stay unseen) and keeps a row where
the question supports or contradicts the structure. ``recheck`` re-judges
existing rows under a new structure (a narrowed child): rows whose question
now falls outside the scope become ``inapplicable``. ``union`` merges two
propositions' rows, one per question (the first argument's row wins).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, replace

from .features import QuestionView
from .props import Structure, judge

VERDICTS = ("support", "contradict", "inapplicable")
EVIDENCE_SPLITS = ("train",)


@dataclass(frozen=True)
class EvidenceRow:
    question_id: str
    verdict: str        # support | contradict | inapplicable
    reason: str
    split: str
    via: str = "derived"   # derived | merged from P<n> | narrowed from P<n>

    def to_dict(self) -> dict:
        return asdict(self)


def derive(structure: Structure, views: Iterable[QuestionView], splits=EVIDENCE_SPLITS) -> list[EvidenceRow]:
    rows = []
    for q in views:
        if splits and q.split not in splits:
            continue
        v = judge(structure, q)
        if v is not None:
            rows.append(EvidenceRow(q.question_id, v.verdict, v.reason, q.split))
    return rows


def recheck(rows: Iterable[EvidenceRow], structure: Structure, views_by_id: dict[str, QuestionView],
            via: str) -> list[EvidenceRow]:
    out = []
    for r in rows:
        q = views_by_id.get(r.question_id)
        v = judge(structure, q) if q is not None else None
        if v is None:
            why = "outside the narrowed scope" if q is not None else "question no longer stored"
            out.append(EvidenceRow(r.question_id, "inapplicable", why, r.split, via))
        else:
            out.append(EvidenceRow(r.question_id, v.verdict, v.reason, r.split, via))
    return out


def union(first: Iterable[EvidenceRow], second: Iterable[EvidenceRow], via_second: str) -> list[EvidenceRow]:
    """All of FIRST, plus SECOND's rows for questions FIRST has no row for."""
    out = {r.question_id: r for r in first}
    for r in second:
        if r.question_id not in out:
            out[r.question_id] = replace(r, via=via_second if r.via == "derived" else r.via)
    return sorted(out.values(), key=lambda r: r.question_id)


def counts(rows: Iterable[EvidenceRow]) -> dict[str, int]:
    c = {"support": 0, "contradict": 0, "inapplicable": 0}
    for r in rows:
        c[r.verdict] = c.get(r.verdict, 0) + 1
    return c


# --------------------------------------------------------------------------- what a curator judges by

RECIPE_FIELDS = ("model", "depth", "width", "params", "activation", "layer_norm", "residual", "d_ff", "num_heads",
                 "grid_size", "optimizer", "lr", "weight_decay", "momentum", "loss", "lambda", "batch_size", "steps",
                 "budget")


def unit_of(q: dict) -> tuple[str, str]:
    """The independent unit a question belongs to: (candidate pool, dataset). Every 3-subset of one
    pool on one dataset shares its runs, so they are one piece of evidence, not several."""
    pool = q.get("pool_id") or q.get("group") or "—"
    return str(pool), str(q.get("dataset_id") or (q.get("dataset") or {}).get("dataset_id") or "—")


def describe(q: dict) -> dict:
    """A question as a curator judges an outcome: the three recipes (the fields that differ named),
    mean ± std over seeds per candidate, the winner, the gap, the seed win rate, the dataset and
    its features, the candidate pool."""
    from ..aiq.datasets import dataset_features
    from .features import candidate_features

    recipes, means, stds = {}, {}, {}
    for ch in q["choices"]:
        f = candidate_features(ch["candidate"])
        recipes[ch["letter"]] = {k: f.get(k) for k in RECIPE_FIELDS if f.get(k) is not None}
        r = ch.get("result") or {}
        means[ch["letter"]] = r.get("mean")
        stds[ch["letter"]] = r.get("std")
    keys = sorted({k for r in recipes.values() for k in r}, key=RECIPE_FIELDS.index)
    differs = [k for k in keys if len({repr(r.get(k)) for r in recipes.values()}) > 1]
    ds = q.get("dataset") if isinstance(q.get("dataset"), dict) else {"family": q.get("family")}
    feats = dataset_features({**ds, "family": ds.get("family") or q.get("family")})
    sig = q.get("significance") or {}
    pool, dataset = unit_of(q)
    return {
        "question": q["question_id"], "family": q.get("family"), "category": q.get("type"),
        "candidates": [{"letter": ch["letter"], "recipe_id": ch.get("recipe_id"), **recipes[ch["letter"]]}
                       for ch in q["choices"]],
        "differs": differs, "means": means, "stds": stds, "winner": q.get("correct_letter"),
        "gap": sig.get("gap"), "win_rate": sig.get("win_rate"),
        "metric": (q.get("evaluation") or {}).get("selection_metric"),
        "dataset": {"id": dataset, **{k: v for k, v in feats.items() if v is not None}},
        "pool": pool,
    }


def recipe_text(recipe: dict, differs: list[str] | None = None) -> str:
    """One candidate's recipe in a line; with DIFFERS, only the fields that tell the candidates apart."""
    keys = [k for k in RECIPE_FIELDS if k in recipe and (not differs or k in differs)]

    def val(v):
        if isinstance(v, float):
            return f"{v:g}"
        if isinstance(v, bool):
            return "yes" if v else "no"
        return str(v)
    return " ".join(f"{k}={val(recipe[k])}" for k in keys)


def unit_counts(verdicts: Iterable[tuple[tuple[str, str], str]]) -> dict:
    """Supports and contradictions per independent unit beside the raw counts: a unit supports when
    its questions support more often than they contradict, contradicts when less, else it is split."""
    raw = {"support": 0, "contradict": 0}
    per: dict[tuple[str, str], list[int]] = {}
    for unit, verdict in verdicts:
        if verdict not in raw:
            continue
        raw[verdict] += 1
        s_c = per.setdefault(unit, [0, 0])
        s_c[0 if verdict == "support" else 1] += 1
    us = sum(1 for s, c in per.values() if s > c)
    uc = sum(1 for s, c in per.values() if c > s)
    return {"support": raw["support"], "contradict": raw["contradict"], "units": len(per),
            "units_support": us, "units_contradict": uc, "units_split": len(per) - us - uc}

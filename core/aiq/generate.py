"""Generate, execute and keep ArchitectureIQ-shaped questions (run once; not in CI).

    python -m archcurator.core.aiq.generate --out assets/aiq [--seed 0] [--groups 3] [--workers 2]
    archcurator kb generate --out assets/aiq

Plan: for each family, a few *dataset pairs* (same shape, different data:
smooth vs rough target, different noise, a flat vs peaked bigram table, a
different decision rule). For each pair and each category (optimizer-only,
architecture-only, mixed) a *pool* of candidates sharing a budget is drawn
and executed on both datasets (10 seeds each). Every 3-candidate subset of a
pool is a possible question; it is kept on a dataset only when the same
candidate wins on all 10 seeds. A subset kept on both datasets is a *pair*
(same candidates, different dataset: the flip test). Questions are split
into ``train`` (mine and judge propositions) and ``test`` (held out for the
replay) by dataset pair, so a pair never straddles the split.

Output (``--out``): ``questions.jsonl`` (one question a line, labelled
synthetic, device recorded), ``curves.jsonl.gz`` (per-seed curves of every
executed candidate) and ``manifest.json`` (how it was made, the counts).
"""

from __future__ import annotations

import argparse
import gzip
import itertools
import json
import os
import platform
import random
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from . import datasets as ds_mod
from .execute import BASE_SEED, MIN_MARGIN, N_SEEDS, run_candidate, significance
from .spec import (
    EXECUTOR_VERSION,
    QUESTION_FORMAT,
    SCHEMA_VERSION,
    infer_axes,
    letters,
    make_candidate,
    question_id_for,
    recipe_id,
    short_hash,
)

NUM_CHOICES = 3
POOL_SIZE = 7

LRS = [1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2]
WDS = [0.0, 0.0, 1e-4, 1e-3]
MOMENTA = [0.0, 0.9]
ACTS = ["relu", "leaky_relu", "gelu", "silu", "tanh"]


# --------------------------------------------------------------------------- sampling

def sample_optimizer(rng: random.Random, types=None) -> dict:
    t = rng.choice(types or ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad"])
    lr = rng.choice(LRS)
    if t == "SGD":
        lr = rng.choice(LRS[2:])  # SGD at 1e-4 learns nothing in these budgets
    o: dict[str, Any] = {"type": t, "lr": lr, "weight_decay": rng.choice(WDS)}
    if t == "SGD":
        o["momentum"] = rng.choice(MOMENTA)
    if t in ("Adam", "AdamW"):
        o["betas"] = [0.9, 0.999]
    return o


def sample_mlp(rng: random.Random, input_dim: int, output_dim: int | None) -> dict:
    depth = rng.choice([1, 2, 3, 4])
    act = rng.choice(ACTS)
    ln = rng.random() < 0.5
    m: dict[str, Any] = {
        "type": "mlp",
        "depth": depth,
        "width": rng.choice([16, 32, 64, 128]),
        "residual": rng.random() < 0.5,
        "layer_norm": [ln] * depth,
        "activations": [act] * depth,
        "leaky_relu_slope": 0.01,
        "input_dim": input_dim,
    }
    if output_dim:
        m["output_dim"] = output_dim
    return m


def sample_transformer(rng: random.Random, vocab: int, context: int) -> dict:
    heads = rng.choice([2, 4])
    return {
        "type": "transformer_lm",
        "vocab_size": vocab,
        "context_length": context,
        "d_model": rng.choice([16, 32, 64]),
        "num_layers": rng.choice([1, 2]),
        "num_heads": heads,
        "d_ff": rng.choice([32, 64, 128]),
    }


def sample_loss(rng: random.Random, family: str) -> dict:
    base = "mse" if family.endswith("regression") else "cross_entropy"
    r = rng.random()
    if r < 0.6:
        return {"loss_id": base}
    return {"loss_id": base + ("_l2" if r < 0.85 else "_l1"), "lambda": rng.choice([1e-3, 1e-2, 1e-1])}


def _model_sampler(family: str, ds: dict):
    p = ds["params"]
    if family == "bigram_lm":
        return lambda rng: sample_transformer(rng, int(p["vocab_size"]), int(p["context_length"]))
    out = 2 if family == "synthetic_tabular_classification" else None
    return lambda rng: sample_mlp(rng, int(p["input_dim"]), out)


def dataset_pair(family: str, seed: int) -> tuple[dict, dict]:
    """Two datasets of one family and shape that pull recipes different ways.

    One side is clean and plentiful, the other small and noisy or rough (an
    overfitting regime) or, for the bigram LM, a flat vs a peaked table.
    """
    rng = random.Random(f"pair:{family}:{seed}")
    if family in ("univariate_regression", "multivariate_regression"):
        d = {"input_dim": rng.choice([2, 3, 4, 8])} if family == "multivariate_regression" else {}
        a = ds_mod.sample_dataset_spec(family, seed * 2, rough=False, noise_std=0.0, **d)
        if rng.random() < 0.5:
            b = ds_mod.sample_dataset_spec(family, seed * 2 + 1, rough=True, noise_std=0.1, **d)
        else:
            b = ds_mod.sample_dataset_spec(family, seed * 2 + 1, rough=rng.random() < 0.5, noise_std=0.5,
                                           train_size=64, **d)
    elif family == "bigram_lm":
        a = ds_mod.sample_dataset_spec(family, seed * 2, alpha=0.3)
        b = ds_mod.sample_dataset_spec(family, seed * 2 + 1, alpha=3.0, train_size=rng.choice([96, 384]))
    else:
        d = rng.choice([2, 4, 8])
        r1, r2 = rng.sample(["smooth_additive", "sparse_interaction", "piecewise_boundary", "xor"], 2)
        a = ds_mod.sample_dataset_spec(family, seed * 2, input_dim=d, rule_family=r1, noise_std=0.05)
        b = ds_mod.sample_dataset_spec(family, seed * 2 + 1, input_dim=d, rule_family=r2, noise_std=0.5,
                                       train_size=128)
    if rng.random() < 0.5:
        a, b = b, a
    return a, b


def sample_pool(family: str, category: str, ds: dict, rng: random.Random, size: int = POOL_SIZE) -> dict:
    """Recipes sharing a budget; what varies follows the category."""
    lm = family == "bigram_lm"
    budget = rng.choice([1024, 2048, 4096] if lm else [1024, 2048, 4096, 8192])
    bs = rng.choice([16, 32] if lm else [16, 32, 64])
    model_of = _model_sampler(family, ds)
    fixed_model = model_of(rng)
    fixed_opt = sample_optimizer(rng, ["Adam", "AdamW", "RMSprop"] if category == "architecture_only" else None)
    if category == "architecture_only":
        fixed_opt["lr"] = rng.choice([1e-3, 3e-3, 1e-2])
    fixed_loss = sample_loss(rng, family)
    recipes, seen = [], set()
    tries = 0
    while len(recipes) < size and tries < 200:
        tries += 1
        model = fixed_model if category == "optimizer_only" else model_of(rng)
        opt = fixed_opt if category == "architecture_only" else sample_optimizer(rng)
        loss = sample_loss(rng, family) if category == "mixed" and rng.random() < 0.3 else fixed_loss
        key = json.dumps([model, opt, loss], sort_keys=True)
        if key in seen:
            continue
        seen.add(key)
        recipes.append({"model": model, "optimizer": opt, "loss": loss, "batch_size": bs, "total_samples_seen": budget})
    return {"family": family, "category": category, "recipes": recipes}


def plan(seed: int = 0, groups: int = 3, families=None) -> list[dict]:
    """Pools to execute: per family, GROUPS dataset pairs x 3 categories."""
    families = families or list(ds_mod.ID_PREFIX)
    pools = []
    for fi, family in enumerate(families):
        for g in range(groups):
            a, b = dataset_pair(family, seed * 1000 + fi * 100 + g)
            group = f"{family}:{g}"
            for category in ("optimizer_only", "architecture_only", "mixed"):
                rng = random.Random(f"pool:{seed}:{group}:{category}")
                pool = sample_pool(family, category, a, rng)
                pool.update({"group": group, "datasets": [a, b],
                             "pool_id": "pool_" + short_hash([group, category, seed])})
                pools.append(pool)
    return pools


# --------------------------------------------------------------------------- execution

def _job(args: tuple[dict, dict, str]) -> tuple[str, str, dict]:
    ds, cand, device = args
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    res = run_candidate({"candidate": cand, "dataset": ds, "device": device,
                         "n_seeds": N_SEEDS, "base_seed": BASE_SEED})
    return ds["dataset_id"], cand["candidate_id"], res


def build_candidates(pools: list[dict], device: str) -> dict[tuple[str, int, int], dict]:
    """(pool index, dataset index, recipe index) -> candidate spec."""
    out = {}
    for pi, pool in enumerate(pools):
        for di, ds in enumerate(pool["datasets"]):
            for ri, r in enumerate(pool["recipes"]):
                out[(pi, di, ri)] = make_candidate(
                    dataset_id=ds["dataset_id"], family=ds["family"], model=r["model"], optimizer=r["optimizer"],
                    loss=r["loss"], batch_size=r["batch_size"], total_samples_seen=r["total_samples_seen"],
                    device=device)
    return out


def execute_all(pools: list[dict], cands: dict, *, workers: int, device: str, log=print) -> dict[tuple[str, str], dict]:
    jobs = [(pools[pi]["datasets"][di], c, device) for (pi, di, _), c in cands.items()]
    results: dict[tuple[str, str], dict] = {}
    t0 = time.perf_counter()
    if workers <= 1:
        it = map(_job, jobs)
        ex = None
    else:
        ex = ProcessPoolExecutor(max_workers=workers)
        it = ex.map(_job, jobs, chunksize=2)
    try:
        for n, (dsid, cid, res) in enumerate(it, 1):
            results[(dsid, cid)] = res
            if n % 25 == 0 or n == len(jobs):
                log(f"  executed {n}/{len(jobs)} candidates ({time.perf_counter() - t0:.0f}s)")
    finally:
        if ex is not None:
            ex.shutdown()
    return results


# --------------------------------------------------------------------------- assembly

def _choice_result(res: dict) -> dict:
    return {
        "finals": [None if v is None else round(v, 6) for v in res["finals"]],
        "mean": None if res["mean"] is None else round(res["mean"], 6),
        "std": None if res["std"] is None else round(res["std"], 6),
        "failed_seeds": res["failed_seeds"],
        "params": res["params"],
        "seconds": res["seconds"],
    }


def make_question(ds: dict, cands: list[dict], results: list[dict], sig: dict, *, category: str,
                  rng: random.Random, device: str, split: str, group: str, pool_id: str,
                  order: list[int] | None = None) -> dict:
    """One question; ORDER (which candidate gets A, B, C) is shuffled unless given
    (both questions of a pair share it, so a data-blind answer never switches)."""
    if order is None:
        order = list(range(len(cands)))
        rng.shuffle(order)
    lets = letters(len(cands))
    choices, correct = [], None
    for letter, i in zip(lets, order):
        choices.append({"letter": letter, "candidate_id": cands[i]["candidate_id"],
                        "recipe_id": recipe_id(cands[i]), "candidate": cands[i],
                        "result": _choice_result(results[i])})
        if i == sig["winner_index"]:
            correct = letter
    invariant, varying = infer_axes(cands)
    budgets = sorted({c["budget"]["total_samples_seen"] for c in cands})
    body = {
        "format": QUESTION_FORMAT,
        "schema_version": SCHEMA_VERSION,
        "synthetic": True,
        "family": ds["family"],
        "dataset_id": ds["dataset_id"],
        "budget": ({"total_samples_seen": budgets[0]} if len(budgets) == 1
                   else {"total_samples_seen": budgets, "mixed": True}),
        "type": category,
        "invariant_axes": invariant,
        "varying_axes": varying,
        "num_choices": len(choices),
        "choices": [{k: ch[k] for k in ("letter", "candidate_id")} for ch in choices],
    }
    qid = question_id_for(body)
    return {
        "question_id": qid,
        **body,
        "choices": choices,
        "correct_letter": correct,
        "significance": {k: sig[k] for k in ("passed", "gap", "rel_gap", "win_rate", "min_margin", "n_seeds", "rule")}
        | {"metric": results[0]["metric"]},
        "evaluation": {"selection_metric": results[0]["metric"], "n_seeds": N_SEEDS, "base_seed": BASE_SEED,
                       "device": device, "torch": results[0]["torch"], "executor": EXECUTOR_VERSION},
        "dataset": ds,
        "split": split,
        "group": group,
        "pool_id": pool_id,
        "pair": None,
        "source": "archcurator generator (synthetic)",
    }


def assemble(pools: list[dict], cands: dict, results: dict, *, seed: int, device: str,
             per_pool_pairs: int = 2, per_pool_singles: int = 3, test_share: float = 0.4) -> list[dict]:
    groups = sorted({p["group"] for p in pools})
    grng = random.Random(f"split:{seed}")
    shuffled = groups[:]
    grng.shuffle(shuffled)
    n_test = round(len(groups) * test_share)
    split_of = {g: ("test" if i < n_test else "train") for i, g in enumerate(shuffled)}
    questions: list[dict] = []
    for pi, pool in enumerate(pools):
        rng = random.Random(f"assemble:{seed}:{pool['pool_id']}")
        n = len(pool["recipes"])
        kept: dict[int, dict[tuple, dict]] = {0: {}, 1: {}}
        for di, ds in enumerate(pool["datasets"]):
            for combo in itertools.combinations(range(n), NUM_CHOICES):
                cs = [cands[(pi, di, ri)] for ri in combo]
                rs = [results[(ds["dataset_id"], c["candidate_id"])] for c in cs]
                sig = significance(rs, min_margin=MIN_MARGIN)
                if sig["passed"]:
                    kept[di][combo] = sig
        both = [c for c in kept[0] if c in kept[1]]
        # prefer pairs whose winner flips between the datasets, then larger margins
        both.sort(key=lambda c: (kept[0][c]["winner_index"] == kept[1][c]["winner_index"],
                                 -min(kept[0][c]["min_margin"], kept[1][c]["min_margin"]), c))
        use: dict[int, int] = {}

        def free(combo, limit=2, use=use):
            return all(use.get(r, 0) < limit for r in combo)

        def take(combo, use=use):
            for r in combo:
                use[r] = use.get(r, 0) + 1

        chosen_pairs = []
        for c in both:
            if len(chosen_pairs) >= per_pool_pairs:
                break
            if free(c):
                chosen_pairs.append(c)
                take(c)
        split = split_of[pool["group"]]
        for c in chosen_pairs:
            order = list(range(NUM_CHOICES))
            rng.shuffle(order)
            qa, qb = (
                make_question(pool["datasets"][di], [cands[(pi, di, r)] for r in c],
                              [results[(pool["datasets"][di]["dataset_id"], cands[(pi, di, r)]["candidate_id"])]
                               for r in c],
                              kept[di][c], category=pool["category"], rng=rng, device=device, split=split,
                              group=pool["group"], pool_id=pool["pool_id"], order=order)
                for di in (0, 1)
            )
            flip = kept[0][c]["winner_index"] != kept[1][c]["winner_index"]
            pid = "p_" + short_hash([qa["question_id"], qb["question_id"]], 8)
            qa["pair"] = {"pair_id": pid, "partner": qb["question_id"], "flip": flip}
            qb["pair"] = {"pair_id": pid, "partner": qa["question_id"], "flip": flip}
            questions += [qa, qb]
        singles = [(di, c) for di in (0, 1) for c in kept[di] if c not in chosen_pairs]
        singles.sort(key=lambda t: (-kept[t[0]][t[1]]["min_margin"], t))
        taken = 0
        for di, c in singles:
            if taken >= per_pool_singles:
                break
            if not free(c, 3):
                continue
            take(c)
            taken += 1
            questions.append(make_question(
                pool["datasets"][di], [cands[(pi, di, r)] for r in c],
                [results[(pool["datasets"][di]["dataset_id"], cands[(pi, di, r)]["candidate_id"])] for r in c],
                kept[di][c], category=pool["category"], rng=rng, device=device, split=split,
                group=pool["group"], pool_id=pool["pool_id"]))
    # one question per id (a subset can only appear once per dataset)
    seen, unique = set(), []
    for q in questions:
        if q["question_id"] not in seen:
            seen.add(q["question_id"])
            unique.append(q)
    return unique


# --------------------------------------------------------------------------- output

def write_assets(out: Path, questions: list[dict], results: dict, manifest: dict) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "questions.jsonl", "w", encoding="utf-8") as f:
        for q in questions:
            f.write(json.dumps(q, sort_keys=True, separators=(",", ":")) + "\n")
    used = {(q["dataset_id"], ch["candidate_id"]) for q in questions for ch in q["choices"]}
    with gzip.open(out / "curves.jsonl.gz", "wt", encoding="utf-8", compresslevel=9) as f:
        for (dsid, cid) in sorted(used):
            r = results[(dsid, cid)]
            f.write(json.dumps({
                "dataset_id": dsid, "candidate_id": cid, "metric": r["metric"], "seeds": r["seeds"],
                "samples": r["curves"]["samples"],
                "values": [[None if v is None else float(f"{v:.5g}") for v in row] for row in r["curves"]["values"]],
            }, separators=(",", ":")) + "\n")
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def summarize(questions: list[dict]) -> dict:
    from collections import Counter

    pairs = {q["pair"]["pair_id"] for q in questions if q.get("pair")}
    flips = {q["pair"]["pair_id"] for q in questions if q.get("pair") and q["pair"]["flip"]}
    return {
        "questions": len(questions),
        "pairs": len(pairs),
        "paired_questions": sum(1 for q in questions if q.get("pair")),
        "flipping_pairs": len(flips),
        "by_category": dict(Counter(q["type"] for q in questions)),
        "by_family": dict(Counter(q["family"] for q in questions)),
        "by_split": dict(Counter(q["split"] for q in questions)),
        "answer_letters": dict(Counter(q["correct_letter"] for q in questions)),
    }


def generate(out: Path, *, seed: int = 0, groups: int = 3, workers: int = 2, device: str = "cpu",
             log=print) -> dict:
    import torch

    t0 = time.perf_counter()
    pools = plan(seed, groups)
    cands = build_candidates(pools, device)
    log(f"planned {len(pools)} pools, {len(cands)} candidate executions x {N_SEEDS} seeds on {device}")
    results = execute_all(pools, cands, workers=workers, device=device, log=log)
    questions = assemble(pools, cands, results, seed=seed, device=device)
    summary = summarize(questions)
    manifest = {
        "format": QUESTION_FORMAT,
        "synthetic": True,
        "label": ("synthetic questions generated and executed by archcurator "
                  "(ArchitectureIQ's shape; not the study's questions)"),
        "generator": "python -m archcurator.core.aiq.generate",
        "seed": seed,
        "groups_per_family": groups,
        "pool_size": POOL_SIZE,
        "num_choices": NUM_CHOICES,
        "retention_rule": f"same candidate wins on all {N_SEEDS} seeds, winner without failed seeds, "
                          f"per-seed relative margin >= {MIN_MARGIN}",
        "executions": len(cands),
        "device": device,
        "torch": torch.__version__,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "executor": EXECUTOR_VERSION,
        "seconds": round(time.perf_counter() - t0, 1),
        "summary": summary,
    }
    write_assets(out, questions, results, manifest)
    log(json.dumps(summary, indent=2))
    return manifest


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m archcurator.core.aiq.generate", description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="assets/aiq")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--groups", type=int, default=3, help="dataset pairs per family")
    ap.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1))
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda", "auto"])
    a = ap.parse_args(argv)
    device = a.device
    if device == "auto":
        import torch
        device = "cuda" if torch.cuda.is_available() else "cpu"
    generate(Path(a.out), seed=a.seed, groups=a.groups, workers=a.workers, device=device)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

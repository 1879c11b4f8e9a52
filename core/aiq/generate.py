"""Generate, execute and keep ArchitectureIQ-shaped questions (run once, on the CPU; not in CI).

    python -m archcurator.core.aiq.generate --out assets/aiq [--seed 0] [--groups 3] [--workers 2]
    archcurator kb generate --out assets/aiq

What is drawn follows the study's profiles (ArchitectureIQ v1-v2.2, read
from its public repository) wherever the CPU allows:

- datasets: ``core.aiq.datasets`` (symbolic regression over target
  expressions, one or several inputs; a bigram language model; xor and
  spiral classification);
- models: MLPs with depth 1-6, width 16-256, residual or not, a LayerNorm
  and an activation (relu, leaky_relu at slope 0.01, gelu, silu) drawn per
  layer; the fixed-grid spline KAN of profiles v2 (regression and
  classification); a causal Transformer LM (d_model 32-128, 1-3 layers, 2 or
  4 heads, d_ff 64-256) for the bigram task;
- optimizers: SGD (momentum 0 or 0.9), Adam, AdamW, RMSprop, Adagrad; lr in
  {1e-4, 3e-4, 1e-3, 3e-3, 1e-2}; weight decay in {0, 1e-5, 1e-4, 1e-3};
- losses: mse / cross_entropy and their L1 / L2 penalties (lambda 1e-4 to
  1e-2) for regression and the LM, plain cross-entropy for classification;
- budgets: ``total_samples_seen`` from the study's list, cut to what two
  CPU cores can run (see BUDGETS), the batch size in {16, 32, 64} fixed
  per pool, as the study fixes it per candidate set;
- the retention rule is the study's (``execute.significance``, rule
  "study"); ``--rule strict`` keeps ours.

Plan: per family, GROUPS dataset *pairs* (two instances of one shape). For
each pair and category a *pool* of candidates is drawn (as the study draws a
candidate set: the invariant axes once, the varying ones per candidate) and
executed on both datasets, 10 seeds each. Every 3-subset of a pool that the
rule keeps is a possible question; one kept on both datasets is a *pair*
(same candidates and letter order, other data). ``mixed`` pools vary model
and optimizer (and sometimes the loss), as the study's mixed sets do.
Questions are split into ``train`` and ``test`` by dataset pair.

Output (``--out``): ``questions.jsonl``, ``curves.jsonl.gz`` (per-seed
curves of every executed candidate that is in a question) and
``manifest.json`` (how it was made, the counts, the wall time). ``--cache``
keeps each finished execution, so an interrupted run resumes.
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
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import datasets as ds_mod
from .execute import BASE_SEED, DEFAULT_RULE, MAX_FAILED_SEEDS, N_SEEDS, run_candidate, significance
from .spec import (
    EXECUTOR_VERSION,
    QUESTION_FORMAT,
    SCHEMA_VERSION,
    infer_axes,
    letters,
    make_candidate,
    parameter_count,
    question_id_for,
    recipe_id,
    short_hash,
)

NUM_CHOICES = 3
CATEGORIES = ("mixed", "architecture_only", "optimizer_only")
POOL_SIZE = {"mixed": 8, "architecture_only": 6, "optimizer_only": 6}
#: the pools drawn per dataset pair: (category, variant); mixed sets (model and optimizer varying,
#: the study's quiz category) are drawn twice, as they keep the most questions per execution
POOLS = (("mixed", ""), ("architecture_only", ""), ("optimizer_only", ""), ("mixed", "b"))

# The study's grids (profiles v1-v2.2).
LRS = (1e-4, 3e-4, 1e-3, 3e-3, 1e-2)
WEIGHT_DECAYS = (0.0, 1e-5, 1e-4, 1e-3)
MOMENTA = (0.0, 0.9)
OPTIMIZERS = ("SGD", "Adam", "AdamW", "RMSprop", "Adagrad")
MLP_DEPTHS = (1, 2, 3, 4, 5, 6)
MLP_WIDTHS = (16, 32, 64, 128)  # the study's grid tops at 256; dropped: 4x the cost on two CPU cores
MLP_ACTIVATIONS = ("relu", "leaky_relu", "gelu", "silu")
LEAKY_RELU_SLOPE = 0.01
KAN = {"depth": (1, 2, 3), "width": (4, 8, 16, 32), "grid_size": (3, 5, 8), "spline_order": (3,)}
TRANSFORMER = {"d_model": (32, 64, 128), "num_layers": (1, 2, 3), "num_heads": (2, 4), "d_ff": (64, 128, 256)}
LAMBDAS = (1e-4, 1e-3, 1e-2)
BATCH_SIZES = (16, 32, 64)
# The study's budgets are 1024 ... 40960 samples; on two CPU cores we keep the lower ones (the
# Transformer LM's cost grows fastest, so it keeps two).
BUDGETS = {"bigram_lm": (1024, 2048)}
DEFAULT_BUDGETS = (1024, 2048, 5120)
# Profile v1 draws only MLPs for regression; v2 adds the KAN (drawn uniformly with the MLP).
KAN_SHARE = 0.25
# The CPU budget: a recipe whose work (parameters x samples seen, x tokens per window for the LM)
# is over its model type's cap is left out of its pool (the pool is smaller; nothing is redrawn, so
# the other recipes stay as drawn). Measured on two shared cores, the caps keep one execution (10
# seeds) under about a minute and a half: they drop the largest MLPs (width 128 with depth >= 5 at
# 5120 samples), KANs and Transformer LMs (about 60k parameters at 2048 samples, 120k at 1024).
COST_CAP = {"mlp": 9e7, "kan": 1.6e7, "transformer_lm": 2e9}
# The Transformer LM is the costliest family: its optimizer-only sets (one model, six optimizers) are
# not drawn; its mixed sets (model and optimizer varying, the study's quiz category) are.
SKIP = {("bigram_lm", "optimizer_only")}


@dataclass(frozen=True)
class Profile:
    """What a generation run draws: the grids that differ between the two-core world and the study's."""

    name: str
    families: tuple[str, ...]
    mlp_widths: tuple[int, ...]
    kan: dict
    budgets: dict  # family -> budgets; a family not named takes "*"
    cost_cap: dict | None  # model type -> the largest work kept; None keeps every recipe
    data_variants: bool  # a pool's second dataset moves the data (size, noise) rather than being a sibling
    skip: frozenset = frozenset()

    def budgets_of(self, family: str) -> tuple[int, ...]:
        return tuple(self.budgets.get(family, self.budgets["*"]))

    def describe(self) -> dict:
        return {"name": self.name, "families": list(self.families), "mlp_widths": list(self.mlp_widths),
                "kan": {k: list(v) for k, v in self.kan.items()},
                "budgets": {f: list(self.budgets_of(f)) for f in self.families}, "cost_cap": self.cost_cap,
                "data_variants": self.data_variants, "skip": sorted("/".join(k) for k in self.skip)}


#: the world the shipped questions come from: two CPU cores' cut of the study's grids
CPU_PROFILE = Profile("cpu", tuple(ds_mod.GENERATED_FAMILIES), MLP_WIDTHS, KAN,
                      {**BUDGETS, "*": DEFAULT_BUDGETS}, COST_CAP, data_variants=False, skip=frozenset(SKIP))
#: the study's world (profile v2.2, renrua52/ArchitectureIQ profiles/v2.2.yaml): its four families,
#: widths to 256, its budget list for every family (tabular classification at its fixed 8192), its
#: KAN grid, no cost cap; and each pool's second dataset a data variant (fewer or noisier training
#: points, another target kind, a sharper bigram law: core.aiq.flips.variants), so the training
#: questions hold pairs whose data differs, as the flipping pairs do. Hours of CPU: run it with
#: --cache and resume; on a GPU, --device cuda.
STUDY_PROFILE = Profile(
    "study", ("univariate_regression", "multivariate_regression", "bigram_lm", "synthetic_tabular_classification"),
    (16, 32, 64, 128, 256), {"depth": (1, 2), "width": (8,), "grid_size": (5,), "spline_order": (3,)},
    {"synthetic_tabular_classification": (8192,), "*": (1024, 2048, 5120, 10240, 20480, 40960)},
    None, data_variants=True)
PROFILES = {p.name: p for p in (CPU_PROFILE, STUDY_PROFILE)}
#: the study's tabular data (profile v2.2's dataset_configs)
STUDY_TABULAR = {"input_dim": (4, 8, 16), "rule_family": ("smooth_additive", "sparse_interaction",
                                                          "piecewise_boundary"),
                 "noise_std": (0.05, 0.1), "train_size": 1024, "test_size": 2048}


# --------------------------------------------------------------------------- sampling

def sample_optimizer(rng: random.Random) -> dict:
    t = rng.choice(OPTIMIZERS)
    o: dict[str, Any] = {"type": t, "lr": rng.choice(LRS), "weight_decay": rng.choice(WEIGHT_DECAYS)}
    if t == "SGD":
        o["momentum"] = rng.choice(MOMENTA)
    if t in ("Adam", "AdamW"):
        o["betas"] = [0.9, 0.999]
    return o


def sample_mlp(rng: random.Random, input_dim: int, output_dim: int, widths=MLP_WIDTHS) -> dict:
    depth = rng.choice(MLP_DEPTHS)
    return {
        "type": "mlp",
        "depth": depth,
        "width": rng.choice(widths),
        "residual": rng.choice([False, True]),
        "layer_norm": [rng.choice([True, False]) for _ in range(depth)],
        "activations": [rng.choice(MLP_ACTIVATIONS) for _ in range(depth)],
        "leaky_relu_slope": LEAKY_RELU_SLOPE,
        "input_dim": input_dim,
        "output_dim": output_dim,
    }


def sample_kan(rng: random.Random, input_dim: int, output_dim: int, grid: dict = KAN) -> dict:
    return {
        "type": "kan", "variant": "efficient_spline_v1", "input_dim": input_dim, "output_dim": output_dim,
        **{k: rng.choice(v) for k, v in grid.items()},
        "grid_range": [-1.0, 1.0], "base_activation": "silu",
    }


def sample_transformer(rng: random.Random, vocab: int, context: int) -> dict:
    heads = rng.choice(TRANSFORMER["num_heads"])
    d = rng.choice(TRANSFORMER["d_model"])
    return {"type": "transformer_lm", "vocab_size": vocab, "context_length": context,
            "d_model": heads * max(1, d // heads), "num_layers": rng.choice(TRANSFORMER["num_layers"]),
            "num_heads": heads, "d_ff": rng.choice(TRANSFORMER["d_ff"])}


def sample_loss(rng: random.Random, family: str) -> dict:
    if family.endswith("classification"):
        return {"loss_id": "cross_entropy"}
    base = "mse" if family.endswith("regression") else "cross_entropy"
    loss_id = rng.choice([base, base + "_l2", base + "_l1"])
    out: dict[str, Any] = {"loss_id": loss_id}
    if loss_id != base:
        out["lambda"] = rng.choice(LAMBDAS)
    return out


def model_sampler(family: str, ds: dict, kan: bool, profile: Profile = CPU_PROFILE):
    p = ds["params"]
    if family == "bigram_lm":
        return lambda rng: sample_transformer(rng, int(p["vocab_size"]), int(p["context_length"]))
    out_dim = int(p.get("num_classes", 1))
    in_dim = int(p.get("input_dim", 1))

    def draw(rng: random.Random) -> dict:
        if kan and rng.random() < 0.5:
            return sample_kan(rng, in_dim, out_dim, profile.kan)
        return sample_mlp(rng, in_dim, out_dim, profile.mlp_widths)
    return draw


def dataset_pair(family: str, seed: int, profile: Profile = CPU_PROFILE) -> tuple[dict, dict]:
    """Two datasets of one family and shape (the same input dimension), drawn from SEED: two
    instances, or (a profile with data variants) one instance and a variant of it."""
    rng = random.Random(f"pair:{family}:{seed}")
    options: dict[str, Any] = {}
    if family == "multivariate_regression":
        options["input_dim"] = rng.choice(ds_mod.MULTIVARIATE_DIMS)
    if family == "synthetic_tabular_classification" and profile.data_variants:
        options.update(input_dim=rng.choice(STUDY_TABULAR["input_dim"]),
                       rule_family=rng.choice(STUDY_TABULAR["rule_family"]),
                       noise_std=rng.choice(STUDY_TABULAR["noise_std"]),
                       train_size=STUDY_TABULAR["train_size"], test_size=STUDY_TABULAR["test_size"])
    a = ds_mod.sample_dataset_spec(family, seed * 2, **options)
    if not profile.data_variants:
        return a, ds_mod.sample_dataset_spec(family, seed * 2 + 1, **options)
    return a, data_variant(a, rng.randrange(5))


def data_variant(ds: dict, k: int) -> dict:
    """DS's data moved (the K-th of five draws): the flip search's variants where it has them, and
    for tabular classification fewer training points or more noise (the same rule)."""
    from .flips import _respec, variants

    if ds["family"] == "synthetic_tabular_classification":
        p = ds["params"]
        size, noise = ((128, None), (256, 0.3), (1024, 0.3), (64, None), (256, None))[k]
        return _respec(ds, train_size=size, point_seed=int(p["point_seed"]) + 7_000 + k,
                       **({"noise_std": noise} if noise is not None else {}))
    return variants(ds, k)[0]


def sample_pool(family: str, category: str, ds: dict, rng: random.Random, size: int, kan: bool,
                profile: Profile = CPU_PROFILE) -> dict:
    """One candidate set: invariant axes drawn once, the category's varying axes per candidate."""
    budget = rng.choice(profile.budgets_of(family))
    batch = rng.choice([b for b in BATCH_SIZES if budget % b == 0])
    model_of = model_sampler(family, ds, kan, profile)
    vary_loss = category == "mixed" and rng.random() < 1 / 3 and not family.endswith("classification")
    fixed_model, fixed_opt, fixed_loss = model_of(rng), sample_optimizer(rng), sample_loss(rng, family)
    recipes, seen = [], set()
    for _ in range(size * 30):
        if len(recipes) >= size:
            break
        model = fixed_model if category == "optimizer_only" else model_of(rng)
        opt = fixed_opt if category == "architecture_only" else sample_optimizer(rng)
        loss = sample_loss(rng, family) if vary_loss else fixed_loss
        key = json.dumps([model, opt, loss], sort_keys=True)
        if key in seen:
            continue
        seen.add(key)
        recipes.append({"model": model, "optimizer": opt, "loss": loss, "batch_size": batch,
                        "total_samples_seen": budget})
    return {"family": family, "category": category, "recipes": recipes,
            "varying": sorted({"model", "optimizer"} | ({"loss"} if vary_loss else set()))
            if category == "mixed" else [{"architecture_only": "model", "optimizer_only": "optimizer"}[category]]}


def plan(seed: int = 0, groups: int = 3, families=None, profile: Profile = CPU_PROFILE) -> list[dict]:
    """Pools to execute: per family, GROUPS dataset pairs x the categories."""
    families = list(families or profile.families)
    pools = []
    for fi, family in enumerate(families):
        for g in range(groups):
            a, b = dataset_pair(family, seed * 1000 + fi * 100 + g, profile)
            group = f"{family}:{g}"
            kan = family != "bigram_lm" and random.Random(f"profile:{seed}:{group}").random() < 2 * KAN_SHARE
            for category, variant in POOLS:
                if (family, category) in profile.skip:
                    continue
                key = [group, category, seed] + ([variant] if variant else [])
                rng = random.Random("pool:" + ":".join(str(k) for k in (seed, group, category, variant) if k != ""))
                pool = sample_pool(family, category, a, rng, POOL_SIZE[category], kan, profile)
                cap = profile.cost_cap
                kept = [r for r in pool["recipes"] if cap is None or _cost(r) <= cap[r["model"]["type"]]]
                pool.update({"group": group, "datasets": [a, b], "pool_id": "pool_" + short_hash(key),
                             "recipes": kept, "over_cpu_budget": len(pool["recipes"]) - len(kept)})
                pools.append(pool)
    return pools


# --------------------------------------------------------------------------- execution

def _job(args: tuple[dict, dict, str]) -> tuple[str, str, dict]:
    ds, cand, device = args
    res = run_candidate({"candidate": cand, "dataset": ds, "device": device,
                         "n_seeds": N_SEEDS, "base_seed": BASE_SEED})
    return ds["dataset_id"], cand["candidate_id"], res


def build_candidates(pools: list[dict], device: str) -> dict[tuple[int, int, int], dict]:
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


def _cost(cand: dict) -> float:
    """A rough work estimate (parameters x samples seen, x tokens for a language model); CAND is a
    candidate or a pool's recipe."""
    m = cand["model"]
    samples = cand["budget"]["total_samples_seen"] if "budget" in cand else cand["total_samples_seen"]
    per_sample = parameter_count(m) * (int(m.get("context_length", 1)) if m["type"] == "transformer_lm" else 1)
    return per_sample * samples


def execute_all(pools: list[dict], cands: dict, *, workers: int, device: str, cache: Path | None = None,
                log=print) -> dict[tuple[str, str], dict]:
    jobs = {}
    for (pi, di, _), c in cands.items():
        ds = pools[pi]["datasets"][di]
        jobs[(ds["dataset_id"], c["candidate_id"])] = (ds, c, device)
    results: dict[tuple[str, str], dict] = {}
    if cache is not None and cache.is_file():
        for line in cache.read_text(encoding="utf-8").splitlines():
            try:
                r = json.loads(line)
            except json.JSONDecodeError:
                continue  # a line cut by an interrupted run
            key = (r["dataset_id"], r["candidate_id"])
            if key in jobs:
                results[key] = r["result"]
        log(f"  {len(results)} executions read back from {cache}")
    # cheapest first: most pools complete early (an interrupted run keeps them); the largest
    # Transformer LMs come last
    todo = sorted((k for k in jobs if k not in results), key=lambda k: _cost(jobs[k][1]))
    t0 = time.perf_counter()
    sink = open(cache, "a", encoding="utf-8") if cache is not None else None  # noqa: SIM115 - closed below

    def keep(dsid: str, cid: str, res: dict) -> None:
        results[(dsid, cid)] = res
        if sink is not None:
            sink.write(json.dumps({"dataset_id": dsid, "candidate_id": cid, "result": res}) + "\n")
            sink.flush()

    try:
        if workers <= 1:
            for n, key in enumerate(todo, 1):
                keep(*_job(jobs[key]))
                if n % 10 == 0 or n == len(todo):
                    log(f"  executed {n}/{len(todo)} ({time.perf_counter() - t0:.0f}s)")
        else:
            with ProcessPoolExecutor(max_workers=workers) as ex:
                futures = [ex.submit(_job, jobs[k]) for k in todo]
                for n, fut in enumerate(as_completed(futures), 1):
                    keep(*fut.result())
                    if n % 10 == 0 or n == len(todo):
                        log(f"  executed {n}/{len(todo)} ({time.perf_counter() - t0:.0f}s)")
    finally:
        if sink is not None:
            sink.close()
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


def assemble(pools: list[dict], cands: dict, results: dict, *, seed: int, device: str, rule: str = DEFAULT_RULE,
             per_pool_pairs: int = 4, per_dataset_singles: int = 5, uses: int = 4,
             test_share: float = 0.4) -> list[dict]:
    """Questions from the executed pools: pairs first (winner flips preferred), then singles; a
    recipe is in at most USES questions per dataset."""
    groups = sorted({p["group"] for p in pools})
    by_family: dict[str, list[str]] = {}
    for g in groups:
        by_family.setdefault(g.split(":")[0], []).append(g)
    grng = random.Random(f"split:{seed}")
    split_of = {}
    for fam_groups in by_family.values():  # each family has test groups and train groups
        shuffled = fam_groups[:]
        grng.shuffle(shuffled)
        n_test = max(1, round(len(shuffled) * test_share)) if len(shuffled) > 1 else 0
        split_of.update({g: ("test" if i < n_test else "train") for i, g in enumerate(shuffled)})
    questions: list[dict] = []
    for pi, pool in enumerate(pools):
        rng = random.Random(f"assemble:{seed}:{pool['pool_id']}")
        n = len(pool["recipes"])
        kept: dict[int, dict[tuple, dict]] = {0: {}, 1: {}}
        for di, ds in enumerate(pool["datasets"]):
            # as the study does, a candidate that failed MAX_FAILED_SEEDS seeds or more is dropped
            # from its pool before subsets are searched (it is "excluded", not a spoiler of every subset)
            eligible = [ri for ri in range(n)
                        if results[(ds["dataset_id"], cands[(pi, di, ri)]["candidate_id"])]["failed_seeds"]
                        < MAX_FAILED_SEEDS]
            for combo in itertools.combinations(eligible, NUM_CHOICES):
                rs = [results[(ds["dataset_id"], cands[(pi, di, ri)]["candidate_id"])] for ri in combo]
                sig = significance(rs, rule=rule)
                if sig["passed"]:
                    kept[di][combo] = sig
        both = [c for c in kept[0] if c in kept[1]]
        both.sort(key=lambda c: (kept[0][c]["winner_index"] == kept[1][c]["winner_index"],
                                 -min(kept[0][c]["gap"] or 0, kept[1][c]["gap"] or 0), c))
        use = {0: {}, 1: {}}

        def free(combo, di, use=use):
            return all(use[di].get(r, 0) < uses for r in combo)

        def take(combo, di, use=use):
            for r in combo:
                use[di][r] = use[di].get(r, 0) + 1

        def question(di, combo, order=None, pi=pi, pool=pool, kept=kept, rng=rng):
            ds = pool["datasets"][di]
            cs = [cands[(pi, di, r)] for r in combo]
            rs = [results[(ds["dataset_id"], c["candidate_id"])] for c in cs]
            return make_question(ds, cs, rs, kept[di][combo], category=pool["category"], rng=rng, device=device,
                                 split=split_of[pool["group"]], group=pool["group"], pool_id=pool["pool_id"],
                                 order=order)

        pairs = []
        for c in both:
            if len(pairs) >= per_pool_pairs:
                break
            if free(c, 0) and free(c, 1):
                pairs.append(c)
                take(c, 0)
                take(c, 1)
        for c in pairs:
            order = list(range(NUM_CHOICES))
            rng.shuffle(order)
            qa, qb = question(0, c, order), question(1, c, order)
            flip = kept[0][c]["winner_index"] != kept[1][c]["winner_index"]
            pid = "p_" + short_hash([qa["question_id"], qb["question_id"]], 8)
            qa["pair"] = {"pair_id": pid, "partner": qb["question_id"], "flip": flip}
            qb["pair"] = {"pair_id": pid, "partner": qa["question_id"], "flip": flip}
            questions += [qa, qb]
        for di in (0, 1):
            singles = sorted((c for c in kept[di] if c not in pairs), key=lambda c: (-(kept[di][c]["gap"] or 0), c))
            taken = 0
            for c in singles:
                if taken >= per_dataset_singles:
                    break
                if free(c, di):
                    take(c, di)
                    taken += 1
                    questions.append(question(di, c))
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
        "by_category": dict(sorted(Counter(q["type"] for q in questions).items())),
        "by_family": dict(sorted(Counter(q["family"] for q in questions).items())),
        "by_split": dict(sorted(Counter(q["split"] for q in questions).items())),
        "answer_letters": dict(sorted(Counter(q["correct_letter"] for q in questions).items())),
    }


def generate(out: Path, *, seed: int = 0, groups: int = 3, workers: int = 2, device: str = "cpu",
             rule: str = DEFAULT_RULE, cache: Path | None = None, families=None, profile: Profile = CPU_PROFILE,
             log=print) -> dict:
    import torch

    t0 = time.perf_counter()
    families = list(families or profile.families)
    pools = plan(seed, groups, families, profile)
    cands = build_candidates(pools, device)
    log(f"planned {len(pools)} pools, {len(cands)} candidate executions x {N_SEEDS} seeds on {device}")
    results = execute_all(pools, cands, workers=workers, device=device, cache=cache, log=log)
    questions = assemble(pools, cands, results, seed=seed, device=device, rule=rule)
    summary = summarize(questions)
    manifest = {
        "format": QUESTION_FORMAT,
        "synthetic": True,
        "label": ("synthetic questions generated and executed by archcurator "
                  "(ArchitectureIQ's shape and grids; not the study's questions)"),
        "generator": "python -m archcurator.core.aiq.generate",
        "seed": seed,
        "groups_per_family": groups,
        "families": families,
        "pool_sizes": POOL_SIZE,
        "num_choices": NUM_CHOICES,
        "budgets": {f: list(profile.budgets_of(f)) for f in families},
        "retention_rule": significance([{"finals": [1.0], "mean": 1.0, "failed_seeds": 0}] * 2, rule=rule)["rule"],
        "executions": len(cands),
        "cost_cap": profile.cost_cap,
        "recipes_over_cpu_budget": sum(p["over_cpu_budget"] for p in pools),
        "workers": workers,
        **({} if profile is CPU_PROFILE else {"profile": profile.describe()}),
        "device": device,
        "torch": torch.__version__,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "executor": EXECUTOR_VERSION,
        "seconds": round(time.perf_counter() - t0, 1),
        # each execution's own wall time, summed (runs resumed from --cache included): the work
        # behind the set, whichever invocation did it
        "execution_seconds": round(sum(r["seconds"] for r in results.values()), 1),
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
    ap.add_argument("--rule", default=DEFAULT_RULE, choices=["study", "strict"], help="the retention rule")
    ap.add_argument("--cache", default=None, help="a JSONL file keeping each finished execution (resume)")
    ap.add_argument("--families", nargs="*", default=None, help="default: the profile's")
    ap.add_argument("--profile", default="cpu", choices=sorted(PROFILES),
                    help="cpu: two cores' cut of the study's grids (the shipped set); study: the study's v2.2 "
                         "world with data variants (hours of CPU: use --cache)")
    a = ap.parse_args(argv)
    device = a.device
    if device == "auto":
        import torch
        device = "cuda" if torch.cuda.is_available() else "cpu"
    generate(Path(a.out), seed=a.seed, groups=a.groups, workers=a.workers, device=device, rule=a.rule,
             cache=Path(a.cache) if a.cache else None, families=a.families, profile=PROFILES[a.profile])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

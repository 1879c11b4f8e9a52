"""Pairs that flip: the same three recipes on other data, executed, and the winner reversed.

    nice -n 10 python -m archcurator.core.aiq.flips --questions assets/aiq/questions.jsonl \\
        --out assets/aiq/flips.jsonl --cache flips-cache.jsonl --until 22:50

For each executed unit of the question set (a candidate pool on one dataset), a *variant* dataset
of the same family and shape is drawn that moves what the data-level features measure (label
noise or a small training set, the spiral's turns, another target expression, the bigram
table's sharpness); every recipe of the unit's questions is executed on it (10 seeds, the study's
executor); each question of the unit is judged again on the variant with the study's retention
rule. A question kept on both datasets whose winner recipe differs is a **flipping pair**: the
original question and its partner on the variant (same recipes and letter order, other data).
Every outcome comes from a run made here; nothing is inferred. Runs are kept in ``--cache``
(one JSON line per executed candidate), so a stopped search resumes; ``--until HH:MM`` (UTC)
stops before the next unit once that time has passed.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
import time
from collections import defaultdict
from pathlib import Path

from . import datasets as ds_mod
from .execute import DEFAULT_RULE, run_candidate, significance
from .spec import make_candidate, recipe_id

VARIANT_SEED = 7_000


def _respec(ds: dict, **changes) -> dict:
    """DS with some params changed, the rest (the target expression, the bigram table) kept; a new id."""
    from .spec import short_hash

    params = {**(ds.get("params") or {}), **changes}
    spec = {**ds, "params": params}
    spec["dataset_id"] = f"{ds_mod.ID_PREFIX[ds['family']]}_{short_hash(params)}"
    return spec


def _target_std(ds: dict) -> float:
    _, ty, _, _ = ds_mod.materialize(ds)
    return float(ty.float().std()) or 1.0


def _contrast_target(ds: dict) -> str:
    """A target of the other kind than DS's: a smooth offset line for a periodic target, a slow
    sine for an aperiodic one (the one reversal the earlier draws found in regression was between
    these two kinds: the offset rewards the recipe that moves the output bias fastest, the sine
    the one with the capacity to bend)."""
    p = ds.get("params") or {}
    d = int(p.get("input_dim", 1))
    xs = ["x"] if ds["family"] == "univariate_regression" else [f"x{i}" for i in range(d)]
    feats = ds_mod.target_features(p.get("expression", ""), d, p.get("domain") or (0.0, 1.0))
    if feats.get("target_periodic", 0):
        return "2.25 + " + (xs[0] if len(xs) == 1 else f"({' + '.join(xs)}) / {len(xs)}")
    return " + ".join(f"sin(6.283185307179586*({x} / 1.6667)) * 1.1667" for x in xs[:2])


def variants(ds: dict, k: int = 0) -> list[dict]:
    """Datasets of DS's family and shape that move its data-level features (the K-th draw).

    Draw 0: for classification and the bigram LM the data-poor, noisy regime, the same label rule
    or bigram table from few training points (label noise 0.2 for classification): against the
    recipe's fixed budget many passes over little data, so the recipes that fit fastest on plenty
    of clean data are the ones that overfit here; for regression a target of the other kind
    (``_contrast_target``). Draws 1 and 2 move the same features by other amounts (tiny clean
    sets; few noisy regression points; a sharper bigram law from less data). The earlier draws
    (now 3-6: other expressions, turns, table sharpness) flipped 7 of ~280 unit draws.
    """
    fam, p = ds["family"], ds.get("params") or {}
    seed = VARIANT_SEED + 97 * k + int(p.get("instance_seed", 0))
    out = []
    if k == 0:
        if fam in ("xor_classification", "spiral_classification"):
            out.append(_respec(ds, label_noise=0.2, train_size=128, point_seed=seed + 1_000))
        elif fam in ("univariate_regression", "multivariate_regression"):
            out.append(_respec(ds, expression=_contrast_target(ds)))
        elif fam == "bigram_lm":
            out.append(_respec(ds, train_size=64, sequence_seed=seed))
        return out
    if k == 1:   # tiny and clean (classification), small (bigram), few noisy points (regression)
        if fam in ("xor_classification", "spiral_classification"):
            out.append(_respec(ds, label_noise=0.0, train_size=48, point_seed=seed + 1_000))
        elif fam in ("univariate_regression", "multivariate_regression"):
            out.append(_respec(ds, train_size=32, noise={"enabled": True, "std": 0.5, "seed": seed + 2_000,
                                                         "split": "train"},
                               point_sampling={"distribution": "uniform", "seed": seed + 1_000}))
        elif fam == "bigram_lm":
            out.append(_respec(ds, train_size=160, sequence_seed=seed))
        return out
    if k == 2:   # a sharper law from less data (bigram), the contrast target from few points
        if fam in ("xor_classification", "spiral_classification"):
            out.append(_respec(ds, label_noise=0.1, train_size=64, point_seed=seed + 1_000))
        elif fam in ("univariate_regression", "multivariate_regression"):
            out.append(_respec(ds, expression=_contrast_target(ds), train_size=48,
                               point_sampling={"distribution": "uniform", "seed": seed + 1_000}))
        elif fam == "bigram_lm":
            out.append(_respec(ds, alpha=2.0, train_size=200, sequence_seed=seed, table_seed=seed + 10_000))
        return out
    k -= 3
    if fam in ("xor_classification", "spiral_classification"):
        noise = float(p.get("label_noise", 0.0))
        opts = {"label_noise": 0.25 if noise < 0.15 else 0.0, "train_size": int(p.get("train_size", 512)),
                "test_size": int(p.get("test_size", 1024))}
        if k % 2:   # the other draw: a small training set, the label noise kept
            opts["label_noise"], opts["train_size"] = noise, 128
        if fam == "spiral_classification":
            opts["turns"] = 1.5 if float(p.get("turns", 1.0)) < 1.25 else 0.75
            opts["noise_std"] = float(p.get("noise_std", 0.05))
        out.append(ds_mod.sample_dataset_spec(fam, seed, **opts))
    elif fam in ("univariate_regression", "multivariate_regression"):
        out.append(ds_mod.sample_dataset_spec(fam, seed, input_dim=int(p.get("input_dim", 1)),
                                              train_size=int(p.get("train_size", 256)),
                                              test_size=int(p.get("test_size", 256))))
    elif fam == "bigram_lm":
        alpha = float(p.get("alpha", 1.0))
        out.append(ds_mod.sample_dataset_spec(fam, seed, vocab_size=int(p.get("vocab_size", 32)),
                                              context_length=int(p.get("context_length", 16)),
                                              alpha=(3.0 if alpha < 2 else 0.5) if k % 2 == 0 else 0.3,
                                              train_size=int(p.get("train_size", 800)),
                                              test_size=int(p.get("test_size", 200))))
    return out


def moved(c: dict, ds: dict) -> dict:
    """Candidate C's recipe for dataset DS (its id is the recipe's on DS)."""
    return make_candidate(dataset_id=ds["dataset_id"], family=ds["family"], model=c["model"],
                          optimizer=c["optimizer"], loss=c["loss"], batch_size=c["budget"]["batch_size"],
                          total_samples_seen=c["budget"]["total_samples_seen"],
                          device=(c.get("execution") or {}).get("device", "cpu"))


def _result(res: dict) -> dict:
    return {k: res[k] for k in ("finals", "mean", "std", "failed_seeds", "params", "seconds") if k in res}


def partner(q: dict, ds: dict, results: dict[str, dict], rule: str = DEFAULT_RULE) -> tuple[dict, dict] | None:
    """Q's question on DS from the executed RESULTS (by recipe id), and its significance; None when
    a recipe was not executed."""
    rs = []
    choices = []
    for ch in q["choices"]:
        rid = ch.get("recipe_id") or recipe_id(ch["candidate"])
        if rid not in results:
            return None
        c = moved(ch["candidate"], ds)
        rs.append(results[rid])
        choices.append({"letter": ch["letter"], "candidate_id": c["candidate_id"], "recipe_id": rid, "candidate": c,
                        "result": _result(results[rid])})
    sig = significance(rs, rule=rule)
    new = {k: v for k, v in q.items() if k not in ("choices", "correct_letter", "significance", "dataset",
                                                    "dataset_id", "question_id", "pair", "split", "origin")}
    new.update({"dataset": ds, "dataset_id": ds["dataset_id"], "choices": choices,
                "correct_letter": choices[sig["winner_index"]]["letter"],
                "significance": {k: sig[k] for k in ("passed", "gap", "rel_gap", "win_rate", "min_margin", "n_seeds",
                                                     "rule")} | {"metric": rs[0].get("metric")},
                "question_id": f"{q['question_id']}_v{ds['dataset_id'][-6:]}",
                "source": "archcurator flip search (synthetic, executed)"})
    return new, sig


def search(questions: list[dict], *, cache: Path | None, until: dt.datetime | None = None, k: int = 0,
           families: tuple[str, ...] | None = None, log=print,
           kept: list[dict] | None = None) -> tuple[list[dict], dict]:
    """The flipping pairs found (both questions of each, pair fields set) and counts. KEPT, when
    given, receives every partner the rule keeps on the variant, flipped or not (``pair.flip``
    says which): the executed questions on the other data, without the selection on flipping."""
    units: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for q in questions:
        if families and q["family"] not in families:
            continue
        units[(q.get("pool_id") or q["question_id"], q["dataset_id"])].append(q)
    done: dict[tuple[str, str], dict] = {}
    if cache is not None and cache.is_file():
        for line in cache.read_text().splitlines():
            if line.strip():
                d = json.loads(line)
                done[(d["dataset_id"], d["recipe_id"])] = d["result"]
    pairs, counts = [], {"units": 0, "questions": 0, "kept_both": 0, "flips": 0, "runs": 0, "seconds": 0.0}
    order = sorted(units, key=lambda u: (sum(ch["candidate"]["budget"]["training_steps"] for q in units[u]
                                             for ch in q["choices"]) / len(units[u]), u))
    for unit in order:
        if until is not None and dt.datetime.now(dt.timezone.utc) >= until:
            log(f"stopping: {until:%H:%M} UTC passed")
            break
        qs = units[unit]
        for ds in variants(qs[0]["dataset"], k):
            recipes = {}
            for q in qs:
                for ch in q["choices"]:
                    recipes.setdefault(ch.get("recipe_id") or recipe_id(ch["candidate"]), ch["candidate"])
            results = {}
            for rid, c in recipes.items():
                key = (ds["dataset_id"], rid)
                if key not in done:
                    t = time.time()
                    full = run_candidate({"candidate": moved(c, ds), "dataset": ds})
                    res = {k: full[k] for k in ("finals", "mean", "std", "failed_seeds", "params", "metric", "seconds",
                                                "device", "torch") if k in full}
                    counts["runs"] += 1
                    counts["seconds"] += time.time() - t
                    done[key] = res
                    if cache is not None:
                        with cache.open("a") as fh:
                            fh.write(json.dumps({"dataset_id": ds["dataset_id"], "recipe_id": rid, "result": res})
                                     + "\n")
                results[rid] = done[key]
            counts["units"] += 1
            for q in qs:
                counts["questions"] += 1
                got = partner(q, ds, results)
                if got is None:
                    continue
                new, sig = got
                if not sig["passed"]:
                    continue
                counts["kept_both"] += 1
                win_a = next(ch["recipe_id"] for ch in q["choices"] if ch["letter"] == q["correct_letter"])
                win_b = next(ch["recipe_id"] for ch in new["choices"] if ch["letter"] == new["correct_letter"])
                pid = f"flip_{q['question_id']}_{ds['dataset_id'][-6:]}"
                if kept is not None:
                    kept.append({**new, "pair": {"pair_id": pid, "partner": q["question_id"], "flip": win_a != win_b},
                                 "split": q.get("split", "test"), "pool_id": q.get("pool_id")})
                if win_a == win_b:
                    continue
                counts["flips"] += 1
                a = {**q, "pair": {"pair_id": pid, "partner": new["question_id"], "flip": True}}
                b = {**new, "pair": {"pair_id": pid, "partner": q["question_id"], "flip": True},
                     "split": q.get("split", "test")}
                pairs += [a, b]
        log(f"unit {unit[0]}/{unit[1]}: {counts['flips']} flips so far; {counts['runs']} runs, "
            f"{counts['seconds']:.0f} s")
    return pairs, counts


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--questions", required=True, type=Path)
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--cache", type=Path, default=None)
    ap.add_argument("--until", default=None, help="HH:MM UTC: start no unit after it")
    ap.add_argument("--family", action="append", default=None)
    ap.add_argument("--draw", type=int, action="append", default=None,
                    help="which variant draw (0, 1, ...; repeat for several, in order)")
    ap.add_argument("--kept-out", type=Path, default=None,
                    help="also write every partner question kept on a variant, flipped or not")
    a = ap.parse_args(argv)
    until = None
    if a.until:
        h, m = (int(x) for x in a.until.split(":"))
        now = dt.datetime.now(dt.timezone.utc)
        until = now.replace(hour=h, minute=m, second=0, microsecond=0)
    qs = [json.loads(line) for line in a.questions.read_text().splitlines() if line.strip()]
    t = time.time()
    pairs: list[dict] = []
    kept: list[dict] = []
    counts: dict = {}
    for k in a.draw or [0]:
        got, c = search(qs, cache=a.cache, until=until, k=k, families=tuple(a.family) if a.family else None,
                        log=lambda s: print(s, file=sys.stderr, flush=True), kept=kept)
        pairs += got
        counts[f"draw {k}"] = c
        # written after every draw, so a search stopped later keeps what the earlier draws found
        a.out.write_text("".join(json.dumps(q, separators=(",", ":")) + "\n" for q in pairs))
        if a.kept_out is not None:
            a.kept_out.write_text("".join(json.dumps(q, separators=(",", ":")) + "\n" for q in kept))
    counts["wall_s"] = round(time.time() - t, 1)
    print(json.dumps(counts), file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

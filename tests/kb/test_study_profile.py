"""The study's question world (generate --profile study): its families, grids and budgets, no recipe
dropped for cost, and each pool's second dataset a variant of the first's data; the two-core profile
still plans exactly the shipped set."""

from __future__ import annotations

import json
from pathlib import Path

from archcurator.core.aiq import generate as G
from archcurator.core.aiq.datasets import dataset_features
from archcurator.core.aiq.measure import measured_features

ROOT = Path(__file__).resolve().parents[2]


def test_the_cpu_profile_still_plans_the_shipped_questions():
    cands = G.build_candidates(G.plan(0, 3), "cpu")
    planned = {c["candidate_id"] for c in cands.values()}
    shipped = [json.loads(line) for line in (ROOT / "assets/aiq/questions.jsonl").read_text().splitlines()]
    generated = [q for q in shipped if str(q.get("source", "")).startswith("archcurator generator")]
    assert generated and {ch["candidate_id"] for q in generated for ch in q["choices"]} <= planned
    assert len(cands) == json.loads((ROOT / "assets/aiq/manifest.json").read_text())["executions"]


def test_the_study_profile_draws_the_study_world():
    pools = G.plan(0, 3, profile=G.STUDY_PROFILE)
    assert {p["family"] for p in pools} == set(G.STUDY_PROFILE.families)
    assert all(p["over_cpu_budget"] == 0 for p in pools)
    recipes = [r for p in pools for r in p["recipes"]]
    widths = {r["model"]["width"] for r in recipes if r["model"]["type"] == "mlp"}
    budgets = {r["total_samples_seen"] for r in recipes}
    assert 256 in widths and max(budgets) == 40960 and 8192 in budgets
    assert max(G.parameter_count(r["model"]) for r in recipes) > 200_000


def test_each_study_pool_holds_two_datasets_whose_data_differs():
    for pool in G.plan(0, 2, profile=G.STUDY_PROFILE):
        a, b = pool["datasets"]
        assert a["dataset_id"] != b["dataset_id"]
        fa, fb = dataset_features(a) | measured_features(a), dataset_features(b) | measured_features(b)
        moved = {k for k in fa if k in fb and fa[k] != fb[k]}
        # a variant of the same instance (not a sibling drawn anew): the family, shape and instance
        # kept, and what the data measures moved
        assert a["family"] == b["family"] and a["params"].get("input_dim") == b["params"].get("input_dim")
        assert a["params"]["instance_seed"] == b["params"]["instance_seed"]
        assert moved, (pool["pool_id"], fa, fb)

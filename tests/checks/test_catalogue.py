"""The published catalogue (assets/checks.json) is what the code says, and every block rule
is backed by grounding cases that really fail in torch."""

from __future__ import annotations

import json

import pytest

from archcurator.core.assets import asset_path
from archcurator.core.checks import CATALOGUE, catalogue_document

CASES_RUN_PER_RULE = 1


def test_shipped_catalogue_equals_the_code(grounding):
    shipped = json.loads(asset_path("checks.json").read_text(encoding="utf-8"))
    stale = "assets/checks.json is stale: run python -m archcurator.core.checks"
    assert shipped == catalogue_document(grounding), stale


def test_catalogue_shape():
    doc = catalogue_document()
    assert doc["count"] == len(CATALOGUE) >= 60
    for c in doc["checks"]:
        assert c["severity"] in ("block", "warn")
        for key in ("id", "category", "title", "condition", "why", "fix"):
            assert c[key], f"{c['id']}: empty {key}"


def test_every_block_rule_names_grounding_cases(grounding):
    block = sorted(cid for cid, spec in CATALOGUE.items() if spec.severity == "block")
    lacking = [cid for cid in block if not grounding.get(cid)]
    assert not lacking, f"block rules without a grounding case: {lacking}"
    assert not set(grounding) - set(block), "grounding names rules that are not block rules"


@pytest.mark.slow
def test_grounding_cases_fail_in_torch(grounding, corruption_cases):
    """The first (smallest) grounding case of every block rule, run for real in the ground child."""
    from archcurator.core.ground import observe_all

    by_id = {c["case"]: c for c in corruption_cases}
    chosen = {}
    for rule, ids in sorted(grounding.items()):
        for cid in ids[:CASES_RUN_PER_RULE]:
            chosen[cid] = rule
    obs = observe_all([by_id[cid] for cid in chosen], timeout=30)
    ran = [f"{rule}: {cid} ran without failing" for cid, rule in chosen.items() if obs[cid]["status"] == "ok"]
    assert not ran, "\n".join(ran)

"""The verifier's answers stay what they were recorded as (tests/verify_golden.py): the speed work of the
verifier must not change one verdict, finding, message, cost figure or inferred type. Every design is
verified from its JSON text, with the repeat cache on and off."""

from __future__ import annotations

import json
import warnings

import pytest
from verify_golden import GOLDEN, answer, designs

from archcurator.core import shapes


@pytest.fixture(scope="module")
def recorded():
    return json.loads(GOLDEN.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def current():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the generator builds its designs in torch, which warns of many
        return designs()


@pytest.mark.slow
@pytest.mark.parametrize("cache", [True, False], ids=["repeat-cache", "no-cache"])
def test_every_answer_is_the_recorded_one(recorded, current, cache):
    assert set(current) == set(recorded)
    shapes.REPEAT_CACHE = cache
    try:
        changed = []
        for name, design in current.items():
            got, want = answer(design), recorded[name]
            if got != want:
                part = next(k for k in ("verdict", "findings", "digest") if got[k] != want[k])
                changed.append((name, part, got[part] if part != "findings" else
                                [f for f in got[part] if f not in want[part]][:2] or got[part][:2]))
    finally:
        shapes.REPEAT_CACHE = True
    assert not changed, f"{len(changed)} design(s) answered differently; first: {changed[:3]}"


def test_the_record_covers_every_kind_of_answer(recorded):
    verdicts = {a["verdict"] for a in recorded.values()}
    assert verdicts == {"pass", "warn", "block"}
    assert sum(1 for name in recorded if name.startswith("zoo/")) >= 60
    assert sum(1 for name in recorded if name.startswith("ground/")) >= 400
    rules = {f["rule"] for a in recorded.values() for f in a["findings"]}
    assert len(rules) >= 60, "the record should hold findings of most rules"

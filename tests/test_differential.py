"""Differential testing against torch, a fixed-seed sample: random designs drawn from the op table
(core.ground.generate, which knows nothing of the checks) run eagerly in torch and verified here.
bench/differential.py runs 10,000 of them."""

from __future__ import annotations

from archcurator.core import dims as D
from archcurator.core.ground.differential import run_differential, summarize_differential
from archcurator.core.ground.generate import generate

SEEDS = (7000, 150)  # first seed, count: a sample no fix was made against


def test_the_generator_is_deterministic_and_draws_from_the_whole_table():
    a, b = generate(11), generate(11)
    assert a == b
    ops = {n["op"] for s in range(60) for n in generate(s)["nodes"]}
    assert len(ops) > 60
    modes = {(generate(s).get("train") or {}).get("mode", "train") for s in range(60)}
    assert modes == {"train", "eval"}


def test_block_iff_torch_fails_on_a_fixed_sample():
    results = run_differential(*SEEDS, timeout=20)
    s = summarize_differential(results)
    assert s["judged"] >= SEEDS[1] - 2
    assert 0.2 < s["ran"] / s["judged"] < 0.8, "the sample should hold designs that run and designs that fail"
    detail = {r.case: (r.verdict, r.blocking[:2], r.status, r.exception, r.message[:100])
              for r in results if r.case in s["false_blocks"] + s["crashes_without_block"]}
    assert not s["false_blocks"], detail
    assert s["agreement_counting_conditions"] >= 0.97, detail


def test_conditions_on_symbols():
    c = D.condition("eq", "T", 768)
    assert isinstance(c, D.Condition) and c.text() == "T = 768"
    assert D.holds(c, {"T": 768}) is True and D.holds(c, {"T": 128}) is False and D.holds(c, {}) is None
    assert D.satisfiable(c)
    assert not D.satisfiable(D.condition("eq", "8*T", 99))
    assert not D.satisfiable(D.condition("eq", "16*B", "32*B"))
    assert D.satisfiable(D.condition("eq", "B", "T"))
    assert D.condition("eq", 3, 3) is True and D.condition("eq", 3, 4) is False and D.condition("eq", None, 3) is None
    assert D.satisfiable(D.condition("le", "T", 64)) and D.condition("le", "T", 64).text() == "T <= 64"
    assert D.condition("broadcast", "T", 5).text() == "T = 5 (or T = 1)"
    assert D.holds(D.condition("multiple", "T", 4), {"T": 12}) is True
    assert D.symbols_of("((T+3)//2)") == ["T"]

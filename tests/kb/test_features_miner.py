"""Targets read back from their text, features every question has (bundles included), and a miner
that keeps what holds across families."""

from __future__ import annotations

import math

import pytest

from archcurator.core.aiq import bundle as bundle_mod
from archcurator.core.aiq import expressions as ex
from archcurator.core.kb.features import FEATURES, view
from archcurator.core.kb.miner import GENERATOR_FEATURES, _heldout, mine

STUDY_STYLE = [
    # the study's own notation: 2*pi inside sin / cos, tanh(2*u), a negative constant after an operator
    ("cos(6.283185307179586*(0.8333 + x)) + (x - x + x / -2)", 1, 1.0, 1),
    ("tanh(2*x0) + tanh(2*(x1 / 0.5)) + cos(6.283185307179586*x2) * -0.8333 + (x3 + 0.1667)", 4, 1.0, 1),
    ("sin(6.283185307179586*(x / 0.5))", 1, 2.0, 1),
    ("(x)**3 - abs(x)", 1, 0.0, 3),
    ("cos(6.283185307179586*(x)**2)", 1, 2.0, 1),
]


@pytest.mark.parametrize("text,dims,freq,degree", STUDY_STYLE)
def test_target_features_read_back_from_the_expression(text, dims, freq, degree):
    f = ex.target_features(text, dims)
    assert f["target_freq"] == pytest.approx(freq, abs=0.01) and f["target_degree"] == degree


@pytest.mark.parametrize("text", ["__import__('os').system('true')", "x.__class__", "open('f')", "x; y",
                                  "(" * 500 + "x" + ")" * 500, "x" * 5000, "lambda: 1", "exp(x)", ""])
def test_unreadable_expressions_give_no_features_and_never_run(text):
    assert ex.target_features(text) == {}
    with pytest.raises(ex.ExpressionError):
        ex.parse(text)


def test_sampled_targets_round_trip_and_both_evaluators_agree():
    import torch

    for dims in (1, 3):
        for seed in range(6):
            node, _ = ex.sample_target(seed, dims)
            text = ex.render(node, univariate=dims == 1)
            back = ex.parse(text)
            assert ex.render(back, univariate=dims == 1) == text
            x = torch.rand(20, dims, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
            t = ex.evaluate(back, x)
            for i in range(20):
                assert t[i].item() == pytest.approx(ex._scalar(back, x[i].tolist()), rel=1e-9, abs=1e-9)
            assert ex.acceptable(node, dims)


def test_features_are_the_same_for_our_question_and_its_bundle(tmp_path, shipped):
    for family in ("univariate_regression", "multivariate_regression", "bigram_lm"):
        q = next(q for q in shipped if q["family"] == family)
        b = bundle_mod.read_bundle(bundle_mod.write_bundle([q], tmp_path / family))
        assert not b.rejected
        ours, theirs = view(q), view(b.questions[0])
        assert ours.cands == theirs.cands
        row = ours.cands[0]
        if family.endswith("regression"):
            assert {"input_dim", "target_freq", "target_degree"} <= set(row)
            if family == "univariate_regression":
                assert row["input_dim"] == 1
        for feat in ("params", "lr", "optimizer", "depth", "width", "batch_size", "steps", "budget"):
            assert row[feat] is not None, feat
        assert set(row) <= set(FEATURES)


def test_relative_features_single_out_one_candidate_or_none(shipped):
    for q in shipped[:60]:
        v = view(q)
        for feat, rel in (("params", "most_params"), ("params", "fewest_params"), ("lr", "highest_lr"),
                          ("lr", "lowest_lr")):
            vals = [r[feat] for r in v.cands]
            flags = [r[rel] for r in v.cands]
            if len(set(vals)) == 1:
                assert not any(flags)
            else:
                best = (max if rel in ("most_params", "highest_lr") else min)(vals)
                assert flags == [x == best for x in vals]


def test_heldout_counts_only_families_the_proposal_was_selected_without():
    # a rule that holds in a and b but not c: selected without a (b carries it), without b, not without c? yes
    fam = {"a": [10, 1], "b": [9, 2], "c": [1, 9]}
    hs, hc, folds = _heldout(fam, min_support=5, min_precision=0.6)
    # without a: b+c = 10/21 < 0.6 -> not selected; without b: a+c = 11/21 -> no; without c: 19/22 -> yes
    assert (hs, hc, folds) == (1, 9, 1)


@pytest.mark.slow
def test_the_miner_keeps_what_holds_in_two_families_and_says_when_not(shipped):
    train = [view(q) for q in shipped if q["split"] == "train"]
    found = mine(train)
    assert found
    for m in found:
        h = m.heldout()
        assert {"support", "contradict", "folds", "families_held"} <= set(h)
        fam_scope = [c for c in m.structure.scope if c.feature == "family"]
        if m.family_specific:
            assert fam_scope and str(fam_scope[0].value) == m.family_specific
        else:
            assert len(m.families_held) >= 2, (m.structure.key, m.by_family)
        assert m.support >= 5 and m.support / m.n >= 0.6
        gen = sum(1 for c in m.structure.scope if c.feature in GENERATOR_FEATURES)
        assert m.penalty == pytest.approx(0.1 * gen)
    # ranked by the held-out score, best first
    scores = [m.score for m in found]
    assert scores == sorted(scores, reverse=True)
    assert all(not math.isnan(s) for s in scores)


def test_rule_weights_come_from_the_training_questions(shipped):
    from archcurator.core.kb.props import Structure
    from archcurator.core.kb.replay import Rule, fit_weights, solve, solve_in_order

    views = [view(q) for q in shipped]
    winner_first = Structure.from_obj([], "higher params wins")
    right = [v for v in views if solve(v, [Rule(1, winner_first, 1.0)]).index == v.winner]
    wrong = [v for v in views if v not in right and
             solve(v, [Rule(1, winner_first, 1.0)]).by == "kb"]
    assert len(right) > 20 and len(wrong) > 20
    # on questions where it is always right the rule gets a large weight, always wrong a negative one
    w_right, = fit_weights([winner_first], right[:40])
    w_wrong, = fit_weights([winner_first], wrong[:40])
    assert w_right > 1.0 and w_wrong < -1.0
    # a structure no training question tests has no fitted weight
    never = Structure.from_obj(["family == no_such_family"], "higher lr wins")
    assert fit_weights([never, winner_first], views[:50])[0] is None
    # the decision list drops what each rule disfavours, in order
    v = right[0]
    assert solve_in_order(v, [Rule(1, winner_first)]).index == v.winner


def test_the_automatic_pack_keeps_what_carries_to_held_out_families(shipped):
    from archcurator.core.kb.props import Structure
    from archcurator.core.kb.replay import select_rules

    views = [view(q) for q in shipped]
    useful = Structure.from_obj([], "higher params wins")
    noise = Structure.from_obj(["family == no_such_family"], "higher lr wins")  # applies nowhere
    picked = select_rules([noise, useful], views)
    assert picked == [1]  # the rule that applies nowhere adds no correct answer, so it is left out
    assert select_rules([], views) == [] and select_rules([useful], []) == []

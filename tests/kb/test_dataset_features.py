"""Dataset features measured on the data: two instances of a family read differently, each feature
moves the way its data does, and the solver's vocabulary carries them."""

from __future__ import annotations

import itertools

from archcurator.core.aiq import datasets as ds_mod
from archcurator.core.aiq.datasets import dataset_features, sample_dataset_spec
from archcurator.core.kb.features import FEATURES, view
from archcurator.core.kb.miner import SCOPE_NUM, scope_vocabulary

MEASURED = {
    "bigram_lm": ("transition_entropy", "transition_sparsity", "tokens_per_transition"),
    "univariate_regression": ("target_std", "target_offset"),
    "multivariate_regression": ("target_std", "target_offset"),
    "xor_classification": ("margin", "neighbour_agreement"),
    "spiral_classification": ("margin", "neighbour_agreement"),
}


def test_two_instances_of_each_family_differ_in_what_is_measured(shipped):
    by_family: dict[str, dict[str, dict]] = {}
    for q in shipped:
        by_family.setdefault(q["family"], {})[q["dataset_id"]] = q["dataset"]
    assert set(by_family) == set(MEASURED)
    for fam, specs in by_family.items():
        feats = {i: dataset_features(s) for i, s in specs.items()}
        for f in feats.values():
            assert all(k in f for k in MEASURED[fam]), fam
        for a, b in itertools.combinations(feats, 2):
            # every two of a family's datasets differ in a measured feature (the bigram
            # datasets were identical in every feature the solver could see)
            assert any(feats[a][k] != feats[b][k] for k in MEASURED[fam]), (fam, a, b)


def test_the_bigram_features_follow_the_table_and_the_data():
    flat = sample_dataset_spec("bigram_lm", 3, alpha=0.5)
    sharp = sample_dataset_spec("bigram_lm", 3, alpha=3.0)
    small = sample_dataset_spec("bigram_lm", 3, alpha=0.5, train_size=40)
    f, s, sm = dataset_features(flat), dataset_features(sharp), dataset_features(small)
    assert s["transition_entropy"] < f["transition_entropy"] < 3.4658   # log 32: a uniform table
    assert sm["transition_entropy"] == f["transition_entropy"]          # the same table, less data
    assert sm["transition_sparsity"] > f["transition_sparsity"]
    assert sm["tokens_per_transition"] < f["tokens_per_transition"]


def test_the_classification_features_follow_noise_and_winding():
    clean = dataset_features(sample_dataset_spec("xor_classification", 5, label_noise=0.0, train_size=512))
    noisy = dataset_features(sample_dataset_spec("xor_classification", 5, label_noise=0.3, train_size=512))
    assert noisy["noise_std"] == 0.3 and clean["noise_std"] == 0.0
    assert noisy["neighbour_agreement"] < clean["neighbour_agreement"]
    assert noisy["margin"] < clean["margin"]
    loose = dataset_features(sample_dataset_spec("spiral_classification", 5, label_noise=0.0, turns=0.75,
                                                 train_size=512, noise_std=0.02))
    tight = dataset_features(sample_dataset_spec("spiral_classification", 5, label_noise=0.0, turns=1.5,
                                                 train_size=512, noise_std=0.02))
    assert tight["margin"] < loose["margin"]


def test_regression_noise_is_stated_measured_and_only_on_the_training_targets():
    clean = sample_dataset_spec("univariate_regression", 4)
    noisy = sample_dataset_spec("univariate_regression", 4, noise_std=0.5)
    assert clean["params"]["noise"] == {"enabled": False}
    fc, fn = dataset_features(clean), dataset_features(noisy)
    assert fc["noise_std"] == 0.0 and fn["noise_std"] == 0.5
    assert fn["target_std"] > fc["target_std"]
    tc, tn = ds_mod.materialize(clean), ds_mod.materialize(noisy)
    assert bool((tc[0] == tn[0]).all()) and bool((tc[3] == tn[3]).all())   # same points, clean test targets
    assert not bool((tc[1] == tn[1]).all())


def test_the_solver_vocabulary_carries_the_measured_features(shipped):
    for names in MEASURED.values():
        for name in names:
            assert name in FEATURES
    for name in ("epochs", "margin", "neighbour_agreement", "target_std", "transition_entropy",
                 "transition_sparsity"):
        assert name in SCOPE_NUM
    views = [view(q) for q in shipped]
    scoped = {c.feature for c in scope_vocabulary(views)}
    assert {"epochs", "margin", "transition_entropy", "target_std"} <= scoped
    q = next(v for v in views if v.family == "xor_classification")
    # a candidate's passes over the data: its budget against this dataset's training set
    assert all(r["epochs"] == round(r["budget"] / r["train_size"], 3) for r in q.cands)


def test_swapping_the_dataset_changes_the_pick_of_a_pack_scoped_by_the_data(shipped):
    """The issue's measurement: a question's dataset swapped for other instances of its family
    changed the pack's pick in 0 of 600 swaps, whatever the pack held. A pack holding the miner's
    best data-scoped proposals (mined on the training split) now answers some swapped questions
    differently: the dataset's features reach the solver."""
    from archcurator.core.kb.miner import mine
    from archcurator.core.kb.replay import Rule, fit_weights
    from archcurator.core.kb.swap import measure

    data_level = {f for f, (level, _, _) in FEATURES.items() if level == "question"} - {
        "family", "task", "category", "input_dim", "vocab_size", "context_length", "rule_family"}
    train = [view(q) for q in shipped if q["split"] == "train"]
    scoped = [m.structure for m in mine(train, max_props=200)
              if any(c.feature in data_level | {"epochs"} for c in m.structure.scope) and not m.family_specific][:3]
    assert scoped
    weights = fit_weights(scoped, train)
    rules = [Rule(i, st, 0.5 if w is None else w) for i, (st, w) in enumerate(zip(scoped, weights))]
    classification = [q for q in shipped if q["family"].endswith("_classification")]
    r = measure(classification, rules, others=10)
    assert r["swaps"] == 10 * len(classification)
    assert r["changed"] > 0

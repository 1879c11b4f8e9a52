"""The flip search: variants keep a dataset's family and shape and move its data-level features; a
partner question is the same recipes and letters on the variant, judged by the study's rule."""

from __future__ import annotations

from archcurator.core.aiq import flips
from archcurator.core.aiq.datasets import dataset_features
from archcurator.core.aiq.spec import recipe_id, validate_question


def test_variants_keep_the_shape_and_move_the_features(shipped):
    seen = set()
    for q in shipped:
        if q["family"] in seen:
            continue
        seen.add(q["family"])
        ds = q["dataset"]
        for k in (0, 1):
            [v] = flips.variants(ds, k)
            assert v["family"] == ds["family"] and v["dataset_id"] != ds["dataset_id"]
            fa, fb = dataset_features(ds), dataset_features(v)
            assert fa.get("input_dim") == fb.get("input_dim")
            moved = {f for f in set(fa) | set(fb) if fa.get(f) != fb.get(f)}
            assert moved, (q["family"], k)   # something the solver can see differs


def _res(finals):
    return {"finals": finals, "mean": sum(finals) / len(finals), "std": 0.01, "failed_seeds": 0, "metric": "m"}


def test_a_partner_is_the_same_recipes_on_the_variant_and_the_rule_judges_it(shipped):
    q = next(q for q in shipped if q["family"] == "univariate_regression")
    [v] = flips.variants(q["dataset"])
    rids = [ch["recipe_id"] for ch in q["choices"]]
    win = next(ch["recipe_id"] for ch in q["choices"] if ch["letter"] == q["correct_letter"])
    other = next(r for r in rids if r != win)
    results = {r: _res([0.2 if r == other else 0.9] * 10) for r in rids}
    new, sig = flips.partner(q, v, results)
    validate_question(new)
    assert sig["passed"] and new["dataset_id"] == v["dataset_id"]
    assert [ch["letter"] for ch in new["choices"]] == [ch["letter"] for ch in q["choices"]]
    assert [recipe_id(ch["candidate"]) for ch in new["choices"]] == rids
    assert next(ch["recipe_id"] for ch in new["choices"] if ch["letter"] == new["correct_letter"]) == other
    # a gap under the study's 0.05 is not kept
    close = {r: _res([0.5 if r == other else 0.52] * 10) for r in rids}
    assert not flips.partner(q, v, close)[1]["passed"]
    assert flips.partner(q, v, {rids[0]: results[rids[0]]}) is None   # a recipe not executed


def test_the_shipped_flipping_pairs_are_real_executed_flips():
    """assets/aiq/flips.jsonl: both questions of every pair kept by the study's rule, the same recipes
    and letters, other data, and the winner recipe reversed, every result with its 10 seeds."""
    import json
    from pathlib import Path

    from archcurator.core.aiq.execute import significance

    path = Path(__file__).resolve().parents[2] / "assets" / "aiq" / "flips.jsonl"
    qs = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    pairs: dict[str, list[dict]] = {}
    for q in qs:
        validate_question(q)
        pairs.setdefault(q["pair"]["pair_id"], []).append(q)
    assert pairs and all(len(v) == 2 for v in pairs.values())
    for a, b in pairs.values():
        assert a["dataset_id"] != b["dataset_id"] and a["family"] == b["family"]
        assert [ch["recipe_id"] for ch in a["choices"]] == [ch["recipe_id"] for ch in b["choices"]]
        winners = []
        for q in (a, b):
            res = [ch["result"] for ch in q["choices"]]
            assert all(len(r["finals"]) == 10 for r in res)
            sig = significance(res)
            assert sig["passed"] and q["choices"][sig["winner_index"]]["letter"] == q["correct_letter"]
            winners.append(q["choices"][sig["winner_index"]]["recipe_id"])
        assert winners[0] != winners[1]

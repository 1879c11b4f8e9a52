"""What a blind new user found in the curator app after issue 29 (each test failed before its fix).

A note typed on one design's finding stayed in the field on `]` when the next design's first finding had
the same rule and node, and went with the verdict there; the missed-defect dialog saved on an enter on the
empty description, so the description typed next ran as judging keys on the design screen."""

from __future__ import annotations

import pytest
from apphelp import current_verdicts, make_app, open_design, settle
from storefix import _dead, _tiny

SHARED_KEY = "connectivity.dead-node@aux_head"


def _store_with_one_finding_key_twice(tmp_path):
    from archcurator.store.importers import import_records

    common = {"author": "agent", "model": "model-a", "task_set": "plain-sentence", "run": "2026-11-02a"}
    graph = _dead(_tiny(), "aux_head")
    path = tmp_path / "store.duckdb"
    res = import_records(path, [{"id": "x-001", **common, "graph": graph}, {"id": "x-002", **common, "graph": graph}],
                         label="blind-29")
    assert not res.rejected, res.rejected
    return path


@pytest.mark.slow
async def test_a_note_typed_on_one_design_never_goes_with_a_verdict_on_the_next(tmp_path):
    path = _store_with_one_finding_key_twice(tmp_path)
    app = make_app(path)
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await settle(pilot)
        await open_design(pilot, "x-001")
        await pilot.press("n", *"NOTE-FOR-A", "escape", "right_square_bracket")
        await settle(pilot)
        screen = app.screen
        assert screen.view.id == "x-002"
        assert screen.judge_bar.note_field.value == "", "the first design's note followed to the next design"
        await pilot.press("f")
        await settle(pilot)
    verdicts = current_verdicts(path)
    assert verdicts[("x-002", SHARED_KEY)] == ("false_alarm", None)
    assert ("x-001", SHARED_KEY) not in verdicts


@pytest.mark.slow
async def test_enter_on_the_empty_description_asks_before_the_missed_defect_is_saved(store_path):
    from archcurator.store.missed import list_missed_defects

    app = make_app(store_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await open_design(pilot, "d-001")
        await pilot.press("m")
        await settle(pilot)
        await pilot.press(*"features.0", "enter", "enter", *"shape.rank", "enter", "enter")
        await settle(pilot)
        assert list_missed_defects(store_path, "d-001") == [], "saved before the description was asked for"
        await pilot.press(*"rank wrong", "enter")
        await settle(pilot)
        saved = list_missed_defects(store_path, "d-001")
        assert [(m["node_list"], m["rule"], m["description"]) for m in saved] == [
            (["features.0"], "shape.rank", "rank wrong")]
    assert current_verdicts(store_path) == {}, "the description ran as judging keys"

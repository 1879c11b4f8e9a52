"""`P` on the design screen: the repair's diff and cost quote; `s` stores it as a new version (Pilot, real store)."""

from __future__ import annotations

import pytest
from apphelp import current_verdicts, make_app, open_design, settle, wait_until


def _row(path, design_id):
    from archcurator.store.connection import connect

    with connect(path) as con:
        return con.execute("SELECT parent, verdict, author, model, task_set, run FROM designs WHERE id = ?",
                           [design_id]).fetchone()


@pytest.mark.slow
async def test_propose_repair_shows_the_diff_and_s_stores_it_as_a_new_version(store_path):
    from archcurator.tui.screens.repair import RepairScreen

    app = make_app(store_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await open_design(pilot, "d-001")  # fc.in_features 32 where the flattened size is 16
        await pilot.press("r")  # a judgment on the original, which the repair must not touch
        await settle(pilot)
        judged = current_verdicts(store_path)
        assert judged
        if app.screen.view.id != "d-001":
            await pilot.press("escape")
            await settle(pilot)
            await open_design(pilot, "d-001")
        await pilot.press("P")
        assert await wait_until(pilot, lambda: isinstance(app.screen, RepairScreen) and app.screen.diff is not None)
        screen = app.screen
        d = screen.diff
        assert [c.b_id for c in d.changed] == ["fc"]
        assert [(a.name, a.old, a.new) for a in d.changed[0].args] == [("in_features", 32, 16)]
        assert screen.repair.verdict != "block"
        text = str(screen.query_one("#diff-details").render())
        assert "cost before" in text and "cost after" in text and "in_features 32 -> 16" in text
        await pilot.press("s")
        assert await wait_until(pilot, lambda: screen.kept is not None)
        assert screen.kept == "d-001.repair"
        parent, verdict, *provenance = _row(store_path, "d-001.repair")
        assert parent == "d-001" and verdict != "block"
        assert provenance == list(_row(store_path, "d-001")[2:])
        await pilot.press("s")  # once kept, a second s stores nothing more
        await settle(pilot)
        assert _row(store_path, "d-001.repair-2") is None
        assert current_verdicts(store_path) == judged  # the curator's judgment on the original stays
        assert _row(store_path, "d-001")[1] == "block"


async def test_propose_repair_on_a_design_that_does_not_block_says_so(store_path):
    from archcurator.tui.screens.design import DesignScreen

    app = make_app(store_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await open_design(pilot, "d-003")
        await pilot.press("P")
        await settle(pilot)
        assert isinstance(app.screen, DesignScreen)

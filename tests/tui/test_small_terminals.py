"""Dialogs on small terminals: what a curator needs to act on is on screen without scrolling the page away
(a blind pass found the missed-defect dialog's buttons below the fold at 100x30, and the key help cut off at
80 columns)."""

from __future__ import annotations

import pytest
from apphelp import make_app, open_design, settle


def _inside(region, size) -> bool:
    width, height = size
    return region.x >= 0 and region.y >= 0 and region.right <= width and region.bottom <= height


@pytest.mark.parametrize("size", [(100, 30), (80, 24)])
async def test_the_missed_defect_dialog_keeps_its_buttons_on_screen(store_path, size):
    app = make_app(store_path, prefetch=False)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await open_design(pilot, "d-003")
        await pilot.press("m")
        await settle(pilot)
        assert type(app.screen).__name__ == "MissedDefectScreen"
        for button in ("#missed-save", "#missed-cancel"):
            region = app.screen.query_one(button).region
            assert region.height and _inside(region, size), (button, region)
        # the fields are reached by scrolling the form, never by losing the buttons
        assert _inside(app.screen.query_one("#missed-node-filter").region, size)


@pytest.mark.parametrize("size", [(80, 24), (60, 20)])
async def test_the_key_help_fits_the_terminal_width(store_path, size):
    app = make_app(store_path, prefetch=False)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        await settle(pilot)
        assert type(app.screen).__name__ == "HelpScreen"
        assert _inside(app.screen.query_one("#help-box").region, size)


@pytest.mark.parametrize("size", [(80, 24), (60, 20), (50, 12)])
async def test_the_jump_prompt_is_on_screen(store_path, size):
    app = make_app(store_path, prefetch=False)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("colon")
        await settle(pilot)
        assert type(app.screen).__name__ == "PromptScreen"
        field = app.screen.query_one("#prompt").region
        assert field.height >= 3 and _inside(field, size), field
        await pilot.press("3", "enter")
        await settle(pilot)
        assert type(app.screen).__name__ == "QueueScreen"

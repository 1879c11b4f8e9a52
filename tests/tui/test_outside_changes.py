"""An open app sees what the command line did to its store (issue 15, new-user attack): designs
archived or restored with `archcurator archive`, or imported, leave or enter the queue without a key."""

from __future__ import annotations

import pytest
from apphelp import make_app, settle, wait_until


def _cli(*argv) -> int:
    from archcurator.tui.cli import main

    return main(list(argv))


@pytest.mark.slow
async def test_archive_and_restore_from_the_command_line_reach_the_open_queue(store_path):
    app = make_app(store_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        model = app.main_queue
        before = list(model.ids)
        assert "d-002" in before
        # the curator judges meanwhile: the app's own writes re-read nothing
        await pilot.press("enter", "r")
        await settle(pilot)
        assert _cli("archive", "d-002", "--db", str(store_path)) == 0
        assert await wait_until(pilot, lambda: "d-002" not in model.ids), "the queue still lists an archived design"
        assert len(model.ids) == len(before) - 1
        assert any("outside" in n.message for n in app._notifications)
        await pilot.press("escape")
        await settle(pilot)
        assert _cli("archive", "d-002", "--restore", "--db", str(store_path)) == 0
        assert await wait_until(pilot, lambda: "d-002" in model.ids), "the queue does not list a restored design"
        assert list(model.ids) == before
        assert app.is_running and app._exception is None


async def test_the_app_regaining_focus_reads_the_store_again(store_path):
    """A terminal that reports focus: coming back to the app checks the store at once."""
    from textual import events

    from archcurator.store.designs import archive_designs

    app = make_app(store_path)
    app.store_watch_s = 3600.0  # no polling here: only the focus event can find the change
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        archive_designs(store_path, ["d-003"], "bob")
        await settle(pilot)
        assert "d-003" in app.main_queue.ids
        app.post_message(events.AppFocus())
        assert await wait_until(pilot, lambda: "d-003" not in app.main_queue.ids, 4.0)


@pytest.mark.slow
async def test_next_design_after_the_one_shown_is_archived_from_outside(store_path):
    """On a design when it (and the queue around it) changes from outside: `]` goes to the design that
    now follows, neither skipping one nor showing one twice."""
    from archcurator.store.designs import archive_designs

    app = make_app(store_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        ids = list(app.main_queue.ids)
        app.screen.jump_to(ids[1])
        await pilot.press("enter")
        await settle(pilot)
        assert app.screen.view.id == ids[1]
        archive_designs(store_path, [ids[0], ids[1]], "bob")  # the design shown and the one before it
        assert await wait_until(pilot, lambda: ids[0] not in app.main_queue.ids)
        await pilot.press("right_square_bracket")
        await settle(pilot)
        assert app.screen.view.id == ids[2]
        await pilot.press("left_square_bracket")
        await settle(pilot)
        assert app.screen.view.id == ids[2]  # now the start of the queue

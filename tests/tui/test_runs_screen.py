"""A run launched from the app: a CPU forward check of a blocked design, its failure stored by the app."""

from __future__ import annotations

import asyncio
import time

from apphelp import make_app, settle


async def _wait_for(pilot, predicate, timeout: float = 120.0) -> None:
    t0 = time.monotonic()
    while not predicate():
        if time.monotonic() - t0 > timeout:
            raise AssertionError("timed out")
        await pilot.pause(0.1)
        await asyncio.sleep(0.05)


async def test_forward_check_of_blocked_design_is_stored_with_its_exception(store_path, monkeypatch):
    monkeypatch.delenv("RAY_API_SERVER_ADDRESS", raising=False)
    from store.runs import list_runs
    from tui.screens.runs import RunsScreen

    app = make_app(store_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("enter")  # d-001: its Linear reads the wrong width
        await settle(pilot)
        assert app.screen.view.id == "d-001" and app.screen.view.data["verdict"] == "block"
        await pilot.press("e")
        await _wait_for(pilot, lambda: app.run_handles)
        handle = app.run_handles[0]
        assert handle.spec.device == "auto" and handle.spec.tags == {"design_id": "d-001"}
        await pilot.press("X")
        await settle(pilot)
        assert isinstance(app.screen, RunsScreen)
        await _wait_for(pilot, lambda: handle.run_id in app.stored_runs)
        await pilot.pause(0.5)
        rows = app.screen.query_one("#runs-table")
        assert rows.row_count == 1
        runs = list_runs(store_path, design_id="d-001")
        assert len(runs) == 1
        assert runs[0]["status"] == "failed" and runs[0]["exception"] == "RuntimeError"
        await pilot.press("escape")
        await settle(pilot)
        summary = str(app.screen.query_one("#design-summary").render())
        assert "confirmed crash (RuntimeError)" in summary

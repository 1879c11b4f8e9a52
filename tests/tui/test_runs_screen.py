"""A run launched from the app: a CPU forward check of a blocked design, its failure stored by the app."""

from __future__ import annotations

import asyncio
import time

import pytest
from apphelp import make_app, settle


async def _wait_for(pilot, predicate, timeout: float = 120.0) -> None:
    t0 = time.monotonic()
    while not predicate():
        if time.monotonic() - t0 > timeout:
            raise AssertionError("timed out")
        await pilot.pause(0.1)
        await asyncio.sleep(0.05)


@pytest.mark.slow
async def test_forward_check_of_blocked_design_is_stored_with_its_exception(store_path, monkeypatch):
    monkeypatch.delenv("RAY_API_SERVER_ADDRESS", raising=False)
    from archcurator.store.runs import list_runs
    from archcurator.tui.screens.runs import RunsScreen

    app = make_app(store_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("enter")  # d-001: its Linear reads the wrong width
        await settle(pilot)
        assert app.screen.view.id == "d-001" and app.screen.view.data["verdict"] == "block"
        await pilot.press("e")
        await _confirm_device(pilot, app)
        await _wait_for(pilot, lambda: app.run_handles)
        handle = app.run_handles[0]
        assert handle.spec.device == "cpu" and handle.spec.tags == {"design_id": "d-001", "device_choice": "cpu"}
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
        # the outcome stands next to the finding it confirms, naming the node that failed
        assert "RuntimeError at node fc on cpu — agrees with shape.flatten-linear-width" in summary


async def _confirm_device(pilot, app, device: str = "cpu") -> None:
    """The launch asks which device, naming the cost: pick `device`."""
    from archcurator.tui.screens.modals import ChoiceScreen

    await _wait_for(pilot, lambda: isinstance(app.screen, ChoiceScreen))
    screen = app.screen
    index = next(i for i, (value, _label) in enumerate(screen.choices) if value == device)
    assert "free (this machine)" in screen.choices[index][1].plain or device != "cpu"
    screen.query_one("#choices").highlighted = index
    await pilot.press("enter")
    await settle(pilot)


async def _open(pilot, app, design_id: str) -> None:
    await pilot.press(":")
    await settle(pilot)
    for ch in design_id:
        await pilot.press(ch)
    await pilot.press("enter")
    await settle(pilot)
    if getattr(getattr(app.screen, "view", None), "id", None) != design_id:
        await pilot.press("enter")
        await settle(pilot)
    assert app.screen.view.id == design_id


async def _start_training(pilot, app, design_id: str, steps: int):
    from archcurator.tui.screens.runs import RunsScreen

    app.TRAIN_STEPS = steps
    await _open(pilot, app, design_id)
    before = len(app.run_handles)
    await pilot.press("E")
    await _confirm_device(pilot, app)
    await _wait_for(pilot, lambda: len(app.run_handles) > before)
    handle = app.run_handles[-1]
    await pilot.press("X")
    await settle(pilot)
    assert isinstance(app.screen, RunsScreen)
    return handle


def _alive(pid: int) -> bool:
    import os

    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie is gone for our purposes
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.slow
async def test_short_training_of_a_clean_design_shows_a_falling_loss(store_path, monkeypatch):
    monkeypatch.delenv("RAY_API_SERVER_ADDRESS", raising=False)
    from archcurator.store.runs import list_runs

    app = make_app(store_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        handle = await _start_training(pilot, app, "d-003", 120)
        await _wait_for(pilot, lambda: handle.run_id in app.stored_runs)
        await pilot.pause(0.5)
        view = app.screen.views[handle.run_id]
        assert handle.result.status == "ok"
        assert len(view.loss) >= 100
        head, tail = sum(view.loss[:10]) / 10, sum(view.loss[-10:]) / 10
        assert tail < head * 0.8, (head, tail)
        plot = str(app.screen.query_one("#run-plot").render())
        assert f"{len(view.loss)} points" in plot
        runs = list_runs(store_path, design_id="d-003")
        assert runs[0]["status"] == "ok" and runs[0]["kind"] == "train"


@pytest.mark.slow
async def test_cancel_ends_the_child_within_two_seconds(store_path, monkeypatch):
    monkeypatch.delenv("RAY_API_SERVER_ADDRESS", raising=False)
    app = make_app(store_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        handle = await _start_training(pilot, app, "d-003", 10_000_000)
        await _wait_for(pilot, lambda: handle.status() == "running" and handle.pid is not None
                        and len(app.screen.views.get(handle.run_id).loss if handle.run_id in app.screen.views
                                else []) > 2)
        pid = handle.pid
        t0 = time.monotonic()
        await pilot.press("c")
        await _wait_for(pilot, lambda: handle.result is not None, timeout=10)
        ended = time.monotonic() - t0
        assert handle.result.status == "cancelled"
        assert ended <= 2.0, ended
        assert not _alive(pid)
        await _wait_for(pilot, lambda: handle.run_id in app.stored_runs)


@pytest.mark.slow
async def test_a_child_killed_from_outside_is_reported_killed(store_path, monkeypatch):
    import os
    import signal

    monkeypatch.delenv("RAY_API_SERVER_ADDRESS", raising=False)
    from archcurator.store.runs import list_runs

    app = make_app(store_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        handle = await _start_training(pilot, app, "d-003", 10_000_000)
        await _wait_for(pilot, lambda: handle.status() == "running" and handle.pid is not None)
        os.kill(handle.pid, signal.SIGKILL)
        await _wait_for(pilot, lambda: handle.run_id in app.stored_runs, timeout=20)
        assert handle.result.status == "killed"
        # the app still answers
        await pilot.press("escape")
        await settle(pilot)
        runs = list_runs(store_path, design_id="d-003")
        assert runs[0]["status"] == "killed"


def test_loss_plot_draws_every_point_whatever_their_number():
    """Before: only the first n*n/56 points were drawn when fewer than 56 (a blank chart below ~8)."""
    from archcurator.tui.screens.runs import loss_plot, resample

    for n in (1, 2, 5, 7, 30, 56, 57, 500):
        values = [float(n - i) for i in range(n)]
        cols = resample(values, 56)
        assert len(cols) == min(n, 56)
        assert cols[0] == values[0] and cols[-1] == values[-1]  # the whole curve, first to last
        if n <= 56:
            assert cols == values
        plot = loss_plot(values).plain
        bars = [line.split("┤" if "┤" in line else "│", 1)[1] for line in plot.splitlines()[:6]]
        assert all(len(b) == len(cols) for b in bars)
        assert any(ch != " " for ch in bars[-1]) if n > 1 else True


@pytest.mark.slow
async def test_runs_are_listed_after_a_restart_and_shown_on_their_design(store_path, monkeypatch):
    """Before: after a restart the runs screen said "No runs yet" with runs stored; a design never showed
    its runs; a second launch of the same run went without a word."""
    monkeypatch.delenv("RAY_API_SERVER_ADDRESS", raising=False)
    app = make_app(store_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("enter")  # d-001
        await settle(pilot)
        await pilot.press("e")
        await _confirm_device(pilot, app)
        await _wait_for(pilot, lambda: app.run_handles and app.run_handles[0].run_id in app.stored_runs)
        await settle(pilot)
        # a second launch names the first
        from archcurator.tui.screens.modals import ChoiceScreen

        await pilot.press("e")
        await _wait_for(pilot, lambda: isinstance(app.screen, ChoiceScreen))
        note = str(app.screen.query_one(".dialog-help").render())
        assert "already has 1 stored forward run" in note and "RuntimeError on cpu" in note
        await pilot.press("escape")
        await settle(pilot)
        await pilot.press("q")
        await _wait_for(pilot, lambda: not app.is_running, timeout=30)
    assert app.return_code == 0

    app2 = make_app(store_path)
    async with app2.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("X")
        await settle(pilot)
        await _wait_for(pilot, lambda: app2.screen.stored)
        table = app2.screen.query_one("#runs-table")
        assert table.row_count == 1
        assert "RuntimeError at node fc" in str(app2.screen.query_one("#run-detail").render())
        await pilot.press("enter")  # its design, the run next to the finding it confirms
        await settle(pilot)
        assert app2.screen.view.id == "d-001"
        summary = str(app2.screen.query_one("#design-summary").render())
        assert "RuntimeError at node fc on cpu — agrees with shape.flatten-linear-width" in summary
        finding = str(app2.screen.query_one("#findings").get_option_at_index(0).prompt)
        assert "run agrees" in finding


@pytest.mark.slow
async def test_quit_during_a_run_asks_and_stores_its_outcome(store_path, monkeypatch):
    """Before: quitting during a run killed it and stored nothing."""
    monkeypatch.delenv("RAY_API_SERVER_ADDRESS", raising=False)
    from archcurator.store.runs import list_runs
    from archcurator.tui.screens.modals import ChoiceScreen

    app = make_app(store_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        handle = await _start_training(pilot, app, "d-003", 10_000_000)
        await _wait_for(pilot, lambda: handle.status() == "running")
        await pilot.press("q")
        await _wait_for(pilot, lambda: isinstance(app.screen, ChoiceScreen))
        assert "1 run is still going" in str(app.screen.query_one(".dialog-title").render())
        dialog = app.screen
        await pilot.press("ctrl+q")  # asked again while the question is open: still one question
        await pilot.pause()
        assert app.screen is dialog and sum(isinstance(s, ChoiceScreen) for s in app.screen_stack) == 1
        dialog.query_one("#choices").highlighted = next(i for i, (v, _l) in enumerate(dialog.choices)
                                                        if v == "cancel")
        await pilot.press("enter")
        await _wait_for(pilot, lambda: not app.is_running, timeout=60)
    assert app.return_code == 0
    runs = list_runs(store_path, design_id="d-003")
    assert [(r["kind"], r["status"]) for r in runs] == [("train", "cancelled")]

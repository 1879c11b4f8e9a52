"""Snapshots of every screen (pytest-textual-snapshot). Made with the Textual version pinned in
pyproject's dev extras; cursor blink is off. Update with `pytest tests/tui --snapshot-update`
after checking the report it writes."""

from __future__ import annotations

from pathlib import Path

import pytest
from apphelp import make_app, settle
from storefix import make_store

SIZE = (120, 36)


@pytest.fixture
def app_here(tmp_path, monkeypatch):
    # a relative store path, so the screens show the same text on every machine
    monkeypatch.chdir(tmp_path)
    make_store(Path("store.duckdb"))
    return make_app(Path("store.duckdb"), prefetch=False)


def _steps(*actions):
    async def run_before(pilot) -> None:
        await settle(pilot)
        for a in actions:
            if callable(a):
                a(pilot.app)
            else:
                await pilot.press(*a) if isinstance(a, tuple) else await pilot.press(a)
            await settle(pilot)

    return run_before


def test_queue(snap_compare, app_here):
    assert snap_compare(app_here, terminal_size=SIZE, run_before=_steps())


def test_queue_filtered(snap_compare, app_here):
    assert snap_compare(app_here, terminal_size=SIZE, run_before=_steps("v", "s"))


def test_design(snap_compare, app_here):
    assert snap_compare(app_here, terminal_size=SIZE, run_before=_steps("enter"))


@pytest.mark.slow
def test_judging_with_note(snap_compare, app_here):
    assert snap_compare(app_here, terminal_size=SIZE,
                        run_before=_steps("enter", "r", "n", tuple("checked by hand")))


@pytest.mark.slow
def test_design_without_findings(snap_compare, app_here):
    assert snap_compare(app_here, terminal_size=SIZE,
                        run_before=_steps(lambda app: app.screen.jump_to("d-003"), "enter"))


@pytest.mark.slow
def test_design_cost_tab(snap_compare, app_here):
    def cost_tab(app):
        app.screen.query_one("#tabs").active = "tab-cost"

    assert snap_compare(app_here, terminal_size=SIZE,
                        run_before=_steps(lambda app: app.screen.jump_to("d-006"), "enter", cost_tab))


@pytest.mark.slow
def test_missed_defect_dialog(snap_compare, app_here):
    assert snap_compare(app_here, terminal_size=SIZE,
                        run_before=_steps(lambda app: app.screen.jump_to("d-003"), "enter", "m"))


@pytest.mark.slow
def test_diff(snap_compare, app_here):
    assert snap_compare(app_here, terminal_size=SIZE,
                        run_before=_steps(lambda app: app.screen.jump_to("d-005"), "enter", "d"))


@pytest.mark.slow
def test_diff_reference(snap_compare, app_here):
    assert snap_compare(app_here, terminal_size=SIZE,
                        run_before=_steps(lambda app: app.screen.jump_to("d-006"), "enter", "d"))


def test_reports_refusals(snap_compare, app_here):
    assert snap_compare(app_here, terminal_size=SIZE, run_before=_steps("R"))


@pytest.mark.slow
def test_reports_rules(snap_compare, app_here):
    def rules_tab(app):
        app.screen.query_one("#report-tabs").active = "tab-rules"

    assert snap_compare(app_here, terminal_size=SIZE, run_before=_steps("R", rules_tab))


def test_help(snap_compare, app_here):
    assert snap_compare(app_here, terminal_size=SIZE, run_before=_steps("question_mark"))


@pytest.fixture
def kb_app_here(tmp_path, monkeypatch):
    from storefix import make_kb

    monkeypatch.chdir(tmp_path)
    make_kb(make_store(Path("store.duckdb")))
    return make_app(Path("store.duckdb"), prefetch=False)


def test_knowledge_base(snap_compare, kb_app_here):
    assert snap_compare(kb_app_here, terminal_size=(140, 40), run_before=_steps("K"))


def test_runs_empty(snap_compare, app_here):
    assert snap_compare(app_here, terminal_size=SIZE, run_before=_steps("X"))


# ---- the layout at 80x24, and the screens and dialogs added for judging, runs and two curators -----------

SMALL = (80, 24)


def test_queue_80x24(snap_compare, app_here):
    assert snap_compare(app_here, terminal_size=SMALL, run_before=_steps())


def test_design_80x24(snap_compare, app_here):
    assert snap_compare(app_here, terminal_size=SMALL, run_before=_steps("enter"))


def _seed_runs_and_votes(app) -> None:
    """Stored runs of d-001 (one failed at fc, one ran) and two curators who disagree on its width finding."""
    from datetime import datetime

    from archcurator.store import judgments as J
    from archcurator.store.runs import record_run

    now = datetime(2026, 11, 20, 9, 30)  # a fixed time: the runs' times are drawn
    record_run(app.db_path, kind="forward", design_id="d-001", backend="local", device="cpu", status="failed",
               started_at=now, ended_at=now, seconds=1.25, exception="RuntimeError",
               message="mat1 and mat2 shapes cannot be multiplied (2x64 and 32x10)", metrics={"failed_node": "fc"})
    record_run(app.db_path, kind="train", design_id="d-003", backend="local", device="cpu", status="ok",
               started_at=now, ended_at=now, seconds=3.5,
               metrics={"loss_first": 2.3, "loss_last": 0.9, "loss_curve": [2.3, 1.9, 1.6, 1.3, 1.1, 0.9]})
    J.record_judgment(app.db_path, "d-001", "shape.flatten-linear-width@fc", "ada", "real", "the head is 64 wide")
    J.record_judgment(app.db_path, "d-001", "shape.flatten-linear-width@fc", "grace", "false_alarm")


@pytest.fixture
def seeded_app(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    make_store(Path("store.duckdb"))
    app = make_app(Path("store.duckdb"), prefetch=False)
    _seed_runs_and_votes(app)
    return app


@pytest.mark.slow
def test_design_with_a_run_that_confirms_its_finding(snap_compare, seeded_app):
    def runs_tab(app):
        app.screen.query_one("#tabs").active = "tab-runs"

    assert snap_compare(seeded_app, terminal_size=SIZE, run_before=_steps("enter", runs_tab))


def test_runs_stored_before(snap_compare, seeded_app):
    # on a loaded machine this once caught a narrow header over wide rows (Textual's table kept a
    # header drawn before the rows were measured): components.table.Table drops it
    assert snap_compare(seeded_app, terminal_size=SIZE, run_before=_steps("X", "down"))


def test_review_of_a_disagreement(snap_compare, seeded_app):
    assert snap_compare(seeded_app, terminal_size=SIZE, run_before=_steps("V"))


@pytest.mark.slow
def test_bulk_verdict_dialog(snap_compare, app_here):
    def dead_node(app):
        app.screen.findings.highlight_finding("connectivity.dead-node@aux_head")

    assert snap_compare(app_here, terminal_size=SIZE, run_before=_steps("enter", dead_node, "b"))


@pytest.mark.slow
def test_run_confirmation(snap_compare, app_here):
    async def wait_dialog(pilot):
        import asyncio

        from archcurator.tui.screens.modals import ChoiceScreen

        await settle(pilot)
        for _ in range(200):
            if isinstance(pilot.app.screen, ChoiceScreen):
                break
            await asyncio.sleep(0.02)
        await settle(pilot)

    async def run_before(pilot):
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        await pilot.press("e")
        await wait_dialog(pilot)

    assert snap_compare(app_here, terminal_size=SIZE, run_before=run_before)


def test_a_changed_screen_does_not_match_its_snapshot(app_here):
    """The snapshots can fail: the stored queue is what the queue draws now, and a queue drawn another
    way (filtered) is not it (compared as the plugin compares, unique ids stripped)."""
    from pytest_textual_snapshot import normalize_svg
    from textual._doc import take_svg_screenshot

    stored = normalize_svg((Path(__file__).parent / "__snapshots__" / "test_snapshots" / "test_queue.svg")
                           .read_text())
    same = take_svg_screenshot(app=app_here, terminal_size=SIZE, run_before=_steps())
    assert normalize_svg(same) == stored
    other = make_app(Path("store.duckdb"), prefetch=False)
    changed = take_svg_screenshot(app=other, terminal_size=SIZE, run_before=_steps("v"))
    assert normalize_svg(changed) != stored

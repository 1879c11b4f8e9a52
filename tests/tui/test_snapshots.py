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


def test_judging_with_note(snap_compare, app_here):
    assert snap_compare(app_here, terminal_size=SIZE,
                        run_before=_steps("enter", "r", "n", tuple("checked by hand")))


def test_design_without_findings(snap_compare, app_here):
    assert snap_compare(app_here, terminal_size=SIZE,
                        run_before=_steps(lambda app: app.screen.jump_to("d-003"), "enter"))


def test_design_cost_tab(snap_compare, app_here):
    def cost_tab(app):
        app.screen.query_one("#tabs").active = "tab-cost"

    assert snap_compare(app_here, terminal_size=SIZE,
                        run_before=_steps(lambda app: app.screen.jump_to("d-006"), "enter", cost_tab))


def test_missed_defect_dialog(snap_compare, app_here):
    assert snap_compare(app_here, terminal_size=SIZE,
                        run_before=_steps(lambda app: app.screen.jump_to("d-003"), "enter", "m"))


def test_diff(snap_compare, app_here):
    assert snap_compare(app_here, terminal_size=SIZE,
                        run_before=_steps(lambda app: app.screen.jump_to("d-005"), "enter", "d"))


def test_diff_reference(snap_compare, app_here):
    assert snap_compare(app_here, terminal_size=SIZE,
                        run_before=_steps(lambda app: app.screen.jump_to("d-006"), "enter", "d"))


def test_reports_refusals(snap_compare, app_here):
    assert snap_compare(app_here, terminal_size=SIZE, run_before=_steps("R"))


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

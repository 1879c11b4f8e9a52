"""End to end through the app (Pilot) on a real store: judging, undo, reopen, missed defects, diff, filters."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from apphelp import ROOT, make_app, settle


def _current(path, curator="ada"):
    from archcurator.store.connection import connect

    with connect(path) as con:
        return con.execute(
            "SELECT design_id, finding_key, verdict, note FROM current_judgments WHERE curator = ?"
            " ORDER BY design_id, finding_key", [curator]).fetchall()


@pytest.mark.slow
async def test_judge_three_undo_one_quit_reopen_two_remain(store_path):
    from archcurator.tui.screens.design import DesignScreen

    app = make_app(store_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        assert app.main_queue.ids[0] == "d-001"
        await pilot.press("enter")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, DesignScreen) and screen.view.id == "d-001"
        await pilot.press("r")  # first finding of d-001, then the next one is highlighted
        await pilot.press("f")  # d-001 done: on to the next design still to judge
        await settle(pilot)
        assert app.screen.view.id == "d-002"
        await pilot.press("u")
        await settle(pilot)
        assert len(_current(store_path)) == 3
        await pilot.press("ctrl+z")
        await settle(pilot)
        await pilot.press("q")
        await pilot.pause()
    assert app.return_code == 0
    rows = _current(store_path)
    assert [(d, v) for d, _k, v, _n in rows] == [("d-001", "false_alarm"), ("d-001", "real")] or \
        sorted(v for _d, _k, v, _n in rows) == ["false_alarm", "real"]
    assert {d for d, *_ in rows} == {"d-001"}

    # reopen: the two judgments are there, the undone one is not; undo goes on from the store's log
    app2 = make_app(store_path)
    async with app2.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        rows = {r["id"]: r for r in app2.store.rows_for(["d-001", "d-002"]).values()}
        assert rows["d-001"]["judged"] == "judged" and rows["d-001"]["n_judged"] == 2
        assert rows["d-002"]["judged"] == "unjudged"
        await pilot.press("ctrl+z")  # the last step before the restart: false alarm on d-001
        await settle(pilot)
    assert [v for _d, _k, v, _n in _current(store_path)] == ["real"]


@pytest.mark.slow
async def test_note_suspends_single_key_shortcuts(store_path):
    app = make_app(store_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        await pilot.press("n")
        await pilot.press(*"ruf fc")  # typed into the note, not judged
        await settle(pilot)
        assert _current(store_path) == []
        assert app.screen.query_one("#note").value == "ruf fc"
        await pilot.press("enter")  # back to the findings, note kept for the next verdict
        await pilot.press("r")
        await settle(pilot)
    rows = _current(store_path)
    assert len(rows) == 1 and rows[0][2] == "real" and rows[0][3] == "ruf fc"


@pytest.mark.slow
async def test_quit_waits_for_pending_writes(store_path):
    app = make_app(store_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        await pilot.press("r", "q")  # quit before the write has necessarily finished
        for _ in range(50):
            await pilot.pause(0.02)
            if not app.is_running:
                break
    assert len(_current(store_path)) == 1


@pytest.mark.slow
async def test_missed_defect_shows_in_report_rules_and_clean(store_path, capsys):
    from archcurator.tui.screens.modals import MissedDefectScreen

    app = make_app(store_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        app.screen.jump_to("d-003")  # a design without findings
        await pilot.press("enter")
        await settle(pilot)
        assert app.screen.view.id == "d-003" and not app.screen.view.findings
        await pilot.press("m")
        await settle(pilot)
        assert isinstance(app.screen, MissedDefectScreen)
        await pilot.press(*"fc", "enter", "enter")  # narrow the nodes to fc, pick it; on to the rule
        await pilot.press(*"flatten linear width", "enter")  # the catalogue's rule, by type-ahead
        await pilot.press(*"head reads the wrong width", "enter")
        await settle(pilot)
        assert app.screen.view.id == "d-003"
        await pilot.press("c")  # and the design is otherwise clean
        await settle(pilot)
    from archcurator.tui.cli import main

    capsys.readouterr()
    assert main(["report", "rules", "--json", "--db", str(store_path)]) == 0
    out = json.loads(capsys.readouterr().out)
    row = next(r for r in out["rows"] if r["rule"] == "shape.flatten-linear-width")
    assert row["missed"] == 1
    from archcurator.store.missed import list_missed_defects

    md = list_missed_defects(store_path, "d-003")
    assert md[0]["node_list"] == ["fc"] and md[0]["description"] == "head reads the wrong width"
    clean = [r for r in _current(store_path) if r[0] == "d-003"]
    assert clean == [("d-003", None, "clean", None)]


@pytest.mark.slow
async def test_undo_missed_defect_retracts_it(store_path):
    app = make_app(store_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        app.screen.jump_to("d-004")
        await pilot.press("enter")
        await settle(pilot)
        await pilot.press("m")
        await settle(pilot)
        # no nodes; the rule is always asked for (other: …), then the description
        await pilot.press("enter", *"other: odd", "down", "enter", *"something off", "enter")
        await settle(pilot)
        from archcurator.store.missed import list_missed_defects

        assert len(list_missed_defects(store_path, "d-004")) == 1
        await pilot.press("ctrl+z")
        await settle(pilot)
    from archcurator.store.missed import list_missed_defects

    assert list_missed_defects(store_path, "d-004") == []


@pytest.mark.slow
async def test_diff_against_parent_and_reference(store_path):
    from archcurator.tui.screens.diff import DiffScreen

    app = make_app(store_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        app.screen.jump_to("d-005")  # parent d-001
        await pilot.press("enter")
        await settle(pilot)
        await pilot.press("d")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, DiffScreen)
        d = screen.diff
        assert [c.b_id for c in d.changed] == ["fc"]
        assert {a.name for a in d.changed[0].args} == {"in_features", "out_features"}
        assert d.removed == ["aux_head"] and not d.added and not d.rewired
        await pilot.press("escape")
        await settle(pilot)
        await pilot.press("right_square_bracket")  # d-006: reference resnet18
        await settle(pilot)
        assert app.screen.view.id == "d-006"
        await pilot.press("d")
        await settle(pilot)
        d = app.screen.diff
        assert [c.b_id for c in d.changed] == ["layer2.0.conv1"]
        assert d.consequences and all(c.node != "layer2.0.conv1" for c in d.consequences)


@pytest.mark.slow
async def test_filters_sort_search_and_jump(store_path):
    from archcurator.tui.widgets.queue_list import QueueList

    app = make_app(store_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        q = app.main_queue
        assert len(q) == 8
        await pilot.press("v")  # verdict: block
        await settle(pilot)
        assert q.ids == ["d-001", "d-006", "d-008"]
        await pilot.press("escape")
        await settle(pilot)
        assert len(q) == 8
        await pilot.press("a")  # author: picked from a list (type-ahead)
        await settle(pilot)
        await pilot.press(*"agent", "enter")
        await settle(pilot)
        assert "d-004" not in q.ids and len(q) == 7
        await pilot.press("escape", "slash", *"006", "enter")
        await settle(pilot)
        assert q.ids == ["d-006"]
        await pilot.press("escape")
        await settle(pilot)
        await pilot.press("J")  # judged: unjudged (ungenerated designs have no judged state)
        await settle(pilot)
        assert "d-007" not in q.ids and len(q) == 7
        await pilot.press("escape", "s")  # sort: verdict, block first
        await settle(pilot)
        assert q.ids[:3] == ["d-001", "d-006", "d-008"]
        app.screen.jump_to("d-008")
        assert app.screen.query_one(QueueList).current_id == "d-008"


async def test_keys_rebound_from_config(store_path, tmp_path):
    from archcurator.tui.config import load_config

    cfg_file = tmp_path / "config.toml"
    cfg_file.write_text('curator = "grace"\n[keys]\njudge_real = "x"\nnext_design = "ctrl+n"\n')
    cfg = load_config(cfg_file)
    assert cfg.curator == "grace" and cfg.keymap == {"judge_real": "x", "next_design": "ctrl+n"}
    from archcurator.tui.app import CuratorApp

    cfg.cursor_blink = False
    app = CuratorApp(store_path, cfg)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        await pilot.press("r")  # no longer bound
        await settle(pilot)
        assert _current(store_path, "grace") == []
        await pilot.press("x")
        await settle(pilot)
        assert [r[2] for r in _current(store_path, "grace")] == ["real"]
        await pilot.press("ctrl+n")
        await settle(pilot)
        assert app.screen.view.id == "d-002"
        assert app.key_for("judge_real") == "x"


async def test_command_palette_has_every_action(store_path):
    from archcurator.tui.screens.help import all_bindings

    app = make_app(store_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        titles = {c.title for c in app.get_system_commands(app.screen)}
        for scope, b in all_bindings():
            if scope in ("Everywhere", "Queue"):
                assert b.description in titles, b.id
        await pilot.press("enter")
        await settle(pilot)
        titles = {c.title for c in app.get_system_commands(app.screen)}
        for scope, b in all_bindings():
            if scope in ("Everywhere", "Design and judging"):
                assert b.description in titles, b.id
        assert {"Runs", "Knowledge base"} <= titles
        # a palette entry runs its action
        cmd = next(c for c in app.get_system_commands(app.screen) if c.title == "Next")
        await cmd.callback()
        await settle(pilot)
        assert app.screen.view.id == "d-002"


async def test_help_and_reports_screens_open(store_path):
    from archcurator.tui.screens.help import HelpScreen
    from archcurator.tui.screens.reports import ReportsScreen

    app = make_app(store_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape", "R")
        await settle(pilot)
        assert isinstance(app.screen, ReportsScreen)
        table = app.screen.query_one("#refusal-table")
        assert table.row_count == 4
        assert app.screen.query_one("#rules-table").row_count >= 3


def test_torch_not_imported_at_start_up(store_path):
    code = f"""
import asyncio, sys
sys.path.insert(0, {str(ROOT / 'tests' / 'tui')!r})
from apphelp import make_app, settle

async def main():
    app = make_app({str(store_path)!r})
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        assert app.main_queue.rows, "first page shown"
        assert "torch" not in sys.modules, "torch imported at start-up"
        await pilot.press("enter")
        await settle(pilot)
        assert app.screen.view is not None
        assert "torch" not in sys.modules, "torch imported by the design screen"
    print("ok")

asyncio.run(main())
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip().endswith("ok")

"""Keys always mean the same thing (issue 29, bugs 1-6): each test reproduces one trap a curator fell into.

Keys typed fast are sent as a terminal sends them, in one burst (`burst`): the app sees them before it
has finished with the first, which is how text meant for a dialog became commands, how the missed-defect
dialog lost or reordered keys, and how KB cursor moves were lost.
"""

from __future__ import annotations

import asyncio

import pytest
from apphelp import current_verdicts, make_app, open_design, settle, wait_until
from storefix import make_store


async def burst(pilot, *keys: str) -> None:
    """Send every key at once, as a terminal does when the curator types fast, then let the app settle."""
    from textual import events
    from textual.keys import _character_to_key

    app = pilot.app
    for key in keys:
        char = key if len(key) == 1 else None
        if len(key) == 1 and not key.isalnum():
            key = _character_to_key(key)
        if key == "space":
            char = " "
        event = events.Key(key, char)
        event.set_sender(app)
        app._driver.send_message(event)
    await settle(pilot)


def _titles(app) -> list[str]:
    return [c.title for c in app.get_system_commands(app.screen)]


# ---- bug 1: one guarded Quit and one Refresh on every screen; the palette's Quit during a run -------------

@pytest.mark.slow
async def test_the_palette_lists_one_quit_and_one_refresh_on_every_screen(store_path):
    app = make_app(store_path, prefetch=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        seen = []
        for keys in ([], ["enter"], ["R"], ["X"], ["V"], ["K"]):
            while len(app.screen_stack) > 1:
                app.pop_screen()
            await settle(pilot)
            if keys:
                await pilot.press(*keys)
                await settle(pilot)
            titles = _titles(app)
            seen.append(type(app.screen).__name__)
            assert titles.count("Quit") == 1, (type(app.screen).__name__, titles)
            assert titles.count("Refresh") == 1, (type(app.screen).__name__, titles)
    assert seen == ["QueueScreen", "DesignScreen", "ReportsScreen", "RunsScreen", "ReviewScreen",
                    "KnowledgeBaseScreen"]


async def _palette_quit(pilot) -> None:
    """ctrl+p, type quit, enter: the palette's one Quit."""
    await pilot.press("ctrl+p")
    await settle(pilot)
    await pilot.press(*"quit")
    await asyncio.sleep(0.3)
    await settle(pilot)
    await pilot.press("enter")
    await settle(pilot)


@pytest.mark.slow
async def test_the_palettes_quit_during_a_real_run_asks_and_the_app_keeps_answering(store_path):
    """A real training run in a child process; Quit from the palette while it goes: the question comes up,
    "don't quit" leaves a working app, and "cancel" ends it with the run stored."""
    from archcurator.store import runs as store_runs

    app = make_app(store_path, prefetch=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await open_design(pilot, "d-003")
        app.launch_run("d-003", "train", "cpu")
        assert await wait_until(pilot, lambda: bool(app.runs.active()))
        await _palette_quit(pilot)
        from archcurator.tui.screens.modals import ChoiceScreen

        if app.runs.active():  # still going (a training run takes seconds): the question is asked
            assert isinstance(app.screen, ChoiceScreen), app.screen_stack
            await pilot.press("down", "down", "enter")  # don't quit
            await settle(pilot)
            assert app.is_running and not app._quitting
            await pilot.press("escape")  # the app answers keys: back to the queue
            await settle(pilot)
            assert type(app.screen).__name__ == "QueueScreen"
            await _palette_quit(pilot)
            if isinstance(app.screen, ChoiceScreen):
                await pilot.press("down", "enter")  # cancel it, then quit
        for _ in range(600):
            if not app.is_running:
                break
            await asyncio.sleep(0.1)
        assert not app.is_running, "the app did not quit after the palette's Quit"
    assert app.return_code == 0
    stored = store_runs.list_runs(store_path, design_id="d-003")
    assert stored and stored[0]["status"] in ("cancelled", "ok", "killed")


# ---- bug 2: `:` jump on every visit ----------------------------------------------------------------------

@pytest.mark.slow
async def test_jump_works_after_a_design_was_opened_and_closed(store_path):
    app = make_app(store_path, prefetch=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        await pilot.press("escape")
        await settle(pilot)
        for target in ("d-007", "d-002", "5"):
            await pilot.press("colon")
            await settle(pilot)
            await pilot.press(*target, "enter")
            await settle(pilot)
            want = "d-005" if target == "5" else target
            assert app.screen.query_one("QueueList").current_id == want, target
            await pilot.press("enter")  # open it, back again: the jump still works next time
            await settle(pilot)
            assert app.screen.view.id == want
            await pilot.press("escape")
            await settle(pilot)


# ---- bug 3: tabs by number, judging and esc whatever has focus, text for a dialog never a command -------

@pytest.mark.slow
async def test_number_keys_open_the_design_tabs_and_are_shown(store_path):
    app = make_app(store_path, prefetch=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await open_design(pilot, "d-001")
        tabs = app.screen.tabs
        for key, tab in (("2", "tab-cost"), ("3", "tab-source"), ("4", "tab-runs"), ("5", "tab-recent"),
                         ("1", "tab-finding")):
            await pilot.press(key)
            await settle(pilot)
            assert tabs.active == tab, key
        footer = " ".join(str(k.render()) for k in app.screen.query("FooterKey, FooterLabel"))
        assert "Tabs" in footer, footer
        await pilot.press("question_mark")
        await settle(pilot)
        help_text = str(app.screen.query_one("#help-text").render())
        assert "Cost tab" in help_text and "Recent tab" in help_text


@pytest.mark.slow
async def test_judging_keys_and_esc_with_the_tab_bar_or_a_pane_focused(store_path):
    app = make_app(store_path, prefetch=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await open_design(pilot, "d-001")
        screen = app.screen
        first = screen.findings.current_finding()["key"]
        screen.query_one("ContentTabs").focus()
        await settle(pilot)
        await pilot.press("f")
        await settle(pilot)
        assert current_verdicts(store_path)[("d-001", first)][0] == "false_alarm"
        for widget in ("ContentTabs", "#finding-detail", "#graph"):
            screen.query_one(widget).focus()
            await settle(pilot)
            await pilot.press("escape")
            await settle(pilot)
            assert app.screen is screen, f"esc with {widget} focused left the design"
            assert app.focused is screen.findings, widget
        await pilot.press("escape")  # from the findings list esc goes back
        await settle(pilot)
        assert type(app.screen).__name__ == "QueueScreen"


@pytest.mark.slow
async def test_keys_typed_while_a_dialog_opens_go_to_it_or_nowhere(store_path):
    from archcurator.store.connection import connect

    app = make_app(store_path, prefetch=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await open_design(pilot, "d-006")
        await pilot.press("r")  # one step of ours, for a stray z to undo
        await settle(pilot)
        before = current_verdicts(store_path)
        # the run dialog is opened by a worker: a burst typed meanwhile must not judge, undo or launch
        await burst(pilot, "e", "f", "z", "u")
        assert type(app.screen).__name__ == "ChoiceScreen", app.screen_stack
        await pilot.press("escape")
        await settle(pilot)
        # the bulk dialog too (its counts are read first)
        await burst(pilot, "b", "f", "z", "escape")
        await settle(pilot)
        assert current_verdicts(store_path) == before
        # a dialog that does not open (no graph to mark a defect on): what was typed for it is dropped
        await pilot.press("escape")
        await settle(pilot)
        await open_design(pilot, "d-007")
        await burst(pilot, "m", *"fz r", "u")
        await settle(pilot)
        assert current_verdicts(store_path) == before
        assert not app.runs.handles
        with connect(store_path) as con:
            undos = con.execute("SELECT count(*) FROM judgments WHERE undoes IS NOT NULL").fetchone()[0]
        assert undos == 0


# ---- bug 4: the missed-defect dialog keeps every key and fits 80x24 ----------------------------------

@pytest.mark.slow
async def test_the_missed_defect_dialog_keeps_every_key_typed_fast(store_path):
    from archcurator.store.missed import list_missed_defects

    app = make_app(store_path, prefetch=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await open_design(pilot, "d-001")
        # nodes: "fc" picked; enter on the empty field goes to the rule; other, five backspaces, xyz
        await burst(pilot, "m", *"fc", "enter", "enter", *"other", *["backspace"] * 5, *"other: patch embed stride",
                    "down", "enter")
        dialog = app.screen
        assert type(dialog).__name__ == "MissedDefectScreen"
        assert dialog.picked == ["fc"]
        assert dialog.rule == "other: patch embed stride", dialog.rule
        await burst(pilot, *"the stride is wrong", "enter")
        assert type(app.screen).__name__ == "DesignScreen"
        await settle(pilot)
    stored = list_missed_defects(store_path, "d-001")
    assert [(m["rule"], m["description"], m["nodes"]) for m in stored] == [
        ("other: patch embed stride", "the stride is wrong", "fc")]


@pytest.mark.slow
async def test_the_missed_defect_dialog_fits_or_scrolls_at_80x24(store_path):
    app = make_app(store_path, prefetch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await open_design(pilot, "d-001")
        await pilot.press("m")
        await settle(pilot)
        dialog = app.screen
        screen_region = dialog.region
        for wid in ("#missed-description", "#missed-save"):
            w = dialog.query_one(wid)
            w.scroll_visible(animate=False, immediate=True)
            await settle(pilot)
            assert screen_region.contains_region(w.region) and w.region.height > 0, (wid, w.region)


# ---- bug 5: KB cursor moves made while a write runs ----------------------------------------------------

@pytest.fixture
def kb_store(tmp_path):
    from storefix import make_kb

    return make_kb(make_store(tmp_path / "kb.duckdb"))


@pytest.mark.slow
async def test_kb_cursor_moves_made_while_a_write_runs_are_kept(kb_store):
    from archcurator.store import kb as K

    app = make_app(kb_store, prefetch=False)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        await pilot.press("K")
        await settle(pilot)
        screen = app.screen
        first, second = screen.order[0], screen.order[1]
        await burst(pilot, "p", "down", "p", "down")
        await settle(pilot)
        assert await wait_until(pilot, lambda: not screen.busy)
        pinned = {p.id for p in K.list_propositions(kb_store, "all") if p.pinned}
        assert pinned == {first, second}
        assert screen.current_id() == screen.order[2]
        # esc from the evidence table returns to the propositions, and only then leaves
        screen.query_one("#kb-evidence").focus()
        await settle(pilot)
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is screen and app.focused is screen.query_one("#kb-props")


# ---- bug 6: enter while a search loads; a note typed as a design opens --------------------------------

@pytest.mark.slow
async def test_enter_during_a_search_opens_a_row_the_search_shows(store_path):
    app = make_app(store_path, prefetch=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await burst(pilot, "slash", *"d-008", "enter", "enter")
        await settle(pilot)
        assert type(app.screen).__name__ == "DesignScreen"
        assert app.screen.design_id == "d-008"


@pytest.mark.slow
async def test_a_note_typed_as_the_design_opens_goes_with_the_verdict(store_path):
    app = make_app(store_path, prefetch=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await burst(pilot, "enter", "n", *"trust the width")
        await settle(pilot)
        screen = app.screen
        assert screen.judge_bar.note_field.value == "trust the width"
        key = screen.findings.current_finding()["key"]
        await pilot.press("escape", "r")
        await settle(pilot)
    assert current_verdicts(store_path)[("d-001", key)] == ("real", "trust the width")

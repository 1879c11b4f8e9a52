"""Crash-proof by construction, on the shipped demo store: every screen and dialog, every binding, every
palette command, then a seeded random sequence of 2,400 keys; any exception or exit fails."""

from __future__ import annotations

import asyncio
import random
import shutil

import pytest
from apphelp import make_app
from crashproof import alive, binding_keys, drive, press, reach, reset, scenarios_for, settle


@pytest.fixture(scope="module")
def demo_template(tmp_path_factory):
    from archcurator.store.connection import reading
    from archcurator.store.demo import ensure_demo
    from archcurator.store.kb import ensure_kb

    path = tmp_path_factory.mktemp("demo") / "demo.duckdb"
    ensure_demo(path)
    ensure_kb(path)
    with reading(path) as con:
        blocked = con.execute("SELECT id FROM designs WHERE verdict = 'block' AND parent IS NOT NULL"
                              " AND n_block + n_warn >= 2 ORDER BY id LIMIT 1").fetchone()[0]
        clean = con.execute("SELECT id FROM designs WHERE error IS NULL AND n_block + n_warn = 0"
                            " ORDER BY id LIMIT 1").fetchone()[0]
        ungenerated = con.execute("SELECT id FROM designs WHERE error IS NOT NULL ORDER BY id LIMIT 1").fetchone()[0]
    return path, {"blocked": blocked, "clean": clean, "ungenerated": ungenerated, "with_parent": blocked}


@pytest.fixture
def demo(demo_template, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the palette's screenshot command writes here
    monkeypatch.delenv("RAY_API_SERVER_ADDRESS", raising=False)
    src, roles = demo_template
    path = tmp_path / "demo.duckdb"
    shutil.copy(src, path)
    return path, roles


@pytest.mark.slow
async def test_every_screen_dialog_binding_and_palette_command(demo):
    path, roles = demo
    app = make_app(path, prefetch=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        counts = await drive(pilot, scenarios_for(**roles))
        # the ctrl+p crash of the first screen: the palette opened there and on the pick screen
        await reset(pilot)
        await pilot.press("ctrl+p")
        await settle(pilot)
        alive(app, "the palette on the queue")
        await pilot.press(*"search", "enter")
        await settle(pilot)
        alive(app, "the Search command from the palette")
        await reset(pilot)
        # the palette's Quit while a real run goes: it asks (never quits at once, never freezes); the
        # app answers keys after "don't quit"
        from archcurator.tui.screens.modals import ChoiceScreen

        app.launch_run(roles["clean"], "train", "cpu")
        for _ in range(300):
            if app.runs.active():
                break
            await asyncio.sleep(0.05)
        assert app.runs.active(), "the run did not start"
        await press(pilot, "ctrl+p")
        await settle(pilot)
        for key in "quit":
            await press(pilot, key)
        await asyncio.sleep(0.3)
        await settle(pilot)
        await press(pilot, "enter")
        await settle(pilot)
        if app.runs.active() and not all(h.result is not None for h in app.runs.active()):
            assert isinstance(app.screen, ChoiceScreen), app.screen_stack
            await press(pilot, "escape")  # don't quit
            await settle(pilot)
        alive(app, "the palette's Quit during a run")
        await reset(pilot)
        await pilot.press("R")
        await settle(pilot)
        alive(app, "a key after the palette's Quit during a run")
        app.runs.cancel_all()
        for _ in range(600):
            if not app.runs.active():
                break
            await asyncio.sleep(0.1)
        await reset(pilot)
        app.screen.query_one("QueueList").focus()  # (the Search command left the search field focused)
        await pilot.press("q")
        for _ in range(200):
            if not app.is_running:
                break
            await pilot.pause(0.05)
    assert app.return_code == 0 and app._exception is None
    assert counts["scenarios"] == len(scenarios_for(**roles)) >= 25, counts
    assert counts["keys"] >= 300 and counts["commands"] >= 200, counts
    print(counts)


def _alphabet(app_cls) -> list[str]:
    from archcurator.tui.screens.help import scopes
    from archcurator.tui.widgets.cursor_list import CursorList

    keys = set()
    for _scope, cls in scopes():
        keys |= set(binding_keys(cls.BINDINGS))
    keys |= set(binding_keys(CursorList.BINDINGS))
    keys |= {"up", "down", "enter", "escape", "tab", "shift+tab", "pageup", "pagedown", "home", "end",
             "ctrl+p", "space", "backspace", "left", "right", "a", "x", "1", "2", "3", "4", "5", "-", "/", "[", "]",
             "colon", "m", "n", "b"}
    keys -= {"q", "e", "E"}  # quitting ends the run (checked on its own); runs are launched in test_runs_screen
    return sorted(keys)


@pytest.mark.slow
async def test_seeded_random_keys_on_the_demo_store(demo):
    path, _roles = demo
    rng = random.Random(20261115)
    from archcurator.tui.app import CuratorApp

    alphabet = _alphabet(CuratorApp)
    # mostly moving and judging, with the rest of the keys mixed in
    weights = [6 if k in ("down", "up", "enter", "escape", "r", "f", "u", "right_square_bracket") else 1
               for k in alphabet]
    sequence = rng.choices(alphabet, weights=weights, k=2400)
    app = make_app(path, prefetch=True)
    pressed = 0
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        for i, key in enumerate(sequence):
            await pilot.press(key)
            pressed += 1
            if i % 20 == 19:
                await settle(pilot)
            alive(app, f"random key #{i} ({key}); the last ten: {sequence[max(0, i - 9):i + 1]}")
        await settle(pilot)
        alive(app, "after the random keys")
        # and the app still answers: back to the queue, open a design, judge, undo
        await reset(pilot)
        await reach(pilot, scenarios_for("x", "x", "x", "x")[0])
        await pilot.press("escape", "enter")
        await settle(pilot)
        alive(app, "opening a design after the random keys")
    assert pressed == len(sequence) >= 2000


@pytest.mark.slow
async def test_screens_closed_as_soon_as_opened_do_not_crash(store_path):
    """Enter then Escape faster than the screen mounts: Textual's Header watcher (and the screen's own
    mount) ran after the screen was gone and the app exited with NoMatches."""
    import asyncio

    from crashproof import press

    app = make_app(store_path, prefetch=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        for key in ["enter", "R", "X", "V", "K", "enter", "question_mark"] * 2:
            before = app.screen
            await press(pilot, key)
            for _ in range(500):
                if app.screen is not before:
                    break
                await asyncio.sleep(0.001)
            app.design_cache.clear()
            if len(app.screen_stack) > 1:
                app.pop_screen()
            await settle(pilot)
            alive(app, f"{key} opened and closed at once")


@pytest.mark.slow
async def test_every_screen_survives_resizing_down_to_one_cell(demo):
    """The terminal shrunk (to 40x10, to 1x1) and grown back on each screen and dialog, keys pressed at
    each size: nothing raises and the app keeps running."""
    path, roles = demo
    app = make_app(path, prefetch=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        shown = []
        for sc in scenarios_for(**roles):
            if sc.name in ("queue search", "design note field", "diff pick", "model picker", "jump prompt"):
                continue  # the same screens as others, with another widget focused
            await reach(pilot, sc)
            for size in [(40, 10), (1, 1), (80, 24), (120, 36)]:
                await pilot.resize_terminal(*size)
                await settle(pilot)
                for key in ("down", "tab", "up"):
                    await press(pilot, key)
                await settle(pilot)
                alive(app, f"{sc.name} at {size[0]}x{size[1]}")
            shown.append(type(app.screen).__name__)
    assert {"QueueScreen", "DesignScreen", "MissedDefectScreen", "ChoiceScreen", "DiffScreen", "ReportsScreen",
            "RunsScreen", "ReviewScreen", "KnowledgeBaseScreen", "HelpScreen"} <= set(shown), shown


# keys of a burst typed across a transition: what sets one off, what comes in the middle (a move, a tab key,
# a dialog, esc then a key as the terminal sends it: alt+key), and a verdict typed last
_TRIGGERS = ["r", "f", "u", "right_square_bracket", "left_square_bracket", "N", "l", "c"]
_MIDDLES = ["right_square_bracket", "left_square_bracket", "N", "1", "2", "3", "4", "5", "m", "b", "d", "n",
            "escape", "down", "up", "alt+r", "alt+f", "alt+shift+n", "enter"]
_LAST = ["r", "f", "u"]


def _judged_designs_since(path, event: int) -> tuple[set, int]:
    from archcurator.store.connection import reading

    with reading(path) as con:
        rows = con.execute("SELECT id, design_id FROM judgments WHERE id > ? AND curator = 'ada' AND undoes IS NULL",
                           [event]).fetchall()
        top = con.execute("SELECT coalesce(max(id), 0) FROM judgments").fetchone()[0]
    return {d for _i, d in rows}, top


def _on_screen(app) -> str | None:
    for screen in reversed(app.screen_stack):
        if type(screen).__name__ == "DesignScreen":
            return screen.view.id if screen.view is not None else None
    return None


@pytest.mark.slow
async def test_seeded_bursts_across_design_transitions_never_judge_a_design_not_on_screen(demo, monkeypatch):
    """A curator typing fast across a transition (the verdict that finishes a design opens the next; a
    move; a tab key; a dialog; esc then a key): a verdict lands on the design the burst started on or on
    the one on screen once it has settled, never on a third one (`r [ f` once put the f on a design the
    screen had only passed through)."""
    from textual import events

    from archcurator.tui.screens.design import DesignScreen

    # the screen moves on by itself (the verdict that finishes a design opens the next) only from the design
    # whose step finished it: recorded as the screen does it
    advanced_from: list = []
    moved_on_from: list = []
    advance, next_found = DesignScreen._advance_design, DesignScreen.on_next_found

    def _advance(self):
        advanced_from.append(self.view.id if self.view is not None else None)
        return advance(self)

    def _next_found(self, message):
        if message.request == self.next_request and message.index is not None:
            moved_on_from.append((advanced_from[-1] if advanced_from else None,
                                  self.view.id if self.view is not None else None))
        return next_found(self, message)

    monkeypatch.setattr(DesignScreen, "_advance_design", _advance)
    monkeypatch.setattr(DesignScreen, "on_next_found", _next_found)
    path, _roles = demo
    rng = random.Random(20261202)
    app = make_app(path, prefetch=True)
    bursts = 0
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        _designs, last = _judged_designs_since(path, 0)
        for i in range(60):
            while len(app.screen_stack) > 2 or (len(app.screen_stack) == 2
                                                 and type(app.screen).__name__ != "DesignScreen"):
                app.pop_screen()
                await settle(pilot)
            if type(app.screen).__name__ != "DesignScreen":
                await pilot.press("N")  # the queue's next design to judge
                await settle(pilot)
            start = _on_screen(app)
            moved_on_from.clear()
            keys = [rng.choice(_TRIGGERS), rng.choice(_MIDDLES), rng.choice(_LAST)]
            for key in keys:
                char = key[-1] if key.startswith("alt+") else (key if len(key) == 1 else None)
                if key.startswith("alt+shift+"):
                    char = char.upper()
                event = events.Key(key, char)
                event.set_sender(app)
                app._driver.send_message(event)
            await settle(pilot)
            alive(app, f"burst #{i} {keys}")
            judged, last = _judged_designs_since(path, last)
            end = _on_screen(app)
            for asked_on, shown in moved_on_from:
                assert asked_on == shown, (i, keys, f"moved on by itself from {shown}, asked on {asked_on}")
            assert judged <= {start, end} | {d for d, _s in moved_on_from}, (i, keys, start, end, judged)
            bursts += 1
    assert bursts == 60

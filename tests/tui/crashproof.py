"""Driving the whole app from the outside: every screen and dialog, every binding, every palette command.

Used by the every-key test (the demo store) and the hostile-text test (a store whose every field is
markup and escape sequences). A scenario is a way to reach one screen or dialog from the queue; on
each, every key bound there (the screen's, the app's, the focused widget's) is pressed from a fresh
start of that scenario, and every command of the palette is run. After each step the app must still
be running, with no exception, and (where asked) nothing unsafe drawn on the screen.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from dataclasses import dataclass, field

from textual.binding import Binding

from archcurator.tui.sanitise import has_unsafe

# keys that launch real runs from the confirmation dialog, or end the app: exercised elsewhere
# (tests/tui/test_runs_screen.py; the final quit of each test)
NO_QUIT = {"q"}


def log(text: str) -> None:
    """Progress, for a run that hangs: CRASHPROOF_LOG names a file to append to."""
    import os

    path = os.environ.get("CRASHPROOF_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(text + "\n")


def alive(app, what: str) -> None:
    assert app._exception is None, f"{what}: the app raised {app._exception!r}"
    assert app.is_running and app.return_code is None, f"{what}: the app exited"


def unsafe_lines(app) -> list[str]:
    """Lines drawn on the current screen that hold a raw control / escape character."""
    out = []
    screen = app.screen
    try:
        strips = screen._compositor.render_strips()
    except Exception:  # noqa: BLE001 - a screen not laid out yet draws nothing
        return out
    for strip in strips:
        text = "".join(seg.text for seg in strip if not seg.control)
        if has_unsafe(text):
            out.append(repr(text))
    return out


async def press(pilot, key: str) -> None:
    """One key, as `Pilot.press` sends it, without its wait for the whole process to go idle (up to a
    second a key on a busy machine); `settle` then waits for what the key started."""
    import unicodedata

    from textual import events
    from textual.keys import REPLACED_KEYS, _character_to_key, _get_unicode_name_from_key

    app = pilot.app
    if len(key) == 1 and not key.isalnum():
        key = _character_to_key(key)
    original = REPLACED_KEYS.get(key, key)
    try:
        char = unicodedata.lookup(_get_unicode_name_from_key(original))
    except KeyError:
        char = key if len(key) == 1 else None
    event = events.Key(key, char)
    event.set_sender(app)
    app._driver.send_message(event)
    await pilot._wait_for_screen()


async def settle(pilot, rounds: int = 400) -> None:
    """Let the app finish what a key started (screens, workers, writes), without waiting on runs."""
    app = pilot.app
    for _ in range(rounds):
        await pilot._wait_for_screen()
        await asyncio.sleep(0)
        busy = [w for w in app.workers if w.is_running and w.group not in ("run-launch",)]
        queue_pending = getattr(app.screen, "_search_timer", None) is not None or not app.main_queue.loaded
        if not busy and not app.writes_pending and not app.keys.pending and not queue_pending:
            await pilot._wait_for_screen()
            return
        await asyncio.sleep(0.005)


def binding_keys(bindings, first_only: bool = False) -> list[str]:
    """The keys of `bindings` (every key of each, or the first key of each: one press per binding)."""
    keys = []
    for b in bindings:
        spec = b.key if isinstance(b, Binding) else (b[0] if isinstance(b, tuple) else "")
        parts = [k.strip() for k in spec.split(",") if k.strip()]
        keys += parts[:1] if first_only else parts
    return keys


# Textual's own widgets (inputs, lists, tables, tabs) bind dozens of editing keys; of theirs, these are
# pressed (what a curator presses in them); every binding of the app's own classes is pressed.
WIDGET_KEYS = ["up", "down", "enter", "space", "backspace", "left", "right", "home", "end", "pageup", "pagedown"]


def keys_here(app, with_app: bool = True) -> list[str]:
    """One key of every binding where the app is now: the screen's, the app's (`with_app`), the focused
    widget's and its parents' (the app's own widget classes), plus the usual keys of Textual's widgets."""
    keys = (binding_keys(app.BINDINGS, True) if with_app else []) + \
        binding_keys(getattr(app.screen, "BINDINGS", []), True)
    node = app.focused
    while node is not None and node is not app.screen:
        if type(node).__module__.startswith("archcurator."):
            keys += binding_keys(getattr(node, "BINDINGS", []), True)
        node = node.parent
    if app.focused is not None and not type(app.focused).__module__.startswith("archcurator."):
        keys += WIDGET_KEYS
    keys += ["tab", "shift+tab", "ctrl+p"]
    seen, out = set(), []
    for k in keys:
        if k not in seen and k not in NO_QUIT:
            seen.add(k)
            out.append(k)
    return out


@dataclass
class Scenario:
    name: str
    steps: list = field(default_factory=list)  # keys (str), or callables(app) (sync or async)
    skip: set = field(default_factory=set)  # keys not pressed here (they would launch a run)
    screen: object = None  # the screen reached, and the stack's depth then
    depth: int = 0


async def reset(pilot) -> None:
    """Back to the queue alone, unfiltered, its list focused."""
    app = pilot.app
    while len(app.screen_stack) > 1:
        app.pop_screen()
        await pilot._wait_for_screen()
    await settle(pilot)
    screen = app.screen
    if app.main_queue.filters:
        screen.apply_filters({})
        await settle(pilot)
    screen.query_one("QueueList").focus()
    await pilot._wait_for_screen()


async def reach(pilot, scenario: Scenario) -> None:
    await reset(pilot)
    for step in scenario.steps:
        if callable(step):
            result = step(pilot.app)
            if inspect.isawaitable(result):
                await result
        else:
            await press(pilot, step)
        await settle(pilot)
        alive(pilot.app, f"{scenario.name}: reaching it ({step})")
    scenario.screen = pilot.app.screen
    scenario.depth = len(pilot.app.screen_stack)


async def back_to(pilot, scenario: Scenario) -> None:
    """Return to the scenario's screen after a key: pop what the key opened; reach it again if it is gone."""
    app = pilot.app
    if scenario.screen is app.screen:
        return
    if scenario.screen in app.screen_stack:
        while app.screen is not scenario.screen:
            app.pop_screen()
            await settle(pilot)
        return
    await reach(pilot, scenario)


async def drive(pilot, scenarios: list[Scenario], *, check_output: bool = False, palette: bool = True,
                commands_once: bool = False, keys_once: bool = False) -> dict:
    """Every key and palette command in every scenario; returns counts. `commands_once` / `keys_once`: the
    palette's commands / the keys are run on the first scenario of each screen type only (every scenario is
    still reached, checked and its palette opened)."""
    app = pilot.app
    counts = {"scenarios": 0, "keys": 0, "commands": 0, "unsafe": []}
    done_types: set = set()  # screen types whose app-wide keys and commands were run already
    app_ids = {b.id for b in app.BINDINGS if isinstance(b, Binding)}
    for sc in scenarios:
        log(f"scenario {sc.name}")
        await reach(pilot, sc)
        counts["scenarios"] += 1
        screen_type = type(app.screen).__name__
        first_of_type = screen_type not in done_types
        done_types.add(screen_type)
        keys = [k for k in keys_here(app, with_app=first_of_type) if k not in sc.skip]
        if keys_once and not first_of_type:
            keys = []
        for key in keys:
            t0 = time.perf_counter()
            await back_to(pilot, sc)
            await press(pilot, key)
            await settle(pilot)
            log(f"  key {key} {time.perf_counter() - t0:.2f} s")
            alive(app, f"{sc.name} ({screen_type}): key {key}")
            counts["keys"] += 1
            if check_output:
                bad = unsafe_lines(app)
                if bad:
                    counts["unsafe"].append((sc.name, key, bad[:3]))
        if not palette:
            continue
        await back_to(pilot, sc)
        # the palette itself, drawn with every command's help (the ctrl+p crash was there)
        await press(pilot, "ctrl+p")
        await settle(pilot)
        for key in ("down", "down", "up"):
            await press(pilot, key)
        await settle(pilot)
        alive(app, f"{sc.name}: the command palette")
        if check_output:
            bad = unsafe_lines(app)
            if bad:
                counts["unsafe"].append((sc.name, "ctrl+p", bad[:3]))
        await back_to(pilot, sc)

        if commands_once and not first_of_type:
            continue

        def commands_here(first_of_type: bool = first_of_type) -> list:
            own = {b.description for b in getattr(app.screen, "BINDINGS", []) if isinstance(b, Binding)
                   and b.id not in app_ids}
            return [c for c in app.get_system_commands(app.screen)
                    if c.title != "Quit" and (first_of_type or c.title in own)]

        for i in range(len(commands_here())):
            await back_to(pilot, sc)
            listed = commands_here()
            if i >= len(listed):
                break
            cmd = listed[i]
            log(f"  command {cmd.title}")
            result = cmd.callback()
            if inspect.isawaitable(result):
                await result
            await settle(pilot)
            alive(app, f"{sc.name}: palette command {cmd.title}")
            counts["commands"] += 1
            if check_output:
                bad = unsafe_lines(app)
                if bad:
                    counts["unsafe"].append((sc.name, f"command {cmd.title}", bad[:3]))
    return counts


def jump(design_id: str):
    def go(app) -> None:
        app.screen.jump_to(design_id)

    return go


def scenarios_for(blocked: str, clean: str, ungenerated: str, with_parent: str) -> list[Scenario]:
    """Every screen and dialog of the app, reached from the queue (designs named by role)."""
    runs = {"enter"}  # Enter in the run confirmation would launch a real run
    return [
        Scenario("queue"),
        Scenario("queue search", ["slash"]),
        Scenario("author picker", ["a"]),
        Scenario("model picker", ["M"]),
        Scenario("rule picker", ["L"]),
        Scenario("jump prompt", ["colon"]),
        Scenario("design with findings", [jump(blocked), "enter"]),
        Scenario("design note field", [jump(blocked), "enter", "n"]),
        Scenario("design graph", [jump(blocked), "enter", "tab"]),
        Scenario("design without findings", [jump(clean), "enter"]),
        Scenario("ungenerated design", [jump(ungenerated), "enter"]),
        Scenario("missed defect dialog", [jump(blocked), "enter", "m"]),
        Scenario("bulk verdict dialog", [jump(blocked), "enter", "b"]),
        Scenario("run confirmation", [jump(blocked), "enter", "e"], skip=runs),
        Scenario("diff pick", [jump(with_parent), "enter", "D"]),
        Scenario("diff", [jump(with_parent), "enter", "d"]),
        Scenario("repair", [jump(blocked), "enter", "P"]),
        Scenario("reports", ["R"]),
        Scenario("runs", ["X"]),
        Scenario("review", ["V"]),
        Scenario("knowledge base", ["K"]),
        Scenario("help", ["question_mark"]),
        # the design's tabs by number, each with the tab bar focused (issue 29: keys that leaked there)
        Scenario("design source tab", [jump(blocked), "enter", "3", "tab"]),
        Scenario("design recent tab", [jump(blocked), "enter", "5"]),
        Scenario("KB new proposition form", ["K", "n"]),
        Scenario("KB merge prompt", ["K", "m"]),
    ]

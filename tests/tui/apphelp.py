"""Helpers for the app's tests (a module of its own: every test folder has a conftest, so `import
conftest` would find whichever came first when the whole suite runs)."""

from __future__ import annotations

import asyncio
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def make_app(path, curator: str = "ada", keymap: dict | None = None, **kw):
    from archcurator.tui.app import CuratorApp
    from archcurator.tui.config import Config

    cfg = Config(curator=curator, keymap=dict(keymap or {}), path=Path("config.toml"), cursor_blink=False)
    return CuratorApp(path, cfg, **kw)


async def settle(pilot, rounds: int = 40) -> None:
    """Wait until no worker runs and no write is pending."""
    from textual.worker import WorkerCancelled

    app = pilot.app
    for _ in range(rounds):
        await pilot.pause()
        try:
            await app.workers.wait_for_complete()
        except WorkerCancelled:
            pass  # a worker replaced by a newer one of its group (exclusive): the loop looks again
        await pilot.pause()
        idle = not any(w.is_running for w in app.workers) and not app.writes_pending and not app.keys.pending
        if idle and not _tables_resizing(app):
            await pilot.pause()
            return
    raise AssertionError("the app did not settle")


def _tables_resizing(app) -> bool:
    """A DataTable given rows recomputes its column widths when it next idles; on a loaded machine a
    snapshot could catch the old widths (the knowledge base's list once did), so settling waits for it.
    Textual keeps that state in a private flag."""
    from textual.widgets import DataTable

    return any(getattr(t, "_require_update_dimensions", False) for t in app.screen.query(DataTable))


def current_verdicts(path, curator: str = "ada") -> dict:
    """{(design id, finding key): (verdict, note)} as the store's current-judgment view has them."""
    from archcurator.store.connection import connect

    with connect(path) as con:
        return {(d, k): (v, n) for d, k, v, n in con.execute(
            "SELECT design_id, finding_key, verdict, note FROM current_judgments WHERE curator = ?",
            [curator]).fetchall()}


async def open_design(pilot, design_id: str) -> None:
    """Jump the queue to the design and open it."""
    app = pilot.app
    app.screen.jump_to(design_id)
    await pilot.press("enter")
    await settle(pilot)
    assert app.screen.view.id == design_id


async def wait_until(pilot, test, seconds: float = 8.0) -> bool:
    """Settle and poll `test` until it holds or the seconds pass; its last answer."""
    for _ in range(int(seconds / 0.1)):
        await settle(pilot)
        if test():
            return True
        await asyncio.sleep(0.1)
    return test()

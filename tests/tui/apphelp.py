"""Helpers for the app's tests (a module of its own: every test folder has a conftest, so `import
conftest` would find whichever came first when the whole suite runs)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def make_app(path, curator: str = "ada", keymap: dict | None = None, **kw):
    from archcurator.tui.app import CuratorApp
    from archcurator.tui.config import Config

    cfg = Config(curator=curator, keymap=dict(keymap or {}), path=Path("config.toml"), cursor_blink=False)
    return CuratorApp(path, cfg, **kw)


async def settle(pilot, rounds: int = 40) -> None:
    """Wait until no worker runs and no write is pending."""
    app = pilot.app
    for _ in range(rounds):
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        if not any(w.is_running for w in app.workers) and not app.writes_pending:
            await pilot.pause()
            return
    raise AssertionError("the app did not settle")

"""The app's tests run on real DuckDB stores in tmp_path (see storefix.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
for p in (str(ROOT), str(HERE)):
    if p not in sys.path:
        sys.path.insert(0, p)

from storefix import make_store  # noqa: E402


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    # never read the developer's own config file or store
    monkeypatch.setenv("ARCHCURATOR_CONFIG", str(tmp_path / "no-config.toml"))
    monkeypatch.setenv("ARCHCURATOR_DB", str(tmp_path / "default-store.duckdb"))


@pytest.fixture
def store_path(tmp_path) -> Path:
    return make_store(tmp_path / "store.duckdb")


def make_app(path, curator: str = "ada", keymap: dict | None = None, **kw):
    from tui.app import CuratorApp
    from tui.config import Config

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

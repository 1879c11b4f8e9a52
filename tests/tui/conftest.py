"""The app's tests run on real DuckDB stores in tmp_path (see storefix.py; helpers in apphelp.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from storefix import make_store  # noqa: E402


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    # never read the developer's own config file or store
    monkeypatch.setenv("ARCHCURATOR_CONFIG", str(tmp_path / "no-config.toml"))
    monkeypatch.setenv("ARCHCURATOR_DB", str(tmp_path / "default-store.duckdb"))


@pytest.fixture
def store_path(tmp_path) -> Path:
    return make_store(tmp_path / "store.duckdb")

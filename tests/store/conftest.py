"""Store tests run on real DuckDB files in tmp_path."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))


@pytest.fixture
def db(tmp_path) -> Path:
    return tmp_path / "store.duckdb"


@pytest.fixture
def fake():
    import fake_verifier

    return fake_verifier.verify

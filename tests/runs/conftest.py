"""Shared helpers for the run tests: the small designs in designs/ and a
local runner of our own (so one test's queue never waits on another's)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

DESIGNS = Path(__file__).parent / "designs"


def load_design(name: str) -> dict:
    return json.loads((DESIGNS / f"{name}.json").read_text())


@pytest.fixture
def design():
    return load_design


@pytest.fixture
def runner():
    from core.runs.local import LocalRunner

    r = LocalRunner()
    yield r
    r.cancel_all()
    for h in r.handles():
        h.wait(10)

"""Shared by the catalogue tests: the study's corrupted set and its static grounding, computed once."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))


@pytest.fixture(scope="session")
def corruption_cases():
    from archcurator.core.ground import corruption_set

    return corruption_set()


@pytest.fixture(scope="session")
def grounding(corruption_cases):
    from archcurator.core.ground import grounding_map

    return grounding_map(corruption_cases)

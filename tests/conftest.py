"""Tests import the installed `archcurator` only: the checkout's root, which `python -m pytest`
puts on sys.path, would make the rooms importable as bare `core`, `store`, `tui` and hide a
wrong import name."""

from __future__ import annotations

import sys
from pathlib import Path

_ROOT = Path(__file__).resolve().parents[1]
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _ROOT]
for _room in ("core", "store", "tui", "assets"):
    sys.modules.pop(_room, None)

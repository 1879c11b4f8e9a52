"""Where the shipped data lives, found the same way for an editable or a plain install."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

#: `assets/` beside `core/`: the repository's folder in a checkout, `archcurator/assets` when installed.
ASSETS = Path(__file__).resolve().parents[1] / "assets"


def asset_path(*parts: str) -> Path:
    return ASSETS.joinpath(*parts)


@cache
def gpu_prices() -> dict:
    return json.loads(asset_path("gpu_prices.json").read_text())

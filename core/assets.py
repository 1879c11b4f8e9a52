"""Where the shipped data lives, found the same way for an editable or a plain install."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import assets as _assets_pkg

ASSETS = Path(_assets_pkg.__file__).resolve().parent


def asset_path(*parts: str) -> Path:
    return ASSETS.joinpath(*parts)


@lru_cache(maxsize=None)
def gpu_prices() -> dict:
    return json.loads(asset_path("gpu_prices.json").read_text())

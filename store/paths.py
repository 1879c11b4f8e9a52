"""Where the store lives: `--db PATH`, else `$ARCHCURATOR_DB`, else the user's data folder."""

from __future__ import annotations

import os
import sys
from pathlib import Path

ENV_VAR = "ARCHCURATOR_DB"
FILE_NAME = "archcurator.duckdb"


def data_dir() -> Path:
    """The user's data folder for archcurator (XDG on Linux, the platform's own elsewhere)."""
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or os.environ.get("APPDATA") or Path.home())
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Application Support"
    else:
        base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return base / "archcurator"


def default_db_path() -> Path:
    """`$ARCHCURATOR_DB` when set, else `<data folder>/archcurator.duckdb`."""
    env = os.environ.get(ENV_VAR)
    if env:
        return Path(env).expanduser()
    return data_dir() / FILE_NAME


def resolve_db_path(db: str | os.PathLike | None) -> Path:
    """The store file for a `--db` value (None -> the default)."""
    if db is None or db == "":
        return default_db_path()
    return Path(db).expanduser()

"""Helpers of the store tests (a module of its own: `conftest` is a shared name across test folders)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))


def subprocess_env(**extra) -> dict:
    env = dict(os.environ)
    env.pop("ARCHCURATOR_DB", None)
    env["PYTHONPATH"] = os.pathsep.join([str(HERE)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env.update({k: str(v) for k, v in extra.items()})
    return env


def cli(*args, db=None, fake=True, timeout=120, input=None, env_extra=None) -> subprocess.CompletedProcess:
    """Run `archcurator ARGS` in a fresh process (the fake verifier unless fake=False)."""
    argv = [sys.executable, str(HERE / "cli_harness.py")]
    if db is not None:
        argv += ["--db", str(db)]
    argv += [str(a) for a in args]
    env = subprocess_env(**(env_extra or {}))
    if fake:
        env["ARCHCURATOR_TEST_VERIFIER"] = "fake"
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env, input=input)


def write_jsonl(path: Path, records) -> Path:
    with open(path, "w", encoding="utf-8") as fh:
        for r in records:
            fh.write((r if isinstance(r, str) else json.dumps(r)) + "\n")
    return path

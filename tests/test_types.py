"""The type checker is clean on its configured scope ([tool.mypy] in pyproject.toml).

The repository root is the `archcurator` package itself, so mypy runs in a folder that holds one link named
`archcurator` to the root: the scope's module names then resolve to this checkout (not an installed copy).
Run `python tests/test_types.py` to see mypy's own report.
"""
from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = ROOT / "pyproject.toml"
# the scope the issue fixed as the floor: it grows, never shrinks
FLOOR = {"archcurator.store", "archcurator.core.ops", "archcurator.core.checks", "archcurator.core.verify",
         "archcurator.core.graph", "archcurator.tui.app"}


def run_mypy() -> subprocess.CompletedProcess:
    # a cache per checkout, outside it: a second run takes seconds, and nothing is written into the tree
    tag = hashlib.sha256(str(ROOT).encode()).hexdigest()[:12]
    base = Path(tempfile.gettempdir()) / f"archcurator-mypy-{tag}"
    base.mkdir(exist_ok=True)
    link = base / "archcurator"
    if not (link.is_symlink() and link.resolve() == ROOT):
        if link.is_symlink():
            link.unlink()
        link.symlink_to(ROOT, target_is_directory=True)
    env = {k: v for k, v in os.environ.items() if k not in ("MYPYPATH", "PYTHONPATH")}
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(PYPROJECT), "--cache-dir", str(base / "cache"),
         "--no-error-summary", "--show-error-codes"],
        cwd=base, env=env, capture_output=True, text=True, timeout=900)


def configured_scope() -> set[str]:
    conf = tomllib.loads(PYPROJECT.read_text())["tool"]["mypy"]
    return set(conf.get("packages", [])) | set(conf.get("modules", []))


def test_scope_covers_the_floor():
    scope = configured_scope()
    covered = {m for m in FLOOR if any(m == s or m.startswith(s + ".") for s in scope)}
    assert covered == FLOOR, sorted(FLOOR - covered)


@pytest.mark.slow  # a cold mypy run takes minutes; `make check` runs mypy as a step of its own
def test_mypy_is_clean_on_its_scope():
    done = run_mypy()
    errors = [line for line in done.stdout.splitlines() if ": error:" in line]
    assert done.returncode == 0 and not errors, "\n".join(errors[:50]) or done.stdout + done.stderr


if __name__ == "__main__":
    done = run_mypy()
    print(done.stdout + done.stderr, end="")
    sys.exit(done.returncode)

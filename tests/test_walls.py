"""The rooms' walls: core knows no DuckDB/Textual, store knows no UI, CLI commands stay light."""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _imports(package: str):
    for path in (ROOT / package).rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    yield path, alias.name.split(".")[0]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                yield path, node.module.split(".")[0]


@pytest.mark.parametrize("package,forbidden", [
    ("core", {"textual", "duckdb", "store", "tui"}),
    ("store", {"tui", "textual"}),
])
def test_package_never_imports(package, forbidden):
    bad = [f"{p.relative_to(ROOT)} imports {mod}" for p, mod in _imports(package) if mod in forbidden]
    assert not bad, "\n".join(bad)


def test_import_linter_contracts_hold():
    exe = shutil.which("lint-imports")
    if exe is None:
        pytest.skip("import-linter not installed")
    res = subprocess.run([exe], cwd=ROOT, capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr


def _modules_after(code: str) -> set:
    out = subprocess.run([sys.executable, "-c", code + "\nimport sys, json; print(json.dumps(sorted(sys.modules)))"],
                         cwd=ROOT, capture_output=True, text=True, check=True)
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


def test_importing_core_pulls_neither_torch_nor_textual():
    mods = _modules_after("import core.verify, core.ops, core.checks, core.build, core.cost, core.graph")
    assert "torch" not in mods
    assert "textual" not in mods and "duckdb" not in mods


def test_verify_command_never_imports_textual(tmp_path):
    design = ROOT / "tests" / "fixtures" / "tiny_cnn.json"
    code = (
        "import contextlib, io\n"
        "from tui.cli import main\n"
        f"with contextlib.redirect_stdout(io.StringIO()): rc = main(['verify', {str(design)!r}, '--json'])\n"
        "assert rc == 0\n"
    )
    mods = _modules_after(code)
    assert "textual" not in mods
    assert "torch" not in mods


def test_cli_parser_builds_without_textual():
    mods = _modules_after("from tui.cli import build_parser; build_parser()")
    assert "textual" not in mods
    assert "torch" not in mods

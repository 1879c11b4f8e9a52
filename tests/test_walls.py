"""The rooms' walls: core knows no DuckDB/Textual, store knows no UI, CLI commands stay light;
imports are relative within a room and `archcurator.<room>` across rooms."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ROOMS = ("core", "store", "tui", "assets")


def _imports(room: str):
    """(file, module) for every import in `room`, relative ones resolved to their archcurator name."""
    for path in (ROOT / room).rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        package = ["archcurator", *path.relative_to(ROOT).parent.parts]
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    yield path, alias.name, 0
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package[: len(package) - node.level + 1]
                    yield path, ".".join(base + ([node.module] if node.module else [])), node.level
                else:
                    yield path, node.module, 0


def _room_of(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] == "archcurator" and len(parts) > 1:
        return parts[1]
    return None


@pytest.mark.parametrize("room,forbidden", [
    ("core", {"textual", "duckdb", "archcurator.store", "archcurator.tui", "archcurator.assets"}),
    ("store", {"archcurator.tui", "textual"}),
])
def test_room_never_imports(room, forbidden):
    bad = [f"{p.relative_to(ROOT)} imports {mod}" for p, mod, _ in _imports(room)
           if any(mod == f or mod.startswith(f + ".") for f in forbidden)]
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("room", ROOMS)
def test_imports_are_relative_within_a_room_and_named_across(room):
    bad = []
    for p, mod, level in _imports(room):
        top = mod.split(".")[0]
        if top in ROOMS:
            bad.append(f"{p.relative_to(ROOT)}: bare top-level import {mod!r} (use archcurator.{mod})")
        elif level == 0 and _room_of(mod) == room:
            bad.append(f"{p.relative_to(ROOT)}: {mod!r} is in its own room; import it relatively")
    assert not bad, "\n".join(bad)


def test_core_stands_alone():
    """core imports nothing of archcurator outside itself, so the Ray backend can ship it alone."""
    bad = [f"{p.relative_to(ROOT)} imports {mod}" for p, mod, _ in _imports("core")
           if mod.split(".")[0] == "archcurator" and _room_of(mod) != "core"]
    assert not bad, "\n".join(bad)


def test_import_linter_contracts_hold():
    exe = Path(sys.executable).parent / "lint-imports"
    assert exe.exists(), f"lint-imports is not beside {sys.executable}: pip install '.[dev]'"
    res = subprocess.run([str(exe)], cwd=ROOT, capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "broken" in res.stdout and "0 broken" in res.stdout


def test_ruff_is_clean():
    exe = Path(sys.executable).parent / "ruff"
    assert exe.exists(), f"ruff is not beside {sys.executable}: pip install '.[dev]'"
    res = subprocess.run([str(exe), "check", "--no-cache", "."], cwd=ROOT, capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr


def _modules_after(code: str) -> set:
    out = subprocess.run([sys.executable, "-c", code + "\nimport sys, json; print(json.dumps(sorted(sys.modules)))"],
                         cwd=ROOT, capture_output=True, text=True, check=True)
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


def test_importing_core_pulls_neither_torch_nor_textual():
    mods = _modules_after("import archcurator.core.verify, archcurator.core.ops, archcurator.core.checks, "
                          "archcurator.core.build, archcurator.core.cost, archcurator.core.graph")
    assert "torch" not in mods
    assert "textual" not in mods and "duckdb" not in mods


def test_verify_command_never_imports_textual(tmp_path):
    design = ROOT / "tests" / "fixtures" / "tiny_cnn.json"
    code = (
        "import contextlib, io\n"
        "from archcurator.tui.cli import main\n"
        f"with contextlib.redirect_stdout(io.StringIO()): rc = main(['verify', {str(design)!r}, '--json'])\n"
        "assert rc == 0\n"
    )
    mods = _modules_after(code)
    assert "textual" not in mods
    assert "torch" not in mods


def test_cli_parser_builds_without_textual():
    mods = _modules_after("from archcurator.tui.cli import build_parser; build_parser()")
    assert "textual" not in mods
    assert "torch" not in mods

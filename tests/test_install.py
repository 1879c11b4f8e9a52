"""A built wheel installs the project under one name, `archcurator`, and nothing generic beside it."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parents[1]
ROOMS = ("core", "store", "tui", "assets")


def test_package_list_matches_the_rooms_folders():
    """pyproject lists packages by hand (the rooms map under archcurator); a new folder must be listed."""
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(setuptools["packages"])
    folders = {"archcurator"}
    for room in ROOMS:
        for d in [ROOT / room, *(ROOT / room).rglob("*")]:
            if d.is_dir() and d.name != "__pycache__" and any(f.is_file() for f in d.iterdir()) \
                    and not _kept_out_of_the_wheel(d, setuptools.get("exclude-package-data", {})):
                folders.add(".".join(["archcurator", *d.relative_to(ROOT).parts]))
    assert listed == folders


def _kept_out_of_the_wheel(folder: Path, excluded: dict[str, list[str]]) -> bool:
    """A folder whose every file pyproject excludes from the wheel is data kept in the repository only."""
    rel = ".".join(["archcurator", *folder.relative_to(ROOT).parts])
    for package, patterns in excluded.items():
        if not rel.startswith(package + "."):
            continue
        under = folder.relative_to(ROOT / Path(*package.split(".")[1:]))
        if any(under.match(p.rsplit("/", 1)[0]) or under.is_relative_to(p.rsplit("/", 1)[0]) for p in patterns):
            return True
    return False


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    # built from a copy: setuptools writes build/ and *.egg-info beside the sources
    src = tmp_path_factory.mktemp("src")
    for name in ("pyproject.toml", "README.md", "__init__.py", "__main__.py"):
        shutil.copy2(ROOT / name, src / name)
    for room in ROOMS:
        shutil.copytree(ROOT / room, src / room, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    out = tmp_path_factory.mktemp("wheel")
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                           "-w", str(out), str(src)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (whl,) = out.glob("archcurator-*.whl")
    return whl


@pytest.mark.slow
def test_wheel_holds_archcurator_only(wheel):
    with zipfile.ZipFile(wheel) as z:
        tops = {name.split("/")[0] for name in z.namelist()}
        names = set(z.namelist())
    assert {t for t in tops if not t.endswith((".dist-info", ".data"))} == {"archcurator"}
    for must in ("archcurator/__main__.py", "archcurator/core/verify.py", "archcurator/store/migrations/0001_core.sql",
                 "archcurator/tui/app.tcss", "archcurator/assets/checks.json", "archcurator/assets/gpu_prices.json"):
        assert must in names
    assert any(n.startswith("archcurator/assets/demo/") and n.endswith(".jsonl") for n in names)
    assert any(n.startswith("archcurator/assets/architectures/") and n.endswith(".json") for n in names)
    # the study world's staged generation cache is for resuming generation, not for the app
    assert not [n for n in names if "/study-cache/" in n]


@pytest.mark.slow
def test_fresh_venv_install(wheel, tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    py = venv / "bin" / "python"
    proc = subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install", "--no-deps", "-q", str(wheel)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    site = Path(subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    top = {p.name for p in site.iterdir()}
    assert "archcurator" in top
    assert not top & set(ROOMS), f"generic top-level packages installed: {sorted(top & set(ROOMS))}"
    # the project's dependencies come from the test environment, added after the fresh venv's own site
    (site / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    for mod in ROOMS:
        proc = subprocess.run([str(py), "-c", f"import {mod}"], cwd=outside, capture_output=True, text=True)
        assert proc.returncode != 0 and "ModuleNotFoundError" in proc.stderr, (mod, proc.stderr)
    for cmd in ([str(venv / "bin" / "archcurator"), "--help"], [str(py), "-m", "archcurator", "--help"]):
        proc = subprocess.run(cmd, cwd=outside, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        assert re.search(r"usage: archcurator", proc.stdout)
    # installed, the shipped data is found beside the code
    proc = subprocess.run([str(venv / "bin" / "archcurator"), "verify", str(ROOT / "tests/fixtures/tiny_cnn.json"),
                           "--json"], cwd=outside, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and '"verdict": "pass"' in proc.stdout, proc.stderr

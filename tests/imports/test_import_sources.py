"""`archcurator import` of model source folders and of ArchitectureIQ bundles, through the real CLI entry."""

from __future__ import annotations

import contextlib
import io
import shutil
import sys
from pathlib import Path

import duckdb
import pytest

from archcurator.tui.cli import main

ROOT = Path(__file__).resolve().parents[1]
MODELS = ROOT / "parse" / "models"


def _run(*argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(list(argv))
    return rc, out.getvalue(), err.getvalue()


def _rows(db, sql):
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


@pytest.mark.slow
def test_folder_of_sources_imports_every_argument_free_module_as_human(tmp_path):
    src = tmp_path / "models"
    src.mkdir()
    shutil.copy(MODELS / "tiny_cnn.py", src / "tiny_cnn.py")
    (src / "needs_args.py").write_text(
        "import torch.nn as nn\n\n"
        "class Wide(nn.Module):\n"
        "    def __init__(self, width):\n"
        "        super().__init__()\n"
        "        self.fc = nn.Linear(width, width)\n\n"
        "    def forward(self, x):\n"
        "        return self.fc(x)\n"
    )
    marker = tmp_path / "imported-marker"
    db = tmp_path / "s.duckdb"
    rc, out, err = _run("import", str(src), "--db", str(db))
    assert rc == 0, err
    rows = _rows(db, "SELECT id, author FROM designs ORDER BY id")
    assert rows and all(a == "human" for _, a in rows)
    assert all(i.startswith("tiny_cnn.") for i, _ in rows)  # Wide needs an argument: not offered
    assert not marker.exists()


def test_a_source_file_without_entry_imports_its_modules(tmp_path):
    db = tmp_path / "s.duckdb"
    rc, out, err = _run("import", str(MODELS / "tiny_cnn.py"), "--db", str(db))
    assert rc == 0, err
    assert _rows(db, "SELECT count(*) FROM designs WHERE author = 'human'")[0][0] >= 1


@pytest.mark.slow
def test_architectureiq_bundle_goes_to_the_knowledge_base(tmp_path):
    sys.path.insert(0, str(ROOT / "kb"))
    try:
        import aiq_bundle
    finally:
        sys.path.pop(0)
    root = aiq_bundle.write(tmp_path / "bundle", tmp_path / "marker")
    db = tmp_path / "s.duckdb"
    rc, out, err = _run("import", str(root), "--db", str(db))
    assert rc == 0, err
    assert "questions imported 1" in out
    assert _rows(db, "SELECT count(*) FROM aiq_questions WHERE question_id = 'q_suite01'")[0][0] == 1
    assert not (tmp_path / "marker").exists()
    rc, out, _ = _run("import", str(root), "--db", str(db))
    assert rc == 0 and "skipped 1" in out


def test_a_hostile_source_in_a_folder_is_refused_and_the_rest_imports(tmp_path):
    """A ten-line file that would take gigabytes (a list doubled in a loop) is refused by the parser's
    budget as too costly, at its line; the folder's other modules import."""
    src = tmp_path / "models"
    src.mkdir()
    shutil.copy(MODELS / "tiny_cnn.py", src / "tiny_cnn.py")
    (src / "doubling.py").write_text(
        "import torch.nn as nn\n\n"
        "class Doubling(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        s = [1]\n"
        "        for _ in range(60):\n"
        "            s += s\n"
        "        self.fc = nn.Linear(2, 2)\n\n"
        "    def forward(self, x):\n"
        "        return self.fc(x)\n"
    )
    db = tmp_path / "s.duckdb"
    rc, out, err = _run("import", str(src), "--db", str(db))
    rows = _rows(db, "SELECT id FROM designs ORDER BY id")
    assert rows and all(i.startswith("tiny_cnn.") for (i,) in rows)
    assert "too costly to follow" in out + err and "doubling.py:8" in out + err

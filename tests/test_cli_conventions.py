"""Command-line conventions: one error-line form, exit 2, and a subcommand's own usage on a bad flag."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ERROR = re.compile(r"^archcurator (?P<cmd>[a-z][a-z -]*): (?P<where>[^:]+(:\d+)?): \S.*$")


def _cli(*args, cwd=None, db=None):
    env_db = ["--db", str(db)] if db is not None else []
    return subprocess.run([sys.executable, "-m", "archcurator", *env_db, *map(str, args)], capture_output=True,
                          text=True, timeout=120, cwd=cwd)


@pytest.fixture
def bad_json(tmp_path):
    p = tmp_path / "broken.json"
    p.write_text("{not json")
    return p


def _cases(tmp_path, bad_json):
    missing = tmp_path / "absent.json"
    no_store = tmp_path / "nostore.duckdb"
    py = tmp_path / "m.py"
    py.write_text("import torch.nn as nn\nclass M(nn.Module):\n    pass\n")
    return [
        ("verify", [missing], str(missing)),
        ("verify", [bad_json], str(bad_json)),
        ("run", [bad_json, "--check", "forward"], str(bad_json)),
        ("parse", [missing, "--entry", "M"], str(missing)),
        ("parse", [py, "--entry", "Nope"], str(py)),
        ("import", [missing], str(missing)),
        ("report", ["refusals"], str(no_store)),
        ("export", ["--out", tmp_path / "o"], str(no_store)),
        ("archive", ["x"], str(no_store)),
    ]


def test_every_error_line_has_one_form(tmp_path, bad_json):
    no_store = tmp_path / "nostore.duckdb"
    for cmd, args, where in _cases(tmp_path, bad_json):
        p = _cli(cmd, *args, db=no_store)
        lines = p.stderr.strip().splitlines()
        assert p.returncode == 2, (cmd, args, p.stderr)
        assert len(lines) == 1, (cmd, lines)
        m = ERROR.match(lines[0])
        assert m, (cmd, lines[0])
        assert m["cmd"] == cmd and lines[0].startswith(f"archcurator {cmd}: {where}: "), lines[0]
    assert not no_store.exists()


@pytest.mark.parametrize("argv,usage", [
    (["verify", "x.json", "--bogus"], "usage: archcurator verify"),
    (["report", "refusals", "--bogus"], "usage: archcurator report refusals"),
    (["kb", "merge", "1", "2", "--bogus"], "usage: archcurator kb merge"),
    (["export", "--out", "x", "--bogus"], "usage: archcurator export"),
])
def test_a_bad_flag_prints_the_subcommands_usage(argv, usage):
    p = _cli(*argv)
    assert p.returncode == 2
    assert p.stderr.startswith(usage), p.stderr
    assert "unrecognized arguments: --bogus" in p.stderr

"""Command-line conventions: one error-line form, exit 2, and a subcommand's own usage on a bad flag."""

from __future__ import annotations

import json
import os
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
        ("repair", [bad_json], str(bad_json)),
        ("repair", [missing, "--json"], str(missing)),
        ("parse", [missing, "--entry", "M"], str(missing)),
        ("parse", [py, "--entry", "Nope"], str(py)),
        ("import", [missing], str(missing)),
        ("report", ["refusals"], str(no_store)),
        ("export", ["--out", tmp_path / "o"], str(no_store)),
        ("archive", ["x"], str(no_store)),
    ]


@pytest.mark.slow
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


def test_files_after_a_flag_still_belong_to_the_command(tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    for name, path in (("first", a), ("second", b)):
        g = json.loads((ROOT / "tests" / "fixtures" / "tiny_cnn.json").read_text())
        g["name"] = name
        g["nodes"][-1]["args"]["out_features"] = 10 + len(name)
        path.write_text(json.dumps(g))
    p = _cli("import", a, "--json", b, db=tmp_path / "s.duckdb")
    assert p.returncode == 0, p.stderr
    assert sorted(json.loads(p.stdout)["imported"]) == ["first", "second"]


@pytest.mark.parametrize("argv,problem", [
    (["run", "x.json", "--batch", "0"], "argument --batch: must be at least 1, got 0"),
    (["run", "x.json", "--time-limit", "-1"], "argument --time-limit: must be a positive number"),
    (["import", "x.json", "--workers", "-3"], "argument --workers: must be at least 1, got -3"),
])
def test_nonsense_numbers_are_refused_at_the_door(argv, problem):
    p = _cli(*argv)
    assert p.returncode == 2 and problem in p.stderr


def test_export_refuses_an_empty_or_mismatched_target(tmp_path):
    db = tmp_path / "s.duckdb"
    assert _cli("import", ROOT / "tests" / "fixtures" / "tiny_cnn.json", db=db).returncode == 0
    before = set(tmp_path.iterdir())
    for out, words in (("", "name a file"), ("-", "name a file"), (tmp_path / "x.csv", "pass --format csv")):
        p = _cli("export", "--out", out, cwd=tmp_path, db=db)
        assert p.returncode == 2 and words in p.stderr, p.stderr
        assert ERROR.match(p.stderr.strip())
    assert set(tmp_path.iterdir()) == before


def test_a_file_name_too_long_is_one_line(tmp_path):
    long = tmp_path / ("a" * 300 + ".json")
    for argv in (["import", long], ["export", "--format", "csv", "--out", tmp_path / ("b" * 300 + ".csv")],
                 ["verify", long]):
        p = _cli(*argv, db=tmp_path / ("c" * 300 + ".duckdb") if argv[0] == "import" else tmp_path / "s.duckdb")
        lines = p.stderr.strip().splitlines()
        assert p.returncode == 2 and len(lines) == 1 and lines[0].startswith(f"archcurator {argv[0]}: "), p.stderr


def _into_a_closed_pipe(*args):
    """The command with its stdout a pipe whose reader is already gone (`archcurator … | head -1` once head
    has read its line): every write meets EPIPE, deterministically, whatever the output's size."""
    import os

    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run([sys.executable, "-m", "archcurator", *map(str, args)], stdout=write_end,
                              stderr=subprocess.PIPE, text=True, timeout=120)
    finally:
        os.close(write_end)


def test_a_reader_closing_early_is_silent_and_exits_141(tmp_path):
    """A piped reader that stops early is no error of the command: nothing on stderr (no traceback, no
    "Broken pipe" line) and the status a process killed by SIGPIPE reports from a shell, 141, which none of
    SPEC's statuses (0, 1, 2) nor an interrupt (130) is. The fast path of `verify FILE --json`, a Rich table
    (verify, checks, kb list) and plain prints (checks --json, export) all end the same way."""
    db = tmp_path / "s.duckdb"
    assert _cli("import", ROOT / "tests" / "fixtures" / "tiny_cnn.json", db=db).returncode == 0
    design = ROOT / "assets" / "architectures" / "resnet50.json"
    for args in (["verify", design, "--json"], ["verify", design], ["checks"], ["checks", "--json"],
                 ["kb", "list", "--db", db], ["export", "--format", "csv", "--out", tmp_path / "out", "--db", db]):
        res = _into_a_closed_pipe(*args)
        assert (res.returncode, res.stderr) == (141, ""), args


def test_verify_reads_a_design_from_standard_input(tmp_path, bad_json):
    """`verify -` reads the design from standard input (a script or an agent piping its proposal), gives
    the answer a file gets, and names standard input in an error line."""
    design = ROOT / "assets" / "architectures" / "alexnet.json"
    from_file = _cli("verify", design, "--json")
    piped = subprocess.run([sys.executable, "-m", "archcurator", "verify", "-", "--json"], capture_output=True,
                           text=True, timeout=120, input=design.read_text())
    assert piped.returncode == 0 and json.loads(piped.stdout) == json.loads(from_file.stdout)
    broken = subprocess.run([sys.executable, "-m", "archcurator", "verify", "-"], capture_output=True, text=True,
                            timeout=120, input=bad_json.read_text())
    lines = broken.stderr.strip().splitlines()
    assert broken.returncode == 2 and len(lines) == 1 and lines[0].startswith("archcurator verify: <stdin>: ")
    huge = subprocess.run([sys.executable, "-m", "archcurator", "verify", "-"], capture_output=True, timeout=120,
                          input=b" " * ((64 << 20) + 1))
    assert huge.returncode == 2 and b"too large" in huge.stderr


def test_verify_from_a_closed_standard_input_says_so():
    """`verify - <&-`: Python starts with no stdin stream at all; the answer is the one-line read error
    (exit 2), not a traceback (an outside tester's find)."""
    proc = subprocess.run([sys.executable, "-m", "archcurator", "verify", "-"], capture_output=True, text=True,
                          timeout=120, preexec_fn=lambda: os.close(0))
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip() == "archcurator verify: <stdin>: cannot read: standard input is closed"


def test_bare_command_without_a_terminal_prints_a_line_instead_of_waiting():
    """`archcurator | head`: the app would wait for keys nobody sees; a line says why and how on, exit 2."""
    proc = subprocess.run([sys.executable, "-m", "archcurator"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "needs a terminal" in proc.stderr and proc.stdout == ""


def test_verify_with_standard_output_closed_answers_by_its_exit_code():
    design = ROOT / "assets" / "architectures" / "alexnet.json"
    proc = subprocess.run([sys.executable, "-m", "archcurator", "verify", str(design)], stderr=subprocess.PIPE,
                          timeout=120, preexec_fn=lambda: os.close(1))
    assert proc.returncode == 0 and b"Traceback" not in proc.stderr

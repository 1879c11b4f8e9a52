"""Hostile files and flags through the command line: one line naming the file (or flag) and the
problem, exit 2, in bounded time; never a traceback, a hang on a FIFO or an endless read.

Each test failed before its fix (issue 12).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "tests" / "fixtures" / "tiny_cnn.json"
MODELS = ROOT / "tests" / "parse" / "models"


def cli(*args, timeout=120):
    return subprocess.run([sys.executable, "-m", "archcurator", *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)


def one_line(r, command: str, where) -> str:
    assert r.returncode == 2, (r.returncode, r.stdout[-500:], r.stderr[-2000:])
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    assert lines[0].startswith(f"archcurator {command}: {where}"), lines[0]
    return lines[0]


@pytest.fixture
def fifo(tmp_path):
    p = tmp_path / "design.json"
    os.mkfifo(p)
    return p


@pytest.mark.parametrize("command", [["verify"], ["run", "--check", "forward", "--no-record"]])
def test_a_fifo_is_refused_not_waited_on(fifo, command):
    r = cli(*command, fifo, timeout=60)
    assert "FIFO" in one_line(r, command[0], fifo)


@pytest.mark.parametrize("command", [["verify"], ["run", "--check", "forward", "--no-record"]])
def test_a_link_to_an_endless_device_is_refused(tmp_path, command):
    p = tmp_path / "zero.json"
    p.symlink_to("/dev/zero")
    r = cli(*command, p, timeout=60)
    assert "device" in one_line(r, command[0], p)


def test_a_huge_file_is_refused_before_it_is_read(tmp_path):
    p = tmp_path / "huge.json"
    with open(p, "wb") as fh:
        fh.truncate(10 << 30)  # 10 GB, sparse
    r = cli("verify", p, "--json", timeout=60)
    assert "too large" in one_line(r, "verify", p)


def test_run_reads_its_file_through_the_door(tmp_path):
    p = tmp_path / "deep.json"
    p.write_text('{"format": "archgraph/1", "meta": ' + "[" * 100_000 + "]" * 100_000 + "}")
    r = cli("run", p, "--check", "forward", "--no-record", "--json")
    assert "nested deeper" in one_line(r, "run", p)


@pytest.mark.parametrize("value,why", [
    ("[" * 50_000 + "]" * 50_000, "nested deeper"),
    ('{"num_classes": ' + "9" * 5000 + "}", "digits"),
    ('{"num_classes": NaN}', "NaN"),
], ids=["deep", "digits", "nan"])
@pytest.mark.slow
def test_parse_args_are_read_through_the_door(value, why):
    r = cli("parse", MODELS / "classic.py", "--entry", "MnistNet", "--args", value, "--json")
    assert why in one_line(r, "parse", MODELS / "classic.py")


@pytest.mark.parametrize("value", ["2," + "9" * 5000, "2,\u00b2", "2," + "1" * 25])
def test_parse_input_sizes_are_one_line(value):
    r = cli("parse", MODELS / "classic.py", "--entry", "MnistNet", "--input", value, "--json")
    one_line(r, "parse", MODELS / "classic.py")


def test_import_args_are_read_through_the_door(tmp_path):
    db = tmp_path / "s.duckdb"
    r = cli("import", MODELS / "classic.py", "--entry", "MnistNet", "--args", "[" * 50_000, "--db", db)
    assert "nested deeper" in one_line(r, "import", "--args")
    assert not (tmp_path / "s.duckdb").exists()


def test_import_refuses_a_fifo_named_as_a_batch_and_rejects_one_in_a_folder(tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    os.mkfifo(folder / "pipe.jsonl")
    r = cli("import", folder / "pipe.jsonl", "--db", tmp_path / "s.duckdb", timeout=60)
    assert "not a regular file" in one_line(r, "import", folder / "pipe.jsonl")
    (folder / "d.json").write_text(TINY.read_text())
    r = cli("import", folder, "--db", tmp_path / "s.duckdb", "--json", timeout=120)
    assert r.returncode == 1, r.stderr  # the FIFO is named as a rejection, never opened; the rest imports
    assert r.stderr.strip() == f"archcurator import: {folder / 'pipe.jsonl'}: rejected: is not a regular file, not read"
    assert json.loads(r.stdout)["imported"] == ["tiny-cnn"]


def test_a_batch_whose_first_line_is_hostile_imports_the_rest(tmp_path):
    """`import` first asks whether a batch is a question file by reading its first line: that
    read goes through the door too (a deep first line was a RecursionError before any import)."""
    graph = json.loads(TINY.read_text())
    good = json.dumps({"id": "d2", "author": "agent", "graph": graph})
    p = tmp_path / "b.jsonl"
    p.write_text("[" * 100_000 + "\n" + good + "\n")
    r = cli("import", p, "--db", tmp_path / "s.duckdb")
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.splitlines() == [f"archcurator import: {p}:1: rejected: malformed JSON at column 101: "
                                     "nested deeper than 100 levels"]
    assert "imported 1" in r.stdout


def _file_modes_bind_for_root():
    """In the child: file modes bind even for root (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH and
    CAP_FOWNER dropped from the bounding set; the exec that follows recomputes root's capabilities)."""
    if os.geteuid() == 0:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        for cap in (1, 2, 3):
            if libc.prctl(24, cap, 0, 0, 0) != 0:  # PR_CAPBSET_DROP
                raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


@pytest.mark.parametrize("problem,words", [
    ("missing", "no such file"), ("no-permission", "cannot read: permission denied"),
    ("latin-1", "cannot read: not UTF-8 text (byte 10)"), ("folder", "is a folder, not a file to read"),
])
def test_a_file_that_cannot_be_read_is_worded_the_same_by_verify_run_and_import(tmp_path, problem, words):
    """run said 'No such file or directory', 'Permission denied' and 'not UTF-8 text' where verify
    and import said 'no such file', 'cannot read: Permission denied', '... (byte N)'."""
    p = tmp_path / "design.json"
    if problem == "no-permission":
        p.write_text(TINY.read_text())
        p.chmod(0)
    elif problem == "latin-1":
        p.write_bytes(b'{"name": "\xe9"}')
    elif problem == "folder":
        p.mkdir()
    commands = [("verify", [p]), ("run", [p, "--no-record"])]
    if problem in ("no-permission", "latin-1"):  # import reads folders and says so of a missing path
        commands.append(("import", [p, "--db", tmp_path / "s.duckdb"]))
    for command, args in commands:
        r = subprocess.run([sys.executable, "-m", "archcurator", command, *map(str, args)], capture_output=True,
                           text=True, timeout=120, stdin=subprocess.DEVNULL, preexec_fn=_file_modes_bind_for_root)
        assert one_line(r, command, p) == f"archcurator {command}: {p}: {words}", command


@pytest.mark.parametrize("command,args", [
    ("verify", []), ("run", ["--no-record"]), ("repair", []), ("parse", ["--entry", "M"]), ("import", ["--db", "s"]),
])
def test_an_empty_name_is_refused_as_given_and_import_does_not_take_the_working_folder(tmp_path, command, args):
    """An empty argument (an unset shell variable) is Path('') — the working folder: verify said
    ': .: is a folder', parse ": : no such file", and import stored every design under the working folder."""
    (tmp_path / "d.json").write_text(TINY.read_text())
    args = [str(tmp_path / a) if a == "s" else a for a in args]
    r = subprocess.run([sys.executable, "-m", "archcurator", command, "", *args], capture_output=True, text=True,
                       timeout=120, stdin=subprocess.DEVNULL, cwd=tmp_path)
    line = one_line(r, command, "''")
    assert not line.startswith(f"archcurator {command}: '': :"), line
    assert not (tmp_path / "s").exists()  # nothing imported: no store made

"""`archcurator verify FILE --json` skips argparse (tui/cli.py reads that one command line itself) and imports
only what verifying needs: its answer is the full path's byte for byte, and a fresh process running it
imports none of the app's, the store's or the runs' libraries, nor the stdlib modules whose import was most
of its start-up (bench/bench_startup.py measures it against `python -c pass`)."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from pathlib import Path

import pytest

from archcurator.tui import cli

ROOT = Path(__file__).resolve().parents[1]
ZOO = sorted((ROOT / "assets" / "architectures").glob("*.json"))
TINY = ROOT / "tests" / "fixtures" / "tiny_cnn.json"
# the app's, the store's and the runs' libraries; argparse and the other commands' modules; and what
# dataclasses and typing bring (inspect, ast, dis, tokenize), which core/valueclass.py stands in for
NOT_IMPORTED = ("textual", "rich", "duckdb", "torch", "networkx", "numpy", "argparse", "dataclasses", "inspect",
                "typing", "ast", "archcurator.tui.commands.import_cmd", "archcurator.tui.commands.output",
                "archcurator.tui.sanitise", "archcurator.store")


def _broken(tmp_path: Path) -> list[Path]:
    cases = {"bad.json": b'{"format": "archgraph/1", ', "empty.json": b"", "latin1.json": b"\xff\xfe",
             "list.json": b"[]", "format.json": b'{"format": "archgraph/2"}',
             "blocked.json": b'{"format": "archgraph/1", "inputs": [{"id": "x", "shape": ["B", 3]}], "nodes": '
                             b'[{"id": "fc", "op": "Linear", "args": {"in_features": 4, "out_features": 2}, '
                             b'"in": ["x"]}], "outputs": ["fc"]}',
             "esc\x1b[31m.json": b"{"}
    for name, data in cases.items():
        (tmp_path / name).write_bytes(data)
    (tmp_path / "folder.json").mkdir()
    return [*(tmp_path / n for n in cases), tmp_path / "folder.json", tmp_path / "absent.json"]


def _answer(argv: list[str], capsys, full: bool, monkeypatch) -> tuple[int, str, str]:
    if full:  # argparse reads the line, as it reads every other command
        monkeypatch.setattr(cli, "_verify_json_file", lambda argv: None)
    try:
        rc = cli.main(argv)
    finally:
        monkeypatch.undo()
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_the_fast_path_answers_what_argparse_s_path_answers(tmp_path, capsys, monkeypatch):
    files = [*ZOO, *_broken(tmp_path)]
    assert len(ZOO) >= 60
    verdicts = set()
    for i, f in enumerate(files):
        # the flag before the file on every other design (argparse reads both orders alike)
        for argv in (["verify", str(f), "--json"], ["verify", "--json", str(f)])[:1 + (i % 2 or f in files[-9:])]:
            assert cli._verify_json_file(argv) == str(f)
            fast = _answer(argv, capsys, False, monkeypatch)
            assert fast == _answer(argv, capsys, True, monkeypatch), argv
        verdicts.add(fast[1].split('"verdict": "')[1][:4] if fast[0] == 0 else f"exit {fast[0]}")
    assert verdicts == {"pass", "warn", "bloc", "exit 2"}, "the designs should reach every kind of answer"
    # the collector is turned off only in a process of its own (tui/cli.py), never in a caller's
    assert gc.isenabled()


@pytest.mark.parametrize("argv", [["verify", "-x.json", "--json"], ["verify", "a.json", "--js"],
                                  ["verify", "--", "a.json", "--json"], ["verify", "a.json", "--json", "--json"],
                                  ["--db", "s.duckdb", "verify", "a.json", "--json"], ["verify", "a.json"],
                                  ["verify", "-h", "--json"], ["parse", "a.json", "--json"]])
def test_any_other_line_is_left_to_argparse(argv):
    assert cli._verify_json_file(argv) is None


def test_a_fresh_verify_json_process_imports_only_what_verifying_needs(tmp_path):
    names = tmp_path / "modules.txt"
    wrapper = ("import atexit, runpy, sys\n"
               f"atexit.register(lambda: open({str(names)!r}, 'w').write('\\n'.join(sorted(sys.modules))))\n"
               f"sys.argv = ['archcurator', 'verify', {str(TINY)!r}, '--json']\n"
               "runpy.run_module('archcurator', run_name='__main__', alter_sys=True)\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    proc = subprocess.run([sys.executable, "-c", wrapper], capture_output=True, text=True, timeout=120, env=env,
                          cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith('{\n  "verdict": ')
    loaded = set(names.read_text().split())
    assert "archcurator.core.verify" in loaded
    pulled = sorted(m for m in loaded if m.split(".")[0] in NOT_IMPORTED or m in NOT_IMPORTED)
    assert not pulled, f"verify --json imported {pulled}: import them where they are used (start-up counts)"
    plain = subprocess.run([sys.executable, "-m", "archcurator", "verify", str(TINY), "--json"], capture_output=True,
                           text=True, timeout=120, env=env, cwd=tmp_path)
    assert plain.stdout == proc.stdout and plain.returncode == 0

"""`archcurator run FILE.json --check forward|train --json`, as a user runs it."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DESIGNS = Path(__file__).parent / "designs"
SPEC_KEYS = {"status", "exception", "message", "device", "seconds"}


def archcurator(*args, db, timeout=300):
    return subprocess.run([sys.executable, "-m", "archcurator.tui.cli", "--db", str(db), *args],
                          capture_output=True, text=True, timeout=timeout, cwd=REPO)


@pytest.mark.slow
def test_forward_json_answer_has_the_spec_shape_and_is_stored(tmp_path):
    db = tmp_path / "store.duckdb"
    out = archcurator("run", str(DESIGNS / "width_mismatch.json"), "--check", "forward",
                      "--device", "cpu", "--json", db=db)
    assert out.returncode == 0, out.stderr
    answer = json.loads(out.stdout)
    assert SPEC_KEYS <= set(answer)
    assert answer["status"] == "failed" and answer["exception"] == "RuntimeError"
    assert answer["device"] == "cpu"
    assert isinstance(answer["seconds"], float) and isinstance(answer["message"], str)

    from archcurator.store.runs import get_run

    row = get_run(str(db), answer["store_run_id"])
    assert row["status"] == "failed" and row["exception"] == "RuntimeError"
    assert row["design_id"].startswith("file:") and row["kind"] == "forward"
    assert row["backend"] == "local" and row["spec"]["kind"] == "forward"


@pytest.mark.slow
def test_ok_and_build_error_answers(tmp_path):
    db = tmp_path / "store.duckdb"
    ok = json.loads(archcurator("run", str(DESIGNS / "mlp.json"), "--check", "forward", "--json",
                                "--batch", "5", db=db).stdout)
    assert ok["status"] == "ok" and ok["exception"] is None
    assert ok["metrics"]["output_shapes"] == [[5, 4]]
    bad = json.loads(archcurator("run", str(DESIGNS / "unbuildable.json"), "--json", db=db).stdout)
    assert bad["status"] == "failed" and bad["exception"] == "BuildError"


@pytest.mark.slow
def test_train_check_reports_the_loss(tmp_path):
    out = archcurator("run", str(DESIGNS / "mlp.json"), "--check", "train", "--steps", "40",
                      "--json", "--no-record", db=tmp_path / "s.duckdb")
    assert out.returncode == 0, out.stderr
    answer = json.loads(out.stdout)
    assert answer["status"] == "ok" and answer["kind"] == "train"
    m = answer["metrics"]
    assert m["steps"] == 40 and m["loss_last"] < m["loss_first"]


def test_unreadable_input_is_one_line_and_exit_2(tmp_path):
    db = tmp_path / "store.duckdb"
    missing = tmp_path / "nope.json"
    out = archcurator("run", str(missing), "--json", db=db)
    assert out.returncode == 2
    assert out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and str(missing) in lines[0]

    broken = tmp_path / "broken.json"
    broken.write_text("{ not json")
    out = archcurator("run", str(broken), "--json", db=db)
    assert out.returncode == 2 and str(broken) in out.stderr and len(out.stderr.strip().splitlines()) == 1

    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps({"format": "archgraph/0", "inputs": [], "nodes": [], "outputs": []}))
    out = archcurator("run", str(wrong), "--json", db=db)
    assert out.returncode == 2 and str(wrong) in out.stderr
    assert not db.exists() or _runs(db) == 0  # nothing half-written


def _runs(db) -> int:
    from archcurator.store.runs import list_runs

    return len(list_runs(str(db)))


@pytest.mark.slow
def test_cuda_asked_for_on_a_machine_without_one_says_so(tmp_path):
    if shutil.which("nvidia-smi"):
        pytest.skip("this machine has a GPU: the cuda path is the real one")
    p = archcurator("run", DESIGNS / "mlp.json", "--check", "forward", "--device", "cuda", "--json",
                    db=tmp_path / "s.duckdb")
    answer = json.loads(p.stdout)
    assert answer["status"] == "ok" and answer["device"] == "cpu"
    assert "CUDA was asked for" in answer["message"]
    assert p.stderr.strip().startswith("archcurator run: --device: CUDA was asked for")

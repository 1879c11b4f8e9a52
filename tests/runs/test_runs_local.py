"""The local backend with real child processes: outcomes, limits, cancel,
outside kills, the queue and training."""

from __future__ import annotations

import os
import signal
import statistics
import time

import pytest

import archcurator.core.aiq.run_kind  # noqa: F401 - registers the aiq run kind these tests launch
from archcurator.core.runs import MetricEvent, ProgressEvent, ResultEvent, RunSpec, StatusEvent
from archcurator.core.runs.local import LocalRunner

FOREVER = 10**8  # training steps that never finish in a test


def _wait_for_metric(handle, timeout=60.0):
    for ev in handle.events(timeout=timeout):
        if isinstance(ev, MetricEvent):
            return ev
        if isinstance(ev, ResultEvent):
            pytest.fail(f"run ended before training started: {ev.result.to_dict()}")
    pytest.fail("no metric event in time")


def _gone(pid: int) -> bool:
    """No such process, or only its zombie (an orphan's reaper may be slow)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except (FileNotFoundError, ProcessLookupError):
        return True


@pytest.mark.slow
def test_forward_ok_on_a_clean_design(runner, design):
    h = runner.submit(RunSpec(kind="forward", design=design("mlp"), batch_size=3))
    events = list(h.events(timeout=120))
    res = h.wait(1)
    assert res is not None and res.status == "ok", res
    assert res.exception is None
    assert res.device == "cpu" or res.device  # a device name (the GPU's on a GPU machine)
    assert res.metrics["output_shapes"] == [[3, 4]]
    assert res.metrics["params"] == 8 * 32 + 32 + 32 * 4 + 4
    assert res.seconds > 0 and res.backend == "local" and res.kind == "forward"
    kinds = [type(e).__name__ for e in events]
    assert kinds[0] == "StatusEvent" and kinds[-1] == "ResultEvent"
    assert [e.status for e in events if isinstance(e, StatusEvent)] == ["queued", "running"]
    assert any(isinstance(e, ProgressEvent) and e.stage == "forward" for e in events)
    assert all(e.to_dict()["type"] for e in events)
    assert list(h.events()) == events  # replayable


@pytest.mark.slow
def test_forward_width_mismatch_fails_with_runtime_error(runner, design):
    res = runner.submit(RunSpec(kind="forward", design=design("width_mismatch"))).wait(120)
    assert res.status == "failed"
    assert res.exception == "RuntimeError"
    assert "cannot be multiplied" in res.message
    assert "RuntimeError" in res.log_tail  # the child's traceback comes back as its log


@pytest.mark.slow
def test_unbuildable_design_fails_with_the_builders_error(runner, design):
    res = runner.submit(RunSpec(kind="forward", design=design("unbuildable"))).wait(120)
    assert res.status == "failed"
    assert res.exception == "BuildError"
    assert "Mamba" in res.message


@pytest.mark.slow
def test_time_limit_gives_timeout(runner, design):
    t = time.monotonic()
    h = runner.submit(RunSpec(kind="train", design=design("mlp"), steps=FOREVER, time_limit_s=4))
    res = h.wait(60)
    assert res.status == "timeout", res
    assert "time limit of 4 s" in res.message
    assert 4 <= res.seconds < 4 + 2.5
    assert time.monotonic() - t < 30
    assert _gone(h.pid)


@pytest.mark.slow
def test_memory_limit_gives_killed_with_the_reason(runner, design):
    # fc wants a 2 GiB weight; the run may take 256 MB on top of python and torch
    res = runner.submit(RunSpec(kind="forward", design=design("huge"), memory_limit_mb=256)).wait(120)
    assert res.status == "killed", res
    assert "memory limit of 256 MB exceeded" in res.message


@pytest.mark.slow
def test_cancel_ends_the_child_within_two_seconds(runner, design):
    h = runner.submit(RunSpec(kind="train", design=design("mlp"), steps=FOREVER))
    _wait_for_metric(h)
    assert h.status() == "running"
    t = time.monotonic()
    h.cancel()
    res = h.wait(5)
    elapsed = time.monotonic() - t
    assert res is not None and res.status == "cancelled", res
    assert elapsed < 2.0, elapsed
    assert _gone(h.pid)


@pytest.mark.slow
def test_child_killed_from_outside_is_killed_not_a_hang(runner, design):
    h = runner.submit(RunSpec(kind="train", design=design("mlp"), steps=FOREVER))
    _wait_for_metric(h)
    t = time.monotonic()
    os.kill(h.pid, signal.SIGKILL)
    res = h.wait(5)
    assert res is not None, "the launcher hung on a dead child"
    assert res.status == "killed"
    assert "SIGKILL" in res.message
    assert time.monotonic() - t < 2.0


@pytest.mark.slow
def test_training_loss_falls(runner, design):
    steps = 60
    h = runner.submit(RunSpec(kind="train", design=design("mlp"), steps=steps, batch_size=16))
    losses = [ev.value for ev in h.events(timeout=120) if isinstance(ev, MetricEvent) and ev.name == "loss"]
    res = h.wait(1)
    assert res.status == "ok", res
    assert len(losses) == steps  # one metric event per step
    assert statistics.mean(losses[-5:]) < 0.9 * statistics.mean(losses[:5])
    assert res.metrics["loss"] == "cross_entropy"  # from the design's train.loss
    assert res.metrics["loss_last"] == losses[-1]
    assert len(res.metrics["loss_curve"]) == steps


@pytest.mark.slow
def test_one_run_at_a_time_others_queued(design):
    r = LocalRunner(gpu_ids=[], cpu_slots=1)
    first = r.submit(RunSpec(kind="train", design=design("mlp"), steps=FOREVER))
    second = r.submit(RunSpec(kind="forward", design=design("mlp")))
    third = r.submit(RunSpec(kind="forward", design=design("mlp")))
    try:
        _wait_for_metric(first)
        assert second.status() == "queued" and third.status() == "queued"
        assert second.pid is None
        third.cancel()  # a queued run that is cancelled never starts
        res3 = third.wait(5)
        assert res3.status == "cancelled" and third.pid is None
        assert second.status() == "queued"
        first.cancel()
        assert first.wait(5).status == "cancelled"
        res2 = second.wait(120)
        assert res2.status == "ok"
        assert second.started_at >= first.ended_at
    finally:
        r.cancel_all()


def test_spec_and_result_round_trip():
    from archcurator.core.runs.spec import RunResult, SpecError, event_from_dict

    spec = RunSpec(kind="train", design={"format": "archgraph/1"}, steps=5, memory_limit_mb=64,
                   tags={"design_id": "d1"})
    assert RunSpec.from_json(spec.to_json()) == spec
    assert RunSpec.from_z64(spec.to_z64()) == spec
    for bad in ({"kind": "fly"}, {"kind": "forward"}, {"kind": "forward", "design": {}, "device": "tpu"},
                {"kind": "forward", "design": {}, "bogus": 1}):
        with pytest.raises(SpecError):
            RunSpec.from_dict(bad)
    res = RunResult(status="failed", exception="RuntimeError", message="m", device="cpu", seconds=1.5)
    ev = ResultEvent(result=res, run_id="r")
    back = event_from_dict(ev.to_dict())
    assert back.result == res
    assert set(res.to_answer()) >= {"status", "exception", "message", "device", "seconds"}
    with pytest.raises(SpecError):
        RunResult(status="crashed")


def test_memory_errors_are_classified_as_killed():
    from archcurator.core.runs.child import classify

    assert classify(MemoryError(), 128)[0:2] == ("killed", "MemoryError")
    try:
        try:
            raise RuntimeError("DefaultCPUAllocator: can't allocate memory: you tried to allocate 1 bytes")
        except RuntimeError as inner:
            raise ValueError("wrapped") from inner
    except ValueError as exc:
        status, name, msg = classify(exc, 64)
    assert (status, name) == ("killed", "RuntimeError") and "memory limit of 64 MB" in msg
    assert classify(IndexError("index out of range in self"), None) == (
        "failed", "IndexError", "index out of range in self")


@pytest.mark.slow
def test_child_stdout_carries_only_events(tmp_path, design):
    """Run the child by hand: every stdout line is an event, the last the result."""
    import subprocess
    import sys

    from archcurator.core.runs.spec import EVENT_PREFIX

    spec_file = tmp_path / "spec.json"
    spec_file.write_text(RunSpec(kind="forward", design=design("width_mismatch")).to_json())
    out = subprocess.run([sys.executable, "-m", "archcurator.core.runs.child", str(spec_file)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0
    lines = out.stdout.splitlines()
    assert lines and all(line.startswith(EVENT_PREFIX) for line in lines)
    assert '"type":"result"' in lines[-1] and '"RuntimeError"' in lines[-1]
    assert "Traceback" in out.stderr


@pytest.mark.slow
def test_child_ends_when_its_launcher_dies(tmp_path):
    """A launcher (the app) that dies takes its runs with it."""
    import subprocess
    import sys
    from pathlib import Path

    design_file = Path(__file__).parent / "designs" / "mlp.json"
    script = f"""
import json, os, sys
from archcurator.core.runs import RunSpec, MetricEvent
from archcurator.core.runs.local import LocalRunner
h = LocalRunner().submit(RunSpec(kind="train", design=json.load(open({str(design_file)!r})), steps={FOREVER}))
for ev in h.events(timeout=120):
    if isinstance(ev, MetricEvent):
        print(h.pid, flush=True)
        os._exit(0)
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=180,
                         cwd=Path(__file__).resolve().parents[2])
    pid = int(out.stdout.strip())
    deadline = time.monotonic() + 5
    while not _gone(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _gone(pid)


@pytest.mark.slow
def test_aiq_run_reports_the_executors_error(runner):
    """The aiq kind hands its payload to core.aiq.execute.run_candidate in the
    child; a payload it cannot use is a clean failure with the error's class."""
    res = runner.submit(RunSpec(kind="aiq", payload={"not": "a candidate"})).wait(120)
    assert res.status == "failed", res
    assert res.exception in ("KeyError", "SpecError", "ImportError", "ModuleNotFoundError")
    assert res.kind == "aiq"

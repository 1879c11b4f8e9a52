"""The Ray backend against a real local Ray head on its own ports.

The run goes through the same code path as a user's:
`archcurator run FILE.json --check forward --cluster http://127.0.0.1:PORT --json`.
Skips (and says why) when Ray is not installed: `pip install 'archcurator[ray]'`.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.ray, pytest.mark.slow,
              pytest.mark.filterwarnings("ignore:ssl=None is deprecated:DeprecationWarning")]

REPO = Path(__file__).resolve().parents[2]
DESIGNS = Path(__file__).parent / "designs"
def test_forward_run_through_a_real_ray_head(ray_head, tmp_path):
    t0 = time.monotonic()
    out = subprocess.run(
        [sys.executable, "-m", "archcurator.tui.cli", "--db", str(tmp_path / "store.duckdb"), "run",
         str(DESIGNS / "width_mismatch.json"), "--check", "forward", "--device", "cpu",
         "--cluster", ray_head["url"], "--json"],
        capture_output=True, text=True, timeout=300, cwd=REPO, env=ray_head["env"])
    took = time.monotonic() - t0
    assert out.returncode == 0, out.stderr
    answer = json.loads(out.stdout)
    print(f"Ray forward run: {took:.1f} s end to end, child {answer['seconds']} s", file=sys.stderr)
    assert answer["backend"] == "ray"
    assert answer["status"] == "failed" and answer["exception"] == "RuntimeError", answer
    assert "cannot be multiplied" in answer["message"]
    assert answer["device"] == "cpu"
    assert answer["metrics"]["ray_job_id"].startswith("archcurator-run-")


def test_ray_ok_run_events_and_cancel(ray_head):
    from archcurator.core.runs import MetricEvent, RunSpec
    from archcurator.core.runs.ray_backend import RayRunner

    runner = RayRunner(ray_head["url"])
    h = runner.submit(RunSpec(kind="forward", design=json.loads((DESIGNS / "mlp.json").read_text()),
                              device="cpu"))
    events = list(h.events(timeout=240))
    res = h.wait(5)
    assert res is not None and res.status == "ok", res
    # a forward check runs at the design's declared train.batch_size (16 here), as the verifier judges it
    assert res.metrics["output_shapes"] == [[16, 4]]
    assert any(e.type == "progress" and e.stage == "forward" for e in events)

    h = runner.submit(RunSpec(kind="train", design=json.loads((DESIGNS / "mlp.json").read_text()),
                              device="cpu", steps=10**8))
    for ev in h.events(timeout=240):
        if isinstance(ev, MetricEvent):
            break
    t = time.monotonic()
    h.cancel()
    res = h.wait(60)
    assert res is not None and res.status == "cancelled", res
    print(f"Ray cancel took {time.monotonic() - t:.1f} s", file=sys.stderr)

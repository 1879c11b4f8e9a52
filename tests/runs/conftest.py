"""Shared helpers for the run tests: the small designs in designs/, a local
runner of our own (so one test's queue never waits on another's) and a real
local Ray head on its own ports (`ray_head`)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest

DESIGNS = Path(__file__).parent / "designs"


def load_design(name: str) -> dict:
    return json.loads((DESIGNS / f"{name}.json").read_text())


@pytest.fixture
def design():
    return load_design


@pytest.fixture
def runner():
    from archcurator.core.runs.local import LocalRunner

    r = LocalRunner()
    yield r
    r.cancel_all()
    for h in r.handles():
        h.wait(10)


# ---- a real local Ray head ------------------------------------------------------

HEAD_START_TIMEOUT_S = 120


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _free_range(n: int) -> int:
    """The first of n consecutive ports that are free now."""
    for _ in range(200):
        base = _free_port()
        if base + n >= 65000:
            continue
        ok = True
        for p in range(base, base + n):
            with socket.socket() as s:
                try:
                    s.bind(("127.0.0.1", p))
                except OSError:
                    ok = False
                    break
        if ok:
            return base
    raise RuntimeError("no free port range")


def _ours(tmp: str) -> list[int]:
    """Pids of processes whose command line names our head's temp dir."""
    pids = []
    for d in os.listdir("/proc"):
        if not d.isdigit() or int(d) == os.getpid():
            continue
        try:
            with open(f"/proc/{d}/cmdline", "rb") as fh:
                if tmp.encode() in fh.read():
                    pids.append(int(d))
        except OSError:
            pass
    return pids


@pytest.fixture(scope="module")
def ray_head():
    try:
        import ray  # noqa: F401
        from ray.job_submission import JobSubmissionClient  # noqa: F401
    except ImportError as exc:
        why = f"Ray is not installed ({exc}); install the extra: pip install 'archcurator[ray]'"
        print(f"SKIP the Ray test: {why}", file=sys.stderr)
        pytest.skip(why)
    ray_bin = Path(sys.executable).with_name("ray")
    if not ray_bin.exists():
        ray_bin = shutil.which("ray")
    if not ray_bin:
        why = "the ray command is not on this machine"
        print(f"SKIP the Ray test: {why}", file=sys.stderr)
        pytest.skip(why)
    tmp = tempfile.mkdtemp(prefix="rt", dir="/tmp")  # short: ray's unix sockets live under it
    workers = _free_range(40)
    taken = set(range(workers, workers + 40))

    def port() -> int:
        # each of the head's ports distinct and outside the worker range: ray refuses a clash at start
        # (two draws of a free port, or one inside the range, failed a full run once)
        while True:
            p = _free_port()
            if p not in taken:
                taken.add(p)
                return p

    gcs, dash = port(), port()
    env = {k: v for k, v in os.environ.items() if k not in ("RAY_ADDRESS", "RAY_API_SERVER_ADDRESS")}
    env.update({"RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0",
                "PATH": f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"})
    cmd = [str(ray_bin), "start", "--head", "--block", f"--port={gcs}",
           f"--dashboard-port={dash}", "--dashboard-host=127.0.0.1", "--include-dashboard=true",
           "--num-cpus=1", "--num-gpus=0", f"--temp-dir={tmp}", "--object-store-memory=100000000",
           "--disable-usage-stats",
           f"--node-manager-port={port()}", f"--object-manager-port={port()}",
           f"--ray-client-server-port={port()}", f"--metrics-export-port={port()}",
           f"--dashboard-agent-listen-port={port()}",
           f"--dashboard-agent-grpc-port={port()}", f"--runtime-env-agent-port={port()}",
           f"--min-worker-port={workers}", f"--max-worker-port={workers + 39}"]
    log = open(Path(tmp) / "head.log", "w")
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env,
                            start_new_session=True, cwd=tmp)
    url = f"http://127.0.0.1:{dash}"
    try:
        while True:
            if proc.poll() is not None:
                pytest.fail(f"ray start exited {proc.returncode}:\n{(Path(tmp) / 'head.log').read_text()[-4000:]}")
            try:
                with urllib.request.urlopen(f"{url}/api/version", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() - t0 > HEAD_START_TIMEOUT_S:
                pytest.fail(f"the Ray head did not answer in {HEAD_START_TIMEOUT_S} s:\n"
                            f"{(Path(tmp) / 'head.log').read_text()[-4000:]}")
            time.sleep(0.5)
        print(f"Ray head up at {url} in {time.monotonic() - t0:.1f} s", file=sys.stderr)
        yield {"url": url, "env": env}
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            pass
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        proc.wait(10)
        for pid in _ours(tmp):
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        log.close()
        shutil.rmtree(tmp, ignore_errors=True)

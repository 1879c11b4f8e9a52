"""The Ray backend: each run is a Ray job (the optional extra ``archcurator[ray]``).

Chosen with ``--cluster http://HEAD:8265`` or ``$RAY_API_SERVER_ADDRESS``
(see `core.runs.runner.get_runner`). It uses the Ray Jobs API only:

- ``JobSubmissionClient.submit_job(entrypoint=..., entrypoint_num_cpus=1,
  entrypoint_num_gpus=0|1, runtime_env=..., submission_id=...)``. The
  entrypoint is the same child as the local backend's,
  ``python -m core.runs.child --spec-z64 DATA`` (the spec, zlib-compressed
  and base64'd; a spec too long for a command line travels as ``spec.json``
  in the runtime_env's ``working_dir``). The ``core`` room is shipped in
  ``runtime_env.py_modules`` and runs there as the top-level ``core`` (it
  imports nothing outside itself, all relative), so the cluster needs only
  Python and torch (``ship_code=False``, or ``ARCHCURATOR_RAY_SHIP_CODE=0``,
  when the cluster has archcurator installed: then the entrypoint is
  ``python -m archcurator.core.runs.child``).
- ``tail_job_logs`` (an async generator) follows the job's log; the child's
  event lines in it become the same events as locally, other lines become
  log events.
- ``get_job_status`` is polled for the running / ended transitions and the
  wall-time limit; ``stop_job`` cancels (and ends a run past its limit).

One run at a time per GPU is Ray's own resource scheduling: a run that asks
for a GPU waits as PENDING (our ``queued``) until one is free. Device
``auto`` asks for a GPU when the cluster has any (``ray.util.state.list_nodes``),
``cuda`` always does, ``cpu`` never does. Memory limits are applied by the
child itself, as locally.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import tempfile
import threading
import time
from pathlib import Path

from . import registry
from .runner import RAY_ADDRESS_ENV, STOP_CANCEL, STOP_TIMEOUT, BaseHandle
from .spec import (
    LogEvent,
    RunResult,
    RunSpec,
    StatusEvent,
    decode_event_line,
)

POLL_S = 0.25
#: How long to wait for the log stream to close once the job has ended.
ENDED_LOG_GRACE_S = 15.0
STOPPED_LOG_GRACE_S = 0.5
#: Longest inline spec (characters) before it travels as a file instead.
INLINE_SPEC_MAX = 100_000
_CORE_DIR = str(Path(__file__).resolve().parents[1])
_ENV_LOCK = threading.Lock()
_RAY_ENV_VARS = (RAY_ADDRESS_ENV, "RAY_ADDRESS")


class RayUnavailable(RuntimeError):
    """Ray is not installed, or the cluster cannot be reached."""


def _import_ray():
    try:
        from ray.job_submission import JobStatus, JobSubmissionClient  # noqa: PLC0415
    except ImportError as exc:
        raise RayUnavailable(
            f"runs on a Ray cluster need the optional extra: pip install 'archcurator[ray]' ({exc})"
        ) from None
    return JobSubmissionClient, JobStatus


@contextlib.contextmanager
def _explicit_address():
    """Ray's client lets $RAY_API_SERVER_ADDRESS / $RAY_ADDRESS override the
    address it is given; an explicit --cluster must win, so they are hidden
    while the client is made."""
    with _ENV_LOCK:
        saved = {k: os.environ.pop(k) for k in _RAY_ENV_VARS if k in os.environ}
        try:
            yield
        finally:
            os.environ.update(saved)


class RayRunner:
    """Runs as Ray jobs on the cluster whose dashboard is at `address`."""

    name = "ray"

    def __init__(self, address: str, *, python: str | None = None, ship_code: bool | None = None,
                 poll_s: float = POLL_S) -> None:
        JobSubmissionClient, JobStatus = _import_ray()
        self.address = address
        self.python = python or os.environ.get("ARCHCURATOR_RAY_PYTHON", "python")
        if ship_code is None:
            ship_code = os.environ.get("ARCHCURATOR_RAY_SHIP_CODE", "1") not in ("0", "false", "no")
        self.ship_code = ship_code
        self.poll_s = poll_s
        self.JobStatus = JobStatus
        try:
            with _explicit_address():
                self.client = JobSubmissionClient(address)
        except Exception as exc:  # noqa: BLE001 - ConnectionError, ValueError, ...
            raise RayUnavailable(f"cannot reach the Ray cluster at {address}: {exc}") from None
        self._gpus: int | None = None
        self._handles: list[RayHandle] = []
        self._lock = threading.Lock()

    def submit(self, spec: RunSpec) -> RayHandle:
        spec.validate()
        handle = RayHandle(self, spec)
        with self._lock:
            self._handles.append(handle)
        handle._thread.start()
        return handle

    def handles(self) -> list[RayHandle]:
        with self._lock:
            return list(self._handles)

    def cluster_gpus(self) -> int:
        """GPUs the cluster's alive nodes offer (0 when it cannot be told)."""
        if self._gpus is None:
            try:
                from ray.util.state import list_nodes  # noqa: PLC0415

                nodes = list_nodes(address=self.client.get_address(), timeout=10)
                self._gpus = int(sum((n.resources_total or {}).get("GPU", 0)
                                     for n in nodes if n.state == "ALIVE"))
            except Exception:  # noqa: BLE001 - the state API is best effort
                self._gpus = 0
        return self._gpus

    def gpus_for(self, spec: RunSpec) -> int:
        if spec.device == "cuda":
            return 1
        if spec.device == "auto":
            return 1 if self.cluster_gpus() > 0 else 0
        return 0

    def job_request(self, spec: RunSpec, run_id: str, workdir: str | None = None) -> dict:
        """The keyword arguments of `submit_job` for `spec` (its entrypoint
        runs the same child module as the local backend)."""
        env_vars = {"PYTHONUNBUFFERED": "1", "MALLOC_ARENA_MAX": "2", **registry.env_for(spec.kind)}
        runtime_env: dict = {"env_vars": env_vars}
        child = "archcurator.core.runs.child"
        if self.ship_code:
            runtime_env["py_modules"] = [_CORE_DIR]
            runtime_env["excludes"] = ["__pycache__", "*.pyc"]
            child = "core.runs.child"
        z = spec.to_z64()
        if len(z) <= INLINE_SPEC_MAX or workdir is None:
            args = f"--spec-z64 {z}"
        else:
            Path(workdir, "spec.json").write_text(spec.to_json(), encoding="utf-8")
            runtime_env["working_dir"] = workdir
            args = "spec.json"
        gpus = self.gpus_for(spec)
        if gpus == 0 and spec.device == "cpu":
            env_vars["CUDA_VISIBLE_DEVICES"] = ""
        return {
            "entrypoint": f"{shlex.quote(self.python)} -m {child} {args}",
            "submission_id": f"archcurator-{run_id}",
            "runtime_env": runtime_env,
            "entrypoint_num_cpus": 1,
            "entrypoint_num_gpus": gpus,
            "metadata": {"archcurator_run_id": run_id, "kind": spec.kind},
        }


class RayHandle(BaseHandle):
    backend = "ray"

    def __init__(self, runner: RayRunner, spec: RunSpec) -> None:
        super().__init__(spec)
        self.runner = runner
        self.job_id: str | None = None
        self._child_result: dict | None = None
        self._buf = ""
        self._lock = threading.Lock()
        self._stop_sent = False
        self._run_started: float | None = None
        self._job_status = None
        self._thread = threading.Thread(target=self._main, name=f"ray run {self.run_id}", daemon=True)

    # ---- public ------------------------------------------------------------
    def cancel(self) -> None:
        """`stop_job` (Ray sends SIGTERM, then SIGKILL); a run not yet
        submitted is never submitted."""
        if self.done:
            return
        with self._lock:
            if self._stop_reason is None:
                self._stop_reason = STOP_CANCEL
        self._stop()

    # ---- the run's thread ----------------------------------------------------
    def _main(self) -> None:
        client = self.runner.client
        self._emit(StatusEvent(status="queued"))
        with tempfile.TemporaryDirectory(prefix="archcurator-ray-") as workdir:
            with self._lock:
                cancelled_early = self._stop_reason is not None
                if not cancelled_early:
                    try:
                        self.job_id = client.submit_job(**self.runner.job_request(
                            self.spec, self.run_id, workdir))
                    except Exception as exc:  # noqa: BLE001
                        self._finish(RunResult(
                            status="failed", exception=type(exc).__name__,
                            message=f"could not submit the job to {self.runner.address}: {exc}"[:2000],
                            device=self._device_guess()))
                        return
            if cancelled_early:
                self._finish(RunResult(status="cancelled", message="cancelled before it started",
                                       device=self._device_guess()))
                return
        self._emit(LogEvent(message=f"submitted Ray job {self.job_id} to {self.runner.address}",
                            stream="launcher"))
        tail = threading.Thread(target=self._tail_thread, daemon=True)
        tail.start()
        self._watch()  # returns once the job has ended
        # the log stream closes a few seconds after the job ends; a stopped
        # job's result does not depend on it, a finished one's last line does
        tail.join(STOPPED_LOG_GRACE_S if self._stop_reason else ENDED_LOG_GRACE_S)
        if self._child_result is None:
            self._scan_full_log()
        self._finish(self._outcome())

    def _device_guess(self) -> str:
        return self.device_hint or ("cuda" if self.spec.device == "cuda" else "cpu")

    def _tail_thread(self) -> None:
        try:
            asyncio.run(self._tail())
        except Exception as exc:  # noqa: BLE001 - the log stream broke; the status still tells
            self._emit(LogEvent(message=f"log stream ended: {exc}", level="warning", stream="launcher"))

    async def _tail(self) -> None:
        async for chunk in self.runner.client.tail_job_logs(self.job_id):
            self._buf += chunk
            *lines, self._buf = self._buf.split("\n")
            for line in lines:
                self._line(line)
        if self._buf:
            self._line(self._buf)
            self._buf = ""

    def _line(self, line: str) -> None:
        self._take_line(line.rstrip("\r"), "job")

    def _scan_full_log(self) -> None:
        try:
            text = self.runner.client.get_job_logs(self.job_id)
        except Exception:  # noqa: BLE001
            return
        for line in text.splitlines():
            d = decode_event_line(line)
            if d and d.get("type") == "result":
                self._child_result = d.get("result") or {}

    def _watch(self) -> None:
        JobStatus = self.runner.JobStatus
        client = self.runner.client
        failures = 0
        while True:
            try:
                status = client.get_job_status(self.job_id)
                failures = 0
            except Exception as exc:  # noqa: BLE001
                failures += 1
                if failures >= 20:
                    self._emit(LogEvent(message=f"lost the cluster: {exc}", level="error",
                                        stream="launcher"))
                    return
                time.sleep(self.runner.poll_s)
                continue
            self._job_status = status
            now = time.monotonic()
            if status == JobStatus.RUNNING and self._run_started is None:
                self._run_started = now
                self._emit(StatusEvent(status="running"))
            if status.is_terminal():
                return
            limit = self.spec.time_limit_s
            if limit and self._run_started is not None and now - self._run_started > limit:
                with self._lock:
                    if self._stop_reason is None:
                        self._stop_reason = STOP_TIMEOUT
                self._stop()
            time.sleep(self.runner.poll_s)

    def _stop(self) -> None:
        with self._lock:
            if self.job_id is None or self._stop_sent:
                return
            self._stop_sent = True
        try:
            self.runner.client.stop_job(self.job_id)
        except Exception as exc:  # noqa: BLE001
            self._emit(LogEvent(message=f"stop_job failed: {exc}", level="warning", stream="launcher"))

    def _wall(self) -> float:
        return time.monotonic() - self._run_started if self._run_started is not None else 0.0

    def _outcome(self) -> RunResult:
        JobStatus = self.runner.JobStatus
        device = self._device_guess()
        if self._child_result is not None:
            res = RunResult.from_dict(self._child_result)
            res.metrics = dict(res.metrics or {})
            res.metrics["ray_job_id"] = self.job_id
            return res
        status, info_msg = self._job_status, ""
        try:
            info = self.runner.client.get_job_info(self.job_id)
            status, info_msg = info.status, info.message or ""
        except Exception:  # noqa: BLE001
            pass
        seconds = self._wall()
        if self._stop_reason == STOP_CANCEL:
            return RunResult(status="cancelled", message="cancelled by the user", device=device,
                             seconds=seconds, metrics={"ray_job_id": self.job_id})
        if self._stop_reason == STOP_TIMEOUT:
            return RunResult(status="timeout",
                             message=f"time limit of {self.spec.time_limit_s:g} s reached",
                             device=device, seconds=seconds, metrics={"ray_job_id": self.job_id})
        if status == JobStatus.STOPPED:
            return RunResult(status="killed", message=f"the job was stopped on the cluster {info_msg}".strip(),
                             device=device, seconds=seconds, metrics={"ray_job_id": self.job_id})
        killed = any(s in info_msg for s in ("exit code -9", "exit code 137", "exit code -15",
                                             "exit code 143", "SIGKILL", "signal"))
        last = self.log_tail().strip().splitlines()[-1:] or [""]
        return RunResult(status="killed" if killed else "failed",
                         message=(f"Ray job {self.job_id} ended {getattr(status, 'value', status)} "
                                  f"without a result: {info_msg} {last[0]}").strip()[:2000],
                         device=device, seconds=seconds, metrics={"ray_job_id": self.job_id})

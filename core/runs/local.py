"""The local backend: each run is a child process on this machine.

``python -m archcurator.core.runs.child -`` is started in its own session (so it and
anything it starts form one process group), reads its spec on stdin and
writes events on stdout; its stderr becomes log events.

- **Wall-time limit**: counted from the child's start; when it passes the
  group gets SIGTERM, then SIGKILL after `grace_s`; the run is ``timeout``.
- **Memory limit**: every run has one (the spec's, else the default of
  `core.runs.memory`: a share of the memory free where it runs). A
  preexec_fn sets RLIMIT_AS to (limit + a backstop allowance for the
  runtime) for runs that cannot reach a GPU; the child then lowers its soft
  limit to (its address space once torch is up + limit), see
  `core.runs.child.MemoryGuard`. Running out is ``killed`` with the reason.
- **Cancel**: SIGTERM to the process group, SIGKILL after `grace_s`
  (1 s by default, so a cancelled child is gone within about 1.1 s);
  ``cancelled``. A queued run that is cancelled never starts.
- **Killed from outside** (any signal the launcher did not send, the
  kernel's OOM killer): ``killed`` naming the signal. The launcher polls the
  child every 50 ms, so a dead child is never waited on.
- **Scheduling**: one run at a time per GPU; runs that want a GPU (device
  ``auto`` or ``cuda`` on a machine with GPUs) wait, first come first
  served, for a free one and the child sees only that GPU
  (CUDA_VISIBLE_DEVICES). CPU runs (device ``cpu``, or any run on a machine
  without GPUs) share `cpu_slots` slots, 1 by default: torch already uses
  every core for one run, and running several at once would make each one's
  seconds meaningless.
"""

from __future__ import annotations

import os
import resource
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from pathlib import Path

from . import memory, registry
from .child import DIE_WITH_LAUNCHER_ENV
from .runner import LINE_MAX, STOP_CANCEL, STOP_TIMEOUT, BaseHandle
from .spec import (
    LogEvent,
    RunResult,
    RunSpec,
    StatusEvent,
)

#: Address space allowed to the runtime itself (python, torch, thread
#: stacks) on top of a run's memory limit, in the preexec_fn backstop.
RUNTIME_ALLOWANCE_MB = int(os.environ.get("ARCHCURATOR_RUN_ALLOWANCE_MB", "4096"))
POLL_S = 0.05
#: How long a child that already wrote its result may take to exit.
EXIT_GRACE_S = 5.0
#: The folder holding `core/` (the checkout, or site-packages' archcurator/):
#: the child's working directory.
_PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])


def detect_gpus() -> list[str]:
    """The GPU ids this machine offers runs, without importing torch:
    CUDA_VISIBLE_DEVICES when set, else the NVIDIA driver's list."""
    cvd = os.environ.get("CUDA_VISIBLE_DEVICES")
    if cvd is not None:
        ids = [x.strip() for x in cvd.split(",") if x.strip()]
        return [] if not ids or ids[0].startswith("-") else ids
    try:
        return [str(i) for i in range(len(os.listdir("/proc/driver/nvidia/gpus")))]
    except OSError:
        pass
    smi = shutil.which("nvidia-smi")
    if smi:
        try:
            out = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=10).stdout
            return [str(i) for i, line in enumerate(ln for ln in out.splitlines() if ln.startswith("GPU "))]
        except (OSError, subprocess.SubprocessError):
            pass
    return []


class Scheduler:
    """First come, first served slots: one per GPU id, `cpu_slots` for CPU."""

    def __init__(self, gpu_ids: list[str], cpu_slots: int = 1) -> None:
        self.gpu_free = {g: True for g in gpu_ids}
        self.cpu_free = max(1, cpu_slots)
        self.waiting: deque = deque()
        self.cond = threading.Condition()

    def pool_for(self, spec: RunSpec) -> str:
        return "gpu" if spec.device != "cpu" and self.gpu_free else "cpu"

    def acquire(self, handle: LocalHandle, pool: str) -> str | None:
        """Block until `handle` holds a slot (its name: "cpu" or a GPU id);
        None when it was cancelled while waiting."""
        with self.cond:
            self.waiting.append((handle, pool))
            try:
                while True:
                    if handle._stop_reason is not None:
                        return None
                    first = next(h for h, p in self.waiting if p == pool)
                    if first is handle:
                        slot = self._take(pool)
                        if slot is not None:
                            return slot
                    self.cond.wait(0.2)
            finally:
                self.waiting.remove((handle, pool))
                self.cond.notify_all()

    def _take(self, pool: str) -> str | None:
        if pool == "cpu":
            if self.cpu_free > 0:
                self.cpu_free -= 1
                return "cpu"
            return None
        for g, free in self.gpu_free.items():
            if free:
                self.gpu_free[g] = False
                return g
        return None

    def release(self, slot: str) -> None:
        with self.cond:
            if slot == "cpu":
                self.cpu_free += 1
            else:
                self.gpu_free[slot] = True
            self.cond.notify_all()

    def wake(self) -> None:
        with self.cond:
            self.cond.notify_all()

    def queued(self) -> list:
        with self.cond:
            return [h for h, _ in self.waiting]


def _limit_address_space(limit_bytes: int):
    def preexec() -> None:  # runs in the child between fork and exec: keep it minimal
        resource.setrlimit(resource.RLIMIT_AS, (limit_bytes, limit_bytes))

    return preexec


class LocalHandle(BaseHandle):
    backend = "local"

    def __init__(self, runner: LocalRunner, spec: RunSpec) -> None:
        super().__init__(spec)
        self.runner = runner
        self.pid: int | None = None
        self.slot: str | None = None
        self._proc: subprocess.Popen | None = None
        self._kill_at: float | None = None
        self._child_result: dict | None = None
        self._child_result_at: float | None = None
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._main, name=f"run {self.run_id}", daemon=True)

    # ---- public ------------------------------------------------------------
    def cancel(self) -> None:
        """SIGTERM to the child's group, SIGKILL after the grace period; a
        queued run is dropped from the queue. No effect once it has ended."""
        if self.done:
            return
        with self._lock:
            if self._stop_reason is None:
                self._stop_reason = STOP_CANCEL
        self._terminate()
        self.runner.scheduler.wake()

    # ---- the run's thread ----------------------------------------------------
    def _main(self) -> None:
        sched = self.runner.scheduler
        pool = sched.pool_for(self.spec)
        self._emit(StatusEvent(status="queued"))
        slot = sched.acquire(self, pool)
        if slot is None:
            self._finish(RunResult(status="cancelled", message="cancelled before it started",
                                   device=self._device_guess(pool)))
            return
        self.slot = slot
        try:
            self._run_child(pool, slot)
        except Exception as exc:  # noqa: BLE001 - the launcher's own fault still ends the run
            self._kill_group()
            self._finish(RunResult(status="failed", exception=type(exc).__name__,
                                   message=f"could not run the child: {exc}",
                                   device=self._device_guess(pool)))
        finally:
            sched.release(slot)

    def _device_guess(self, pool: str) -> str:
        return self.device_hint or ("cuda" if pool == "gpu" else "cpu")

    def _child_env(self, slot: str) -> dict:
        env = dict(os.environ)
        env["PYTHONUNBUFFERED"] = "1"
        env.setdefault("MALLOC_ARENA_MAX", "2")
        env[DIE_WITH_LAUNCHER_ENV] = "1"  # this handle's thread waits on the child until it ends
        env.pop(registry.KIND_MODULE_ENV, None)
        env.update(registry.env_for(self.spec.kind))  # the child imports a client's kind by this name
        if slot != "cpu":
            env["CUDA_VISIBLE_DEVICES"] = slot
        elif self.spec.device == "cpu":
            env["CUDA_VISIBLE_DEVICES"] = ""
        return env

    def _run_child(self, pool: str, slot: str) -> None:
        spec = self.spec
        preexec = None
        if pool == "cpu" and (spec.memory_limit_mb or spec.device == "cpu"):
            # a hard backstop under the child's own guard; only where the child cannot reach a
            # GPU (its CUDA_VISIBLE_DEVICES is empty) or a limit was asked for: CUDA's start
            # reserves more address space than any such limit, and a GPU this launcher failed to
            # see would silently become a CPU run
            preexec = _limit_address_space(memory.host_backstop_bytes(spec.memory_limit_mb, RUNTIME_ALLOWANCE_MB))
        with self._lock:
            cancelled_early = self._stop_reason is not None
            if not cancelled_early:
                proc = self._popen(slot, preexec)
        if cancelled_early:
            self._finish(RunResult(status="cancelled", message="cancelled before it started",
                                   device=self._device_guess(pool)))
            return
        self._monitor(proc, pool)

    def _popen(self, slot: str, preexec) -> subprocess.Popen:
        proc = subprocess.Popen(
            [self.runner.python, "-m", "archcurator.core.runs.child", "-"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            start_new_session=True, env=self._child_env(slot), cwd=_PACKAGE_ROOT,
            preexec_fn=preexec, close_fds=True,
        )
        self._proc = proc
        self.pid = proc.pid
        return proc

    def _monitor(self, proc: subprocess.Popen, pool: str) -> None:
        spec = self.spec
        start = time.monotonic()
        self._emit(StatusEvent(status="running"))
        readers = [
            threading.Thread(target=self._read_stdout, args=(proc.stdout,), daemon=True),
            threading.Thread(target=self._read_stderr, args=(proc.stderr,), daemon=True),
        ]
        for t in readers:
            t.start()
        try:
            proc.stdin.write(spec.to_json().encode())
            proc.stdin.close()
        except (BrokenPipeError, OSError):
            pass
        deadline = start + spec.time_limit_s if spec.time_limit_s else None
        while True:
            try:
                rc = proc.wait(timeout=POLL_S)
                break
            except subprocess.TimeoutExpired:
                pass
            now = time.monotonic()
            if deadline is not None and now > deadline and self._stop_reason is None:
                with self._lock:
                    if self._stop_reason is None:
                        self._stop_reason = STOP_TIMEOUT
                self._terminate()
            if self._kill_at is not None and now >= self._kill_at:
                self._kill_group()
            if self._child_result_at is not None and now - self._child_result_at > EXIT_GRACE_S:
                self._kill_group()  # it said its last word but will not exit
        seconds = time.monotonic() - start
        self._kill_group()  # anything the child left behind in its group
        for t in readers:
            t.join(timeout=2.0)
        self._finish(self._outcome(rc, seconds, pool))

    def _outcome(self, rc: int, seconds: float, pool: str) -> RunResult:
        device = self._device_guess(pool)
        if self._child_result is not None:
            res = RunResult.from_dict(self._child_result)
            res.seconds = seconds
            res.metrics = dict(res.metrics or {})
            res.metrics.setdefault("child_seconds", self._child_result.get("seconds"))
            return res
        if self._stop_reason == STOP_CANCEL:
            return RunResult(status="cancelled", message="cancelled by the user",
                             device=device, seconds=seconds)
        if self._stop_reason == STOP_TIMEOUT:
            return RunResult(status="timeout",
                             message=f"time limit of {self.spec.time_limit_s:g} s reached",
                             device=device, seconds=seconds)
        if rc < 0:
            try:
                name = signal.Signals(-rc).name
            except ValueError:
                name = f"signal {-rc}"
            msg = f"the child was killed by {name}"
            if name == "SIGKILL":  # the launcher's own kills are cancel and timeout, handled above
                msg += " (from outside, e.g. the kernel's out-of-memory killer)"
            return RunResult(status="killed", message=msg, device=device, seconds=seconds)
        last = self.log_tail().strip().splitlines()[-1:] or [""]
        return RunResult(status="failed",
                         message=f"the child exited with code {rc} without a result: {last[0]}"[:2000],
                         device=device, seconds=seconds)

    # ---- signals -----------------------------------------------------------
    def _signal_group(self, sig: int) -> None:
        proc = self._proc
        if proc is None:
            return
        try:
            os.killpg(proc.pid, sig)  # the child leads its own session and group
        except (ProcessLookupError, PermissionError):
            pass

    def _terminate(self) -> None:
        with self._lock:
            if self._proc is None or self._kill_at is not None:
                return
            self._kill_at = time.monotonic() + self.runner.grace_s
        self._signal_group(signal.SIGTERM)

    def _kill_group(self) -> None:
        self._signal_group(signal.SIGKILL)

    # ---- output ------------------------------------------------------------
    def _read_stdout(self, stream) -> None:
        for raw in iter(stream.readline, b""):
            self._take_line(raw.decode("utf-8", "replace").rstrip("\n"), "stdout")
        stream.close()

    def _read_stderr(self, stream) -> None:
        for raw in iter(stream.readline, b""):
            line = raw.decode("utf-8", "replace").rstrip("\n")
            if line.strip():
                self._emit(LogEvent(message=line[:LINE_MAX], stream="stderr"))
        stream.close()


class LocalRunner:
    """Runs on this machine. `submit` returns at once; the run waits for a
    slot, then its child starts (see the module docstring)."""

    name = "local"

    def __init__(self, gpu_ids: list[str] | None = None, cpu_slots: int = 1,
                 grace_s: float = 1.0, python: str | None = None) -> None:
        self.gpu_ids = detect_gpus() if gpu_ids is None else list(gpu_ids)
        self.scheduler = Scheduler(self.gpu_ids, cpu_slots)
        self.grace_s = grace_s
        self.python = python or sys.executable
        self._handles: list[LocalHandle] = []
        self._lock = threading.Lock()

    def submit(self, spec: RunSpec) -> LocalHandle:
        spec.validate()
        handle = LocalHandle(self, spec)
        with self._lock:
            self._handles.append(handle)
        handle._thread.start()
        return handle

    def handles(self) -> list[LocalHandle]:
        """Every run submitted here, oldest first (for a runs screen)."""
        with self._lock:
            return list(self._handles)

    def queued(self) -> list[LocalHandle]:
        return self.scheduler.queued()

    def cancel_all(self) -> None:
        for h in self.handles():
            h.cancel()

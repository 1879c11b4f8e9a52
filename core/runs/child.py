"""The child process of a run: ``python -m archcurator.core.runs.child [SPEC.json | -]``
or ``python -m archcurator.core.runs.child --spec-z64 DATA``.

It reads a `RunSpec` (a JSON file, stdin with ``-``, or the compact form of
`RunSpec.to_z64()`), runs it, and writes its events as JSON lines on
stdout, each line starting with `EVENT_PREFIX`; the last one is the result.
Anything else that writes to stdout (a print in user code, torch's C++
warnings) is sent to stderr, so stdout carries events only. The exit code is
0 whenever a result was written.

The child never touches the store; the launching process records results.
Memory limits are applied here, after torch is imported (see
`MemoryGuard`), so they mean the same whether the child was started by the
local backend or as a Ray job.
"""

from __future__ import annotations

import argparse
import os
import resource
import signal
import sys
import threading
import time
import traceback

from . import memory, registry
from .spec import RunResult, RunSpec, SpecError, encode_event_line

MESSAGE_MAX = 2000
MB = 1 << 20


class Emitter:
    """Writes events to the private event channel (the original stdout)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.lock = threading.Lock()
        self.result_sent = False

    def send(self, d: dict) -> None:
        data = encode_event_line(d).encode()
        with self.lock:
            if self.result_sent:
                return
            if d.get("type") == "result":
                self.result_sent = True
            view = memoryview(data)
            while view:
                n = os.write(self.fd, view)
                view = view[n:]

    def progress(self, stage: str, message: str = "", step=None, total=None, **info) -> None:
        self.send({"type": "progress", "stage": stage, "message": message,
                   "step": step, "total": total, "info": info, "t": time.time()})

    def metric(self, name: str, value, step=None) -> None:
        self.send({"type": "metric", "name": name, "value": value, "step": step, "t": time.time()})

    def log(self, message: str, level: str = "info") -> None:
        self.send({"type": "log", "message": message, "level": level, "stream": "child",
                   "t": time.time()})

    def result(self, result: RunResult) -> None:
        self.send({"type": "result", "result": result.to_dict(), "t": time.time()})


# ---- memory ------------------------------------------------------------------


def _proc_status_kb(field: str) -> int | None:
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


class MemoryGuard:
    """The run's memory limit, counted on top of what the child holds once
    the interpreter, torch and its thread pool (and, on a GPU, the CUDA
    context and a cuBLAS handle) are up. Every run has one: the spec's, else
    the default of `core.runs.memory` for the device the child resolved.

    CPU: lowers the soft RLIMIT_AS to (address space now + limit), never
    above the hard limit the local backend's preexec_fn set as a backstop;
    an allocation past it fails (MemoryError / torch's "can't allocate
    memory"), which `classify` reports as ``killed``.
    CUDA: RLIMIT_AS cannot be used (the driver reserves huge address ranges),
    so the caching allocator is capped with
    ``torch.cuda.set_per_process_memory_fraction`` at what it holds now plus
    the GPU limit, and a watchdog thread ends the child, with a ``killed``
    result, when its anonymous resident memory grows past the host limit.
    """

    def __init__(self, limit_mb: int | None, emit: Emitter) -> None:
        self.spec_mb = limit_mb
        self.emit = emit
        self.limit: memory.MemoryLimit | None = None  # the device's (what `classify` names)
        self.host_limit: memory.MemoryLimit | None = None
        self.armed = False

    @property
    def limit_mb(self) -> int | None:
        return self.limit.mb if self.limit else self.spec_mb

    def arm(self, device, torch) -> None:
        if device.type == "cuda":
            free, total = torch.cuda.mem_get_info(device)
            name = torch.cuda.get_device_name(device)
            self.limit = memory.resolve(self.spec_mb, "gpu", free, name)
            self.host_limit = memory.resolve(self.spec_mb, "host")
            reserved = torch.cuda.memory_reserved(device)
            torch.cuda.set_per_process_memory_fraction(
                memory.cuda_fraction(self.limit.mb * MB, total, reserved), device)
            base = (_proc_status_kb("RssAnon") or 0) * 1024
            ceiling = memory.rss_ceiling(base, self.host_limit.mb * MB)
            threading.Thread(target=self._watch_rss, args=(ceiling,), name="memory-watch", daemon=True).start()
        else:
            self.limit = self.host_limit = memory.resolve(self.spec_mb, "host")
            vm_kb = _proc_status_kb("VmSize")
            if vm_kb is None:
                return
            _, hard = resource.getrlimit(resource.RLIMIT_AS)
            soft = memory.address_space_limit(vm_kb * 1024, self.limit.mb * MB,
                                              None if hard == resource.RLIM_INFINITY else hard)
            resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
        self.armed = True

    def _watch_rss(self, ceiling: int) -> None:
        while True:
            anon_kb = _proc_status_kb("RssAnon")
            if anon_kb is not None and anon_kb * 1024 > ceiling:
                self.emit.result(RunResult(
                    status="killed", exception=None,
                    message=f"{self.host_limit.phrase()} exceeded "
                            f"(the child's host memory reached {anon_kb // 1024} MB)",
                    device=_DEVICE_NAME[0], memory_limit=self.host_limit.to_answer()))
                os._exit(137)
            time.sleep(0.05)


_DEVICE_NAME = ["cpu"]

_OOM_TEXT = ("can't allocate memory", "out of memory", "std::bad_alloc", "cannot allocate memory")


def _is_oom(exc: BaseException) -> bool:
    if isinstance(exc, MemoryError) or type(exc).__name__ == "OutOfMemoryError":
        return True
    text = str(exc).lower()
    return any(t in text for t in _OOM_TEXT)


def _chain(exc: BaseException):
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield exc
        exc = exc.__cause__ or exc.__context__


def _first_line(text: str) -> str:
    text = text.strip()
    return text[:MESSAGE_MAX]


def _is_device_oom(exc: BaseException) -> bool:
    """A GPU allocation failed (torch's OutOfMemoryError, a CUDA error), not a host one."""
    return type(exc).__name__ == "OutOfMemoryError" or "cuda" in str(exc).lower()


def classify(exc: BaseException, limit, host_limit=None) -> tuple[str, str | None, str]:
    """(status, exception class name, message) for an exception that ended a
    run. Running out of memory is ``killed`` with the reason; anything else is
    ``failed`` with the exception's class (``BuildError`` for a design the
    builder cannot build).

    limit: the run's `memory.MemoryLimit` (or its size in MB, or None); on a
    GPU, `host_limit` is the host side's, named when the host ran out."""
    ooms = [e for e in _chain(exc) if _is_oom(e)]
    if ooms:
        e = ooms[-1]  # the root cause, not a wrapper such as BuildError
        what = f"{type(e).__name__}: {_first_line(str(e))[:500]}"
        named = limit
        if host_limit is not None and not _is_device_oom(e):
            named = host_limit
        if isinstance(named, memory.MemoryLimit):
            return "killed", type(e).__name__, f"{named.phrase()} exceeded ({what})"
        if named:
            return "killed", type(e).__name__, f"memory limit of {named} MB exceeded ({what})"
        return "killed", type(e).__name__, f"out of memory ({what})"
    msg = _first_line(str(exc)) or type(exc).__name__
    return "failed", type(exc).__name__, msg


# ---- main ------------------------------------------------------------------------


def _read_spec(args) -> RunSpec:
    if args.spec_z64:
        return RunSpec.from_z64(args.spec_z64)
    if args.spec in (None, "-"):
        return RunSpec.from_json(sys.stdin.read())
    try:
        with open(args.spec, encoding="utf-8") as fh:
            return RunSpec.from_json(fh.read())
    except OSError as exc:
        raise SpecError(f"{args.spec}: {exc.strerror or exc}") from None


def resolve_device(want: str, torch, emit: Emitter):
    """CUDA when it is available and `want` is auto or cuda, else CPU."""
    if want in ("auto", "cuda") and torch.cuda.is_available():
        dev = torch.device("cuda", 0)
        return dev, torch.cuda.get_device_name(dev)
    if want == "cuda":
        emit.log("CUDA was asked for but is not available here; running on CPU", level="warning")
    return torch.device("cpu"), "cpu"


def _warm_up(torch, device) -> None:
    """Start torch's intra-op thread pool (and, on a GPU, a cuBLAS handle and
    its workspace) before the memory limit is taken, so that they count as
    the runtime's, not the run's."""
    a = torch.ones(256, 256)
    (a @ a).sum().item()
    if device.type == "cuda":
        b = torch.ones(64, 64, device=device)
        (b @ b).sum().item()
        torch.cuda.synchronize(device)


#: cuBLAS picks reproducible kernels only with a fixed workspace; it reads
#: this when its first handle is made, so the child sets it before torch runs
#: anything (ArchitectureIQ runs promise the same winners on any device).
CUBLAS_DETERMINISTIC_WORKSPACE = ":4096:8"


def _prepare_environment(spec: RunSpec) -> None:
    kind = registry.get(spec.kind)
    if kind is not None and kind.deterministic:
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", CUBLAS_DETERMINISTIC_WORKSPACE)


#: prctl(2)'s option that has the kernel signal a process when its parent thread ends.
_PR_SET_PDEATHSIG = 1
#: Set by the local backend, whose thread that starts a child waits on it for the whole run.
DIE_WITH_LAUNCHER_ENV = "ARCHCURATOR_RUN_DIE_WITH_LAUNCHER"


def _die_with_launcher() -> bool:
    """Ask the kernel for SIGKILL when the launcher's thread that started us
    ends: immediate, where a polling thread can be starved for seconds on a
    loaded machine. Only when the local backend started us (its thread lives
    as long as the run; another launcher's thread may not). False where
    prctl is not to be had."""
    if os.environ.get(DIE_WITH_LAUNCHER_ENV) != "1" or not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes  # noqa: PLC0415

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _exit_when_orphaned(poll_s: float = 0.5) -> None:
    """End the child when its launcher dies (it lives in its own session, so
    nothing else would): a run must never outlive the app that watches it.
    The kernel's parent-death signal first; a thread that polls the parent
    as well, for where that is missing (and for the moment before it was set)."""
    parent = os.getppid()
    _die_with_launcher()
    if os.getppid() != parent:  # the launcher died before the signal was asked for
        os._exit(143)

    def watch() -> None:
        while True:
            time.sleep(poll_s)
            if os.getppid() != parent:
                os._exit(143)

    threading.Thread(target=watch, name="orphan-watch", daemon=True).start()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m archcurator.core.runs.child")
    ap.add_argument("spec", nargs="?", help="run spec JSON file, or - for stdin")
    ap.add_argument("--spec-z64", help="the spec in RunSpec.to_z64() form")
    args = ap.parse_args(argv)

    # stdout becomes the private event channel; fd 1 now points at stderr
    event_fd = os.dup(1)
    os.dup2(2, 1)
    try:
        sys.stdout.reconfigure(line_buffering=True)
    except Exception:  # noqa: BLE001
        pass
    emit = Emitter(event_fd)
    _exit_when_orphaned()
    t0 = time.monotonic()
    spec = None
    guard = None
    try:
        registry.load_from_env(os.environ)  # a kind another room registered: its module, named by the launcher
        spec = _read_spec(args)
        guard = MemoryGuard(spec.memory_limit_mb, emit)
        _prepare_environment(spec)
        emit.progress("import", "importing torch")
        import torch  # noqa: PLC0415 - the child is where torch belongs

        torch.manual_seed(spec.seed)
        device, name = resolve_device(spec.device, torch, emit)
        _DEVICE_NAME[0] = name
        emit.progress("device", name, device=name)
        _warm_up(torch, device)
        guard.arm(device, torch)
        emit.log(f"{guard.limit.phrase()}" + (f"; host {guard.host_limit.phrase()}"
                                              if guard.host_limit is not guard.limit else ""))

        metrics = registry.work(registry.get(spec.kind))(spec, device, torch, emit)
        result = RunResult(status="ok", message="", device=name, metrics=metrics or {})
    except BaseException as exc:  # noqa: BLE001 - every ending is reported
        if isinstance(exc, SpecError):
            status, exc_name, msg = "failed", "SpecError", str(exc)
        else:
            limit = guard.limit if guard is not None and guard.limit else (spec.memory_limit_mb if spec else None)
            status, exc_name, msg = classify(exc, limit, guard.host_limit if guard is not None else None)
            # drop references held by the traceback before printing (frees memory)
            traceback.print_exception(exc, file=sys.stderr)
        failed_node = getattr(exc, "archcurator_node", None)  # core.build.FAILED_NODE_ATTR (no torch import here)
        result = RunResult(status=status, exception=exc_name, message=msg, device=_DEVICE_NAME[0],
                           metrics={"failed_node": failed_node} if isinstance(failed_node, str) else {})
    result.seconds = time.monotonic() - t0
    if guard is not None and guard.limit is not None:
        result.memory_limit = guard.limit.to_answer()
    if spec is not None:
        result.kind = spec.kind
    try:
        sys.stderr.flush()
    except Exception:  # noqa: BLE001
        pass
    emit.result(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())

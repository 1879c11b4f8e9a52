"""The runner interface: submit a `RunSpec`, follow its events, cancel it,
ask its status. Two backends implement it: `core.runs.local.LocalRunner`
(a child process on this machine) and `core.runs.ray_backend.RayRunner`
(a Ray job). `get_runner()` picks one.

A handle keeps every event of its run, so `events()` can be called more than
once (each call replays from the first event, then follows the live run) and
from any thread. A UI that polls instead of blocking uses
`events_since(n)`. Every run ends with exactly one `ResultEvent`.
"""

from __future__ import annotations

import os
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterator
from typing import Protocol, runtime_checkable

from .spec import (
    LOG_TAIL_LINES,
    LogEvent,
    ProgressEvent,
    ResultEvent,
    RunEvent,
    RunResult,
    RunSpec,
    StatusEvent,
    decode_event_line,
    event_from_dict,
)

#: The environment variable that names a Ray cluster's dashboard address.
RAY_ADDRESS_ENV = "RAY_API_SERVER_ADDRESS"

#: Longest log line kept from a child.
LINE_MAX = 4000

# Why the launcher stopped a run (kept on the handle, turned into a status).
STOP_CANCEL = "cancelled"
STOP_TIMEOUT = "timeout"


@runtime_checkable
class RunHandle(Protocol):
    run_id: str
    spec: RunSpec

    def events(self, timeout: float | None = None) -> Iterator[RunEvent]: ...
    def events_since(self, index: int) -> list[RunEvent]: ...
    def status(self) -> str: ...
    def cancel(self) -> None: ...
    def wait(self, timeout: float | None = None) -> RunResult | None: ...
    @property
    def result(self) -> RunResult | None: ...


@runtime_checkable
class Runner(Protocol):
    name: str

    def submit(self, spec: RunSpec) -> RunHandle: ...


Listener = Callable[[RunEvent], None]


class BaseHandle:
    """Event history, status and result of one run, shared by the backends.

    Backends call `_emit(event)` from their own threads; a `ResultEvent`
    ends the run. Listeners (`add_listener`) are called on the backend's
    thread, in order, for every event after they were added.
    """

    backend = "?"

    def __init__(self, spec: RunSpec, run_id: str | None = None) -> None:
        self.spec = spec
        self.run_id = run_id or new_run_id()
        self._history: list[RunEvent] = []
        self._cond = threading.Condition()
        self._status = "queued"
        self._result: RunResult | None = None
        self._stop_reason: str | None = None
        self._listeners: list[Listener] = []
        self._log_tail: deque[str] = deque(maxlen=LOG_TAIL_LINES)
        self.device_hint: str | None = None  # what the child said it runs on
        self.submitted_at = time.time()
        self.started_at: float | None = None
        self.ended_at: float | None = None

    # ---- for the app / CLI -------------------------------------------------
    def status(self) -> str:
        """``queued`` or ``running`` while live, then the result's status."""
        with self._cond:
            return self._result.status if self._result else self._status

    @property
    def result(self) -> RunResult | None:
        return self._result

    @property
    def done(self) -> bool:
        return self._result is not None

    def wait(self, timeout: float | None = None) -> RunResult | None:
        """Block until the run ends (or `timeout` s pass); its result or None."""
        with self._cond:
            self._cond.wait_for(lambda: self._result is not None, timeout)
            return self._result

    def events(self, timeout: float | None = None) -> Iterator[RunEvent]:
        """Every event of the run, from the first, following it live until
        its `ResultEvent`. `timeout` bounds the wait for each next event
        (None: no bound); when it passes, the iterator stops early."""
        i = 0
        while True:
            with self._cond:
                if not self._cond.wait_for(lambda i=i: len(self._history) > i, timeout):
                    return
                batch = self._history[i:]
            for ev in batch:
                yield ev
                if isinstance(ev, ResultEvent):
                    return
            i += len(batch)

    def events_since(self, index: int) -> list[RunEvent]:
        """The events after the first `index` (non-blocking), for polling UIs."""
        with self._cond:
            return list(self._history[index:])

    def add_listener(self, fn: Listener, replay: bool = True) -> None:
        """Call `fn(event)` for each event (first replaying past ones)."""
        with self._cond:
            past = list(self._history) if replay else []
            self._listeners.append(fn)
        for ev in past:
            fn(ev)

    def cancel(self) -> None:  # pragma: no cover - overridden
        raise NotImplementedError

    # ---- for backends --------------------------------------------------------
    def _emit(self, ev: RunEvent) -> None:
        ev.run_id = self.run_id
        if isinstance(ev, LogEvent):
            self._log_tail.append(ev.message)
        elif isinstance(ev, ProgressEvent) and ev.info.get("device"):
            self.device_hint = ev.info["device"]
        with self._cond:
            if self._result is not None:
                return  # nothing after the result
            if isinstance(ev, StatusEvent):
                self._status = ev.status
                if ev.status == "running" and self.started_at is None:
                    self.started_at = time.time()
            if isinstance(ev, ResultEvent):
                ev.result.run_id = self.run_id
                self._result = ev.result
                self.ended_at = time.time()
            self._history.append(ev)
            listeners = list(self._listeners)
            self._cond.notify_all()
        for fn in listeners:
            try:
                fn(ev)
            except Exception:  # noqa: BLE001 - a listener's fault must not stop the run
                pass

    def _take_line(self, line: str, stream: str) -> None:
        """One line of the child's output: an event, the child's result (kept for
        the launcher to finish with), or a plain log line."""
        d = decode_event_line(line)
        if d is None:
            if line.strip():
                self._emit(LogEvent(message=line[:LINE_MAX], stream=stream))
            return
        if d.get("type") == "result":
            self._child_result = d.get("result") or {}
            self._child_result_at = time.monotonic()
            return
        try:
            self._emit(event_from_dict(d))
        except Exception:  # noqa: BLE001 - a malformed event is a log line
            self._emit(LogEvent(message=line[:LINE_MAX], stream=stream))

    def _finish(self, result: RunResult) -> None:
        result.kind = result.kind or self.spec.kind
        result.backend = result.backend or self.backend
        if not result.log_tail:
            result.log_tail = "\n".join(self._log_tail)
        self._emit(ResultEvent(result=result))

    def log_tail(self) -> str:
        return "\n".join(self._log_tail)


def new_run_id() -> str:
    return "run-" + uuid.uuid4().hex[:12]


_LOCAL_RUNNER = None
_LOCAL_LOCK = threading.Lock()


def local_runner():
    """The process-wide local runner (one queue for the whole app)."""
    global _LOCAL_RUNNER
    with _LOCAL_LOCK:
        if _LOCAL_RUNNER is None:
            from .local import LocalRunner

            _LOCAL_RUNNER = LocalRunner()
        return _LOCAL_RUNNER


def get_runner(cluster: str | None = None) -> Runner:
    """The Ray runner for `cluster` (or `$RAY_API_SERVER_ADDRESS` when
    `cluster` is None), else the local runner. Raises `RuntimeError` naming
    the missing extra when a cluster is asked for and Ray is not installed."""
    address = cluster or os.environ.get(RAY_ADDRESS_ENV) or None
    if address:
        from .ray_backend import RayRunner

        return RayRunner(address)
    return local_runner()


def run_sync(spec: RunSpec, runner: Runner | None = None, on_event: Listener | None = None) -> RunResult:
    """Submit `spec`, wait for the end, return the result."""
    handle = (runner or local_runner()).submit(spec)
    for ev in handle.events():
        if on_event is not None:
            on_event(ev)
    result = handle.wait()
    assert result is not None
    return result

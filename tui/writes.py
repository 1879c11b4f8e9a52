"""The app's write queue: every curator step goes to the store through one FIFO.

Judgments, notes, flags, bulk verdicts, missed defects and their retraction,
adjudications and undo are written one at a time, in the order the curator
acted, each in a thread worker (group `write`), so an undo always follows the
step it undoes and the UI never waits on DuckDB. Each result comes back as a
`WriteDone` message; a failure reaches `CuratorApp.write_failed` through the
app's one worker-error handler. Quitting waits for the queue to drain.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from textual.worker import Worker, WorkerState

from .widgets.messages import WriteDone

WRITE_GROUP = "write"
KINDS = ("judge", "note", "flag", "bulk", "missed", "retract", "undo", "adjudicate")


@dataclass
class WriteOp:
    """One step to write. `design_id` is the design it changes (None for undo and bulk: the store says)."""

    kind: str
    design_id: str | None = None
    args: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"not a write: {self.kind!r}")


def execute(store, op: WriteOp) -> Any:
    """Do `op` on the app's store adapter (`store.app_queries.AppStore`); its result."""
    a = op.args
    if op.kind == "judge":
        if "seen" in a:
            return store.judge_seen(op.design_id, a.get("key"), a["verdict"], a.get("note"), a["seen"])
        return store.judge(op.design_id, a.get("key"), a["verdict"], a.get("note"))
    if op.kind == "note":
        return store.note(op.design_id, a.get("key"), a.get("note"))
    if op.kind == "flag":
        return store.flag(op.design_id, a.get("key"), a.get("flagged", True))
    if op.kind == "bulk":
        return store.judge_bulk(a["rule"], a["verdict"], op.design_id if a.get("scope") == "design" else None,
                                a.get("filters"))
    if op.kind == "missed":
        return store.mark_missed(op.design_id, a.get("nodes") or [], a.get("rule"), a.get("description"))
    if op.kind == "retract":
        return store.retract_missed(a["defect_id"])
    if op.kind == "adjudicate":
        return store.adjudicate(op.design_id, a["key"], a["verdict"], a.get("note"))
    return store.undo_last()  # undo


class WriteQueue:
    """FIFO of `WriteOp`s for one app: one write worker at a time."""

    def __init__(self, app) -> None:
        self.app = app
        self._ops: deque[WriteOp] = deque()
        self.running: WriteOp | None = None
        self._when_drained: list[Callable[[], None]] = []
        self.waiting_on: str | None = None  # why the running write waits (another process holds the store)

    @property
    def pending(self) -> int:
        return len(self._ops) + (1 if self.running is not None else 0)

    def pending_ops(self) -> list[WriteOp]:
        """The steps not yet written, the running one first."""
        return ([self.running] if self.running is not None else []) + list(self._ops)

    def submit(self, op: WriteOp) -> None:
        self._ops.append(op)
        self._pump()

    def when_drained(self, callback: Callable[[], None]) -> None:
        """Call `callback` once nothing is left to write (now, if nothing is)."""
        self._when_drained.append(callback)
        self._pump()

    def forget_waiters(self) -> None:
        self._when_drained = []

    def _pump(self) -> None:
        if self.running is not None:
            return
        if not self._ops:
            callbacks, self._when_drained = self._when_drained, []
            for cb in callbacks:
                cb()
            return
        op = self._ops.popleft()
        self.running = op
        self.app.run_worker(partial(self._execute, op), thread=True, group=WRITE_GROUP, exclusive=True,
                            exit_on_error=False, name=f"write {op.kind}")

    def _execute(self, op: WriteOp) -> None:
        """Write `op`; while another process holds the store (a second curator's app, an import), try again
        until it is written: a step shown as saving is never dropped for want of the writer lock."""
        from archcurator.store.connection import StoreBusy

        delay = 0.05
        while True:
            try:
                result = execute(self.app.store, op)
                break
            except StoreBusy as exc:
                who = f"PID {exc.pid}" if exc.pid is not None else "another process"
                self.waiting_on = f"store busy: held by {who}, retrying"
                self._tell()
                time.sleep(delay)
                delay = min(delay * 2, 1.0)
        if self.waiting_on is not None:
            self.waiting_on = None
            self._tell()
        self.app.post_message(WriteDone(op, result))

    def _tell(self) -> None:
        try:
            self.app.call_from_thread(self.app.writes_changed)
        except RuntimeError:
            pass  # the app is closing: nothing left to show it on

    def worker_changed(self, worker: Worker, state: WorkerState) -> None:
        """The app's worker handler calls this for the `write` group."""
        if state not in (WorkerState.SUCCESS, WorkerState.ERROR, WorkerState.CANCELLED):
            return
        op, self.running = self.running, None
        if state == WorkerState.ERROR and op is not None:
            self.app.write_failed(op, worker.error)
        self._pump()
        # the step's WriteDone was shown while it was still the running write: "saving 1…" stayed on
        # screen after DuckDB had committed it, until the next key
        self.app.writes_changed()

"""The import's verifying processes: a spawn pool whose workers die with the import.

Big batches (`POOL_THRESHOLD` designs and more) are verified in `POOL_SIZE`
spawn processes, `CHUNK` items a task; each worker asks the kernel to kill it
when the importing process dies (PR_SET_PDEATHSIG; elsewhere a watcher thread),
so a killed import leaves no worker behind. Small batches run in-process.
`process(items)` is one chunk's work, each design under the per-design CPU budget.
"""

from __future__ import annotations

import gc
import os
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor

from ..budget import design_budget_s
from .inputs import Item
from .records import Refused, record, stored_text
from .rows import build_rows, utcnow
from .types import Defaults

CHUNK = 128
POOL_THRESHOLD = 400  # designs in a batch before a process pool pays for itself
POOL_SIZE = 2

_W: dict = {}


def init_worker(defaults: Defaults, known: frozenset | set, verifier: Callable | None,
                 budget_s: float | None = None, parent: int | None = None) -> None:
    _W["defaults"] = defaults
    _W["known"] = known
    _W["verifier"] = verifier
    _W["budget"] = budget_s if budget_s is not None else design_budget_s()
    if parent is not None:  # a pool worker
        _die_with_parent(parent)
        # imported here, so that the first design's budget is not spent importing the verifier
        from .. import verify  # noqa: F401
        from . import verified  # noqa: F401


def _die_with_parent(parent: int) -> None:
    """A pool worker ends when the import that started it ends, however it ends (kill -9
    included): it would otherwise wait on its queue for ever, and keep the resource tracker
    (which waits for every holder of its pipe) alive with it."""
    import signal
    import sys

    if sys.platform.startswith("linux"):
        try:
            libc = ctypes_libc()
            libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG: the kernel kills us when the parent dies
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:  # it died before we could ask
        os._exit(1)

    def watch():  # where there is no PR_SET_PDEATHSIG: look
        import time

        while True:
            time.sleep(1.0)
            if os.getppid() != parent:
                os._exit(1)

    threading.Thread(target=watch, name="archcurator-parent-watch", daemon=True).start()


def ctypes_libc():
    import ctypes
    import ctypes.util

    return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)


def process(items: list[Item]) -> list[tuple]:
    """("ok", file, line, row, findings, by_content) | ("skip", file, line, id) | ("bad", file, line, message)."""
    from ..budget import Budget, OverBudget

    defaults, known, verifier = _W["defaults"], _W["known"], _W["verifier"]
    budget = _W.get("budget") or design_budget_s()
    collecting = gc.isenabled()
    now = utcnow()
    out: list[tuple] = []
    for it in items:
        try:
            with Budget(budget):
                rec = record(it, defaults)
                if rec["id"] in known:
                    out.append(("skip", it.file, it.line, rec["id"]))
                    continue
                source = stored_text(f"{it.file}:{it.line}" if it.line is not None else it.file)
                row, findings = build_rows(rec, source, verifier, now)
            out.append(("ok", it.file, it.line, row, findings, rec["by_content"]))
        except Refused as exc:
            out.append(("bad", it.file, it.line, str(exc)))
        except OverBudget:
            if collecting and not gc.isenabled():
                gc.enable()  # the budget may have ended the verifier between its gc.disable() and its finally
            out.append(("bad", it.file, it.line,
                        f"over the time budget: reading and verifying it took more than {budget:g} s of CPU "
                        "(the rest of the import goes on; $ARCHCURATOR_DESIGN_BUDGET_S sets the budget)"))
    return out


def chunks(items: Iterable[Item], size: int) -> Iterator[list[Item]]:
    buf: list[Item] = []
    for it in items:
        buf.append(it)
        if len(buf) >= size:
            yield buf
            buf = []
    if buf:
        yield buf


def pool_size(count: int, workers: int | None) -> int:
    """Processes for a batch of `count` designs: `workers` (None: POOL_SIZE from POOL_THRESHOLD on),
    at most the CPU count; 0 means in-process."""
    n = workers if workers is not None else (POOL_SIZE if count >= POOL_THRESHOLD else 0)
    return min(n, os.cpu_count() or 1) if n and n > 1 else 0


def start_pool(size: int, defaults: Defaults, known: frozenset, verifier: Callable | None,
               budget_s: float) -> ProcessPoolExecutor:
    import multiprocessing as mp

    return ProcessPoolExecutor(size, mp_context=mp.get_context("spawn"), initializer=init_worker,
                               initargs=(defaults, known, verifier, budget_s, os.getpid()))

"""A time budget for one unit of work: past it, `OverBudget` is raised in the thread doing it.

    with Budget(10.0):
        verify(design)        # raises OverBudget once this thread has spent 10 s of CPU on it

One design of an import must not stop the import however long it would take:
its budget ends it with a reason and the next design goes on. Signals cannot
do this (only the main thread gets them, and the app imports from worker
threads), so one watchdog thread per process looks at every armed budget a
few times a second and raises `OverBudget` in a thread that has run past its
own, through CPython's `PyThreadState_SetAsyncExc`: the exception arrives
between two bytecodes, so a single long C call (none in the verifier) would
delay it until it returns.

The budget counts the thread's CPU time where the platform gives it
(`time.pthread_getcpuclockid`), so a busy machine does not cut a design
short, and wall time six times as long as a backstop for work that waits.
`OverBudget` derives from BaseException: the verifier's `except Exception`
(which turns a malformed argument into a finding) must not swallow it.
"""

from __future__ import annotations

import _thread
import os
import time

from .valueclass import value_class

TICK_S = 0.05  # how often the watchdog looks
WALL_FACTOR = 6.0  # wall-time backstop, in budgets


class OverBudget(BaseException):
    """The unit of work ran past its budget (raised in its own thread)."""


@value_class
class _Armed:
    seconds: float
    clock: int | None  # the thread's CPU clock, where there is one
    cpu0: float
    wall0: float
    fired: bool = False


# the watchdog is a bare _thread (threading was a fiftieth of `verify --json`'s start-up): it never ends,
# so it runs in the process that started it (a forked child starts its own; the pid says whose it is)
_lock = _thread.allocate_lock()
_armed: dict[int, _Armed] = {}  # thread ident -> its budget
_watchdog_pid: int | None = None  # the process whose watchdog runs; None: none runs


def _cpu_clock(tid: int) -> int | None:
    try:
        clock = time.pthread_getcpuclockid(tid)
        time.clock_gettime(clock)
        return clock
    except (AttributeError, OSError):  # no per-thread CPU clock here: wall time only
        return None


def _raise_in(tid: int, exc: type | None) -> None:
    """Raise `exc` in thread `tid` at its next bytecode; None takes back one not yet raised. Called only once a
    budget has fired, so after the watchdog imported ctypes."""
    import ctypes

    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(tid), ctypes.py_object(exc) if exc else None)


def _watch() -> None:
    global _watchdog_pid
    try:
        _look()
    finally:  # never, unless the look itself fails: the next budget starts another
        with _lock:
            _watchdog_pid = None


def _look() -> None:
    have_ctypes = False
    while True:
        time.sleep(TICK_S)
        if not have_ctypes:
            # imported here, on the first look, not where this module is: work done within one tick (a
            # design's `verify --json`) never pays for it, and it was a twentieth of that command's start-up.
            # A failed import (the address space at its limit) is tried again at the next look.
            try:
                import ctypes  # noqa: F401
            except (ImportError, MemoryError):
                continue
            have_ctypes = True
        now = time.monotonic()
        with _lock:
            for tid, a in _armed.items():
                if a.fired:
                    continue
                used = now - a.wall0
                over = used > a.seconds * WALL_FACTOR
                if not over and a.clock is not None:
                    try:
                        over = time.clock_gettime(a.clock) - a.cpu0 > a.seconds
                    except OSError:  # the thread is gone
                        continue
                elif not over:
                    over = used > a.seconds
                if over:
                    a.fired = True
                    _raise_in(tid, OverBudget)


class Budget:
    """`with Budget(seconds):` — OverBudget is raised in this thread past `seconds` of its CPU time
    (or `WALL_FACTOR` times that of wall time). `seconds` None or <= 0: no budget."""

    def __init__(self, seconds: float | None):
        self.seconds = seconds if seconds and seconds > 0 else None
        self.fired = False

    def __enter__(self) -> Budget:
        global _watchdog_pid
        if self.seconds is None:
            return self
        tid = _thread.get_ident()
        clock = _cpu_clock(tid)
        armed = _Armed(self.seconds, clock, time.clock_gettime(clock) if clock is not None else 0.0,
                       time.monotonic())
        with _lock:
            _armed[tid] = armed
            if _watchdog_pid != os.getpid():
                _thread.start_new_thread(_watch, ())
                _watchdog_pid = os.getpid()
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        if self.seconds is None:
            return False
        tid = _thread.get_ident()
        with _lock:
            armed = _armed.pop(tid, None)
            fired = armed is not None and armed.fired
            if fired and exc_type is not OverBudget:
                _raise_in(tid, None)  # it ran out as the work ended: the work stands, take the exception back
        self.fired = fired or exc_type is OverBudget
        return False


# ---- one command's whole budget: CPU time and address space ----------------------------------------
DESIGN_BUDGET_S = 10.0  # CPU seconds one design may take to be read and verified (a sound
# 10,000-node design takes well under one); past it the design is refused with that reason
MEMORY_BUDGET = 1 << 30  # bytes a command reading one design may grow by (parse's own figure)


def design_budget_s() -> float:
    """The per-design budget: $ARCHCURATOR_DESIGN_BUDGET_S, else DESIGN_BUDGET_S."""
    try:
        v = float(os.environ.get("ARCHCURATOR_DESIGN_BUDGET_S", DESIGN_BUDGET_S))
    except ValueError:
        return DESIGN_BUDGET_S
    return v if v > 0 else DESIGN_BUDGET_S


def _address_space() -> int | None:
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


class AddressSpace:
    """`with AddressSpace(limit):` — this process may grow its address space by `limit` bytes; an
    allocation past it fails with MemoryError, raised where it happens (a polling check sees the growth
    only after it: a 2.6 MB list literal grew `parse` by 1.2 GB inside one C call). The soft
    RLIMIT_AS is lowered to the address space now plus the limit (never above the hard limit) and put
    back on exit. For a command's own process only: the limit is the process's, not one thread's.
    Where the platform has no RLIMIT_AS or no /proc, nothing is limited."""

    def __init__(self, limit: int):
        self.limit = limit
        self.saved = None

    def __enter__(self) -> AddressSpace:
        try:
            import resource
        except ImportError:
            return self
        now = _address_space()
        if now is None:
            return self
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        want = now + self.limit
        if hard != resource.RLIM_INFINITY:
            want = min(want, hard)
        if soft != resource.RLIM_INFINITY and soft <= want:
            return self  # a tighter limit is already set
        try:
            resource.setrlimit(resource.RLIMIT_AS, (want, hard))
        except (ValueError, OSError):
            return self
        self.saved = (soft, hard)
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        if self.saved is not None:
            import resource

            resource.setrlimit(resource.RLIMIT_AS, self.saved)
            self.saved = None
        return False

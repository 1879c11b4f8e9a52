"""How much memory a run may take: the default when none is asked for, and
the arithmetic of the guard that enforces it (`core.runs.child.MemoryGuard`).

Every run has a memory limit. ``RunSpec.memory_limit_mb`` sets it; left
None, the child takes a share of what is free where the run runs, measured
at its start (so a Ray job measures the cluster node, not the launcher):

- on the CPU, `HOST_SHARE` of the machine's free memory (MemAvailable, or
  what the process's cgroup still allows when that is less);
- on a GPU, `GPU_SHARE` of the device's free memory
  (``torch.cuda.mem_get_info``). The queue gives each GPU one run at a time,
  so the run may take most of it; the rest is headroom for the CUDA context
  and the libraries' workspaces, which the caching allocator does not count.

No torch at import time: the launcher and the app import this module.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

MB = 1 << 20

#: Share of the machine's free memory a CPU run may take by default.
HOST_SHARE = 0.5
#: Share of the GPU's free memory a GPU run may take by default.
GPU_SHARE = 0.9
#: Never default below this (a machine reporting almost nothing free still
#: gets a limit a small design can run under, and the kill names it).
FLOOR_MB = 256


@dataclass(frozen=True)
class MemoryLimit:
    """A run's effective memory limit.

    mb: the limit, on top of what the child holds once python and torch are
    up; where: ``host`` (address space of a CPU run) or ``gpu`` (the CUDA
    caching allocator of a GPU run); default: True when the spec left it
    unset; rule: how a default was reached, e.g. "50% of the 15872 MB free
    on this machine".
    """

    mb: int
    where: str = "host"
    default: bool = False
    rule: str = ""

    def phrase(self) -> str:
        """The limit as the run's message names it."""
        what = "GPU memory limit" if self.where == "gpu" else "memory limit"
        if self.default:
            return f"{what} of {self.mb} MB (the default: {self.rule})"
        return f"{what} of {self.mb} MB"

    def to_answer(self) -> dict:
        return {"mb": self.mb, "where": self.where, "set_by": "default" if self.default else "spec",
                "rule": self.rule if self.default else "asked for in the run's spec"}


# ---- what is free ---------------------------------------------------------------------


def _read_int(path: str) -> int | None:
    try:
        with open(path) as fh:
            text = fh.read().strip()
    except OSError:
        return None
    if not text or text == "max":
        return None
    try:
        return int(text.split()[0])
    except ValueError:
        return None


def _meminfo_available() -> int | None:
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


#: Limits at or above this mean "no limit" (cgroup v1 writes 2**63 rounded to a page).
_UNLIMITED = 1 << 60


def _cgroup_room() -> int | None:
    """Bytes the process's memory cgroup still allows (limit - usage), or None
    when it sets no limit or cannot be read."""
    try:
        with open("/proc/self/cgroup") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return None
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        path = path.lstrip("/")
        if controllers == "":  # cgroup v2
            base = os.path.join("/sys/fs/cgroup", path)
            limit, usage = _read_int(os.path.join(base, "memory.max")), _read_int(
                os.path.join(base, "memory.current"))
        elif "memory" in controllers.split(","):  # cgroup v1
            base = os.path.join("/sys/fs/cgroup/memory", path)
            limit, usage = _read_int(os.path.join(base, "memory.limit_in_bytes")), _read_int(
                os.path.join(base, "memory.usage_in_bytes"))
        else:
            continue
        if limit is not None and limit < _UNLIMITED and usage is not None:
            return max(0, limit - usage)
    return None


def host_free_bytes() -> int:
    """The machine's free memory: MemAvailable, lowered to the cgroup's room
    when that is smaller; sysconf's available pages where /proc is missing."""
    free = _meminfo_available()
    if free is None:
        try:
            free = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (ValueError, OSError, AttributeError):
            free = 0
    room = _cgroup_room()
    if room is not None:
        free = min(free, room)
    return free


# ---- the defaults -----------------------------------------------------------------------


def _share_mb(free_bytes: int, share: float) -> int:
    return max(FLOOR_MB, int(free_bytes * share) // MB)


def default_host_limit(free_bytes: int | None = None) -> MemoryLimit:
    """The default limit of a CPU run: `HOST_SHARE` of the machine's free memory."""
    free = host_free_bytes() if free_bytes is None else free_bytes
    return MemoryLimit(mb=_share_mb(free, HOST_SHARE), where="host", default=True,
                       rule=f"{HOST_SHARE:.0%} of the {free // MB} MB free on this machine")


def default_gpu_limit(free_bytes: int, name: str = "the GPU") -> MemoryLimit:
    """The default limit of a GPU run: `GPU_SHARE` of the device's free memory."""
    return MemoryLimit(mb=_share_mb(free_bytes, GPU_SHARE), where="gpu", default=True,
                       rule=f"{GPU_SHARE:.0%} of the {free_bytes // MB} MB free on {name}")


def resolve(spec_mb: int | None, where: str, free_bytes: int | None = None, name: str = "the GPU") -> MemoryLimit:
    """The effective limit for a run on `where` (``host`` or ``gpu``): the
    spec's when it sets one, else the default from `free_bytes` (for the host,
    measured now when not given)."""
    if spec_mb:
        return MemoryLimit(mb=int(spec_mb), where=where, default=False)
    if where == "gpu":
        if free_bytes is None:
            raise ValueError("a GPU's default limit needs its free memory")
        return default_gpu_limit(free_bytes, name)
    return default_host_limit(free_bytes)


# ---- the guard's arithmetic ------------------------------------------------------------------


def cuda_fraction(limit_bytes: int, total_bytes: int, reserved_bytes: int = 0) -> float:
    """The argument of ``torch.cuda.set_per_process_memory_fraction`` that lets
    the caching allocator hold `limit_bytes` on top of what it already holds.

    The fraction caps the allocator's *reserved* memory as a share of the
    device's *total* memory, so what is reserved already (the warm-up's
    cuBLAS workspace) is added, as the limit counts on top of the runtime.
    """
    if total_bytes <= 0:
        raise ValueError(f"a device with {total_bytes} bytes of memory")
    return float(min(1.0, max(0.0, (reserved_bytes + limit_bytes) / total_bytes)))


def address_space_limit(vm_bytes: int, limit_bytes: int, hard: int | None) -> int:
    """The soft RLIMIT_AS of a CPU run: its address space now plus the limit,
    never above the hard limit (None: no hard limit)."""
    soft = vm_bytes + limit_bytes
    return soft if hard is None else min(soft, hard)


def rss_ceiling(base_anon_bytes: int, limit_bytes: int) -> int:
    """The anonymous resident memory past which the CUDA watchdog ends a run.

    Anonymous memory only (RssAnon): the pages of the CUDA, cuBLAS and cuDNN
    libraries the run maps and touches as it loads kernels are file pages,
    which the kernel can drop again; counting them (VmRSS) would end healthy
    runs under a small limit."""
    return base_anon_bytes + limit_bytes


def host_backstop_bytes(spec_mb: int | None, allowance_mb: int, free_bytes: int | None = None) -> int:
    """The hard RLIMIT_AS the local backend sets before a CPU child starts:
    the run's limit (the default when the spec sets none) plus an allowance
    for python, torch and their threads."""
    limit = resolve(spec_mb, "host", free_bytes)
    return (limit.mb + allowance_mb) * MB

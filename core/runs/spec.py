"""What a run is (`RunSpec`), what it says while it runs (events) and how it
ends (`RunResult`).

Everything here is plain data that travels as JSON: from the launching
process to the child (`python -m archcurator.core.runs.child`), and back from the child
as one JSON object a line on its stdout, each line starting with
`EVENT_PREFIX` so that the lines can be picked out of a log that also holds
other output (a Ray job's log mixes stdout and stderr).

No torch here: the app imports this module.
"""

from __future__ import annotations

import base64
import json
import time
import zlib
from dataclasses import asdict, dataclass, field
from typing import Any

from . import registry

#: How a run ends, exactly as SPEC §4 lists them.
STATUSES = ("ok", "failed", "timeout", "killed", "cancelled")
DEVICES = ("auto", "cpu", "cuda")

#: Marks a child's event line in a stream that may hold other output.
EVENT_PREFIX = "@@archcurator-event "

DEFAULT_TIME_LIMIT_S = 300.0
DEFAULT_TRAIN_STEPS = 50
DEFAULT_BATCH = 2
#: Lines of the child's log kept in `RunResult.log_tail`.
LOG_TAIL_LINES = 40


class SpecError(ValueError):
    """A run spec that is not well formed; the message is one line."""


@dataclass
class RunSpec:
    """One run to launch.

    kind: ``forward`` (one forward pass), ``train`` (a short training on a
    synthetic task, `steps` steps), or a kind another room registered
    (`registry`; ``aiq``: an ArchitectureIQ candidate, `payload` is handed to
    ``core.aiq.execute.run_candidate``).
    design: the archgraph/1 design as a dict (forward, train).
    device: ``auto`` (CUDA when available, else CPU), ``cpu`` or ``cuda``
    (falls back to CPU, with a log line, when CUDA is not available).
    time_limit_s: wall time of the child, counted from its start (not the
    time spent queued); None means no limit.
    memory_limit_mb: memory the run may take on top of the interpreter and
    torch (see core/runs/README.md). None means the default, not "no limit":
    every run has a limit, by default a share of the memory free where it
    runs (`core.runs.memory`: half the machine's free memory on the CPU, 90%
    of the GPU's free memory on a GPU).
    tags: free-form labels for the launcher (e.g. the store's design id); the
    child ignores them.
    """

    kind: str = "forward"
    design: dict | None = None
    payload: dict | None = None
    batch_size: int | None = None  # None: forward at the design's declared batch, others at 2
    device: str = "auto"
    steps: int | None = None
    time_limit_s: float | None = DEFAULT_TIME_LIMIT_S
    memory_limit_mb: int | None = None
    seed: int = 0
    tags: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        kind = registry.get(self.kind)
        if kind is None:
            raise SpecError(f"run kind must be one of {', '.join(registry.names())}, got {self.kind!r}")
        if self.device not in DEVICES:
            raise SpecError(f"device must be one of {', '.join(DEVICES)}, got {self.device!r}")
        if kind.needs == "design" and not isinstance(self.design, dict):
            raise SpecError(f"a {self.kind} run needs a design (an archgraph/1 dict)")
        if kind.needs == "payload" and not isinstance(self.payload, dict):
            raise SpecError(f"an {self.kind} run needs a payload (a dict)")
        if self.batch_size is not None and (not isinstance(self.batch_size, int) or self.batch_size < 1):
            raise SpecError(f"batch size must be a positive integer, got {self.batch_size!r}")
        if self.steps is not None and (not isinstance(self.steps, int) or self.steps < 1):
            raise SpecError(f"steps must be a positive integer, got {self.steps!r}")
        if self.time_limit_s is not None and not self.time_limit_s > 0:
            raise SpecError(f"time limit must be positive, got {self.time_limit_s!r}")
        if self.memory_limit_mb is not None and not self.memory_limit_mb > 0:
            raise SpecError(f"memory limit must be positive, got {self.memory_limit_mb!r}")

    @property
    def batch(self) -> int:
        """The batch of a train or aiq run (a forward run takes the design's declared one when None)."""
        return self.batch_size if self.batch_size is not None else DEFAULT_BATCH

    @property
    def train_steps(self) -> int:
        if self.steps is not None:
            return self.steps
        return DEFAULT_TRAIN_STEPS

    # ---- serialisation -------------------------------------------------
    def to_dict(self) -> dict:
        return asdict(self)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), separators=(",", ":"))

    @classmethod
    def from_dict(cls, d: Any) -> RunSpec:
        if not isinstance(d, dict):
            raise SpecError(f"a run spec must be a JSON object, got {type(d).__name__}")
        known = {f for f in cls.__dataclass_fields__}
        unknown = sorted(set(d) - known)
        if unknown:
            raise SpecError(f"unknown run spec field(s): {', '.join(unknown)}")
        return cls(**d)

    @classmethod
    def from_json(cls, text: str) -> RunSpec:
        try:
            d = json.loads(text)
        except json.JSONDecodeError as exc:
            raise SpecError(f"run spec is not JSON: {exc}") from None
        return cls.from_dict(d)

    def to_z64(self) -> str:
        """Compact form for a command line: zlib-compressed, URL-safe base64."""
        return base64.urlsafe_b64encode(zlib.compress(self.to_json().encode(), 9)).decode()

    @classmethod
    def from_z64(cls, text: str) -> RunSpec:
        try:
            raw = zlib.decompress(base64.urlsafe_b64decode(text.encode()))
        except Exception as exc:  # noqa: BLE001 - any decoding fault is a spec error
            raise SpecError(f"run spec could not be decoded: {exc}") from None
        return cls.from_json(raw.decode())


@dataclass
class RunResult:
    """How a run ended. `status` is one of STATUSES; `exception` the class
    name of the exception that ended it (or None); `device` the device's name
    (``cpu`` or e.g. ``NVIDIA H200``); `seconds` the child's wall time;
    `memory_limit` the limit the run ran under (`MemoryLimit.to_answer()`:
    mb, where, set_by, rule), None when the child ended before taking it."""

    status: str
    exception: str | None = None
    message: str = ""
    device: str = "cpu"
    seconds: float = 0.0
    metrics: dict = field(default_factory=dict)
    log_tail: str = ""
    run_id: str | None = None
    kind: str | None = None
    backend: str | None = None
    memory_limit: dict | None = None

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise SpecError(f"run status must be one of {', '.join(STATUSES)}, got {self.status!r}")

    def to_dict(self) -> dict:
        return asdict(self)

    def to_answer(self) -> dict:
        """The `archcurator run --json` answer: SPEC §4's five keys first,
        then the extras (kind, backend, run_id, memory_limit, metrics)."""
        return {
            "status": self.status,
            "exception": self.exception,
            "message": self.message,
            "device": self.device,
            "seconds": round(self.seconds, 3),
            "kind": self.kind,
            "backend": self.backend,
            "run_id": self.run_id,
            "memory_limit": self.memory_limit,
            "metrics": self.metrics,
        }

    @classmethod
    def from_dict(cls, d: dict) -> RunResult:
        known = {f for f in cls.__dataclass_fields__}
        return cls(**{k: v for k, v in d.items() if k in known})


# ---- events ----------------------------------------------------------------


@dataclass
class StatusEvent:
    """The launcher's word on where a run stands: queued, running."""

    status: str
    run_id: str | None = None
    t: float = field(default_factory=time.time)
    type: str = "status"

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class ProgressEvent:
    """A stage of the run (import, device, build, forward, train) and, for
    training, the step reached out of `total`. `info` carries facts the
    launcher keeps (e.g. ``{"device": "NVIDIA H200"}``)."""

    stage: str
    step: int | None = None
    total: int | None = None
    message: str = ""
    info: dict = field(default_factory=dict)
    run_id: str | None = None
    t: float = field(default_factory=time.time)
    type: str = "progress"

    @property
    def fraction(self) -> float | None:
        if self.step is None or not self.total:
            return None
        return min(1.0, self.step / self.total)

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class LogEvent:
    """One line of the child's output (its stderr, stray stdout, a job log)."""

    message: str
    level: str = "info"
    stream: str = "stderr"
    run_id: str | None = None
    t: float = field(default_factory=time.time)
    type: str = "log"

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class MetricEvent:
    """One value of a named series, e.g. the training loss at a step."""

    name: str
    value: float | None
    step: int | None = None
    run_id: str | None = None
    t: float = field(default_factory=time.time)
    type: str = "metric"

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class ResultEvent:
    """The last event of every run."""

    result: RunResult
    run_id: str | None = None
    t: float = field(default_factory=time.time)
    type: str = "result"

    def to_dict(self) -> dict:
        return {"type": self.type, "run_id": self.run_id, "t": self.t, "result": self.result.to_dict()}


RunEvent = StatusEvent | ProgressEvent | LogEvent | MetricEvent | ResultEvent
_EVENT_TYPES = {
    "status": StatusEvent,
    "progress": ProgressEvent,
    "log": LogEvent,
    "metric": MetricEvent,
}


def event_from_dict(d: dict) -> RunEvent:
    """The event a `to_dict()` (or a child's JSON line) describes."""
    kind = d.get("type")
    if kind == "result":
        return ResultEvent(
            result=RunResult.from_dict(d["result"]), run_id=d.get("run_id"), t=d.get("t", time.time())
        )
    cls = _EVENT_TYPES.get(kind)
    if cls is None:
        raise SpecError(f"unknown event type {kind!r}")
    known = {f for f in cls.__dataclass_fields__}
    return cls(**{k: v for k, v in d.items() if k in known})


def encode_event_line(d: dict) -> str:
    """A child's event as one line of its stdout."""
    return EVENT_PREFIX + json.dumps(d, separators=(",", ":"), allow_nan=False, default=str) + "\n"


def decode_event_line(line: str) -> dict | None:
    """The event dict of a line written by `encode_event_line`, else None
    (the line is ordinary output)."""
    idx = line.find(EVENT_PREFIX)
    if idx < 0:
        return None
    try:
        d = json.loads(line[idx + len(EVENT_PREFIX):])
    except json.JSONDecodeError:
        return None
    return d if isinstance(d, dict) and "type" in d else None

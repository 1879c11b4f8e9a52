"""Runs: a design's forward check or short training, or an ArchitectureIQ
candidate, executed for real in a child process (locally or as a Ray job).

The app and the CLI use:

    from . import RunSpec, get_runner
    handle = get_runner(cluster=None).submit(RunSpec(kind="forward", design=d))
    for event in handle.events(): ...      # status, progress, log, metric, result
    handle.cancel(); handle.status(); handle.wait() -> RunResult

See core/runs/README.md.
"""

from .registry import RunKind
from .registry import register as register_kind
from .runner import BaseHandle, RunHandle, Runner, get_runner, local_runner, run_sync
from .spec import (
    EVENT_PREFIX,
    STATUSES,
    LogEvent,
    MetricEvent,
    ProgressEvent,
    ResultEvent,
    RunEvent,
    RunResult,
    RunSpec,
    SpecError,
    StatusEvent,
    event_from_dict,
)

__all__ = [
    "BaseHandle", "RunHandle", "Runner", "get_runner", "local_runner", "run_sync",
    "EVENT_PREFIX", "STATUSES", "RunKind", "register_kind", "LogEvent", "MetricEvent", "ProgressEvent",
    "ResultEvent", "RunEvent", "RunResult", "RunSpec", "SpecError", "StatusEvent",
    "event_from_dict",
]

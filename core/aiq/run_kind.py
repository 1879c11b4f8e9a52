"""The ``aiq`` run kind: an ArchitectureIQ candidate executed in a `core.runs` child.

Importing this module registers the kind (`core.runs.registry`); `core.aiq.execute`
imports it where it makes ``aiq`` run specs, and the child imports it because
its launcher names it (`registry.KIND_MODULE_ENV`). Runs on a GPU fix
cuBLAS's workspace first (`deterministic`): the same winners on any device.
"""

from __future__ import annotations

import inspect

from ..runs.registry import RunKind, register

KIND = register(RunKind("aiq", "aiq.run_kind", needs="payload", deterministic=True))


def run(spec, device, torch, emit) -> dict:
    """`core.aiq.execute.run_candidate(payload, ...)` on the device the child resolved."""
    try:
        from .execute import run_candidate  # noqa: PLC0415
    except ImportError as exc:
        raise ImportError(f"ArchitectureIQ runs need core.aiq.execute.run_candidate: {exc}") from None
    offered = {"device": device, "emit": emit, "seed": spec.seed, "batch_size": spec.batch,
               "steps": spec.steps}
    try:
        sig = inspect.signature(run_candidate)
        takes_all = any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values())
        kwargs = {k: v for k, v in offered.items() if takes_all or k in sig.parameters}
    except (TypeError, ValueError):
        kwargs = {}
    payload = dict(spec.payload)
    payload.setdefault("device", device.type)  # the device this child resolved
    emit.progress("aiq", "running the candidate")
    out = run_candidate(payload, **kwargs)
    if isinstance(out, dict):
        return out
    return {"value": out}

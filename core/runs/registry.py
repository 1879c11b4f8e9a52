"""The run kinds: a registry that the rooms which define kinds register into.

`core.runs` knows its own kinds (``forward``, ``train``: `kinds.py`) and no
client: a room with a kind of its own registers it (``aiq``:
`core.aiq.run_kind`, registered when that module is imported; `core.aiq.execute`
imports it). A kind is a name, the module (relative to `core`, so that it
resolves in a Ray job that ships `core` by itself) whose `run(spec, device,
torch, emit) -> dict` does the work in the child, what the spec must carry,
and whether the child fixes cuBLAS's workspace.

The child learns of a client's kind from its launcher: the backends put the
kind's module in `KIND_MODULE_ENV`, and the child imports it (which registers
the kind) before it reads the spec.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass

#: The environment variable that names, for the child, the module of a registered kind (relative to `core`).
KIND_MODULE_ENV = "ARCHCURATOR_RUN_KIND_MODULE"
_MODULE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")


@dataclass(frozen=True)
class RunKind:
    name: str
    #: the module, relative to `core` (e.g. ``aiq.run_kind``), whose `run(spec, device, torch, emit)` does the work
    module: str
    #: what a spec of this kind must carry: ``design`` (an archgraph/1 dict) or ``payload`` (a dict)
    needs: str = "design"
    #: the child sets a fixed cuBLAS workspace first, so runs give the same winners on any device
    deterministic: bool = False

    def __post_init__(self) -> None:
        if self.needs not in ("design", "payload"):
            raise ValueError(f"run kind {self.name!r}: needs must be design or payload, not {self.needs!r}")
        if not _MODULE_NAME.fullmatch(self.module):
            raise ValueError(f"run kind {self.name!r}: {self.module!r} is not a module name")


_KINDS: dict[str, RunKind] = {}


def register(kind: RunKind) -> RunKind:
    """Add `kind` (again: replaced by the same name)."""
    _KINDS[kind.name] = kind
    return kind


def get(name: str) -> RunKind | None:
    return _KINDS.get(name)


def names() -> tuple[str, ...]:
    return tuple(_KINDS)


def work(kind: RunKind):
    """The kind's `run` function, its module imported from the `core` this module belongs to."""
    core = __name__.rsplit(".runs.", 1)[0]  # archcurator.core, or core in a job that ships core alone
    return importlib.import_module(f"{core}.{kind.module}").run


def load_from_env(environ) -> None:
    """In the child: import the module its launcher named (registering that kind)."""
    module = environ.get(KIND_MODULE_ENV)
    if not module:
        return
    if not _MODULE_NAME.fullmatch(module):
        raise ValueError(f"{KIND_MODULE_ENV}: {module!r} is not a module name")
    core = __name__.rsplit(".runs.", 1)[0]
    importlib.import_module(f"{core}.{module}")


def env_for(name: str) -> dict[str, str]:
    """What a launcher puts in the child's environment so that the child knows the kind `name`."""
    kind = _KINDS.get(name)
    if kind is None or kind.module == BUILT_IN_MODULE:
        return {}
    return {KIND_MODULE_ENV: kind.module}


BUILT_IN_MODULE = "runs.kinds"
register(RunKind("forward", BUILT_IN_MODULE, needs="design"))
register(RunKind("train", BUILT_IN_MODULE, needs="design"))

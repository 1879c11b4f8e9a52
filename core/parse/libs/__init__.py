"""Models of the parts of installed libraries that the parser reads from source but cannot
follow as written: registries filled by import side effects (`sys.modules`, decorators run
when a package is imported), which a parser that reads lazily and never imports cannot see.

A model replaces one top-level name of one source module (`timm.models._registry.
model_entrypoint`): `@replaces(module, name)` next to its code.  Everything else of the library
is read from its own source."""

from __future__ import annotations

from collections.abc import Callable

_REPLACED: dict[str, dict[str, Callable]] = {}


def replaces(module: str, *names: str):
    """Register the decorated `make(interp, source_module, read)` as the value of each `module.name`;
    `read()` gives the value as the source defines it (for a model that patches it)."""
    def deco(make):
        for n in names:
            _REPLACED.setdefault(module, {})[n] = make
        return make
    return deco


def replacement(module_dotted, name):
    """The maker of `module_dotted.name`'s modelled value, or None when it is read from source."""
    own = _REPLACED.get(module_dotted)
    return own.get(name) if own is not None else None


from . import hf as _hf  # noqa: E402,F401  (registers its models)
from . import timm as _timm  # noqa: E402,F401

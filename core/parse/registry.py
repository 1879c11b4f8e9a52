"""Which handler models a call of an outside name (`torch.nn.functional.linear`,
`functools.partial`, `einops.rearrange` ...): each handler registers itself with
`@handles(path, ...)` next to its code, and a whole library namespace with
`@handles_module(prefix)`.  The interpreter asks `handler_for(path)`."""

from __future__ import annotations

from collections.abc import Callable

Handler = Callable  # (interp, args, kwargs) -> value; module handlers get (interp, name, args, kwargs)

_EXACT: dict[str, Handler] = {}
_MODULES: dict[str, Handler] = {}


def handles(*paths: str):
    """Register the decorated function as the model of each dotted `path`."""
    def deco(f):
        for p in paths:
            if p in _EXACT:
                raise RuntimeError(f"{p} is modelled twice")
            _EXACT[p] = f
        return f
    return deco


def handles_module(*prefixes: str):
    """Register the decorated function for every name directly in a module (`math.*`)."""
    def deco(f):
        for p in prefixes:
            _MODULES[p] = f
        return f
    return deco


def handler_for(path: str):
    """(handler, name) for a call of `path`: an exact registration first, then its module's."""
    h = _EXACT.get(path)
    if h is not None:
        return h, None
    mod, _, name = path.rpartition(".")
    h = _MODULES.get(mod)
    if h is not None:
        return h, name
    return None, None


def registered() -> list[str]:
    return sorted(_EXACT) + [p + ".*" for p in sorted(_MODULES)]

"""The op table: one `OpSpec` per op of archgraph/1, gathered from the family modules.

Adding an op touches one family module; nothing here changes.
"""

from __future__ import annotations

from . import (
    activation,
    attention,
    conv,
    einsum,
    functional,
    indexing,
    linear,
    norm,
    pooling,
    recurrent,
    spatial,
    tensor,
)
from .base import REQUIRED, UNKNOWN, Arg, InferCtx, OpSpec, TensorType
from .traits import known

FAMILIES = (linear, conv, norm, attention, recurrent, pooling, activation, spatial, tensor, indexing, functional,
            einsum)

OP_TABLE: dict[str, OpSpec] = {}
for _family in FAMILIES:
    for _spec in _family.OPS:
        if _spec.name in OP_TABLE:
            raise RuntimeError(f"op {_spec.name} defined twice")
        OP_TABLE[_spec.name] = _spec



def ops_with(*traits: str, family: str | None = None) -> frozenset:
    """The ops that have every one of `traits` (and are of `family`, when given). Consumers ask this
    instead of keeping lists of op names; a misspelt trait raises KeyError where it is asked."""
    for t in traits:
        known(t)
    return frozenset(name for name, spec in OP_TABLE.items() if (family is None or spec.family == family)
                     and all(t in spec.traits for t in traits))


def has(op: str, trait: str) -> bool:
    """Whether `op` (an op-table name; any other name has no trait) has `trait`."""
    spec = OP_TABLE.get(op)
    return spec is not None and known(trait) in spec.traits


def ops_of(family: str) -> frozenset:
    families = {s.family for s in OP_TABLE.values()}
    if family not in families:
        raise KeyError(f"no op family {family!r}")
    return frozenset(name for name, spec in OP_TABLE.items() if spec.family == family)


__all__ = ["OP_TABLE", "ops_with", "ops_of", "has", "OpSpec", "Arg", "REQUIRED", "InferCtx", "TensorType", "UNKNOWN"]

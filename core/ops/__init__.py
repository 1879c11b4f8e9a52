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

FAMILIES = (linear, conv, norm, attention, recurrent, pooling, activation, spatial, tensor, indexing, functional,
            einsum)

OP_TABLE: dict[str, OpSpec] = {}
for _family in FAMILIES:
    for _spec in _family.OPS:
        if _spec.name in OP_TABLE:
            raise RuntimeError(f"op {_spec.name} defined twice")
        OP_TABLE[_spec.name] = _spec

__all__ = ["OP_TABLE", "OpSpec", "Arg", "REQUIRED", "InferCtx", "TensorType", "UNKNOWN"]

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


def spellings(specs, field: str) -> dict[str, str]:
    """spelling -> op name for one of the OpSpec fields that name the op's torch spellings; a spelling two ops
    claim fails here, when the table is built."""
    out: dict[str, str] = {}
    for spec in specs:
        value = getattr(spec, field)
        for word in (value,) if isinstance(value, str) else value or ():
            if word in out:
                raise RuntimeError(f"{field} {word!r} names both {out[word]} and {spec.name}")
            out[word] = spec.name
    return out


_BY_FUNCTIONAL = spellings(OP_TABLE.values(), "functional")
_BY_TORCH_FUNCTION = spellings(OP_TABLE.values(), "torch_functions")
_BY_TENSOR_METHOD = spellings(OP_TABLE.values(), "tensor_methods")
_BY_EINOPS_REDUCTION = spellings(OP_TABLE.values(), "einops_reduction")
_BY_OPERATOR = spellings(OP_TABLE.values(), "operator")


def by_functional(name: str) -> OpSpec | None:
    """The op that torch.nn.functional.`name` is (`OpSpec.functional`), or None."""
    op = _BY_FUNCTIONAL.get(name)
    return None if op is None else OP_TABLE[op]


def by_torch_function(name: str) -> str | None:
    """The op that torch.`name`(x) is, with its defaults (`OpSpec.torch_functions`), or None."""
    return _BY_TORCH_FUNCTION.get(name)


def by_tensor_method(name: str) -> str | None:
    """The op that x.`name`() is, with its defaults (`OpSpec.tensor_methods`), or None."""
    return _BY_TENSOR_METHOD.get(name)


def by_einops_reduction(name: str) -> str | None:
    """The op of einops' reduction `name` ("mean", "max"; `OpSpec.einops_reduction`), or None."""
    return _BY_EINOPS_REDUCTION.get(name)


def by_operator(symbol: str) -> str | None:
    """The op that the Python operator `symbol` ("+") between two tensors is (`OpSpec.operator`), or None."""
    return _BY_OPERATOR.get(symbol)



# trait -> the ops that have it, built in one pass over the table and rebuilt when the table changed (a test adds
# or removes an op): the checks and the inference walk ask ops_with some fifty times as they are imported, and
# a walk over the whole table for each was a sixth of `verify --json`'s start-up
_trait_index: tuple[tuple, dict[str, frozenset]] = ((), {})


def _ops_by_trait() -> dict[str, frozenset]:
    global _trait_index
    entries = tuple(OP_TABLE.items())
    if entries != _trait_index[0]:
        index: dict[str, set] = {}
        for name, spec in entries:
            for t in spec.traits:
                index.setdefault(t, set()).add(name)
        _trait_index = entries, {t: frozenset(names) for t, names in index.items()}
    return _trait_index[1]


def ops_with(*traits: str, family: str | None = None) -> frozenset:
    """The ops that have every one of `traits` (and are of `family`, when given). Consumers ask this
    instead of keeping lists of op names; a misspelt trait raises KeyError where it is asked."""
    for t in traits:
        known(t)
    if not traits:
        found = frozenset(OP_TABLE)
    else:
        by_trait = _ops_by_trait()
        found = frozenset.intersection(*(by_trait.get(t, frozenset()) for t in traits))
    return found if family is None else frozenset(name for name in found if OP_TABLE[name].family == family)


def has(op: str, trait: str) -> bool:
    """Whether `op` (an op-table name; any other name has no trait) has `trait`."""
    spec = OP_TABLE.get(op)
    return spec is not None and known(trait) in spec.traits


def ops_of(family: str) -> frozenset:
    families = {s.family for s in OP_TABLE.values()}
    if family not in families:
        raise KeyError(f"no op family {family!r}")
    return frozenset(name for name, spec in OP_TABLE.items() if spec.family == family)


__all__ = ["OP_TABLE", "ops_with", "ops_of", "has", "by_functional", "by_torch_function", "by_tensor_method",
           "by_einops_reduction", "by_operator", "OpSpec", "Arg", "REQUIRED", "InferCtx", "TensorType", "UNKNOWN"]

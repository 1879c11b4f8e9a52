"""Indexing: Gather(dim), IndexSelect(dim), Index(dim, index), MaskedFill(value), Where.

Operands: Gather (input, index), IndexSelect (input, index), Index (input[, index tensor]; or a
constant `index` list), MaskedFill (input, mask), Where (condition, input, other). Index values are
checked where they are known: a constant list, or ids straight from a design input that declares its
`vocab_size` (the values run below it).
"""

from __future__ import annotations

from .. import dims as D
from . import torch_build as tb
from .base import INT, NUM, UNKNOWN, Arg, InferCtx, ListOf, OneOf, OpSpec, Optional, TensorType, broadcast
from .rules import (
    CONNECTIVITY_BAD_ARG,
    DTYPE_INDEX_DTYPE,
    SHAPE_BROADCAST,
    SHAPE_DIM_RANGE,
    SHAPE_GATHER_SIZES,
    SHAPE_INDEX_RANGE,
    SHAPE_RANK,
)

INDEX_RULES = (SHAPE_DIM_RANGE, SHAPE_RANK, SHAPE_INDEX_RANGE, DTYPE_INDEX_DTYPE, SHAPE_GATHER_SIZES)


def _dim(ctx: InferCtx, rank: int) -> int | None:
    dim, r = ctx.args["dim"], max(rank, 1)
    if not ctx.require(-r <= dim < r, SHAPE_DIM_RANGE,
                       lambda: f"{ctx.node.op} {ctx.node.id!r}: dim={dim} is out of range for a {rank}-D input"):
        return None
    return dim % r


def _index_dtype(ctx: InferCtx, t: TensorType, allow_bool: bool = False) -> bool:
    ok = t.dtype in ("int64", "long", "int32", "int") or (allow_bool and t.dtype in ("bool", "uint8"))
    return ctx.require(ok, DTYPE_INDEX_DTYPE,
                       lambda: f"{ctx.node.op} {ctx.node.id!r}: its index is {t.dtype}; torch indexes with int64 "
                               f"(or int32){' or bool' if allow_bool else ''} tensors")


def _values_below(ctx: InferCtx, operand: int, size) -> None:
    """Ids from a design input with a declared vocab_size run up to vocab_size - 1, from an Arange up to
    its end - 1, through the ops that keep them (core/shapes.py follows them)."""
    vocab = (ctx.value_ranges or {}).get(operand)
    if vocab is None or size is None:
        return
    if not ctx.require_equal(vocab, size, SHAPE_INDEX_RANGE,
                             lambda: f"{ctx.node.op} {ctx.node.id!r}: its index carries values up to {vocab} - 1 "
                                     f"(a declared vocab_size or an Arange's end, through the ops before it) but the "
                                     f"indexed dim has size {size}",
                             kind="le"):
        return
    ctx.warn_reach(operand, size)


def _gather(ctx: InferCtx):
    x, idx = ctx.inputs[0], ctx.inputs[1]
    if not _index_dtype(ctx, idx) or x.shape is None or idx.shape is None:
        return [TensorType(idx.shape, x.dtype)]
    # measured: torch compares ranks with a 0-D tensor counted as 1-D (gen-319932: a 0-D index of a 1-D input)
    if max(len(idx.shape), 1) != max(len(x.shape), 1):
        return ctx.fail(SHAPE_RANK, f"Gather {ctx.node.id!r}: index {D.fmt_shape(idx.shape)} must have the rank of "
                                      f"the input {D.fmt_shape(x.shape)}")
    d = _dim(ctx, len(x.shape))
    if d is None:
        return [UNKNOWN]
    for i, (u, v) in enumerate(zip(idx.shape, x.shape)):
        if i != d and not ctx.require_equal(u, v, SHAPE_GATHER_SIZES,
                                            lambda i=i: f"Gather {ctx.node.id!r}: index {D.fmt_shape(idx.shape)} is "
                                                        f"larger than the input {D.fmt_shape(x.shape)} at dim {i}",
                                            kind="le"):
            return [UNKNOWN]
    _values_below(ctx, 1, x.shape[d] if x.shape else 1)  # measured: a 0-D input takes index 0 only
    return [TensorType(idx.shape, x.dtype)]


def _index_select(ctx: InferCtx):
    x, idx = ctx.inputs[0], ctx.inputs[1]
    if not _index_dtype(ctx, idx) or x.shape is None:
        return [TensorType(None, x.dtype)]
    d = _dim(ctx, len(x.shape))
    if d is None:
        return [UNKNOWN]
    if idx.shape is None:
        s = list(x.shape)
        if s:
            s[d] = None
        return [TensorType(tuple(s), x.dtype)]
    if len(idx.shape) > 1:
        return ctx.fail(SHAPE_RANK, f"IndexSelect {ctx.node.id!r}: the index must be 0-D or 1-D, got "
                                      f"{D.fmt_shape(idx.shape)}")
    _values_below(ctx, 1, x.shape[d] if x.shape else 1)  # measured: a 0-D input takes index 0 only
    s = list(x.shape)
    if s:
        s[d] = idx.shape[0] if idx.shape else 1
    return [TensorType(tuple(s), x.dtype)]


def _index(ctx: InferCtx):
    x = ctx.x
    const = ctx.args["index"]
    if (const is None) == (len(ctx.inputs) < 2):
        return ctx.fail(CONNECTIVITY_BAD_ARG, f"Index {ctx.node.id!r}: give the index either as the `index` list "
                                                "or as a second operand, not both or neither")
    if x.shape is None:
        return [TensorType(None, x.dtype)]
    if not x.shape:
        # measured: torch indexes a 0-D tensor with a 0-D bool (or uint8) mask only, giving 1 or 0 elements
        mask = ctx.inputs[1] if const is None else None
        if mask is None or mask.dtype not in ("bool", "uint8") or mask.shape:
            return ctx.fail(SHAPE_RANK, f"Index {ctx.node.id!r}: a 0-D tensor cannot be indexed, except by a "
                                          "0-D bool mask")
        if _dim(ctx, 0) is None or mask.shape is None:
            return [TensorType(None, x.dtype)]
        return [TensorType((None,), x.dtype)]
    d = _dim(ctx, len(x.shape))
    if d is None:
        return [UNKNOWN]
    size = x.shape[d]
    if const is not None:
        values = const if isinstance(const, list) else [const]
        if D.is_const(size):
            bad = [v for v in values if not -size <= v < size]
            if bad:
                return ctx.fail(SHAPE_INDEX_RANGE, f"Index {ctx.node.id!r}: index {bad[0]} is out of range for "
                                                     f"dim {d} of size {size}")
        else:
            ctx.require_equal(max(max(values) + 1, -min(values)) if values else 0, size, SHAPE_INDEX_RANGE,
                              f"Index {ctx.node.id!r}: index values {values} against dim {d} of size {size}",
                              kind="le")
        if isinstance(const, list):
            return [TensorType(x.shape[:d] + (len(values),) + x.shape[d + 1:], x.dtype)]
        return [TensorType(x.shape[:d] + x.shape[d + 1:], x.dtype)]
    idx = ctx.inputs[1]
    if not _index_dtype(ctx, idx, allow_bool=True) or idx.shape is None:
        return [TensorType(None, x.dtype)]
    if idx.dtype in ("bool", "uint8"):
        k = len(idx.shape)
        if d + k > len(x.shape):
            return ctx.fail(SHAPE_RANK, f"Index {ctx.node.id!r}: a {k}-D mask on dim {d} of {D.fmt_shape(x.shape)}")
        for u, v in zip(idx.shape, x.shape[d:d + k]):
            if not ctx.require_equal(u, v, SHAPE_GATHER_SIZES,
                                     lambda: f"Index {ctx.node.id!r}: mask {D.fmt_shape(idx.shape)} does not match "
                                             f"{D.fmt_shape(x.shape)} from dim {d}"):
                return [UNKNOWN]
        return [TensorType(x.shape[:d] + (None,) + x.shape[d + k:], x.dtype)]
    _values_below(ctx, 1, size)
    return [TensorType(x.shape[:d] + tuple(idx.shape) + x.shape[d + 1:], x.dtype)]


def _broadcast_all(ctx: InferCtx, types: list, what: str):
    shape = ()
    for t in types:
        if t.shape is None:
            return None
        conds: list = []
        out, why = broadcast(shape, t.shape, conds)
        if out is None:
            ctx.fail(SHAPE_BROADCAST, f"{ctx.node.op} {ctx.node.id!r}: {what} cannot broadcast ({why})")
            return False
        for c in conds:
            if not ctx.on_condition(c, SHAPE_BROADCAST, f"{ctx.node.op} {ctx.node.id!r}: {what}"):
                return False
        shape = out
    return shape


def _masked_fill(ctx: InferCtx):
    x, m = ctx.inputs[0], ctx.inputs[1]
    ctx.require(m.dtype == "bool", DTYPE_INDEX_DTYPE,
                lambda: f"MaskedFill {ctx.node.id!r}: the mask is {m.dtype}; torch takes bool masks only")
    shape = _broadcast_all(ctx, [x, m], f"mask {D.fmt_shape(m.shape)} against {D.fmt_shape(x.shape)}")
    if shape is False:
        return [UNKNOWN]
    return [TensorType(shape if shape is not None else None, x.dtype)]


def _where(ctx: InferCtx):
    c, a, b = ctx.inputs
    ctx.require(c.dtype in ("bool", "uint8"), DTYPE_INDEX_DTYPE,
                lambda: f"Where {ctx.node.id!r}: the condition is {c.dtype}; torch takes a bool condition")
    floats = [t.dtype for t in (a, b) if t.is_float]
    dtype = floats[0] if floats else a.dtype
    shape = _broadcast_all(ctx, [c, a, b], "condition, input and other")
    if shape is False:
        return [UNKNOWN]
    return [TensorType(shape, dtype)]


OPS = [
    OpSpec("Gather", "tensor", (Arg("dim", kind=INT),), _gather, tb.custom("Gather"), arity=(2, 2), accepts="any",
           rules=INDEX_RULES, positions=1, traits=("functional",)),
    OpSpec("IndexSelect", "tensor", (Arg("dim", kind=INT),), _index_select, tb.custom("IndexSelect"), arity=(2, 2),
           accepts="any", rules=INDEX_RULES, positions=1, traits=("functional",)),
    OpSpec("Index", "tensor", (Arg("dim", 0, INT), Arg("index", None, Optional(OneOf(INT, ListOf(INT))))), _index,
           tb.custom("Index"), arity=(1, 2), accepts="any", rules=INDEX_RULES + (CONNECTIVITY_BAD_ARG,),
           positions=1, traits=("functional", "moves-values", "picks-values", "wraps-negative")),
    OpSpec("MaskedFill", "tensor", (Arg("value", kind=NUM),), _masked_fill, tb.custom("MaskedFill"), arity=(2, 2),
           accepts="any", rules=(SHAPE_BROADCAST, DTYPE_INDEX_DTYPE), traits=("functional", "masks",)),
    OpSpec("Where", "tensor", (), _where, tb.custom("Where"), arity=(3, 3), accepts="any",
           rules=(SHAPE_BROADCAST, DTYPE_INDEX_DTYPE), traits=("functional", "promotes-operands")),
]

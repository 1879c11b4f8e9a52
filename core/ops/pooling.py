"""Pooling: MaxPool / AvgPool / LPPool 1d/2d/3d, their adaptive forms, FractionalMaxPool2d/3d and
MaxUnpool1d/2d/3d. A max pool with return_indices=True has two results: 0 the values, 1 the int64
indices (what MaxUnpool reads as its second operand)."""

from __future__ import annotations

import math

from .. import dims as D
from . import torch_build as tb
from .base import (
    BOOL,
    INT,
    NAT,
    POS,
    UNKNOWN,
    Arg,
    Float,
    InferCtx,
    Ints,
    Kind,
    ListOf,
    OneOf,
    OpSpec,
    Optional,
    TensorType,
    pair,
)
from .rules import (
    CONNECTIVITY_BAD_ARG,
    DTYPE_INDEX_DTYPE,
    DTYPE_INT_INTO_FLOAT,
    SHAPE_BROADCAST,
    SHAPE_KERNEL_TOO_LARGE,
    SHAPE_POOL_PADDING,
    SHAPE_RANK,
    SHAPE_SPATIAL_COLLAPSE,
)

POOL_RULES = (SHAPE_KERNEL_TOO_LARGE, SHAPE_SPATIAL_COLLAPSE, SHAPE_POOL_PADDING, SHAPE_RANK)


def _pool_out(size, k, s, p, d, ceil):
    if not D.is_const(size):
        return D.conv_out(size, k, s, p, d) if not ceil else (size if (k, s, p, d) == (1, 1, 0, 1) else
                                                               f"ceil(({size}+{2 * p}-{d * (k - 1) + 1})/{s})+1")
    span = d * (k - 1) + 1
    if ceil:
        out = math.ceil((size + 2 * p - span) / s) + 1
        # torch drops a last window that starts in the right padding
        if (out - 1) * s >= size + p:
            out -= 1
        return out
    return (size + 2 * p - span) // s + 1


def _int_check(ctx: InferCtx, why: str) -> None:
    x = ctx.x
    ctx.require(not x.is_int, DTYPE_INT_INTO_FLOAT,
                lambda: f"{ctx.node.op} {ctx.node.id!r} receives integer {x.dtype} values; {why} — cast first")


def _pool_infer(n: int, kind: str):
    def infer(ctx: InferCtx):
        x, a = ctx.x, ctx.args
        op = ctx.node.op
        if kind == "max" and n == 1 and not a.get("return_indices"):
            _int_check(ctx, "torch's 1-D max pooling has no integer kernel")
        if kind == "lp":
            _int_check(ctx, "LP pooling raises to a power and averages")
        if x.shape is None:
            return _with_indices(ctx, x)
        if not ctx.need_rank(x, (n + 1, n + 2)):
            return [UNKNOWN]
        if any(d == 0 for d in x.shape[-n - 1:]):
            return ctx.fail(SHAPE_SPATIAL_COLLAPSE, f"{op} {ctx.node.id!r}: its input {D.fmt_shape(x.shape)} has "
                                                      "an empty channel or spatial dim; pooling needs them non-empty")
        k = pair(a["kernel_size"], n)
        s = pair(a["stride"] if a["stride"] not in (None, []) else a["kernel_size"], n)
        p = pair(a.get("padding", 0), n)
        d = pair(a.get("dilation", 1), n)
        for i in range(n):
            if p[i] * 2 > k[i]:
                ctx.require(False, SHAPE_POOL_PADDING,
                            f"{op} {ctx.node.id!r}: padding {p[i]} is more than half the kernel {k[i]}; "
                            f"use padding <= {k[i] // 2}")
                return [UNKNOWN]
        if n == 3 and kind in ("avg", "lp"):
            # torch's 3-D average pooling (LPPool3d's too) on the CPU wants each input size at least the
            # kernel, padding and ceil_mode aside (measured: "input image smaller than kernel size")
            for i, size in enumerate(x.shape[-n:]):
                if not ctx.require_equal(k[i], size, SHAPE_KERNEL_TOO_LARGE,
                                         lambda i=i, size=size: f"{op} {ctx.node.id!r}: a window of {k[i]} on input "
                                                                f"size {size} at spatial dim {i}", kind="le"):
                    return [UNKNOWN]
        out = []
        for i, size in enumerate(x.shape[-n:]):
            if not D.is_const(size) and not a.get("ceil_mode", False):
                # a window must fit a symbolic size: d(k-1)+1 - 2p <= size, a condition on the symbol (blocks
                # on a declared size it does not fit)
                need = d[i] * (k[i] - 1) + 1 - 2 * p[i]
                if need > 1 and not ctx.require_equal(need, size, SHAPE_SPATIAL_COLLAPSE,
                                                      lambda i=i, size=size: f"{op} {ctx.node.id!r}: a window of "
                                                      f"{k[i]} on size {size} at spatial dim {i}", kind="le"):
                    return [UNKNOWN]
            v = _pool_out(size, k[i], s[i], p[i], d[i], a.get("ceil_mode", False))
            if D.is_const(v) and v <= 0:
                ctx.require(False, SHAPE_SPATIAL_COLLAPSE,
                            f"{op} {ctx.node.id!r}: a window of {k[i]} on size {size} leaves output size {v} at "
                            f"spatial dim {i}; the feature map has collapsed — downsample less before it")
                return [UNKNOWN]
            out.append(v)
        return _with_indices(ctx, TensorType(x.shape[:-n] + tuple(out), x.dtype))

    return infer


def _with_indices(ctx: InferCtx, t: TensorType) -> list:
    return [t, TensorType(t.shape, "int64")] if ctx.args.get("return_indices") else [t]


def _adaptive_infer(n: int):
    def infer(ctx: InferCtx):
        x = ctx.x
        _int_check(ctx, "adaptive pooling averages (or has no integer kernel)")
        if x.shape is None:
            return [x]
        osz = pair(ctx.args["output_size"], n)
        # an average to 1x1(x1) is torch's mean over the last dims: any rank that has them; a None output
        # size is the input's size there, read before the rank is checked (measured: (1, None) of a last
        # dim of 1 takes the mean too, gen-164262)
        resolved = [x.shape[len(x.shape) - n + i] if v is None and len(x.shape) >= n else v
                    for i, v in enumerate(osz)]
        ones = ctx.node.op.startswith("AdaptiveAvg") and n > 1 and all(v == 1 for v in resolved)
        # measured: an output_size given as a list is read against the input's sizes first, which needs more
        # dims than it has entries ("Input dimension should be at least 4", gen-288644)
        least = n + 1 if isinstance(ctx.args["output_size"], (list, tuple)) else n
        if not ctx.need_rank(x, tuple(range(least, 9)) if ones else (n + 1, n + 2)):
            return [UNKNOWN]
        out = tuple(x.shape[-n + i] if v is None else v for i, v in enumerate(osz))
        return _with_indices(ctx, TensorType(x.shape[:-n] + out, x.dtype))

    return infer


def PoolInts(n, elem=None):  # noqa: N802
    """Pooling's sizes: one int, or a list of one or n of them (torch's pooling kernels expand one)."""
    from .base import POS as _POS

    elem = elem or _POS
    return OneOf(Ints(n, elem), ListOf(elem, 1))


def _stride(n):
    return Optional(OneOf(PoolInts(n), ListOf(NAT, 0)))


def _max_args(n):
    return (Arg("kernel_size", kind=PoolInts(n)), Arg("stride", None, _stride(n)),
            Arg("padding", 0, PoolInts(n, NAT)), Arg("dilation", 1, PoolInts(n)), Arg("return_indices", False, BOOL),
            Arg("ceil_mode", False, BOOL))


NONZERO = Kind(lambda v: type(v) is int and v != 0, "a non-zero int", ("int", None, None))


def _avg_args(n):
    base = [Arg("kernel_size", kind=PoolInts(n)), Arg("stride", None, _stride(n)),
            Arg("padding", 0, PoolInts(n, NAT)),
            Arg("ceil_mode", False, BOOL), Arg("count_include_pad", True, BOOL)]
    if n > 1:
        base.append(Arg("divisor_override", None, Optional(NONZERO)))
    return tuple(base)


def _output_size(n):
    """An int, or a list of n entries each an int or null (keep the input's size; not in 1-D)."""
    each = Optional(NAT) if n > 1 else NAT
    return OneOf(NAT, ListOf(each, n))


def _lp_args(n):
    # torch's lp_pool1d multiplies by kernel_size itself: it must be one int there
    kernel, stride = (POS, Optional(POS)) if n == 1 else (Ints(n), _stride(n))
    return (Arg("norm_type", kind=Float()), Arg("kernel_size", kind=kernel), Arg("stride", None, stride),
            Arg("ceil_mode", False, BOOL))


def _ratio_fits(ctx: InferCtx, size, ratio, extra: int, i: int) -> bool:
    """A symbolic size pooled by output_ratio: torch takes int(size * ratio) outputs and wants
    int(size * ratio) + extra <= size (judged by value). False when it blocked."""
    return ctx.require_at_sizes(
        size, lambda v: int(v * ratio) + extra <= v, f"int({D.fmt(size)} * {ratio:g}) + {extra} <= {D.fmt(size)}",
        SHAPE_KERNEL_TOO_LARGE,
        f"{ctx.node.op} {ctx.node.id!r}: output_ratio {ratio:g} with its window at spatial dim {i} of size "
        f"{D.fmt(size)}")


def _fractional_infer(n: int):
    def infer(ctx: InferCtx):
        x, a = ctx.x, ctx.args
        _int_check(ctx, "fractional max pooling has no integer kernel")
        if (a["output_size"] is None) == (a["output_ratio"] is None):
            return ctx.fail(CONNECTIVITY_BAD_ARG, f"{ctx.node.op} {ctx.node.id!r}: give exactly one of "
                                                    "output_size and output_ratio")
        if x.shape is None:
            return _with_indices(ctx, x)
        if not ctx.need_rank(x, (n + 1, n + 2)):
            return [UNKNOWN]
        k = pair(a["kernel_size"], n)
        out = []
        for i, size in enumerate(x.shape[-n:]):
            if a["output_size"] is not None:
                o = pair(a["output_size"], n)[i]
            else:
                r = pair(a["output_ratio"], n)[i]
                o = int(size * r) if D.is_const(size) else None
                if o is None and not _ratio_fits(ctx, size, r, k[i] - 1 + (n == 3), i):
                    return [UNKNOWN] * (2 if a.get("return_indices") else 1)
            # measured: the 2-D kernel wants o + k - 1 <= size, the 3-D one o + k - 1 < size
            need = o + k[i] - 1 + (n == 3) if o is not None else None
            if D.is_const(size) and need is not None and need > size:
                return ctx.fail(SHAPE_KERNEL_TOO_LARGE,
                                f"{ctx.node.op} {ctx.node.id!r}: output size {o} with a window of {k[i]} needs an "
                                f"input of at least {need} at spatial dim {i}, got {size}")
            if not D.is_const(size) and need is not None and not ctx.require_equal(
                    need, size, SHAPE_KERNEL_TOO_LARGE,
                    f"{ctx.node.op} {ctx.node.id!r}: output size {o} with a window of {k[i]} needs an input of at "
                    f"least {need} at spatial dim {i}, got {D.fmt(size)}", kind="le"):
                return [UNKNOWN] * (2 if a.get("return_indices") else 1)
            out.append(o)
        return _with_indices(ctx, TensorType(x.shape[:-n] + tuple(out), x.dtype))

    return infer


def _unpool_infer(n: int):
    def infer(ctx: InferCtx):
        x, idx, a = ctx.inputs[0], ctx.inputs[1], ctx.args
        _int_check(ctx, "max unpooling scatters floats")
        ctx.require(idx.dtype in ("int64", "long"), DTYPE_INDEX_DTYPE,
                    lambda: f"{ctx.node.op} {ctx.node.id!r}: its indices (operand 1) are {idx.dtype}; torch needs "
                            "the int64 indices a max pool with return_indices=True gives")
        if x.shape is None:
            return [x]
        if not ctx.need_rank(x, (n + 1, n + 2)):
            return [UNKNOWN]
        if idx.shape is not None and idx.shape != x.shape:
            for u, v in zip(idx.shape, x.shape):
                if not ctx.require_equal(u, v, SHAPE_BROADCAST,
                                         lambda: f"{ctx.node.op} {ctx.node.id!r}: indices {D.fmt_shape(idx.shape)} and "
                                                 f"values {D.fmt_shape(x.shape)} differ"):
                    return [UNKNOWN]
            if len(idx.shape) != len(x.shape):
                return ctx.fail(SHAPE_BROADCAST, f"{ctx.node.op} {ctx.node.id!r}: indices "
                                                   f"{D.fmt_shape(idx.shape)} and values {D.fmt_shape(x.shape)} differ")
        k = pair(a["kernel_size"], n)
        s = pair(a["stride"] if a["stride"] not in (None, []) else a["kernel_size"], n)
        p = pair(a["padding"], n)
        out = []
        for i, size in enumerate(x.shape[-n:]):
            v = D.add(D.mul(D.sub(size, 1), s[i]), k[i] - 2 * p[i])
            if D.is_const(v) and v <= 0:
                return ctx.fail(SHAPE_SPATIAL_COLLAPSE,
                                f"{ctx.node.op} {ctx.node.id!r}: output size {v} at spatial dim {i}")
            out.append(v)
        return [TensorType(x.shape[:-n] + tuple(out), x.dtype)]

    return infer


_RATIO = Float(0, 1, lo_open=True, hi_open=True)
OPS = []
for _n in (1, 2, 3):
    OPS.append(OpSpec(f"MaxPool{_n}d", "pooling", _max_args(_n), _pool_infer(_n, "max"), tb.module(f"MaxPool{_n}d"),
                      rules=POOL_RULES + ((DTYPE_INT_INTO_FLOAT,) if _n == 1 else ()),
                      # 1-D max pooling with indices runs another kernel, which takes integers
                      measured_for=(lambda a: not a["return_indices"]) if _n == 1 else (lambda a: True),
                      traits=("pools", "nonlinear"),
                      functional=(f"max_pool{_n}d",) + (("max_pool2d_with_indices",) if _n == 2 else ())))
    OPS.append(OpSpec(f"AvgPool{_n}d", "pooling", _avg_args(_n), _pool_infer(_n, "avg"), tb.module(f"AvgPool{_n}d"),
                      rules=POOL_RULES + ((SHAPE_KERNEL_TOO_LARGE,) if _n == 3 else ()), traits=("pools",),
                      functional=(f"avg_pool{_n}d",)))
    OPS.append(OpSpec(f"LPPool{_n}d", "pooling", _lp_args(_n), _pool_infer(_n, "lp"), tb.module(f"LPPool{_n}d"),
                      rules=POOL_RULES + (DTYPE_INT_INTO_FLOAT,) + ((SHAPE_KERNEL_TOO_LARGE,) if _n == 3 else ()),
                      traits=("pools",)))
    OPS.append(OpSpec(f"AdaptiveAvgPool{_n}d", "pooling", (Arg("output_size", kind=_output_size(_n)),),
                      _adaptive_infer(_n), tb.module(f"AdaptiveAvgPool{_n}d"),
                      rules=(SHAPE_RANK, DTYPE_INT_INTO_FLOAT), traits=("adaptive", "pools"),
                      functional=(f"adaptive_avg_pool{_n}d",)))
    OPS.append(OpSpec(f"AdaptiveMaxPool{_n}d", "pooling",
                      (Arg("output_size", kind=_output_size(_n)), Arg("return_indices", False, BOOL)),
                      _adaptive_infer(_n), tb.module(f"AdaptiveMaxPool{_n}d"),
                      rules=(SHAPE_RANK, DTYPE_INT_INTO_FLOAT), traits=("adaptive", "pools", "nonlinear"),
                      functional=(f"adaptive_max_pool{_n}d",)))
    OPS.append(OpSpec(f"MaxUnpool{_n}d", "pooling",
                      (Arg("kernel_size", kind=Ints(_n)), Arg("stride", None, _stride(_n)),
                       Arg("padding", 0, Ints(_n, NAT))),
                      _unpool_infer(_n), tb.module(f"MaxUnpool{_n}d"), arity=(2, 2),
                      rules=(SHAPE_RANK, SHAPE_SPATIAL_COLLAPSE, SHAPE_BROADCAST, DTYPE_INDEX_DTYPE,
                             DTYPE_INT_INTO_FLOAT)))
for _n in (2, 3):
    OPS.append(OpSpec(f"FractionalMaxPool{_n}d", "pooling",
                      # FractionalMaxPool2d never checks its kernel (0 and -1 run, measured); the 3-D one wants
                      # it positive
                      (Arg("kernel_size", kind=Ints(_n, INT) if _n == 2 else Ints(_n)),
                       Arg("output_size", None, Optional(Ints(_n))),
                       Arg("output_ratio", None, Optional(OneOf(_RATIO, ListOf(_RATIO, _n)))),
                       Arg("return_indices", False, BOOL)),
                      _fractional_infer(_n), tb.module(f"FractionalMaxPool{_n}d"),
                      rules=(SHAPE_RANK, SHAPE_KERNEL_TOO_LARGE, CONNECTIVITY_BAD_ARG, DTYPE_INT_INTO_FLOAT),
                      traits=("nonlinear",)))

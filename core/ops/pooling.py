"""Pooling: MaxPool/AvgPool 1d/2d/3d and their adaptive forms."""

from __future__ import annotations

import math

from .. import dims as D
from . import torch_build as tb
from .base import BOOL, NAT, UNKNOWN, Arg, InferCtx, Ints, Kind, ListOf, OneOf, OpSpec, Optional, TensorType, pair

POOL_RULES = ("shape.kernel-too-large", "shape.spatial-collapse", "shape.pool-padding", "shape.rank")


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
    ctx.require(not x.is_int, "dtype.int-into-float",
                lambda: f"{ctx.node.op} {ctx.node.id!r} receives integer {x.dtype} values; {why} — cast first")


def _pool_infer(n: int, kind: str):
    def infer(ctx: InferCtx):
        x, a = ctx.x, ctx.args
        op = ctx.node.op
        if kind == "max" and n == 1:
            _int_check(ctx, "torch's 1-D max pooling has no integer kernel")
        if x.shape is None:
            return [x]
        if not ctx.need_rank(x, (n + 1, n + 2)):
            return [UNKNOWN]
        k = pair(a["kernel_size"], n)
        s = pair(a["stride"] if a["stride"] not in (None, []) else a["kernel_size"], n)
        p = pair(a["padding"], n)
        d = pair(a.get("dilation", 1), n)
        for i in range(n):
            if p[i] * 2 > k[i]:
                ctx.require(False, "shape.pool-padding",
                            f"{op} {ctx.node.id!r}: padding {p[i]} is more than half the kernel {k[i]}; "
                            f"use padding <= {k[i] // 2}")
                return [UNKNOWN]
        out = []
        for i, size in enumerate(x.shape[-n:]):
            v = _pool_out(size, k[i], s[i], p[i], d[i], a.get("ceil_mode", False))
            if D.is_const(v) and v <= 0:
                ctx.require(False, "shape.spatial-collapse",
                            f"{op} {ctx.node.id!r}: a window of {k[i]} on size {size} leaves output size {v} at "
                            f"spatial dim {i}; the feature map has collapsed — downsample less before it")
                return [UNKNOWN]
            out.append(v)
        return [TensorType(x.shape[:-n] + tuple(out), x.dtype)]

    return infer


def _adaptive_infer(n: int):
    def infer(ctx: InferCtx):
        x = ctx.x
        _int_check(ctx, "adaptive pooling averages (or has no integer kernel)")
        if x.shape is None:
            return [x]
        if not ctx.need_rank(x, (n + 1, n + 2)):
            return [UNKNOWN]
        osz = pair(ctx.args["output_size"], n)
        out = tuple(x.shape[-n + i] if v is None else v for i, v in enumerate(osz))
        return [TensorType(x.shape[:-n] + out, x.dtype)]

    return infer


def _stride(n):
    return Optional(OneOf(Ints(n), ListOf(NAT, 0)))


def _max_args(n):
    return (Arg("kernel_size", kind=Ints(n)), Arg("stride", None, _stride(n)), Arg("padding", 0, Ints(n, NAT)),
            Arg("dilation", 1, Ints(n)), Arg("return_indices", False, BOOL), Arg("ceil_mode", False, BOOL))


NONZERO = Kind(lambda v: type(v) is int and v != 0, "a non-zero int", ("int", None, None))


def _avg_args(n):
    base = [Arg("kernel_size", kind=Ints(n)), Arg("stride", None, _stride(n)), Arg("padding", 0, Ints(n, NAT)),
            Arg("ceil_mode", False, BOOL), Arg("count_include_pad", True, BOOL)]
    if n > 1:
        base.append(Arg("divisor_override", None, Optional(NONZERO)))
    return tuple(base)


def _output_size(n):
    """An int, or a list of n entries each an int or null (keep the input's size)."""
    each = Optional(NAT)
    return OneOf(NAT, ListOf(each, n))


OPS = []
for _n in (1, 2, 3):
    OPS.append(OpSpec(f"MaxPool{_n}d", "pooling", _max_args(_n), _pool_infer(_n, "max"), tb.module(f"MaxPool{_n}d"),
                      rules=POOL_RULES + (("dtype.int-into-float",) if _n == 1 else ())))
    OPS.append(OpSpec(f"AvgPool{_n}d", "pooling", _avg_args(_n), _pool_infer(_n, "avg"), tb.module(f"AvgPool{_n}d"),
                      rules=POOL_RULES))
    OPS.append(OpSpec(f"AdaptiveAvgPool{_n}d", "pooling", (Arg("output_size", kind=_output_size(_n)),),
               _adaptive_infer(_n),
                      tb.module(f"AdaptiveAvgPool{_n}d"), rules=("shape.rank", "dtype.int-into-float")))
    OPS.append(OpSpec(f"AdaptiveMaxPool{_n}d", "pooling", (Arg("output_size", kind=_output_size(_n)),
               Arg("return_indices", False, BOOL)),
                      _adaptive_infer(_n), tb.module(f"AdaptiveMaxPool{_n}d"),
                      rules=("shape.rank", "dtype.int-into-float")))

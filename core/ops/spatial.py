"""Rearranging space and channels: PixelShuffle / PixelUnshuffle, ChannelShuffle, Fold / Unfold,
UpsamplingNearest2d / UpsamplingBilinear2d; and the distances CosineSimilarity, PairwiseDistance."""

from __future__ import annotations

from .. import dims as D
from . import torch_build as tb
from .base import (
    BOOL,
    FLOAT_DTYPES,
    INT,
    NAT,
    NUM,
    POS,
    UNKNOWN,
    Arg,
    Float,
    InferCtx,
    Ints,
    ListOf,
    OneOf,
    OpSpec,
    Optional,
    TensorType,
    broadcast,
    pair,
    promote,
)
from .functional import resized
from .rules import (
    CONNECTIVITY_BAD_ARG,
    DTYPE_INT_INTO_FLOAT,
    SHAPE_BROADCAST,
    SHAPE_CHANNEL_DIVISIBILITY,
    SHAPE_DIM_RANGE,
    SHAPE_FOLD_BLOCKS,
    SHAPE_KERNEL_TOO_LARGE,
    SHAPE_RANK,
    SHAPE_SPATIAL_COLLAPSE,
)

RANKS_3_UP = (3, 4, 5, 6, 7, 8)


def _divides(ctx: InferCtx, size, k: int, what: str) -> bool:
    """`size` must be a multiple of k (a symbol: a condition on it)."""
    return ctx.require_equal(size, k, SHAPE_CHANNEL_DIVISIBILITY,
                             lambda: f"{ctx.node.op} {ctx.node.id!r}: {what} {size} is not divisible by {k}",
                             kind="multiple")


def _pixel_shuffle(ctx: InferCtx):
    x, r = ctx.x, ctx.args["upscale_factor"]
    if x.shape is None:
        return [x]
    if not ctx.need_rank(x, RANKS_3_UP):
        return [UNKNOWN]
    *lead, c, h, w = x.shape
    if not _divides(ctx, c, r * r, "channel count"):
        return [UNKNOWN]
    return [TensorType(tuple(lead) + (D.exact_div(c, r * r) if D.is_const(c) else None, D.mul(h, r), D.mul(w, r)),
                       x.dtype)]


def _pixel_unshuffle(ctx: InferCtx):
    x, r = ctx.x, ctx.args["downscale_factor"]
    if x.shape is None:
        return [x]
    if not ctx.need_rank(x, RANKS_3_UP):
        return [UNKNOWN]
    *lead, c, h, w = x.shape
    if not (_divides(ctx, h, r, "height") and _divides(ctx, w, r, "width")):
        return [UNKNOWN]
    return [TensorType(tuple(lead) + (D.mul(c, r * r), D.exact_div(h, r) if D.is_const(h) else None,
                                      D.exact_div(w, r) if D.is_const(w) else None), x.dtype)]


def _channel_shuffle(ctx: InferCtx):
    x, g = ctx.x, ctx.args["groups"]
    if x.shape is None:
        return [x]
    if not ctx.need_rank(x, RANKS_3_UP):
        return [UNKNOWN]
    if not _divides(ctx, x.shape[1], g, "channel count"):
        return [UNKNOWN]
    return [x]


def _unfold(ctx: InferCtx):
    x, a = ctx.x, ctx.args
    ctx.require(not x.is_int, DTYPE_INT_INTO_FLOAT,
                lambda: f"Unfold {ctx.node.id!r} receives integer {x.dtype} values; im2col needs floats")
    if x.shape is None:
        return [TensorType(None, x.dtype)]
    if not ctx.need_rank(x, (3, 4)):
        return [UNKNOWN]
    k, d, p, s = (pair(a[n]) for n in ("kernel_size", "dilation", "padding", "stride"))
    blocks: D.Dim = 1
    for i, size in enumerate(x.shape[-2:]):
        n = D.conv_out(size, k[i], s[i], p[i], d[i])
        if D.is_const(n) and n <= 0:
            return ctx.fail(SHAPE_KERNEL_TOO_LARGE,
                            f"Unfold {ctx.node.id!r}: a {k[i]} window (dilation {d[i]}) does not fit size {size} "
                            f"padded by {p[i]} at spatial dim {i}")
        if not D.is_const(size) and not ctx.require_equal(
                d[i] * (k[i] - 1) + 1 - 2 * p[i], size, SHAPE_KERNEL_TOO_LARGE,
                f"Unfold {ctx.node.id!r}: a {k[i]} window (dilation {d[i]}) against size {D.fmt(size)} padded by "
                f"{p[i]} at spatial dim {i}", kind="le"):
            return [UNKNOWN]
        blocks = D.mul(blocks, n)
    c = x.shape[-3]
    return [TensorType(x.shape[:-3] + (D.mul(c, k[0] * k[1]), blocks), x.dtype)]


def _fold(ctx: InferCtx):
    x, a = ctx.x, ctx.args
    ctx.require(not x.is_int, DTYPE_INT_INTO_FLOAT,
                lambda: f"Fold {ctx.node.id!r} receives integer {x.dtype} values; col2im needs floats")
    if x.shape is None:
        return [TensorType(None, x.dtype)]
    if not ctx.need_rank(x, (2, 3)):
        return [UNKNOWN]
    o, k, d, p, s = (pair(a[n]) for n in ("output_size", "kernel_size", "dilation", "padding", "stride"))
    kk = k[0] * k[1]
    cols, blocks = x.shape[-2], x.shape[-1]
    if not _divides(ctx, cols, kk, "the size of dim -2"):
        return [UNKNOWN]
    want = 1
    for i in range(2):
        n = (o[i] + 2 * p[i] - (d[i] * (k[i] - 1) + 1)) // s[i] + 1
        if n <= 0:
            return ctx.fail(SHAPE_KERNEL_TOO_LARGE,
                            f"Fold {ctx.node.id!r}: a {k[i]} window does not fit output size {o[i]}")
        want *= n
    if not ctx.require_equal(blocks, want, SHAPE_FOLD_BLOCKS,
                             lambda: f"Fold {ctx.node.id!r}: its input has {blocks} blocks at dim -1 but output_size "
                                     f"{list(o)} with this kernel, stride, padding and dilation makes {want}"):
        return [UNKNOWN]
    c = D.exact_div(cols, kk) if D.is_const(cols) else None
    return [TensorType(x.shape[:-2] + (c, o[0], o[1]), x.dtype)]


def _upsampling2d(ctx: InferCtx):
    x, a = ctx.x, ctx.args
    bilinear = ctx.node.op == "UpsamplingBilinear2d"
    ctx.require(not x.is_int, DTYPE_INT_INTO_FLOAT,
                lambda: f"{ctx.node.op} {ctx.node.id!r} receives integer {x.dtype} values; torch interpolates floats "
                        "only — cast first")
    if x.shape is None:
        return [x]
    if not ctx.need_rank(x, (4,) if bilinear else (3, 4, 5)):
        return [UNKNOWN]
    if (a["size"] is None) == (a["scale_factor"] is None):
        return ctx.fail(CONNECTIVITY_BAD_ARG, f"{ctx.node.op} {ctx.node.id!r}: give exactly one of size and "
                                                "scale_factor")
    return resized(ctx, x, a["size"], a["scale_factor"])


def _distance(cosine: bool):
    def infer(ctx: InferCtx):
        a, b = ctx.inputs[0], ctx.inputs[1]
        # which dtypes torch takes is the measured table's to say; the result is the operands' promoted
        # dtype, integers made float32
        dtype = promote(a.dtype, b.dtype)
        if dtype not in FLOAT_DTYPES:
            dtype = "float32"
        if a.shape is None or b.shape is None:
            return [TensorType(None, dtype)]
        conds: list = []
        out, why = broadcast(a.shape, b.shape, conds)
        if out is None:
            return ctx.fail(SHAPE_BROADCAST, f"{ctx.node.op} {ctx.node.id!r}: {D.fmt_shape(a.shape)} and "
                                               f"{D.fmt_shape(b.shape)} cannot broadcast ({why})")
        for c in conds:
            if not ctx.on_condition(c, SHAPE_BROADCAST, f"{ctx.node.op} {ctx.node.id!r}: {D.fmt_shape(a.shape)} "
                                                          f"and {D.fmt_shape(b.shape)}"):
                return [UNKNOWN]
        if cosine:
            r = len(out)
            dim = ctx.args["dim"]
            if not ctx.require(-max(r, 1) <= dim < max(r, 1), SHAPE_DIM_RANGE,
                               lambda: f"CosineSimilarity {ctx.node.id!r}: dim={dim} is out of range for "
                                       f"{D.fmt_shape(out)}"):
                return [UNKNOWN]
            if r == 0:
                return [TensorType((), dtype)]
            d = dim % r
            return [TensorType(out[:d] + out[d + 1:], dtype)]
        # PairwiseDistance: the norm over the last dim (a 1-D pair gives a 0-D result)
        if not out:
            return [TensorType((), dtype)]
        keep = ctx.args["keepdim"]
        if len(out) == 1:
            return [TensorType((1,) if keep else (), dtype)]
        return [TensorType(out[:-1] + ((1,) if keep else ()), dtype)]

    return infer


_FOLD = (Arg("kernel_size", kind=Ints(2)), Arg("dilation", 1, Ints(2)), Arg("padding", 0, Ints(2, NAT)),
         Arg("stride", 1, Ints(2)))

OPS = [
    OpSpec("PixelShuffle", "spatial", (Arg("upscale_factor", kind=POS),), _pixel_shuffle, tb.module("PixelShuffle"),
           accepts="any", rules=(SHAPE_RANK, SHAPE_CHANNEL_DIVISIBILITY), traits=("moves-values",),
           functional=("pixel_shuffle",)),
    OpSpec("PixelUnshuffle", "spatial", (Arg("downscale_factor", kind=POS),), _pixel_unshuffle,
           tb.module("PixelUnshuffle"), accepts="any", rules=(SHAPE_RANK, SHAPE_CHANNEL_DIVISIBILITY),
           traits=("moves-values",), functional=("pixel_unshuffle",)),
    OpSpec("ChannelShuffle", "spatial", (Arg("groups", kind=POS),), _channel_shuffle, tb.module("ChannelShuffle"),
           accepts="any", rules=(SHAPE_RANK, SHAPE_CHANNEL_DIVISIBILITY), traits=("moves-values",)),
    OpSpec("Unfold", "spatial", _FOLD, _unfold, tb.module("Unfold"),
           rules=(SHAPE_RANK, SHAPE_KERNEL_TOO_LARGE, DTYPE_INT_INTO_FLOAT), functional=("unfold",)),
    OpSpec("Fold", "spatial", (Arg("output_size", kind=Ints(2)),) + _FOLD, _fold, tb.module("Fold"),
           rules=(SHAPE_RANK, SHAPE_KERNEL_TOO_LARGE, SHAPE_CHANNEL_DIVISIBILITY, SHAPE_FOLD_BLOCKS,
                  DTYPE_INT_INTO_FLOAT)),
    OpSpec("CosineSimilarity", "spatial", (Arg("dim", 1, INT), Arg("eps", 1e-8, Float(0))), _distance(True),
           tb.module("CosineSimilarity"), arity=(2, 2),
           rules=(SHAPE_BROADCAST, SHAPE_DIM_RANGE, DTYPE_INT_INTO_FLOAT), traits=("promotes-operands",)),
    OpSpec("PairwiseDistance", "spatial", (Arg("p", 2.0, NUM), Arg("eps", 1e-6, NUM), Arg("keepdim", False, BOOL)),
           _distance(False), tb.module("PairwiseDistance"), arity=(2, 2),
           rules=(SHAPE_BROADCAST, DTYPE_INT_INTO_FLOAT), traits=("promotes-operands", "refuses-bool")),
]
_SIZE2 = Optional(OneOf(NAT, ListOf(NAT, min_len=1, max_len=2)))  # a list as long as the spatial dims
_SCALE2 = Optional(Float(0, lo_open=True))  # torch's Upsampling*2d take float(scale_factor): one number
for _name in ("UpsamplingNearest2d", "UpsamplingBilinear2d"):
    OPS.append(OpSpec(_name, "spatial", (Arg("size", None, _SIZE2), Arg("scale_factor", None, _SCALE2)),
                      _upsampling2d, tb.module(_name), rules=(SHAPE_RANK, DTYPE_INT_INTO_FLOAT,
                                                               CONNECTIVITY_BAD_ARG, SHAPE_SPATIAL_COLLAPSE)))

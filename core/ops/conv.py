"""Convolutions: Conv1d/2d/3d and ConvTranspose1d/2d/3d."""

from __future__ import annotations

from math import prod

from .. import dims as D
from . import torch_build as tb
from .base import BOOL, INT, NAT, POS, UNKNOWN, Arg, Enum, InferCtx, Ints, ListOf, OneOf, OpSpec, TensorType, pair
from .rules import (
    CONNECTIVITY_BAD_ARG,
    DTYPE_INT_INTO_FLOAT,
    SHAPE_CONV_CHANNELS,
    SHAPE_CONV_GROUPS,
    SHAPE_KERNEL_TOO_LARGE,
    SHAPE_PAD_SIZE,
    SHAPE_RANK,
    SHAPE_SPATIAL_COLLAPSE,
)

CONV_RULES = (CONNECTIVITY_BAD_ARG, SHAPE_CONV_CHANNELS, SHAPE_CONV_GROUPS, SHAPE_KERNEL_TOO_LARGE,
              SHAPE_SPATIAL_COLLAPSE, SHAPE_RANK, DTYPE_INT_INTO_FLOAT, SHAPE_PAD_SIZE)


PADDING_MODES = Enum("zeros", "reflect", "replicate", "circular")


def _ints1(n: int, elem=POS):
    return OneOf(Ints(n, elem), ListOf(elem, 1)) if n > 1 else Ints(n, elem)


def _conv_args(transposed: bool, n: int):
    # stride, padding, dilation and output_padding may be a list of one (torch's conv kernels expand it,
    # measured); kernel_size may not (the weight takes its length)
    base = [Arg("in_channels", kind=NAT), Arg("out_channels", kind=NAT), Arg("kernel_size", kind=Ints(n)),
            Arg("stride", 1, _ints1(n))]
    if transposed:
        # measured on the CPU: the 1-D and 2-D transposed kernels (oneDNN) take dilation 0 where the kernel is
        # 1 wide (gen-214866); the 3-D one refuses it
        base += [Arg("padding", 0, _ints1(n, NAT)), Arg("output_padding", 0, _ints1(n, NAT)), Arg("groups", 1, POS),
                 Arg("bias", True, BOOL), Arg("dilation", 1, _ints1(n, NAT if n < 3 else POS)),
                 Arg("padding_mode", "zeros", PADDING_MODES)]
    else:
        # a negative padding is refused with padding_mode zeros and trims through F.pad with the others
        # (measured, gen-235157): the shape rule judges it
        base += [Arg("padding", 0, OneOf(_ints1(n, INT), Enum("same", "valid"))), Arg("dilation", 1, _ints1(n)),
                 Arg("groups", 1, POS), Arg("bias", True, BOOL), Arg("padding_mode", "zeros", PADDING_MODES)]
    return tuple(base)


def _check_common(ctx: InferCtx, n: int, op: str):
    x, a = ctx.x, ctx.args
    ctx.require(not x.is_int, DTYPE_INT_INTO_FLOAT,
                lambda: f"{op} {ctx.node.id!r} receives integer {x.dtype} values; "
                        "convolutions need floats — cast the input")
    g = a["groups"]
    ctx.require(a["in_channels"] % g == 0, SHAPE_CONV_GROUPS,
                lambda: f"{op} {ctx.node.id!r}: in_channels={a['in_channels']} is not divisible by groups={g}")
    ctx.require(a["out_channels"] % g == 0, SHAPE_CONV_GROUPS,
                lambda: f"{op} {ctx.node.id!r}: out_channels={a['out_channels']} is not divisible by groups={g}")
    # measured: the constructor takes 0 output channels, the forward refuses the empty weight (the convolutions'
    # 'expected weight to be at least groups at dimension 0'; the transposed ones in the CPU's oneDNN kernel)
    ctx.require(a["out_channels"] != 0, SHAPE_CONV_GROUPS,
                lambda: f"{op} {ctx.node.id!r}: out_channels=0 gives a weight with no output channels, which "
                        "torch's forward refuses; give it at least one per group")
    if x.shape is None:
        return None
    if not ctx.need_rank(x, (n + 1, n + 2)):
        return None
    ch = x.shape[-n - 1]
    ctx.require_equal(ch, a["in_channels"], SHAPE_CONV_CHANNELS,
                lambda: f"{op} {ctx.node.id!r} expects {a['in_channels']} input channels but its input "
                f"{D.fmt_shape(x.shape)} has {ch}; set in_channels={ch} or fix the layer before it")
    return x.shape


_PADS_THROUGH_F = ("reflect", "circular")  # the padding modes _mode_pad_fits judges (zeros pads in the kernel)


def _mode_pad_fits(ctx: InferCtx, op: str, mode: str, sides: tuple, size, i: int) -> bool:
    """A padding_mode other than zeros pads through F.pad, which refuses reflection padding not smaller
    than the size and circular padding that wraps more than once (measured, 'same' split as torch does:
    the smaller half on the left). False when it blocked."""
    most = max(sides)
    if mode not in ("reflect", "circular") or most == 0:
        return True
    limit = most + 1 if mode == "reflect" else most
    return ctx.require_equal(limit, size, SHAPE_PAD_SIZE,
                             lambda: f"{op} {ctx.node.id!r}: padding_mode={mode!r} pads {most} at spatial dim {i} "
                                     f"of size {D.fmt(size)}; " + ("reflection padding must be smaller than the size"
                                                                   if mode == "reflect" else
                                                                   "circular padding may wrap at most once"),
                             kind="le")


def _conv_infer(n: int):
    def infer(ctx: InferCtx):
        op = ctx.node.op
        shape = _check_common(ctx, n, op)
        if shape is None:
            return [UNKNOWN]
        a = ctx.args
        k, s, d = pair(a["kernel_size"], n), pair(a["stride"], n), pair(a["dilation"], n)
        pad = a["padding"]
        if pad == "same" and any(v != 1 for v in s):
            return ctx.fail(CONNECTIVITY_BAD_ARG, f"{op} {ctx.node.id!r}: padding='same' with stride {a['stride']}; "
                                                    "torch's constructor refuses it for strided convolutions")
        spatial = shape[-n:]
        out = []
        collapsed = False
        for i in range(n):
            size = spatial[i]
            if pad == "same":
                total = d[i] * (k[i] - 1)
                if not _mode_pad_fits(ctx, op, a["padding_mode"], (total // 2, total - total // 2), size, i):
                    return [UNKNOWN]
                out.append(size)
                continue
            p = 0 if pad == "valid" else pair(pad, n)[i]
            if p < 0 and a["padding_mode"] == "zeros":
                return ctx.fail(CONNECTIVITY_BAD_ARG, f"{op} {ctx.node.id!r}: padding {p} at spatial dim {i}; "
                                                        "torch takes a negative padding only with a padding_mode "
                                                        "other than 'zeros' (it trims)")
            span = d[i] * (k[i] - 1) + 1
            if a["padding_mode"] in _PADS_THROUGH_F and not _mode_pad_fits(ctx, op, a["padding_mode"], (p, p), size, i):
                return [UNKNOWN]
            if D.is_const(size) and size + 2 * p < span:
                ctx.require(False, SHAPE_KERNEL_TOO_LARGE,
                            f"{op} {ctx.node.id!r}: kernel {k[i]} (dilation {d[i]}) spans {span} but the padded "
                            f"input is only {size + 2 * p} wide at spatial dim {i}; shrink the kernel, pad more, "
                            "or downsample less before it")
                collapsed = True
                out.append(None)
                continue
            if not D.is_const(size) and span - 2 * p > 1 and not ctx.require_equal(
                    span - 2 * p, size, SHAPE_KERNEL_TOO_LARGE,
                    lambda i=i, span=span, p=p, size=size: f"{op} {ctx.node.id!r}: kernel {k[i]} (dilation {d[i]}) "
                    f"spans {span}, padded by {p} on each side, at spatial dim {i} of size {D.fmt(size)}",
                    kind="le"):
                return [UNKNOWN]
            out.append(D.conv_out(size, k[i], s[i], p, d[i]))
        if collapsed:
            return [UNKNOWN]
        return [TensorType(shape[:-n - 1] + (a["out_channels"],) + tuple(out), ctx.x.dtype)]

    return infer


def _convT_infer(n: int):
    def infer(ctx: InferCtx):
        op = ctx.node.op
        if ctx.args["padding_mode"] != "zeros":
            return ctx.fail(CONNECTIVITY_BAD_ARG, f"{op} {ctx.node.id!r}: padding_mode must be 'zeros' "
                                                    f"(torch: only \"zeros\" for transposed convolutions)")
        shape = _check_common(ctx, n, op)
        if shape is None:
            return [UNKNOWN]
        a = ctx.args
        k, s, d = pair(a["kernel_size"], n), pair(a["stride"], n), pair(a["dilation"], n)
        p, op_ = pair(a["padding"], n), pair(a["output_padding"], n)
        for i in range(n):
            if d[i] == 0 and k[i] != 1:
                return ctx.fail(CONNECTIVITY_BAD_ARG, f"{op} {ctx.node.id!r}: dilation 0 at spatial dim {i} with a "
                                                        f"kernel {k[i]} wide; the CPU kernel takes dilation 0 only "
                                                        "where the kernel is 1 wide")
        for i in range(n):  # measured: torch's kernel refuses the output padding otherwise
            if not (op_[i] < s[i] or op_[i] < d[i]):
                return ctx.fail(CONNECTIVITY_BAD_ARG, f"{op} {ctx.node.id!r}: output_padding={op_[i]} at spatial "
                                                        f"dim {i} must be smaller than the stride ({s[i]}) or the "
                                                        f"dilation ({d[i]})")
        out = []
        for i, size in enumerate(shape[-n:]):
            # (L-1)*s - 2p + d*(k-1) + output_padding + 1
            grow = d[i] * (k[i] - 1) + op_[i] + 1 - 2 * p[i]
            v = D.add(D.mul(D.sub(size, 1), s[i]), grow)
            if D.is_const(v) and v <= 0:
                ctx.require(False, SHAPE_SPATIAL_COLLAPSE,
                            f"{op} {ctx.node.id!r}: output size {v} at spatial dim {i}; reduce padding")
                return [UNKNOWN]
            out.append(v)
        return [TensorType(shape[:-n - 1] + (a["out_channels"],) + tuple(out), ctx.x.dtype)]

    return infer


def _conv_shapes(n: int, transposed: bool = False):
    def shapes(a):
        k = tuple(pair(a["kernel_size"], n))
        i, o, g = a["in_channels"], a["out_channels"], a["groups"]
        weight = (i, D.floordiv(o, g)) + k if transposed else (o, D.floordiv(i, g)) + k
        return [("weight", weight)] + ([("bias", (o,))] if a["bias"] else [])

    return shapes


def _conv_flops(n: int, transposed: bool = False):
    def flops(ctx, outs):
        a = ctx.args
        out = outs[0].shape if outs and outs[0].shape is not None else None
        x = ctx.x.shape
        if out is None or x is None:
            return None
        k = prod(pair(a["kernel_size"], n))
        spatial = (x if transposed else out)[-n:]
        batch = x[0] if len(x) == n + 2 else 1
        per = 2 * a["out_channels"] * (a["in_channels"] // a["groups"]) * k
        return D.mul(D.mul(batch, D.prod(spatial)), per)

    return flops


OPS = []
for _n in (1, 2, 3):
    OPS.append(OpSpec(f"Conv{_n}d", "conv", _conv_args(False, _n), _conv_infer(_n), tb.module(f"Conv{_n}d"),
                      param_shapes=_conv_shapes(_n), flops=_conv_flops(_n), rules=CONV_RULES,
                      traits=("factory-kwargs", "weighted", "reads-channels", "parametrizable")))
    OPS.append(OpSpec(f"ConvTranspose{_n}d", "conv", _conv_args(True, _n), _convT_infer(_n),
                      tb.module(f"ConvTranspose{_n}d"),
                      param_shapes=_conv_shapes(_n, transposed=True), flops=_conv_flops(_n, transposed=True),
                      rules=CONV_RULES,
                      traits=("factory-kwargs", "weighted", "transposed", "parametrizable", "meta-blind")))


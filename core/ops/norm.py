"""Normalisation: BatchNorm1d/2d/3d, LayerNorm, GroupNorm, RMSNorm, InstanceNorm."""

from __future__ import annotations

from math import prod

from .. import dims as D
from . import torch_build as tb
from .base import BOOL, NAT, NUM, POS, UNKNOWN, Arg, InferCtx, ListOf, OneOf, OpSpec, Optional

_BN_ARGS = (Arg("num_features", kind=NAT), Arg("eps", 1e-5, NUM), Arg("momentum", 0.1, Optional(NUM)),
            Arg("affine", True, BOOL), Arg("track_running_stats", True, BOOL))
NORMALIZED_SHAPE = OneOf(NAT, ListOf(NAT))


def _bn_infer(ranks: tuple):
    def infer(ctx: InferCtx):
        x, a = ctx.x, ctx.args
        ctx.require(not x.is_int, "dtype.int-into-float",
                    lambda: f"{ctx.node.op} {ctx.node.id!r} receives integer {x.dtype} values; "
                            "normalisation needs floats")
        if x.shape is None:
            return [x]
        if not ctx.need_rank(x, ranks):
            return [UNKNOWN]
        # BatchNorm1d on a 2-D input reads channels from dim 1 too
        ch = x.shape[1]
        ctx.require(not D.differ(ch, a["num_features"]), "shape.norm-features",
                    lambda: f"{ctx.node.op} {ctx.node.id!r} expects num_features={a['num_features']} but its input "
                    f"{D.fmt_shape(x.shape)} has {ch} channels at dim 1; set num_features={ch}")
        return [x]

    return infer


def _bn_params(a):
    return 2 * a["num_features"] if a["affine"] else 0


def _ln_shape(a) -> tuple:
    ns = a["normalized_shape"]
    return tuple(ns) if isinstance(ns, (list, tuple)) else (ns,)


def _ln_infer(ctx: InferCtx):
    x = ctx.x
    ctx.require(not x.is_int, "dtype.int-into-float",
                lambda: f"{ctx.node.op} {ctx.node.id!r} receives integer {x.dtype} values; normalisation needs floats")
    if x.shape is None:
        return [x]
    ns = _ln_shape(ctx.args)
    tail = x.shape[-len(ns):] if len(x.shape) >= len(ns) else None
    bad = tail is None or any(D.differ(t, n) for t, n in zip(tail, ns))
    ctx.require(not bad, "shape.norm-features",
                lambda: f"{ctx.node.op} {ctx.node.id!r} normalises over {list(ns)} but its input "
                f"{D.fmt_shape(x.shape)} ends in {D.fmt_shape(tail) if tail else 'fewer dims'}; "
                f"set normalized_shape to the trailing size(s)")
    return [x]


def _ln_params(a):
    if not a.get("elementwise_affine", True):
        return 0
    n = prod(_ln_shape(a))
    return n * (2 if a.get("bias", True) else 1)


def _gn_infer(ctx: InferCtx):
    x, a = ctx.x, ctx.args
    ctx.require(not x.is_int, "dtype.int-into-float",
                f"GroupNorm {ctx.node.id!r} receives integer {x.dtype} values; normalisation needs floats")
    ctx.require(a["num_channels"] % a["num_groups"] == 0, "shape.groupnorm-divisibility",
                f"GroupNorm {ctx.node.id!r}: num_channels={a['num_channels']} is not divisible by "
                f"num_groups={a['num_groups']}; pick a group count that divides the channels")
    if x.shape is None:
        return [x]
    if not ctx.need_rank(x, (2, 3, 4, 5)):
        return [UNKNOWN]
    ch = x.shape[1]
    ctx.require(not D.differ(ch, a["num_channels"]), "shape.norm-features",
                f"GroupNorm {ctx.node.id!r} expects num_channels={a['num_channels']} but its input "
                f"{D.fmt_shape(x.shape)} has {ch} channels at dim 1")
    return [x]


_IN_ARGS = (Arg("num_features", kind=NAT), Arg("eps", 1e-5, NUM), Arg("momentum", 0.1, Optional(NUM)),
            Arg("affine", False, BOOL), Arg("track_running_stats", False, BOOL))


def _in_infer(ranks):
    def infer(ctx: InferCtx):
        x = ctx.x
        ctx.require(not x.is_int, "dtype.int-into-float",
                    lambda: f"{ctx.node.op} {ctx.node.id!r} receives integer {x.dtype} values; "
                            "normalisation needs floats")
        if x.shape is None:
            return [x]
        if not ctx.need_rank(x, ranks):
            return [UNKNOWN]
        if ctx.args["affine"] or ctx.args["track_running_stats"]:
            ch = x.shape[1] if len(x.shape) == max(ranks) else x.shape[0]
            ctx.require(not D.differ(ch, ctx.args["num_features"]), "shape.norm-features",
                        f"{ctx.node.op} {ctx.node.id!r} expects num_features={ctx.args['num_features']}, "
                        f"input {D.fmt_shape(x.shape)} has {ch} channels")
        return [x]

    return infer


OPS = [
    OpSpec("BatchNorm1d", "norm", _BN_ARGS, _bn_infer((2, 3)), tb.module("BatchNorm1d"),
           params=_bn_params, running_stats=True, rules=("shape.norm-features", "shape.rank", "dtype.int-into-float")),
    OpSpec("BatchNorm2d", "norm", _BN_ARGS, _bn_infer((4,)), tb.module("BatchNorm2d"),
           params=_bn_params, running_stats=True, rules=("shape.norm-features", "shape.rank", "dtype.int-into-float")),
    OpSpec("BatchNorm3d", "norm", _BN_ARGS, _bn_infer((5,)), tb.module("BatchNorm3d"),
           params=_bn_params, running_stats=True, rules=("shape.norm-features", "shape.rank", "dtype.int-into-float")),
    OpSpec("LayerNorm", "norm",
           (Arg("normalized_shape", kind=NORMALIZED_SHAPE), Arg("eps", 1e-5, NUM), Arg("elementwise_affine", True,
            BOOL),
            Arg("bias", True, BOOL)),
           _ln_infer, tb.module("LayerNorm"), params=_ln_params, rules=("shape.norm-features", "dtype.int-into-float")),
    OpSpec("RMSNorm", "norm",
           (Arg("normalized_shape", kind=NORMALIZED_SHAPE), Arg("eps", None, Optional(NUM)),
            Arg("elementwise_affine", True, BOOL)),
           _ln_infer, tb.module("RMSNorm"),
           params=lambda a: prod(_ln_shape(a)) if a["elementwise_affine"] else 0,
           rules=("shape.norm-features", "dtype.int-into-float")),
    OpSpec("GroupNorm", "norm",
           (Arg("num_groups", kind=POS), Arg("num_channels", kind=NAT), Arg("eps", 1e-5, NUM), Arg("affine", True,
            BOOL)),
           _gn_infer, tb.module("GroupNorm"),
           params=lambda a: 2 * a["num_channels"] if a["affine"] else 0,
           rules=("shape.norm-features", "shape.groupnorm-divisibility", "shape.rank", "dtype.int-into-float")),
    OpSpec("InstanceNorm2d", "norm", _IN_ARGS,
           _in_infer((3, 4)), tb.module("InstanceNorm2d"),
           params=lambda a: 2 * a["num_features"] if a["affine"] else 0,
           rules=("shape.norm-features", "shape.rank", "dtype.int-into-float")),
]

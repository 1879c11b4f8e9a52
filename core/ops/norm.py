"""Normalisation: BatchNorm1d/2d/3d, SyncBatchNorm, LayerNorm, GroupNorm, RMSNorm, InstanceNorm1d/2d/3d,
LocalResponseNorm, CrossMapLRN2d.

In training mode (the default; train.mode = "eval" says otherwise) batch statistics need more than
one value per channel: BatchNorm over N x spatial values, InstanceNorm over the spatial values. A
design whose declared sizes give one value is blocked; a symbolic batch is not warned about (a batch
of one is not a training batch).
"""

from __future__ import annotations

from collections.abc import Callable

from .. import dims as D
from . import torch_build as tb
from .base import BOOL, INT, NAT, NUM, POS, UNKNOWN, Arg, InferCtx, Int, ListOf, OneOf, OpSpec, Optional
from .rules import (
    CONNECTIVITY_BAD_ARG,
    DTYPE_INT_INTO_FLOAT,
    DTYPE_UNSUPPORTED,
    SHAPE_GROUPNORM_DIVISIBILITY,
    SHAPE_NORM_FEATURES,
    SHAPE_RANK,
    SHAPE_SINGLE_VALUE_STATISTICS,
)

# without weights or running statistics torch never reads num_features (BatchNorm1d(-1, affine=False,
# track_running_stats=False) runs); with them it must equal the channels, which the shape rule checks
_BN_ARGS = (Arg("num_features", kind=INT), Arg("eps", 1e-5, NUM), Arg("momentum", 0.1, Optional(NUM)),
            Arg("affine", True, BOOL), Arg("track_running_stats", True, BOOL))
NORMALIZED_SHAPE = OneOf(NAT, ListOf(NAT))


def _bn_infer(ranks: tuple):
    def infer(ctx: InferCtx):
        x, a = ctx.x, ctx.args
        ctx.require(not x.is_int, DTYPE_INT_INTO_FLOAT,
                    lambda: f"{ctx.node.op} {ctx.node.id!r} receives integer {x.dtype} values; "
                            "normalisation needs floats")
        _params_dtype(ctx, a["affine"] or a["track_running_stats"])
        # F.batch_norm: batch statistics (training, or no running ones) need eps > 0; any use needs eps >= 0
        batch_stats = _training(ctx) or not a["track_running_stats"]
        eps = a["eps"]
        if not ctx.require(eps > 0 if batch_stats else eps >= 0, CONNECTIVITY_BAD_ARG,
                           lambda: f"{ctx.node.op} {ctx.node.id!r}: eps={eps} — torch's batch_norm needs eps "
                                   + ("> 0 when it uses batch statistics" if batch_stats else ">= 0")):
            return [UNKNOWN]
        if x.shape is None:
            return [x]
        if not ctx.need_rank(x, ranks):
            return [UNKNOWN]
        # BatchNorm1d on a 2-D input reads channels from dim 1 too
        ch = x.shape[1]
        ok = not (a["affine"] or a["track_running_stats"]) or ctx.require_equal(ch, a["num_features"],
                                                                                 SHAPE_NORM_FEATURES,
                               lambda: f"{ctx.node.op} {ctx.node.id!r} expects num_features={a['num_features']} but "
                               f"its input {D.fmt_shape(x.shape)} has {ch} channels at dim 1; set num_features={ch}")
        if ok and batch_stats:  # measured: eval mode without running statistics uses batch statistics too
            _more_than_one(ctx, D.prod((x.shape[0],) + tuple(x.shape[2:])), "value per channel (batch x spatial)")
        return [x]

    return infer


def _training(ctx: InferCtx) -> bool:
    return (ctx.design_train or {}).get("mode", "train") != "eval"


def _params_dtype(ctx: InferCtx, has_params: bool) -> bool:
    """A norm with float32 weights or running statistics refuses float64 data (torch: 'mixed dtype');
    without either it normalises any float. (Integers are the measured dtype table's.)"""
    x = ctx.x
    return ctx.require(not (has_params and x.dtype == "float64"), DTYPE_UNSUPPORTED,
                       lambda: f"{ctx.node.op} {ctx.node.id!r} receives float64 values but its weights or running "
                               "statistics are float32; cast the input to float32")


def _more_than_one(ctx: InferCtx, count, what: str, words: str | Callable[[], str] | None = None) -> None:
    """Batch statistics need more than one value: blocked when the sizes (declared ones included)
    give exactly one."""
    words = words or (lambda: f"{ctx.node.op} {ctx.node.id!r} normalises over one {what} with batch statistics "
                              "(training mode, or no running statistics); torch raises 'Expected more than 1 value' "
                              "— use a batch (or map) larger than 1, or eval mode with running statistics")
    if count is not None and not D.is_const(count):
        unnamed = [v for v in D.symbols_of(count) if v not in ctx.declared and ".size" in v]
        least = D.substitute(count, {v: 1 for v in D.symbols_of(count)}) if unnamed else None
        if unnamed and D.is_const(least) and least == 1:
            # a size nobody declared (a null size, a slice or piece length, which the run may make 1; a named
            # batch or sequence symbol is not warned about, item 6 of the known limits): stated
            ctx.require_at_sizes(count, lambda v: v > 1, f"{D.fmt(count)} >= 2", SHAPE_SINGLE_VALUE_STATISTICS,
                                 words)
            return
    if not D.is_const(count):
        count = D.substitute(count, ctx.declared) if ctx.declared else None
    ctx.require(not (D.is_const(count) and count == 1), SHAPE_SINGLE_VALUE_STATISTICS, words)


def _affine_shapes(features: str):
    def shapes(a):
        c = a[features]
        return [("weight", (c,)), ("bias", (c,))] if a["affine"] else []

    return shapes


_bn_shapes = _affine_shapes("num_features")


def _ln_shape(a) -> tuple:
    ns = a["normalized_shape"]
    return tuple(ns) if isinstance(ns, (list, tuple)) else (ns,)


def _ln_infer(ctx: InferCtx):
    x = ctx.x
    ctx.require(not x.is_int, DTYPE_INT_INTO_FLOAT,
                lambda: f"{ctx.node.op} {ctx.node.id!r} receives integer {x.dtype} values; normalisation needs floats")
    if x.shape is None:
        return [x]
    ns = _ln_shape(ctx.args)
    tail = x.shape[-len(ns):] if len(x.shape) >= len(ns) else None

    def words():
        return (f"{ctx.node.op} {ctx.node.id!r} normalises over {list(ns)} but its input "
                f"{D.fmt_shape(x.shape)} ends in {D.fmt_shape(tail) if tail else 'fewer dims'}; "
                f"set normalized_shape to the trailing size(s)")

    if tail is None or (not ns and False):
        ctx.require(False, SHAPE_NORM_FEATURES, words)
        return [x]
    for t, n in zip(tail, ns):
        if not ctx.require_equal(t, n, SHAPE_NORM_FEATURES, words):
            break
    return [x]


def _ln_shapes(a):
    if not a["elementwise_affine"]:
        return []
    ns = _ln_shape(a)
    return [("weight", ns)] + ([("bias", ns)] if a.get("bias", True) else [])  # RMSNorm has no bias


def _gn_infer(ctx: InferCtx):
    x, a = ctx.x, ctx.args
    ctx.require(not x.is_int, DTYPE_INT_INTO_FLOAT,
                f"GroupNorm {ctx.node.id!r} receives integer {x.dtype} values; normalisation needs floats")
    if a["affine"] and a["num_channels"] < 0:
        return ctx.fail(CONNECTIVITY_BAD_ARG, f"GroupNorm {ctx.node.id!r}: num_channels must be >= 0 with affine")
    ctx.require(a["num_channels"] % a["num_groups"] == 0, SHAPE_GROUPNORM_DIVISIBILITY,  # the constructor checks it
                f"GroupNorm {ctx.node.id!r}: num_channels={a['num_channels']} is not divisible by "
                f"num_groups={a['num_groups']}; pick a group count that divides the channels")
    if x.shape is None:
        return [x]
    if not ctx.need_rank(x, (2, 3, 4, 5, 6, 7, 8)):  # group_norm takes any rank from 2
        return [UNKNOWN]
    ch = x.shape[1]
    if D.is_const(ch) and ch % a["num_groups"]:
        ctx.require(False, SHAPE_GROUPNORM_DIVISIBILITY,
                    lambda: f"GroupNorm {ctx.node.id!r}: its input's {ch} channels are not divisible by "
                            f"num_groups={a['num_groups']}")
    elif not D.is_const(ch) and a["num_groups"] > 1 and not ctx.require_equal(
            ch, a["num_groups"], SHAPE_GROUPNORM_DIVISIBILITY,
            lambda: f"GroupNorm {ctx.node.id!r}: its input's {D.fmt(ch)} channels must be divisible by "
                    f"num_groups={a['num_groups']}", kind="multiple"):  # gen-237273
        return [UNKNOWN]
    # measured: group_norm needs more than one value per group, in eval mode too (N * C/G * spatial sizes)
    if D.is_const(ch) and ch % a["num_groups"] == 0:
        count = D.prod((x.shape[0], ch // a["num_groups"]) + tuple(x.shape[2:]))
        _more_than_one(ctx, count, "value per group",
                       f"GroupNorm {ctx.node.id!r} normalises one value per group ({D.fmt_shape(x.shape)} in "
                       f"{a['num_groups']} groups); torch raises 'Expected more than 1 value', in eval mode "
                       "too — use fewer groups, a larger batch or a larger map")
    if a["affine"]:
        ctx.require_equal(ch, a["num_channels"], SHAPE_NORM_FEATURES,
                f"GroupNorm {ctx.node.id!r} expects num_channels={a['num_channels']} but its input "
                f"{D.fmt_shape(x.shape)} has {ch} channels at dim 1")
    return [x]


_IN_ARGS = (Arg("num_features", kind=Int()), Arg("eps", 1e-5, NUM), Arg("momentum", 0.1, Optional(NUM)),
            Arg("affine", False, BOOL), Arg("track_running_stats", False, BOOL))


def _in_infer(ranks):
    def infer(ctx: InferCtx):
        x = ctx.x
        ctx.require(not x.is_int, DTYPE_INT_INTO_FLOAT,
                    lambda: f"{ctx.node.op} {ctx.node.id!r} receives integer {x.dtype} values; "
                            "normalisation needs floats")
        if x.shape is None:
            return [x]
        if not ctx.need_rank(x, ranks):
            return [UNKNOWN]
        _params_dtype(ctx, ctx.args["affine"])  # running statistics are updated in their own dtype
        batched = len(x.shape) == max(ranks)
        ch = x.shape[1] if batched else x.shape[0]
        if ctx.args["num_features"] < 0 and (ctx.args["affine"] or ctx.args["track_running_stats"]):
            return ctx.fail(CONNECTIVITY_BAD_ARG, f"{ctx.node.op} {ctx.node.id!r}: num_features must be >= 0 with "
                                                    "affine or running statistics")
        if ctx.args["affine"] or ctx.args["track_running_stats"]:
            ctx.require_equal(ch, ctx.args["num_features"], SHAPE_NORM_FEATURES,
                              f"{ctx.node.op} {ctx.node.id!r} expects num_features={ctx.args['num_features']}, "
                              f"input {D.fmt_shape(x.shape)} has {ch} channels")
        if _training(ctx) or not ctx.args["track_running_stats"]:  # measured: input statistics in eval too
            _more_than_one(ctx, D.prod(x.shape[2:] if batched else x.shape[1:]), "spatial value")
        return [x]

    return infer


def _lrn_infer(ranks):
    def infer(ctx: InferCtx):
        x = ctx.x
        ctx.require(not x.is_int, DTYPE_INT_INTO_FLOAT,
                    lambda: f"{ctx.node.op} {ctx.node.id!r} receives integer {x.dtype} values; normalisation needs "
                            "floats")
        if x.shape is not None and not ctx.need_rank(x, ranks):
            return [UNKNOWN]
        # LocalResponseNorm's 4-D and larger inputs go through avg_pool3d, whose CPU kernel has no float16
        # and no bfloat16 (measured)
        ctx.require(not (ctx.node.op == "LocalResponseNorm" and x.shape is not None and len(x.shape) >= 4
                         and x.dtype in ("float16", "bfloat16")), DTYPE_UNSUPPORTED,
                    lambda: f"{ctx.node.op} {ctx.node.id!r}: torch's CPU kernel for a {x.rank}-D input has no "
                            f"{x.dtype}; cast to float32")
        return [x]

    return infer


_LRN_ARGS = (Arg("size", kind=POS), Arg("alpha", 1e-4, NUM), Arg("beta", 0.75, NUM), Arg("k", 1.0, NUM))
_NORM_RULES = (SHAPE_NORM_FEATURES, SHAPE_RANK, DTYPE_INT_INTO_FLOAT, SHAPE_SINGLE_VALUE_STATISTICS,
               DTYPE_UNSUPPORTED, CONNECTIVITY_BAD_ARG)

OPS = [
    OpSpec("BatchNorm1d", "norm", _BN_ARGS, _bn_infer((2, 3)), tb.module("BatchNorm1d"),
           param_shapes=_bn_shapes, running_stats=True, rules=_NORM_RULES,
           traits=("factory-kwargs", "affine", "batchnorm", "nonlinear", "normalises", "reads-channels")),
    OpSpec("BatchNorm2d", "norm", _BN_ARGS, _bn_infer((4,)), tb.module("BatchNorm2d"),
           param_shapes=_bn_shapes, running_stats=True, rules=_NORM_RULES,
           traits=("factory-kwargs", "affine", "batchnorm", "nonlinear", "normalises", "reads-channels")),
    OpSpec("BatchNorm3d", "norm", _BN_ARGS, _bn_infer((5,)), tb.module("BatchNorm3d"),
           param_shapes=_bn_shapes, running_stats=True, rules=_NORM_RULES,
           traits=("factory-kwargs", "affine", "batchnorm", "nonlinear", "normalises", "reads-channels")),
    OpSpec("LayerNorm", "norm",
           (Arg("normalized_shape", kind=NORMALIZED_SHAPE), Arg("eps", 1e-5, NUM), Arg("elementwise_affine", True,
            BOOL),
            Arg("bias", True, BOOL)),
           _ln_infer, tb.module("LayerNorm"), param_shapes=_ln_shapes,
           rules=(SHAPE_NORM_FEATURES, DTYPE_INT_INTO_FLOAT),
           dtype_key=lambda a: "LayerNorm" if a["elementwise_affine"] else "LayerNorm[no affine]",
           traits=("factory-kwargs", "adds-no-position", "affine", "nonlinear", "normalises", "reads-width")),
    OpSpec("RMSNorm", "norm",
           (Arg("normalized_shape", kind=NORMALIZED_SHAPE), Arg("eps", None, Optional(NUM)),
            Arg("elementwise_affine", True, BOOL)),
           _ln_infer, tb.module("RMSNorm"),
           param_shapes=lambda a: [("weight", _ln_shape(a))] if a["elementwise_affine"] else [],
           rules=(SHAPE_NORM_FEATURES, DTYPE_INT_INTO_FLOAT),
           traits=("factory-kwargs", "affine", "nonlinear", "normalises", "weights-any-float")),
    OpSpec("GroupNorm", "norm",
           (Arg("num_groups", kind=POS), Arg("num_channels", kind=Int()), Arg("eps", 1e-5, NUM), Arg("affine", True,
            BOOL)),
           _gn_infer, tb.module("GroupNorm"),
           param_shapes=_affine_shapes("num_channels"),
           rules=(SHAPE_NORM_FEATURES, SHAPE_GROUPNORM_DIVISIBILITY, SHAPE_RANK, DTYPE_INT_INTO_FLOAT,
                  CONNECTIVITY_BAD_ARG, SHAPE_SINGLE_VALUE_STATISTICS),
           dtype_key=lambda a: "GroupNorm" if a["affine"] else "GroupNorm[no affine]",
           traits=("factory-kwargs", "affine", "nonlinear", "normalises", "reads-channels")),
    OpSpec("SyncBatchNorm", "norm", _BN_ARGS + (Arg("process_group", None),),
           _bn_infer((2, 3, 4, 5, 6, 7, 8)), tb.module("SyncBatchNorm"), param_shapes=_bn_shapes, running_stats=True,
           rules=_NORM_RULES, doc="process_group is null in a design (one process)",
           traits=("factory-kwargs", "affine", "batchnorm", "nonlinear", "normalises")),
    OpSpec("LocalResponseNorm", "norm", _LRN_ARGS, _lrn_infer((3, 4, 5, 6, 7, 8)), tb.module("LocalResponseNorm"),
           rules=(SHAPE_RANK, DTYPE_INT_INTO_FLOAT, DTYPE_UNSUPPORTED), functional=("local_response_norm",)),
    OpSpec("CrossMapLRN2d", "norm", _LRN_ARGS, _lrn_infer((4,)), tb.module("CrossMapLRN2d"),
           rules=(SHAPE_RANK, DTYPE_INT_INTO_FLOAT)),
]
for _n, _ranks in ((1, (2, 3)), (2, (3, 4)), (3, (4, 5))):
    OPS.append(OpSpec(f"InstanceNorm{_n}d", "norm", _IN_ARGS, _in_infer(_ranks), tb.module(f"InstanceNorm{_n}d"),
                      param_shapes=_bn_shapes, running_stats=True,
                      rules=_NORM_RULES, traits=("factory-kwargs", "affine", "nonlinear", "normalises")))

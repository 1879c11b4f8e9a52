"""Element-wise activations, dropout and identity: shape in = shape out (GLU halves one dim).

What each accepts is torch's CPU kernels' answer (measured, and kept true by
tests/test_ops.py and the differential run): most activations take floats
only; ReLU, ReLU6, Hardtanh and Threshold take integers too, not bools;
Tanh, Sigmoid promote every dtype to float; Softsign and Tanhshrink promote
integers but refuse bools; Identity takes anything. Dropout in training mode
rescales and needs floats; in eval mode (train.mode = "eval") it passes
anything through.
"""

from __future__ import annotations

import math

from .. import dims as D
from . import torch_build as tb
from .base import BOOL, INT, NUM, POS, UNKNOWN, Arg, Enum, Float, InferCtx, Kind, OpSpec, Optional, TensorType
from .functional import INT_RANGES
from .rules import (
    CONNECTIVITY_BAD_ARG,
    DTYPE_INT_INTO_FLOAT,
    SHAPE_DIM_RANGE,
    SHAPE_GLU_ODD,
    SHAPE_NORM_FEATURES,
    SHAPE_RANK,
)

INPLACE = Arg("inplace", False, BOOL)
PROB = Float(0, 1)


def _refuse(ctx: InferCtx, what: str) -> None:
    x = ctx.x
    ctx.require(False, DTYPE_INT_INTO_FLOAT,
                lambda: f"{ctx.node.op} {ctx.node.id!r} receives {x.dtype} values; it is defined on {what} only — "
                        "cast first (or embed token ids)")


def _dtypes(accepts: str):
    """A shape rule for an element-wise op: `float` | `number` (ints too, not bools) | `any` | `promote`
    (every dtype, ints and bools become float32) | `promote-number` (ints become float32, bools refused)."""
    def infer(ctx: InferCtx):
        x = ctx.x
        if accepts == "float" and x.is_int:
            _refuse(ctx, "floats")
        elif accepts in ("number", "promote-number") and x.dtype == "bool":
            _refuse(ctx, "numbers (not bools)")
        if accepts.startswith("promote") and x.is_int:
            return [TensorType(x.shape, "float32")]
        return [x]

    infer.accepts = accepts  # type: ignore[attr-defined]  # read back by getattr where rules are wrapped
    return infer


_float_only = _dtypes("float")
_promote = _dtypes("promote")


def _mode(ctx: InferCtx) -> str:
    return (ctx.design_train or {}).get("mode", "train")


def _dropout_ranks(op: str):
    ranks = {"Dropout1d": (2, 3), "Dropout2d": (2, 3, 4, 5, 6, 7, 8), "FeatureAlphaDropout": (2, 3, 4, 5, 6, 7, 8),
             "Dropout3d": (1, 2, 3, 4, 5, 6, 7, 8)}
    return ranks.get(op)


def _rescales(p) -> bool:
    """Whether training-mode dropout with this p rescales (0 < p < 1); any value not a number counts as one."""
    return not (type(p) in (int, float) and p in (0, 1))


def _dropout(ctx: InferCtx):
    # training-mode dropout scales by 1/(1-p): torch cannot write that back into integers; eval passes anything
    x, p = ctx.x, ctx.args.get("p", 0.5)
    ranks = _dropout_ranks(ctx.node.op)
    if ctx.node.op != "Dropout1d" and _mode(ctx) == "eval":
        ranks = None  # eval-mode feature dropout returns its input without looking at it
    if ranks and x.shape is not None and not ctx.need_rank(x, ranks):
        return [TensorType(None, x.dtype)]
    if _mode(ctx) != "eval":
        # measured: p = 0 returns its input and p = 1 multiplies by zeros, both in the input's dtype
        ctx.require(not (x.is_int and _rescales(p)), DTYPE_INT_INTO_FLOAT,
                    lambda: f"{ctx.node.op} {ctx.node.id!r} receives integer {x.dtype} values; dropout rescales "
                    "them in training and needs floats — cast first, or embed token ids")
    return [x]


def _check_dim(ctx: InferCtx, dim, x) -> int | None:
    if dim is None or x.shape is None:
        return None
    r = max(len(x.shape), 1)
    if not ctx.require(-r <= dim < r, SHAPE_DIM_RANGE,
                       lambda: f"{ctx.node.op} {ctx.node.id!r}: dim={dim} is out of range for a "
                               f"{len(x.shape)}-D input"):
        return None
    return dim % r


def _softmax_like(ctx: InferCtx):
    x = ctx.x
    _check_dim(ctx, ctx.args.get("dim"), x)
    return _float_only(ctx)


def _softmax2d(ctx: InferCtx):
    x = ctx.x
    if x.shape is not None and not ctx.need_rank(x, (3, 4)):
        return [TensorType(None, x.dtype)]
    return _float_only(ctx)


def _glu(ctx: InferCtx):
    x = ctx.x
    _float_only(ctx)
    if x.shape is None:
        return [x]
    if not x.shape:
        return ctx.fail(SHAPE_RANK, f"GLU {ctx.node.id!r} needs at least one dimension to halve")
    d = _check_dim(ctx, ctx.args["dim"], x)
    if d is None:
        return [TensorType(None, x.dtype)]
    size = x.shape[d]
    if D.is_const(size) and size % 2:
        return ctx.fail(SHAPE_GLU_ODD, f"GLU {ctx.node.id!r}: dim {ctx.args['dim']} has size {size}, which "
                                         "cannot be halved; GLU splits it into two equal halves")
    half = D.exact_div(size, 2)
    if D.is_sym(size) and (half is None or "/" in str(half)):  # an odd symbolic size: its condition, or a block
        if not ctx.require_equal(size, 2, SHAPE_GLU_ODD, f"GLU {ctx.node.id!r}: dim {ctx.args['dim']} of size "
                                                           f"{size} is split into two equal halves", kind="multiple"):
            return [UNKNOWN]
    s = list(x.shape)
    s[d] = D.floordiv(size, 2)
    return [TensorType(tuple(s), x.dtype)]


def _prelu(ctx: InferCtx):
    x, n = ctx.x, ctx.args["num_parameters"]
    _float_only(ctx)
    if x.shape is None:
        return [x]
    if len(x.shape) == 0 and n != 1:
        return ctx.fail(SHAPE_RANK, f"PReLU {ctx.node.id!r}: torch takes a 0-D input only with one parameter")
    if n != 1 and x.shape:
        ch = x.shape[1] if len(x.shape) >= 2 else 1
        ctx.require_equal(ch, n, SHAPE_NORM_FEATURES,
                          lambda: f"PReLU {ctx.node.id!r} has num_parameters={n} but its input "
                                  f"{D.fmt_shape(x.shape)} has {ch} channels (dim 1); use 1 or the channel count")
    return [x]


def _with_arg_rule(infer, check):
    def wrapped(ctx: InferCtx):
        check(ctx)
        return infer(ctx)

    wrapped.accepts = getattr(infer, "accepts", "")
    return wrapped


def _fits_dtype(ctx: InferCtx):
    """Threshold writes its threshold and value into an integer input's dtype: they must fit."""
    lo_hi = INT_RANGES.get(ctx.x.dtype)
    if lo_hi is None:
        return
    for name in ("threshold", "value"):
        v = ctx.args[name]
        ctx.require(lo_hi[0] <= v <= lo_hi[1], CONNECTIVITY_BAD_ARG,
                    lambda v=v, name=name: f"Threshold {ctx.node.id!r}: {name}={v} does not fit its "
                                           f"{ctx.x.dtype} input")


def _arg_check(test, words):
    def check(ctx: InferCtx):
        a = ctx.args
        ctx.require(test(a), CONNECTIVITY_BAD_ARG, lambda: f"{ctx.node.op} {ctx.node.id!r}: {words(a)}")

    return check


def _act(name, args=(), infer=_float_only, param_shapes=None, saturating=False, rules=(), dtype_key=None,
         traits=(), scalar=None, **spellings):
    accepts = getattr(infer, "accepts", "")
    own = (DTYPE_INT_INTO_FLOAT,) if accepts in ("float", "number", "promote-number") or \
        infer in (_softmax_like, _softmax2d, _glu, _prelu) else ()
    if infer is _softmax_like:
        own += (SHAPE_DIM_RANGE,)
    return OpSpec(name, "activation", tuple(args), infer, tb.module(name),
                  accepts="any" if accepts in ("any", "promote") else "float",
                  param_shapes=param_shapes or (lambda a: []), doc="saturating" if saturating else "",
                  rules=own + tuple(rules),
                  dtype_key=dtype_key, traits=traits, scalar=scalar, **spellings)


_NUMBER = _dtypes("number")

OPS = [
    _act("ReLU", [INPLACE], infer=_NUMBER, traits=("activation", "keeps-max", "non-negative", "nonlinear"),
         scalar=lambda v: max(v, 0),
         functional=("relu", "relu_"), functional_args=(), torch_functions=("relu", "relu_"),
         tensor_methods=("relu", "relu_")),
    _act("ReLU6", [INPLACE], infer=_NUMBER, traits=("activation", "non-negative", "nonlinear"),
         functional=("relu6",), functional_args=()),
    _act("LeakyReLU", [Arg("negative_slope", 0.01, NUM), INPLACE], traits=("activation", "nonlinear"),
         functional=("leaky_relu",), functional_args=("negative_slope",)),
    _act("ELU", [Arg("alpha", 1.0, NUM), INPLACE], traits=("activation", "nonlinear"),
         functional=("elu",), functional_args=("alpha",)),
    _act("CELU", [Arg("alpha", 1.0, NUM), INPLACE],
         infer=_with_arg_rule(_float_only, _arg_check(lambda a: a["alpha"] != 0, lambda a: "alpha cannot be 0")),
         rules=(CONNECTIVITY_BAD_ARG,),
         functional=("celu",), functional_args=("alpha",), torch_functions=("celu",)),
    _act("SELU", [INPLACE], traits=("activation", "nonlinear"),
         functional=("selu",), functional_args=(), torch_functions=("selu",)),
    _act("GELU", [Arg("approximate", "none", Enum("none", "tanh"))], traits=("activation", "nonlinear"),
         functional=("gelu",), functional_args=("approximate",)),
    _act("SiLU", [INPLACE], traits=("activation", "nonlinear"),
         functional=("silu",), functional_args=()),
    _act("Mish", [INPLACE], traits=("activation", "nonlinear"),
         functional=("mish",), functional_args=()),
    _act("Hardswish", [INPLACE], traits=("activation", "nonlinear"),
         functional=("hardswish",), functional_args=()),
    _act("Hardsigmoid", [INPLACE], saturating=True, traits=("activation", "nonlinear"),
         functional=("hardsigmoid",), functional_args=()),
    _act("Hardtanh", [Arg("min_val", -1.0, NUM), Arg("max_val", 1.0, NUM), INPLACE],
         infer=_with_arg_rule(_NUMBER, _arg_check(lambda a: a["max_val"] > a["min_val"],
                                                  lambda a: f"max_val ({a['max_val']}) must be greater than "
                                                            f"min_val ({a['min_val']})")),
         saturating=True, rules=(CONNECTIVITY_BAD_ARG,),
         # uint8 takes limits it can hold once made integers (truncated: -0.5 is 0): not negative, not past 255
         dtype_key=lambda a: "Hardtanh[limits in 0..255]" if 0 <= int(a["min_val"]) and 0 <= int(a["max_val"]) <= 255
         else "Hardtanh", traits=("activation", "nonlinear"),
         functional=("hardtanh",), functional_args=("min_val", "max_val")),
    _act("Threshold", [Arg("threshold", kind=NUM), Arg("value", kind=NUM), INPLACE],
         infer=_with_arg_rule(_NUMBER, _fits_dtype), rules=(CONNECTIVITY_BAD_ARG,)),
    _act("Hardshrink", [Arg("lambd", 0.5, NUM)]),
    _act("Softshrink", [Arg("lambd", 0.5, NUM)],
         infer=_with_arg_rule(_float_only, _arg_check(lambda a: a["lambd"] >= 0,
                                                      lambda a: f"lambd={a['lambd']} must be >= 0")),
         rules=(CONNECTIVITY_BAD_ARG,)),
    _act("RReLU", [Arg("lower", 1 / 8, NUM), Arg("upper", 1 / 3, NUM), INPLACE],
         infer=_with_arg_rule(_float_only, _arg_check(lambda a: a["lower"] <= a["upper"],
                                                      lambda a: "lower must be <= upper")),
         rules=(CONNECTIVITY_BAD_ARG,)),
    _act("Softplus", [Arg("beta", 1.0, NUM), Arg("threshold", 20.0, NUM)], traits=("activation", "nonlinear"),
         functional=("softplus",), functional_args=("beta", "threshold")),
    _act("LogSigmoid", functional=("logsigmoid",), functional_args=()),
    _act("Softsign", infer=_dtypes("promote-number"),
         functional=("softsign",), functional_args=()),
    _act("Tanhshrink", infer=_dtypes("promote-number"),
         functional=("tanhshrink",), functional_args=()),
    _act("Tanh", infer=_promote, saturating=True, traits=("activation", "nonlinear"), scalar=math.tanh,
         functional=("tanh",), functional_args=(), torch_functions=("tanh",), tensor_methods=("tanh", "tanh_")),
    _act("Sigmoid", infer=_promote, saturating=True, traits=("activation", "nonlinear"),
         scalar=lambda v: 1 / (1 + math.exp(-v)) if v > -700 else 0.0,
         functional=("sigmoid",), functional_args=(), torch_functions=("sigmoid",),
         tensor_methods=("sigmoid", "sigmoid_")),
    _act("PReLU", [Arg("num_parameters", 1, POS), Arg("init", 0.25, NUM)], infer=_prelu,
         param_shapes=lambda a: [("weight", (a["num_parameters"],))], rules=(SHAPE_NORM_FEATURES, SHAPE_RANK),
         traits=("factory-kwargs", "activation", "nonlinear")),
    _act("Softmax", [Arg("dim", None, Optional(INT))], infer=_softmax_like,
         traits=("meta-blind", "nonlinear", "softmax"),
         functional=("softmax",), functional_args=("dim",)),
    _act("LogSoftmax", [Arg("dim", None, Optional(INT))], infer=_softmax_like,
         traits=("meta-blind", "nonlinear", "softmax"),
         functional=("log_softmax",), functional_args=("dim",)),
    _act("Softmin", [Arg("dim", None, Optional(INT))], infer=_softmax_like, traits=("nonlinear", "softmax"),
         functional=("softmin",), functional_args=("dim",)),
    _act("Softmax2d", infer=_softmax2d, rules=(SHAPE_RANK,)),
    _act("GLU", [Arg("dim", -1, INT)], infer=_glu, rules=(SHAPE_DIM_RANGE, SHAPE_GLU_ODD, SHAPE_RANK),
         functional=("glu",), functional_args=("dim",)),
    # torch.nn.Identity(*args, **kwargs) takes and ignores any argument (measured)
    OpSpec("Identity", "activation", (), _dtypes("any"), tb.module("Identity"), accepts="any",
           extra=Kind(lambda v: True, "anything"), traits=("adds-no-position", "moves-values", "view")),
]
# F.feature_alpha_dropout is not read as FeatureAlphaDropout (the parser never has)
_DROPOUT_FUNCTIONAL = {"Dropout": ("dropout",), "Dropout1d": ("dropout1d",), "Dropout2d": ("dropout2d",),
                       "Dropout3d": ("dropout3d",), "AlphaDropout": ("alpha_dropout",)}
for _name in ("Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"):
    OPS.append(OpSpec(_name, "activation", (Arg("p", 0.5, PROB), INPLACE), _dropout, tb.module(_name),
                      rules=(DTYPE_INT_INTO_FLOAT, SHAPE_RANK),
                      # the dtype table was measured at p = 0.5; p = 0 and p = 1 never rescale (see _dropout)
                      measured_for=lambda a: _rescales(a.get("p", 0.5)),
                      traits=("dropout", "adds-no-position") if _name == "Dropout" else ("dropout",),
                      functional=_DROPOUT_FUNCTIONAL.get(_name, ())))

SATURATING = {op.name for op in OPS if op.doc == "saturating"}

"""Element-wise activations, dropout and identity: shape in = shape out."""

from __future__ import annotations

from . import torch_build as tb
from .base import BOOL, INT, NUM, POS, Arg, Enum, Float, InferCtx, OpSpec, Optional, TensorType, same_shape

INPLACE = Arg("inplace", False, BOOL)
PROB = Float(0, 1)


def _float_only(ctx: InferCtx):
    x = ctx.x
    ctx.require(not x.is_int, "dtype.int-into-float",
                lambda: f"{ctx.node.op} {ctx.node.id!r} receives integer {x.dtype} values; "
                        "it is defined on floats only")
    return [x]


def _promote(ctx: InferCtx):
    """torch promotes integer values to float (tanh, sigmoid): no requirement."""
    x = ctx.x
    return [TensorType(x.shape, "float32") if x.is_int else x]


def _dropout(ctx: InferCtx):
    # training-mode dropout scales by 1/(1-p): torch cannot write that back into integers
    x, p = ctx.x, ctx.args.get("p", 0.5)
    ctx.require(not (x.is_int and p), "dtype.int-into-float",
                lambda: f"{ctx.node.op} {ctx.node.id!r} receives integer {x.dtype} values; dropout rescales them "
                "and needs floats — cast first, or embed token ids")
    return [x]


def _softmax_like(ctx: InferCtx):
    x = ctx.x
    dim = ctx.args.get("dim")
    if dim is not None and x.shape is not None:
        r = len(x.shape)
        ctx.require(-r <= dim < r, "shape.dim-range",
                    f"{ctx.node.op} {ctx.node.id!r}: dim={dim} is out of range for a {r}-D input")
    return _float_only(ctx)


def _act(name, args=(), infer=_float_only, accepts="float", params=None, saturating=False):
    rules = ("dtype.int-into-float",) if infer in (_float_only, _softmax_like) else ()
    if infer is _softmax_like:
        rules += ("shape.dim-range",)
    return OpSpec(name, "activation", tuple(args), infer, tb.module(name), accepts=accepts,
                  params=params or (lambda a: 0), doc="saturating" if saturating else "", rules=rules)


OPS = [
    _act("ReLU", [INPLACE], infer=same_shape, accepts="any"),
    _act("ReLU6", [INPLACE], infer=same_shape, accepts="any"),
    _act("LeakyReLU", [Arg("negative_slope", 0.01, NUM), INPLACE]),
    _act("ELU", [Arg("alpha", 1.0, NUM), INPLACE]),
    _act("SELU", [INPLACE]),
    _act("GELU", [Arg("approximate", "none", Enum("none", "tanh"))]),
    _act("SiLU", [INPLACE]),
    _act("Mish", [INPLACE]),
    _act("Hardswish", [INPLACE]),
    _act("Hardsigmoid", [INPLACE], saturating=True),
    _act("Hardtanh", [Arg("min_val", -1.0, NUM), Arg("max_val", 1.0, NUM), INPLACE], infer=same_shape,
         accepts="any", saturating=True),
    _act("Softplus", [Arg("beta", 1.0, NUM), Arg("threshold", 20.0, NUM)]),
    _act("Tanh", infer=_promote, accepts="any", saturating=True),
    _act("Sigmoid", infer=_promote, accepts="any", saturating=True),
    _act("PReLU", [Arg("num_parameters", 1, POS), Arg("init", 0.25, NUM)], params=lambda a: a["num_parameters"]),
    _act("Softmax", [Arg("dim", None, Optional(INT))], infer=_softmax_like),
    _act("LogSoftmax", [Arg("dim", None, Optional(INT))], infer=_softmax_like),
    OpSpec("Dropout", "activation", (Arg("p", 0.5, PROB), INPLACE), _dropout, tb.module("Dropout"),
           rules=("dtype.int-into-float",)),
    OpSpec("Dropout1d", "activation", (Arg("p", 0.5, PROB), INPLACE), _dropout, tb.module("Dropout1d"),
           rules=("dtype.int-into-float",)),
    OpSpec("Dropout2d", "activation", (Arg("p", 0.5, PROB), INPLACE), _dropout, tb.module("Dropout2d"),
           rules=("dtype.int-into-float",)),
    OpSpec("Identity", "activation", (), same_shape, tb.module("Identity"), accepts="any"),
]

SATURATING = {op.name for op in OPS if op.doc == "saturating"}

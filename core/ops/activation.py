"""Element-wise activations, dropout and identity: shape in = shape out."""

from __future__ import annotations

from . import torch_build as tb
from .base import Arg, InferCtx, OpSpec, TensorType, same_shape


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
    _act("ReLU", [Arg("inplace", False)], infer=same_shape, accepts="any"),
    _act("ReLU6", [Arg("inplace", False)], infer=same_shape, accepts="any"),
    _act("LeakyReLU", [Arg("negative_slope", 0.01), Arg("inplace", False)]),
    _act("ELU", [Arg("alpha", 1.0), Arg("inplace", False)]),
    _act("SELU", [Arg("inplace", False)]),
    _act("GELU", [Arg("approximate", "none")]),
    _act("SiLU", [Arg("inplace", False)]),
    _act("Mish", [Arg("inplace", False)]),
    _act("Hardswish", [Arg("inplace", False)]),
    _act("Hardsigmoid", [Arg("inplace", False)], saturating=True),
    _act("Hardtanh", [Arg("min_val", -1.0), Arg("max_val", 1.0), Arg("inplace", False)], infer=same_shape,
         accepts="any", saturating=True),
    _act("Softplus", [Arg("beta", 1.0), Arg("threshold", 20.0)]),
    _act("Tanh", infer=_promote, accepts="any", saturating=True),
    _act("Sigmoid", infer=_promote, accepts="any", saturating=True),
    _act("PReLU", [Arg("num_parameters", 1), Arg("init", 0.25)], params=lambda a: a["num_parameters"]),
    _act("Softmax", [Arg("dim", None)], infer=_softmax_like),
    _act("LogSoftmax", [Arg("dim", None)], infer=_softmax_like),
    OpSpec("Dropout", "activation", (Arg("p", 0.5), Arg("inplace", False)), _dropout, tb.module("Dropout"),
           rules=("dtype.int-into-float",)),
    OpSpec("Dropout1d", "activation", (Arg("p", 0.5), Arg("inplace", False)), _dropout, tb.module("Dropout1d"),
           rules=("dtype.int-into-float",)),
    OpSpec("Dropout2d", "activation", (Arg("p", 0.5), Arg("inplace", False)), _dropout, tb.module("Dropout2d"),
           rules=("dtype.int-into-float",)),
    OpSpec("Identity", "activation", (), same_shape, tb.module("Identity"), accepts="any"),
]

SATURATING = {op.name for op in OPS if op.doc == "saturating"}

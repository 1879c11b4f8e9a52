"""Dense layers and lookups: Linear, Bilinear, Embedding."""

from __future__ import annotations

from .. import dims as D
from . import torch_build as tb
from .base import Arg, InferCtx, OpSpec, TensorType

FLATTENING = {"Flatten", "Reshape"}


def _linear_infer(ctx: InferCtx):
    x, a = ctx.x, ctx.args
    ctx.require(not x.is_int, "dtype.int-into-float",
                lambda: f"Linear {ctx.node.id!r} receives integer {x.dtype} values; torch's matmul needs floats — "
                "insert an Embedding for token ids, or cast the input")
    if x.shape is None:
        return [TensorType(None, "float32")]
    if not ctx.need_rank(x, tuple(range(1, 9))):
        return [TensorType(None)]
    last = x.shape[-1]
    flat = ctx.producers and ctx.producers[0] in FLATTENING
    rule = "shape.flatten-linear-width" if flat else "shape.linear-width"
    ctx.require(
        not D.differ(last, a["in_features"]), rule,
        lambda: f"Linear {ctx.node.id!r} expects in_features={a['in_features']} but its input "
        f"{D.fmt_shape(x.shape)} ends in {last}"
        + (" after flattening; set in_features to the flattened size" if flat else
           f"; set in_features={last} or fix the layer before it"),
    )
    return [TensorType(x.shape[:-1] + (a["out_features"],), "float32" if x.is_int else x.dtype)]


def _linear_params(a):
    wn = a["out_features"] if a.get("weight_norm") else 0  # weight_norm: one magnitude per output
    return a["in_features"] * a["out_features"] + (a["out_features"] if a["bias"] else 0) + wn


def _linear_flops(ctx, outs):
    x = ctx.x
    if x.shape is None:
        return None
    rows = D.prod(x.shape[:-1])
    return D.mul(rows, 2 * ctx.args["in_features"] * ctx.args["out_features"])


def _bilinear_infer(ctx: InferCtx):
    a = ctx.args
    x1, x2 = ctx.inputs[0], ctx.inputs[1]
    if x1.shape is None or x2.shape is None:
        return [TensorType(None)]
    ok = ctx.require(not D.differ(x1.shape[-1], a["in1_features"]), "shape.linear-width",
                     lambda: f"Bilinear {ctx.node.id!r} expects in1_features={a['in1_features']}, got {x1.shape[-1]}")
    ok &= ctx.require(not D.differ(x2.shape[-1], a["in2_features"]), "shape.linear-width",
                      lambda: f"Bilinear {ctx.node.id!r} expects in2_features={a['in2_features']}, got {x2.shape[-1]}")
    return [TensorType(x1.shape[:-1] + (a["out_features"],), x1.dtype)]


def _bilinear_params(a):
    return a["in1_features"] * a["in2_features"] * a["out_features"] + (a["out_features"] if a["bias"] else 0)


def _embedding_infer(ctx: InferCtx):
    x, a = ctx.x, ctx.args
    ctx.require(not x.is_float, "dtype.float-into-embedding",
                lambda: f"Embedding {ctx.node.id!r} receives {x.dtype} values; it looks up integer ids — "
                "feed token ids (int64) or use a Linear for dense features")
    if x.shape is None:
        return [TensorType(None)]
    return [TensorType(x.shape + (a["embedding_dim"],), "float32")]


OPS = [
    OpSpec(
        "Linear", "linear",
        (Arg("in_features"), Arg("out_features"), Arg("bias", True), Arg("weight_norm", False)),
        _linear_infer, tb.module("Linear"),
        params=_linear_params, flops=_linear_flops,
        rules=("shape.linear-width", "shape.flatten-linear-width", "dtype.int-into-float", "shape.rank"),
    ),
    OpSpec(
        "Bilinear", "linear",
        (Arg("in1_features"), Arg("in2_features"), Arg("out_features"), Arg("bias", True)),
        _bilinear_infer, tb.module("Bilinear"), arity=(2, 2),
        params=_bilinear_params,
        rules=("shape.linear-width",),
        doc="FLOPs 0: torch runs Bilinear through _trilinear, which FlopCounterMode does not count.",
    ),
    OpSpec(
        "Embedding", "linear",
        (Arg("num_embeddings"), Arg("embedding_dim"), Arg("padding_idx", None), Arg("max_norm", None),
         Arg("norm_type", 2.0), Arg("scale_grad_by_freq", False), Arg("sparse", False)),
        _embedding_infer, tb.module("Embedding"),
        params=lambda a: a["num_embeddings"] * a["embedding_dim"],
        rules=("dtype.float-into-embedding",),
        accepts="int",
    ),
]

"""Dense layers and lookups: Linear, Bilinear, Embedding, EmbeddingBag (operands: ids, and for 1-D ids
their offsets, then per_sample_weights)."""

from __future__ import annotations

from .. import dims as D
from . import torch_build as tb
from .base import (
    BOOL,
    NAT,
    NUM,
    POS,
    UNKNOWN,
    Arg,
    Enum,
    Float,
    InferCtx,
    Int,
    OpSpec,
    Optional,
    TensorType,
    require_one_float_dtype,
)
from .rules import (
    CONNECTIVITY_BAD_ARG,
    DTYPE_FLOAT_INTO_EMBEDDING,
    DTYPE_INDEX_DTYPE,
    DTYPE_INT_INTO_FLOAT,
    DTYPE_MIXED,
    SHAPE_BROADCAST,
    SHAPE_FLATTEN_LINEAR_WIDTH,
    SHAPE_INDEX_RANGE,
    SHAPE_LINEAR_WIDTH,
    SHAPE_RANK,
)

FLATTENING = {"Flatten", "Reshape"}
_LINEAR_RANKS = tuple(range(1, 9))  # the input ranks torch's linear takes here


def _linear_infer(ctx: InferCtx):
    x, a = ctx.x, ctx.args
    ctx.require(not x.is_int, DTYPE_INT_INTO_FLOAT,
                lambda: f"Linear {ctx.node.id!r} receives integer {x.dtype} values; torch's matmul needs floats — "
                "insert an Embedding for token ids, or cast the input")
    if x.shape is None:
        return [TensorType(None, "float32")]
    if not ctx.need_rank(x, _LINEAR_RANKS):
        return [TensorType(None)]
    last = x.shape[-1]
    flat = ctx.producers and ctx.producers[0] in FLATTENING
    rule = SHAPE_FLATTEN_LINEAR_WIDTH if flat else SHAPE_LINEAR_WIDTH
    ctx.require_equal(
        last, a["in_features"], rule,
        lambda: f"Linear {ctx.node.id!r} expects in_features={a['in_features']} but its input "
        f"{D.fmt_shape(x.shape)} ends in {last}"
        + (" after flattening; set in_features to the flattened size" if flat else
           f"; set in_features={last} or fix the layer before it"),
    )
    return [TensorType(x.shape[:-1] + (a["out_features"],), "float32" if x.is_int else x.dtype)]


def _linear_shapes(a):
    o = a["out_features"]
    return [("weight", (o, a["in_features"]))] + ([("bias", (o,))] if a["bias"] else [])


def _linear_flops(ctx, outs):
    x = ctx.x
    if x.shape is None:
        return None
    rows = D.prod(x.shape[:-1])
    return D.mul(rows, 2 * ctx.args["in_features"] * ctx.args["out_features"])


def _bilinear_infer(ctx: InferCtx):
    a = ctx.args
    x1, x2 = ctx.inputs[0], ctx.inputs[1]
    require_one_float_dtype(ctx, (0, 1), DTYPE_MIXED)
    if x1.shape is None or x2.shape is None:
        return [TensorType(None)]
    ctx.require_equal(x1.shape[-1], a["in1_features"], SHAPE_LINEAR_WIDTH,
                      lambda: f"Bilinear {ctx.node.id!r} expects in1_features={a['in1_features']}, got {x1.shape[-1]}")
    ctx.require_equal(x2.shape[-1], a["in2_features"], SHAPE_LINEAR_WIDTH,
                      lambda: f"Bilinear {ctx.node.id!r} expects in2_features={a['in2_features']}, got {x2.shape[-1]}")
    # measured: torch's bilinear wants the same rank and the same batch dims, without broadcasting
    words = lambda: f"Bilinear {ctx.node.id!r}: its inputs {D.fmt_shape(x1.shape)} and {D.fmt_shape(x2.shape)} " \
                    "must have the same dims before the last (torch's bilinear does not broadcast them)"  # noqa: E731
    if len(x1.shape) != len(x2.shape):
        return ctx.fail(SHAPE_BROADCAST, words())
    for u, v in zip(x1.shape[:-1], x2.shape[:-1]):
        if not ctx.require_equal(u, v, SHAPE_BROADCAST, words):
            break
    return [TensorType(x1.shape[:-1] + (a["out_features"],), x1.dtype)]


def _bilinear_shapes(a):
    o = a["out_features"]
    return [("weight", (o, a["in1_features"], a["in2_features"]))] + ([("bias", (o,))] if a["bias"] else [])


def _table_shapes(a):
    return [("weight", (a["num_embeddings"], a["embedding_dim"]))]


ID_DTYPES = ("int64", "int32", "long", "int")


def _no_rows(ctx: InferCtx, x, n, label: str) -> None:
    """A table of 0 rows has no id to look up: torch fails on any id (measured), so on any input
    with elements (empty tensors are a known limit: the verifier does not judge them)."""
    if n == 0 and x.shape is not None and all(D.is_sym(d) or (D.is_const(d) and d > 0) for d in x.shape):
        ctx.require(False, SHAPE_INDEX_RANGE, f"{label} has 0 rows (num_embeddings=0): every id is out of range")


def _embedding_infer(ctx: InferCtx):
    x, a = ctx.x, ctx.args
    ctx.require(x.is_float or x.dtype in ID_DTYPES, DTYPE_INDEX_DTYPE,
                lambda: f"Embedding {ctx.node.id!r} receives {x.dtype} ids; torch looks up int64 (or int32) ids only")
    pad, n = a["padding_idx"], a["num_embeddings"]
    ctx.require(pad is None or -n <= pad < n, CONNECTIVITY_BAD_ARG,
                lambda: f"Embedding {ctx.node.id!r}: padding_idx={pad} must be within num_embeddings={n}")
    ctx.require(not x.is_float, DTYPE_FLOAT_INTO_EMBEDDING,
                lambda: f"Embedding {ctx.node.id!r} receives {x.dtype} values; it looks up integer ids — "
                "feed token ids (int64) or use a Linear for dense features")
    _no_rows(ctx, x, n, f"Embedding {ctx.node.id!r}")
    rows = ctx.value_ranges.get(0)
    if rows is not None and not (ctx.producers and ctx.producers[0] is None) and not ctx.is_context_table(rows, n):
        # ids from an Arange (positions), or a design input's ids through views: up to the range - 1
        # (ids read straight from an input are dtype.index-range's)
        if ctx.require_equal(rows, n, SHAPE_INDEX_RANGE,
                             lambda: f"Embedding {ctx.node.id!r} has {n} rows but reads positions up to {rows} - 1; "
                                     f"make the table at least {rows} rows", kind="le"):
            ctx.warn_reach(0, n)
    if x.shape is None:
        return [TensorType(None)]
    return [TensorType(x.shape + (a["embedding_dim"],), "float32")]


def _bag_infer(ctx: InferCtx):
    x, a = ctx.x, ctx.args
    label = f"EmbeddingBag {ctx.node.id!r}"
    ctx.require(not x.is_float, DTYPE_FLOAT_INTO_EMBEDDING,
                lambda: f"{label} receives {x.dtype} values; it looks up integer ids — feed token ids (int64)")
    ctx.require(x.is_float or x.dtype in ID_DTYPES, DTYPE_INDEX_DTYPE,
                lambda: f"{label} receives {x.dtype} ids; torch looks up int64 (or int32) ids only")
    pad = a["padding_idx"]
    n = a["num_embeddings"]
    ctx.require(pad is None or -n <= pad < n, CONNECTIVITY_BAD_ARG,
                lambda: f"{label}: padding_idx={pad} must be within num_embeddings={n}")
    _no_rows(ctx, x, n, label)
    rows = ctx.value_ranges.get(0)
    if rows is not None and not (ctx.producers and ctx.producers[0] is None):
        ctx.require_equal(rows, n, SHAPE_INDEX_RANGE,
                          lambda: f"{label} has {n} rows but reads ids up to {rows} - 1", kind="le")
    offsets = ctx.inputs[1] if len(ctx.inputs) > 1 else None
    weights = ctx.inputs[2] if len(ctx.inputs) > 2 else None
    if offsets is not None:
        ctx.require(offsets.is_int and offsets.dtype != "bool", DTYPE_INDEX_DTYPE,
                    lambda: f"{label}: offsets are {offsets.dtype}; torch needs integer offsets")
    if weights is not None:
        ctx.require(a["mode"] == "sum", CONNECTIVITY_BAD_ARG,
                    lambda: f"{label}: per_sample_weights work only with mode='sum', not {a['mode']!r}")
        ctx.require(weights.is_float, DTYPE_INT_INTO_FLOAT,
                    lambda: f"{label}: per_sample_weights are {weights.dtype}; torch needs floats")
    if x.shape is None:
        return [TensorType(None, "float32")]
    if not ctx.need_rank(x, (1, 2)):
        return [TensorType(None, "float32")]
    if weights is not None and weights.shape is not None and weights.shape != x.shape:
        for u, v in zip(weights.shape, x.shape):
            ctx.require_equal(u, v, SHAPE_BROADCAST,
                              lambda: f"{label}: per_sample_weights {D.fmt_shape(weights.shape)} must have the ids' "
                                      f"shape {D.fmt_shape(x.shape)}")
        if len(weights.shape) != len(x.shape):
            ctx.require(False, SHAPE_BROADCAST, f"{label}: per_sample_weights {D.fmt_shape(weights.shape)} must "
                                                  f"have the ids' shape {D.fmt_shape(x.shape)}")
    if len(x.shape) == 2:
        ctx.require(offsets is None, SHAPE_RANK,
                    lambda: f"{label}: 2-D ids are bags already; torch refuses offsets with them")
        return [TensorType((x.shape[0], a["embedding_dim"]), "float32")]
    if offsets is None:
        return ctx.fail(SHAPE_RANK, f"{label}: 1-D ids need an offsets operand (where each bag starts)")
    if offsets.shape is None:
        return [TensorType((None, a["embedding_dim"]), "float32")]
    if not ctx.need_rank(offsets, (1,), "offsets"):
        return [UNKNOWN]
    bags = D.sub(offsets.shape[0], 1) if a["include_last_offset"] else offsets.shape[0]
    return [TensorType((bags, a["embedding_dim"]), "float32")]


OPS = [
    OpSpec(
        "Linear", "linear",
        (Arg("in_features", kind=NAT), Arg("out_features", kind=NAT), Arg("bias", True, BOOL)),
        _linear_infer, tb.module("Linear"),
        param_shapes=_linear_shapes, flops=_linear_flops,
        rules=(SHAPE_LINEAR_WIDTH, SHAPE_FLATTEN_LINEAR_WIDTH, DTYPE_INT_INTO_FLOAT, SHAPE_RANK),
        traits=("factory-kwargs", "parametrizable", "reads-width", "weighted"),
        weight_dims=("out_features", "in_features")),
    OpSpec(
        "Bilinear", "linear",
        (Arg("in1_features", kind=POS), Arg("in2_features", kind=NAT), Arg("out_features", kind=NAT),
         Arg("bias", True, BOOL)),
        _bilinear_infer, tb.module("Bilinear"), arity=(2, 2),
        param_shapes=_bilinear_shapes,
        rules=(SHAPE_LINEAR_WIDTH, SHAPE_BROADCAST, DTYPE_MIXED),
        doc="FLOPs 0: torch runs Bilinear through _trilinear, which FlopCounterMode does not count.",
        traits=("factory-kwargs", "parametrizable", "weighted")),
    OpSpec(
        "Embedding", "linear",
        (Arg("num_embeddings", kind=NAT), Arg("embedding_dim", kind=NAT), Arg("padding_idx", None, Optional(Int())),
         Arg("max_norm", None, Optional(Float())), Arg("norm_type", 2.0, NUM), Arg("scale_grad_by_freq", False, BOOL),
         Arg("sparse", False, BOOL)),
        _embedding_infer, tb.module("Embedding"),
        param_shapes=_table_shapes,
        rules=(DTYPE_FLOAT_INTO_EMBEDDING, CONNECTIVITY_BAD_ARG, SHAPE_INDEX_RANGE, DTYPE_INDEX_DTYPE),
        accepts="int", positions=0, weight_dims=("num_embeddings", "embedding_dim"),
        traits=("factory-kwargs", "lookup", "parametrizable", "table")),
    OpSpec(
        "EmbeddingBag", "linear",
        (Arg("num_embeddings", kind=NAT), Arg("embedding_dim", kind=NAT), Arg("max_norm", None, Optional(Float())),
         Arg("norm_type", 2.0, NUM), Arg("scale_grad_by_freq", False, BOOL),
         Arg("mode", "mean", Enum("sum", "mean", "max")), Arg("sparse", False, BOOL),
         Arg("_weight", None, Optional(Enum())), Arg("include_last_offset", False, BOOL),
         Arg("padding_idx", None, Optional(Int()))),
        _bag_infer, tb.module("EmbeddingBag"), arity=(1, 3),
        param_shapes=_table_shapes,
        rules=(DTYPE_FLOAT_INTO_EMBEDDING, DTYPE_INDEX_DTYPE, DTYPE_INT_INTO_FLOAT, CONNECTIVITY_BAD_ARG,
               SHAPE_RANK, SHAPE_BROADCAST, SHAPE_INDEX_RANGE),
        accepts="int", positions=0, traits=("factory-kwargs", "lookup",)),
]

"""Attention: MultiheadAttention and the Transformer encoder / decoder layers."""

from __future__ import annotations

from .. import dims as D
from . import torch_build as tb
from .base import BOOL, NAT, NUM, POS, UNKNOWN, Arg, Enum, Float, InferCtx, OpSpec, Optional, TensorType

ATTN_RULES = ("shape.heads-divisibility", "shape.attention-width", "shape.rank", "dtype.int-into-float")


def _seq_dims(shape, batch_first):
    """(batch, length) of a (L, N, E) or (N, L, E) tensor; unbatched (L, E) has batch 1."""
    if len(shape) == 2:
        return 1, shape[0]
    return (shape[0], shape[1]) if batch_first else (shape[1], shape[0])


def _mha_check(ctx: InferCtx, e: int, h: int, label: str):
    ctx.require(h > 0 and e % h == 0, "shape.heads-divisibility",
                f"{label} {ctx.node.id!r}: embed_dim={e} is not divisible by num_heads={h}; "
                f"use a head count that divides {e} (e.g. {_divisor_near(e, h)})")


def _divisor_near(e, h):
    best = 1
    for c in range(1, e + 1):
        if e % c == 0 and abs(c - h) < abs(best - h):
            best = c
    return best


def _mha_infer(ctx: InferCtx):
    a = ctx.args
    e, h = a["embed_dim"], a["num_heads"]
    _mha_check(ctx, e, h, "MultiheadAttention")
    q = ctx.inputs[0]
    k = ctx.inputs[1] if len(ctx.inputs) > 1 else q
    v = ctx.inputs[2] if len(ctx.inputs) > 2 else k
    for t in (q, k, v):
        ctx.require(not t.is_int, "dtype.int-into-float",
                    f"MultiheadAttention {ctx.node.id!r} receives integer {t.dtype} values; embed tokens first")
    if q.shape is None or k.shape is None or v.shape is None:
        return [TensorType(None), TensorType(None)]
    ok = all(ctx.need_rank(t, (2, 3), "query/key/value") for t in (q, k, v))
    if not ok:
        return [UNKNOWN, UNKNOWN]
    kd = a["kdim"] if a["kdim"] is not None else e
    vd = a["vdim"] if a["vdim"] is not None else e
    for t, want, name in ((q, e, "query"), (k, kd, "key"), (v, vd, "value")):
        ctx.require(not D.differ(t.shape[-1], want), "shape.attention-width",
                    f"MultiheadAttention {ctx.node.id!r}: {name} width {t.shape[-1]} != "
                    f"{'embed_dim' if want == e else ('kdim' if name == 'key' else 'vdim')}={want}; "
                    f"project the {name} to {want} first")
    bf = a["batch_first"]
    n, lq = _seq_dims(q.shape, bf)
    _, ls = _seq_dims(k.shape, bf)
    if len(q.shape) == 2:
        w = (lq, ls)
    else:
        w = (n, lq, ls)
    return [TensorType(q.shape[:-1] + (e,), q.dtype), TensorType(w, q.dtype)]


def _mha_params(a):
    e = a["embed_dim"]
    kd = a["kdim"] if a["kdim"] is not None else e
    vd = a["vdim"] if a["vdim"] is not None else e
    p = e * e + e * kd + e * vd
    if a["bias"]:
        p += 3 * e + e
    p += e * e
    if a["add_bias_kv"]:
        p += 2 * e
    return p


def _attn_flops(n, lq, ls, e, kd, vd):
    # projections, two batched matmuls over the heads, output projection (2 FLOPs a multiply-add)
    proj = D.mul(D.mul(n, 2), D.add(D.mul(lq, e * e), D.add(D.mul(ls, e * kd), D.mul(ls, e * vd))))
    scores = D.mul(D.mul(D.mul(n, lq), ls), 4 * e)
    out = D.mul(D.mul(n, lq), 2 * e * e)
    return D.add(D.add(proj, scores), out)


def _mha_flops(ctx, outs):
    a = ctx.args
    q = ctx.inputs[0].shape
    k = (ctx.inputs[1] if len(ctx.inputs) > 1 else ctx.inputs[0]).shape
    if q is None or k is None:
        return None
    e = a["embed_dim"]
    kd = a["kdim"] if a["kdim"] is not None else e
    vd = a["vdim"] if a["vdim"] is not None else e
    n, lq = _seq_dims(q, a["batch_first"])
    _, ls = _seq_dims(k, a["batch_first"])
    return _attn_flops(n, lq, ls, e, kd, vd)


PROB = Float(0, 1)
_LAYER_ARGS = (Arg("d_model", kind=NAT), Arg("nhead", kind=POS), Arg("dim_feedforward", 2048, NAT),
               Arg("dropout", 0.1, PROB), Arg("activation", "relu", Enum("relu", "gelu")),
               Arg("layer_norm_eps", 1e-5, NUM), Arg("batch_first", False, BOOL), Arg("norm_first", False, BOOL),
               Arg("bias", True, BOOL))


def _layer_infer(n_inputs: int, label: str):
    def infer(ctx: InferCtx):
        a = ctx.args
        _mha_check(ctx, a["d_model"], a["nhead"], label)
        ctx.require(a["activation"] in ("relu", "gelu"), "connectivity.bad-arg",
                    f"{label} {ctx.node.id!r}: activation must be 'relu' or 'gelu' in a design file, "
                    f"got {a['activation']!r}")
        for i, t in enumerate(ctx.inputs[:n_inputs]):
            ctx.require(not t.is_int, "dtype.int-into-float",
                        f"{label} {ctx.node.id!r} receives integer {t.dtype} values; embed tokens first")
            if t.shape is None:
                continue
            if not ctx.need_rank(t, (2, 3)):
                return [UNKNOWN]
            ctx.require(not D.differ(t.shape[-1], a["d_model"]), "shape.attention-width",
                        f"{label} {ctx.node.id!r}: {'memory' if i else 'input'} width {t.shape[-1]} != "
                        f"d_model={a['d_model']}; project it to {a['d_model']} first")
        return [ctx.x]

    return infer


def _enc_params(a):
    d, f = a["d_model"], a["dim_feedforward"]
    b = 1 if a["bias"] else 0
    attn = 4 * d * d + 4 * d * b
    ff = d * f + f * b + f * d + d * b
    norms = 2 * (2 * d if b else d)
    return attn + ff + norms


def _dec_params(a):
    d = a["d_model"]
    b = 1 if a["bias"] else 0
    return _enc_params(a) + 4 * d * d + 4 * d * b + (2 * d if b else d)


def _enc_flops(ctx, outs):
    a = ctx.args
    x = ctx.x.shape
    if x is None:
        return None
    d, f = a["d_model"], a["dim_feedforward"]
    n, length = _seq_dims(x, a["batch_first"])
    return D.add(_attn_flops(n, length, length, d, d, d), D.mul(D.mul(n, length), 4 * d * f))


def _dec_flops(ctx, outs):
    a = ctx.args
    x, m = ctx.inputs[0].shape, ctx.inputs[1].shape
    if x is None or m is None:
        return None
    d = a["d_model"]
    n, length = _seq_dims(x, a["batch_first"])
    _, s = _seq_dims(m, a["batch_first"])
    return D.add(_enc_flops(ctx, outs), _attn_flops(n, length, s, d, d, d))


OPS = [
    OpSpec("MultiheadAttention", "attention",
           (Arg("embed_dim", kind=NAT), Arg("num_heads", kind=POS), Arg("dropout", 0.0, PROB), Arg("bias", True, BOOL),
            Arg("add_bias_kv", False, BOOL), Arg("add_zero_attn", False, BOOL), Arg("kdim", None, Optional(NAT)),
            Arg("vdim", None, Optional(NAT)), Arg("batch_first", False, BOOL)),
           _mha_infer, tb.custom("MultiheadAttention"), arity=(1, 3), params=_mha_params, flops=_mha_flops,
           rules=ATTN_RULES),
    OpSpec("TransformerEncoderLayer", "attention", _LAYER_ARGS, _layer_infer(1, "TransformerEncoderLayer"),
           tb.custom("TransformerEncoderLayer"), params=_enc_params, flops=_enc_flops,
           rules=ATTN_RULES + ("connectivity.bad-arg",)),
    OpSpec("TransformerDecoderLayer", "attention", _LAYER_ARGS, _layer_infer(2, "TransformerDecoderLayer"),
           tb.custom("TransformerDecoderLayer"), arity=(2, 2), params=_dec_params, flops=_dec_flops,
           rules=ATTN_RULES + ("connectivity.bad-arg",)),
]

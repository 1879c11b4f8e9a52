"""Attention: MultiheadAttention, the Transformer encoder / decoder layers, TransformerEncoder,
TransformerDecoder and Transformer.

Masks are operands after the data (MultiheadAttention: query, key, value, attn_mask,
key_padding_mask; encoder layer / TransformerEncoder: src, src_mask, src_key_padding_mask; decoder
layer / TransformerDecoder: tgt, memory, tgt_mask, memory_mask; Transformer: src, tgt, src_mask,
tgt_mask, memory_mask). The forward flags `is_causal` (MultiheadAttention, the encoders) and
`tgt_is_causal` (the decoders) are arguments; torch needs a mask operand with them.
"""

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
    ListOf,
    Nested,
    OneOf,
    OpSpec,
    Optional,
    TensorType,
    promote,
    require_one_float_dtype,
)
from .rules import (
    CONNECTIVITY_BAD_ARG,
    DTYPE_INT_INTO_FLOAT,
    DTYPE_MASK,
    DTYPE_MIXED,
    SHAPE_ATTENTION_MASK,
    SHAPE_ATTENTION_WIDTH,
    SHAPE_BROADCAST,
    SHAPE_HEADS_DIVISIBILITY,
    SHAPE_NORM_FEATURES,
    SHAPE_RANK,
)

ATTN_RULES = (SHAPE_HEADS_DIVISIBILITY, SHAPE_ATTENTION_WIDTH, SHAPE_RANK, DTYPE_INT_INTO_FLOAT)


def _seq_dims(shape, batch_first):
    """(batch, length) of a (L, N, E) or (N, L, E) tensor; unbatched (L, E) has batch 1."""
    if len(shape) == 2:
        return 1, shape[0]
    return (shape[0], shape[1]) if batch_first else (shape[1], shape[0])


def _mha_check(ctx: InferCtx, e: int, h: int, label: str):
    # the words only when the requirement fails: finding a divisor costs more than the check
    ctx.require(h > 0 and e % h == 0, SHAPE_HEADS_DIVISIBILITY,
                lambda: f"{label} {ctx.node.id!r}: embed_dim={e} is not divisible by num_heads={h}; "
                        f"use a head count that divides {e}" + _divisor_hint(e, h))


DIVISOR_SEARCH = 1 << 16  # candidates tried on each side of the asked head count


def _divisor_hint(e, h) -> str:
    """' (e.g. D)' with D the divisor of e nearest to h, searched in a window around h: the search
    must not grow with e (embed_dim=10**10 made it walk ten billion candidates)."""
    if not isinstance(e, int) or not isinstance(h, int) or e <= 0:
        return ""
    best = 1
    for c in range(max(1, h - DIVISOR_SEARCH), min(e, h + DIVISOR_SEARCH) + 1):
        if e % c == 0 and abs(c - h) < abs(best - h):
            best = c
    return f" (e.g. {best})"


def _check_mask(ctx: InferCtx, m: TensorType, lq, ls, n, heads, what: str, padding: bool = False) -> None:
    """An attention mask: bool or float; (L, S) or (N*heads, L, S); a key padding mask (N, S) or (S)."""
    label = f"{ctx.node.op} {ctx.node.id!r}"
    ctx.require(m.dtype == "bool" or m.is_float, DTYPE_MASK,
                lambda: f"{label}: {what} is {m.dtype}; torch takes bool or float masks only")
    if m.shape is None:
        return
    want: tuple
    if padding:
        want = (ls,) if n is None else (n, ls)
    elif len(m.shape) == 3:
        want = (heads if n is None else D.mul(n, heads), lq, ls)  # measured: unbatched, (heads, L, S)
    else:
        want = (lq, ls)
    words = lambda: f"{label}: {what} {D.fmt_shape(m.shape)} should be {D.fmt_shape(want)}"  # noqa: E731
    if len(m.shape) != len(want):
        ctx.require(False, SHAPE_ATTENTION_MASK, words)
        return
    for u, v in zip(m.shape, want):
        if v is not None and not ctx.require_equal(u, v, SHAPE_ATTENTION_MASK, words):
            return


def _scores_mask(ctx: InferCtx, data: TensorType, mask: TensorType, padding: TensorType | None, names: tuple) -> bool:
    """A mask that reaches the scores on torch's Python path (F.multi_head_attention_forward, torch 2.13),
    as measured in eval (no autograd) and training: `_canonical_mask` turns a bool mask into the data's
    dtype and keeps a float one's, a key padding mask is added to the attention mask (so their dtypes
    promote: float16 with float32 gives float32), and the attention refuses a float mask in another dtype
    than the data's ('Expected attn_mask dtype to be bool or float or to match query dtype'). `names`: the
    mask's name, and the padding mask's. False when it blocked."""
    if data.shape is None or not data.is_float or mask.shape is None or (padding is not None and padding.shape is None):
        return True
    given = [m for m in (mask, padding) if m is not None]
    if not all(m.dtype == "bool" or m.is_float for m in given):
        return True  # an integer mask: the mask rules say so
    merged = data.dtype if mask.dtype == "bool" else mask.dtype
    if padding is not None:
        merged = promote(merged, data.dtype if padding.dtype == "bool" else padding.dtype)
    if merged == data.dtype:
        return True
    label = f"{ctx.node.op} {ctx.node.id!r}"
    floats = [(name, m.dtype) for name, m in zip(names, given) if m.dtype != "bool"]
    if len(floats) == 1:
        words, it = f"{floats[0][0]} is {floats[0][1]}", "it"
    else:
        words = " and ".join(f"{name} ({dt})" for name, dt in floats) + f" add up to a {merged} mask"
        it = "them"
    return ctx.require(False, DTYPE_MASK, lambda: (
        f"{label}: {words} and the data {data.dtype}; torch adds a float mask to the attention scores only in the "
        f"data's dtype: cast {it} to {data.dtype}, or make {it} bool"))


def _eval_fast_path(ctx: InferCtx, x: TensorType, heads: int, batch_first: bool, bias: bool) -> bool | None:
    """torch's eval fast path (MultiheadAttention and the encoder layer, torch 2.13): an eval-mode
    design runs without autograd, and a batched batch-first input with an even head count and biases
    goes to the fused kernel, which reads masks otherwise than the Python path (`_fast_mask`)."""
    if not ((ctx.design_train or {}).get("mode") == "eval" and batch_first and bias and isinstance(heads, int)
            and heads % 2 == 0):
        return False
    return None if x.shape is None else len(x.shape) == 3  # None: not known


def _fast_mask(ctx: InferCtx, m: TensorType, n, length, heads, what: str, padding: bool, beside: bool) -> None:
    """A mask on the fast path, as measured: `merge_masks` views an attention mask as (N, -1, L, L)
    when it is 3-D and as (1, 1, L, L) otherwise, and the kernel wants (N, heads, L, L), so only its
    element count matters; a key padding mask alone must be (N, L), beside an attention mask it is
    viewed as (N, 1, 1, L)."""
    label = f"{ctx.node.op} {ctx.node.id!r}"
    ctx.require(m.dtype == "bool" or m.is_float, DTYPE_MASK,
                lambda: f"{label}: {what} is {m.dtype}; torch takes bool or float masks only")
    if m.shape is None or any(s is None for s in m.shape) or n is None or length is None:
        return
    if padding and not beside:
        words = lambda: f"{label}: {what} {D.fmt_shape(m.shape)} should be {D.fmt_shape((n, length))}"  # noqa: E731
        if len(m.shape) != 2:
            ctx.require(False, SHAPE_ATTENTION_MASK, words)
            return
        for u, v in zip(m.shape, (n, length)):
            if not ctx.require_equal(u, v, SHAPE_ATTENTION_MASK, words):
                return
        return
    if padding:
        want, shape = D.mul(n, length), f"(N, 1, 1, L) = (N={D.fmt(n)}, 1, 1, L={D.fmt(length)})"
    elif len(m.shape) == 3:
        want = D.prod([n, heads, length, length])
        shape = f"(N, heads, L, L) = ({D.fmt(n)}, {heads}, {D.fmt(length)}, {D.fmt(length)})"
    else:
        want, shape = D.mul(length, length), f"(L, L) = ({D.fmt(length)}, {D.fmt(length)})"
    ctx.require_equal(D.prod(list(m.shape)), want, SHAPE_ATTENTION_MASK,
                      lambda: f"{label}: {what} {D.fmt_shape(m.shape)} cannot be viewed as {shape} on torch's eval "
                              "fast path")


def _mask_rank(ctx: InferCtx, m: TensorType, what: str, label: str, unbatched: tuple | None = None) -> None:
    """A mask torch drops for the causal path is still checked first for its rank (measured: 'expected
    attn_mask to be None, 2-D or 3-D', gen-361954), and with an unbatched query a 3-D one for its shape,
    (heads, L, S)."""
    if m.shape is None:
        return
    if ctx.require(len(m.shape) in (2, 3), SHAPE_ATTENTION_MASK,
                   lambda: f"{label} {ctx.node.id!r}: {what} is {len(m.shape)}-D {D.fmt_shape(m.shape)}; torch "
                           "takes a 2-D or 3-D mask") and unbatched is not None and len(m.shape) == 3:
        for u, v in zip(m.shape, unbatched):
            if not ctx.require_equal(u, v, SHAPE_ATTENTION_MASK,
                                     lambda: f"{label} {ctx.node.id!r}: {what} {D.fmt_shape(m.shape)} should be "
                                             f"(heads, L, S) = {D.fmt_shape(unbatched)} for an unbatched query"):
                return


def _mha_infer(ctx: InferCtx):
    a = ctx.args
    require_one_float_dtype(ctx, (0, 1, 2), DTYPE_MIXED)  # query, key, value
    e, h = a["embed_dim"], a["num_heads"]
    _mha_check(ctx, e, h, "MultiheadAttention")
    # measured: the layer keeps dropout as a number and applies it to the weights only in training and only
    # when above 0 (a negative one is no dropout); F.dropout refuses one above 1 there
    if (ctx.design_train or {}).get("mode") != "eval" and not ctx.require(
            a["dropout"] <= 1, CONNECTIVITY_BAD_ARG,
            lambda: f"MultiheadAttention {ctx.node.id!r}: dropout={a['dropout']} in training; F.dropout takes "
                    "a probability of at most 1"):
        return [UNKNOWN, UNKNOWN]
    q = ctx.inputs[0]
    k = ctx.inputs[1] if len(ctx.inputs) > 1 else q
    v = ctx.inputs[2] if len(ctx.inputs) > 2 else k
    attn_mask = ctx.inputs[3] if len(ctx.inputs) > 3 else None
    # the eval-mode fast path (batch-first self-attention of the weights' dtype, bool masks) takes is_causal
    # without a mask, and reads masks by their element count
    fast = _eval_fast_path(ctx, q, h, a["batch_first"], a["bias"]) is not False and \
        len(set(ctx.node.inputs[:3])) == 1 and not a["add_bias_kv"] and not a["add_zero_attn"] and \
        a["kdim"] in (None, e) and a["vdim"] in (None, e) and q.dtype == "float32" and \
        all(m.dtype == "bool" for m in ctx.inputs[3:5])
    ctx.require(not a["is_causal"] or attn_mask is not None or fast is not False, CONNECTIVITY_BAD_ARG,
                lambda: f"MultiheadAttention {ctx.node.id!r}: is_causal needs an attn_mask operand (torch: 'Need "
                        "attn_mask if specifying the is_causal hint')")
    for t in (q, k, v):
        ctx.require(not t.is_int, DTYPE_INT_INTO_FLOAT,
                    f"MultiheadAttention {ctx.node.id!r} receives integer {t.dtype} values; embed tokens first")
    if q.shape is None or k.shape is None or v.shape is None:
        return [TensorType(None), TensorType(None)]
    ok = all(ctx.need_rank(t, (2, 3), "query/key/value") for t in (q, k, v))
    if not ok:
        return [UNKNOWN, UNKNOWN]
    # measured: torch takes a batched query with batched key and value only (and unbatched with unbatched)
    if not ctx.require(len(q.shape) == len(k.shape) == len(v.shape), SHAPE_RANK,
                       lambda: f"MultiheadAttention {ctx.node.id!r}: query, key and value are "
                               f"{len(q.shape)}-D, {len(k.shape)}-D and {len(v.shape)}-D; torch wants them all "
                               "batched (3-D) or all unbatched (2-D)"):
        return [UNKNOWN, UNKNOWN]
    kd = a["kdim"] if a["kdim"] is not None else e
    vd = a["vdim"] if a["vdim"] is not None else e
    for t, want, name in ((q, e, "query"), (k, kd, "key"), (v, vd, "value")):
        assert t.shape is not None  # their ranks were asked above
        ctx.require_equal(t.shape[-1], want, SHAPE_ATTENTION_WIDTH,
                    f"MultiheadAttention {ctx.node.id!r}: {name} width {t.shape[-1]} != "
                    f"{'embed_dim' if want == e else ('kdim' if name == 'key' else 'vdim')}={want}; "
                    f"project the {name} to {want} first")
    bf = a["batch_first"]
    n, lq = _seq_dims(q.shape, bf)
    nk, ls = _seq_dims(k.shape, bf)
    nv, lv = _seq_dims(v.shape, bf)
    # measured: key and value must have one length and one batch ('key shape ... does not match value
    # shape'), and the query the keys' batch (the per-head view fails otherwise); nothing broadcasts
    layout = "(N, L, E)" if bf else "(L, N, E)"
    for u, w, what in ((ls, lv, "key length and value length"), (nk, nv, "key batch and value batch"),
                       (n, nk, "query batch and key batch")):
        if not ctx.require_equal(u, w, SHAPE_BROADCAST,
                                 lambda u=u, w=w, what=what: f"MultiheadAttention {ctx.node.id!r}: {what} differ "
                                 f"({D.fmt(u)} vs {D.fmt(w)}; batch_first={bf}, so the inputs are {layout})"):
            return [UNKNOWN, UNKNOWN]
    batched = len(q.shape) == 3
    # measured: is_causal with no key padding mask and no weights drops the mask for SDPA's causal path
    # (F.multi_head_attention_forward), reading its dtype only
    dropped = a["is_causal"] and not a["need_weights"] and len(ctx.inputs) <= 4
    for i, m in enumerate(ctx.inputs[3:5]):
        # measured in eval, training and under no_grad: a float mask in another dtype than the query's fails,
        # alone or added to the key padding mask (unless is_causal dropped it); the fast path takes bool ones only
        if i == 0 and not dropped and not _scores_mask(ctx, q, m, ctx.inputs[4] if len(ctx.inputs) > 4 else None,
                                                        ("attn_mask", "key_padding_mask")):
            continue
        if dropped and i == 0 and fast is not True:  # the eval fast path reads the mask by its size first
            ctx.require(m.dtype == "bool" or m.is_float, DTYPE_MASK,
                        lambda m=m: f"MultiheadAttention {ctx.node.id!r}: attn_mask is {m.dtype}; torch takes bool "
                                    "or float masks only")
            _mask_rank(ctx, m, "attn_mask", "MultiheadAttention", None if batched else (h, lq, ls))
            continue
        if fast is True:
            _fast_mask(ctx, m, n, lq, h, ("attn_mask", "key_padding_mask")[i], padding=i == 1,
                       beside=len(ctx.inputs) > 4)
        else:
            _check_mask(ctx, m, lq, ls, n if batched else None, h, ("attn_mask", "key_padding_mask")[i],
                        padding=i == 1)
    # measured: add_bias_kv appends a key (and value) and add_zero_attn a zero one, so the weights see
    # one more key each (gen-175938)
    extra = int(bool(a["add_bias_kv"])) + int(bool(a["add_zero_attn"]))
    keys = D.add(ls, extra) if extra else ls
    if len(q.shape) == 2:
        w = (lq, keys)
    else:
        w = (n, lq, keys)
    if not a["need_weights"]:
        return [TensorType(q.shape[:-1] + (e,), q.dtype)]  # measured: the weights are None, nothing to read
    if not a["average_attn_weights"]:
        w = w[:-2] + (h,) + w[-2:]  # measured: (N, heads, L, S), unbatched (heads, L, S)
    return [TensorType(q.shape[:-1] + (e,), q.dtype), TensorType(w, q.dtype)]


def _mha_shapes(a, prefix=""):
    e = a["embed_dim"]
    kd = a.get("kdim") if a.get("kdim") is not None else e
    vd = a.get("vdim") if a.get("vdim") is not None else e
    e3 = D.mul(3, e)
    bias = a.get("bias", True)
    if kd == e and vd == e:
        out = [(prefix + "in_proj_weight", (e3, e))]
    else:
        out = [(prefix + "q_proj_weight", (e, e)), (prefix + "k_proj_weight", (e, kd)),
               (prefix + "v_proj_weight", (e, vd))]
    if bias:
        out.append((prefix + "in_proj_bias", (e3,)))
    if a.get("add_bias_kv", False):
        out += [(prefix + "bias_k", (1, 1, e)), (prefix + "bias_v", (1, 1, e))]
    out.append((prefix + "out_proj.weight", (e, e)))
    if bias:
        out.append((prefix + "out_proj.bias", (e,)))
    return out


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
_LAYER_ARGS = _ENC_LAYER_ARGS = (Arg("d_model", kind=POS), Arg("nhead", kind=POS), Arg("dim_feedforward", 2048, NAT),
               Arg("dropout", 0.1, PROB), Arg("activation", "relu", Enum("relu", "gelu")),
               Arg("layer_norm_eps", 1e-5, NUM), Arg("batch_first", False, BOOL), Arg("norm_first", False, BOOL),
               Arg("bias", True, BOOL))


def _layer_infer(n_inputs: int, label: str):
    def infer(ctx: InferCtx):
        a = ctx.args
        if n_inputs == 2:
            require_one_float_dtype(ctx, (0, 1), DTYPE_MIXED)  # tgt, memory
        if "encoder_layer" in a or "decoder_layer" in a:
            a = dict(a.get("encoder_layer") or a.get("decoder_layer"))
            a = {**dict(_LAYER_DEFAULTS), **a}
        _mha_check(ctx, a["d_model"], a["nhead"], label)
        causal = ctx.args.get("is_causal", ctx.args.get("tgt_is_causal", False))
        # on the eval fast path (the encoder layer's own; the decoder's self-attention through
        # MultiheadAttention's, bool masks only) is_causal needs no mask and a mask is read by its size
        fast = _eval_fast_path(ctx, ctx.x, a["nhead"], a["batch_first"], a["bias"])
        if n_inputs == 2 and len(ctx.inputs) > 2 and ctx.inputs[2].dtype != "bool":
            fast = False
        ctx.require(not causal or len(ctx.inputs) > n_inputs or fast is not False, CONNECTIVITY_BAD_ARG,
                    lambda: f"{label} {ctx.node.id!r}: is_causal needs a mask operand (torch: 'Need attn_mask if "
                            "specifying the is_causal hint')")
        ctx.require(a["activation"] in ("relu", "gelu"), CONNECTIVITY_BAD_ARG,
                    f"{label} {ctx.node.id!r}: activation must be 'relu' or 'gelu' in a design file, "
                    f"got {a['activation']!r}")
        for i, t in enumerate(ctx.inputs[:n_inputs]):
            ctx.require(not t.is_int, DTYPE_INT_INTO_FLOAT,
                        f"{label} {ctx.node.id!r} receives integer {t.dtype} values; embed tokens first")
            if t.shape is None:
                continue
            if not ctx.need_rank(t, (2, 3)):
                return [UNKNOWN]
            ctx.require_equal(t.shape[-1], a["d_model"], SHAPE_ATTENTION_WIDTH,
                              f"{label} {ctx.node.id!r}: {'memory' if i else 'input'} width {t.shape[-1]} != "
                              f"d_model={a['d_model']}; project it to {a['d_model']} first")
        x = ctx.x
        if n_inputs == 2 and x.shape is not None and ctx.inputs[1].shape is not None:
            # the cross-attention is MultiheadAttention(tgt, memory, memory): measured, both batched or both
            # unbatched (gen-256479), and one batch
            tgt, mem = x.shape, ctx.inputs[1].shape
            if not ctx.require(len(tgt) == len(mem), SHAPE_RANK,
                               lambda: f"{label} {ctx.node.id!r}: tgt {D.fmt_shape(tgt)} and memory "
                                       f"{D.fmt_shape(mem)}; torch wants both batched (3-D) or both unbatched (2-D)"):
                return [UNKNOWN]
            if len(tgt) == 3 and not ctx.require_equal(
                    _seq_dims(tgt, a["batch_first"])[0], _seq_dims(mem, a["batch_first"])[0], SHAPE_BROADCAST,
                    lambda: f"{label} {ctx.node.id!r}: tgt {D.fmt_shape(tgt)} and memory {D.fmt_shape(mem)} have "
                            f"different batches (batch_first={a['batch_first']})"):
                return [UNKNOWN]
        if x.shape is not None and len(x.shape) in (2, 3):
            n, length = _seq_dims(x.shape, a["batch_first"])
            batched = len(x.shape) == 3
            memory = ctx.inputs[1].shape if n_inputs == 2 else x.shape
            s_len = _seq_dims(memory, a["batch_first"])[1] if memory is not None and len(memory) in (2, 3) else None
            masks = ctx.inputs[n_inputs:]
            if n_inputs == 1:
                kinds = (("src_mask", length, False), ("src_key_padding_mask", length, True))
            else:
                kinds = (("tgt_mask", length, False), ("memory_mask", s_len, False))
            for k, (m, (what, ls, padding)) in enumerate(zip(masks, kinds)):
                # off the encoder's fast path an attention mask reaches the scores (with the key padding mask
                # added), unless is_causal dropped it
                if (k == 0 or n_inputs == 2) and not (fast is True and n_inputs == 1) and \
                        not (k == 0 and causal and (n_inputs == 2 or len(masks) == 1)):
                    _scores_mask(ctx, x, m, masks[1] if n_inputs == 1 and len(masks) > 1 else None,
                                 (what, "src_key_padding_mask"))
                if fast is True and (k == 0 or n_inputs == 1):
                    _fast_mask(ctx, m, n, length, a["nhead"], what, padding=padding,
                               beside=len(masks) > 1 and ctx.node.op == "TransformerEncoderLayer")
                    continue
                # is_causal with no key padding mask: torch's attention drops the mask for SDPA's causal
                # path without reading its shape (F.multi_head_attention_forward); only its dtype is checked
                if k == 0 and causal and (n_inputs == 2 or len(masks) == 1):
                    ctx.require(m.dtype == "bool" or m.is_float, DTYPE_MASK,
                                lambda m=m, what=what: f"{label} {ctx.node.id!r}: {what} is {m.dtype}; torch takes "
                                                       "bool or float masks only")
                    _mask_rank(ctx, m, what, label, None if batched else (a["nhead"], length, length))
                    continue
                if ls is not None:
                    _check_mask(ctx, m, length, ls, n if batched else None, a["nhead"], what, padding)
        return [ctx.x]

    return infer


def _layer_shapes(a, prefix="", decoder=False):
    d, f, bias = a["d_model"], a["dim_feedforward"], a["bias"]
    attn = {"embed_dim": d, "bias": bias}
    out = _mha_shapes(attn, prefix + "self_attn.")
    if decoder:
        out += _mha_shapes(attn, prefix + "multihead_attn.")
    for name, shape in (("linear1", (f, d)), ("linear2", (d, f))):
        out.append((f"{prefix}{name}.weight", shape))
        if bias:
            out.append((f"{prefix}{name}.bias", shape[:1]))
    for k in range(1, 4 if decoder else 3):
        out += _ln_shapes({"normalized_shape": d, "elementwise_affine": True, "bias": bias}, f"{prefix}norm{k}.")
    return out


def _ln_shapes(norm, prefix):
    if norm is None or not norm.get("elementwise_affine", True):
        return []
    ns = norm["normalized_shape"]
    ns = tuple(ns) if isinstance(ns, (list, tuple)) else (ns,)
    return [(prefix + "weight", ns)] + ([(prefix + "bias", ns)] if norm.get("bias", True) else [])


def _count(shapes) -> D.Dim:
    total: D.Dim = 0
    for _name, shape in shapes:
        total = D.add(total, D.prod(shape))
    return total


def _enc_params(a):
    return _count(_layer_shapes(a))


def _dec_params(a):
    return _count(_layer_shapes(a, decoder=True))


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


_LAYER_DEFAULTS = tuple((x.name, x.default) for x in _ENC_LAYER_ARGS if not x.required)
_NORM_ARGS = (Arg("normalized_shape", kind=OneOf(NAT, ListOf(NAT))), Arg("eps", 1e-5, NUM),
              Arg("elementwise_affine", True, BOOL), Arg("bias", True, BOOL))
MASK_RULES = (SHAPE_ATTENTION_MASK, DTYPE_MASK, CONNECTIVITY_BAD_ARG)


def _layer_args(a):
    return {**dict(_LAYER_DEFAULTS), **(a.get("encoder_layer") or a.get("decoder_layer") or {})}


def _norm_params(norm):
    return _count(_ln_shapes(norm, ""))


def _stack_shapes(decoder: bool):
    def shapes(a):
        layer, out = _layer_args(a), []
        for i in range(a["num_layers"]):
            out += _layer_shapes(layer, f"layers.{i}.", decoder)
        return out + _ln_shapes(a["norm"], "norm.")

    return shapes


def _stack_flops(per_layer):
    def flops(ctx, outs):
        a = ctx.args
        inner = _layer_args(a)
        saved = ctx.args
        ctx.args = inner
        try:
            f = per_layer(ctx, outs)
        finally:
            ctx.args = saved
        return None if f is None else D.mul(f, a["num_layers"])

    return flops


def _stack_norm_check(ctx: InferCtx) -> None:
    norm = ctx.args.get("norm")
    x = ctx.x
    if norm is None or x.shape is None:
        return
    ns = norm["normalized_shape"]
    ns = ns if isinstance(ns, list) else [ns]
    tail = x.shape[-len(ns):] if len(x.shape) >= len(ns) else None
    if tail is None:
        ctx.require(False, SHAPE_NORM_FEATURES, f"{ctx.node.op} {ctx.node.id!r}: norm over {ns} of fewer dims")
        return
    for t, n in zip(tail, ns):
        if not ctx.require_equal(t, n, SHAPE_NORM_FEATURES,
                                 lambda: f"{ctx.node.op} {ctx.node.id!r}: its norm normalises over {ns}, the "
                                         f"output {D.fmt_shape(x.shape)} ends otherwise"):
            return


def _stack_infer(n_inputs: int, label: str):
    layer = _layer_infer(n_inputs, label)

    def infer(ctx: InferCtx):
        outs = layer(ctx)
        _stack_norm_check(ctx)
        return outs

    return infer


def _transformer_infer(ctx: InferCtx):
    a = ctx.args
    require_one_float_dtype(ctx, (0, 1), DTYPE_MIXED)  # src, tgt
    _mha_check(ctx, a["d_model"], a["nhead"], "Transformer")
    src, tgt = ctx.inputs[0], ctx.inputs[1]
    for t, name in ((src, "src"), (tgt, "tgt")):
        ctx.require(not t.is_int, DTYPE_INT_INTO_FLOAT,
                    f"Transformer {ctx.node.id!r} receives integer {t.dtype} values ({name}); embed tokens first")
    if src.shape is None or tgt.shape is None:
        return [TensorType(None, tgt.dtype)]
    if not (ctx.need_rank(src, (2, 3), "src") and ctx.need_rank(tgt, (2, 3), "tgt")):
        return [UNKNOWN]
    if len(src.shape) != len(tgt.shape):
        return ctx.fail(SHAPE_RANK, f"Transformer {ctx.node.id!r}: src {D.fmt_shape(src.shape)} and tgt "
                                      f"{D.fmt_shape(tgt.shape)} must both be batched or both unbatched")
    for t, name in ((src, "src"), (tgt, "tgt")):
        assert t.shape is not None  # their ranks were asked above
        ctx.require_equal(t.shape[-1], a["d_model"], SHAPE_ATTENTION_WIDTH,
                          lambda t=t, name=name: f"Transformer {ctx.node.id!r}: {name} width {t.shape[-1]} != "
                                                 f"d_model={a['d_model']}")
    bf = a["batch_first"]
    ns, ls = _seq_dims(src.shape, bf)
    nt, lt = _seq_dims(tgt.shape, bf)
    if len(src.shape) == 3:
        ctx.require_equal(ns, nt, SHAPE_BROADCAST,
                          lambda: f"Transformer {ctx.node.id!r}: the batch of src ({ns}) and tgt ({nt}) must be equal")
    batched = len(src.shape) == 3
    # the encoder's eval fast path takes a float src_mask of any dtype; off it, and in the decoder, a float mask
    # reaches the attention scores alone
    fast = _eval_fast_path(ctx, src, a["nhead"], bf, a["bias"]) is True
    for j, m in enumerate(ctx.inputs[2:5]):
        if j or not fast:
            _scores_mask(ctx, tgt if j else src, m, None, (("src_mask", "tgt_mask", "memory_mask")[j], ""))
    for m, (what, lq, lk) in zip(ctx.inputs[2:], (("src_mask", ls, ls), ("tgt_mask", lt, lt),
                                                   ("memory_mask", lt, ls))):
        _check_mask(ctx, m, lq, lk, nt if batched else None, a["nhead"], what)
    return [tgt]


def _transformer_params(a):
    layer = {k: a[k] for k in ("d_model", "nhead", "dim_feedforward", "bias")}
    norm = {"normalized_shape": a["d_model"], "bias": a["bias"]}
    return (a["num_encoder_layers"] * _enc_params(layer) + a["num_decoder_layers"] * _dec_params(layer)
            + 2 * _norm_params(norm))


def _transformer_shapes(a):
    layer = {k: a[k] for k in ("d_model", "dim_feedforward", "bias")}
    norm = {"normalized_shape": a["d_model"], "bias": a["bias"]}
    out = []
    for part, n, decoder in (("encoder", a["num_encoder_layers"], False), ("decoder", a["num_decoder_layers"], True)):
        for i in range(n):
            out += _layer_shapes(layer, f"{part}.layers.{i}.", decoder)
        out += _ln_shapes(norm, f"{part}.norm.")
    return out


def _transformer_flops(ctx, outs):
    a = ctx.args
    src, tgt = ctx.inputs[0].shape, ctx.inputs[1].shape
    if src is None or tgt is None or len(src) not in (2, 3) or len(tgt) not in (2, 3):
        return None
    d, f = a["d_model"], a["dim_feedforward"]
    n, ls = _seq_dims(src, a["batch_first"])
    _, lt = _seq_dims(tgt, a["batch_first"])
    enc = D.add(_attn_flops(n, ls, ls, d, d, d), D.mul(D.mul(n, ls), 4 * d * f))
    dec = D.add(D.add(_attn_flops(n, lt, lt, d, d, d), D.mul(D.mul(n, lt), 4 * d * f)),
                _attn_flops(n, lt, ls, d, d, d))
    return D.add(D.mul(enc, a["num_encoder_layers"]), D.mul(dec, a["num_decoder_layers"]))


_CAUSAL = Arg("is_causal", False, BOOL)
_TGT_CAUSAL = Arg("tgt_is_causal", False, BOOL)
_NULL = Optional(Enum())  # a module argument a design cannot give: null only
OPS = [
    OpSpec("MultiheadAttention", "attention",
           (Arg("embed_dim", kind=POS), Arg("num_heads", kind=POS), Arg("dropout", 0.0, NUM), Arg("bias", True, BOOL),
            Arg("add_bias_kv", False, BOOL), Arg("add_zero_attn", False, BOOL), Arg("kdim", None, Optional(NAT)),
            Arg("vdim", None, Optional(NAT)), Arg("batch_first", False, BOOL), _CAUSAL,
            # forward flags, as is_causal: no weights (result 1 is None), or one map per head
            Arg("need_weights", True, BOOL), Arg("average_attn_weights", True, BOOL)),
           _mha_infer, tb.custom("MultiheadAttention"), arity=(1, 5), param_shapes=_mha_shapes, flops=_mha_flops,
           rules=ATTN_RULES + MASK_RULES + (SHAPE_BROADCAST, DTYPE_MIXED),
           traits=("factory-kwargs", "attention-layer", "multi-result", "nonlinear", "reads-width")),
    OpSpec("TransformerEncoderLayer", "attention", _ENC_LAYER_ARGS + (_CAUSAL,),
           _layer_infer(1, "TransformerEncoderLayer"), tb.custom("TransformerEncoderLayer"), arity=(1, 3),
           param_shapes=_layer_shapes, flops=_enc_flops, rules=ATTN_RULES + MASK_RULES,
           traits=("factory-kwargs", "attention-layer", "nonlinear", "normalises", "reads-width", "residual")),
    OpSpec("TransformerDecoderLayer", "attention", _ENC_LAYER_ARGS + (_TGT_CAUSAL,),
           _layer_infer(2, "TransformerDecoderLayer"), tb.custom("TransformerDecoderLayer"), arity=(2, 4),
           param_shapes=lambda a: _layer_shapes(a, decoder=True), flops=_dec_flops,
           rules=ATTN_RULES + MASK_RULES + (DTYPE_MIXED,),
           traits=("factory-kwargs", "attention-layer", "nonlinear", "normalises", "residual")),
    OpSpec("TransformerEncoder", "attention",
           (Arg("encoder_layer", kind=Nested(_ENC_LAYER_ARGS, "TransformerEncoderLayer")),
            # measured: torch builds a stack of 0 layers, and its forward fails reading layers[0] (gen-316054)
            Arg("num_layers", kind=POS),
            Arg("norm", None, Optional(Nested(_NORM_ARGS, "LayerNorm"))), Arg("enable_nested_tensor", True, BOOL),
            Arg("mask_check", True, BOOL), _CAUSAL),
           _stack_infer(1, "TransformerEncoder"), tb.custom("TransformerEncoder"), arity=(1, 3),
           params=lambda a: a["num_layers"] * _enc_params(_layer_args(a)) + _norm_params(a["norm"]),
           param_shapes=_stack_shapes(False),
           flops=_stack_flops(_enc_flops), rules=ATTN_RULES + MASK_RULES + (SHAPE_NORM_FEATURES,),
           traits=("nonlinear", "normalises", "residual", "stack"), layer_op="TransformerEncoderLayer"),
    OpSpec("TransformerDecoder", "attention",
           (Arg("decoder_layer", kind=Nested(_ENC_LAYER_ARGS, "TransformerDecoderLayer")), Arg("num_layers", kind=POS),
            Arg("norm", None, Optional(Nested(_NORM_ARGS, "LayerNorm"))), _TGT_CAUSAL),
           _stack_infer(2, "TransformerDecoder"), tb.custom("TransformerDecoder"), arity=(2, 4),
           params=lambda a: a["num_layers"] * _dec_params(_layer_args(a)) + _norm_params(a["norm"]),
           param_shapes=_stack_shapes(True),
           flops=_stack_flops(_dec_flops), rules=ATTN_RULES + MASK_RULES + (SHAPE_NORM_FEATURES, DTYPE_MIXED),
           traits=("nonlinear", "normalises", "residual", "stack"), layer_op="TransformerDecoderLayer"),
    OpSpec("Transformer", "attention",
           (Arg("d_model", 512, POS), Arg("nhead", 8, POS), Arg("num_encoder_layers", 6, POS),
            Arg("num_decoder_layers", 6, POS), Arg("dim_feedforward", 2048, NAT), Arg("dropout", 0.1, PROB),
            Arg("activation", "relu", Enum("relu", "gelu")), Arg("custom_encoder", None, _NULL),
            Arg("custom_decoder", None, _NULL), Arg("layer_norm_eps", 1e-5, NUM), Arg("batch_first", False, BOOL),
            Arg("norm_first", False, BOOL), Arg("bias", True, BOOL)),
           _transformer_infer, tb.custom("Transformer"), arity=(2, 5), params=_transformer_params,
           param_shapes=_transformer_shapes,
           flops=_transformer_flops, rules=ATTN_RULES + MASK_RULES + (SHAPE_BROADCAST, DTYPE_MIXED),
           traits=("factory-kwargs", "nonlinear", "normalises", "residual"),
           parts=(("encoder", "TransformerEncoder", "num_encoder_layers"),
                  ("decoder", "TransformerDecoder", "num_decoder_layers"))),
]

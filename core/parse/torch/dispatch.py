"""torch.*, torch.nn.functional.* and the torch-side library helpers (Parameter, checkpoint,
weight_norm), dispatched through the registry."""

from __future__ import annotations

import ast
import math

from ...ops import by_functional, by_torch_function, ops_with
from ...ops.einsum import PatternError, parse_equation
from ..registry import handler_for, handles, handles_module
from ..values import (
    ExtVal,
    InterpError,
    NTuple,
    NTupleClass,
    Sym,
    TensorVal,
    Unknown,
    is_int,
    prod,
)
from . import optable

SOFTMAX = ops_with("softmax")
DROPOUTS = ops_with("dropout")


def _first_tensor(args, kwargs, key="input"):
    if args:
        return args[0]
    return kwargs.get(key, kwargs.get("x", kwargs.get("input")))


def _arg(args, kwargs, i, name, default=None):
    if len(args) > i:
        return args[i]
    return kwargs.get(name, default)


def functional_as_module(it, op, args, kwargs, skip_kw=("training", "inplace", "return_indices", "_stacklevel",
                                                         "dtype")):
    """F.xxx(x, *a, **k) whose arguments line up with nn.Op's constructor."""
    x = args[0] if args else kwargs.get("input")
    if not isinstance(x, TensorVal):
        raise InterpError(f"{op} of {it.describe(x)}")
    names = optable.arg_names(op) or []
    given = {}
    for i, v in enumerate(args[1:]):
        if i < len(names):
            given[names[i]] = v
    for k, v in kwargs.items():
        if k in ("input",) or k in skip_kw:
            continue
        if k in names:
            given[k] = v
    if op in DROPOUTS:
        given = {"p": _arg(args, kwargs, 1, "p", 0.5)}
    if op in SOFTMAX and given.get("dim") is None:
        it.warn(f"{op} without dim")
    for t in [x]:
        if t.pending:
            settle_pending(it, t, op, optable.full_args(op, given))
    full = optable.full_args(op, given)
    jd = jargs(it, op, given)
    if x.is_const or it.graph is None:
        return TensorVal(None, optable.infer(op, full, [x.shape]), x.dtype)
    return emit_op(it, op, jd, [x], full)


def _owner_leaf(t, ops):
    if isinstance(t, TensorVal) and t.param is not None and t.param.leaf and t.param.owner is not None:
        o = t.param.owner
        if o.op in ops:
            return o
    return None


@handles("torch.nn.functional.linear")
def f_linear(it, args, kwargs):
    x = _arg(args, kwargs, 0, "input")
    w = _arg(args, kwargs, 1, "weight")
    b = _arg(args, kwargs, 2, "bias")
    owner = _owner_leaf(w, ("Linear",))
    if owner is not None:
        return emit_module(it, owner, [x], {})
    if not isinstance(w, TensorVal):
        raise InterpError("F.linear with an unknown weight")
    y = tensor_binop(it, ast.MatMult, x, transpose(it, w, 0, 1) if (w.shape and len(w.shape) == 2) else w)
    if isinstance(b, TensorVal):
        y = tensor_binop(it, ast.Add, y, b)
    return y


def f_layer_norm(it, args, kwargs):
    x = _arg(args, kwargs, 0, "input")
    ns = _arg(args, kwargs, 1, "normalized_shape")
    w = _arg(args, kwargs, 2, "weight")
    b = _arg(args, kwargs, 3, "bias")
    eps = _arg(args, kwargs, 4, "eps", 1e-5)
    owner = _owner_leaf(w, ("LayerNorm",))
    if owner is not None:
        return emit_module(it, owner, [x], {})
    ns = list(ns) if isinstance(ns, (list, tuple)) else [ns]
    given = {"normalized_shape": ns, "eps": eps, "elementwise_affine": False}
    y = emit_op(it, "LayerNorm", jargs(it, "LayerNorm", given), [x], optable.full_args("LayerNorm", given))
    if isinstance(w, TensorVal):
        y = tensor_binop(it, ast.Mult, y, w)
    if isinstance(b, TensorVal):
        y = tensor_binop(it, ast.Add, y, b)
    return y


def f_group_norm(it, args, kwargs):
    x = _arg(args, kwargs, 0, "input")
    w = _arg(args, kwargs, 2, "weight")
    owner = _owner_leaf(w, ("GroupNorm",))
    if owner is not None:
        return emit_module(it, owner, [x], {})
    return passthrough(it, "F.group_norm with weights not owned by nn.GroupNorm", x)


def f_batch_norm(it, args, kwargs):
    x = _arg(args, kwargs, 0, "input")
    w = _arg(args, kwargs, 3, "weight")
    owner = _owner_leaf(w, ops_with("batchnorm"))
    if owner is not None:
        return emit_module(it, owner, [x], {})
    return passthrough(it, "F.batch_norm with weights not owned by nn.BatchNorm", x)


def f_conv(it, args, kwargs, n):
    x = _arg(args, kwargs, 0, "input")
    w = _arg(args, kwargs, 1, "weight")
    owner = _owner_leaf(w, (f"Conv{n}d",))
    if owner is not None:
        return emit_module(it, owner, [x], {})
    conv = [_arg(args, kwargs, i, k, d) for i, (k, d) in
            enumerate((("bias", None), ("stride", 1), ("padding", 0), ("dilation", 1), ("groups", 1)), 2)]
    if n in (1, 2):
        y = _conv_by_unfold(it, x, w, *conv, n)
        if y is not None:
            return y
    return passthrough(it, f"F.conv{n}d with weights not owned by nn.Conv{n}d", x, keep_shape=False)


def _pair(v, n):
    v = list(v) if isinstance(v, (list, tuple)) else [v] * n
    return v if len(v) == n and all(is_int(d) for d in v) else None


def _conv_by_unfold(it, x, w, bias, stride, padding, dilation, groups, n):
    """F.conv1d / conv2d with a weight no nn.Conv owns (a fixed filter buffer: timm's BlurPool; a learned
    nn.Parameter of the module's own) as torch computes it: Unfold, the weight as [groups, out / groups,
    in / groups * k] times the patches, reshaped to [N, out, *spatial] (a conv1d as a conv2d of height 1).
    Exact in shape, values and learned tensors (a buffer's values enter as a constant, not recorded). None
    where a size it needs is not an int (the caller passes the tensor on, said)."""
    if not (isinstance(x, TensorVal) and isinstance(w, TensorVal) and x.shape is not None and w.shape is not None
            and len(x.shape) == n + 2 and len(w.shape) == n + 2 and is_int(groups) and groups > 0):
        return None
    if padding == "valid":
        padding = 0
    elif padding == "same" and _pair(dilation, n) is not None and all(is_int(kk) for kk in w.shape[2:]):
        total = [d * (kk - 1) for d, kk in zip(_pair(dilation, n), w.shape[2:])]
        if any(t % 2 for t in total) or stride not in (1, [1] * n, (1,) * n):
            return None  # torch pads one more on the right, or refuses 'same' with a stride: not an Unfold's
        padding = [t // 2 for t in total]
    if n == 1:
        x, w = unsqueeze(it, x, 2), reshape(it, w, [w.shape[0], w.shape[1], 1, w.shape[2]])
        stride, padding, dilation = ([one, v] if is_int(v) else [one, *v] if isinstance(v, (list, tuple)) else v
                                     for one, v in ((1, stride), (0, padding), (1, dilation)))
    stride, padding, dilation = _pair(stride, 2), _pair(padding, 2), _pair(dilation, 2)
    c, hw = x.shape[1], x.shape[2:]
    out, per_group, k = w.shape[0], w.shape[1], w.shape[2:]
    if None in (stride, padding, dilation) or not all(is_int(d) for d in (c, out, per_group, *hw, *k)) or \
            c != per_group * groups or out % groups:
        return None
    spatial = [(size + 2 * p - d * (kk - 1) - 1) // s + 1
               for size, p, d, kk, s in zip(hw, padding, dilation, k, stride)]
    if min(spatial) < 1:
        return None
    patches = functional_as_module(it, "Unfold", [x], {"kernel_size": list(k), "dilation": dilation,
                                                        "padding": padding, "stride": stride})
    patches = reshape(it, patches, [-1, groups, per_group * prod(k), prod(spatial)])
    kernel = reshape(it, w, [groups, out // groups, per_group * prod(k)])
    y = reshape(it, tensor_binop(it, ast.MatMult, kernel, patches), [-1, out] + spatial)
    if isinstance(bias, TensorVal):
        y = tensor_binop(it, ast.Add, y, reshape(it, bias, [out, 1, 1]))
    return squeeze(it, y, 2) if n == 1 else y


def f_embedding(it, args, kwargs):
    x = _arg(args, kwargs, 0, "input")
    w = _arg(args, kwargs, 1, "weight")
    owner = _owner_leaf(w, ("Embedding",))
    if owner is not None:
        return emit_module(it, owner, [x], {})
    return passthrough(it, "F.embedding with weights not owned by nn.Embedding", x, keep_shape=False)


def f_interpolate(it, args, kwargs):
    x = _arg(args, kwargs, 0, "input")
    if not isinstance(x, TensorVal):
        return Unknown("F.interpolate of a value not known")
    given = {}
    for i, k in enumerate(("size", "scale_factor", "mode", "align_corners")):
        v = _arg(args, kwargs, i + 1, k)
        if v is not None:
            given[k] = v
    full = optable.full_args("Upsample", given)
    if x.is_const or it.graph is None:
        return TensorVal(None, optable.infer("Upsample", full, [x.shape]), x.dtype)
    for k in ("size", "scale_factor"):
        v = given.get(k)
        if v is not None and not _design_size(it, v):
            # Upsample takes numbers only: one with a size nobody can know (or a symbol) is an argument
            # the op refuses, a block for the parser's own ignorance
            return passthrough(it, f"F.interpolate with a {k} not known as a number when reading the source",
                               x, keep_shape=False)
    return emit_op(it, "Upsample", jargs(it, "Upsample", given), [x], full)


def _design_size(it, v):
    """Whether a size / scale factor is a number in the design (an input size given on the command line
    counts; a symbol, an unknown value does not)."""
    if isinstance(v, (list, tuple)):
        return bool(v) and all(_design_size(it, d) for d in v)
    if isinstance(v, Sym):
        return not it.symbolic and v.substitute(it.batch_env) is not None
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def f_pad(it, args, kwargs):
    x = _arg(args, kwargs, 0, "input")
    pad = _arg(args, kwargs, 1, "pad")
    mode = _arg(args, kwargs, 2, "mode", "constant")
    value = _arg(args, kwargs, 3, "value", None)
    if not isinstance(pad, (list, tuple)) or not all(is_int(p) for p in pad):
        return passthrough(it, "F.pad with sizes not known", x, keep_shape=False)
    if all(p == 0 for p in pad):
        return x
    pad = list(pad)
    while mode == "constant" and len(pad) > 2 and pad[-2:] == [0, 0]:
        pad = pad[:-2]  # outer dims padded by nothing (MONAI's ChannelPad names the batch dim): the same tensor
    n = len(pad) // 2
    if n not in (1, 2, 3):
        return passthrough(it, "F.pad of more than 3 dims", x, keep_shape=False)
    if mode == "constant":
        if value in (None, 0, 0.0):
            op, given = f"ZeroPad{n}d", {"padding": list(pad)}
        else:
            op, given = f"ConstantPad{n}d", {"padding": list(pad), "value": value}
    else:
        op = {"reflect": "ReflectionPad", "replicate": "ReplicationPad", "circular": "CircularPad"}.get(mode)
        if op is None:
            return passthrough(it, f"F.pad mode {mode}", x, keep_shape=False)
        op, given = f"{op}{n}d", {"padding": list(pad)}
    full = optable.full_args(op, given)
    if x.is_const or it.graph is None:
        return TensorVal(None, optable.infer(op, full, [x.shape]), x.dtype)
    return emit_op(it, op, jargs(it, op, given), [x], full)


def f_mse_loss(it, args, kwargs):
    """F.mse_loss(a, b, reduction): (a - b)^2 then its mean or sum, as Sub, Mul and Mean / Sum."""
    a, b = _arg(args, kwargs, 0, "input"), _arg(args, kwargs, 1, "target")
    reduction = kwargs.get("reduction", args[4] if len(args) > 4 else "mean")
    if not (isinstance(a, TensorVal) and isinstance(b, TensorVal)) or reduction not in ("mean", "sum", "none"):
        return unknown_call(it, "F.mse_loss", args, kwargs)
    d = tensor_binop(it, ast.Sub, a, b)
    sq = tensor_binop(it, ast.Mult, d, d) if isinstance(d, TensorVal) else d
    if reduction == "none" or not isinstance(sq, TensorVal):
        return sq
    return reduce_op(it, "Mean" if reduction == "mean" else "Sum", sq, None, False)


_MHA_ARGS = ("query", "key", "value", "embed_dim_to_check", "num_heads", "in_proj_weight", "in_proj_bias", "bias_k",
             "bias_v", "add_zero_attn", "dropout_p", "out_proj_weight", "out_proj_bias", "training",
             "key_padding_mask", "need_weights", "attn_mask", "use_separate_proj_weight", "q_proj_weight",
             "k_proj_weight", "v_proj_weight")


def _raw_linear(it, x, w, b):
    y = tensor_binop(it, ast.MatMult, x, transpose(it, w, 0, 1))
    return tensor_binop(it, ast.Add, y, b) if isinstance(b, TensorVal) else y


def f_mha_forward(it, args, kwargs):  # noqa: C901 - one torch function, read argument by argument
    """F.multi_head_attention_forward on [L, N, E] inputs: the projections with the weights given
    (each learned tensor once, as given), heads, scaled dot-product softmax, the output projection."""
    a = dict(zip(_MHA_ARGS, args))
    a.update(kwargs)
    q, k, v = a.get("query"), a.get("key"), a.get("value")
    h = a.get("num_heads")
    if not all(isinstance(t, TensorVal) and t.shape is not None and len(t.shape) == 3 for t in (q, k, v)) or \
            not is_int(h) or a.get("bias_k") is not None or a.get("add_zero_attn"):
        return unknown_call(it, "F.multi_head_attention_forward", args, kwargs)
    if isinstance(a.get("attn_mask"), TensorVal) or isinstance(a.get("key_padding_mask"), TensorVal):
        it.warn("attention mask of F.multi_head_attention_forward is not part of the design")
    e = q.shape[2]
    bias = a.get("in_proj_bias")
    if not is_int(e):
        return unknown_call(it, "F.multi_head_attention_forward", args, kwargs)

    def part(t, i):
        return tensor_getitem(it, t, slice(i * e, (i + 1) * e)) if isinstance(t, TensorVal) else None

    if a.get("use_separate_proj_weight"):
        ws = [a.get("q_proj_weight"), a.get("k_proj_weight"), a.get("v_proj_weight")]
    else:
        ws = [part(a.get("in_proj_weight"), i) for i in range(3)]
    if not all(isinstance(w, TensorVal) for w in ws):
        return unknown_call(it, "F.multi_head_attention_forward", args, kwargs)
    qp, kp, vp = (_raw_linear(it, x, w, part(bias, i)) for i, (x, w) in enumerate(zip((q, k, v), ws)))
    hd = e // h

    def heads(t):  # [L, N, E] -> [N*H, L, hd]
        n = t.shape[1] * h if is_int(t.shape[1]) else -1
        return transpose(it, reshape(it, t, [t.shape[0], n, hd]), 0, 1)

    qh, kh, vh = heads(qp), heads(kp), heads(vp)
    att = scale(it, tensor_binop(it, ast.MatMult, qh, transpose(it, kh, -2, -1)), 1.0 / math.sqrt(hd))
    att = activation(it, "Softmax", att, {"dim": -1})
    out = tensor_binop(it, ast.MatMult, att, vh)  # [N*H, L, hd]
    out = reshape(it, transpose(it, out, 0, 1), [q.shape[0], q.shape[1], e])
    out = _raw_linear(it, out, a.get("out_proj_weight"), a.get("out_proj_bias"))
    weights = None
    if a.get("need_weights", True) is not False:
        w4 = reshape(it, att, [q.shape[1], h, q.shape[0], k.shape[0]])
        weights = reduce_op(it, "Mean", w4, 1, False) if a.get("average_attn_weights", True) else w4
    return (out, weights)


def f_sdpa(it, args, kwargs):
    q, k, v = (_arg(args, kwargs, i, n) for i, n in enumerate(("query", "key", "value")))
    if kwargs.get("attn_mask") is not None or kwargs.get("is_causal"):
        it.warn("attention mask of scaled_dot_product_attention is not part of the design")
    sc = kwargs.get("scale")
    if sc is None:
        d = q.shape[-1] if q.shape else None
        sc = (1.0 / math.sqrt(d)) if is_int(d) else Unknown("scale")
    kt = transpose(it, k, -2, -1)
    att = tensor_binop(it, ast.MatMult, q, kt)
    att = scale(it, att, sc)
    att = activation(it, "Softmax", att, {"dim": -1})
    p = kwargs.get("dropout_p", 0.0)
    if isinstance(p, (int, float)) and p > 0:
        att = emit_op(it, "Dropout", {"p": p}, [att])
    return tensor_binop(it, ast.MatMult, att, v)


def f_einsum(it, args, kwargs):
    """torch.einsum of one or two operands, written as Permute / Sum / Reshape / MatMul (exact in
    shapes and results); repeated letters within one operand (diagonals) are not followed."""
    eq = args[0] if args else None
    ops = list(args[1:])
    if len(ops) == 1 and isinstance(ops[0], (list, tuple)):
        ops = list(ops[0])
    t0 = next((o for o in ops if isinstance(o, TensorVal)), None)
    if not isinstance(eq, str) or not ops or not all(isinstance(o, TensorVal) for o in ops):
        return passthrough(it, "torch.einsum", t0, keep_shape=False) if t0 else Unknown("einsum")
    try:
        return _einsum(it, eq.replace(" ", ""), ops)
    except _EinsumUnfollowed as e:
        return passthrough(it, f"torch.einsum('{eq}') ({e})", ops[0], keep_shape=False)


class _EinsumUnfollowed(Exception):
    pass


def _einsum(it, spec, ops):
    try:  # the op table's reading of the equation (what torch refuses is refused there)
        terms, out_terms = parse_equation(spec, len(ops))
    except PatternError as e:
        raise _EinsumUnfollowed(str(e)) from None
    if len(ops) > 2:
        raise _EinsumUnfollowed("more than two operands")
    if any(t.shape is None for t in ops):
        raise _EinsumUnfollowed("operand of unknown rank")
    # the dims an ellipsis stands for broadcast from the right, as torch aligns them: each gets a greek letter
    widths = [len(t.shape) - (len(term) - 1) if "..." in term else 0 for term, t in zip(terms, ops)]
    if min(widths) < 0:
        raise _EinsumUnfollowed("an operand has fewer dims than its subscripts")
    ell = "".join(chr(0x3b1 + i) for i in range(max(widths)))
    names = []
    for term, t, n in zip(terms, ops, widths):
        term = "".join(ell[len(ell) - n:] if c == "..." else c for c in term)
        if len(term) != len(t.shape) or len(set(term)) != len(term):
            raise _EinsumUnfollowed("repeated or missing letters")
        names.append(term)
    if out_terms is None:  # torch's implicit output: the ellipsis dims, then the letters seen once, sorted
        counts: dict = {}
        for term in names:
            for c in term:
                counts[c] = counts.get(c, 0) + 1
        out = ell + "".join(sorted(c for c, k in counts.items() if k == 1 and c not in ell))
    else:
        out = "".join(ell if c == "..." else c for c in out_terms)
    size = {}
    for term, t in zip(names, ops):
        for c, d in zip(term, t.shape):
            if c not in size or (is_int(size[c]) and size[c] == 1):
                size[c] = d
    # sum away letters only one operand has and the output does not keep
    cur = []
    for i, (term, t) in enumerate(zip(names, ops)):
        others = "".join(n for j, n in enumerate(names) if j != i)
        gone = [k for k, c in enumerate(term) if c not in out and c not in others]
        if gone:
            t = reduce_op(it, "Sum", t, gone, False)
            term = "".join(c for k, c in enumerate(term) if k not in gone)
        cur.append((term, t))
    if len(cur) == 1:
        term, t = cur[0]
        perm = [term.index(c) for c in out]
        return permute(it, t, perm) if perm != list(range(len(perm))) else t
    (a, A), (b, B) = cur
    batch = [c for c in a if c in b and c in out]
    contract = [c for c in a if c in b and c not in out]
    a_keep = [c for c in a if c not in b]
    b_keep = [c for c in b if c not in a]
    pa = [a.index(c) for c in batch + a_keep + contract]
    pb = [b.index(c) for c in batch + contract + b_keep]
    if pa != list(range(len(pa))):
        A = permute(it, A, pa)
    if pb != list(range(len(pb))):
        B = permute(it, B, pb)
    bsz = [size[c] for c in batch]
    simple = len(a_keep) <= 1 and len(b_keep) <= 1 and len(contract) == 1
    if not simple:
        A = reshape(it, A, [A.shape[i] for i in range(len(batch))] + [prod([size[c] for c in a_keep]),
                                                                       prod([size[c] for c in contract])])
        B = reshape(it, B, [B.shape[i] for i in range(len(batch))] + [prod([size[c] for c in contract]),
                                                                       prod([size[c] for c in b_keep])])
    elif not a_keep:
        A = unsqueeze(it, A, len(batch))
    if simple and not b_keep:
        B = unsqueeze(it, B, len(batch) + 1)
    y = tensor_binop(it, ast.MatMult, A, B)
    have = batch + a_keep + b_keep
    if not simple or not a_keep or not b_keep:
        lead = list(y.shape[:len(batch)]) if y.shape is not None else bsz
        y = reshape(it, y, lead + [size[c] for c in a_keep + b_keep])
    perm = [have.index(c) for c in out]
    if perm != list(range(len(perm))):
        y = permute(it, y, perm)
    return y


def _meshgrid(it, args, kwargs):
    ts = list(args)
    if len(ts) == 1 and isinstance(ts[0], (list, tuple)):
        ts = list(ts[0])
    sizes = [t.shape[0] if (isinstance(t, TensorVal) and t.shape) else None for t in ts]
    ij = kwargs.get("indexing", "ij") == "ij"
    shape = sizes if ij or len(sizes) < 2 else [sizes[1], sizes[0]] + sizes[2:]
    return tuple(TensorVal(None, list(shape), ts[i].dtype if isinstance(ts[i], TensorVal) else "int64")
                 for i in range(len(ts)))


def _const_call(it, name, args, kwargs):
    dt = _dtype_kw(kwargs)
    if name in ("zeros", "ones", "empty", "randn", "rand", "full", "randint"):
        if name == "full":
            size = args[0] if args else kwargs.get("size")
            fill = args[1] if len(args) > 1 else kwargs.get("fill_value")
            if "dtype" not in kwargs and isinstance(fill, int) and not isinstance(fill, bool):
                dt = "int64"
            return const_tensor(it, _size_list(size if isinstance(size, (list, tuple)) else [size]), dt, fill)
        if name == "randint":
            size = args[-1] if args else kwargs.get("size")
            return const_tensor(it, _size_list(size if isinstance(size, (list, tuple)) else [size]), "int64")
        size = list(args) if args else [kwargs.get("size")]
        fill = {"zeros": 0.0, "ones": 1.0}.get(name)
        return const_tensor(it, _size_list(size), dt, fill)
    if name in ("zeros_like", "ones_like", "empty_like", "randn_like", "rand_like", "full_like"):
        t = args[0]
        fill = {"zeros_like": 0.0, "ones_like": 1.0}.get(name)
        if name == "full_like":
            fill = args[1] if len(args) > 1 else kwargs.get("fill_value")
        if isinstance(t, TensorVal) and t.shape is not None:
            c = const_tensor(it, list(t.shape), _dtype_kw(kwargs, t.dtype), fill)
            return c
        return TensorVal(None, None)
    if name == "arange":
        return _arange(it, args, kwargs)
    if name == "linspace":
        s, e, n = _arg(args, kwargs, 0, "start"), _arg(args, kwargs, 1, "end"), _arg(args, kwargs, 2, "steps")
        if all(isinstance(v, (int, float)) for v in (s, e)) and is_int(n):
            return TensorVal(None, [n], dt, values=[_f32(v) for v in _linspace(s, e, n)])
        return TensorVal(None, [n if is_int(n) else None], dt)
    if name == "from_numpy" and args and isinstance(args[0], TensorVal) and args[0].is_const:
        return TensorVal(None, args[0].shape, args[0].dtype, values=args[0].values)
    if name in ("tensor", "as_tensor", "Tensor", "FloatTensor", "LongTensor"):
        data = args[0] if args else kwargs.get("data")
        d = kwargs.get("dtype")
        d = d[6:] if isinstance(d, str) and d.startswith("dtype:") else None
        if name == "LongTensor":
            d = "int64"
        if name in ("Tensor", "FloatTensor"):
            d = "float32"
            if args and all(is_int(a) for a in args):
                return const_tensor(it, list(args), "float32")
        return make_tensor(it, data, d)
    if name == "eye":
        n = args[0]
        m = args[1] if len(args) > 1 else n
        return TensorVal(None, [n, m], dt)
    return None


def _float_functional(it, name, args, kwargs):
    """torch.ao.nn.quantized.FloatFunctional: float-level tensor ops of quantizable models."""
    if name == "cat":
        return concat(it, it.iterate(args[0]), _arg(args, kwargs, 1, "dim", 0))
    ops = {"add": ast.Add, "mul": ast.Mult, "add_scalar": ast.Add, "mul_scalar": ast.Mult}
    if name in ops:
        return tensor_binop(it, ops[name], args[0], args[1])
    if name == "add_relu":
        return activation(it, "ReLU", tensor_binop(it, ast.Add, args[0], args[1]))
    return unknown_call(it, f"FloatFunctional.{name}", args, kwargs)


def call_ext(it, path, args, kwargs):
    """A call of a name from outside the parsed source: its registered model, else unknown."""
    p = canon(path)
    h, name = handler_for(p)
    if h is not None:
        return h(it, args, kwargs) if name is None else h(it, name, args, kwargs)
    if p.startswith("__floatfunctional__."):
        return _float_functional(it, p.rsplit(".", 1)[-1], args, kwargs)
    if p == "__identity__":
        return args[0] if args else None
    mod, _, name = p.rpartition(".")
    if "quantiz" in mod and name in ("QuantStub", "DeQuantStub", "QuantWrapper"):
        return ExtVal("__identity__")  # identity at float precision
    if "quantized" in mod and name == "FloatFunctional":
        return ExtVal("__floatfunctional__")
    if p.startswith("torch.nn.init.") or p.startswith("torch.nn.utils.") and "init" in p:
        return None
    if mod in ("typing", "typing_extensions", "warnings", "logging", "abc", "enum") or p.startswith("logging."):
        return args[-1] if (name == "cast" and args) else None if mod in ("warnings", "logging") else \
            Unknown(p)
    if p.startswith("torch.jit.") or p.startswith("torch.fx.") or p.startswith("torch._dynamo") or \
            p.startswith("torch.compiler"):
        if name in ("is_scripting", "is_tracing", "is_compiling"):
            return False
        if name == "annotate":
            return args[1] if len(args) > 1 else None
        if name in ("wrap", "unused", "ignore", "export", "script_if_tracing"):
            return args[0] if args and not isinstance(args[0], str) else None
        return Unknown(p)
    return unknown_call(it, p, args, kwargs)


@handles_module("torch.nn.functional")
def call_functional(it, name, args, kwargs):
    spec = by_functional(name)
    if spec is not None and spec.functional_args is not None:  # an activation-style functional
        op, extra = spec.name, spec.functional_args
        x = args[0] if args else kwargs.get("input")
        if not isinstance(x, TensorVal):
            raise InterpError(f"F.{name} of {it.describe(x)}")
        given = {}
        for i, k in enumerate(extra):
            v = _arg(args, kwargs, i + 1, k)
            if v is not None:
                given[k] = v
        if op in SOFTMAX and "dim" not in given:
            it.warn(f"F.{name} without dim")
        if x.pending:
            settle_pending(it, x, op, optable.full_args(op, given))
        return activation(it, op, x, jargs(it, op, given))
    if spec is not None:
        return functional_as_module(it, spec.name, args, kwargs)
    if name == "linear":
        return f_linear(it, args, kwargs)
    if name == "layer_norm":
        return f_layer_norm(it, args, kwargs)
    if name == "group_norm":
        return f_group_norm(it, args, kwargs)
    if name == "batch_norm":
        return f_batch_norm(it, args, kwargs)
    if name in ("conv1d", "conv2d", "conv3d"):
        return f_conv(it, args, kwargs, int(name[4]))
    if name == "embedding":
        return f_embedding(it, args, kwargs)
    if name in ("interpolate", "upsample", "upsample_nearest", "upsample_bilinear"):
        return f_interpolate(it, args, kwargs)
    if name == "pad":
        return f_pad(it, args, kwargs)
    if name == "multi_head_attention_forward":
        return f_mha_forward(it, args, kwargs)
    if name == "scaled_dot_product_attention":
        return f_sdpa(it, args, kwargs)
    if name in ("normalize",):
        x = _first_tensor(args, kwargs)
        if not isinstance(x, TensorVal) or x.is_const:
            return passthrough(it, "F.normalize", x)
        return normalize(it, x, _arg(args, kwargs, 1, "p", 2.0), _arg(args, kwargs, 2, "dim", 1),
                         _arg(args, kwargs, 3, "eps", 1e-12))
    if name == "mse_loss":
        return f_mse_loss(it, args, kwargs)
    if name in ("cross_entropy", "mse_loss", "nll_loss", "l1_loss", "binary_cross_entropy",
                "binary_cross_entropy_with_logits", "kl_div", "smooth_l1_loss"):
        return unknown_call(it, f"F.{name} (a loss)", args, kwargs)
    if name == "one_hot":
        return unknown_call(it, "F.one_hot", args, kwargs)
    return unknown_call(it, f"F.{name}", args, kwargs)


@handles_module("torch")
def call_torch(it, name, args, kwargs):
    c = _const_call(it, name, args, kwargs)
    if c is not None:
        return c
    x = _first_tensor(args, kwargs)
    if name in ("cat", "concat", "concatenate"):
        ts = args[0] if args else kwargs.get("tensors")
        return concat(it, it.iterate(ts), _arg(args, kwargs, 1, "dim", 0))
    if name == "stack":
        ts = args[0] if args else kwargs.get("tensors")
        return concat(it, it.iterate(ts), _arg(args, kwargs, 1, "dim", 0), op="Stack")
    if name == "meshgrid":
        return _meshgrid(it, args, kwargs)
    if name == "where" and len(args) + len(kwargs) == 3:
        r = where(it, _arg(args, kwargs, 0, "condition"), _arg(args, kwargs, 1, "input"),
                  _arg(args, kwargs, 2, "other"))
        if r is not None:
            return r
    if not isinstance(x, TensorVal):
        if name in ("is_tensor",):
            return isinstance(x, TensorVal)
        if name in ("_assert", "manual_seed", "set_grad_enabled", "no_grad", "enable_grad", "inference_mode",
                    "autocast", "is_grad_enabled", "set_default_dtype", "_C", "set_printoptions"):
            return None if name != "is_grad_enabled" else False
        if name in ("Size",):
            return tuple(args[0]) if args else ()
        if name in ("pow",) and len(args) == 2 and isinstance(args[1], TensorVal):
            base, e = args
            vals = _f32vals(e.values, lambda v: base ** v) if e.values is not None else None
            return TensorVal(None, e.shape, "float32", values=vals)
        if name in ("einsum",):
            return f_einsum(it, args, kwargs)
        if name in ("diff", "round", "log", "exp", "sqrt", "abs", "sign", "log2") and x is None:
            return Unknown(f"torch.{name}")
        return unknown_call(it, f"torch.{name}", args, kwargs)
    if name == "flatten":
        return flatten(it, x, _arg(args, kwargs, 1, "start_dim", 0), _arg(args, kwargs, 2, "end_dim", -1))
    if name == "reshape":
        return reshape(it, x, _arg(args, kwargs, 1, "shape", ()))
    if name == "permute":
        return permute(it, x, _arg(args, kwargs, 1, "dims", ()))
    if name in ("transpose", "swapaxes", "swapdims"):
        return transpose(it, x, _arg(args, kwargs, 1, "dim0"), _arg(args, kwargs, 2, "dim1"))
    if name in ("matmul", "bmm", "mm", "spmm"):  # spmm: sparse @ dense, the same product (GCN layers)
        return tensor_binop(it, ast.MatMult, x, _arg(args, kwargs, 1, "other", _arg(args, kwargs, 1, "mat2")))
    if name in ("add", "sub", "mul", "div", "true_divide", "multiply", "subtract", "divide"):
        return tensor_method(it, x, name, list(args[1:]), {k: v for k, v in kwargs.items() if k != "input"})
    if name in ("mean", "sum"):
        return reduce_op(it, "Mean" if name == "mean" else "Sum", x, _arg(args, kwargs, 1, "dim"),
                         _arg(args, kwargs, 2, "keepdim", False))
    op = by_torch_function(name)
    if op is not None:
        return activation(it, op, x)
    if name in ("softmax", "log_softmax"):
        return activation(it, "Softmax" if name == "softmax" else "LogSoftmax", x,
                          {"dim": _arg(args, kwargs, 1, "dim")})
    if name == "unsqueeze":
        return unsqueeze(it, x, _arg(args, kwargs, 1, "dim"))
    if name == "squeeze":
        return squeeze(it, x, _arg(args, kwargs, 1, "dim"))
    if name == "chunk":
        return chunk(it, x, _arg(args, kwargs, 1, "chunks"), _arg(args, kwargs, 2, "dim", 0))
    if name == "split":
        return split(it, x, _arg(args, kwargs, 1, "split_size_or_sections"), _arg(args, kwargs, 2, "dim", 0))
    if name == "unbind":
        return tensor_method(it, x, "unbind", list(args[1:]), kwargs)
    if name == "einsum":
        return f_einsum(it, args, kwargs)
    if name in ("repeat_interleave", "tensor_split", "tile"):
        return tensor_method(it, x, name, list(args[1:]), {k: v for k, v in kwargs.items() if k != "input"})
    if name in ("clone", "detach", "contiguous"):
        return x
    if name in ("diff", "round", "log", "exp", "sqrt", "abs", "sign", "log2", "floor", "ceil", "neg", "roll",
                "clamp", "where", "masked_fill", "flip", "cumsum", "erf", "rsqrt", "sin", "cos", "max", "min",
                "argmax", "topk", "sort", "gather", "index_select", "norm", "amax", "all", "any", "tril", "triu",
                "repeat_interleave", "tile", "narrow", "nan_to_num", "clip", "pow", "square", "prod", "var", "std",
                "logsumexp", "outer", "diag", "numel", "divide", "remainder", "floor_divide"):
        if name == "pow" and len(args) > 1 and is_int(args[1]) and args[1] == 2 and not x.is_const:
            return emit_op(it, "Mul", {}, [x, x])
        if name == "numel":
            return tensor_method(it, x, "numel", [], {})
        if x.is_const and name in ("divide", "floor_divide", "remainder", "pow") and len(args) > 1:
            op = {"divide": ast.Div, "floor_divide": ast.FloorDiv, "remainder": ast.Mod, "pow": ast.Pow}[name]
            return tensor_binop(it, op, x, args[1])
        return tensor_method(it, x, name, list(args[1:]), {k: v for k, v in kwargs.items() if k != "input"})
    return tensor_method(it, x, name, list(args[1:]), {k: v for k, v in kwargs.items() if k != "input"})


@handles("torch.nn.Parameter")
@handles("torch.nn.parameter.Parameter")
def _parameter(it, args, kwargs):
    return make_parameter(it, args, kwargs)


@handles("torch.nn.Buffer")
@handles("torch.nn.parameter.Buffer")
def _buffer(it, args, kwargs):
    """`self.ids = nn.Buffer(t, persistent=False)`: the tensor, held by the module (not a parameter)."""
    return args[0] if args else kwargs.get("data", Unknown("buffer"))


def add_product(it, t, a, b, beta=1, alpha=1):
    """beta * t + alpha * (a @ b): torch.addmm / baddbmm and their tensor methods (GPT-2's Conv1D,
    BLOOM's alibi attention scores)."""
    prod_ = it.binop(ast.MatMult, a, b)
    if not (is_int(alpha) or isinstance(alpha, float)) or not (is_int(beta) or isinstance(beta, float)):
        it.warn("addmm/baddbmm with a beta or alpha not known when reading the source: taken as 1")
        alpha = beta = 1
    if alpha != 1:
        prod_ = it.binop(ast.Mult, prod_, alpha)
    if beta == 0:
        return prod_
    return it.binop(ast.Add, prod_, t if beta == 1 else it.binop(ast.Mult, t, beta))


@handles("torch.addmm")
@handles("torch.baddbmm")
def _addmm(it, args, kwargs):
    """`torch.addmm(bias, x, w)` = bias + x @ w; `torch.baddbmm(t, b1, b2)` the same batched."""
    t = _arg(args, kwargs, 0, "input")
    a = args[1] if len(args) > 1 else kwargs.get("mat1", kwargs.get("batch1"))
    b = args[2] if len(args) > 2 else kwargs.get("mat2", kwargs.get("batch2"))
    return add_product(it, t, a, b, kwargs.get("beta", 1), kwargs.get("alpha", 1))


@handles("torch.utils.checkpoint.checkpoint")
def _checkpoint(it, args, kwargs):
    f = args[0]
    return it.call(f, list(args[1:]), {k: v for k, v in kwargs.items() if k not in (
        "use_reentrant", "preserve_rng_state", "determinism_check", "debug", "context_fn")})


# the layers whose `weight` a design's `parametrize` may name (core/shapes.weight_rows)
_PARAMETRIZABLE = ops_with("parametrizable")


def _reparam(it, what, args, kwargs):
    """weight_norm / spectral_norm of a layer: the same layer, whose parameters torch counts anew.
    weight_norm splits the weight into a direction and one magnitude per slice of dim 0 (the layer's
    `weight_norm` argument in the op table); spectral_norm keeps as many parameters (its vectors are
    buffers)."""
    m = args[0] if args else kwargs.get("module")
    if not _is_module(m):
        return Unknown(what)
    name = args[1] if len(args) > 1 else kwargs.get("name", "weight")
    if what == "spectral_norm":
        # as many parameters either way (its vectors are buffers): marked where the design can say it
        if m.op in _PARAMETRIZABLE and name == "weight":
            m.args = dict(m.args or {}, spectral_norm=True)
            m.cache = None
        return m
    dim = args[2] if len(args) > 2 else kwargs.get("dim", 0)
    if m.op in _PARAMETRIZABLE and name == "weight" and dim == 0:
        m.args = dict(m.args or {}, weight_norm=True)
        m.cache = None
        return m
    it.warn(f"{what} of {it.describe(m)} (name={name!r}, dim={dim!r}) is not followed; the design keeps the plain "
            "module and misses its magnitudes")
    return m


# torch.finfo / torch.iinfo of a dtype the parser holds: facts of the formats (IEEE binary32 / binary16 /
# binary64, bfloat16's 8-bit exponent and 7-bit mantissa), an attention mask's `-torch.finfo(x.dtype).max`
_FLOAT_FORMATS = {"float32": (8, 23), "float16": (5, 10), "bfloat16": (8, 7), "float64": (11, 52)}
_INT_BITS = {"int64": 64, "int32": 32, "int16": 16, "int8": 8, "uint8": 8}
_FINFO = NTupleClass("finfo", ["bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"])
_IINFO = NTupleClass("iinfo", ["bits", "max", "min", "dtype"])


@handles("torch.finfo")
def _finfo(it, args, kwargs):
    t = _arg(args, kwargs, 0, "type", "dtype:float32")
    dt = t[6:] if isinstance(t, str) and t.startswith("dtype:") else None
    if dt not in _FLOAT_FORMATS:
        return Unknown("torch.finfo")
    e, m = _FLOAT_FORMATS[dt]
    bias = 2 ** (e - 1) - 1
    big = (2 - 2.0 ** -m) * 2.0 ** bias
    tiny = 2.0 ** (1 - bias)
    return NTuple((1 + e + m, 2.0 ** -m, big, -big, tiny, tiny, 10.0 ** -math.floor(m * math.log10(2)), dt), _FINFO)


@handles("torch.iinfo")
def _iinfo(it, args, kwargs):
    t = _arg(args, kwargs, 0, "type")
    dt = t[6:] if isinstance(t, str) and t.startswith("dtype:") else None
    if dt not in _INT_BITS:
        return Unknown("torch.iinfo")
    b = _INT_BITS[dt]
    lo, hi = (0, 2 ** b - 1) if dt == "uint8" else (-(2 ** (b - 1)), 2 ** (b - 1) - 1)
    return NTuple((b, hi, lo, dt), _IINFO)


@handles("torch.autograd.Variable")
def _h_torch_autograd_Variable(it, a, k):
    return a[0] if a else None


@handles("torch.utils.checkpoint.checkpoint_sequential")
def _h_torch_utils_checkpoint_checkpoint_sequential(it, a, k):
    return it.call(a[0], [a[-1]], {})


@handles("torch.nn.utils.remove_weight_norm")
def _h_torch_nn_utils_remove_weight_norm(it, a, k):
    return a[0] if a else None


@handles("torch.nn.utils.weight_norm")
def _h_torch_nn_utils_weight_norm(it, a, k):
    return _reparam(it, 'weight_norm', a, k)


@handles("torch.nn.utils.parametrizations.weight_norm")
def _h_torch_nn_utils_parametrizations_weight_norm(it, a, k):
    return _reparam(it, 'weight_norm', a, k)


@handles("torch.nn.utils.spectral_norm")
def _h_torch_nn_utils_spectral_norm(it, a, k):
    return _reparam(it, 'spectral_norm', a, k)


@handles("torch.nn.utils.parametrizations.spectral_norm")
def _h_torch_nn_utils_parametrizations_spectral_norm(it, a, k):
    return _reparam(it, 'spectral_norm', a, k)


# siblings, imported last: the modules of this model call one another
from .calls import emit_module, settle_pending  # noqa: E402
from .constants import _arange, _dtype_kw, _linspace, _size_list, const_tensor, make_tensor  # noqa: E402
from .modules import _is_module, make_parameter  # noqa: E402
from .names import _f32, canon  # noqa: E402
from .refs import jargs  # noqa: E402
from .tensors import (  # noqa: E402
    _f32vals,
    activation,
    chunk,
    concat,
    emit_op,
    flatten,
    normalize,
    passthrough,
    permute,
    reduce_op,
    reshape,
    scale,
    split,
    squeeze,
    tensor_binop,
    tensor_getitem,
    tensor_method,
    transpose,
    unknown_call,
    unsqueeze,
    where,
)

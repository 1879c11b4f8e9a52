"""What the parser knows about the ops it emits: defaults, parameter shapes and
output shapes.

This is the parser's own small model of ``torch.nn`` (the project's op table
lives in ``core/ops`` once it exists).  Shapes are lists of sizes as in
:mod:`core.parse.dims`; ``None`` for a whole shape means the rank is unknown.
"""

from __future__ import annotations

import math

from .nn_sigs import SIGS
from .values import dim_add, dim_eq, dim_floordiv, dim_mul, is_int, prod

SHAPE_KEEP = {
    "ReLU", "ReLU6", "GELU", "SiLU", "Tanh", "Sigmoid", "Softmax", "LogSoftmax", "Softmin", "Softmax2d",
    "LeakyReLU", "ELU", "SELU", "CELU", "Hardswish", "Hardsigmoid", "Hardtanh", "Mish", "Softplus",
    "Softsign", "Softshrink", "Hardshrink", "Tanhshrink", "Threshold", "LogSigmoid", "PReLU", "RReLU",
    "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout", "Identity",
    "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm", "LayerNorm", "GroupNorm", "RMSNorm",
    "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "LocalResponseNorm", "CrossMapLRN2d",
    "Scale", "TransformerEncoderLayer", "ChannelShuffle",
}


_DEFAULTS = {}


def defaults(op):
    d = _DEFAULTS.get(op)
    if d is None:
        sig = SIGS.get(op) or []
        d = _DEFAULTS[op] = {name: d for name, d, req in sig if not req}
    return d


def full_args(op, args):
    out = dict(defaults(op))
    out.update(args or {})
    return out


def _tup(v, n):
    if isinstance(v, (list, tuple)):
        return list(v)
    return [v] * n


_CONV_DIMS = {}


def _conv_dims(op):
    n = _CONV_DIMS.get(op)
    if n is None:
        n = 2
        for k in (1, 2, 3):
            if op.endswith(f"{k}d"):
                n = k
                break
        _CONV_DIMS[op] = n
    return n


# ---------------------------------------------------------------- parameters
def param_shapes(op, args):
    """[(name, shape)] of the learned tensors of one op with these args."""
    a = full_args(op, args)
    out = []
    if op in ("Linear",):
        i, o = a.get("in_features"), a.get("out_features")
        out.append(("weight", [o, i]))
        if a.get("bias", True):
            out.append(("bias", [o]))
    elif op == "Bilinear":
        out.append(("weight", [a.get("out_features"), a.get("in1_features"), a.get("in2_features")]))
        if a.get("bias", True):
            out.append(("bias", [a.get("out_features")]))
    elif op.startswith("ConvTranspose") or op.startswith("Conv"):
        n = _conv_dims(op)
        k = _tup(a.get("kernel_size"), n)
        i, o, g = a.get("in_channels"), a.get("out_channels"), a.get("groups", 1)
        if op.startswith("ConvTranspose"):
            w = [i, _fdiv(o, g)] + k
        else:
            w = [o, _fdiv(i, g)] + k
        out.append(("weight", w))
        if a.get("bias", True):
            out.append(("bias", [o]))
    elif op in ("BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm"):
        if a.get("affine", True):
            c = a.get("num_features")
            out += [("weight", [c]), ("bias", [c])]
    elif op.startswith("InstanceNorm"):
        if a.get("affine", False):
            c = a.get("num_features")
            out += [("weight", [c]), ("bias", [c])]
    elif op == "LayerNorm":
        ns = a.get("normalized_shape")
        ns = list(ns) if isinstance(ns, (list, tuple)) else [ns]
        if a.get("elementwise_affine", True):
            out.append(("weight", ns))
            if a.get("bias", True):
                out.append(("bias", ns))
    elif op == "RMSNorm":
        ns = a.get("normalized_shape")
        ns = list(ns) if isinstance(ns, (list, tuple)) else [ns]
        if a.get("elementwise_affine", True):
            out.append(("weight", ns))
    elif op == "GroupNorm":
        if a.get("affine", True):
            c = a.get("num_channels")
            out += [("weight", [c]), ("bias", [c])]
    elif op in ("Embedding", "EmbeddingBag"):
        out.append(("weight", [a.get("num_embeddings"), a.get("embedding_dim")]))
    elif op == "PReLU":
        out.append(("weight", [a.get("num_parameters", 1)]))
    elif op == "MultiheadAttention":
        out += _mha_params(a, "")
    elif op in ("LSTM", "GRU", "RNN"):
        out += _rnn_params(op, a)
    elif op in ("LSTMCell", "GRUCell", "RNNCell"):
        g = {"LSTMCell": 4, "GRUCell": 3, "RNNCell": 1}[op]
        h, i = a.get("hidden_size"), a.get("input_size")
        out += [("weight_ih", [_mul(g, h), i]), ("weight_hh", [_mul(g, h), h])]
        if a.get("bias", True):
            out += [("bias_ih", [_mul(g, h)]), ("bias_hh", [_mul(g, h)])]
    elif op in ("TransformerEncoderLayer", "TransformerDecoderLayer"):
        out += _tlayer_params(op, a, "")
    elif op == "Transformer":
        d = a.get("d_model", 512)
        sub = {"d_model": d, "nhead": a.get("nhead", 8), "dim_feedforward": a.get("dim_feedforward", 2048),
               "bias": a.get("bias", True)}
        for i in range(a.get("num_encoder_layers", 6) or 0):
            out += _tlayer_params("TransformerEncoderLayer", sub, f"encoder.layers.{i}.")
        out += [("encoder.norm.weight", [d])] + ([("encoder.norm.bias", [d])] if sub["bias"] else [])
        for i in range(a.get("num_decoder_layers", 6) or 0):
            out += _tlayer_params("TransformerDecoderLayer", sub, f"decoder.layers.{i}.")
        out += [("decoder.norm.weight", [d])] + ([("decoder.norm.bias", [d])] if sub["bias"] else [])
    elif op == "Parameter":
        out.append(("", list(a.get("shape") or [])))
    if a.get("weight_norm") and out and out[0][0] == "weight":
        w = out[0][1]
        out.append(("weight_g", [w[0]] + [1] * (len(w) - 1)))
    return out


def _mul(a, b):
    if a is None or b is None:
        return None
    return dim_mul(a, b)


def _fdiv(a, b):
    if a is None or b is None:
        return None
    return dim_floordiv(a, b)


def _mha_params(a, p):
    e = a.get("embed_dim")
    kd = a.get("kdim") or e
    vd = a.get("vdim") or e
    out = []
    if kd == e and vd == e:
        out.append((p + "in_proj_weight", [_mul(3, e), e]))
    else:
        out += [(p + "q_proj_weight", [e, e]), (p + "k_proj_weight", [e, kd]), (p + "v_proj_weight", [e, vd])]
    bias = a.get("bias", True)
    if bias:
        out.append((p + "in_proj_bias", [_mul(3, e)]))
    out.append((p + "out_proj.weight", [e, e]))
    if bias:
        out.append((p + "out_proj.bias", [e]))
    if a.get("add_bias_kv", False):
        out += [(p + "bias_k", [1, 1, e]), (p + "bias_v", [1, 1, e])]
    return out


def _rnn_params(op, a):
    g = {"LSTM": 4, "GRU": 3, "RNN": 1}[op]
    h = a.get("hidden_size")
    i = a.get("input_size")
    layers = a.get("num_layers", 1)
    dirs = 2 if a.get("bidirectional", False) else 1
    proj = a.get("proj_size", 0) if op == "LSTM" else 0
    real_h = proj if proj else h
    out = []
    if not is_int(layers):
        return [("weight", [None])]
    for layer in range(layers):
        for d in range(dirs):
            sfx = f"_l{layer}" + ("_reverse" if d else "")
            lin = i if layer == 0 else _mul(real_h, dirs)
            out += [("weight_ih" + sfx, [_mul(g, h), lin]), ("weight_hh" + sfx, [_mul(g, h), real_h])]
            if a.get("bias", True):
                out += [("bias_ih" + sfx, [_mul(g, h)]), ("bias_hh" + sfx, [_mul(g, h)])]
            if proj:
                out.append(("weight_hr" + sfx, [proj, h]))
    return out


def _tlayer_params(op, a, p):
    d = a.get("d_model")
    ff = a.get("dim_feedforward", 2048)
    bias = a.get("bias", True)
    mha = {"embed_dim": d, "num_heads": a.get("nhead"), "bias": bias}
    out = _mha_params(mha, p + "self_attn.")
    if op == "TransformerDecoderLayer":
        out += _mha_params(mha, p + "multihead_attn.")
    out += [(p + "linear1.weight", [ff, d])] + ([(p + "linear1.bias", [ff])] if bias else [])
    out += [(p + "linear2.weight", [d, ff])] + ([(p + "linear2.bias", [d])] if bias else [])
    norms = 3 if op == "TransformerDecoderLayer" else 2
    for k in range(1, norms + 1):
        out.append((p + f"norm{k}.weight", [d]))
        if bias:
            out.append((p + f"norm{k}.bias", [d]))
    return out


def param_count(op, args):
    """Number of learned scalars of one op, or None when a size is unknown."""
    total = 0
    for _, shape in param_shapes(op, args):
        n = prod(shape) if shape else 1
        if not is_int(n):
            return None
        total += n
    return total


# ---------------------------------------------------------------- shapes
def _norm_dim(d, rank):
    if not is_int(d) or rank is None:
        return None
    if d < 0:
        d += rank
    if 0 <= d < rank:
        return d
    return None


def _conv_out(L, k, s, p, d, ceil_mode=False):
    if L is None or not all(is_int(v) for v in (k, s, d)):
        return None
    if p == "same":
        return L
    if p == "valid":
        p = 0
    if not is_int(p):
        return None
    num = dim_add(L, 2 * p - d * (k - 1) - 1)
    if num is None:
        return None
    if is_int(num):
        if ceil_mode:
            out = -(-num // s) + 1
            if (out - 1) * s >= L + p:
                out -= 1
            return out
        return num // s + 1
    if s == 1:
        return dim_add(num, 1)
    q = dim_floordiv(num, s)
    return None if q is None else dim_add(q, 1)


def broadcast(a, b):
    if a is None or b is None:
        return None
    n = max(len(a), len(b))
    a = [1] * (n - len(a)) + list(a)
    b = [1] * (n - len(b)) + list(b)
    out = []
    for x, y in zip(a, b):
        if x == 1 and is_int(x):
            out.append(y)
        elif y == 1 and is_int(y):
            out.append(x)
        elif dim_eq(x, y):
            out.append(x)
        else:
            out.append(None if (x is None or y is None or (is_int(x) and is_int(y))) else x)
    return out


def infer(op, a, shapes):
    """Output shape (or list of shapes for multi-result ops) of op with full args a."""
    x = shapes[0] if shapes else None
    try:
        return _infer(op, a, shapes, x)
    except (TypeError, ValueError, IndexError, ZeroDivisionError, KeyError):
        return None


def _infer(op, a, shapes, x):
    if op in SHAPE_KEEP:
        return None if x is None else list(x)
    if op == "Linear":
        return None if x is None else list(x[:-1]) + [a.get("out_features")]
    if op == "Bilinear":
        return None if x is None else list(x[:-1]) + [a.get("out_features")]
    if op.startswith("Conv") and not op.startswith("ConvTranspose"):
        n = _conv_dims(op)
        if x is None:
            return None
        k, s, d = _tup(a.get("kernel_size"), n), _tup(a.get("stride", 1), n), _tup(a.get("dilation", 1), n)
        p = a.get("padding", 0)
        p = [p] * n if isinstance(p, str) else _tup(p, n)
        sp = [_conv_out(x[len(x) - n + j], k[j], s[j], p[j], d[j]) for j in range(n)]
        return list(x[:len(x) - n - 1]) + [a.get("out_channels")] + sp
    if op.startswith("ConvTranspose"):
        n = _conv_dims(op)
        if x is None:
            return None
        k, s, d = _tup(a.get("kernel_size"), n), _tup(a.get("stride", 1), n), _tup(a.get("dilation", 1), n)
        p, op_ = _tup(a.get("padding", 0), n), _tup(a.get("output_padding", 0), n)
        sp = []
        for j in range(n):
            L = x[len(x) - n + j]
            v = dim_mul(dim_add(L, -1), s[j]) if L is not None else None
            sp.append(None if v is None else dim_add(v, -2 * p[j] + d[j] * (k[j] - 1) + op_[j] + 1))
        return list(x[:len(x) - n - 1]) + [a.get("out_channels")] + sp
    if op.startswith("MaxPool") or op.startswith("AvgPool") or op.startswith("LPPool"):
        n = _conv_dims(op)
        if x is None:
            return None
        k = _tup(a.get("kernel_size"), n)
        st = a.get("stride")
        s = k if st is None or st == [] else _tup(st, n)
        p = _tup(a.get("padding", 0), n)
        d = _tup(a.get("dilation", 1), n)
        cm = bool(a.get("ceil_mode", False))
        sp = [_conv_out(x[len(x) - n + j], k[j], s[j], p[j], d[j], cm) for j in range(n)]
        return list(x[:len(x) - n]) + sp
    if op.startswith("AdaptiveAvgPool") or op.startswith("AdaptiveMaxPool"):
        n = _conv_dims(op)
        if x is None:
            return None
        o = _tup(a.get("output_size"), n)
        sp = [x[len(x) - n + j] if o[j] is None else o[j] for j in range(n)]
        return list(x[:len(x) - n]) + sp
    if op == "Unfold":
        if x is None:
            return None
        k, s, d = _tup(a.get("kernel_size"), 2), _tup(a.get("stride", 1), 2), _tup(a.get("dilation", 1), 2)
        p = _tup(a.get("padding", 0), 2)
        blocks = 1
        for j in range(2):
            blocks = dim_mul(blocks, _conv_out(x[len(x) - 2 + j], k[j], s[j], p[j], d[j]))
        return list(x[:len(x) - 3]) + [dim_mul(x[len(x) - 3], k[0] * k[1]), blocks]
    if op == "Flatten":
        if x is None:
            return None
        r = len(x)
        s, e = _norm_dim(a.get("start_dim", 1), r), _norm_dim(a.get("end_dim", -1), r)
        if s is None or e is None:
            return None
        return list(x[:s]) + [prod(x[s:e + 1])] + list(x[e + 1:])
    if op == "Unflatten":
        if x is None:
            return None
        d = _norm_dim(a.get("dim"), len(x))
        return list(x[:d]) + list(a.get("unflattened_size")) + list(x[d + 1:])
    if op in ("Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d"):
        if x is None:
            return None
        n = len(x) - 2
        size, sf = a.get("size"), a.get("scale_factor")
        if size is not None:
            return list(x[:2]) + _tup(size, n)
        if sf is not None:
            sf = _tup(sf, n)
            out = []
            for j in range(n):
                L = x[2 + j]
                if is_int(L):
                    out.append(int(math.floor(L * sf[j])))
                elif float(sf[j]).is_integer() and L is not None:
                    out.append(dim_mul(L, int(sf[j])))
                else:
                    out.append(None)
            return list(x[:2]) + out
        return None
    if op in ("Embedding",):
        return None if x is None else list(x) + [a.get("embedding_dim")]
    if op == "EmbeddingBag":
        return None if x is None else [x[0], a.get("embedding_dim")]
    if op == "PixelShuffle":
        r = a.get("upscale_factor")
        if x is None:
            return None
        return list(x[:-3]) + [dim_floordiv(x[-3], r * r), dim_mul(x[-2], r), dim_mul(x[-1], r)]
    if op == "PixelUnshuffle":
        r = a.get("downscale_factor")
        if x is None:
            return None
        return list(x[:-3]) + [dim_mul(x[-3], r * r), dim_floordiv(x[-2], r), dim_floordiv(x[-1], r)]
    if "Pad" in op and op[-2:] in ("1d", "2d", "3d"):
        if x is None:
            return None
        n = int(op[-2])
        p = a.get("padding")
        p = _tup(p, 2 * n)
        out = list(x)
        for j in range(n):
            idx = len(x) - 1 - j
            out[idx] = dim_add(out[idx], p[2 * j] + p[2 * j + 1]) if out[idx] is not None else None
        return out
    if op == "MultiheadAttention":
        if x is None:
            return [None, None]
        bf = a.get("batch_first", False)
        key = shapes[1] if len(shapes) > 1 else None
        out = list(x[:-1]) + [a.get("embed_dim")]
        if key is None:
            return [out, None]
        if len(x) == 3:
            if bf:
                w = [x[0], x[1], key[1]]
            else:
                w = [x[1], x[0], key[0]]
        else:
            w = [x[0], key[0]]
        return [out, w]
    if op in ("LSTM", "GRU", "RNN"):
        if x is None:
            return [None, None, None] if op == "LSTM" else [None, None]
        h = a.get("hidden_size")
        proj = a.get("proj_size", 0) if op == "LSTM" else 0
        dirs = 2 if a.get("bidirectional") else 1
        layers = a.get("num_layers", 1)
        oh = proj or h
        bf = a.get("batch_first", False)
        if len(x) == 3:
            b = x[0] if bf else x[1]
            out = list(x[:-1]) + [dim_mul(oh, dirs)]
            hn = [dim_mul(layers, dirs), b, oh]
            cn = [dim_mul(layers, dirs), b, h]
        else:
            out = [x[0], dim_mul(oh, dirs)]
            hn = [dim_mul(layers, dirs), oh]
            cn = [dim_mul(layers, dirs), h]
        return [out, hn, cn] if op == "LSTM" else [out, hn]
    if op == "TransformerDecoderLayer":
        return None if x is None else list(x)
    # ---- tensor ops
    if op in ("Add", "Sub", "Mul", "Div"):
        return broadcast(x, shapes[1] if len(shapes) > 1 else None)
    if op == "MatMul":
        y = shapes[1] if len(shapes) > 1 else None
        if x is None or y is None:
            return None
        if len(x) == 1 and len(y) == 1:
            return []
        if len(y) == 1:
            return list(x[:-1])
        if len(x) == 1:
            return list(y[:-2]) + [y[-1]]
        batch = broadcast(x[:-2], y[:-2])
        return (batch or []) + [x[-2], y[-1]]
    if op in ("Concat", "Stack"):
        if any(s is None for s in shapes) or not shapes:
            return None
        r = len(shapes[0]) + (1 if op == "Stack" else 0)
        d = _norm_dim(a.get("dim", 0), r)
        if d is None:
            return None
        if op == "Stack":
            return list(shapes[0][:d]) + [len(shapes)] + list(shapes[0][d:])
        out = list(shapes[0])
        tot = 0
        for s in shapes:
            tot = None if tot is None or s[d] is None else dim_add(tot, s[d])
        out[d] = tot
        return out
    if op == "Split":
        if x is None:
            return None
        d = _norm_dim(a.get("dim", 0), len(x))
        ss = a.get("split_size_or_sections")
        L = x[d] if d is not None else None
        if isinstance(ss, (list, tuple)):
            sizes = list(ss)
        elif is_int(ss) and is_int(L):
            sizes = [ss] * (L // ss) + ([L % ss] if L % ss else [])
        else:
            return None
        outs = []
        for s in sizes:
            o = list(x)
            o[d] = s
            outs.append(o)
        return outs
    if op == "Reshape":
        shape = list(a.get("shape"))
        if -1 in shape:
            if x is None:
                return [None if v == -1 else v for v in shape]
            known = prod([v for v in shape if v != -1])
            tot = prod(x)
            q = dim_floordiv(tot, known) if (known is not None and tot is not None) else None
            shape = [q if v == -1 else v for v in shape]
        return shape
    if op == "Permute":
        if x is None:
            return None
        dims = [_norm_dim(d, len(x)) for d in a.get("dims")]
        return [x[d] for d in dims]
    if op == "Transpose":
        if x is None:
            return None
        d0, d1 = _norm_dim(a.get("dim0"), len(x)), _norm_dim(a.get("dim1"), len(x))
        out = list(x)
        out[d0], out[d1] = out[d1], out[d0]
        return out
    if op in ("Mean", "Sum", "Amax", "Amin"):
        if x is None:
            return None
        dim = a.get("dim")
        keep = a.get("keepdim", False)
        if dim is None:
            return [1] * len(x) if keep else []
        dims = dim if isinstance(dim, (list, tuple)) else [dim]
        dims = {_norm_dim(d, len(x)) for d in dims}
        return [1 if i in dims else v for i, v in enumerate(x) if keep or i not in dims]
    if op == "Unsqueeze":
        if x is None:
            return None
        d = a.get("dim")
        r = len(x) + 1
        d = d + r if d < 0 else d
        return list(x[:d]) + [1] + list(x[d:])
    if op == "Squeeze":
        if x is None:
            return None
        d = a.get("dim")
        if d is None:
            return [v for v in x if not (is_int(v) and v == 1)]
        d = _norm_dim(d, len(x))
        if is_int(x[d]) and x[d] == 1:
            return list(x[:d]) + list(x[d + 1:])
        return list(x)
    if op == "Select":
        if x is None:
            return None
        d = _norm_dim(a.get("dim"), len(x))
        return list(x[:d]) + list(x[d + 1:])
    if op == "Slice":
        if x is None:
            return None
        d = _norm_dim(a.get("dim"), len(x))
        L = x[d]
        st, en, sp = a.get("start", 0), a.get("end"), a.get("step", 1) or 1
        out = list(x)
        if is_int(L):
            out[d] = len(range(L)[slice(st, en, sp)])
        elif is_int(st) and is_int(en) and st >= 0 and en >= 0 and en < 2 ** 62:
            out[d] = len(range(st, en, sp))
        else:
            out[d] = None
        return out
    if op == "Expand":
        shape = list(a.get("shape"))
        if x is None:
            return [None if v == -1 else v for v in shape]
        off = len(shape) - len(x)
        return [x[i - off] if (v == -1 and i >= off) else v for i, v in enumerate(shape)]
    if op == "Constant":
        return list(a.get("shape") or [])
    if op == "Arange":
        return [a.get("end")]
    if op == "Parameter":
        return list(a.get("shape") or [])
    return None

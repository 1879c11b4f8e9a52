"""torch.nn's constructor surface as the parser needs it: argument defaults (for
positional arguments and for leaving defaults out of a design) and the shapes of a
leaf's learned tensors (`self.fc.weight`).  Output shapes are the op table's
(`infer` runs core/ops' shape rule); an op the table lacks is not emitted.
Shapes are lists of sizes (ints or `values.Sym`); ``None`` for a whole shape means
the rank is unknown.
"""

from __future__ import annotations

from .nn_sigs import SIGS
from .values import Sym, dim_eq, dim_floordiv, dim_mul, from_dim, is_int, prod

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
    """Number of learned scalars of one op, or None when a size is unknown: the op table's count
    (core/ops, the one the verifier and the cost use) when it has the op."""
    from ..ops import OP_TABLE

    spec = OP_TABLE.get(op)
    if spec is not None:
        try:
            a, missing, _ = spec.resolve_args({k: _table_arg(v) for k, v in (args or {}).items()
                                               if k in spec.arg_names})
            n = None if missing else spec.params(a)
            if n is not None and (args or {}).get("weight_norm"):
                from ..shapes import weight_rows

                n += weight_rows(op, a)  # the node's parametrize: one magnitude per slice of dim 0
        except (TypeError, ValueError, KeyError, ZeroDivisionError, AttributeError):
            n = None
        return n if is_int(n) else None
    return _shape_count(op, args)


def own_bias_count(op, args):
    """What a layer that shares another layer's weight still owns (a tied LM head keeps its bias)."""
    a = dict(args or {})
    if not a.get("bias", True):
        return 0
    full = param_count(op, a)
    bare = param_count(op, dict(a, bias=False))
    return None if full is None or bare is None else full - bare


def _shape_count(op, args):
    total = 0
    for _, shape in param_shapes(op, args):
        n = prod(shape) if shape else 1
        if not is_int(n):
            return None
        total += n
    return total


# ---------------------------------------------------------------- shapes
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


MULTI_RESULT = {"LSTM", "GRU", "RNN", "MultiheadAttention", "Split"}


class _Node:
    __slots__ = ("id", "op")

    def __init__(self, op):
        self.id, self.op = "parse", op


def _table_dim(d):
    return d.expr if isinstance(d, Sym) else d if (is_int(d) or d is None) else None


def _table_arg(v):
    if isinstance(v, Sym):
        return v.expr
    if isinstance(v, (list, tuple)):
        return type(v)(_table_arg(x) for x in v)
    return v


def infer(op, a, shapes, dtypes=None):
    """Output shape (or list of shapes for multi-result ops) of op with full args a: the op table's
    shape rule (core/ops) when it has the op, the same rule the verifier runs."""
    from ..ops import OP_TABLE
    from ..ops.base import InferCtx, TensorType

    spec = OP_TABLE.get(op)
    if spec is not None:
        try:
            args, missing, _unknown = spec.resolve_args({k: _table_arg(v) for k, v in a.items()
                                                         if k in spec.arg_names})
            if not missing:
                ins = [TensorType(None if sh is None else tuple(_table_dim(d) for d in sh),
                                  (dtypes[i] if dtypes and i < len(dtypes) else "float32"))
                       for i, sh in enumerate(shapes)]
                outs = spec.infer(InferCtx(_Node(op), args, ins))
                res = [None if t.shape is None else [from_dim(d) for d in t.shape] for t in outs]
                return res if op in MULTI_RESULT else (res[0] if res else None)
        except (TypeError, ValueError, IndexError, ZeroDivisionError, KeyError, AttributeError):
            return None
    return None  # not an op of the table: the parser does not emit it (see emit_module / emit_op)

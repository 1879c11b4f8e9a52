"""Corruption kinds: block kinds about shapes, and the shape warns."""

from __future__ import annotations

from ...checks.shape import SHAPE_SILENT_BROADCAST
from ...graph import parse_ref
from ...ops import OP_TABLE, ops_with
from ...ops.rules import (
    SHAPE_ARITY,
    SHAPE_ATTENTION_MASK,
    SHAPE_ATTENTION_WIDTH,
    SHAPE_BROADCAST,
    SHAPE_CHANNEL_DIVISIBILITY,
    SHAPE_CONCAT_SIZES,
    SHAPE_CONV_CHANNELS,
    SHAPE_CONV_GROUPS,
    SHAPE_DIM_RANGE,
    SHAPE_EINOPS_PATTERN,
    SHAPE_EINSUM_SIZES,
    SHAPE_EXPAND,
    SHAPE_FLATTEN_LINEAR_WIDTH,
    SHAPE_FOLD_BLOCKS,
    SHAPE_GATHER_SIZES,
    SHAPE_GLU_ODD,
    SHAPE_GROUPNORM_DIVISIBILITY,
    SHAPE_HEADS_DIVISIBILITY,
    SHAPE_INDEX_RANGE,
    SHAPE_KERNEL_TOO_LARGE,
    SHAPE_LINEAR_WIDTH,
    SHAPE_MATMUL_INNER,
    SHAPE_MEMORY_LAYOUT,
    SHAPE_NORM_FEATURES,
    SHAPE_PAD_SIZE,
    SHAPE_POOL_PADDING,
    SHAPE_RANK,
    SHAPE_RESHAPE_PRODUCT,
    SHAPE_RNN_INPUT_SIZE,
    SHAPE_RNN_STATE,
    SHAPE_SHARES_MISMATCH,
    SHAPE_SINGLE_VALUE_STATISTICS,
    SHAPE_SPATIAL_COLLAPSE,
    SHAPE_SPLIT_SIZES,
)
from .base import (
    ACTIVATIONS,
    ATTN,
    BNS,
    CONVS,
    CONVS_ALL,
    POOLS,
    RNNS,
    SINGLE_STATE_RNNS,
    _const,
    _first_operand_shape,
    _of,
    branch,
    constant,
    kind,
    maps,
    shape_of,
)

TRANSPOSED = CONVS_ALL - CONVS
# the layers that also take an unbatched input one dim short (a 2-D Conv1d input, a 2-D RNN input)
UNBATCHED_2D = RNNS | frozenset(c for c in CONVS if OP_TABLE[c].name.endswith("1d"))
# the ops whose dim argument the dim-range kind pushes past the tensor's rank: `dim`, Transpose's dim0,
# Flatten's start_dim
DIM_OPS = ops_with("softmax") | ops_with("joins-values") | \
    frozenset(t for t in ops_with("permutes") if "dim0" in OP_TABLE[t].arg_names) | \
    frozenset(f for f in ops_with("flattens") if "start_dim" in OP_TABLE[f].arg_names)
# unary ops that a stray operand breaks, and the Add / Sub a lost operand breaks
ARITY_SITES = ACTIVATIONS | ops_with("dropout") | ops_with("adds")
# the layers whose input width or channels a `shares` reuse fixes
SHAREABLE = frozenset(w for w in ops_with("weighted") if OP_TABLE[w].arity == (1, 1))


def _heads_apply(g, site):
    a = g.args(site)
    key_e, key_h = ("embed_dim", "num_heads") if g.node(site)["op"] == "MultiheadAttention" else ("d_model", "nhead")
    e, h = a[key_e], a.get(key_h)
    cand = h + 1
    while e % cand == 0:
        cand += 1
    a[key_h] = cand
    return g.d


@kind("head-divisibility", "block", [SHAPE_HEADS_DIVISIBILITY],
     bases=("vit_b_32", "tiny_transformer_lm", "transformer", "vit_b_16"), per_base=2,
     doc="an attention layer's head count no longer divides its width", apply=_heads_apply)
def _heads_sites(g):
    return _of(g, ATTN)


def _linear_apply(g, site):
    a = g.args(site)
    a["in_features"] = a["in_features"] * 2
    return g.d


@kind("linear-width", "block", [SHAPE_LINEAR_WIDTH, SHAPE_FLATTEN_LINEAR_WIDTH],
     bases=("resnet18", "mlp_mnist", "gpt-nano", "char_rnn", "vgg11", "lenet5", "mixer_s16_224", "text_cnn",
            "mobilenet_v3_small", "cifar_cnn", "seq2seq_gru"), per_base=2,
     doc="a Linear's in_features is twice what reaches it", apply=_linear_apply)
def _linear_sites(g):
    return [n for n in _of(g, ("Linear",)) if _const((_first_operand_shape(g, n) or (None,))[-1])]


def _conv_ch_apply(g, site):
    a = g.args(site)
    a["in_channels"] = a["in_channels"] * 2
    return g.d


@kind("conv-channels", "block", [SHAPE_CONV_CHANNELS],
     bases=("resnet18", "mobilenet_v2", "vgg11", "squeezenet1_1", "unet", "lenet5", "efficientnet_b0",
            "shufflenet_v2_x0_5", "text_cnn", "conv_autoencoder", "resnet20_cifar", "mnasnet0_5"), per_base=2,
     doc="a convolution expects twice the channels it receives", apply=_conv_ch_apply)
def _conv_ch_sites(g):
    return [n for n in _of(g, CONVS_ALL) if _const(*((_first_operand_shape(g, n) or (None, None))[1:2]))]


def _norm_apply(g, site):
    n = g.node(site)
    a = g.args(site)
    if n["op"] in BNS:
        a["num_features"] = a["num_features"] * 2
    elif n["op"] == "GroupNorm":
        a["num_channels"] = a["num_channels"] * 2
    else:
        ns = a["normalized_shape"]
        a["normalized_shape"] = (ns[:-1] + [ns[-1] * 2]) if isinstance(ns, list) else ns * 2
    return g.d


@kind("norm-features", "block", [SHAPE_NORM_FEATURES],
     bases=("resnet18", "mobilenet_v2", "vgg11_bn", "gpt-nano", "vit_b_32", "convnext_tiny", "mixer_s16_224",
            "tiny_transformer_lm", "resnet20_cifar", "cifar_cnn"), per_base=2,
     doc="a BatchNorm / LayerNorm normalises twice the features it receives", apply=_norm_apply)
def _norm_sites(g):
    return _of(g, ops_with("affine"))


def _conflicts(a, b) -> bool:
    """Known not to broadcast (two constants differ where neither is 1), same rank."""
    if a is None or b is None or len(a) != len(b):
        return False
    return any(_const(x, y) and x != y and x != 1 and y != 1 for x, y in zip(a, b))


def _residual_partner(g, site):
    """The closest earlier node whose result cannot broadcast with the Add's first operand."""
    n = g.node(site)
    want = g.shape(n["in"][0])
    i = g.index(site)
    for prev in reversed(g.nodes[:i]):
        if prev["id"] in [parse_ref(r)[0] for r in n["in"]]:
            continue
        res = g.types().get(prev["id"]) or []
        if len(res) == 1 and _conflicts(want, res[0].shape):
            return prev["id"]
    return None


def _residual_apply(g, site):
    partner = _residual_partner(g, site)
    if partner is None:
        return None
    n = g.node(site)
    n["in"] = [n["in"][0], partner]
    return g.d


@kind("residual-shape", "block", [SHAPE_BROADCAST],
     bases=("resnet18", "resnet50", "mobilenet_v2", "gpt-nano", "convnext_tiny", "resnet20_cifar",
            "efficientnet_b0", "vit_b_32", "mnasnet0_5"), per_base=2,
     doc="a residual Add's shortcut reads a tensor of another shape (the projection was lost)", apply=_residual_apply)
def _residual_sites(g):
    out = []
    for n in g.nodes:
        if n["op"] != "Add" or len(n.get("in", [])) != 2:
            continue
        a, b = g.shape(n["in"][0]), g.shape(n["in"][1])
        if a is None or b is None or a != b or len(a) < 2:
            continue
        if _residual_partner(g, n["id"]) is not None:
            out.append(n["id"])
    return out


def _concat_cut(g, site):
    n = g.node(site)
    last = n["in"][-1]
    shape = g.shape(last)
    if shape is None:
        return None
    dim = n.get("args", {}).get("dim", 0) % len(shape)
    for d in range(len(shape) - 1, -1, -1):
        if d != dim and _const(shape[d]) and shape[d] >= 2:
            return d, shape[d]
    return None


def _concat_apply(g, site):
    cut = _concat_cut(g, site)
    if cut is None:
        return None
    d, size = cut
    n = g.node(site)
    g.insert_after(n["in"][-1], "Slice", {"dim": d, "start": 0, "end": size // 2}, consumer=site)
    return g.d


@kind("concat-sizes", "block", [SHAPE_CONCAT_SIZES],
     bases=("densenet121", "squeezenet1_1", "shufflenet_v2_x0_5", "unet", "text_cnn", "vit_b_32", "seq2seq_gru",
            "squeezenet1_0"), per_base=2,
     doc="one branch of a Concat is cropped off the joined dimension", apply=_concat_apply)
def _concat_sites(g):
    out = []
    for n in g.nodes:
        if n["op"] != "Concat" or len(n.get("in", [])) < 2:
            continue
        if _concat_cut(g, n["id"]) is not None:
            out.append(n["id"])
    return out


def _collapse_apply(g, site):
    n = g.node(site)
    a = g.args(site)
    if n["op"] in TRANSPOSED:
        # output = (L-1)s - 2p + d(k-1) + output_padding + 1: pad past it
        s = _first_operand_shape(g, site)
        k = a["kernel_size"] if isinstance(a["kernel_size"], int) else a["kernel_size"][0]
        stride = a.get("stride", 1) if isinstance(a.get("stride", 1), int) else a["stride"][0]
        size = s[-1] if s is not None and _const(s[-1]) else 1
        a["padding"] = ((size - 1) * stride + k) // 2 + 1
        return g.d
    # pooling stages added after this one until the map is gone (2-wide windows on a map that
    # ends up 1 wide)
    out = g.shape(site)
    n_sp = 2 if "2d" in n["op"] else 1
    size = min(out[-n_sp:])
    cur = site
    while size >= 1:
        size = (size - 2) // 2 + 1
        cur = g.insert_after(cur, "MaxPool2d" if n_sp == 2 else "MaxPool1d", {"kernel_size": 2},
                             suffix="extra_pool")
    return g.d


@kind("spatial-collapse", "block", [SHAPE_SPATIAL_COLLAPSE],
     bases=("lenet5", "cifar_cnn", "vgg11", "alexnet", "conv_autoencoder", "unet", "mnist_cnn", "resnet18"),
     per_base=2, doc="pooling stages added until the feature map reaches size 0, or a transposed convolution "
                     "padded past its output", apply=_collapse_apply)
def _collapse_sites(g):
    out = []
    for n in g.nodes:
        if n["op"] in POOLS:
            s = g.shape(n["id"])
            if s is not None and len(s) >= 3 and _const(*s[2:]):
                out.append(n["id"])
        elif n["op"] in TRANSPOSED:
            out.append(n["id"])
    return out


def _reshape_apply(g, site):
    n = g.node(site)
    key = "unflattened_size" if n["op"] == "Unflatten" else "shape"
    sizes = list(n["args"][key])
    i = max(range(len(sizes)), key=lambda j: sizes[j] if isinstance(sizes[j], int) else -2)
    sizes[i] = sizes[i] + 1 if sizes[i] != -1 else 3
    n["args"][key] = sizes
    return g.d


@kind("reshape-product", "block", [SHAPE_RESHAPE_PRODUCT],
     bases=("gpt-nano", "shufflenet_v2_x0_5", "mlp_autoencoder", "distilbert-base-uncased", "gpt2"), per_base=2,
     doc="a reshape's target holds one more row than its input", apply=_reshape_apply)
def _reshape_sites(g):
    out = []
    for n in g.nodes:
        if n["op"] == "Unflatten":
            s = _first_operand_shape(g, n["id"])
            if s is not None and _const(s[n["args"]["dim"]]):
                out.append(n["id"])
        elif n["op"] == "Reshape":
            s = _first_operand_shape(g, n["id"])
            if s is not None and _const(*s):
                out.append(n["id"])
    return out


def _rank_apply(g, site):
    n = g.node(site)
    # a flatten left in by mistake: 2-D into a layer that needs 4-D; 1-D into the layers that also
    # take an unbatched 2-D input (Conv1d, RNNs)
    start = 0 if n["op"] in UNBATCHED_2D else 1
    g.insert_after(n["in"][0], "Flatten", {"start_dim": start}, consumer=site, suffix="flatten")
    return g.d


@kind("rank", "block", [SHAPE_RANK],
     bases=("resnet18", "vgg11", "mobilenet_v2", "lenet5", "char_rnn", "text_cnn"), per_base=2,
     doc="a stray Flatten gives a convolution / BatchNorm / RNN too few dimensions", apply=_rank_apply)
def _rank_sites(g):
    out = []
    for n in _of(g, CONVS | BNS | RNNS):
        s = _first_operand_shape(g, n)
        if s is not None and len(s) >= 3:
            out.append(n)
    return out


def _groups_apply(g, site):
    a = g.args(site)
    c = a["in_channels"]
    grp = 2
    while c % grp == 0:
        grp += 1
    a["groups"] = grp
    return g.d


@kind("conv-groups", "block", [SHAPE_CONV_GROUPS],
     bases=("resnet18", "mobilenet_v2", "resnext50_32x4d", "vgg11", "efficientnet_b0"), per_base=2,
     doc="a convolution's groups does not divide its channels", apply=_groups_apply)
def _groups_sites(g):
    return [n for n in _of(g, CONVS) if g.args(n).get("in_channels", 0) > 2]


def _ktl_apply(g, site):
    a = g.args(site)
    s = _first_operand_shape(g, site)
    a["padding"] = 0
    a["kernel_size"] = max(s[2:]) + 1
    return g.d


@kind("kernel-too-large", "block", [SHAPE_KERNEL_TOO_LARGE],
     bases=("resnet18", "lenet5", "cifar_cnn", "mnist_cnn", "vgg11", "tiny_cnn"), per_base=2,
     doc="a convolution's kernel is wider than the map it slides over", apply=_ktl_apply)
def _ktl_sites(g):
    out = []
    for n in _of(g, CONVS):
        s = _first_operand_shape(g, n)
        if s is not None and len(s) >= 3 and _const(*s[2:]) and min(s[2:]) <= 32:
            out.append(n)
    return out


def _pool_pad_apply(g, site):
    a = g.args(site)
    k = a["kernel_size"] if isinstance(a["kernel_size"], int) else max(a["kernel_size"])
    a["padding"] = k // 2 + 1
    return g.d


@kind("pool-padding", "block", [SHAPE_POOL_PADDING],
     bases=("resnet18", "vgg11", "lenet5", "densenet121", "cifar_cnn", "alexnet"), per_base=1,
     doc="a pooling layer padded by more than half its window", apply=_pool_pad_apply)
def _pool_pad_sites(g):
    return [n["id"] for n in g.nodes if n["op"] in POOLS]


def _gn_apply(g, site):
    n = g.node(site)
    c = n["args"]["num_features"]
    grp = 3
    while c % grp == 0:
        grp += 2
    n["op"] = "GroupNorm"
    n["args"] = {"num_groups": grp, "num_channels": c}
    return g.d


@kind("groupnorm-divisibility", "block", [SHAPE_GROUPNORM_DIVISIBILITY],
     bases=("resnet18", "mobilenet_v2", "unet", "resnet20_cifar"), per_base=2,
     doc="a BatchNorm swapped for a GroupNorm whose group count does not divide the channels", apply=_gn_apply)
def _gn_sites(g):
    out = []
    for n in _of(g, ("BatchNorm2d",)):
        if g.args(n).get("num_features", 0) >= 8:
            out.append(n)
    return out


def _attn_width_apply(g, site):
    a = g.args(site)
    key_e, key_h = ("embed_dim", "num_heads") if g.node(site)["op"] == "MultiheadAttention" else ("d_model", "nhead")
    e, h = a[key_e], a[key_h]
    new = e // 2 if (e // 2) % h == 0 else e * 2
    a[key_e] = new
    return g.d


@kind("attention-width", "block", [SHAPE_ATTENTION_WIDTH],
     bases=("vit_b_32", "tiny_transformer_lm", "transformer"), per_base=2,
     doc="an attention layer's width differs from the tokens it reads", apply=_attn_width_apply)
def _attn_width_sites(g):
    return _of(g, ATTN)


def _rnn_apply(g, site):
    a = g.args(site)
    a["input_size"] = a["input_size"] * 2
    return g.d


@kind("rnn-input-size", "block", [SHAPE_RNN_INPUT_SIZE],
     bases=("char_rnn", "lstm_lm", "gru_lm", "seq2seq_gru"), per_base=2,
     doc="a recurrent layer expects twice the features it receives", apply=_rnn_apply)
def _rnn_sites(g):
    return _of(g, RNNS)


def _matmul_cut(g, site):
    ins = g.node(site)["in"]
    a, b = g.shape(ins[0]), g.shape(ins[1])
    if a is None or b is None or len(a) < 2 or len(b) < 2:
        return None
    if _const(a[-1]) and a[-1] >= 2:
        return 0, len(a) - 1, a[-1]
    if _const(b[-2]) and b[-2] >= 2:
        return 1, len(b) - 2, b[-2]
    return None


def _matmul_apply(g, site):
    cut = _matmul_cut(g, site)
    if cut is None:
        return None
    which, dim, size = cut
    ref = g.node(site)["in"][which]
    g.insert_after(ref, "Slice", {"dim": dim, "start": 0, "end": size // 2}, consumer=site, suffix="crop")
    return g.d


@kind("matmul-inner", "block", [SHAPE_MATMUL_INNER],
     bases=("gpt-nano", "seq2seq_gru", "distilbert-base-uncased"), per_base=2,
     doc="one operand of a matrix product is cropped along the inner dimension", apply=_matmul_apply)
def _matmul_sites(g):
    out = []
    for n in g.nodes:
        if n["op"] == "MatMul" and _matmul_cut(g, n["id"]) is not None:
            out.append(n["id"])
    return out


def _split_apply(g, site):
    n = g.node(site)
    s = _first_operand_shape(g, site)
    size = s[n["args"].get("dim", 0)]
    sec = n["args"]["split_size_or_sections"]
    if isinstance(sec, int):
        sec = [sec] * (size // sec) + ([size % sec] if size % sec else [])
    sec = list(sec)
    sec[-1] += 1
    n["args"]["split_size_or_sections"] = sec
    return g.d


@kind("split-sizes", "block", [SHAPE_SPLIT_SIZES],
     bases=("gpt-nano", "shufflenet_v2_x0_5", "gpt2"), per_base=2,
     doc="a Split's sections add up to one more than the dimension", apply=_split_apply)
def _split_sites(g):
    out = []
    for n in g.nodes:
        if n["op"] == "Split":
            s = _first_operand_shape(g, n["id"])
            if s is not None and _const(s[n["args"].get("dim", 0)]):
                out.append(n["id"])
    return out


def _dim_apply(g, site):
    n = g.node(site)
    r = len(_first_operand_shape(g, site))
    a = n.setdefault("args", {})
    if n["op"] == "Transpose":
        a["dim1"] = r
    elif n["op"] == "Flatten":
        a["start_dim"] = r + 1
        a["end_dim"] = -1
    else:
        a["dim"] = r
    return g.d


@kind("dim-range", "block", [SHAPE_DIM_RANGE],
     bases=("gpt-nano", "mnist_cnn", "text_cnn", "seq2seq_gru", "squeezenet1_1", "resnet18", "mixer_s16_224"),
     per_base=2, doc="a dim argument names a dimension the tensor does not have", apply=_dim_apply)
def _dim_sites(g):
    out = []
    for n in g.nodes:
        if n["op"] in DIM_OPS and \
                _first_operand_shape(g, n["id"]) is not None:
            out.append(n["id"])
    return out


def _select_apply(g, site):
    n = g.node(site)
    s = _first_operand_shape(g, site)
    n["args"]["index"] = s[n["args"]["dim"]]
    return g.d


@kind("select-index", "block", [SHAPE_INDEX_RANGE],
     bases=("vit_b_32", "vit_b_16", "bert-base-uncased"),
     doc="Select picks the index one past the end of its dimension", apply=_select_apply)
def _select_sites(g):
    return [n["id"] for n in g.nodes if n["op"] == "Select"
            and _const((_first_operand_shape(g, n["id"]) or [None] * 8)[n["args"]["dim"]])]


def _expand_apply(g, site):
    n = g.node(site)
    s = _first_operand_shape(g, site)
    shape = list(n["args"]["shape"])
    pad = len(shape) - len(s)
    for i in range(len(shape) - 1, -1, -1):
        src = s[i - pad] if i >= pad else None
        if _const(src) and src > 1:
            shape[i] = src * 2
            break
    else:
        return None
    n["args"]["shape"] = shape
    return g.d


@kind("expand", "block", [SHAPE_EXPAND], bases=("vit_b_32", "vit_b_16", "vit_l_16"),
     doc="Expand asks a dimension that is not 1 to grow", apply=_expand_apply)
def _expand_sites(g):
    return [n["id"] for n in g.nodes if n["op"] == "Expand"]


def _arity_apply(g, site):
    n = g.node(site)
    if n["op"] == "Add":
        n["in"] = n["in"][:1]  # one operand of the residual lost
    else:
        n["in"] = n["in"] + n["in"][:1]
    return g.d


@kind("arity", "block", [SHAPE_ARITY], bases=("resnet18", "gpt-nano", "mlp_mnist", "mobilenet_v2"), per_base=2,
     doc="a node lists one operand too many (unary op) or too few (Add)", apply=_arity_apply)
def _arity_sites(g):
    return [n["id"] for n in g.nodes if n["op"] in ARITY_SITES and n.get("in")]


def _width_read(g, n):
    """The input width a Linear / the input channels a convolution is fed (None when not constant)."""
    s = g.shape(n["in"][0]) if n.get("in") else None
    if s is None:
        return None
    w = s[-1] if n["op"] == "Linear" else (s[1] if len(s) > 1 else None)
    return w if _const(w) else None


def _shares_apply(g, site):
    # the layer now runs as an earlier one (torch calls the one module twice), whose input width differs
    n = g.node(site)
    key = "in_features" if n["op"] == "Linear" else "in_channels"
    for prev in g.nodes[:g.index(site)]:
        if prev["op"] == n["op"] and not prev.get("shares") and \
                prev.get("args", {}).get(key) not in (None, _width_read(g, n)):
            n["shares"] = prev["id"]
            return g.d
    return None


@kind("shares-mismatch", "block", [SHAPE_LINEAR_WIDTH, SHAPE_CONV_CHANNELS, SHAPE_FLATTEN_LINEAR_WIDTH],
     bases=("resnet18", "mlp_mnist", "lenet5", "gpt-nano"), per_base=2,
     doc="a layer reuses ('shares') an earlier layer that expects another input width", apply=_shares_apply)
def _shares_sites(g):
    out = []
    seen: dict = {}
    for n in g.nodes:
        if n["op"] not in SHAREABLE or n.get("shares"):
            continue
        key = "in_features" if n["op"] == "Linear" else "in_channels"
        width = _width_read(g, n)
        if width is not None and any(g.node(p).get("args", {}).get(key) not in (None, width)
                                     for p in seen.get(n["op"], [])):
            out.append(n["id"])
        seen.setdefault(n["op"], []).append(n["id"])
    return out


def _residual_sites_any(g):
    return [n["id"] for n in g.nodes if n["op"] == "Add" and len(n.get("in", [])) == 2
            and g.shape(n["in"][0]) is not None and g.shape(n["in"][0]) == g.shape(n["in"][1])]


def _bcast_apply(g, site):
    n = g.node(site)
    s = g.shape(n["in"][1])
    dims = list(range(2, len(s))) if len(s) == 4 else [1]
    # the first position only, kept to size 1 (not a mean: a statistic broadcast back is an idiom the rule
    # exempts, as global-context blocks add one on purpose)
    ref = n["in"][1]
    for d in dims:
        ref = g.insert_after(ref, "Slice", {"dim": d, "start": 0, "end": 1}, consumer=site, suffix="first")
    return g.d


@kind("silent-broadcast", "warn", [SHAPE_SILENT_BROADCAST],
     bases=("resnet18", "gpt-nano", "resnet20_cifar", "mobilenet_v2", "convnext_tiny"), per_base=1,
     doc="a residual's shortcut is cut to its first position along the map / sequence and broadcast back",
     apply=_bcast_apply)
def _bcast_sites(g):
    out = []
    for nid in _residual_sites_any(g):
        s = g.shape(g.node(nid)["in"][1])
        if s is None or len(s) < 3:
            continue
        pooled = s[2:] if len(s) == 4 else s[1:2]
        if any(d != 1 for d in pooled):  # a map / sequence that is really averaged away
            out.append(nid)
    return out



# ---- block: layers the zoo does not use, called where they cannot run ---------------------------

def _glu_apply(g, site):
    s = shape_of(g, site)
    d = next(i for i in range(len(s) - 1, 0, -1) if _const(s[i]) and s[i] % 2)
    branch(g, site, "GLU", {"dim": d}, suffix="glu")
    return g.d


@kind("glu-odd", "block", [SHAPE_GLU_ODD], bases=("resnet18", "lenet5", "vit_b_32", "cifar_cnn"),
      doc="a GLU halves a dimension of odd size", apply=_glu_apply)
def _glu_sites(g):
    return maps(g, 4, lambda s: any(_const(d) and d % 2 and d > 1 for d in s[1:]))[:6]


def _shuffle_apply(g, site):
    branch(g, site, "PixelShuffle", {"upscale_factor": 2}, suffix="shuffle")
    return g.d


@kind("pixel-shuffle-channels", "block", [SHAPE_CHANNEL_DIVISIBILITY], bases=("resnet18", "tiny_cnn", "lenet5"),
      doc="a PixelShuffle(2) on a map whose channels are not a multiple of 4", apply=_shuffle_apply)
def _shuffle_sites(g):
    return maps(g, 4, lambda s: _const(s[1]) and s[1] % 4)[:4]


def _layout_apply(g, site):
    s = shape_of(g, site)
    split = branch(g, site, "Unflatten", {"dim": 3, "unflattened_size": [s[3] // 2, 2]}, suffix="split")
    swapped = branch(g, split, "Transpose", {"dim0": 3, "dim1": 4}, suffix="swap")
    branch(g, swapped, "LocalResponseNorm", {"size": 2}, suffix="lrn")
    return g.d


@kind("permuted-into-view", "block", [SHAPE_MEMORY_LAYOUT], bases=("resnet18", "tiny_cnn", "cifar_cnn"),
      doc="a LocalResponseNorm over a feature map split and transposed in place of being copied: its view "
          "cannot merge the swapped dims", apply=_layout_apply)
def _layout_sites(g):
    return maps(g, 4, lambda s: s[3] >= 4 and s[3] % 2 == 0 and s[1] * s[2] * s[3] <= 1 << 20)[:3]


def _fold_apply(g, site):
    s = shape_of(g, site)
    cols = branch(g, site, "Unfold", {"kernel_size": 2}, suffix="unfold")
    branch(g, cols, "Fold", {"output_size": [s[2] + 1, s[3]], "kernel_size": 2}, suffix="fold")
    return g.d


@kind("fold-blocks", "block", [SHAPE_FOLD_BLOCKS], bases=("resnet18", "tiny_cnn", "cifar_cnn"),
      doc="a Fold told an output size one row larger than the Unfold it reverses", apply=_fold_apply)
def _fold_sites(g):
    return maps(g, 4, lambda s: s[2] >= 2 and s[3] >= 2 and s[1] * s[2] * s[3] <= 1 << 20)[:4]


def _bn_batch_apply(g, site):
    s = shape_of(g, site)
    branch(g, site, "BatchNorm1d", {"num_features": s[1]}, suffix="bn")
    g.train()["batch_size"] = 1
    return g.d


@kind("batch-of-one", "block", [SHAPE_SINGLE_VALUE_STATISTICS], bases=("mlp_mnist", "mlp_tabular", "vae_encoder"),
      doc="a BatchNorm1d after a Linear, trained at a declared batch of 1", apply=_bn_batch_apply)
def _bn_batch_sites(g):
    return [n for n in maps(g, 2) if n in {m["id"] for m in g.nodes if m["op"] == "Linear"}][:3]


def _state_apply(g, site):
    h = g.shape(f"{site}:1")
    if h is None:
        return None
    bad = list(h[:-1]) + [h[-1] + 1]
    g.node(site)["in"] = g.node(site)["in"][:1] + [constant(g, bad, 0.0, site, "h0")]
    return g.d


@kind("rnn-state", "block", [SHAPE_RNN_STATE], bases=("gru_lm", "seq2seq_gru"),
      doc="a GRU given an initial state one unit wider than its hidden size", apply=_state_apply)
def _state_sites(g):
    return [n["id"] for n in g.nodes if n["op"] in SINGLE_STATE_RNNS and len(n.get("in", [])) == 1]


def _mask_apply(g, site):
    q = g.shape(g.node(site)["in"][0])
    if q is None or len(q) != 3 or not _const(q[1]):
        return None
    length = q[1] if g.node(site).get("args", {}).get("batch_first") else q[0]
    if not _const(length):
        return None
    n = g.node(site)
    n["in"] = (n["in"] + n["in"][-1:] * 3)[:3] + [constant(g, [length + 1, length + 1], 0.0, site, "mask")]
    return g.d


@kind("attention-mask-shape", "block", [SHAPE_ATTENTION_MASK], bases=("vit_b_32",), per_base=2,
      doc="an attention mask one position longer than the sequence it masks", apply=_mask_apply)
def _mask_sites(g):
    return [n["id"] for n in g.nodes if n["op"] == "MultiheadAttention"]


def _gather_apply(g, site):
    s = shape_of(g, site)
    # the same shape but one larger at dim 1, which is not the gathered (last) dim
    idx = constant(g, [s[0]] + [s[1] + 1] + list(s[2:]), 0, site, "index")
    branch(g, site, "Gather", {"dim": 0}, extra=(idx,), suffix="gather")
    return g.d


@kind("gather-larger-index", "block", [SHAPE_GATHER_SIZES], bases=("mlp_mnist", "resnet18"),
      doc="a Gather whose index is larger than its input off the gathered dim", apply=_gather_apply)
def _gather_sites(g):
    return maps(g, 2, lambda s: len(s) == 2)[:2] + maps(g, 4)[:2]


def _reflect_apply(g, site):
    s = shape_of(g, site)
    branch(g, site, "ReflectionPad2d", {"padding": [s[3], 0, 0, 0]}, suffix="reflect")
    return g.d


@kind("reflect-pad-too-wide", "block", [SHAPE_PAD_SIZE], bases=("resnet18", "tiny_cnn", "unet"),
      doc="a reflection pad as wide as the map it reflects", apply=_reflect_apply)
def _reflect_sites(g):
    return maps(g, 4, lambda s: s[3] >= 1)[:4]


def _einsum_apply(g, site):
    branch(g, site, "Einsum", {"equation": "ij->ji"}, suffix="einsum")
    return g.d


@kind("einsum-rank", "block", [SHAPE_EINSUM_SIZES], bases=("resnet18", "vit_b_32"),
      doc="an einsum written for a matrix applied to a 4-D map", apply=_einsum_apply)
def _einsum_sites(g):
    return maps(g, 4)[:3]


def _rearrange_apply(g, site):
    branch(g, site, "Rearrange", {"pattern": "a b -> b a"}, suffix="rearrange")
    return g.d


@kind("einops-rank", "block", [SHAPE_EINOPS_PATTERN], bases=("resnet18", "vit_b_32", "mixer_s16_224"),
      doc="an einops Rearrange written for two dims applied to a 4-D map", apply=_rearrange_apply)
def _rearrange_sites(g):
    return maps(g, 4)[:3]


def _tie_bias_apply(g, site):
    n = g.node(site)
    emb = next((m for m in g.nodes if m["op"] == "Embedding"
                and m.get("args", {}).get("embedding_dim") == n.get("args", {}).get("in_features")), None)
    if emb is None:
        return None
    n["shares"] = emb["id"]
    n["args"]["bias"] = True
    n["args"]["out_features"] = emb["args"]["num_embeddings"] + 1
    return g.d


@kind("tied-head-own-bias", "block", [SHAPE_SHARES_MISMATCH], bases=("gpt-nano", "tiny_transformer_lm"),
      doc="an LM head tied to the token table keeps a bias one wider than the table's rows", apply=_tie_bias_apply)
def _tie_bias_sites(g):
    widths = {m.get("args", {}).get("embedding_dim") for m in g.nodes if m["op"] == "Embedding"}
    return [n["id"] for n in g.nodes if n["op"] == "Linear" and not n.get("shares")
            and n.get("args", {}).get("in_features") in widths and n["id"] in g.outputs()]

"""Corrupted variants of the reference zoo: the grounding study's test set.

Each *kind* is one systematic fault a person or an agent makes when writing a
design (a Linear one width off, a residual whose shortcut lost its
projection, an Embedding too small for the vocabulary, ...). A kind knows
where in a graph it applies (its *sites*, in a fixed order) and how to apply
itself at one site. It also says what it claims:

- ``expect: "block"``: the corrupted graph cannot forward-pass (or cannot be
  built) — the verifier must block it and torch must fail;
- ``expect: "warn"``: the graph still runs, but wastes compute or trains
  badly — the verifier should warn (rule ``rules[0]``) and torch must not fail.

Sites are chosen from the clean graph's structure and its inferred types
(which sizes are constants); the corruption itself never asks the verifier
what it thinks of the result. `archcurator ground` then checks both the
verifier's verdicts and the kinds' claims against real torch runs.

Public API:

- ``KINDS``: name -> `Kind`, in a fixed order;
- ``corrupt(design_dict, kind, rng) -> dict | None``: one corrupted copy at
  a site drawn with ``rng`` (``None`` when the kind has no site there);
- ``corruption_set(zoo=None) -> list[case]`` and ``ground_set(zoo=None)`` (the
  clean zoo graphs first): the deterministic study set. A case is
  ``{"case": "resnet18/linear-width/fc", "kind", "base", "site", "expect",
  "rules", "graph"}``.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import dataclass

from . import dims as D
from .graph import Design, parse_ref

# ---------------------------------------------------------------------------------------------
# the graph being corrupted


class G:
    """A mutable design dict with the lookups corruptions need (types are the clean graph's)."""

    def __init__(self, design: dict):
        self.d = copy.deepcopy(design)
        self._types = None

    # -- lookups (valid until the first mutation)
    @property
    def nodes(self) -> list:
        return self.d["nodes"]

    @property
    def name(self) -> str:
        return self.d.get("name", "")

    def node(self, nid: str) -> dict:
        for n in self.nodes:
            if n["id"] == nid:
                return n
        raise KeyError(nid)

    def ids(self) -> set:
        return {n["id"] for n in self.nodes} | {i["id"] for i in self.d["inputs"]}

    def users(self, nid: str) -> list:
        return [n for n in self.nodes if any(parse_ref(r)[0] == nid for r in n.get("in", []))]

    def index(self, nid: str) -> int:
        for i, n in enumerate(self.nodes):
            if n["id"] == nid:
                return i
        raise KeyError(nid)

    def types(self) -> dict:
        """Inferred result types of the graph as it was when first asked (the clean graph)."""
        if self._types is None:
            from .shapes import infer_design

            self._types = infer_design(Design.from_dict(self.d)).types
        return self._types

    def shape(self, ref: str):
        rid, idx = parse_ref(ref)
        res = self.types().get(rid)
        if not res or idx >= len(res):
            return None
        return res[idx].shape

    def dtype(self, ref: str):
        rid, idx = parse_ref(ref)
        res = self.types().get(rid)
        if not res or idx >= len(res):
            return None
        return res[idx].dtype

    def args(self, nid: str) -> dict:
        return self.node(nid).setdefault("args", {})

    def outputs(self) -> list:
        return [parse_ref(o)[0] for o in self.d["outputs"]]

    def shared(self) -> set:
        """Ids that share weights or are shared (changing one side breaks the tie too)."""
        out = set()
        for n in self.nodes:
            if n.get("shares"):
                out.add(n["id"])
                out.add(n["shares"])
        return out

    # -- mutations
    def fresh_id(self, base: str) -> str:
        ids = self.ids()
        cand = base
        i = 1
        while cand in ids:
            cand = f"{base}_{i}"
            i += 1
        return cand

    def insert_after(self, ref: str, op: str, args: dict, *, consumer: str | None = None,
                     suffix: str = "corrupt") -> str:
        """A new node reading `ref`; `consumer` (or every user of ref) reads the new node instead."""
        rid, _ = parse_ref(ref)
        new_id = self.fresh_id(f"{rid}.{suffix}")
        targets = [self.node(consumer)] if consumer else [n for n in self.nodes
                                                         if ref in n.get("in", []) or
                                                         (ref == rid and rid in n.get("in", []))]
        for t in targets:
            t["in"] = [new_id if r == ref else r for r in t["in"]]
        if consumer is None:
            self.d["outputs"] = [new_id if o == ref else o for o in self.d["outputs"]]
        pos = self.index(rid) + 1 if rid in {n["id"] for n in self.nodes} else 0
        self.nodes.insert(pos, {"id": new_id, "op": op, "args": args, "in": [ref]})
        return new_id

    def append_output_op(self, op: str, args: dict) -> str:
        out = self.d["outputs"][0]
        new_id = self.fresh_id(f"{parse_ref(out)[0]}.{op.lower()}")
        self.nodes.append({"id": new_id, "op": op, "args": args, "in": [out]})
        self.d["outputs"] = [new_id] + self.d["outputs"][1:]
        return new_id

    def remove(self, nid: str) -> None:
        """Delete `nid`; its consumers read its first operand."""
        self.bypass(nid)
        del self.nodes[self.index(nid)]

    def bypass(self, nid: str) -> None:
        """Consumers of `nid` read its first operand instead; `nid` stays, now dead."""
        src = self.node(nid)["in"][0]
        for n in self.nodes:
            if n["id"] != nid:
                n["in"] = [src if parse_ref(r)[0] == nid else r for r in n.get("in", [])]
        self.d["outputs"] = [src if parse_ref(o)[0] == nid else o for o in self.d["outputs"]]

    def train(self) -> dict:
        self.d["train"] = dict(self.d.get("train") or {})
        return self.d["train"]


# ---------------------------------------------------------------------------------------------
# kinds

Sites = Callable[[G], list]
Apply = Callable[[G, str], dict | None]


@dataclass(frozen=True)
class Kind:
    name: str
    expect: str  # block | warn
    rules: tuple  # the rule(s) the corruption is about; warn kinds: rules[0] should fire
    sites: Sites
    apply: Apply
    bases: tuple = ()  # zoo designs the deterministic set corrupts
    per_base: int = 1  # sites per base in the deterministic set
    doc: str = ""


KINDS: dict[str, Kind] = {}


def kind(name, expect, rules, *, bases, per_base=1, doc=""):
    def wrap(pair):
        sites, apply = pair
        KINDS[name] = Kind(name, expect, tuple(rules), sites, apply, tuple(bases), per_base, doc)
        return pair

    return wrap


GRAPH_SITE = "graph"


def _graph_site(g: G) -> list:
    return [GRAPH_SITE]


CONVS = ("Conv1d", "Conv2d", "Conv3d")
CONVS_ALL = CONVS + ("ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d")
POOLS = ("MaxPool1d", "MaxPool2d", "AvgPool1d", "AvgPool2d")
BNS = ("BatchNorm1d", "BatchNorm2d", "BatchNorm3d")
ATTN = ("MultiheadAttention", "TransformerEncoderLayer", "TransformerDecoderLayer")
RNNS = ("LSTM", "GRU", "RNN")
ELEMENTWISE = ("ReLU", "ReLU6", "GELU", "SiLU", "Tanh", "Sigmoid", "Hardswish", "Dropout", "Identity")


def _of(g: G, ops) -> list:
    shared = g.shared()
    return [n["id"] for n in g.nodes if n["op"] in ops and n["id"] not in shared]


def _const(*ds) -> bool:
    return all(D.is_const(d) for d in ds)


def _first_operand_shape(g: G, nid: str):
    ins = g.node(nid).get("in") or []
    return g.shape(ins[0]) if ins else None


# ---- block: shapes -------------------------------------------------------------------------

def _heads_sites(g):
    return _of(g, ATTN)


def _heads_apply(g, site):
    a = g.args(site)
    key_e, key_h = ("embed_dim", "num_heads") if g.node(site)["op"] == "MultiheadAttention" else ("d_model", "nhead")
    e, h = a[key_e], a.get(key_h)
    cand = h + 1
    while e % cand == 0:
        cand += 1
    a[key_h] = cand
    return g.d


kind("head-divisibility", "block", ["shape.heads-divisibility"],
     bases=("vit_b_32", "tiny_transformer_lm", "transformer", "vit_b_16"), per_base=2,
     doc="an attention layer's head count no longer divides its width")((_heads_sites, _heads_apply))


def _linear_sites(g):
    return [n for n in _of(g, ("Linear",)) if _const((_first_operand_shape(g, n) or (None,))[-1])]


def _linear_apply(g, site):
    a = g.args(site)
    a["in_features"] = a["in_features"] * 2
    return g.d


kind("linear-width", "block", ["shape.linear-width", "shape.flatten-linear-width"],
     bases=("resnet18", "mlp_mnist", "gpt-nano", "char_rnn", "vgg11", "lenet5", "mixer_s16_224", "text_cnn",
            "mobilenet_v3_small", "cifar_cnn", "seq2seq_gru"), per_base=2,
     doc="a Linear's in_features is twice what reaches it")((_linear_sites, _linear_apply))


def _conv_ch_sites(g):
    return [n for n in _of(g, CONVS_ALL) if _const(*((_first_operand_shape(g, n) or (None, None))[1:2]))]


def _conv_ch_apply(g, site):
    a = g.args(site)
    a["in_channels"] = a["in_channels"] * 2
    return g.d


kind("conv-channels", "block", ["shape.conv-channels"],
     bases=("resnet18", "mobilenet_v2", "vgg11", "squeezenet1_1", "unet", "lenet5", "efficientnet_b0",
            "shufflenet_v2_x0_5", "text_cnn", "conv_autoencoder", "resnet20_cifar", "mnasnet0_5"), per_base=2,
     doc="a convolution expects twice the channels it receives")((_conv_ch_sites, _conv_ch_apply))


def _norm_sites(g):
    return _of(g, BNS + ("LayerNorm", "GroupNorm", "RMSNorm"))


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


kind("norm-features", "block", ["shape.norm-features"],
     bases=("resnet18", "mobilenet_v2", "vgg11_bn", "gpt-nano", "vit_b_32", "convnext_tiny", "mixer_s16_224",
            "tiny_transformer_lm", "resnet20_cifar", "cifar_cnn"), per_base=2,
     doc="a BatchNorm / LayerNorm normalises twice the features it receives")((_norm_sites, _norm_apply))


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


kind("residual-shape", "block", ["shape.broadcast"],
     bases=("resnet18", "resnet50", "mobilenet_v2", "gpt-nano", "convnext_tiny", "resnet20_cifar",
            "efficientnet_b0", "vit_b_32", "mnasnet0_5"), per_base=2,
     doc="a residual Add's shortcut reads a tensor of another shape (the projection was lost)")(
    (_residual_sites, _residual_apply))


def _concat_sites(g):
    out = []
    for n in g.nodes:
        if n["op"] != "Concat" or len(n.get("in", [])) < 2:
            continue
        if _concat_cut(g, n["id"]) is not None:
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


kind("concat-sizes", "block", ["shape.concat-sizes"],
     bases=("densenet121", "squeezenet1_1", "shufflenet_v2_x0_5", "unet", "text_cnn", "vit_b_32", "seq2seq_gru",
            "squeezenet1_0"), per_base=2,
     doc="one branch of a Concat is cropped off the joined dimension")((_concat_sites, _concat_apply))


def _collapse_sites(g):
    out = []
    for n in g.nodes:
        if n["op"] in POOLS:
            s = g.shape(n["id"])
            if s is not None and len(s) >= 3 and _const(*s[2:]):
                out.append(n["id"])
        elif n["op"].startswith("ConvTranspose"):
            out.append(n["id"])
    return out


def _collapse_apply(g, site):
    n = g.node(site)
    a = g.args(site)
    if n["op"].startswith("ConvTranspose"):
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


kind("spatial-collapse", "block", ["shape.spatial-collapse"],
     bases=("lenet5", "cifar_cnn", "vgg11", "alexnet", "conv_autoencoder", "unet", "mnist_cnn", "resnet18"),
     per_base=2, doc="pooling stages added until the feature map reaches size 0, or a transposed convolution "
                     "padded past its output")((_collapse_sites, _collapse_apply))


def _int_input_sites(g):
    return [i["id"] for i in g.d["inputs"] if str(i.get("dtype", "float32")).startswith("float")]


def _int_input_apply(g, site):
    for i in g.d["inputs"]:
        if i["id"] == site:
            i["dtype"] = "int64"
    return g.d


kind("dtype-int-into-float", "block", ["dtype.int-into-float"],
     bases=("resnet18", "mlp_mnist", "mobilenet_v2", "lenet5", "vit_b_32", "mlp_tabular", "unet", "vae_encoder",
            "tiny_cnn", "linear_classifier"),
     doc="the image / feature input is declared int64 (raw pixels or ids) and reaches a float layer")(
    (_int_input_sites, _int_input_apply))


def _float_input_sites(g):
    return [i["id"] for i in g.d["inputs"] if not str(i.get("dtype", "float32")).startswith(("float", "bfloat"))
            and any(n["op"] == "Embedding" and i["id"] in n.get("in", []) for n in g.nodes)]


def _float_input_apply(g, site):
    for i in g.d["inputs"]:
        if i["id"] == site:
            i["dtype"] = "float32"
    return g.d


kind("dtype-float-into-embedding", "block", ["dtype.float-into-embedding"],
     bases=("char_rnn", "gpt-nano", "lstm_lm", "gru_lm", "text_cnn", "tiny_transformer_lm", "seq2seq_gru",
            "bert-base-uncased"),
     doc="the token-id input is declared float32 and reaches an Embedding")((_float_input_sites, _float_input_apply))


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


def _reshape_apply(g, site):
    n = g.node(site)
    key = "unflattened_size" if n["op"] == "Unflatten" else "shape"
    sizes = list(n["args"][key])
    i = max(range(len(sizes)), key=lambda j: sizes[j] if isinstance(sizes[j], int) else -2)
    sizes[i] = sizes[i] + 1 if sizes[i] != -1 else 3
    n["args"][key] = sizes
    return g.d


kind("reshape-product", "block", ["shape.reshape-product"],
     bases=("gpt-nano", "shufflenet_v2_x0_5", "mlp_autoencoder", "distilbert-base-uncased", "gpt2"), per_base=2,
     doc="a reshape's target holds one more row than its input")((_reshape_sites, _reshape_apply))


def _index_range_sites(g):
    from .build import declared_id_range

    out = []
    design = Design.from_dict(g.d)
    for n in _of(g, ("Embedding",)):
        ins = g.node(n).get("in") or []
        if ins and ins[0] in design.input_ids and declared_id_range(design, ins[0]):
            out.append(n)
    return out


def _index_range_apply(g, site):
    from .build import declared_id_range

    src = g.node(site)["in"][0]
    vocab = declared_id_range(Design.from_dict(g.d), src)
    g.args(site)["num_embeddings"] = max(1, vocab // 2)
    return g.d


kind("index-range", "block", ["dtype.index-range"],
     bases=("char_rnn", "gpt-nano", "lstm_lm", "gru_lm", "text_cnn", "tiny_transformer_lm", "seq2seq_gru",
            "distilbert-base-uncased"),
     doc="the token Embedding has half the rows of the declared vocabulary")((_index_range_sites, _index_range_apply))


def _rank_sites(g):
    out = []
    for n in _of(g, ("Conv2d", "Conv1d", "BatchNorm2d") + RNNS):
        s = _first_operand_shape(g, n)
        if s is not None and len(s) >= 3:
            out.append(n)
    return out


def _rank_apply(g, site):
    n = g.node(site)
    # a flatten left in by mistake: 2-D into a layer that needs 4-D; 1-D into the layers that also
    # take an unbatched 2-D input (Conv1d, RNNs)
    start = 0 if n["op"] in RNNS + ("Conv1d",) else 1
    g.insert_after(n["in"][0], "Flatten", {"start_dim": start}, consumer=site, suffix="flatten")
    return g.d


kind("rank", "block", ["shape.rank"],
     bases=("resnet18", "vgg11", "mobilenet_v2", "lenet5", "char_rnn", "text_cnn"), per_base=2,
     doc="a stray Flatten gives a convolution / BatchNorm / RNN too few dimensions")((_rank_sites, _rank_apply))


def _groups_sites(g):
    return [n for n in _of(g, CONVS) if g.args(n).get("in_channels", 0) > 2]


def _groups_apply(g, site):
    a = g.args(site)
    c = a["in_channels"]
    grp = 2
    while c % grp == 0:
        grp += 1
    a["groups"] = grp
    return g.d


kind("conv-groups", "block", ["shape.conv-groups"],
     bases=("resnet18", "mobilenet_v2", "resnext50_32x4d", "vgg11", "efficientnet_b0"), per_base=2,
     doc="a convolution's groups does not divide its channels")((_groups_sites, _groups_apply))


def _ktl_sites(g):
    out = []
    for n in _of(g, CONVS):
        s = _first_operand_shape(g, n)
        if s is not None and len(s) >= 3 and _const(*s[2:]) and min(s[2:]) <= 32:
            out.append(n)
    return out


def _ktl_apply(g, site):
    a = g.args(site)
    s = _first_operand_shape(g, site)
    a["padding"] = 0
    a["kernel_size"] = max(s[2:]) + 1
    return g.d


kind("kernel-too-large", "block", ["shape.kernel-too-large"],
     bases=("resnet18", "lenet5", "cifar_cnn", "mnist_cnn", "vgg11", "tiny_cnn"), per_base=2,
     doc="a convolution's kernel is wider than the map it slides over")((_ktl_sites, _ktl_apply))


def _pool_pad_sites(g):
    return [n["id"] for n in g.nodes if n["op"] in POOLS]


def _pool_pad_apply(g, site):
    a = g.args(site)
    k = a["kernel_size"] if isinstance(a["kernel_size"], int) else max(a["kernel_size"])
    a["padding"] = k // 2 + 1
    return g.d


kind("pool-padding", "block", ["shape.pool-padding"],
     bases=("resnet18", "vgg11", "lenet5", "densenet121", "cifar_cnn", "alexnet"), per_base=1,
     doc="a pooling layer padded by more than half its window")((_pool_pad_sites, _pool_pad_apply))


def _gn_sites(g):
    out = []
    for n in _of(g, ("BatchNorm2d",)):
        if g.args(n).get("num_features", 0) >= 8:
            out.append(n)
    return out


def _gn_apply(g, site):
    n = g.node(site)
    c = n["args"]["num_features"]
    grp = 3
    while c % grp == 0:
        grp += 2
    n["op"] = "GroupNorm"
    n["args"] = {"num_groups": grp, "num_channels": c}
    return g.d


kind("groupnorm-divisibility", "block", ["shape.groupnorm-divisibility"],
     bases=("resnet18", "mobilenet_v2", "unet", "resnet20_cifar"), per_base=2,
     doc="a BatchNorm swapped for a GroupNorm whose group count does not divide the channels")(
    (_gn_sites, _gn_apply))


def _attn_width_sites(g):
    return _of(g, ATTN)


def _attn_width_apply(g, site):
    a = g.args(site)
    key_e, key_h = ("embed_dim", "num_heads") if g.node(site)["op"] == "MultiheadAttention" else ("d_model", "nhead")
    e, h = a[key_e], a[key_h]
    new = e // 2 if (e // 2) % h == 0 else e * 2
    a[key_e] = new
    return g.d


kind("attention-width", "block", ["shape.attention-width"],
     bases=("vit_b_32", "tiny_transformer_lm", "transformer"), per_base=2,
     doc="an attention layer's width differs from the tokens it reads")((_attn_width_sites, _attn_width_apply))


def _rnn_sites(g):
    return _of(g, RNNS)


def _rnn_apply(g, site):
    a = g.args(site)
    a["input_size"] = a["input_size"] * 2
    return g.d


kind("rnn-input-size", "block", ["shape.rnn-input-size"],
     bases=("char_rnn", "lstm_lm", "gru_lm", "seq2seq_gru"), per_base=2,
     doc="a recurrent layer expects twice the features it receives")((_rnn_sites, _rnn_apply))


def _matmul_sites(g):
    out = []
    for n in g.nodes:
        if n["op"] == "MatMul" and _matmul_cut(g, n["id"]) is not None:
            out.append(n["id"])
    return out


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


kind("matmul-inner", "block", ["shape.matmul-inner"],
     bases=("gpt-nano", "seq2seq_gru", "distilbert-base-uncased"), per_base=2,
     doc="one operand of a matrix product is cropped along the inner dimension")((_matmul_sites, _matmul_apply))


def _split_sites(g):
    out = []
    for n in g.nodes:
        if n["op"] == "Split":
            s = _first_operand_shape(g, n["id"])
            if s is not None and _const(s[n["args"].get("dim", 0)]):
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


kind("split-sizes", "block", ["shape.split-sizes"],
     bases=("gpt-nano", "shufflenet_v2_x0_5", "gpt2"), per_base=2,
     doc="a Split's sections add up to one more than the dimension")((_split_sites, _split_apply))


def _dim_sites(g):
    out = []
    for n in g.nodes:
        if n["op"] in ("Softmax", "LogSoftmax", "Concat", "Transpose", "Flatten") and \
                _first_operand_shape(g, n["id"]) is not None:
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


kind("dim-range", "block", ["shape.dim-range"],
     bases=("gpt-nano", "mnist_cnn", "text_cnn", "seq2seq_gru", "squeezenet1_1", "resnet18", "mixer_s16_224"),
     per_base=2, doc="a dim argument names a dimension the tensor does not have")((_dim_sites, _dim_apply))


def _select_sites(g):
    return [n["id"] for n in g.nodes if n["op"] == "Select"
            and _const((_first_operand_shape(g, n["id"]) or [None] * 8)[n["args"]["dim"]])]


def _select_apply(g, site):
    n = g.node(site)
    s = _first_operand_shape(g, site)
    n["args"]["index"] = s[n["args"]["dim"]]
    return g.d


kind("select-index", "block", ["shape.index-range"],
     bases=("vit_b_32", "vit_b_16", "bert-base-uncased"),
     doc="Select picks the index one past the end of its dimension")((_select_sites, _select_apply))


def _expand_sites(g):
    return [n["id"] for n in g.nodes if n["op"] == "Expand"]


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


kind("expand", "block", ["shape.expand"], bases=("vit_b_32", "vit_b_16", "vit_l_16"),
     doc="Expand asks a dimension that is not 1 to grow")((_expand_sites, _expand_apply))


def _arity_sites(g):
    return [n["id"] for n in g.nodes if n["op"] in ("ReLU", "GELU", "Add", "Dropout") and n.get("in")]


def _arity_apply(g, site):
    n = g.node(site)
    if n["op"] == "Add":
        n["in"] = n["in"][:1]  # one operand of the residual lost
    else:
        n["in"] = n["in"] + n["in"][:1]
    return g.d


kind("arity", "block", ["shape.arity"], bases=("resnet18", "gpt-nano", "mlp_mnist", "mobilenet_v2"), per_base=2,
     doc="a node lists one operand too many (unary op) or too few (Add)")((_arity_sites, _arity_apply))


def _shares_sites(g):
    out = []
    seen: dict = {}
    for n in g.nodes:
        if n["op"] not in ("Conv2d", "Linear", "Embedding") or n.get("shares"):
            continue
        for prev in seen.get(n["op"], []):
            if g.args(prev) != n.get("args", {}):
                out.append(n["id"])
                break
        seen.setdefault(n["op"], []).append(n["id"])
    return out


def _shares_apply(g, site):
    n = g.node(site)
    for prev in g.nodes[:g.index(site)]:
        if prev["op"] == n["op"] and prev.get("args", {}) != n.get("args", {}) and not prev.get("shares"):
            n["shares"] = prev["id"]
            return g.d
    return None


kind("shares-mismatch", "block", ["shape.shares-mismatch"],
     bases=("resnet18", "mlp_mnist", "lenet5", "gpt-nano"), per_base=2,
     doc="a layer reuses ('shares') an earlier layer of other arguments")((_shares_sites, _shares_apply))


# ---- block: connectivity -------------------------------------------------------------------

HALLUCINATED = {"ReLU": "Swish", "GELU": "GeGLU", "LayerNorm": "ScaleNorm", "Conv2d": "DeformConv2d",
                "Linear": "SparseLinear", "BatchNorm2d": "FrozenBatchNorm2d", "MultiheadAttention": "FlashAttention",
                "LSTM": "MambaBlock", "Embedding": "RotaryEmbedding", "Dropout": "DropPath",
                "MaxPool2d": "BlurPool2d", "Add": "WeightedSum"}


def _unknown_sites(g):
    return [n["id"] for n in g.nodes if n["op"] in HALLUCINATED]


def _unknown_apply(g, site):
    n = g.node(site)
    n["op"] = HALLUCINATED[n["op"]]
    return g.d


kind("unknown-op", "block", ["connectivity.unknown-op"],
     bases=("resnet18", "gpt-nano", "char_rnn", "mlp_mnist", "vit_b_32", "efficientnet_b0"), per_base=1,
     doc="an op torch.nn does not have")((_unknown_sites, _unknown_apply))


def _missing_sites(g):
    from .ops import OP_TABLE

    return [n["id"] for n in g.nodes if n["op"] in OP_TABLE
            and any(a.required and a.name in n.get("args", {}) for a in OP_TABLE[n["op"]].args)]


def _missing_apply(g, site):
    from .ops import OP_TABLE

    n = g.node(site)
    req = [a.name for a in OP_TABLE[n["op"]].args if a.required and a.name in n.get("args", {})]
    del n["args"][req[-1]]
    return g.d


kind("missing-arg", "block", ["connectivity.missing-arg"],
     bases=("resnet18", "gpt-nano", "lstm_lm", "mobilenet_v2", "tiny_cnn"), per_base=1,
     doc="a required constructor argument left out")((_missing_sites, _missing_apply))


def _bad_arg_sites(g):
    return [n["id"] for n in g.nodes if n["op"] in ("Conv2d", "Linear", "LayerNorm", "TransformerEncoderLayer",
                                                    "Embedding", "LSTM", "GRU")]


def _bad_arg_apply(g, site):
    n = g.node(site)
    if n["op"] == "TransformerEncoderLayer":
        n["args"]["activation"] = "swiglu"
    elif n["op"] == "LayerNorm":
        n["args"]["affine"] = True  # BatchNorm's word; LayerNorm calls it elementwise_affine
    elif n["op"] in ("LSTM", "GRU"):
        n["args"]["hidden_dim"] = n["args"].get("hidden_size", 0)
    else:
        n["args"]["init"] = "xavier_uniform"
    return g.d


kind("bad-arg", "block", ["connectivity.bad-arg"],
     bases=("resnet18", "tiny_transformer_lm", "gpt-nano", "gru_lm", "vgg11"), per_base=1,
     doc="an argument the constructor does not take")((_bad_arg_sites, _bad_arg_apply))


def _bad_result_sites(g):
    out = []
    for n in g.nodes:
        for r in n.get("in", []):
            rid, idx = parse_ref(r)
            res = g.types().get(rid)
            if res is not None and rid != n["id"]:
                out.append(n["id"])
                break
    return out


def _bad_result_apply(g, site):
    n = g.node(site)
    rid, _ = parse_ref(n["in"][0])
    res = g.types().get(rid) or [None]
    n["in"] = [f"{rid}:{len(res)}"] + n["in"][1:]
    return g.d


kind("bad-result", "block", ["connectivity.bad-result"],
     bases=("resnet18", "char_rnn", "vit_b_32", "gpt-nano"), per_base=1,
     doc="a reference to result N of a node that has fewer results")((_bad_result_sites, _bad_result_apply))


def _dangling_sites(g):
    return [n["id"] for n in g.nodes if n.get("in")]


def _dangling_apply(g, site):
    n = g.node(site)
    rid, _ = parse_ref(n["in"][0])
    n["in"] = [g.fresh_id(rid + "_typo")] + n["in"][1:]
    return g.d


kind("dangling", "block", ["connectivity.dangling"],
     bases=("resnet18", "gpt-nano", "mlp_mnist", "unet", "seq2seq_gru"), per_base=1,
     doc="an operand names a node that does not exist (a typo, a deleted layer)")((_dangling_sites, _dangling_apply))


def _cycle_sites(g):
    return [n["id"] for n in g.nodes if n.get("in") and g.users(n["id"])]


def _cycle_apply(g, site):
    n = g.node(site)
    user = g.users(site)[0]
    n["in"] = [user["id"]] + n["in"][1:]
    return g.d


kind("cycle", "block", ["connectivity.cycle"], bases=("resnet18", "mlp_mnist", "gpt-nano", "lenet5"),
     doc="a layer reads its own consumer: a loop")((_cycle_sites, _cycle_apply))


def _no_output_apply(g, site):
    g.d["outputs"] = []
    return g.d


kind("no-output", "block", ["connectivity.no-output"], bases=("resnet18", "mlp_mnist", "char_rnn"),
     doc="the design declares no outputs")((_graph_site, _no_output_apply))


# ---- warn: runs, but wastes or trains badly --------------------------------------------------

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


def _residual_sites_any(g):
    return [n["id"] for n in g.nodes if n["op"] == "Add" and len(n.get("in", [])) == 2
            and g.shape(n["in"][0]) is not None and g.shape(n["in"][0]) == g.shape(n["in"][1])]


def _bcast_apply(g, site):
    n = g.node(site)
    s = g.shape(n["in"][1])
    dims = list(range(2, len(s))) if len(s) == 4 else [1]
    g.insert_after(n["in"][1], "Mean", {"dim": dims, "keepdim": True}, consumer=site, suffix="pooled")
    return g.d


kind("silent-broadcast", "warn", ["shape.silent-broadcast"],
     bases=("resnet18", "gpt-nano", "resnet20_cifar", "mobilenet_v2", "convnext_tiny"), per_base=1,
     doc="a residual's shortcut is averaged to 1 along the map / sequence and broadcast back")(
    (_bcast_sites, _bcast_apply))


def _sever_sites(g):
    out = []
    for n in g.nodes:
        if n["op"] in ELEMENTWISE + BNS + ("LayerNorm",) and len(n.get("in", [])) == 1 and \
                n["id"] not in g.outputs() and not n.get("shares"):
            src = n["in"][0]
            if g.shape(src) is not None and g.shape(src) == g.shape(n["id"]) and g.dtype(src) == g.dtype(n["id"]):
                out.append(n["id"])
    return out


def _sever_apply(g, site):
    g.bypass(site)
    return g.d


def _remove_apply(g, site):
    g.remove(site)
    return g.d


kind("severed-connection", "warn", ["connectivity.dead-node"],
     bases=("resnet18", "gpt-nano", "mlp_mnist", "vgg11", "char_rnn", "mobilenet_v2"), per_base=1,
     doc="the edge through a shape-preserving layer is cut: its consumer reads around it, the layer runs "
         "for nothing")((_sever_sites, _sever_apply))


def _bias_bn_sites(g):
    out = []
    for n in _of(g, CONVS + ("Linear",)):
        us = g.users(n)
        if len(us) == 1 and us[0]["op"] in BNS and g.args(n).get("bias", True) is False:
            out.append(n)
    return out


def _bias_bn_apply(g, site):
    g.args(site)["bias"] = True
    return g.d


kind("bias-before-bn", "warn", ["numerics.bias-before-batchnorm"],
     bases=("resnet18", "mobilenet_v2", "resnet20_cifar"), per_base=1,
     doc="bias switched on in a convolution whose BatchNorm cancels it")((_bias_bn_sites, _bias_bn_apply))


def _drop_bn_sites(g):
    return [n["id"] for n in g.nodes if n["op"] in BNS and n.get("in")]


def _drop_bn_apply(g, site):
    g.insert_after(g.node(site)["in"][0], "Dropout", {"p": 0.2}, consumer=site, suffix="dropout")
    return g.d


kind("dropout-before-bn", "warn", ["numerics.dropout-before-batchnorm"], bases=("resnet18", "vgg11_bn"),
     doc="a Dropout inserted right before a BatchNorm")((_drop_bn_sites, _drop_bn_apply))


def _double_act_sites(g):
    return [n["id"] for n in g.nodes if n["op"] in ("ReLU", "GELU", "SiLU") and len(g.users(n["id"])) == 1]


def _double_act_apply(g, site):
    g.insert_after(site, g.node(site)["op"], {}, suffix="again")
    return g.d


kind("double-activation", "warn", ["numerics.double-activation"], bases=("mlp_mnist", "vgg11"),
     doc="an activation applied twice in a row")((_double_act_sites, _double_act_apply))


def _collapse_lin_sites(g):
    out = []
    for n in g.nodes:
        if n["op"] in ("ReLU", "GELU", "Tanh", "SiLU") and len(n.get("in", [])) == 1:
            p = parse_ref(n["in"][0])[0]
            us = g.users(n["id"])
            if len(us) == 1 and us[0]["op"] == "Linear" and any(x["id"] == p and x["op"] == "Linear"
                                                               for x in g.nodes) and len(g.users(p)) == 1:
                out.append(n["id"])
    return out


kind("linear-collapse", "warn", ["numerics.linear-collapse"], bases=("mlp_mnist", "mlp_tabular"),
     doc="the activation between two Linears removed (the two collapse into one)")((_collapse_lin_sites, _remove_apply))


def _dropout_sites(g):
    return [n["id"] for n in g.nodes if n["op"] == "Dropout"]


def _high_dropout_apply(g, site):
    g.args(site)["p"] = 0.9
    return g.d


kind("high-dropout", "warn", ["numerics.high-dropout"], bases=("char_rnn", "vgg11"),
     doc="a Dropout rate of 0.9")((_dropout_sites, _high_dropout_apply))


def _ce_classifier(g) -> list:
    loss = str((g.d.get("train") or {}).get("loss", "")).lower()
    s = g.shape(g.d["outputs"][0]) if g.d["outputs"] else None
    return [GRAPH_SITE] if loss == "cross_entropy" and s is not None and len(s) == 2 else []


def _softmax_out_apply(g, site):
    g.append_output_op("Softmax", {"dim": -1})
    return g.d


kind("softmax-before-loss", "warn", ["numerics.softmax-before-loss"], bases=("resnet18", "mlp_mnist", "lenet5"),
     doc="a Softmax appended to logits that cross_entropy normalises again")((_ce_classifier, _softmax_out_apply))


def _relu_out_apply(g, site):
    g.append_output_op("ReLU", {})
    return g.d


kind("relu-before-logits", "warn", ["numerics.relu-before-logits"], bases=("mlp_mnist", "tiny_cnn"),
     doc="a ReLU on the logits")((_ce_classifier, _relu_out_apply))


def _global_pool_sites(g):
    return [n["id"] for n in g.nodes if n["op"] == "AdaptiveAvgPool2d" and g.shape(n["id"]) is not None
            and g.shape(n["id"])[-2:] == (1, 1)]


def _pool_again_apply(g, site):
    g.insert_after(site, "AdaptiveAvgPool2d", {"output_size": 1}, suffix="again")
    return g.d


kind("pool-after-global", "warn", ["numerics.pool-after-global"], bases=("resnet18", "mobilenet_v2"),
     doc="a second global pooling on an already pooled map")((_global_pool_sites, _pool_again_apply))


def _transpose_sites(g):
    return [n["id"] for n in g.nodes if n["op"] in ("ReLU", "GELU") and g.shape(n["id"]) is not None
            and len(g.shape(n["id"])) >= 3]


def _transpose_apply(g, site):
    t1 = g.insert_after(site, "Transpose", {"dim0": 1, "dim1": 2}, suffix="t")
    g.insert_after(t1, "Transpose", {"dim0": 1, "dim1": 2}, suffix="back")
    return g.d


kind("redundant-transpose", "warn", ["efficiency.redundant-transpose"], bases=("resnet18", "gpt-nano"),
     doc="a Transpose undone right after")((_transpose_sites, _transpose_apply))


def _dup_output_apply(g, site):
    g.d["outputs"] = g.d["outputs"] + g.d["outputs"][:1]
    return g.d


kind("duplicate-output", "warn", ["connectivity.duplicate-output"], bases=("mlp_mnist", "resnet18"),
     doc="the output listed twice")((_graph_site, _dup_output_apply))


def _unused_input_apply(g, site):
    first = g.d["inputs"][0]
    g.d["inputs"].append({"id": g.fresh_id("mask"), "shape": list(first["shape"][:2]), "dtype": "float32"})
    return g.d


kind("unused-input", "warn", ["connectivity.unused-input"], bases=("gpt-nano", "mlp_mnist"),
     doc="an input nothing reads")((_graph_site, _unused_input_apply))


def _width8_sites(g):
    out = []
    for n in _of(g, ("Linear",)):
        w = g.args(n).get("out_features")
        if not isinstance(w, int) or w < 64 or n in g.outputs():
            continue
        chain = _elementwise_chain_to_linear(g, n)
        if chain is not None:
            out.append(n)
    return out


def _elementwise_chain_to_linear(g, nid):
    cur = nid
    for _ in range(4):
        us = g.users(cur)
        if len(us) != 1:
            return None
        u = us[0]
        if u["op"] == "Linear" and not u.get("shares"):
            return u["id"]
        if u["op"] not in ("ReLU", "GELU", "Tanh", "SiLU", "Dropout"):
            return None
        cur = u["id"]
    return None


def _width8_apply(g, site):
    nxt = _elementwise_chain_to_linear(g, site)
    w = g.args(site)["out_features"] + 4
    g.args(site)["out_features"] = w
    g.args(nxt)["in_features"] = w
    return g.d


kind("width-not-multiple-of-8", "warn", ["efficiency.width-not-multiple-of-8"],
     bases=("mlp_mnist", "mlp_tabular", "vgg11"),
     doc="a hidden width moved off a multiple of 8 (consistently on both sides)")((_width8_sites, _width8_apply))


def _oversized_sites(g):
    return _index_range_sites(g)


def _oversized_apply(g, site):
    from .build import declared_id_range

    vocab = declared_id_range(Design.from_dict(g.d), g.node(site)["in"][0])
    g.args(site)["num_embeddings"] = vocab * 5
    return g.d


kind("oversized-embedding", "warn", ["efficiency.oversized-embedding"], bases=("char_rnn", "gpt-nano"),
     doc="an Embedding with 5x the rows of the vocabulary")((_oversized_sites, _oversized_apply))


def _budget_apply(g, site):
    from .verify import verify_graph

    usd = (verify_graph(Design.from_dict(g.d)).cost.get("quote") or {}).get("usd") or 1.0
    g.train()["budget_usd"] = round(usd / 10, 6)
    return g.d


kind("over-budget", "warn", ["efficiency.over-budget"], bases=("resnet18", "gpt-nano"),
     doc="a declared budget far under the run's quote")((_graph_site, _budget_apply))


def _device_apply(g, site):
    g.train()["device"] = "TPU-v9"
    return g.d


kind("unknown-device", "warn", ["efficiency.unknown-device"], bases=("mlp_mnist",),
     doc="a declared device the price table does not know")((_graph_site, _device_apply))


def _blowup_apply(g, site):
    from .verify import verify_graph

    params = verify_graph(Design.from_dict(g.d)).cost.get("params") or 1000
    g.train()["baseline"] = {"params": max(1, params // 20)}
    return g.d


kind("param-blowup", "warn", ["efficiency.param-blowup"], bases=("resnet18", "char_rnn"),
     doc="a declared baseline with 1/20 of the parameters")((_graph_site, _blowup_apply))


def _memory_apply(g, site):
    t = g.train()
    t["device"] = "T4"
    t["batch_size"] = 65536
    return g.d


kind("memory-over-device", "warn", ["efficiency.memory-over-device"], bases=("resnet50", "vgg16"),
     doc="a batch of 65,536 declared on a 16 GB T4")((_graph_site, _memory_apply))


def _relu_sites(g):
    return [GRAPH_SITE] if any(n["op"] == "ReLU" for n in g.nodes) else []


def _saturate_apply(g, site):
    for n in g.nodes:
        if n["op"] == "ReLU":
            n["op"] = "Tanh"
            n["args"] = {}
    return g.d


kind("deep-saturating", "warn", ["numerics.deep-saturating"], bases=("vgg11", "alexnet"),
     doc="every ReLU of a normalisation-free net turned into Tanh")((_relu_sites, _saturate_apply))


def _linearise_apply(g, site):
    for n in g.nodes:
        if n["op"] == "ReLU":
            n["op"] = "Identity"
            n["args"] = {}
    return g.d


kind("no-nonlinearity", "warn", ["numerics.no-nonlinearity"], bases=("mlp_mnist", "mlp_tabular"),
     doc="every ReLU replaced by Identity")((_relu_sites, _linearise_apply))


def _bn_sites(g):
    return [GRAPH_SITE] if any(n["op"] in BNS for n in g.nodes) else []


def _drop_norms_apply(g, site):
    for n in g.nodes:
        if n["op"] in BNS:
            n["op"] = "Identity"
            n["args"] = {}
    return g.d


kind("deep-no-norm", "warn", ["numerics.deep-no-norm"], bases=("vgg16_bn", "resnet18"),
     doc="every BatchNorm of a deep plain net removed")((_bn_sites, _drop_norms_apply))


def _shared_bn_sites(g):
    out = []
    seen: dict = {}
    for n in g.nodes:
        if n["op"] not in BNS:
            continue
        key = json.dumps(n.get("args", {}), sort_keys=True)
        if key in seen:
            out.append(n["id"])
        else:
            seen[key] = n["id"]
    return out


def _shared_bn_apply(g, site):
    n = g.node(site)
    key = json.dumps(n.get("args", {}), sort_keys=True)
    for prev in g.nodes[:g.index(site)]:
        if prev["op"] == n["op"] and json.dumps(prev.get("args", {}), sort_keys=True) == key:
            n["shares"] = prev["id"]
            return g.d
    return None


kind("shared-running-stats", "warn", ["connectivity.shared-running-stats"], bases=("resnet18", "resnet20_cifar"),
     doc="a BatchNorm reused at a second call site")((_shared_bn_sites, _shared_bn_apply))


def _scale_sites(g):
    return [n["id"] for n in g.nodes if n["op"] == "Scale" and
            any(u["op"] == "Softmax" for u in g.users(n["id"]))]


kind("attention-no-scale", "warn", ["numerics.attention-no-scale"], bases=("gpt-nano", "distilbert-base-uncased"),
     doc="the 1/sqrt(d) Scale of hand-built attention removed")((_scale_sites, _remove_apply))


def _pos_sites(g):
    out = []
    for n in g.nodes:
        if n["op"] == "Add" and len(n.get("in", [])) == 2:
            srcs = [x for x in g.nodes if x["id"] in [parse_ref(r)[0] for r in n["in"]]]
            if len(srcs) == 2 and all(x["op"] == "Embedding" for x in srcs):
                out.append(n["id"])
    return out


def _pos_apply(g, site):
    # the position term dropped: consumers read the token embedding alone
    g.bypass(site)
    return g.d


kind("attention-no-position", "warn", ["numerics.attention-no-position"], bases=("tiny_transformer_lm",),
     doc="the position embedding is no longer added to the tokens")((_pos_sites, _pos_apply))


def _loss_shape_apply(g, site):
    head = parse_ref(g.d["outputs"][0])[0]
    n = g.node(head)
    if n["op"] != "Linear":
        return None
    n["args"]["out_features"] = 1
    return g.d


kind("loss-output-mismatch", "warn", ["numerics.loss-output-mismatch"], bases=("mlp_mnist", "resnet18"),
     doc="a cross_entropy classifier with a single output")((_ce_classifier, _loss_shape_apply))


def _dup_branch_sites(g):
    return [n["id"] for n in g.nodes if n["op"] in ("ReLU", "MaxPool2d", "Flatten") and len(g.users(n["id"])) >= 1
            and n.get("in")]


def _dup_branch_apply(g, site):
    n = g.node(site)
    user = g.users(site)[0]
    twin = g.fresh_id(site + ".twin")
    g.nodes.insert(g.index(site) + 1, {"id": twin, "op": n["op"], "args": dict(n.get("args", {})),
                                       "in": list(n["in"])})
    user["in"] = [twin if parse_ref(r)[0] == site else r for r in user["in"]]
    return g.d


kind("duplicate-branch", "warn", ["efficiency.duplicate-branch"], bases=("lenet5", "resnet18"),
     doc="a parameter-free layer computed twice from the same operand")((_dup_branch_sites, _dup_branch_apply))


def _parser_warn_apply(g, site):
    meta = dict(g.d.get("meta") or {})
    meta["parser_warnings"] = [{"line": "model.py:42", "message": "could not follow a loop over self.blocks"}]
    g.d["meta"] = meta
    return g.d


kind("parser-warning", "warn", ["parse.unfollowed"], bases=("tiny_cnn",),
     doc="the parser reports a construct it could not follow")((_graph_site, _parser_warn_apply))


# ---------------------------------------------------------------------------------------------
# public API


def corrupt(design_dict: dict, kind: str, rng) -> dict | None:
    """A corrupted copy of `design_dict` at a site drawn with `rng` (a random.Random), or None."""
    k = KINDS[kind]
    g = G(design_dict)
    sites = k.sites(g)
    if not sites:
        return None
    site = rng.choice(sites)
    return _apply(k, g, site, design_dict.get("name", ""))


def _apply(k: Kind, g: G, site: str, base: str) -> dict | None:
    try:
        out = k.apply(g, site)
    except (KeyError, IndexError, TypeError, ValueError, ZeroDivisionError):
        return None
    if out is None:
        return None
    meta = dict(out.get("meta") or {})
    meta["corruption"] = {"kind": k.name, "site": site, "base": base, "expect": k.expect, "rules": list(k.rules)}
    out["meta"] = meta
    out["name"] = f"{base}/{k.name}/{site}"
    return out


def _spread(sites: list, n: int) -> list:
    """n sites spread over the list (first, last, then between), in a fixed order."""
    if n >= len(sites):
        return list(sites)
    if n == 1:
        return [sites[len(sites) // 2]]
    idx = sorted({round(i * (len(sites) - 1) / (n - 1)) for i in range(n)})
    return [sites[i] for i in idx]


def load_zoo() -> dict:
    """The shipped reference designs (assets/architectures), else the zoo built in memory."""
    from .assets import asset_path

    folder = asset_path("architectures")
    files = sorted(folder.glob("*.json"))
    if files:
        out = {}
        for f in files:
            d = json.loads(f.read_text(encoding="utf-8"))
            out[d.get("name") or f.stem] = d
        return out
    from .zoo import build_zoo

    return build_zoo()


def corruption_set(zoo: dict | None = None) -> list[dict]:
    """Every kind at its sites on its bases: the deterministic corrupted half of the study."""
    zoo = load_zoo() if zoo is None else zoo
    cases = []
    seen = set()
    for k in KINDS.values():
        for base in k.bases:
            if base not in zoo:
                continue
            sites = k.sites(G(zoo[base]))
            for site in _spread(sites, k.per_base):
                out = _apply(k, G(zoo[base]), site, base)
                cid = f"{base}/{k.name}/{site}"
                if out is None or cid in seen:
                    continue
                seen.add(cid)
                cases.append({"case": cid, "kind": k.name, "base": base, "site": site, "expect": k.expect,
                              "rules": list(k.rules), "graph": out})
    return cases


def clean_set(zoo: dict | None = None) -> list[dict]:
    zoo = load_zoo() if zoo is None else zoo
    return [{"case": f"{name}/clean", "kind": "clean", "base": name, "site": None, "expect": "pass", "rules": [],
             "graph": copy.deepcopy(d)} for name, d in zoo.items()]


def ground_set(zoo: dict | None = None) -> list[dict]:
    """The full grounding study: the clean zoo graphs, then every corrupted variant."""
    zoo = load_zoo() if zoo is None else zoo
    return clean_set(zoo) + corruption_set(zoo)


__all__ = ["KINDS", "Kind", "corrupt", "corruption_set", "clean_set", "ground_set", "load_zoo"]

"""Corruption kinds: dtypes and token ids."""

from __future__ import annotations

from ...checks.shape import DTYPE_INDEX_RANGE
from ...graph import Design
from ...ops.rules import (
    DTYPE_FLOAT_INTO_EMBEDDING,
    DTYPE_INDEX_DTYPE,
    DTYPE_INT_INTO_FLOAT,
    DTYPE_MASK,
    DTYPE_MIXED,
    DTYPE_UNSUPPORTED,
)
from .base import SINGLE_STATE_RNNS, WEIGHTED, _const, _index_range_sites, branch, constant, kind, maps, shape_of


def _int_input_apply(g, site):
    for i in g.d["inputs"]:
        if i["id"] == site:
            i["dtype"] = "int64"
    return g.d


@kind("dtype-int-into-float", "block", [DTYPE_INT_INTO_FLOAT],
     bases=("resnet18", "mlp_mnist", "mobilenet_v2", "lenet5", "vit_b_32", "mlp_tabular", "unet", "vae_encoder",
            "tiny_cnn", "linear_classifier"),
     doc="the image / feature input is declared int64 (raw pixels or ids) and reaches a float layer",
     apply=_int_input_apply)
def _int_input_sites(g):
    return [i["id"] for i in g.d["inputs"] if str(i.get("dtype", "float32")).startswith("float")]


def _float_input_apply(g, site):
    for i in g.d["inputs"]:
        if i["id"] == site:
            i["dtype"] = "float32"
    return g.d


@kind("dtype-float-into-embedding", "block", [DTYPE_FLOAT_INTO_EMBEDDING],
     bases=("char_rnn", "gpt-nano", "lstm_lm", "gru_lm", "text_cnn", "tiny_transformer_lm", "seq2seq_gru",
            "bert-base-uncased"),
     doc="the token-id input is declared float32 and reaches an Embedding", apply=_float_input_apply)
def _float_input_sites(g):
    return [i["id"] for i in g.d["inputs"] if not str(i.get("dtype", "float32")).startswith(("float", "bfloat"))
            and any(n["op"] == "Embedding" and i["id"] in n.get("in", []) for n in g.nodes)]


def _index_range_apply(g, site):
    from ...sizes import declared_id_range

    src = g.node(site)["in"][0]
    vocab = declared_id_range(Design.from_dict(g.d), src)
    g.args(site)["num_embeddings"] = max(1, vocab // 2)
    return g.d


@kind("index-range", "block", [DTYPE_INDEX_RANGE],
     bases=("char_rnn", "gpt-nano", "lstm_lm", "gru_lm", "text_cnn", "tiny_transformer_lm", "seq2seq_gru",
            "distilbert-base-uncased"),
     doc="the token Embedding has half the rows of the declared vocabulary", apply=_index_range_apply)
def _where_index_range(g):
    return _index_range_sites(g)



def _int_mask_apply(g, site):
    q = g.shape(g.node(site)["in"][0])
    if q is None or len(q) != 3:
        return None
    length = q[1] if g.node(site).get("args", {}).get("batch_first") else q[0]
    if not _const(length):
        return None
    n = g.node(site)
    n["in"] = (n["in"] + n["in"][-1:] * 3)[:3] + [constant(g, [length, length], 0, site, "mask")]
    return g.d


@kind("integer-attention-mask", "block", [DTYPE_MASK], bases=("vit_b_32",), per_base=2,
      doc="an attention mask built as integers (0/1) instead of bool or float", apply=_int_mask_apply)
def _int_mask_sites(g):
    return [n["id"] for n in g.nodes if n["op"] == "MultiheadAttention"]


def _int_state_apply(g, site):
    h = g.shape(f"{site}:1")
    if h is None:
        return None
    g.node(site)["in"] = g.node(site)["in"][:1] + [constant(g, list(h), 0, site, "h0")]
    return g.d


@kind("integer-initial-state", "block", [DTYPE_MIXED], bases=("gru_lm", "seq2seq_gru"),
      doc="a GRU's initial state made as integer zeros (torch.zeros(..., dtype=long))", apply=_int_state_apply)
def _int_state_sites(g):
    return [n["id"] for n in g.nodes if n["op"] in SINGLE_STATE_RNNS and len(n.get("in", [])) == 1]


def _float_mask_apply(g, site):
    s = shape_of(g, site)
    branch(g, site, "MaskedFill", {"value": 0.0}, extra=(constant(g, list(s), 1.0, site, "mask"),), suffix="fill")
    return g.d


@kind("float-fill-mask", "block", [DTYPE_INDEX_DTYPE], bases=("mlp_mnist", "resnet18", "gpt-nano"),
      doc="a masked_fill given a float mask instead of a bool one", apply=_float_mask_apply)
def _float_mask_sites(g):
    return maps(g, 2)[:2] + maps(g, 4)[:2]


def _double_apply(g, site):
    for i in g.d["inputs"]:
        if i["id"] == site:
            i["dtype"] = "float64"
    return g.d


@kind("float64-input", "block", [DTYPE_UNSUPPORTED], bases=("resnet18", "mlp_mnist", "lenet5", "tiny_cnn"),
      doc="the input declared float64 while the layers' weights are float32", apply=_double_apply)
def _double_sites(g):
    first = {n["in"][0] for n in g.nodes if n["op"] in WEIGHTED and n.get("in")}
    return [i["id"] for i in g.d["inputs"] if i.get("dtype", "float32") == "float32" and i["id"] in first]

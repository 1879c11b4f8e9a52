"""Corruption kinds: dtypes and token ids."""

from __future__ import annotations

from ...graph import Design
from .base import _index_range_sites, kind


def _int_input_apply(g, site):
    for i in g.d["inputs"]:
        if i["id"] == site:
            i["dtype"] = "int64"
    return g.d


@kind("dtype-int-into-float", "block", ["dtype.int-into-float"],
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


@kind("dtype-float-into-embedding", "block", ["dtype.float-into-embedding"],
     bases=("char_rnn", "gpt-nano", "lstm_lm", "gru_lm", "text_cnn", "tiny_transformer_lm", "seq2seq_gru",
            "bert-base-uncased"),
     doc="the token-id input is declared float32 and reaches an Embedding", apply=_float_input_apply)
def _float_input_sites(g):
    return [i["id"] for i in g.d["inputs"] if not str(i.get("dtype", "float32")).startswith(("float", "bfloat"))
            and any(n["op"] == "Embedding" and i["id"] in n.get("in", []) for n in g.nodes)]


def _index_range_apply(g, site):
    from ...build import declared_id_range

    src = g.node(site)["in"][0]
    vocab = declared_id_range(Design.from_dict(g.d), src)
    g.args(site)["num_embeddings"] = max(1, vocab // 2)
    return g.d


@kind("index-range", "block", ["dtype.index-range"],
     bases=("char_rnn", "gpt-nano", "lstm_lm", "gru_lm", "text_cnn", "tiny_transformer_lm", "seq2seq_gru",
            "distilbert-base-uncased"),
     doc="the token Embedding has half the rows of the declared vocabulary", apply=_index_range_apply)
def _where_index_range(g):
    return _index_range_sites(g)


"""Transformers: GPT-2 and BERT (Hugging Face layouts, attention written out
by hand), ViT (torchvision), MLP-Mixer (timm), an nn.Transformer-style
encoder-decoder and small language models.

Hand-built attention follows the reference code step by step: project,
split the heads (Unflatten + Permute), Q @ K^T, Scale(1/sqrt(d_head)),
Softmax(dim=-1), dropout, @ V, merge the heads (Permute + Flatten), project.
Position ids are `Arange(end=T)` -> `Unsqueeze(0)` feeding a position
Embedding, as HF computes them.
"""

from __future__ import annotations

import math

from .builder import GraphBuilder, conv, layer_norm, linear
from .common import IMAGENET, lm_train, meta

_M = "transformer"

CAUSAL_NOTE = ("causal mask not drawn: TransformerEncoderLayer/DecoderLayer take it as a forward "
               "argument, which archgraph/1 cannot pass; it holds no parameters and no matmul FLOPs")


def causal_mask(b: GraphBuilder, p: str, sym: str = "T", neg: float = -1e4) -> str:
    """An additive causal mask [1, 1, T, T]: 0 where key j <= query i, `neg` above the
    diagonal, from ops archgraph/1 has: clamp(j - i, 0, 1) * neg. Built once, read
    by every layer; it holds no parameters and no matmul FLOPs. The final Expand
    states the broadcast over batch and heads on purpose."""
    rows = b.node(f"{p}.rows", "Arange", [], end=sym)
    rows = b.node(f"{p}.unsqueeze", "Unsqueeze", rows, dim=1)          # i: [T, 1]
    cols = b.node(f"{p}.cols", "Arange", [], end=sym)                   # j: [T]
    ahead = b.node(f"{p}.sub", "Sub", [cols, rows])                     # j - i: [T, T] int64
    one = b.node(f"{p}.one", "Constant", [], shape=[1], value=1)
    ahead = b.node(f"{p}.div", "Div", [ahead, one])                     # as float
    future = b.node(f"{p}.clamp", "Hardtanh", ahead, min_val=0.0, max_val=1.0)  # 1 above the diagonal
    m = b.node(f"{p}.scale", "Scale", future, value=neg)
    return b.node(f"{p}.expand", "Expand", m, shape=[1, 1, -1, -1])     # [1, 1, T, T]


def hand_attention(b: GraphBuilder, p: str, q: str, k: str, v: str, heads: int, head_dim: int,
                   *, dropout_id: str | None, dropout: float = 0.1, scale_query: bool = False,
                   mask: str | None = None) -> str:
    """Multi-head scaled dot-product attention on [B, T, heads*head_dim] projections,
    with an optional additive mask on the scores. Returns the merged
    [B, T, heads*head_dim] context (before the output projection)."""
    scale = 1.0 / math.sqrt(head_dim)
    if scale_query:  # DistilBERT scales q before the product
        q = b.node(b.fresh(f"{p}.div"), "Scale", q, value=scale)
    q = b.node(b.fresh(f"{p}.view"), "Unflatten", q, dim=2, unflattened_size=[heads, head_dim])
    q = b.node(b.fresh(f"{p}.permute"), "Permute", q, dims=[0, 2, 1, 3])
    k = b.node(b.fresh(f"{p}.view"), "Unflatten", k, dim=2, unflattened_size=[heads, head_dim])
    k = b.node(b.fresh(f"{p}.permute"), "Permute", k, dims=[0, 2, 3, 1])  # K^T: [B, h, d, T]
    v = b.node(b.fresh(f"{p}.view"), "Unflatten", v, dim=2, unflattened_size=[heads, head_dim])
    v = b.node(b.fresh(f"{p}.permute"), "Permute", v, dims=[0, 2, 1, 3])
    s = b.node(b.fresh(f"{p}.matmul"), "MatMul", [q, k])
    if mask is not None:  # added before the scaling: -1e4 * 1/sqrt(d) still zeroes the softmax
        s = b.node(b.fresh(f"{p}.add"), "Add", [s, mask])
    if not scale_query:
        s = b.node(b.fresh(f"{p}.div"), "Scale", s, value=scale)
    s = b.node(b.fresh(f"{p}.softmax"), "Softmax", s, dim=-1)
    if dropout_id is not None:
        s = b.node(dropout_id, "Dropout", s, p=dropout)
    o = b.node(b.fresh(f"{p}.matmul"), "MatMul", [s, v])
    o = b.node(b.fresh(f"{p}.permute"), "Permute", o, dims=[0, 2, 1, 3])
    return b.node(b.fresh(f"{p}.view"), "Flatten", o, start_dim=2)


# ---- GPT-2 (Hugging Face GPT2LMHeadModel) --------------------------------

_GPT2 = {  # n_embd, n_layer, n_head, vocab, n_positions, published params (tied head counted once)
    "gpt2": (768, 12, 12, 50257, 1024, 124_439_808),
    "gpt2-medium": (1024, 24, 16, 50257, 1024, 354_823_168),
}


def gpt(name: str, d: int, layers: int, heads: int, vocab: int, n_pos: int, *,
        params: int | None, origin: str, tied: bool = True, seq_len: int | None = None,
        train: dict | None = None) -> dict:
    note = ("Conv1D layers are written as Linear (same weights and FLOPs); the causal mask is "
            "additive (-1e4 above the diagonal), built once from Arange/Sub/Hardtanh")
    b = GraphBuilder(name, train=train or lm_train(seq_len or n_pos, vocab, batch=8),
                     meta=meta("gpt", origin, params=params, module=_M, note=note))
    ids = b.input("input_ids", ["B", "T"], "int64")
    tok = b.node("transformer.wte", "Embedding", ids, num_embeddings=vocab, embedding_dim=d)
    pos_ids = b.node("transformer.arange", "Arange", [], end="T")
    pos_ids = b.node("transformer.unsqueeze", "Unsqueeze", pos_ids, dim=0)
    pos = b.node("transformer.wpe", "Embedding", pos_ids, num_embeddings=n_pos, embedding_dim=d)
    x = b.node("transformer.add", "Add", [tok, pos])
    x = b.node("transformer.drop", "Dropout", x, p=0.1)
    mask = causal_mask(b, "transformer.causal_mask")
    for i in range(layers):
        p = f"transformer.h.{i}"
        h = layer_norm(b, f"{p}.ln_1", x, d)
        qkv = linear(b, f"{p}.attn.c_attn", h, d, 3 * d)
        sp = b.node(f"{p}.attn.split", "Split", qkv, split_size_or_sections=d, dim=2)
        a = hand_attention(b, f"{p}.attn", f"{sp}:0", f"{sp}:1", f"{sp}:2", heads, d // heads,
                           dropout_id=f"{p}.attn.attn_dropout", mask=mask)
        a = linear(b, f"{p}.attn.c_proj", a, d, d)
        a = b.node(f"{p}.attn.resid_dropout", "Dropout", a, p=0.1)
        x = b.node(f"{p}.add", "Add", [a, x])
        h = layer_norm(b, f"{p}.ln_2", x, d)
        h = linear(b, f"{p}.mlp.c_fc", h, d, 4 * d)
        h = b.node(f"{p}.mlp.act", "GELU", h, approximate="tanh")
        h = linear(b, f"{p}.mlp.c_proj", h, 4 * d, d)
        h = b.node(f"{p}.mlp.dropout", "Dropout", h, p=0.1)
        x = b.node(f"{p}.add_1", "Add", [h, x])
    x = layer_norm(b, "transformer.ln_f", x, d)
    x = linear(b, "lm_head", x, d, vocab, bias=False, shares="transformer.wte" if tied else None)
    b.output(x)
    return b.design()


# ---- BERT / DistilBERT (Hugging Face) --------------------------------------

def bert_base_uncased() -> dict:
    d, layers, heads, vocab, n_pos, ff = 768, 12, 12, 30522, 512, 3072
    b = GraphBuilder("bert-base-uncased", train=lm_train(512, vocab, batch=32, steps=1_000_000),
                     meta=meta("bert", "transformers.BertModel (bert-base-uncased, with pooler)",
                               params=109_482_240, module=_M,
                               note="token_type_ids are all zero (HF's default buffer): a [1, 1] "
                                    "Constant 0 whose embedding broadcasts over [B, T]"))
    ids = b.input("input_ids", ["B", "T"], "int64")
    e = "embeddings"
    w = b.node(f"{e}.word_embeddings", "Embedding", ids, num_embeddings=vocab, embedding_dim=d)
    tt_ids = b.node(f"{e}.token_type_ids", "Constant", [], shape=[1, 1], value=0)
    tt = b.node(f"{e}.token_type_embeddings", "Embedding", tt_ids, num_embeddings=2, embedding_dim=d)
    x = b.node(f"{e}.add", "Add", [w, tt])
    pos_ids = b.node(f"{e}.position_ids", "Arange", [], end="T")
    pos_ids = b.node(f"{e}.unsqueeze", "Unsqueeze", pos_ids, dim=0)
    pos = b.node(f"{e}.position_embeddings", "Embedding", pos_ids, num_embeddings=n_pos,
                 embedding_dim=d)
    x = b.node(f"{e}.add_1", "Add", [x, pos])
    x = layer_norm(b, f"{e}.LayerNorm", x, d, eps=1e-12)
    x = b.node(f"{e}.dropout", "Dropout", x, p=0.1)
    for i in range(layers):
        p = f"encoder.layer.{i}"
        q = linear(b, f"{p}.attention.self.query", x, d, d)
        k = linear(b, f"{p}.attention.self.key", x, d, d)
        v = linear(b, f"{p}.attention.self.value", x, d, d)
        a = hand_attention(b, f"{p}.attention.self", q, k, v, heads, d // heads,
                           dropout_id=f"{p}.attention.self.dropout")
        a = linear(b, f"{p}.attention.output.dense", a, d, d)
        a = b.node(f"{p}.attention.output.dropout", "Dropout", a, p=0.1)
        a = b.node(f"{p}.attention.output.add", "Add", [a, x])
        x = layer_norm(b, f"{p}.attention.output.LayerNorm", a, d, eps=1e-12)
        h = linear(b, f"{p}.intermediate.dense", x, d, ff)
        h = b.node(f"{p}.intermediate.intermediate_act_fn", "GELU", h)
        h = linear(b, f"{p}.output.dense", h, ff, d)
        h = b.node(f"{p}.output.dropout", "Dropout", h, p=0.1)
        h = b.node(f"{p}.output.add", "Add", [h, x])
        x = layer_norm(b, f"{p}.output.LayerNorm", h, d, eps=1e-12)
    first = b.node("pooler.select", "Select", x, dim=1, index=0)
    pooled = linear(b, "pooler.dense", first, d, d)
    pooled = b.node("pooler.activation", "Tanh", pooled)
    b.output(x, pooled)
    return b.design()


def distilbert_base_uncased() -> dict:
    d, layers, heads, vocab, n_pos, ff = 768, 6, 12, 30522, 512, 3072
    b = GraphBuilder("distilbert-base-uncased", train=lm_train(512, vocab, batch=32),
                     meta=meta("bert", "transformers.DistilBertModel (distilbert-base-uncased)",
                               params=66_362_880, module=_M))
    ids = b.input("input_ids", ["B", "T"], "int64")
    e = "embeddings"
    w = b.node(f"{e}.word_embeddings", "Embedding", ids, num_embeddings=vocab, embedding_dim=d)
    pos_ids = b.node(f"{e}.position_ids", "Arange", [], end="T")
    pos_ids = b.node(f"{e}.unsqueeze", "Unsqueeze", pos_ids, dim=0)
    pos = b.node(f"{e}.position_embeddings", "Embedding", pos_ids, num_embeddings=n_pos,
                 embedding_dim=d)
    x = b.node(f"{e}.add", "Add", [w, pos])
    x = layer_norm(b, f"{e}.LayerNorm", x, d, eps=1e-12)
    x = b.node(f"{e}.dropout", "Dropout", x, p=0.1)
    for i in range(layers):
        p = f"transformer.layer.{i}"
        q = linear(b, f"{p}.attention.q_lin", x, d, d)
        k = linear(b, f"{p}.attention.k_lin", x, d, d)
        v = linear(b, f"{p}.attention.v_lin", x, d, d)
        a = hand_attention(b, f"{p}.attention", q, k, v, heads, d // heads,
                           dropout_id=f"{p}.attention.dropout", scale_query=True)
        a = linear(b, f"{p}.attention.out_lin", a, d, d)
        a = b.node(f"{p}.add", "Add", [a, x])
        x = layer_norm(b, f"{p}.sa_layer_norm", a, d, eps=1e-12)
        h = linear(b, f"{p}.ffn.lin1", x, d, ff)
        h = b.node(f"{p}.ffn.activation", "GELU", h)
        h = linear(b, f"{p}.ffn.lin2", h, ff, d)
        h = b.node(f"{p}.ffn.dropout", "Dropout", h, p=0.1)
        h = b.node(f"{p}.add_1", "Add", [h, x])
        x = layer_norm(b, f"{p}.output_layer_norm", h, d, eps=1e-12)
    b.output(x)
    return b.design()


# ---- ViT (torchvision.models.vision_transformer) ---------------------------

_VIT = {  # patch, layers, heads, hidden, mlp, published params, GMACs
    "vit_b_16": (16, 12, 12, 768, 3072, 86_567_656, 17.564),
    "vit_b_32": (32, 12, 12, 768, 3072, 88_224_232, 4.409),
    "vit_l_16": (16, 24, 16, 1024, 4096, 304_326_632, 61.555),
}


def vit(name: str) -> dict:
    patch, layers, heads, d, mlp, params, gmacs = _VIT[name]
    b = GraphBuilder(name, train=IMAGENET,
                     meta=meta("vit", f"torchvision.models.{name}", params=params, gmacs=gmacs,
                               module=_M))
    n = (224 // patch) ** 2
    x = b.input("x", ["B", 3, 224, 224])
    x = conv(b, "conv_proj", x, 3, d, patch, patch)
    x = b.node("reshape", "Flatten", x, start_dim=2)
    x = b.node("permute", "Permute", x, dims=[0, 2, 1])
    cls = b.param("class_token", [1, 1, d])
    cls = b.node("expand", "Expand", cls, shape=["B", -1, -1])
    x = b.node("cat", "Concat", [cls, x], dim=1)
    pos = b.param("encoder.pos_embedding", [1, n + 1, d])
    x = b.node("encoder.add", "Add", [x, pos])
    x = b.node("encoder.dropout", "Dropout", x, p=0.0)
    for i in range(layers):
        p = f"encoder.layers.encoder_layer_{i}"
        h = layer_norm(b, f"{p}.ln_1", x, d, eps=1e-6)
        h = b.node(f"{p}.self_attention", "MultiheadAttention", [h, h, h], embed_dim=d,
                   num_heads=heads, dropout=0.0, batch_first=True)
        h = b.node(f"{p}.dropout", "Dropout", f"{h}:0", p=0.0)
        x = b.node(f"{p}.add", "Add", [h, x])
        y = layer_norm(b, f"{p}.ln_2", x, d, eps=1e-6)
        y = linear(b, f"{p}.mlp.0", y, d, mlp)
        y = b.node(f"{p}.mlp.1", "GELU", y)
        y = b.node(f"{p}.mlp.2", "Dropout", y, p=0.0)
        y = linear(b, f"{p}.mlp.3", y, mlp, d)
        y = b.node(f"{p}.mlp.4", "Dropout", y, p=0.0)
        x = b.node(f"{p}.add_1", "Add", [x, y])
    x = layer_norm(b, "encoder.ln", x, d, eps=1e-6)
    x = b.node("select", "Select", x, dim=1, index=0)
    x = linear(b, "heads.head", x, d, 1000)
    b.output(x)
    return b.design()


# ---- MLP-Mixer (timm) ----------------------------------------------------

_MIXER = {  # patch, blocks, hidden, tokens_mlp, channels_mlp, params
    "mixer_s16_224": (16, 8, 512, 256, 2048, 18_528_264),
    "mixer_b16_224": (16, 12, 768, 384, 3072, 59_880_472),
}


def mixer(name: str) -> dict:
    patch, blocks, d, tok, ch, params = _MIXER[name]
    b = GraphBuilder(name, train=IMAGENET,
                     meta=meta("mlp-mixer", f"timm {name}", params=params, module=_M))
    n = (224 // patch) ** 2
    x = b.input("x", ["B", 3, 224, 224])
    x = conv(b, "stem.proj", x, 3, d, patch, patch)
    x = b.node("stem.flatten", "Flatten", x, start_dim=2)
    x = b.node("stem.transpose", "Transpose", x, dim0=1, dim1=2)
    for i in range(blocks):
        p = f"blocks.{i}"
        h = layer_norm(b, f"{p}.norm1", x, d, eps=1e-6)
        h = b.node(f"{p}.transpose", "Transpose", h, dim0=1, dim1=2)
        h = linear(b, f"{p}.mlp_tokens.fc1", h, n, tok)
        h = b.node(f"{p}.mlp_tokens.act", "GELU", h)
        h = b.node(f"{p}.mlp_tokens.drop1", "Dropout", h, p=0.0)
        h = linear(b, f"{p}.mlp_tokens.fc2", h, tok, n)
        h = b.node(f"{p}.mlp_tokens.drop2", "Dropout", h, p=0.0)
        h = b.node(f"{p}.transpose_1", "Transpose", h, dim0=1, dim1=2)
        x = b.node(f"{p}.add", "Add", [x, h])
        h = layer_norm(b, f"{p}.norm2", x, d, eps=1e-6)
        h = linear(b, f"{p}.mlp_channels.fc1", h, d, ch)
        h = b.node(f"{p}.mlp_channels.act", "GELU", h)
        h = b.node(f"{p}.mlp_channels.drop1", "Dropout", h, p=0.0)
        h = linear(b, f"{p}.mlp_channels.fc2", h, ch, d)
        h = b.node(f"{p}.mlp_channels.drop2", "Dropout", h, p=0.0)
        x = b.node(f"{p}.add_1", "Add", [x, h])
    x = layer_norm(b, "norm", x, d, eps=1e-6)
    x = b.node("mean", "Mean", x, dim=1)
    x = linear(b, "head", x, d, 1000)
    b.output(x)
    return b.design()


# ---- nn.Transformer-style encoder-decoder --------------------------------

def transformer_seq2seq() -> dict:
    """"Attention Is All You Need" base: nn.Transformer(d_model=512, nhead=8, 6+6
    layers, dim_feedforward=2048), one 32k vocabulary shared by the source and
    target embeddings and the output projection, learned positions."""
    d, heads, ff, layers, vocab, max_len = 512, 8, 2048, 6, 32000, 512
    b = GraphBuilder("transformer", train=lm_train(128, vocab, batch=64),
                     meta=meta("transformer", "torch.nn.Transformer, Vaswani et al. 2017 base",
                               module=_M,
                               note="learned positions instead of the sinusoidal table (a buffer); "
                                    "the target causal mask is not drawn: TransformerDecoderLayer takes "
                                    "tgt_mask as a forward argument, which archgraph/1 cannot pass"))
    src = b.input("src", ["B", "S"], "int64")
    tgt = b.input("tgt", ["B", "T"], "int64")
    lay = dict(d_model=d, nhead=heads, dim_feedforward=ff, dropout=0.1, batch_first=True)
    s = b.node("src_tok_emb", "Embedding", src, num_embeddings=vocab, embedding_dim=d)
    s = b.node("src_scale", "Scale", s, value=math.sqrt(d))
    sp = b.node("src_positions", "Arange", [], end="S")
    sp = b.node("src_unsqueeze", "Unsqueeze", sp, dim=0)
    sp = b.node("pos_emb", "Embedding", sp, num_embeddings=max_len, embedding_dim=d)
    s = b.node("src_add", "Add", [s, sp])
    s = b.node("src_dropout", "Dropout", s, p=0.1)
    for i in range(layers):
        s = b.node(f"transformer.encoder.layers.{i}", "TransformerEncoderLayer", s, **lay)
    mem = layer_norm(b, "transformer.encoder.norm", s, d)
    t = b.node("tgt_tok_emb", "Embedding", tgt, shares="src_tok_emb", num_embeddings=vocab,
               embedding_dim=d)
    t = b.node("tgt_scale", "Scale", t, value=math.sqrt(d))
    tp = b.node("tgt_positions", "Arange", [], end="T")
    tp = b.node("tgt_unsqueeze", "Unsqueeze", tp, dim=0)
    tp = b.node("tgt_pos_emb", "Embedding", tp, shares="pos_emb", num_embeddings=max_len,
                embedding_dim=d)
    t = b.node("tgt_add", "Add", [t, tp])
    t = b.node("tgt_dropout", "Dropout", t, p=0.1)
    for i in range(layers):
        t = b.node(f"transformer.decoder.layers.{i}", "TransformerDecoderLayer", [t, mem], **lay)
    t = layer_norm(b, "transformer.decoder.norm", t, d)
    out = linear(b, "generator", t, d, vocab, bias=False, shares="src_tok_emb")
    b.output(out)
    return b.design()


def tiny_transformer_lm() -> dict:
    """A small decoder-only LM from nn.TransformerEncoderLayer (pre-norm, GELU)."""
    d, heads, layers, vocab, seq = 256, 4, 4, 8192, 256
    b = GraphBuilder("tiny_transformer_lm", train=lm_train(seq, vocab, batch=64, steps=20_000),
                     meta=meta("transformer", "nn.TransformerEncoderLayer stack, pre-norm",
                               module=_M, note=CAUSAL_NOTE))
    ids = b.input("input_ids", ["B", "T"], "int64")
    x = b.node("tok_emb", "Embedding", ids, num_embeddings=vocab, embedding_dim=d)
    pos = b.node("positions", "Arange", [], end="T")
    pos = b.node("unsqueeze", "Unsqueeze", pos, dim=0)
    pos = b.node("pos_emb", "Embedding", pos, num_embeddings=seq, embedding_dim=d)
    x = b.node("add", "Add", [x, pos])
    x = b.node("drop", "Dropout", x, p=0.1)
    for i in range(layers):
        x = b.node(f"encoder.layers.{i}", "TransformerEncoderLayer", x, d_model=d, nhead=heads,
                   dim_feedforward=4 * d, dropout=0.1, activation="gelu", batch_first=True,
                   norm_first=True)
    x = layer_norm(b, "ln_f", x, d)
    x = linear(b, "head", x, d, vocab, bias=False)
    b.output(x)
    return b.design()


def builders() -> dict:
    out: dict = {}
    for name, (d, nl, nh, vocab, npos, params) in _GPT2.items():
        out[name] = (lambda n=name, d=d, nl=nl, nh=nh, v=vocab, np_=npos, pp=params:
                     gpt(n, d, nl, nh, v, np_, params=pp,
                         origin=f"transformers.GPT2LMHeadModel ({n}), lm_head tied to wte"))
    out["gpt-nano"] = lambda: gpt(
        "gpt-nano", 48, 3, 3, 65, 128, params=None, tied=False,
        origin="minGPT gpt-nano (n_layer=3, n_head=3, n_embd=48), char-level vocab 65",
        train=lm_train(128, 65, batch=64, steps=5_000))
    out["bert-base-uncased"] = bert_base_uncased
    out["distilbert-base-uncased"] = distilbert_base_uncased
    for name in _VIT:
        out[name] = (lambda n=name: vit(n))
    for name in _MIXER:
        out[name] = (lambda n=name: mixer(n))
    out["transformer"] = transformer_seq2seq
    out["tiny_transformer_lm"] = tiny_transformer_lm
    return out

"""Clean designs as agents propose them today, written without the verifier in mind (issue 26).

`families()` names 32 families (MoE routing, RoPE, ALiBi, GQA, sliding-window attention, SSM scans,
Perceiver, Swin windows, conformer, WaveNet, VQ, message passing, U-Net, ViT, GPT-style LMs, DiT, T5,
LoRA ...); each draws its hyperparameters from a seeded RNG and writes archgraph/1 by hand, the way an agent writes the
graph of the module it means. Nothing here imports archcurator: what the verifier checks is unknown to
it. `meta.example_sizes` names the sizes the author had in mind for each symbol (the executor runs
there; the verifier never reads meta).

    python bench/clean_designs.py --out /tmp/clean --per-family 14
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path


class G:
    """A small graph writer: `g.op("Linear", x, in_features=..)` returns the new node's id."""

    def __init__(self, name: str, rng: random.Random):
        self.name, self.rng = name, rng
        self.inputs, self.nodes, self.k = [], [], 0
        self.train: dict = {}
        self.sizes: dict = {}

    def inp(self, id, shape, dtype="float32", **extra):
        self.inputs.append({"id": id, "shape": list(shape), "dtype": dtype, **extra})
        return id

    def op(self, op, *ins, name=None, **args):
        self.k += 1
        nid = name or f"{op.lower()}{self.k}"
        self.nodes.append({"id": nid, "op": op, "args": args, "in": list(ins)})
        return nid

    def done(self, *outs):
        d = {"format": "archgraph/1", "name": self.name, "inputs": self.inputs, "nodes": self.nodes,
             "outputs": list(outs), "meta": {"example_sizes": self.sizes, "source": "bench/clean_designs.py"}}
        if self.train:
            d["train"] = self.train
        return d


def _train(g, rng, seq=None, batch=None, declare=None):
    """Agents declare their sizes about half the time."""
    declare = rng.random() < 0.5 if declare is None else declare
    g.train = {"loss": "cross_entropy", "steps": rng.choice([1000, 5000, 20000]), "optimizer": "adamw"}
    if declare:
        if batch:
            g.train["batch_size"] = batch
        if seq:
            g.train["seq_len"] = seq


# ---- building blocks (what an agent writes for each module) -------------------------------------------
def mha(g, x, d, h, causal=False, scale=True, rope=None, alibi=None, kv_heads=None, window=None, T="T"):
    """Hand-written attention on [B, T, d]: q, k, v projections, heads, scores, softmax, merge."""
    hd = d // h
    kvh = kv_heads or h
    q = g.op("Linear", x, in_features=d, out_features=d)
    k = g.op("Linear", x, in_features=d, out_features=kvh * hd)
    v = g.op("Linear", x, in_features=d, out_features=kvh * hd)
    q = g.op("Transpose", g.op("Reshape", q, shape=["B", T, h, hd]), dim0=1, dim1=2)
    k = g.op("Transpose", g.op("Reshape", k, shape=["B", T, kvh, hd]), dim0=1, dim1=2)
    v = g.op("Transpose", g.op("Reshape", v, shape=["B", T, kvh, hd]), dim0=1, dim1=2)
    if rope:
        q, k = rope_apply(g, q, rope, hd, T), rope_apply(g, k, rope, hd, T)
    if kvh != h:  # grouped-query: repeat each kv head h // kvh times
        rep = h // kvh
        k = g.op("Reshape", g.op("Expand", g.op("Unsqueeze", k, dim=2), shape=["B", kvh, rep, T, hd]),
                 shape=["B", h, T, hd])
        v = g.op("Reshape", g.op("Expand", g.op("Unsqueeze", v, dim=2), shape=["B", kvh, rep, T, hd]),
                 shape=["B", h, T, hd])
    s = g.op("MatMul", q, g.op("Transpose", k, dim0=-2, dim1=-1))
    if scale:
        s = g.op("Scale", s, value=hd ** -0.5)
    if alibi is not None:
        s = g.op("Add", s, alibi)
    if causal or window:
        s = g.op("Add", s, causal_mask(g, T, window))
    a = g.op("Softmax", s, dim=-1)
    o = g.op("MatMul", a, v)
    o = g.op("Reshape", g.op("Transpose", o, dim0=1, dim1=2), shape=["B", T, d])
    return g.op("Linear", o, in_features=d, out_features=d)


def causal_mask(g, T, window=None):
    """An additive [T, T] mask: -1e4 where a query may not look (j > i; and j < i - window + 1 for a
    sliding window), 0 elsewhere, from the distance j - i of two aranges."""
    i = g.op("Unsqueeze", g.op("Arange", end=T), dim=1)
    j = g.op("Unsqueeze", g.op("Arange", end=T), dim=0)
    dist = g.op("Sub", j, i)  # [T, T]: key position minus query position
    blocked = g.op("Clamp", dist, min=0, max=1)
    if window:
        past = g.op("Clamp", g.op("Scale", g.op("Add", dist, g.op("Constant", shape=[1], value=window - 1,
                                                                  dtype="int64")), value=-1), min=0, max=1)
        blocked = g.op("Add", blocked, past)
    return g.op("Scale", blocked, value=-1e4)


def rope_apply(g, x, tables, hd, T):
    """x [B, h, T, hd] * cos + rotate_half(x) * sin, the tables [maxT, hd] sliced to T."""
    cos_t, sin_t = tables
    cos = g.op("Slice", cos_t, dim=0, start=0, end=T)
    sin = g.op("Slice", sin_t, dim=0, start=0, end=T)
    x1 = g.op("Slice", x, dim=-1, start=0, end=hd // 2)
    x2 = g.op("Slice", x, dim=-1, start=hd // 2, end=None)
    rot = g.op("Concat", g.op("Scale", x2, value=-1.0), x1, dim=-1)
    return g.op("Add", g.op("Mul", x, cos), g.op("Mul", rot, sin))


def mlp(g, x, d, f, act="GELU"):
    return g.op("Linear", g.op(act, g.op("Linear", x, in_features=d, out_features=f)), in_features=f, out_features=d)


def swiglu(g, x, d, f):
    a = g.op("Linear", x, in_features=d, out_features=f)
    b = g.op("Linear", x, in_features=d, out_features=f)
    return g.op("Linear", g.op("Mul", g.op("SiLU", a), b), in_features=f, out_features=d)


def block(g, x, d, h, f, norm="LayerNorm", **att):
    n1 = g.op(norm, x, normalized_shape=d)
    x = g.op("Add", x, mha(g, n1, d, h, **att))
    n2 = g.op(norm, x, normalized_shape=d)
    return g.op("Add", x, (swiglu if norm == "RMSNorm" else mlp)(g, n2, d, f))


def pick(rng, *xs):
    return rng.choice(xs)


# ---- families ----------------------------------------------------------------------------------------
def gpt_lm(rng, i):
    g = G(f"gpt-lm-{i}", rng)
    d, h = pick(rng, (64, 4), (128, 4), (96, 6), (256, 8))
    V, L, maxT = pick(rng, 500, 1000, 5000), rng.randint(1, 3), pick(rng, 64, 128, 256)
    ids = g.inp("ids", ["B", "T"], "int64", vocab_size=V)
    tok = g.op("Embedding", ids, num_embeddings=V, embedding_dim=d)
    pos = g.op("Parameter", shape=[maxT, d])
    x = g.op("Add", tok, g.op("Slice", pos, dim=0, start=0, end="T"))
    for _ in range(L):
        x = block(g, x, d, h, 4 * d, causal=True)
    x = g.op("LayerNorm", x, normalized_shape=d)
    out = g.op("Linear", x, in_features=d, out_features=V, bias=False)
    g.sizes = {"B": 2, "T": min(32, maxT)}
    _train(g, rng, seq=min(64, maxT), batch=8)
    return g.done(out)


def llama_rope_gqa(rng, i):
    g = G(f"llama-rope-gqa-{i}", rng)
    d, h, kvh = pick(rng, (128, 8, 2), (128, 4, 2), (256, 8, 4), (64, 4, 1))
    V, L, maxT = pick(rng, 1000, 32000 // 8), rng.randint(1, 2), pick(rng, 128, 512)
    ids = g.inp("ids", ["B", "T"], "int64", vocab_size=V)
    x = g.op("Embedding", ids, num_embeddings=V, embedding_dim=d)
    hd = d // h
    cos = g.op("Parameter", shape=[maxT, hd], name="rope_cos")
    sin = g.op("Parameter", shape=[maxT, hd], name="rope_sin")
    for _ in range(L):
        x = block(g, x, d, h, pick(rng, 2, 3, 4) * d, norm="RMSNorm", causal=True, rope=(cos, sin), kv_heads=kvh)
    x = g.op("RMSNorm", x, normalized_shape=d)
    out = g.op("Linear", x, in_features=d, out_features=V, bias=False)
    g.sizes = {"B": 2, "T": 16}
    _train(g, rng, seq=pick(rng, 64, 128), batch=4)
    return g.done(out)


def alibi_lm(rng, i):
    g = G(f"alibi-lm-{i}", rng)
    d, h = pick(rng, (64, 4), (128, 8))
    V = pick(rng, 256, 2000)
    ids = g.inp("ids", ["B", "T"], "int64", vocab_size=V)
    x = g.op("Embedding", ids, num_embeddings=V, embedding_dim=d)
    # ALiBi: slopes [h, 1, 1] times the distance matrix j - i of two aranges
    i_ = g.op("Unsqueeze", g.op("Arange", end="T"), dim=1)
    j_ = g.op("Unsqueeze", g.op("Arange", end="T"), dim=0)
    dist = g.op("Sub", j_, i_)
    slopes = g.op("Parameter", shape=[h, 1, 1], name="alibi_slopes")
    bias = g.op("Unsqueeze", g.op("Mul", slopes, dist), dim=0)
    for _ in range(rng.randint(1, 2)):
        x = block(g, x, d, h, 4 * d, causal=True, alibi=bias)
    out = g.op("Linear", g.op("LayerNorm", x, normalized_shape=d), in_features=d, out_features=V)
    g.sizes = {"B": 2, "T": 24}
    _train(g, rng, seq=128, batch=8)
    return g.done(out)


def sliding_window(rng, i):
    g = G(f"sliding-window-{i}", rng)
    d, h = pick(rng, (64, 4), (128, 8))
    x = g.inp("x", ["B", "T", d])
    for _ in range(rng.randint(1, 2)):
        x = block(g, x, d, h, 2 * d, causal=True, window=pick(rng, 4, 8, 16))
    g.sizes = {"B": 2, "T": 20}
    _train(g, rng, seq=64, batch=4)
    return g.done(x)


def moe(rng, i):
    g = G(f"moe-{i}", rng)
    d, E, f = pick(rng, 64, 128), pick(rng, 4, 8), pick(rng, 128, 256)
    x = g.inp("x", ["B", "T", d])
    n = g.op("LayerNorm", x, normalized_shape=d)
    gate = g.op("Softmax", g.op("Linear", n, in_features=d, out_features=E, bias=False), dim=-1)  # [B, T, E]
    # dense mixture: every expert, weighted by its gate (what small MoE prototypes do)
    outs = [mlp(g, n, d, f, act=pick(rng, "GELU", "SiLU")) for _ in range(E)]
    st = g.op("Stack", *outs, dim=-1)  # [B, T, d, E]
    w = g.op("Unsqueeze", gate, dim=2)  # [B, T, 1, E]
    mixed = g.op("Sum", g.op("Mul", st, w), dim=-1)
    y = g.op("Add", x, mixed)
    g.sizes = {"B": 2, "T": 10}
    _train(g, rng, seq=32, batch=16)
    return g.done(y)


def moe_topk_mask(rng, i):
    g = G(f"moe-topk-{i}", rng)
    d, E = pick(rng, 32, 64), pick(rng, 4, 8)
    x = g.inp("x", ["B", "T", d])
    logits = g.op("Linear", x, in_features=d, out_features=E)
    top = g.op("Amax", logits, dim=-1, keepdim=True)
    # keep the top expert: every other logit is pushed down by 1e4 (below the max by more than 1e-3)
    below = g.op("Clamp", g.op("Scale", g.op("Sub", top, logits), value=1e3), min=0.0, max=1.0)
    gate = g.op("Softmax", g.op("Sub", logits, g.op("Scale", below, value=1e4)), dim=-1)
    experts = [g.op("Linear", x, in_features=d, out_features=d) for _ in range(E)]
    st = g.op("Stack", *experts, dim=2)  # [B, T, E, d]
    y = g.op("Sum", g.op("Mul", st, g.op("Unsqueeze", gate, dim=-1)), dim=2)
    g.sizes = {"B": 2, "T": 6}
    _train(g, rng, seq=16, batch=8)
    return g.done(y)


def ssm_scan(rng, i):
    """Mamba-like: in-proj, a causal depthwise conv (pad both sides, keep the first T), a gated scan by
    cumulative sums."""
    g = G(f"ssm-scan-{i}", rng)
    d, e, k = pick(rng, 32, 64), pick(rng, 2, 2, 4), pick(rng, 3, 4)
    x = g.inp("x", ["B", "T", d])
    di = d * e
    u = g.op("Linear", x, in_features=d, out_features=2 * di)
    a = g.op("Chunk", u, chunks=2, dim=-1)
    xs, z = f"{a}:0", f"{a}:1"
    c = g.op("Conv1d", g.op("Transpose", xs, dim0=1, dim1=2), in_channels=di, out_channels=di, kernel_size=k,
             padding=k - 1, groups=di)
    c = g.op("Transpose", g.op("Slice", c, dim=2, start=0, end="T"), dim0=1, dim1=2)
    c = g.op("SiLU", c)
    dt = g.op("Softplus", g.op("Linear", c, in_features=di, out_features=di))
    h = g.op("Cumsum", g.op("Mul", dt, c), dim=1)  # a running state over time
    y = g.op("Mul", h, g.op("SiLU", z))
    out = g.op("Add", x, g.op("Linear", y, in_features=di, out_features=d))
    g.sizes = {"B": 2, "T": 12}
    _train(g, rng, seq=64, batch=8)
    return g.done(out)


def perceiver(rng, i):
    g = G(f"perceiver-{i}", rng)
    d, n_lat, h = pick(rng, 64, 128), pick(rng, 16, 32), 4
    x = g.inp("x", ["B", "T", d])
    lat = g.op("Parameter", shape=[1, n_lat, d], name="latents")
    lat = g.op("Expand", lat, shape=["B", -1, -1])
    hd = d // h
    q = g.op("Linear", lat, in_features=d, out_features=d)
    k = g.op("Linear", x, in_features=d, out_features=d)
    v = g.op("Linear", x, in_features=d, out_features=d)
    q = g.op("Transpose", g.op("Reshape", q, shape=["B", n_lat, h, hd]), dim0=1, dim1=2)
    k = g.op("Transpose", g.op("Reshape", k, shape=["B", "T", h, hd]), dim0=1, dim1=2)
    v = g.op("Transpose", g.op("Reshape", v, shape=["B", "T", h, hd]), dim0=1, dim1=2)
    s = g.op("Scale", g.op("MatMul", q, g.op("Transpose", k, dim0=-2, dim1=-1)), value=hd ** -0.5)
    o = g.op("MatMul", g.op("Softmax", s, dim=-1), v)
    o = g.op("Reshape", g.op("Transpose", o, dim0=1, dim1=2), shape=["B", n_lat, d])
    z = g.op("Add", lat, g.op("Linear", o, in_features=d, out_features=d))
    z = g.op("Add", z, mlp(g, g.op("LayerNorm", z, normalized_shape=d), d, 2 * d))
    out = g.op("Linear", g.op("Mean", z, dim=1), in_features=d, out_features=10)
    g.sizes = {"B": 2, "T": 50}
    _train(g, rng, seq=256, batch=8)
    return g.done(out)


def swin_window(rng, i):
    g = G(f"swin-window-{i}", rng)
    C, w, h = pick(rng, 32, 48, 64), pick(rng, 4, 7), pick(rng, 2, 4)
    while C % h:
        h //= 2
    n = pick(rng, 2, 4)
    H = W = w * n
    x = g.inp("x", ["B", 3, H, W])
    p = g.op("Conv2d", x, in_channels=3, out_channels=C, kernel_size=1)
    t = g.op("Permute", p, dims=[0, 2, 3, 1])  # [B, H, W, C]
    if rng.random() < 0.5:
        t = g.op("Roll", t, shifts=[-(w // 2), -(w // 2)], dims=[1, 2])
    t = g.op("Reshape", t, shape=["B", n, w, n, w, C])
    t = g.op("Reshape", g.op("Permute", t, dims=[0, 1, 3, 2, 4, 5]), shape=[-1, w * w, C])  # windows
    t = g.op("LayerNorm", t, normalized_shape=C)
    hd = C // h
    qkv = g.op("Reshape", g.op("Linear", t, in_features=C, out_features=3 * C), shape=[-1, w * w, 3, h, hd])
    qkv = g.op("Permute", qkv, dims=[2, 0, 3, 1, 4])
    q, k, v = (g.op("Select", qkv, dim=0, index=j) for j in range(3))
    rel = g.op("Parameter", shape=[h, w * w, w * w], name="rel_pos_bias")
    s = g.op("Add", g.op("Scale", g.op("MatMul", q, g.op("Transpose", k, dim0=-2, dim1=-1)), value=hd ** -0.5), rel)
    o = g.op("MatMul", g.op("Softmax", s, dim=-1), v)
    o = g.op("Reshape", g.op("Transpose", o, dim0=1, dim1=2), shape=[-1, w * w, C])
    o = g.op("Linear", o, in_features=C, out_features=C)
    pooled = g.op("Mean", o, dim=1)  # [B * windows, C]
    out = g.op("Linear", pooled, in_features=C, out_features=10)
    g.sizes = {"B": 2}
    _train(g, rng, batch=16)
    return g.done(out)


def conformer(rng, i):
    g = G(f"conformer-{i}", rng)
    d, h, k = pick(rng, 64, 144), 4, pick(rng, 15, 31)
    x = g.inp("x", ["B", "T", 80])
    x = g.op("Linear", x, in_features=80, out_features=d)
    ff = g.op("Scale", mlp(g, g.op("LayerNorm", x, normalized_shape=d), d, 4 * d, act="SiLU"), value=0.5)
    x = g.op("Add", x, ff)
    x = g.op("Add", x, mha(g, g.op("LayerNorm", x, normalized_shape=d), d, h))
    n = g.op("Transpose", g.op("LayerNorm", x, normalized_shape=d), dim0=1, dim1=2)  # [B, d, T]
    pw = g.op("GLU", g.op("Conv1d", n, in_channels=d, out_channels=2 * d, kernel_size=1), dim=1)
    dw = g.op("Conv1d", pw, in_channels=d, out_channels=d, kernel_size=k, padding=k // 2, groups=d,
              bias=rng.random() < 0.2)
    dw = g.op("SiLU", g.op("BatchNorm1d", dw, num_features=d))
    conv = g.op("Transpose", g.op("Conv1d", dw, in_channels=d, out_channels=d, kernel_size=1), dim0=1, dim1=2)
    x = g.op("Add", x, conv)
    out = g.op("LayerNorm", x, normalized_shape=d)
    g.sizes = {"B": 2, "T": 40}
    _train(g, rng, seq=200, batch=8)
    return g.done(out)


def wavenet(rng, i):
    g = G(f"wavenet-{i}", rng)
    C, L = pick(rng, 16, 32, 64), rng.randint(2, 5)
    x = g.inp("x", ["B", 1, "T"])
    h = g.op("Conv1d", x, in_channels=1, out_channels=C, kernel_size=1)
    skips = []
    for layer in range(L):
        dil = 2 ** layer
        pad = g.op("ConstantPad1d", h, padding=[dil, 0], value=0.0)  # causal: pad the past
        conv = g.op("Conv1d", pad, in_channels=C, out_channels=2 * C, kernel_size=2, dilation=dil)
        f = g.op("Chunk", conv, chunks=2, dim=1)
        z = g.op("Mul", g.op("Tanh", f"{f}:0"), g.op("Sigmoid", f"{f}:1"))
        skips.append(g.op("Conv1d", z, in_channels=C, out_channels=C, kernel_size=1))
        if layer < L - 1:  # the last layer feeds only the skips
            h = g.op("Add", h, g.op("Conv1d", z, in_channels=C, out_channels=C, kernel_size=1))
    s = skips[0]
    for other in skips[1:]:
        s = g.op("Add", s, other)
    out = g.op("Conv1d", g.op("ReLU", s), in_channels=C, out_channels=256, kernel_size=1)
    g.sizes = {"B": 2, "T": 100}
    _train(g, rng, seq=1600, batch=4)
    return g.done(out)


def vq(rng, i):
    g = G(f"vq-{i}", rng)
    C, K = pick(rng, 32, 64), pick(rng, 128, 512)
    x = g.inp("x", ["B", 3, 32, 32])
    z = g.op("Conv2d", g.op("ReLU", g.op("Conv2d", x, in_channels=3, out_channels=C, kernel_size=4, stride=2,
                                            padding=1)), in_channels=C, out_channels=C, kernel_size=4, stride=2,
             padding=1)  # [B, C, 8, 8]
    flat = g.op("Reshape", g.op("Permute", z, dims=[0, 2, 3, 1]), shape=[-1, C])  # [N, C]
    book = g.op("Parameter", shape=[K, C], name="codebook")
    # ||z||^2 - 2 z.e + ||e||^2
    zz = g.op("Sum", g.op("Mul", flat, flat), dim=1, keepdim=True)  # [N, 1]
    ee = g.op("Sum", g.op("Mul", book, book), dim=1)  # [K]
    ze = g.op("MatMul", flat, g.op("Transpose", book, dim0=0, dim1=1))  # [N, K]
    dist = g.op("Add", g.op("Sub", zz, g.op("Scale", ze, value=2.0)), ee)
    soft = g.op("Softmax", g.op("Scale", dist, value=-1.0), dim=-1)
    q = g.op("MatMul", soft, book)  # a soft assignment
    q = g.op("Permute", g.op("Reshape", q, shape=["B", 8, 8, C]), dims=[0, 3, 1, 2])
    rec = g.op("ConvTranspose2d", g.op("ReLU", g.op("ConvTranspose2d", q, in_channels=C, out_channels=C,
                                                       kernel_size=4, stride=2, padding=1)),
               in_channels=C, out_channels=3, kernel_size=4, stride=2, padding=1)
    g.sizes = {"B": 2}
    _train(g, rng, batch=32)
    g.train["loss"] = "mse"
    return g.done(rec)


def message_passing(rng, i):
    g = G(f"message-passing-{i}", rng)
    F, Hd = pick(rng, 8, 16, 32), pick(rng, 32, 64)
    x = g.inp("x", ["B", "N", F])
    adj = g.inp("adj", ["B", "N", "N"])
    h = g.op("Linear", x, in_features=F, out_features=Hd)
    for _ in range(rng.randint(1, 3)):
        deg = g.op("Clamp", g.op("Sum", adj, dim=-1, keepdim=True), min=1.0)  # [B, N, 1]
        msg = g.op("Div", g.op("MatMul", adj, h), deg)
        h = g.op("ReLU", g.op("Add", g.op("Linear", h, in_features=Hd, out_features=Hd),
                              g.op("Linear", msg, in_features=Hd, out_features=Hd)))
    out = g.op("Linear", g.op("Mean", h, dim=1), in_features=Hd, out_features=pick(rng, 2, 10))
    g.sizes = {"B": 2, "N": 9}
    _train(g, rng, batch=16)
    return g.done(out)


def graph_attention(rng, i):
    g = G(f"graph-attention-{i}", rng)
    F, Hd = pick(rng, 16, 32), pick(rng, 32, 64)
    x = g.inp("x", ["B", "N", F])
    mask = g.inp("mask", ["B", "N", "N"], "bool")  # True where no edge
    h = g.op("Linear", x, in_features=F, out_features=Hd)
    a_src = g.op("Linear", h, in_features=Hd, out_features=1)  # [B, N, 1]
    a_dst = g.op("Transpose", g.op("Linear", h, in_features=Hd, out_features=1), dim0=1, dim1=2)  # [B, 1, N]
    e = g.op("LeakyReLU", g.op("Add", a_src, a_dst), negative_slope=0.2)  # [B, N, N]
    e = g.op("MaskedFill", e, mask, value=-1e9)
    att = g.op("Softmax", e, dim=-1)
    out = g.op("ELU", g.op("MatMul", att, h))
    g.sizes = {"B": 2, "N": 7}
    _train(g, rng, batch=8)
    return g.done(out)


def unet(rng, i):
    g = G(f"unet-{i}", rng)
    c = pick(rng, 16, 32)
    depth = rng.randint(2, 3)
    S = pick(rng, 32, 64)
    x = g.inp("x", ["B", 3, S, S])

    bias = rng.random() < 0.2  # most U-Nets drop the conv bias a BatchNorm cancels; some keep it

    def conv_block(t, cin, cout):
        t = g.op("ReLU", g.op("BatchNorm2d", g.op("Conv2d", t, in_channels=cin, out_channels=cout, kernel_size=3,
                                                     padding=1, bias=bias), num_features=cout))
        return g.op("ReLU", g.op("GroupNorm", g.op("Conv2d", t, in_channels=cout, out_channels=cout, kernel_size=3,
                                                      padding=1), num_groups=4, num_channels=cout))

    skips, t, cin = [], x, 3
    for lvl in range(depth):
        t = conv_block(t, cin, c * 2 ** lvl)
        skips.append((t, c * 2 ** lvl))
        t = g.op("MaxPool2d", t, kernel_size=2)
        cin = c * 2 ** lvl
    t = conv_block(t, cin, cin * 2)
    cin *= 2
    for skip, sc in reversed(skips):
        t = g.op("ConvTranspose2d", t, in_channels=cin, out_channels=sc, kernel_size=2, stride=2)
        t = conv_block(g.op("Concat", t, skip, dim=1), 2 * sc, sc)
        cin = sc
    out = g.op("Conv2d", t, in_channels=cin, out_channels=pick(rng, 1, 2), kernel_size=1)
    g.sizes = {"B": 2}
    _train(g, rng, batch=8)
    return g.done(out)


def diffusion_unet_time(rng, i):
    """A small DDPM U-Net: the time embedding projected and added to each feature map as a bias."""
    g = G(f"diffusion-unet-{i}", rng)
    c, S = pick(rng, 32, 64), pick(rng, 16, 32)
    x = g.inp("x", ["B", 3, S, S])
    temb = g.inp("t_emb", ["B", 128])
    te = g.op("Linear", g.op("SiLU", g.op("Linear", temb, in_features=128, out_features=4 * c)),
              in_features=4 * c, out_features=c)
    h = g.op("Conv2d", x, in_channels=3, out_channels=c, kernel_size=3, padding=1)
    bias = g.op("Unsqueeze", g.op("Unsqueeze", te, dim=-1), dim=-1)  # [B, c, 1, 1]
    h = g.op("Add", h, bias)
    h2 = g.op("Conv2d", g.op("SiLU", g.op("GroupNorm", h, num_groups=8, num_channels=c)), in_channels=c,
              out_channels=c, kernel_size=3, padding=1)
    h = g.op("Add", h, h2)
    d = g.op("Conv2d", h, in_channels=c, out_channels=c, kernel_size=3, stride=2, padding=1)
    u = g.op("Interpolate", d, scale_factor=2.0, mode="nearest")
    h = g.op("Concat", h, u, dim=1)
    out = g.op("Conv2d", h, in_channels=2 * c, out_channels=3, kernel_size=3, padding=1)
    g.sizes = {"B": 2}
    _train(g, rng, batch=16)
    g.train["loss"] = "mse"
    return g.done(out)


def vit(rng, i):
    g = G(f"vit-{i}", rng)
    S, P = pick(rng, (32, 4), (32, 8), (64, 8), (224, 16))
    d, h = pick(rng, (64, 4), (128, 4), (192, 3))
    n = (S // P) ** 2
    x = g.inp("x", ["B", 3, S, S])
    p = g.op("Conv2d", x, in_channels=3, out_channels=d, kernel_size=P, stride=P)
    t = g.op("Transpose", g.op("Flatten", p, start_dim=2), dim0=1, dim1=2)  # [B, n, d]
    cls = g.op("Expand", g.op("Parameter", shape=[1, 1, d], name="cls_token"), shape=["B", -1, -1])
    t = g.op("Concat", cls, t, dim=1)
    t = g.op("Add", t, g.op("Parameter", shape=[1, n + 1, d], name="pos_embed"))
    for _ in range(rng.randint(1, 2)):
        t = block(g, t, d, h, 4 * d, T=n + 1)
    out = g.op("Linear", g.op("Select", g.op("LayerNorm", t, normalized_shape=d), dim=1, index=0), in_features=d,
               out_features=pick(rng, 10, 100))
    g.sizes = {"B": 2}
    _train(g, rng, batch=32)
    return g.done(out)


def bert_encoder(rng, i):
    g = G(f"bert-encoder-{i}", rng)
    d, h, V = pick(rng, 64, 128), 4, pick(rng, 1000, 3000)
    ids = g.inp("ids", ["B", "T"], "int64", vocab_size=V)
    x = g.op("Add", g.op("Embedding", ids, num_embeddings=V, embedding_dim=d),
             g.op("Embedding", g.op("Arange", end="T"), num_embeddings=512, embedding_dim=d))
    x = g.op("LayerNorm", x, normalized_shape=d)
    for _ in range(rng.randint(1, 2)):
        x = g.op("TransformerEncoderLayer", x, d_model=d, nhead=h, dim_feedforward=4 * d, batch_first=True)
    out = g.op("Linear", g.op("Select", x, dim=1, index=0), in_features=d, out_features=2)
    g.sizes = {"B": 2, "T": 20}
    _train(g, rng, seq=128, batch=16)
    return g.done(out)


def seq2seq_cross(rng, i):
    g = G(f"cross-attention-{i}", rng)
    d, h = pick(rng, 64, 128), 4
    src = g.inp("src", ["B", "S", d])
    tgt = g.inp("tgt", ["B", "T", d])
    a = g.op("MultiheadAttention", tgt, src, src, embed_dim=d, num_heads=h, batch_first=True)
    x = g.op("Add", tgt, a)
    x = g.op("Add", x, mlp(g, g.op("LayerNorm", x, normalized_shape=d), d, 2 * d))
    g.sizes = {"B": 2, "S": 11, "T": 7}
    _train(g, rng, seq=64, batch=8)
    return g.done(x)


def resnet_like(rng, i):
    g = G(f"resnet-{i}", rng)
    c, S = pick(rng, 16, 32, 64), pick(rng, 32, 64)
    x = g.inp("x", ["B", 3, S, S])
    t = g.op("ReLU", g.op("BatchNorm2d", g.op("Conv2d", x, in_channels=3, out_channels=c, kernel_size=3, padding=1,
                                                 bias=False), num_features=c))
    for _ in range(rng.randint(1, 3)):
        y = g.op("ReLU", g.op("BatchNorm2d", g.op("Conv2d", t, in_channels=c, out_channels=c, kernel_size=3,
                                                     padding=1, bias=False), num_features=c))
        y = g.op("BatchNorm2d", g.op("Conv2d", y, in_channels=c, out_channels=c, kernel_size=3, padding=1,
                                     bias=False), num_features=c)
        t = g.op("ReLU", g.op("Add", t, y))
    # squeeze-excite: a [B, c, 1, 1] gate times the map
    se = g.op("Sigmoid", g.op("Conv2d", g.op("ReLU", g.op("Conv2d", g.op("AdaptiveAvgPool2d", t, output_size=1),
                                                             in_channels=c, out_channels=c // 4, kernel_size=1)),
                               in_channels=c // 4, out_channels=c, kernel_size=1))
    t = g.op("Mul", t, se)
    out = g.op("Linear", g.op("Flatten", g.op("AdaptiveAvgPool2d", t, output_size=1)), in_features=c, out_features=10)
    g.sizes = {"B": 2}
    _train(g, rng, batch=64)
    return g.done(out)


def lstm_tagger(rng, i):
    g = G(f"lstm-tagger-{i}", rng)
    V, d, hdim = pick(rng, 500, 5000), pick(rng, 32, 64), pick(rng, 64, 128)
    ids = g.inp("ids", ["B", "T"], "int64", vocab_size=V)
    e = g.op("Embedding", ids, num_embeddings=V, embedding_dim=d)
    bi = rng.random() < 0.5
    o = g.op("LSTM", e, input_size=d, hidden_size=hdim, batch_first=True, bidirectional=bi,
             num_layers=rng.randint(1, 2))
    out = g.op("Linear", o, in_features=hdim * (2 if bi else 1), out_features=pick(rng, 5, 17))
    g.sizes = {"B": 2, "T": 13}
    _train(g, rng, seq=50, batch=32)
    return g.done(out)


def tcn_classifier(rng, i):
    g = G(f"tcn-{i}", rng)
    C = pick(rng, 8, 12)
    x = g.inp("x", ["B", C, "T"])
    h = x
    cin = C
    for lvl in range(rng.randint(2, 4)):
        cout = 32
        h = g.op("ReLU", g.op("Conv1d", h, in_channels=cin, out_channels=cout, kernel_size=3, padding=2 ** lvl,
                              dilation=2 ** lvl))
        cin = cout
    out = g.op("Linear", g.op("Flatten", g.op("AdaptiveAvgPool1d", h, output_size=1)), in_features=cin,
               out_features=pick(rng, 4, 6))
    g.sizes = {"B": 2, "T": 64}
    _train(g, rng, seq=128, batch=16)
    return g.done(out)


def mlp_mixer(rng, i):
    g = G(f"mlp-mixer-{i}", rng)
    S, P, d = 32, pick(rng, 4, 8), pick(rng, 64, 128)
    n = (S // P) ** 2
    x = g.inp("x", ["B", 3, S, S])
    t = g.op("Transpose", g.op("Flatten", g.op("Conv2d", x, in_channels=3, out_channels=d, kernel_size=P, stride=P),
                               start_dim=2), dim0=1, dim1=2)
    for _ in range(rng.randint(1, 2)):
        u = g.op("Transpose", g.op("LayerNorm", t, normalized_shape=d), dim0=1, dim1=2)  # [B, d, n]
        u = g.op("Transpose", mlp(g, u, n, 2 * n), dim0=1, dim1=2)
        t = g.op("Add", t, u)
        t = g.op("Add", t, mlp(g, g.op("LayerNorm", t, normalized_shape=d), d, 4 * d))
    out = g.op("Linear", g.op("Mean", t, dim=1), in_features=d, out_features=10)
    g.sizes = {"B": 2}
    _train(g, rng, batch=64)
    return g.done(out)


def contrastive_clip(rng, i):
    g = G(f"clip-head-{i}", rng)
    d, e = pick(rng, 128, 256), pick(rng, 64, 128)
    img = g.inp("img", ["B", d])
    txt = g.inp("txt", ["B", d])
    a = g.op("Normalize", g.op("Linear", img, in_features=d, out_features=e), dim=-1)
    b = g.op("Normalize", g.op("Linear", txt, in_features=d, out_features=e), dim=-1)
    logits = g.op("Scale", g.op("MatMul", a, g.op("Transpose", b, dim0=0, dim1=1)), value=1 / 0.07)
    g.sizes = {"B": 4}
    _train(g, rng, batch=256)
    return g.done(logits)


def einsum_attention(rng, i):
    g = G(f"einsum-attention-{i}", rng)
    d, h = pick(rng, 64, 128), 4
    hd = d // h
    x = g.inp("x", ["B", "T", d])
    q = g.op("Reshape", g.op("Linear", x, in_features=d, out_features=d), shape=["B", "T", h, hd])
    k = g.op("Reshape", g.op("Linear", x, in_features=d, out_features=d), shape=["B", "T", h, hd])
    v = g.op("Reshape", g.op("Linear", x, in_features=d, out_features=d), shape=["B", "T", h, hd])
    s = g.op("Scale", g.op("Einsum", q, k, equation="bthd,bshd->bhts"), value=hd ** -0.5)
    o = g.op("Einsum", g.op("Softmax", s, dim=-1), v, equation="bhts,bshd->bthd")
    out = g.op("Linear", g.op("Reshape", o, shape=["B", "T", d]), in_features=d, out_features=d)
    g.sizes = {"B": 2, "T": 9}
    _train(g, rng, seq=32, batch=8)
    return g.done(out)


def dit_block(rng, i):
    """DiT: patchify, a time embedding that modulates each block through adaLN (shift, scale, gate)."""
    g = G(f"dit-adaln-{i}", rng)
    S, P, d, h = pick(rng, 16, 32), pick(rng, 2, 4), pick(rng, 96, 128, 192), pick(rng, 4, 6)
    while d % h:
        h -= 1
    n = (S // P) ** 2
    x = g.inp("x", ["B", 4, S, S])
    temb = g.inp("t_emb", ["B", 256])
    t = g.op("Transpose", g.op("Flatten", g.op("Conv2d", x, in_channels=4, out_channels=d, kernel_size=P, stride=P),
                               start_dim=2), dim0=1, dim1=2)
    t = g.op("Add", t, g.op("Parameter", shape=[1, n, d], name="pos_embed"))
    c = g.op("Linear", g.op("SiLU", g.op("Linear", temb, in_features=256, out_features=d)), in_features=d,
             out_features=d)
    for _ in range(rng.randint(1, 2)):
        mod = g.op("Linear", g.op("SiLU", c), in_features=d, out_features=6 * d)
        mod = g.op("Chunk", g.op("Unsqueeze", mod, dim=1), chunks=6, dim=-1)  # [B, 1, d] each
        shift1, scale1, gate1, shift2, scale2, gate2 = (f"{mod}:{j}" for j in range(6))
        n1 = g.op("LayerNorm", t, normalized_shape=d, elementwise_affine=False)
        n1 = g.op("Add", g.op("Mul", n1, g.op("Add", scale1, g.op("Constant", shape=[1], value=1.0))), shift1)
        t = g.op("Add", t, g.op("Mul", gate1, mha(g, n1, d, h, T=n)))
        n2 = g.op("LayerNorm", t, normalized_shape=d, elementwise_affine=False)
        n2 = g.op("Add", g.op("Mul", n2, g.op("Add", scale2, g.op("Constant", shape=[1], value=1.0))), shift2)
        t = g.op("Add", t, g.op("Mul", gate2, mlp(g, n2, d, 4 * d)))
    out = g.op("Linear", g.op("LayerNorm", t, normalized_shape=d), in_features=d, out_features=P * P * 4)
    g.sizes = {"B": 2}
    _train(g, rng, batch=32)
    g.train["loss"] = "mse"
    return g.done(out)


def t5_relative_bias(rng, i):
    """T5-style encoder: a learned bias per head for each clamped relative distance, added to the scores."""
    g = G(f"t5-relative-bias-{i}", rng)
    d, h, V, R = pick(rng, 64, 128), pick(rng, 4, 8), pick(rng, 1000, 4000), pick(rng, 16, 32)
    ids = g.inp("ids", ["B", "T"], "int64", vocab_size=V)
    x = g.op("Embedding", ids, num_embeddings=V, embedding_dim=d)
    i_ = g.op("Unsqueeze", g.op("Arange", end="T"), dim=1)
    j_ = g.op("Unsqueeze", g.op("Arange", end="T"), dim=0)
    rel = g.op("Clamp", g.op("Sub", j_, i_), min=-(R // 2), max=R // 2 - 1)
    bucket = g.op("Add", rel, g.op("Constant", shape=[1], value=R // 2, dtype="int64"))
    bias = g.op("Unsqueeze", g.op("Permute", g.op("Embedding", bucket, num_embeddings=R, embedding_dim=h),
                                  dims=[2, 0, 1]), dim=0)  # [1, h, T, T]
    for _ in range(rng.randint(1, 2)):
        x = block(g, x, d, h, 4 * d, norm="RMSNorm", alibi=bias)
    out = g.op("Linear", g.op("RMSNorm", x, normalized_shape=d), in_features=d, out_features=V, bias=False)
    g.sizes = {"B": 2, "T": 12}
    _train(g, rng, seq=128, batch=8)
    return g.done(out)


def vq_distances(rng, i):
    """VQ-VAE's nearest-code step written as a softmax over negative squared distances (a soft assignment)."""
    g = G(f"vq-distances-{i}", rng)
    C, K = pick(rng, 16, 32, 64), pick(rng, 64, 256, 1024)
    x = g.inp("x", ["B", 1, 28, 28])
    z = g.op("Conv2d", g.op("ReLU", g.op("Conv2d", x, in_channels=1, out_channels=C, kernel_size=4, stride=2,
                                            padding=1)), in_channels=C, out_channels=C, kernel_size=3, padding=1)
    flat = g.op("Reshape", g.op("Permute", z, dims=[0, 2, 3, 1]), shape=[-1, C])  # [N, C]
    book = g.op("Parameter", shape=[K, C], name="codebook")
    ze = g.op("MatMul", flat, g.op("Transpose", book, dim0=0, dim1=1))  # [N, K]
    zz = g.op("Sum", g.op("Mul", flat, flat), dim=-1, keepdim=True)
    ee = g.op("Sum", g.op("Mul", book, book), dim=-1)
    # -||z - e||^2 = 2 z.e - ||z||^2 - ||e||^2
    neg = g.op("Sub", g.op("Sub", g.op("Add", ze, ze), zz), ee)
    q = g.op("MatMul", g.op("Softmax", neg, dim=-1), book)
    q = g.op("Permute", g.op("Reshape", q, shape=["B", 14, 14, C]), dims=[0, 3, 1, 2])
    rec = g.op("ConvTranspose2d", q, in_channels=C, out_channels=1, kernel_size=4, stride=2, padding=1)
    g.sizes = {"B": 2}
    _train(g, rng, batch=64)
    g.train["loss"] = "mse"
    return g.done(rec)


def unet_batch_one(rng, i):
    """The original U-Net recipe: large tiles, batch size 1, BatchNorm after each convolution."""
    g = G(f"unet-batch1-{i}", rng)
    c, S = pick(rng, 16, 32), pick(rng, 64, 128)
    x = g.inp("x", ["B", 1, S, S])

    def conv_bn(t, cin, cout):
        return g.op("ReLU", g.op("BatchNorm2d", g.op("Conv2d", t, in_channels=cin, out_channels=cout, kernel_size=3,
                                                    padding=1, bias=False), num_features=cout))

    e1 = conv_bn(conv_bn(x, 1, c), c, c)
    e2 = conv_bn(conv_bn(g.op("MaxPool2d", e1, kernel_size=2), c, 2 * c), 2 * c, 2 * c)
    mid = conv_bn(g.op("MaxPool2d", e2, kernel_size=2), 2 * c, 4 * c)
    u2 = g.op("ConvTranspose2d", mid, in_channels=4 * c, out_channels=2 * c, kernel_size=2, stride=2)
    d2 = conv_bn(g.op("Concat", u2, e2, dim=1), 4 * c, 2 * c)
    u1 = g.op("ConvTranspose2d", d2, in_channels=2 * c, out_channels=c, kernel_size=2, stride=2)
    d1 = conv_bn(g.op("Concat", u1, e1, dim=1), 2 * c, c)
    out = g.op("Conv2d", d1, in_channels=c, out_channels=2, kernel_size=1)
    g.sizes = {"B": 1}
    _train(g, rng, batch=1, declare=True)
    return g.done(out)


def lora_block(rng, i):
    """A transformer block whose query and value projections carry LoRA adapters (down to rank r, back up)."""
    g = G(f"lora-adapter-{i}", rng)
    d, h, r = pick(rng, 128, 256), pick(rng, 4, 8), pick(rng, 4, 8, 16)
    hd = d // h
    x = g.inp("x", ["B", "T", d])
    n = g.op("LayerNorm", x, normalized_shape=d)

    def adapted(t):
        base = g.op("Linear", t, in_features=d, out_features=d)
        down = g.op("Linear", t, in_features=d, out_features=r, bias=False)
        up = g.op("Linear", down, in_features=r, out_features=d, bias=False)
        return g.op("Add", base, g.op("Scale", up, value=2.0 / r))

    q, k, v = adapted(n), g.op("Linear", n, in_features=d, out_features=d), adapted(n)
    q, k, v = (g.op("Transpose", g.op("Reshape", t, shape=["B", "T", h, hd]), dim0=1, dim1=2) for t in (q, k, v))
    s = g.op("Scale", g.op("MatMul", q, g.op("Transpose", k, dim0=-2, dim1=-1)), value=hd ** -0.5)
    o = g.op("MatMul", g.op("Softmax", s, dim=-1), v)
    o = g.op("Linear", g.op("Reshape", g.op("Transpose", o, dim0=1, dim1=2), shape=["B", "T", d]), in_features=d,
             out_features=d)
    x = g.op("Add", x, o)
    x = g.op("Add", x, mlp(g, g.op("LayerNorm", x, normalized_shape=d), d, 4 * d))
    g.sizes = {"B": 2, "T": 10}
    _train(g, rng, seq=256, batch=8)
    return g.done(x)


def swinv2_cosine(rng, i):
    """Swin V2's cosine attention over windows: q and k normalised, a learned logit scale, no 1/sqrt(d)."""
    g = G(f"swinv2-cosine-{i}", rng)
    C, w, h = pick(rng, 32, 64), 4, pick(rng, 2, 4)
    n = pick(rng, 2, 4)
    x = g.inp("x", ["B", 3, w * n, w * n])
    t = g.op("Permute", g.op("Conv2d", x, in_channels=3, out_channels=C, kernel_size=1), dims=[0, 2, 3, 1])
    t = g.op("Reshape", g.op("Permute", g.op("Reshape", t, shape=["B", n, w, n, w, C]), dims=[0, 1, 3, 2, 4, 5]),
             shape=[-1, w * w, C])
    hd = C // h
    qkv = g.op("Permute", g.op("Reshape", g.op("Linear", t, in_features=C, out_features=3 * C),
                               shape=[-1, w * w, 3, h, hd]), dims=[2, 0, 3, 1, 4])
    q, k, v = (g.op("Select", qkv, dim=0, index=j) for j in range(3))
    q, k = g.op("Normalize", q, dim=-1), g.op("Normalize", k, dim=-1)
    logit_scale = g.op("Parameter", shape=[h, 1, 1], name="logit_scale")
    s = g.op("Mul", g.op("MatMul", q, g.op("Transpose", k, dim0=-2, dim1=-1)), logit_scale)
    o = g.op("MatMul", g.op("Softmax", s, dim=-1), v)
    o = g.op("Reshape", g.op("Transpose", o, dim0=1, dim1=2), shape=[-1, w * w, C])
    o = g.op("LayerNorm", g.op("Linear", o, in_features=C, out_features=C), normalized_shape=C)  # post-norm (V2)
    out = g.op("Linear", g.op("Mean", o, dim=1), in_features=C, out_features=pick(rng, 10, 100))
    g.sizes = {"B": 2}
    _train(g, rng, batch=32)
    return g.done(out)


def neox_partial_rope(rng, i):
    """GPT-NeoX style: the query pre-scaled by 1/sqrt(d), rotary embedding on the first half of each head."""
    g = G(f"neox-partial-rope-{i}", rng)
    d, h = pick(rng, (128, 4), (256, 8))
    hd, V, maxT = d // h, pick(rng, 2000, 8000), 2048
    rd = hd // 2
    ids = g.inp("ids", ["B", "T"], "int64", vocab_size=V)
    x = g.op("Embedding", ids, num_embeddings=V, embedding_dim=d)
    cos_t = g.op("Parameter", shape=[maxT, rd], name="rope_cos")
    sin_t = g.op("Parameter", shape=[maxT, rd], name="rope_sin")
    n = g.op("LayerNorm", x, normalized_shape=d)
    q = g.op("Transpose", g.op("Reshape", g.op("Linear", n, in_features=d, out_features=d), shape=["B", "T", h, hd]),
             dim0=1, dim1=2)
    k = g.op("Transpose", g.op("Reshape", g.op("Linear", n, in_features=d, out_features=d), shape=["B", "T", h, hd]),
             dim0=1, dim1=2)
    v = g.op("Transpose", g.op("Reshape", g.op("Linear", n, in_features=d, out_features=d), shape=["B", "T", h, hd]),
             dim0=1, dim1=2)
    q = g.op("Scale", q, value=hd ** -0.5)

    def rotate(t):
        rot, keep = g.op("Slice", t, dim=-1, start=0, end=rd), g.op("Slice", t, dim=-1, start=rd, end=None)
        return g.op("Concat", rope_apply(g, rot, (cos_t, sin_t), rd, "T"), keep, dim=-1)

    s = g.op("MatMul", rotate(q), g.op("Transpose", rotate(k), dim0=-2, dim1=-1))
    s = g.op("Add", s, causal_mask(g, "T"))
    o = g.op("MatMul", g.op("Softmax", s, dim=-1), v)
    o = g.op("Linear", g.op("Reshape", g.op("Transpose", o, dim0=1, dim1=2), shape=["B", "T", d]), in_features=d,
             out_features=d)
    x = g.op("Add", g.op("Add", x, o), mlp(g, n, d, 4 * d))  # parallel attention and MLP
    out = g.op("Linear", g.op("LayerNorm", x, normalized_shape=d), in_features=d, out_features=V, bias=False)
    g.sizes = {"B": 2, "T": 16}
    _train(g, rng, seq=512, batch=8)
    return g.done(out)


FAMILIES = [gpt_lm, llama_rope_gqa, alibi_lm, sliding_window, moe, moe_topk_mask, ssm_scan, perceiver,
            swin_window, conformer, wavenet, vq, message_passing, graph_attention, unet, diffusion_unet_time, vit,
            bert_encoder, seq2seq_cross, resnet_like, lstm_tagger, tcn_classifier, mlp_mixer, contrastive_clip,
            einsum_attention, dit_block, t5_relative_bias, vq_distances, unet_batch_one, lora_block,
            swinv2_cosine, neox_partial_rope]


def families():
    return [f.__name__ for f in FAMILIES]


def generate(per_family: int, seed: int = 2026):
    out = []
    for fam in FAMILIES:
        for i in range(per_family):
            rng = random.Random(f"{seed}:{fam.__name__}:{i}")
            out.append(fam(rng, i))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--per-family", type=int, default=13)
    ap.add_argument("--seed", type=int, default=2026)
    a = ap.parse_args()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    designs = generate(a.per_family, a.seed)
    for d in designs:
        (out / f"{d['name']}.json").write_text(json.dumps(d, indent=1))
    print(f"{len(designs)} designs in {out}")


if __name__ == "__main__":
    main()

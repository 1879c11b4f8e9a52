"""One small design where each check fires and a clean twin where it does not (Ruff style).

`FIXTURES[rule_id] = (fire, clean)`, two archgraph/1 dicts. The clean twin
differs from the firing one only where the rule looks, so each pair shows
exactly what the rule is about. test_fixtures.py asserts that every id of
the catalogue has a pair, and that block pairs hold in torch too (the firing
design fails, the clean one runs).
"""

from __future__ import annotations

import copy


def N(id, op, ins=(), shares=None, **args):
    d = {"id": id, "op": op, "args": args, "in": list(ins)}
    if shares:
        d["shares"] = shares
    return d


def G(nodes, outputs, inputs=None, train=None, meta=None, name="fixture"):
    d = {"format": "archgraph/1", "name": name,
         "inputs": inputs if inputs is not None else [{"id": "x", "shape": ["B", 16], "dtype": "float32"}],
         "nodes": nodes, "outputs": outputs}
    if train is not None:
        d["train"] = train
    if meta is not None:
        d["meta"] = meta
    return d


def X(*shape, dtype="float32", id="x"):
    return {"id": id, "shape": list(shape), "dtype": dtype}


CE = {"loss": "cross_entropy", "batch_size": 32, "steps": 100}


def mlp(fc2_in=32, extra=(), outputs=("fc2",), train=None, hidden=32, act="ReLU", inputs=None):
    nodes = [N("fc1", "Linear", ["x"], in_features=16, out_features=hidden),
             N("act", act, ["fc1"]),
             N("fc2", "Linear", ["act"], in_features=fc2_in, out_features=10)]
    return G(nodes + list(extra), list(outputs), inputs=inputs, train=train)


def cnn(conv_in=3, bn=8, fc_in=8, k=3, pad=1, bias=False, x=(2, 3, 8, 8), train=None):
    nodes = [N("conv", "Conv2d", ["x"], in_channels=conv_in, out_channels=8, kernel_size=k, padding=pad, bias=bias),
             N("bn", "BatchNorm2d", ["conv"], num_features=bn),
             N("relu", "ReLU", ["bn"]),
             N("pool", "AdaptiveAvgPool2d", ["relu"], output_size=1),
             N("flat", "Flatten", ["pool"]),
             N("fc", "Linear", ["flat"], in_features=fc_in, out_features=10)]
    return G(nodes, ["fc"], inputs=[X(*x)], train=train)


def lm(rows=100, vocab=100, dtype="int64", seq_len=16, batch=8, extra_pos=True, layer="TransformerEncoderLayer"):
    nodes = [N("emb", "Embedding", ["ids"], num_embeddings=rows, embedding_dim=16)]
    src = "emb"
    if extra_pos:
        nodes += [N("pos", "Parameter", [], shape=[seq_len, 16]), N("add", "Add", ["emb", "pos"])]
        src = "add"
    nodes += [N("enc", layer, [src], d_model=16, nhead=2, dim_feedforward=32, batch_first=True),
              N("head", "Linear", ["enc"], in_features=16, out_features=vocab)]
    train = {"loss": "cross_entropy", "batch_size": batch, "steps": 100, "seq_len": seq_len, "vocab_size": vocab}
    return G(nodes, ["head"], inputs=[X("B", seq_len, dtype=dtype, id="ids")], train=train)


def chain(n, act="ReLU", norm=False, residual=False, width=16):
    nodes = []
    prev = "x"
    for i in range(n):
        nodes.append(N(f"fc{i}", "Linear", [prev], in_features=width, out_features=width))
        prev = f"fc{i}"
        if norm:
            nodes.append(N(f"ln{i}", "LayerNorm", [prev], normalized_shape=width))
            prev = f"ln{i}"
        nodes.append(N(f"act{i}", act, [prev]))
        prev = f"act{i}"
        if residual and i % 2 == 1:
            nodes.append(N(f"res{i}", "Add", [prev, f"act{i - 1}"]))
            prev = f"res{i}"
    return G(nodes, [prev])


def attention(scale=True):
    nodes = [N("q", "Linear", ["x"], in_features=16, out_features=16),
             N("k", "Linear", ["x"], in_features=16, out_features=16),
             N("kt", "Transpose", ["k"], dim0=1, dim1=2),
             N("scores", "MatMul", ["q", "kt"])]
    src = "scores"
    if scale:
        nodes.append(N("scaled", "Scale", ["scores"], value=0.25))
        src = "scaled"
    nodes.append(N("attn", "Softmax", [src], dim=-1))
    nodes.append(N("out", "MatMul", ["attn", "x"]))
    return G(nodes, ["out"], inputs=[X("B", 8, 16)])


def _with(d, **changes):
    d = copy.deepcopy(d)
    for k, v in changes.items():
        d[k] = v
    return d


def _node(d, nid):
    return next(n for n in d["nodes"] if n["id"] == nid)


def _edit(d, nid, **args):
    d = copy.deepcopy(d)
    _node(d, nid)["args"].update(args)
    return d


FIXTURES: dict[str, tuple[dict, dict]] = {}


def fixture(rule):
    def wrap(fn):
        FIXTURES[rule] = fn()
        return fn

    return wrap


# ---- block: connectivity -----------------------------------------------------------------------

@fixture("connectivity.bad-arg")
def _():
    return _edit(mlp(), "fc1", init="xavier"), mlp()


@fixture("connectivity.bad-result")
def _():
    bad = mlp()
    _node(bad, "act")["in"] = ["fc1:1"]
    good = mlp()
    _node(good, "act")["in"] = ["fc1:0"]
    return bad, good


@fixture("connectivity.cycle")
def _():
    bad = mlp()
    _node(bad, "fc1")["in"] = ["act"]
    return bad, mlp()


@fixture("connectivity.dangling")
def _():
    bad = mlp()
    _node(bad, "fc2")["in"] = ["actt"]
    return bad, mlp()


@fixture("connectivity.missing-arg")
def _():
    bad = mlp()
    del _node(bad, "fc2")["args"]["out_features"]
    return bad, mlp()


@fixture("connectivity.no-output")
def _():
    return _with(mlp(), outputs=[]), mlp()


@fixture("connectivity.unknown-op")
def _():
    bad = mlp()
    _node(bad, "act")["op"] = "Swish"
    return bad, mlp()


# ---- block: dtype ----------------------------------------------------------------------------------

@fixture("dtype.float-into-embedding")
def _():
    return lm(dtype="float32"), lm()


@fixture("dtype.index-range")
def _():
    return lm(rows=50, vocab=100), lm(rows=100, vocab=100)


@fixture("dtype.int-into-float")
def _():
    return mlp(inputs=[X("B", 16, dtype="int64")]), mlp()


# ---- block: shape ----------------------------------------------------------------------------------

@fixture("shape.arity")
def _():
    bad = mlp()
    _node(bad, "act")["in"] = ["fc1", "fc1"]
    return bad, mlp()


@fixture("shape.attention-width")
def _():
    def d(width):
        return G([N("attn", "MultiheadAttention", ["x", "x", "x"], embed_dim=16, num_heads=2, batch_first=True)],
                 ["attn:0"], inputs=[X("B", 8, width)])
    return d(8), d(16)


@fixture("shape.broadcast")
def _():
    def d(width):
        return G([N("a", "Linear", ["x"], in_features=16, out_features=width),
                  N("res", "Add", ["a", "x"])], ["res"])
    return d(8), d(16)


@fixture("shape.concat-sizes")
def _():
    def d(end):
        return G([N("cut", "Slice", ["x"], dim=2, start=0, end=end),
                  N("cat", "Concat", ["x", "cut"], dim=1)], ["cat"], inputs=[X("B", 4, 8)])
    return d(6), d(8)


@fixture("shape.conv-channels")
def _():
    return cnn(conv_in=4), cnn()


@fixture("shape.conv-groups")
def _():
    return _edit(cnn(), "conv", groups=2), _edit(cnn(), "conv", groups=1)


@fixture("shape.dim-range")
def _():
    def d(dim):
        return G([N("sm", "Softmax", ["x"], dim=dim)], ["sm"])
    return d(2), d(-1)


@fixture("shape.expand")
def _():
    def d(last):
        return G([N("e", "Expand", ["x"], shape=[-1, 3, last])], ["e"], inputs=[X("B", 1, 4)])
    return d(8), d(4)


@fixture("shape.flatten-linear-width")
def _():
    return cnn(fc_in=16), cnn()


@fixture("shape.groupnorm-divisibility")
def _():
    def d(groups):
        return G([N("gn", "GroupNorm", ["x"], num_groups=groups, num_channels=8)], ["gn"], inputs=[X("B", 8, 4, 4)])
    return d(3), d(2)


@fixture("shape.heads-divisibility")
def _():
    def d(heads):
        return G([N("attn", "MultiheadAttention", ["x"], embed_dim=16, num_heads=heads, batch_first=True)],
                 ["attn:0"], inputs=[X("B", 8, 16)])
    return d(3), d(2)


@fixture("shape.index-range")
def _():
    def d(i):
        return G([N("sel", "Select", ["x"], dim=1, index=i)], ["sel"], inputs=[X("B", 4, 8)])
    return d(4), d(3)


@fixture("shape.unknown-index")
def _():
    ids = {**X(2, 4, dtype="int64", id="i"), "vocab_size": 4}
    # fire: positions computed by a Sub (zeros here, so it runs); clean: ids with a declared range
    fire = G([N("z", "Sub", ["i", "i"]), N("g", "Gather", ["x", "z"], dim=1)], ["g"], inputs=[X(2, 4), ids])
    clean = G([N("g", "Gather", ["x", "i"], dim=1)], ["g"], inputs=[X(2, 4), ids])
    return fire, clean


@fixture("shape.kernel-too-large")
def _():
    return cnn(k=9, pad=0), cnn()


@fixture("shape.linear-width")
def _():
    return mlp(fc2_in=64), mlp()


@fixture("shape.matmul-inner")
def _():
    def d(rows):
        return G([N("mm", "MatMul", ["a", "b"])], ["mm"], inputs=[X("B", 4, 8, id="a"), X("B", rows, 5, id="b")])
    return d(6), d(8)


@fixture("shape.norm-features")
def _():
    return cnn(bn=16), cnn()


@fixture("shape.pool-padding")
def _():
    def d(p):
        return G([N("pool", "MaxPool2d", ["x"], kernel_size=2, padding=p)], ["pool"], inputs=[X("B", 3, 8, 8)])
    return d(2), d(1)


@fixture("shape.rank")
def _():
    return cnn(x=(2, 3)), cnn()


@fixture("shape.reshape-product")
def _():
    def d(shape):
        return G([N("r", "Reshape", ["x"], shape=shape)], ["r"], inputs=[X(2, 16)])
    return d([2, 5]), d([2, 4, 4])


@fixture("shape.rnn-input-size")
def _():
    def d(width):
        return G([N("rnn", "LSTM", ["x"], input_size=8, hidden_size=16, batch_first=True)], ["rnn:0"],
                 inputs=[X("B", 5, width)])
    return d(4), d(8)


@fixture("shape.shares-mismatch")
def _():
    # a head tied to the token table keeps its own bias: it must fit the table's rows
    def d(out):
        return G([N("wte", "Embedding", ["ids"], num_embeddings=40, embedding_dim=6),
                  N("head", "Linear", ["wte"], shares="wte", in_features=6, out_features=out)],
                 ["head"], inputs=[X("B", 5, dtype="int64", id="ids")])
    return d(41), d(40)


@fixture("shape.spatial-collapse")
def _():
    def d(size):
        return G([N("pool", "MaxPool2d", ["x"], kernel_size=2)], ["pool"], inputs=[X("B", 3, size, size)])
    return d(1), d(2)


@fixture("shape.split-sizes")
def _():
    def d(sec):
        return G([N("s", "Split", ["x"], split_size_or_sections=sec, dim=1), N("a", "Add", ["s:0", "s:1"])],
                 ["a"], inputs=[X("B", 8)])
    return d([4, 5]), d([4, 4])


# ---- warn: connectivity ----------------------------------------------------------------------------

@fixture("connectivity.dead-node")
def _():
    return mlp(extra=[N("aux", "Linear", ["act"], in_features=32, out_features=2)]), mlp()


@fixture("connectivity.duplicate-output")
def _():
    return mlp(outputs=("fc2", "fc2")), mlp()


@fixture("connectivity.shared-running-stats")
def _():
    def d(shares):
        return G([N("bn1", "BatchNorm2d", ["x"], num_features=3),
                  N("relu", "ReLU", ["bn1"]),
                  N("bn2", "BatchNorm2d", ["relu"], shares=shares, num_features=3)], ["bn2"],
                 inputs=[X("B", 3, 4, 4)])
    return d("bn1"), d(None)


@fixture("connectivity.unreachable")
def _():
    fire = mlp(extra=[N("bias", "Parameter", [], shape=[10]), N("bias2", "Scale", ["bias"], value=2.0)],
               outputs=("fc2", "bias2"))
    clean = mlp(extra=[N("bias", "Parameter", [], shape=[10]), N("biased", "Add", ["fc2", "bias"])],
                outputs=("biased",))
    return fire, clean


@fixture("connectivity.unused-input")
def _():
    return mlp(inputs=[X("B", 16), X("B", 4, id="mask")]), mlp()


# ---- warn: efficiency --------------------------------------------------------------------------------

@fixture("efficiency.attention-quadratic-memory")
def _():
    return lm(seq_len=65536, batch=64), lm(seq_len=128)


@fixture("efficiency.duplicate-branch")
def _():
    def d(second_in):
        return G([N("r1", "ReLU", ["x"]), N("r2", "ReLU", [second_in]), N("sum", "Add", ["r1", "r2"])], ["sum"])
    return d("x"), d("r1")


@fixture("efficiency.flop-blowup")
def _():
    return mlp(train=dict(CE, baseline={"flops": 10})), mlp(train=dict(CE, baseline={"flops": 10 ** 9}))


@fixture("efficiency.giant-flatten-linear")
def _():
    def d(pool):
        nodes = [N("conv", "Conv2d", ["x"], in_channels=3, out_channels=64, kernel_size=3, padding=1)]
        src = "conv"
        if pool:
            nodes.append(N("pool", "AdaptiveAvgPool2d", ["conv"], output_size=1))
            src = "pool"
        nodes += [N("flat", "Flatten", [src]), N("fc", "Linear", ["flat"], in_features=64 * (1 if pool else 1024),
                                                  out_features=200)]
        return G(nodes, ["fc"], inputs=[X("B", 3, 32, 32)])
    return d(False), d(True)


@fixture("efficiency.memory-over-device")
def _():
    return (mlp(train=dict(CE, device="T4", batch_size=10 ** 9)), mlp(train=dict(CE, device="T4", batch_size=32)))


@fixture("efficiency.over-budget")
def _():
    big = dict(CE, batch_size=10 ** 6, steps=10 ** 6)
    return mlp(train=dict(big, budget_usd=0.001)), mlp(train=dict(big, budget_usd=10 ** 6))


@fixture("efficiency.oversized-embedding")
def _():
    return lm(rows=1000, vocab=100), lm(rows=100, vocab=100)


@fixture("efficiency.param-blowup")
def _():
    return mlp(train=dict(CE, baseline={"params": 10})), mlp(train=dict(CE, baseline={"params": 10 ** 9}))


@fixture("efficiency.redundant-transpose")
def _():
    def d(second):
        return G([N("t1", "Transpose", ["x"], dim0=1, dim1=2), N("t2", "Transpose", ["t1"], dim0=1, dim1=second)],
                 ["t2"], inputs=[X("B", 4, 4, 4)])
    return d(2), d(3)


@fixture("efficiency.unknown-device")
def _():
    return mlp(train=dict(CE, device="TPU-v9")), mlp(train=dict(CE, device="A10G"))


@fixture("efficiency.width-not-multiple-of-8")
def _():
    return mlp(hidden=100, fc2_in=100), mlp(hidden=96, fc2_in=96)


# ---- warn: numerics --------------------------------------------------------------------------------------

@fixture("numerics.attention-no-position")
def _():
    return lm(extra_pos=False), lm()


@fixture("numerics.attention-no-scale")
def _():
    return attention(scale=False), attention(scale=True)


@fixture("numerics.batchnorm-batch-one")
def _():
    return cnn(train=dict(CE, batch_size=1)), cnn(train=dict(CE, batch_size=2))


@fixture("numerics.bias-before-batchnorm")
def _():
    return cnn(bias=True), cnn(bias=False)


@fixture("numerics.deep-no-norm")
def _():
    return chain(12), chain(12, norm=True)


@fixture("numerics.deep-no-residual")
def _():
    return chain(20, norm=True), chain(20, norm=True, residual=True)


@fixture("numerics.deep-saturating")
def _():
    return chain(6, act="Tanh"), chain(6, act="ReLU")


@fixture("numerics.double-activation")
def _():
    fire = mlp()
    fire["nodes"].insert(2, N("act2", "ReLU", ["act"]))
    _node(fire, "fc2")["in"] = ["act2"]
    return fire, mlp()


@fixture("numerics.dropout-before-batchnorm")
def _():
    def d(order):
        first, second = order
        x = [N("conv", "Conv2d", ["x"], in_channels=3, out_channels=8, kernel_size=3, bias=False)]
        if first == "drop":
            x += [N("drop", "Dropout", ["conv"], p=0.2), N("bn", "BatchNorm2d", ["drop"], num_features=8)]
            out = "bn"
        else:
            x += [N("bn", "BatchNorm2d", ["conv"], num_features=8), N("drop", "Dropout", ["bn"], p=0.2)]
            out = "drop"
        return G(x, [out], inputs=[X("B", 3, 8, 8)])
    return d(("drop", "bn")), d(("bn", "drop"))


@fixture("numerics.high-dropout")
def _():
    def d(p):
        return mlp(extra=[N("drop", "Dropout", ["fc2"], p=p)], outputs=("drop",))
    return d(0.9), d(0.5)


@fixture("numerics.linear-collapse")
def _():
    fire = mlp()
    fire["nodes"] = [n for n in fire["nodes"] if n["id"] != "act"]
    _node(fire, "fc2")["in"] = ["fc1"]
    return fire, mlp()


@fixture("numerics.loss-output-mismatch")
def _():
    return _edit(mlp(train=CE), "fc2", out_features=1), mlp(train=CE)


@fixture("numerics.no-nonlinearity")
def _():
    return mlp(act="Identity"), mlp()


@fixture("numerics.pool-after-global")
def _():
    d = cnn()
    fire = copy.deepcopy(d)
    fire["nodes"].insert(4, N("pool2", "AdaptiveAvgPool2d", ["pool"], output_size=1))
    _node(fire, "flat")["in"] = ["pool2"]
    return fire, d


@fixture("numerics.relu-before-logits")
def _():
    return mlp(extra=[N("out", "ReLU", ["fc2"])], outputs=("out",), train=CE), mlp(train=CE)


@fixture("numerics.sigmoid-before-loss")
def _():
    bce = dict(CE, loss="bce_with_logits")
    return mlp(extra=[N("out", "Sigmoid", ["fc2"])], outputs=("out",), train=bce), mlp(train=bce)


@fixture("numerics.softmax-before-loss")
def _():
    return (mlp(extra=[N("out", "Softmax", ["fc2"], dim=-1)], outputs=("out",), train=CE), mlp(train=CE))


@fixture("numerics.softmax-implicit-dim")
def _():
    return (mlp(extra=[N("out", "Softmax", ["fc2"])], outputs=("out",)),
            mlp(extra=[N("out", "Softmax", ["fc2"], dim=-1)], outputs=("out",)))


# ---- warn: shape / parse ---------------------------------------------------------------------------------

@fixture("shape.silent-broadcast")
def _():
    def d(pooled):
        nodes = [N("conv", "Conv2d", ["x"], in_channels=8, out_channels=8, kernel_size=3, padding=1)]
        short = "x"
        if pooled:
            nodes.append(N("mean", "Mean", ["x"], dim=[2, 3], keepdim=True))
            short = "mean"
        nodes.append(N("res", "Add", ["conv", short]))
        return G(nodes, ["res"], inputs=[X("B", 8, 4, 4)])
    return d(True), d(False)


@fixture("shape.unknown-dim")
def _():
    return mlp(inputs=[X("B", None)]), mlp()


@fixture("parse.unfollowed")
def _():
    fire = mlp()
    fire["meta"] = {"parser_warnings": [{"line": "model.py:12", "message": "could not follow a loop"}]}
    return fire, mlp()


# ---- the op table's newer layers, symbols, shared weights (issue 13) ------------------------------

def one(op, inputs, extra=(), ins=None, train=None, **args):
    """A design around one node `n` of `op` reading the inputs (and `extra` nodes) in order."""
    nodes = list(extra) + [N("n", op, ins or [i["id"] for i in inputs], **args)]
    return G(nodes, ["n" if op not in ("GRU", "MultiheadAttention") else "n:0"], inputs=inputs, train=train)


@fixture("connectivity.inplace-leaf")
def _():
    def d(inplace):
        return G([N("p", "Parameter", [], shape=[2, 8]), N("act", "ReLU", ["p"], inplace=inplace),
                  N("n", "Add", ["x", "act"])], ["n"], inputs=[X(2, 8)])
    return d(True), d(False)


@fixture("dtype.index-dtype")
def _():
    def d(mask):
        return one("MaskedFill", [X(2, 8), X(2, 8, dtype=mask, id="m")], value=0.0)
    return d("float32"), d("bool")


@fixture("dtype.mask")
def _():
    def d(value):
        return one("MultiheadAttention", [X(2, 5, 16)], extra=[N("mask", "Constant", [], shape=[5, 5], value=value)],
                   ins=["x", "x", "x", "mask"], embed_dim=16, num_heads=2, batch_first=True)
    return d(0), d(0.0)


@fixture("dtype.mixed")
def _():
    def d(value):
        return one("GRU", [X("B", 5, 8)], extra=[N("h0", "Constant", [], shape=[1, "B", 16], value=value)],
                   ins=["x", "h0"], input_size=8, hidden_size=16, batch_first=True)
    return d(0), d(0.0)


@fixture("dtype.unsupported")
def _():
    def d(dtype):
        return one("Linear", [X(2, 8, dtype=dtype)], in_features=8, out_features=4)
    return d("float64"), d("float32")


@fixture("shape.attention-mask")
def _():
    def d(n):
        return one("MultiheadAttention", [X(2, 5, 16)], extra=[N("mask", "Constant", [], shape=[n, n], value=0.0)],
                   ins=["x", "x", "x", "mask"], embed_dim=16, num_heads=2, batch_first=True)
    return d(6), d(5)


@fixture("shape.channel-divisibility")
def _():
    return one("PixelShuffle", [X(2, 3, 4, 4)], upscale_factor=2), one("PixelShuffle", [X(2, 4, 4, 4)],
                                                                       upscale_factor=2)


@fixture("shape.einops-pattern")
def _():
    return (one("Rearrange", [X(2, 3, 4)], pattern="a b -> b a"),
            one("Rearrange", [X(2, 3, 4)], pattern="a b c -> c (b a)"))


@fixture("shape.einsum-sizes")
def _():
    return (one("Einsum", [X(2, 3), X(4, 5, id="y")], equation="ij,jk->ik"),
            one("Einsum", [X(2, 3), X(3, 5, id="y")], equation="ij,jk->ik"))


@fixture("shape.fold-blocks")
def _():
    return (one("Fold", [X(2, 12, 13)], output_size=[4, 5], kernel_size=2),
            one("Fold", [X(2, 12, 12)], output_size=[4, 5], kernel_size=2))


@fixture("shape.gather-sizes")
def _():
    def d(rows):
        return one("Gather", [X(2, 5)], extra=[N("idx", "Constant", [], shape=[rows, 2], value=0)], ins=["x", "idx"],
                   dim=1)
    return d(3), d(2)


@fixture("shape.memory-layout")
def _():
    def d(dims):
        return G([N("p", "Permute", ["x"], dims=dims), N("lrn", "LocalResponseNorm", ["p"], size=2)], ["lrn"],
                 inputs=[X(2, 3, 4, 5, 6)])
    return d([0, 1, 2, 4, 3]), d([0, 2, 1, 3, 4])


@fixture("shape.glu-odd")
def _():
    return one("GLU", [X(2, 7)]), one("GLU", [X(2, 8)])


@fixture("shape.pad-size")
def _():
    return one("ReflectionPad1d", [X(2, 3, 4)], padding=4), one("ReflectionPad1d", [X(2, 3, 4)], padding=3)


@fixture("shape.rnn-state")
def _():
    def d(width):
        return one("GRU", [X("B", 5, 8)], extra=[N("h0", "Constant", [], shape=[1, "B", width], value=0.0)],
                   ins=["x", "h0"], input_size=8, hidden_size=16, batch_first=True)
    return d(17), d(16)


@fixture("shape.shares-ignored")
def _():
    def d(width):
        return G([N("wte", "Embedding", ["ids"], num_embeddings=40, embedding_dim=6),
                  N("head", "Linear", ["wte"], shares="wte", in_features=width, out_features=40, bias=False)],
                 ["head"], inputs=[X("B", 5, dtype="int64", id="ids")])
    return d(7), d(6)


@fixture("shape.single-value-statistics")
def _():
    def d(batch):
        return G([N("fc", "Linear", ["x"], in_features=16, out_features=8),
                  N("n", "BatchNorm1d", ["fc"], num_features=8)], ["n"], train={"batch_size": batch})
    return d(1), d(2)


@fixture("shape.size-meets-width")
def _():
    # a Linear over the channels of [B, 176, T] runs only when T = 176: the missing transpose (issue 26)
    return (one("Linear", [X("B", 176, "T")], in_features=176, out_features=4),
            one("Linear", [X("B", "T", 176)], in_features=176, out_features=4))


@fixture("shape.symbol-condition")
def _():
    # a Linear(8) fed a width T runs only when T = 8 (the runner's T is 8: the warn's design runs)
    return (one("Linear", [X("B", "T")], in_features=8, out_features=4),
            one("Linear", [X("B", 8)], in_features=8, out_features=4))

"""A plain-torch executor of archgraph/1, sharing no code with archcurator (issue 26's truth).

Each node becomes the torch call its op names (nn modules built from `args` as written, tensor ops as
torch functions), run eagerly on the CPU in training mode at the sizes the design names in
`meta.example_sizes` (else train.batch_size / train.seq_len, else B=2 and 16), one forward. Only the ops
bench/clean_designs.py writes are known; anything else is reported, not guessed.

    python bench/plain_torch.py DESIGN.json...   -> one JSON line per design: {"name", "ran", "error"}
"""

from __future__ import annotations

import json
import sys

import torch
import torch.nn.functional as F
from torch import nn

MODULES = {name: getattr(nn, name) for name in (
    "Linear", "Conv1d", "Conv2d", "ConvTranspose2d", "LayerNorm", "RMSNorm", "GroupNorm", "BatchNorm1d",
    "BatchNorm2d", "Embedding", "Dropout", "ReLU", "GELU", "SiLU", "Sigmoid", "Tanh", "Softmax", "LeakyReLU",
    "ELU", "Softplus", "GLU", "MaxPool2d", "AdaptiveAvgPool2d", "AdaptiveAvgPool1d", "Flatten", "ConstantPad1d",
    "LSTM", "MultiheadAttention", "TransformerEncoderLayer")}


def _size(d, env):
    if isinstance(d, int):
        return d
    if isinstance(d, str):
        return env[d]
    raise ValueError(f"size {d!r}")


def _sizes(design):
    meta = (design.get("meta") or {}).get("example_sizes") or {}
    train = design.get("train") or {}
    env = {}
    for spec in design["inputs"]:
        for i, d in enumerate(spec["shape"]):
            if isinstance(d, str) and d not in env:
                env[d] = meta.get(d) or (train.get("batch_size") if i == 0 else train.get("seq_len")) or \
                    (2 if i == 0 else 16)
    return env


def _input(spec, env, gen):
    shape = [_size(d, env) for d in spec["shape"]]
    dt = spec.get("dtype", "float32")
    if dt in ("int64", "long"):
        return torch.randint(0, int(spec.get("vocab_size", 10)), shape, generator=gen)
    if dt == "bool":
        return torch.rand(shape, generator=gen) < 0.2
    return torch.randn(shape, generator=gen)


def _module(op, args):
    a = dict(args)
    if op == "MultiheadAttention":
        a.pop("is_causal", None)
        a.pop("need_weights", None)
    return MODULES[op](**a)


def _tensor_op(op, a, xs, env):
    x = xs[0] if xs else None
    if op == "Add":
        return xs[0] + xs[1]
    if op == "Sub":
        return xs[0] - xs[1]
    if op == "Mul":
        return xs[0] * xs[1]
    if op == "Div":
        return xs[0] / xs[1]
    if op == "MatMul":
        return xs[0] @ xs[1]
    if op == "Scale":
        return x * a["value"]
    if op == "Reshape":
        return x.reshape([s if isinstance(s, int) else env[s] for s in a["shape"]])
    if op == "Permute":
        return x.permute(*a["dims"])
    if op == "Transpose":
        return x.transpose(a["dim0"], a["dim1"])
    if op == "Concat":
        return torch.cat(xs, dim=a.get("dim", 0))
    if op == "Stack":
        return torch.stack(xs, dim=a.get("dim", 0))
    if op == "Chunk":
        return list(torch.chunk(x, a["chunks"], dim=a.get("dim", 0)))
    if op == "Slice":
        idx = [slice(None)] * x.dim()
        end = a.get("end")
        start = a.get("start")
        idx[a["dim"]] = slice(env[start] if isinstance(start, str) else start,
                              env[end] if isinstance(end, str) else end, a.get("step", 1) or 1)
        return x[tuple(idx)]
    if op == "Select":
        return x.select(a["dim"], a["index"])
    if op == "Unsqueeze":
        return x.unsqueeze(a["dim"])
    if op == "Mean":
        return x.mean(dim=a.get("dim"), keepdim=a.get("keepdim", False))
    if op == "Sum":
        return x.sum(dim=a.get("dim"), keepdim=a.get("keepdim", False))
    if op == "Amax":
        return x.amax(dim=a.get("dim"), keepdim=a.get("keepdim", False))
    if op == "Expand":
        return x.expand(*[s if isinstance(s, int) else env[s] for s in a["shape"]])
    if op == "Parameter":
        return nn.Parameter(torch.randn([_size(s, env) for s in a["shape"]]) * 0.02)
    if op == "Constant":
        dt = {"int64": torch.int64, "bool": torch.bool, None: torch.float32}[a.get("dtype")]
        return torch.full([_size(s, env) for s in a["shape"]], a.get("value", 0.0), dtype=dt)
    if op == "Arange":
        end = a["end"]
        return torch.arange(env[end] if isinstance(end, str) else end)
    if op == "Clamp":
        return torch.clamp(x, min=a.get("min"), max=a.get("max"))
    if op == "Where":
        return torch.where(xs[0], xs[1], xs[2])
    if op == "MaskedFill":
        return xs[0].masked_fill(xs[1], a["value"])
    if op == "Cumsum":
        return torch.cumsum(x, dim=a["dim"])
    if op == "Roll":
        return torch.roll(x, shifts=a["shifts"], dims=a.get("dims"))
    if op == "Normalize":
        return F.normalize(x, p=a.get("p", 2.0), dim=a.get("dim", 1))
    if op == "Einsum":
        return torch.einsum(a["equation"], *xs)
    if op == "Interpolate":
        return F.interpolate(x, size=a.get("size"), scale_factor=a.get("scale_factor"), mode=a.get("mode", "nearest"))
    raise KeyError(op)


def run(design, seed=0):
    env = _sizes(design)
    gen = torch.Generator().manual_seed(seed)
    vals = {s["id"]: _input(s, env, gen) for s in design["inputs"]}

    def get(ref):
        rid, _, k = ref.partition(":")
        v = vals[rid]
        if isinstance(v, (list, tuple)):
            return v[int(k or 0)]
        if k not in ("", "0"):
            raise IndexError(ref)
        return v

    for node in design["nodes"]:
        op, args = node["op"], node.get("args") or {}
        xs = [get(r) for r in node.get("in", [])]
        if op in MODULES:
            m = _module(op, args)
            m.train()
            if op == "MultiheadAttention":
                out = list(m(*xs[:3]))
            elif op == "LSTM":
                o, (h, c) = m(xs[0])
                out = [o, h, c]
            else:
                out = m(*xs)
        else:
            out = _tensor_op(op, args, xs, env)
        vals[node["id"]] = out
    results = [get(o) for o in design["outputs"]]
    return [tuple(r.shape) for r in results]


def main(paths):
    torch.manual_seed(0)
    for p in paths:
        design = json.load(open(p))
        try:
            shapes = run(design)
            print(json.dumps({"name": design["name"], "ran": True, "shapes": shapes}))
        except Exception as e:  # noqa: BLE001 - the verdict of torch is what is wanted
            print(json.dumps({"name": design["name"], "ran": False, "error": f"{type(e).__name__}: {e}"[:300]}))
        sys.stdout.flush()


if __name__ == "__main__":
    main(sys.argv[1:])

"""The pure-Python floor of shape inference: `json.loads` and one topological walk computing each node's
result shapes, with nothing else (no argument schema, no checks, no dtypes, no cost, no messages).

It knows only the ops of the benchmark's models, and only the common path of each; sizes are ints or
symbol names passed through unchanged. No verifier could be cheaper in Python, so bench_verify.py quotes
verify's time against it (and checks that it computes the same shapes, so the two do the same work).
"""

from __future__ import annotations

import json


def _pair(v):
    return (v, v) if type(v) is int else tuple(v)


def _window(size, k, s, p, d=1):
    if type(size) is not int:
        return None  # a symbolic spatial size: the floor does not do arithmetic on symbols
    return (size + 2 * p - d * (k - 1) - 1) // s + 1


def _conv(x, a):
    k, s = _pair(a["kernel_size"]), _pair(a.get("stride", 1))
    p, d = _pair(a.get("padding", 0)), _pair(a.get("dilation", 1))
    return [x[0], a["out_channels"], _window(x[2], k[0], s[0], p[0], d[0]), _window(x[3], k[1], s[1], p[1], d[1])]


def _conv_t(x, a):
    k, s, p = _pair(a["kernel_size"]), _pair(a.get("stride", 1)), _pair(a.get("padding", 0))
    return [x[0], a["out_channels"], (x[2] - 1) * s[0] - 2 * p[0] + k[0], (x[3] - 1) * s[1] - 2 * p[1] + k[1]]


def _pool(x, a):
    k = _pair(a["kernel_size"])
    s, p = _pair(a.get("stride") or a["kernel_size"]), _pair(a.get("padding", 0))
    return [x[0], x[1], _window(x[2], k[0], s[0], p[0]), _window(x[3], k[1], s[1], p[1])]


def _broadcast(a, b):
    if len(a) < len(b):
        a, b = b, a
    b = [1] * (len(a) - len(b)) + list(b)
    return [y if x == 1 else x for x, y in zip(a, b)]


def _flatten(x, a):
    start = a.get("start_dim", 1) % len(x)
    end = a.get("end_dim", -1) % len(x)
    n = 1
    for d in x[start:end + 1]:
        n = n * d if type(n) is int and type(d) is int else None
    return list(x[:start]) + [n] + list(x[end + 1:])


def _concat(xs, a):
    dim = a.get("dim", 0) % len(xs[0])
    out = list(xs[0])
    total = 0
    for x in xs:
        total = total + x[dim] if type(total) is int and type(x[dim]) is int else None
    out[dim] = total
    return out


def _expand(x, a):
    shape = a["shape"]
    x = [1] * (len(shape) - len(x)) + list(x)
    return [o if s == -1 else s for s, o in zip(shape, x)]


def _select(x, a):
    dim = a["dim"] % len(x)
    return list(x[:dim]) + list(x[dim + 1:])


def _unsqueeze(x, a):
    dim = a["dim"] % (len(x) + 1)
    return list(x[:dim]) + [1] + list(x[dim:])


def _unflatten(x, a):
    dim = a["dim"] % len(x)
    return list(x[:dim]) + list(a["unflattened_size"]) + list(x[dim + 1:])


def _matmul(a, b):
    return _broadcast(a[:-2], b[:-2]) + [a[-2], b[-1]]


def _split(x, a):
    size, dim = a["split_size_or_sections"], a.get("dim", 0) % len(x)
    n = x[dim] // size
    return [list(x[:dim]) + [size] + list(x[dim + 1:]) for _ in range(n)]


SAME = {"BatchNorm2d", "ReLU", "GELU", "Dropout", "LayerNorm", "Softmax", "Hardtanh", "Scale", "Identity"}
ONE = {
    "Conv2d": _conv,
    "ConvTranspose2d": _conv_t,
    "MaxPool2d": _pool,
    "AdaptiveAvgPool2d": lambda x, a: list(x[:-2]) + list(_pair(a["output_size"])),
    "Flatten": _flatten,
    "Linear": lambda x, a: list(x[:-1]) + [a["out_features"]],
    "Permute": lambda x, a: [x[i] for i in a["dims"]],
    "Expand": _expand,
    "Select": _select,
    "Unsqueeze": _unsqueeze,
    "Unflatten": _unflatten,
    "Embedding": lambda x, a: list(x) + [a["embedding_dim"]],
}
TWO = {"Add": _broadcast, "Sub": _broadcast, "Div": _broadcast, "Mul": _broadcast, "MatMul": _matmul}
NONE = {"Parameter": lambda a: list(a["shape"]), "Constant": lambda a: list(a["shape"]),
        "Arange": lambda a: [a["end"]]}


def _results(op, args, ins):
    if op in SAME:
        return [ins[0]]
    f = ONE.get(op)
    if f is not None:
        return [f(ins[0], args)]
    f = TWO.get(op)
    if f is not None:
        return [f(ins[0], ins[1])]
    if op in NONE:
        return [NONE[op](args)]
    if op == "Concat":
        return [_concat(ins, args)]
    if op == "Split":
        return _split(ins[0], args)
    if op == "MultiheadAttention":
        return [ins[0], None]
    raise KeyError(f"the floor does not know op {op!r}")


def infer(text: str) -> dict:
    """id -> list of result shapes, for a design's JSON text: json.loads, then one topological walk."""
    data = json.loads(text)
    shapes = {spec["id"]: [spec["shape"]] for spec in data["inputs"]}
    nodes = data["nodes"]
    users: dict = {}
    waiting = {}
    ready = []
    for n in nodes:
        ins = n.get("in") or ()
        deps = {r.rpartition(":")[0] if ":" in r else r for r in ins} - shapes.keys()
        waiting[n["id"]] = len(deps)
        for d in deps:
            users.setdefault(d, []).append(n)
        if not deps:
            ready.append(n)
    for n in ready:  # grows as the walk goes: Kahn's order
        refs = n.get("in") or ()
        ins = []
        for r in refs:
            if ":" in r:
                rid, _, k = r.rpartition(":")
                ins.append(shapes[rid][int(k)])
            else:
                ins.append(shapes[r][0])
        shapes[n["id"]] = _results(n["op"], n.get("args") or {}, ins)
        for u in users.get(n["id"], ()):
            waiting[u["id"]] -= 1
            if waiting[u["id"]] == 0:
                ready.append(u)
    return shapes

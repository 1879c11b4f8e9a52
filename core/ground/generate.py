"""The differential generator: random designs drawn from the op table alone (NNSmith's idea).

It knows nothing of the check catalogue. It reads the op table's *schema*
(names, arities, argument kinds and defaults, as torch's constructors take
them) and nothing else: no shape rule, no requirement, no check. A design
grows node by node; each node's operands are values already in the design,
and its arguments are drawn from their kinds, often from the sizes of its
operands as torch itself computed them (the partial design is run in torch,
eagerly on the CPU, as it grows), so that about half of the designs run and
half fail in every way the arguments, shapes, dtypes, symbols and modes allow.

`generate(seed) -> dict` is deterministic for a seed and torch's version.
It imports torch: it runs where the designs run (the differential child).
"""

from __future__ import annotations

import random

from ..graph import parse_ref
from ..ops import OP_TABLE

SMALL = (1, 2, 3, 4, 5, 6, 7, 8, 12, 16)
FLOAT_DTYPES = ("float32",) * 8 + ("float64", "float16", "bfloat16")
INT_DTYPES = ("int64",) * 4 + ("int32", "uint8", "bool")
MAX_VALUES = 200_000  # a value torch would take long to compute is not kept
SYMBOLS = ("B", "T", "S")


def _draw(kind, rng: random.Random, hints: dict, depth: int = 0):
    """A value of (or, now and then, just outside) an argument kind, often one of the operands' sizes."""
    form = kind.form
    tag = form[0]
    if depth > 4:
        return 1
    if tag == "int":
        lo, hi = form[1], form[2]
        r = rng.random()
        dims = hints.get("dims") or []
        if hints.get("dim_like") and hints.get("rank") is not None:
            rank = hints["rank"]
            return rng.randint(-rank - 1, max(rank, 0))
        if r < 0.55 and dims:
            return rng.choice(dims)
        if r < 0.62 and lo is not None:
            return lo - 1 if rng.random() < 0.5 else lo
        if r < 0.66 and hi is not None:
            return hi + 1
        base = lo if lo is not None else -2
        top = hi if hi is not None else base + 9
        return rng.randint(base, max(base, top))
    if tag == "float":
        lo, hi = form[1], form[2]
        r = rng.random()
        if r < 0.06:
            return (lo if lo is not None else 0) - 0.5
        if r < 0.1 and hi is not None:
            return hi + 0.5
        a = lo if lo is not None else -2.0
        b = hi if hi is not None else a + 3.0
        v = round(rng.uniform(a, b), 3)
        return int(v) if rng.random() < 0.2 and float(v).is_integer() else v
    if tag == "bool":
        return rng.random() < 0.5
    if tag == "enum":
        values = form[1]
        return "bogus" if rng.random() < 0.05 or not values else rng.choice(values)
    if tag == "nested":
        return {a.name: _draw(a.kind, rng, hints, depth + 1) for a in form[1]
                if a.required or rng.random() < 0.3}
    if tag == "optional":
        return None if rng.random() < 0.3 else _draw(form[1], rng, hints, depth + 1)
    if tag == "oneof":
        return _draw(rng.choice(form[1]), rng, hints, depth + 1)
    if tag == "list":
        elem, n, min_len, max_len = form[1], form[2], form[3], form[4]
        if n is None:
            rank = hints.get("rank") or 2
            length = rng.randint(max(min_len, 1), max(max_len or rank + 1, max(min_len, 1)))
        else:
            length = n if rng.random() < 0.92 else n + rng.choice((-1, 1))
        if elem.form[0] == "int" and hints.get("perm") and rng.random() < 0.5:
            perm = list(range(hints.get("rank") or 0))
            rng.shuffle(perm)
            return perm
        return [_draw(elem, rng, hints, depth + 1) for _ in range(max(0, length))]
    if tag == "symbol":
        # a symbol of the design's inputs (a size the run binds); none there: a size instead
        return rng.choice(hints["symbols"]) if hints.get("symbols") else rng.choice(SMALL)
    return rng.choice((0, 1, 0.5, -1.0, 2))


DIM_NAMES = {"dim", "dim0", "dim1", "start_dim", "end_dim", "dims", "index"}


def _args(spec, operands: list, rng: random.Random, symbols: list) -> dict:
    shapes = [tuple(t.shape) for t in operands]
    dims = sorted({d for s in shapes for d in s} | set())
    rank = len(shapes[0]) if shapes else None
    if shapes and rng.random() < 0.3 and shapes[0]:
        prod = 1
        for d in shapes[0][1:]:
            prod *= d
        dims.append(prod)
    out = {}
    for a in spec.args:
        if a.name.startswith("_"):
            continue
        if not a.required and rng.random() > 0.35:
            continue
        hints = {"dims": dims, "rank": rank, "symbols": symbols, "dim_like": a.name in DIM_NAMES,
                 "perm": a.name in ("dims",)}
        out[a.name] = _draw(a.kind, rng, hints)
    if spec.draw_extra is not None:
        # free keyword arguments (einops' axis lengths) come with the pattern they name
        out.update(spec.draw_extra(rng, out, shapes))
    return out


def _inputs(rng: random.Random) -> tuple[list, dict]:
    """One or two inputs of small sizes; symbols for the batch and the sequence now and then."""
    inputs = []
    train: dict = {}
    n = 1 if rng.random() < 0.75 else 2
    for i in range(n):
        rank = rng.choice((1, 2, 2, 3, 3, 3, 4, 4, 4, 5))
        shape: list = [rng.choice(SMALL) for _ in range(rank)]
        if rank >= 2 and rng.random() < 0.35:
            shape[0] = "B"
        if rank >= 2 and rng.random() < 0.25:
            shape[1] = "T"
        integer = rng.random() < 0.2
        dtype = rng.choice(INT_DTYPES) if integer else rng.choice(FLOAT_DTYPES)
        spec = {"id": f"x{i}", "shape": shape, "dtype": dtype}
        if integer and dtype != "bool":
            spec["vocab_size"] = rng.choice((2, 4, 8, 16, 32))
        inputs.append(spec)
    syms = {d for s in inputs for d in s["shape"] if isinstance(d, str)}
    if "B" in syms and rng.random() < 0.5:
        train["batch_size"] = rng.choice((1, 2, 3, 4))
    if "T" in syms and rng.random() < 0.5:
        train["seq_len"] = rng.choice((1, 4, 6, 8, 12, 16))
    return inputs, train


def generate(seed: int, max_nodes: int = 30) -> dict:
    """One random design; `meta.generator` records the seed, the mode and the planned size."""
    import torch

    from ..build import example_inputs, symbol_env
    from ..graph import Design

    rng = random.Random(seed)
    torch.manual_seed(seed)
    ops = sorted(OP_TABLE)
    inputs, train = _inputs(rng)
    mode = "train" if rng.random() < 0.75 else "eval"
    if mode == "eval":
        train["mode"] = "eval"
    want = min(max_nodes, 1 + int(rng.expovariate(1 / 5)))
    skeleton = {"format": "archgraph/1", "name": f"gen-{seed}", "inputs": inputs, "nodes": [], "outputs": []}
    if train:
        skeleton["train"] = train
    design = Design.from_dict(skeleton)
    env = symbol_env(design, batch=train.get("batch_size", 2))
    values: list = []  # (ref, tensor)
    for spec, t in zip(inputs, example_inputs(design, batch=env.get("B", 2), env=env, seed=seed)):
        values.append((spec["id"], t))
    symbols = sorted({d for s in inputs for d in s["shape"] if isinstance(d, str)})
    nodes: list = []
    attempts = 0
    broken = False
    while len(nodes) < want and attempts < want * 8 and not broken:
        attempts += 1
        name = rng.choice(ops)
        spec = OP_TABLE[name]
        lo, hi = spec.arity
        count = lo if hi == lo else rng.randint(lo, min(hi if hi is not None else lo + 2, lo + 2))
        if count and not values:
            continue
        picked = [values[-1] if rng.random() < 0.6 else rng.choice(values) for _ in range(count)]
        args = _args(spec, [t for _, t in picked], rng, symbols)
        nid = f"n{len(nodes)}"
        node = {"id": nid, "op": name, "args": args, "in": [r for r, _ in picked]}
        outs, why = _run_node(node, spec, [t for _, t in picked], mode, env)
        if why == "too large":
            continue
        if outs is None:
            if rng.random() < 0.1 and not any(t.numel() == 0 for _, t in picked):
                nodes.append(node)  # a design that fails in torch, kept as it is
                broken = True
            continue
        nodes.append(node)
        for i, t in enumerate(outs):
            values.append((nid if i == 0 and len(outs) == 1 else f"{nid}:{i}", t))
    if not nodes:
        nodes.append({"id": "n0", "op": "Identity", "args": {}, "in": [inputs[0]["id"]]})
    out_ids = [nodes[-1]["id"]]
    last_results = [r for r, _ in values if parse_ref(r)[0] == nodes[-1]["id"]]
    if last_results and ":" in last_results[0]:
        out_ids = [last_results[0]]
    skeleton["nodes"] = nodes
    skeleton["outputs"] = out_ids
    skeleton["meta"] = {"generator": {"seed": seed, "mode": mode, "planned": want}}
    return skeleton


def _run_node(node: dict, spec, operands: list, mode: str, env: dict):
    """Run one node alone in torch on real operands: (results, None), or (None, why)."""
    import torch

    from ..build import _concrete, _flatten

    try:
        args = spec.resolve_args(node["args"])[0]
        try:
            if spec.params(args) > MAX_VALUES:
                return None, "too large"  # a layer that takes long to build adds nothing a small one does not
        except Exception:  # noqa: BLE001 - arguments torch will refuse: let it
            pass
        if spec.arity == (0, 0):
            args = _concrete(args, env)
        mod = spec.build(args)
        if isinstance(getattr(mod, "sizes", None), dict):
            mod.sizes = env
        mod.train(mode == "train")
        with torch.no_grad():
            out = _flatten(mod(*operands))
    except Exception as exc:  # noqa: BLE001 - what torch raises decides where the design goes
        return None, f"{type(exc).__name__}"
    if not all(isinstance(t, torch.Tensor) for t in out):
        return None, "not a tensor"
    if any(t.numel() > MAX_VALUES for t in out):
        return None, "too large"
    if any(t.numel() == 0 for t in out):
        return None, "too large"  # empty tensors: torch skips most checks on them (a known limit, not drawn)
    return list(out), None


__all__ = ["generate"]

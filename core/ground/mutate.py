"""Random mutations of the reference zoo: the study's out-of-distribution arm.

Unlike the corruption kinds, a mutation knows nothing of the checks or of
the kinds of mistakes they were written for: it edits a zoo graph at random
(an integer argument nudged, an operand rewired to another earlier value, a
node removed, a random op of the table inserted, an input's dtype or a size
changed, a symbol made a constant or a constant a symbol) and claims
nothing. Whether the result runs is for torch to say; the study reports the
verdict's agreement on these apart from the deterministic set.
"""

from __future__ import annotations

import copy
import random

from ..graph import parse_ref
from ..ops import OP_TABLE
from .edit import G

MAX_NODES = 160  # larger zoo graphs take longer in torch than they add to the study


def _int_args(node: dict) -> list:
    return [k for k, v in (node.get("args") or {}).items() if type(v) is int]


def _values_before(g: G, nid: str) -> list:
    ids = [i["id"] for i in g.d["inputs"]]
    for n in g.nodes:
        if n["id"] == nid:
            break
        ids.append(n["id"])
    return ids


def mutate(design: dict, rng: random.Random) -> tuple[dict, str] | None:
    """One random edit of a copy of `design`; (graph, what was done) or None when the draw found nothing."""
    g = G(design)
    nodes = g.nodes
    if not nodes:
        return None
    n = rng.choice(nodes)
    what = rng.choice(("arg", "arg", "arg", "rewire", "remove", "insert", "dtype", "size", "symbol"))
    if what == "arg":
        keys = _int_args(n)
        if not keys:
            return None
        k = rng.choice(keys)
        old = n["args"][k]
        n["args"][k] = rng.choice((old + 1, old - 1, old * 2, old // 2, 0, 1))
        return g.d, f"{n['id']}.{k}: {old} -> {n['args'][k]}"
    if what == "rewire":
        if not n.get("in"):
            return None
        i = rng.randrange(len(n["in"]))
        choices = [v for v in _values_before(g, n["id"]) if v != parse_ref(n["in"][i])[0]]
        if not choices:
            return None
        old = n["in"][i]
        n["in"][i] = rng.choice(choices)
        return g.d, f"{n['id']} operand {i}: {old} -> {n['in'][i]}"
    if what == "remove":
        if not n.get("in") or n.get("shares") or any(m.get("shares") == n["id"] for m in nodes):
            return None
        g.remove(n["id"])
        return g.d, f"removed {n['id']} ({n['op']})"
    if what == "insert":
        unary = [name for name, spec in OP_TABLE.items() if spec.arity[0] <= 1 <= (spec.arity[1] or 1)
                 and not any(a.required for a in spec.args)]
        op = rng.choice(sorted(unary))
        ref = n["id"]
        new = g.insert_after(ref, op, {}, suffix=f"mut_{op.lower()}")
        return g.d, f"inserted {op} after {ref} ({new})"
    if what == "dtype":
        spec = rng.choice(g.d["inputs"])
        old = spec.get("dtype", "float32")
        spec["dtype"] = rng.choice([d for d in ("float32", "int64", "float16", "bool") if d != old])
        return g.d, f"input {spec['id']} dtype {old} -> {spec['dtype']}"
    spec = rng.choice(g.d["inputs"])
    shape = spec.get("shape") or []
    if not shape:
        return None
    j = rng.randrange(len(shape))
    old = shape[j]
    if what == "size":
        if type(old) is not int:
            return None
        shape[j] = rng.choice((old + 1, max(old - 1, 0), old * 2, max(old // 2, 1), 1))
    elif type(old) is int:
        shape[j] = rng.choice(("B", "T", "S"))
    else:
        shape[j] = rng.choice((1, 2, 3, 7, 16, 64))
    return g.d, f"input {spec['id']} dim {j}: {old} -> {shape[j]}"


def mutation_set(zoo: dict, count: int = 200, seed: int = 0) -> list[dict]:
    """`count` mutated zoo graphs drawn with `seed` (graphs of at most MAX_NODES nodes), as study cases."""
    rng = random.Random(seed)
    bases = sorted(name for name, d in zoo.items() if len(d.get("nodes", [])) <= MAX_NODES)
    cases = []
    tries = 0
    while len(cases) < count and bases and tries < count * 20:
        tries += 1
        base = rng.choice(bases)
        out = mutate(copy.deepcopy(zoo[base]), rng)
        if out is None:
            continue
        graph, what = out
        graph["name"] = f"{base}/mutation/{len(cases)}"
        meta = dict(graph.get("meta") or {})
        meta["mutation"] = {"base": base, "edit": what, "seed": seed}
        graph["meta"] = meta
        cases.append({"case": graph["name"], "kind": "mutation", "base": base, "site": what, "expect": "unknown",
                      "rules": [], "graph": graph})
    return cases


__all__ = ["MAX_NODES", "mutate", "mutation_set"]

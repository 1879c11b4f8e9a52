"""A deterministic stand-in for core.verify in store tests (the store's logic, not the checks').

Node op `Bad` -> a block finding, `Meh` -> a warn finding (rule from the
node's args `rule`, else fake.block / fake.warn). `train.usd` sets the quote.
`verify_v2` is a "newer catalogue" that no longer reports `Meh` nodes.
"""

from __future__ import annotations

from archcurator.core.report import Finding, Report


def _verify(design, *, with_meh: bool):
    findings = []
    for n in design.nodes:
        if n.op == "Bad":
            findings.append(Finding(n.args.get("rule", "fake.block"), "block", (n.id,), f"{n.id} is bad"))
        elif n.op == "Meh" and with_meh:
            findings.append(Finding(n.args.get("rule", "fake.warn"), "warn", (n.id,), f"{n.id} is meh"))
    usd = float((design.train or {}).get("usd", len(design.nodes)))
    cost = {"params": 1000 * len(design.nodes), "flops_per_sample": 2000 * len(design.nodes),
            "quote": {"usd": usd, "device": "A10G"}}
    return Report(findings=findings, cost=cost)


def verify(design):
    return _verify(design, with_meh=True)


def verify_v2(design):
    return _verify(design, with_meh=False)


def graph(ops=("Linear",), name="g", usd=None, rules=None):
    """A small archgraph/1 design: a chain x -> n0 -> n1 ... with the given ops."""
    nodes = []
    prev = "x"
    for i, op in enumerate(ops):
        node = {"id": f"n{i}", "op": op, "in": [prev]}
        if rules and i in rules:
            node["args"] = {"rule": rules[i]}
        nodes.append(node)
        prev = node["id"]
    g = {"format": "archgraph/1", "name": name, "inputs": [{"id": "x", "shape": ["B", 8]}],
         "nodes": nodes, "outputs": [prev]}
    if usd is not None:
        g["train"] = {"usd": usd}
    return g


def record(id, ops=("Linear",), author="agent", model="model-a", task_set="plain", run="r1", **kw):
    r = {"id": id, "author": author, "model": model, "task_set": task_set, "run": run}
    if kw.get("error"):
        r["error"] = kw.pop("error")
    else:
        r["graph"] = graph(ops, name=id, usd=kw.pop("usd", None), rules=kw.pop("rules", None))
    r.update(kw)
    return r

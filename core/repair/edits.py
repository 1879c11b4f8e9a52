"""One repair edit: a small, named change to an archgraph/1 design, as data.

An edit is a JSON object (`{"edit": "set-arg", "node": "fc", "arg": "in_features", "from": 100, "to": 128}`)
so that a repair can be printed, stored and applied again. `apply_edit(design_dict, edit)` changes the
dict in place; `describe(edit)` is the one-line words a curator reads. The kinds:

- `set-arg` (`node`, `arg`, `from`, `to`; `to` absent: the argument is dropped, torch's default holds);
- `set-op` (`node`, `from`, `to`: the op's arguments it does not take are dropped);
- `set-in` (`node`, `from`, `to`: the operand list);
- `insert` (`node`: the new node's object, reading `ref`; `before`: the consumer that reads it instead
  of `ref`, at operand `operand`);
- `remove` (`node`; its consumers and the outputs read `to`, its first operand, instead);
- `drop-shares` (`node`);
- `set-input` (`input`, `field`: dtype or shape, `from`, `to`);
- `set-train` (`field`, `from`, `to`);
- `set-outputs` (`from`, `to`).
"""

from __future__ import annotations

import json

from ..graph import parse_ref

MISSING = None  # an argument that was not written: `from` is null


def _node(d: dict, nid: str) -> dict:
    for n in d["nodes"]:
        if n.get("id") == nid:
            return n
    raise KeyError(nid)


def _rewire(refs: list, old_id: str, new_ref: str) -> list:
    return [new_ref if parse_ref(r)[0] == old_id else r for r in refs]


def apply_edit(d: dict, e: dict) -> None:
    kind = e["edit"]
    if kind == "set-arg":
        n = _node(d, e["node"])
        args = n.setdefault("args", {})
        if "to" in e:
            args[e["arg"]] = e["to"]
        else:
            args.pop(e["arg"], None)
    elif kind == "set-op":
        n = _node(d, e["node"])
        n["op"] = e["to"]
        keep = e.get("args")
        if keep is not None:
            n["args"] = dict(keep)
    elif kind == "set-in":
        _node(d, e["node"])["in"] = list(e["to"])
    elif kind == "insert":
        new = json.loads(json.dumps(e["node"]))
        consumer = _node(d, e["before"]) if e.get("before") else None
        if consumer is not None:
            ins = consumer.get("in", [])
            i = e.get("operand", 0)
            consumer["in"] = ins[:i] + [new["id"]] + ins[i + 1:]
            pos = d["nodes"].index(consumer)
        else:
            d["outputs"] = [new["id"] if o == new["in"][0] else o for o in d["outputs"]]
            pos = len(d["nodes"])
        d["nodes"].insert(pos, new)
    elif kind == "remove":
        nid, to = e["node"], e.get("to")
        d["nodes"] = [n for n in d["nodes"] if n.get("id") != nid]
        if to is not None:
            for n in d["nodes"]:
                n["in"] = _rewire(n.get("in", []), nid, to)
            d["outputs"] = _rewire(d["outputs"], nid, to)
        else:
            d["outputs"] = [o for o in d["outputs"] if parse_ref(o)[0] != nid]
    elif kind == "drop-shares":
        _node(d, e["node"]).pop("shares", None)
    elif kind == "set-input":
        for spec in d["inputs"]:
            if spec.get("id") == e["input"]:
                spec[e["field"]] = e["to"]
                break
        else:
            raise KeyError(e["input"])
    elif kind == "set-train":
        train = dict(d.get("train") or {})
        train[e["field"]] = e["to"]
        d["train"] = train
    elif kind == "set-outputs":
        d["outputs"] = list(e["to"])
    else:
        raise ValueError(f"unknown edit {kind!r}")


def apply_edits(d: dict, edits) -> dict:
    """A copy of design dict `d` with `edits` applied in order."""
    out = json.loads(json.dumps(d))
    for e in edits:
        apply_edit(out, e)
    return out


def _v(x) -> str:
    return json.dumps(x, separators=(", ", ": "))


def describe(e: dict) -> str:
    kind = e["edit"]
    if kind == "set-arg":
        if "to" not in e:
            return f"{e['node']}: drop argument {e['arg']} (was {_v(e.get('from'))})"
        was = "unset" if e.get("from") is MISSING and not e.get("had") else _v(e.get("from"))
        return f"{e['node']}: {e['arg']} {was} -> {_v(e['to'])}"
    if kind == "set-op":
        return f"{e['node']}: op {e['from']} -> {e['to']}"
    if kind == "set-in":
        return f"{e['node']}: operands {_v(e['from'])} -> {_v(e['to'])}"
    if kind == "insert":
        n = e["node"]
        where = f"before {e['before']} (operand {e.get('operand', 0)})" if e.get("before") else "at the output"
        return f"insert {n['id']} = {n['op']}({_v(n.get('args', {}))[1:-1]}) reading {n['in'][0]} {where}"
    if kind == "remove":
        return f"remove {e['node']}" + (f"; its readers read {e['to']}" if e.get("to") else "")
    if kind == "drop-shares":
        return f"{e['node']}: drop shares (was {e.get('from')})"
    if kind == "set-input":
        return f"input {e['input']}: {e['field']} {_v(e['from'])} -> {_v(e['to'])}"
    if kind == "set-train":
        return f"train.{e['field']}: {_v(e['from'])} -> {_v(e['to'])}"
    if kind == "set-outputs":
        return f"outputs {_v(e['from'])} -> {_v(e['to'])}"
    return kind


__all__ = ["apply_edit", "apply_edits", "describe"]

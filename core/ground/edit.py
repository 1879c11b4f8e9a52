"""The graph edit helper of the grounding study: a mutable design dict with the lookups
corruptions and mutations need (result types are the clean graph's, inferred once)."""

from __future__ import annotations

import copy

from ..graph import Design, parse_ref


class G:
    """A mutable design dict with the lookups corruptions need (types are the clean graph's)."""

    def __init__(self, design: dict):
        self.d = copy.deepcopy(design)
        self._types = None

    # -- lookups (valid until the first mutation)
    @property
    def nodes(self) -> list:
        return self.d["nodes"]

    @property
    def name(self) -> str:
        return self.d.get("name", "")

    def node(self, nid: str) -> dict:
        for n in self.nodes:
            if n["id"] == nid:
                return n
        raise KeyError(nid)

    def ids(self) -> set:
        return {n["id"] for n in self.nodes} | {i["id"] for i in self.d["inputs"]}

    def users(self, nid: str) -> list:
        return [n for n in self.nodes if any(parse_ref(r)[0] == nid for r in n.get("in", []))]

    def index(self, nid: str) -> int:
        for i, n in enumerate(self.nodes):
            if n["id"] == nid:
                return i
        raise KeyError(nid)

    def types(self) -> dict:
        """Inferred result types of the graph as it was when first asked (the clean graph)."""
        if self._types is None:
            from ..shapes import infer_design

            self._types = infer_design(Design.from_dict(self.d)).types
        return self._types

    def shape(self, ref: str):
        rid, idx = parse_ref(ref)
        res = self.types().get(rid)
        if not res or idx >= len(res):
            return None
        return res[idx].shape

    def dtype(self, ref: str):
        rid, idx = parse_ref(ref)
        res = self.types().get(rid)
        if not res or idx >= len(res):
            return None
        return res[idx].dtype

    def args(self, nid: str) -> dict:
        return self.node(nid).setdefault("args", {})

    def outputs(self) -> list:
        return [parse_ref(o)[0] for o in self.d["outputs"]]

    def shared(self) -> set:
        """Ids that share weights or are shared (changing one side breaks the tie too)."""
        out = set()
        for n in self.nodes:
            if n.get("shares"):
                out.add(n["id"])
                out.add(n["shares"])
        return out

    # -- mutations
    def fresh_id(self, base: str) -> str:
        ids = self.ids()
        cand = base
        i = 1
        while cand in ids:
            cand = f"{base}_{i}"
            i += 1
        return cand

    def insert_after(self, ref: str, op: str, args: dict, *, consumer: str | None = None,
                     suffix: str = "corrupt") -> str:
        """A new node reading `ref`; `consumer` (or every user of ref) reads the new node instead."""
        rid, _ = parse_ref(ref)
        new_id = self.fresh_id(f"{rid}.{suffix}")
        targets = [self.node(consumer)] if consumer else [n for n in self.nodes
                                                         if ref in n.get("in", []) or
                                                         (ref == rid and rid in n.get("in", []))]
        for t in targets:
            t["in"] = [new_id if r == ref else r for r in t["in"]]
        if consumer is None:
            self.d["outputs"] = [new_id if o == ref else o for o in self.d["outputs"]]
        pos = self.index(rid) + 1 if rid in {n["id"] for n in self.nodes} else 0
        self.nodes.insert(pos, {"id": new_id, "op": op, "args": args, "in": [ref]})
        return new_id

    def append_output_op(self, op: str, args: dict) -> str:
        out = self.d["outputs"][0]
        new_id = self.fresh_id(f"{parse_ref(out)[0]}.{op.lower()}")
        self.nodes.append({"id": new_id, "op": op, "args": args, "in": [out]})
        self.d["outputs"] = [new_id] + self.d["outputs"][1:]
        return new_id

    def remove(self, nid: str) -> None:
        """Delete `nid`; its consumers read its first operand."""
        self.bypass(nid)
        del self.nodes[self.index(nid)]

    def bypass(self, nid: str) -> None:
        """Consumers of `nid` read its first operand instead; `nid` stays, now dead."""
        src = self.node(nid)["in"][0]
        for n in self.nodes:
            if n["id"] != nid:
                n["in"] = [src if parse_ref(r)[0] == nid else r for r in n.get("in", [])]
        self.d["outputs"] = [src if parse_ref(o)[0] == nid else o for o in self.d["outputs"]]

    def train(self) -> dict:
        self.d["train"] = dict(self.d.get("train") or {})
        return self.d["train"]


"""The graph the forward walk writes: node ids, shared weights, rollback."""

from __future__ import annotations

import json
import re

_ID_OK = re.compile(r"[^A-Za-z0-9_.\-]")


def sanitize(s):
    s = _ID_OK.sub("_", s)
    return s or "node"


def snake(op):
    s = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", op).lower()
    return s.replace("2_d", "2d").replace("1_d", "1d").replace("3_d", "3d")


class Graph:
    def __init__(self, reserved=()):
        self.nodes = []
        self.ids = set()
        self.reserved = set(reserved)
        self.calls = {}  # id(module instance) -> first node id
        self.param_refs = {}  # id(TensorVal or ParamInfo) -> ref
        self.called = set()  # ids of module instances emitted at least once
        self.scope = []  # qualified names of modules whose forward is running
        self.keep = []  # objects whose id() is a key above: kept alive so ids are not reused
        self.modules = set()  # qualified names claimed by module calls (whose weights they are)
        self.log = []  # undo log of insertions into ids / calls / param_refs / called

    # -- insert-only updates, journaled for rollback ---------------------
    def _add_id(self, nid):
        self.ids.add(nid)
        self.log.append((self.ids, nid))

    def set_call(self, key, nid):
        self.calls[key] = nid
        self.log.append((self.calls, key))

    def set_param_ref(self, key, value):
        self.param_refs[key] = value
        self.log.append((self.param_refs, key))

    def mark_called(self, key):
        if key not in self.called:
            self.called.add(key)
            self.log.append((self.called, key))

    # -- ids -------------------------------------------------------------
    def _free(self, base):
        if base not in self.ids and base not in self.reserved:
            return base
        i = 1
        while f"{base}_{i}" in self.ids or f"{base}_{i}" in self.reserved:
            i += 1
        return f"{base}_{i}"

    def claim(self, qname):
        """Id for a module call: its qualified name the first time."""
        qname = sanitize(qname)
        self.modules.add(qname)
        if qname not in self.ids:
            self._add_id(qname)
            return qname
        nid = self._free(qname)
        self._add_id(nid)
        return nid

    def fresh(self, op):
        prefix = ""
        for s in reversed(self.scope):
            if s:
                prefix = s + "."
                break
        nid = self._free(sanitize(prefix + snake(op)))
        self._add_id(nid)
        return nid

    def add(self, nid, op, args, ins, shares=None):
        node = {"id": nid, "op": op}
        if args:
            node["args"] = args
        node["in"] = list(ins)
        if shares:
            node["shares"] = shares
        self.nodes.append(node)
        return node

    # -- rollback (dry runs of the other branch of an unknown `if`) ----
    def snapshot(self):
        return (len(self.nodes), len(self.log), list(self.scope))

    def restore(self, snap):
        n, nlog, scope = snap
        del self.nodes[n:]
        while len(self.log) > nlog:
            container, key = self.log.pop()
            if isinstance(container, dict):
                container.pop(key, None)
            else:
                container.discard(key)
        self.scope = scope

    def signature(self, start):
        """Structure of the nodes added since start, independent of their ids."""
        local = {}
        sig = []
        for i, node in enumerate(self.nodes[start:]):
            local[node["id"]] = i
            ins = []
            for r in node["in"]:
                base, _, k = r.partition(":")
                ins.append(("new", local[base], k) if base in local else r)
            who = node.get("shares") or (node["id"] if node["op"] != "Parameter" and node["id"] in self.modules
                                         else None)
            sig.append((node["op"], json.dumps(node.get("args", {}), sort_keys=True, default=str), tuple(ins), who))
        return sig

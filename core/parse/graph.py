"""The graph the forward walk writes: node ids, shared weights, rollback."""

from __future__ import annotations

import json
import math
import re

from ..ops.nn_classes import PARAMETRIZATIONS

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
        self.dtype_mix_said = False  # a layer met values of a dtype other than its weights' (said once)

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

    def add(self, nid, op, args, ins, shares=None, warn=None):
        args = known_args(op, args, warn) if args else args
        node = {"id": nid, "op": op}
        # torch.nn.utils' weight_norm / spectral_norm on the layer (the parser marks it as an argument):
        # archgraph/1's node field `parametrize`
        parametrize = next((p for p in PARAMETRIZATIONS if args and args.get(p)), None)
        if args and any(p in args for p in PARAMETRIZATIONS):
            args = {k: v for k, v in args.items() if k not in PARAMETRIZATIONS}
        if args:
            node["args"] = args
        node["in"] = list(ins)
        if shares:
            node["shares"] = shares
        if parametrize:
            node["parametrize"] = parametrize
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
            sig.append((node["op"], json.dumps(node.get("args", {}), sort_keys=True, default=str), tuple(ins), who,
                        node.get("parametrize")))
        return sig


def known_args(op, args, warn=None):
    """The arguments a design can state: one whose value the parser could not follow (None where the
    op takes no None) is left out, so the op's default stands in, and the warning says so; a required
    one stays, for the verifier to name."""
    from ..ops import OP_TABLE

    spec = OP_TABLE.get(op)
    if spec is None:
        return args
    out = dict(args)
    for name, v in args.items():
        a = spec._by_name.get(name)
        if a is None or a.required or not _holds_unknown(v) or a.problem(v) is None:
            continue
        del out[name]
        if warn is not None:
            warn(f"{op}'s {name} is not known where the parser reads it; torch's default ({a.default!r}) stands in")
    return out


def _holds_unknown(v):
    """None, or a float archgraph/1's JSON cannot hold (inf, nan: a mask's fill value)."""
    if isinstance(v, (list, tuple)):
        return any(_holds_unknown(x) for x in v)
    return v is None or (type(v) is float and not math.isfinite(v))

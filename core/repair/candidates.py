"""Candidate edits for one block finding, each with its cost (the search tries the cheapest first).

Nothing here knows a rule by its id or keeps a list of ops. The candidates come from what the
finding names (its nodes), the op table's argument schema of those nodes (each argument's kind says
what values it takes: a dimension index, a size, a flag, one of some strings, a list), the sizes the
verifier inferred around the node, and the words of the rule's fix, which rank the arguments it names
first ("Set in_features to ..." tries in_features before out_features). The search re-verifies every
candidate; a candidate that does not help is simply not taken.

Costs (a curator's sense of how big an edit is):

- 1: one argument of the node (or of the node that feeds it), one operand rewired, the outputs, an op
  name corrected, a weight tie dropped, a node nobody reads removed;
- 2: one node inserted before an operand (Flatten, Unsqueeze, Squeeze, Transpose, Permute, Expand, a
  projection, an adaptive pooling), an input's dtype, a declared size of `train`, two arguments at once;
- 3: two nodes inserted, the design run in eval mode;
- 4: the node removed, its readers reading its first operand.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field

from .. import checks  # noqa: F401  (every rule is declared once its module is imported)
from .. import dims as D
from ..graph import parse_ref
from ..ops import OP_TABLE
from ..rule import RULES

MAX_PER_ARG = 14
MAX_TARGETS = 4
BIG = 1 << 20  # sizes past this are not drawn as argument values (a layer that large is no repair)


@dataclass
class Candidate:
    cost: int
    edits: list
    why: str = ""  # what the candidate tries, for the log

    @property
    def nudge(self) -> float:
        """Below one cost step: among repairs of one cost, the value nearest the one written wins
        (a head count of 5 becomes 4, not 256)."""
        out = 0.0
        for e in self.edits:
            a, b = e.get("from"), e.get("to")
            if type(a) is int and type(b) is int:
                out += 0.1 * min(abs(b - a) / max(abs(a), 1), 1.0)
            elif e["edit"] == "set-arg":
                out += 0.05
        return out


@dataclass
class Around:
    """What the candidates of one state read: the design dict, its verification, its wiring."""

    d: dict
    report: object
    nodes: dict = field(default_factory=dict)  # id -> node dict
    users: dict = field(default_factory=dict)  # id -> [consumer ids]
    ids: set = field(default_factory=set)

    @classmethod
    def of(cls, d: dict, report) -> Around:
        nodes = {n["id"]: n for n in d["nodes"]}
        users: dict = {}
        for n in d["nodes"]:
            for r in n.get("in", []):
                users.setdefault(parse_ref(r)[0], []).append(n["id"])
        ids = set(nodes) | {i["id"] for i in d["inputs"]}
        return cls(d, report, nodes, users, ids)

    def result(self, ref: str):
        rid, idx = parse_ref(ref)
        res = self.report.types.get(rid)
        return res[idx] if res and idx < len(res) else None

    def shape(self, ref: str):
        t = self.result(ref)
        return None if t is None else t.shape

    def fresh(self, base: str) -> str:
        cand, i = base, 1
        while cand in self.ids:
            cand = f"{base}_{i}"
            i += 1
        return cand

    def is_input(self, ref: str) -> bool:
        return parse_ref(ref)[0] not in self.nodes

    def values_before(self, nid: str) -> list:
        """Inputs and nodes defined before `nid` in the file, nearest first."""
        out = []
        for n in self.d["nodes"]:
            if n["id"] == nid:
                break
            out.append(n["id"])
        return out[::-1] + [i["id"] for i in self.d["inputs"]]


# ---- values an argument may take ------------------------------------------------------------------

def _form(kind) -> tuple:
    return kind.form if kind is not None else ("any",)


def _ints(form) -> tuple | None:
    """(lo, hi) when the kind is an int (or an int in a oneof / optional), else None."""
    tag = form[0]
    if tag == "int":
        return form[1], form[2]
    if tag in ("optional",):
        return _ints(_form(form[1]))
    if tag == "oneof":
        for k in form[1]:
            got = _ints(_form(k))
            if got is not None:
                return got
    return None


def _list_form(form) -> tuple | None:
    tag = form[0]
    if tag == "list":
        return form
    if tag in ("optional",):
        return _list_form(_form(form[1]))
    if tag == "oneof":
        for k in form[1]:
            got = _list_form(_form(k))
            if got is not None:
                return got
    return None


def _consts(shape) -> list:
    return [s for s in shape if D.is_const(s)] if shape else []


def _sizes_around(a: Around, node: dict) -> list:
    """Sizes a wrong argument of `node` is likely to want, most likely first: its operands' last, channel
    and other sizes, their flattened sizes, its other arguments, the design's declared sizes."""
    out: list = []
    for ref in node.get("in", []):
        s = a.shape(ref)
        if not s:
            continue
        if D.is_const(s[-1]):
            out.append(s[-1])
        if len(s) > 1 and D.is_const(s[1]):
            out.append(s[1])
        out.extend(_consts(s[1:]))
        for start in (1, 2):
            if len(s) > start + 1 and all(D.is_const(x) for x in s[start:]):
                p = 1
                for x in s[start:]:
                    p *= x
                out.append(p)
    for v in (node.get("args") or {}).values():
        if type(v) is int:
            out.append(v)
    train = a.d.get("train") or {}
    for k in ("vocab_size", "seq_len", "batch_size"):
        if type(train.get(k)) is int:
            out.append(train[k])
    for spec in a.d["inputs"]:
        if type(spec.get("vocab_size")) is int:
            out.append(spec["vocab_size"])
    return [x for x in dict.fromkeys(out) if 0 < x <= BIG]


def _divisors_near(n: int, c: int, k: int = 3) -> list:
    if n <= 0 or n > BIG:
        return []
    divs = [x for x in range(1, int(n ** 0.5) + 1) if n % x == 0]
    divs = sorted(set(divs + [n // x for x in divs]))
    return sorted(divs, key=lambda x: (abs(x - c), x))[:k]


def _int_values(a: Around, node: dict, arg, cur, lo, hi) -> list:
    rank = None
    ins = node.get("in", [])
    if ins:
        s = a.shape(ins[0])
        rank = len(s) if s is not None else None
    vals: list = []
    if lo is None or lo < 0:
        # an int that may be negative is a dimension or a position: the operand's dims, the last first
        if rank:
            for k in range(1, rank + 1):
                vals += [-k, rank - k]
            vals += [rank]  # a new dim (Unsqueeze, Stack) may be one past the last
        vals += [-1, 0, 1]
    sizes = _sizes_around(a, node)
    vals += sizes
    if type(cur) is int and cur > 0:
        for s in sizes:
            vals += _divisors_near(s, cur)
        vals += [cur - 1, cur + 1, cur // 2, cur * 2]
    if not arg.required and type(arg.default) is int:
        vals.append(arg.default)
    vals += [1, 0]
    return vals


def _list_values(a: Around, node: dict, arg, cur, lf) -> list:
    out: list = []
    ins = node.get("in", [])
    s = a.shape(ins[0]) if ins else None
    rank = len(s) if s is not None else None
    if isinstance(cur, list) and all(type(x) in (int, str) for x in cur):
        n = len(cur)
        if len(set(cur)) == n and rank and all(type(x) is int for x in cur):
            # a permutation (Permute's dims): the identity, the dims taken modulo the rank, or the rank's own
            if n <= rank:
                out.append([x % rank for x in cur])
            out.append(list(range(rank)))
        for i in range(n):
            out.append(cur[:i] + [-1] + cur[i + 1:])
        if s:
            dim = (node.get("args") or {}).get("dim", 0)
            if type(dim) is int and -len(s) <= dim < len(s) and D.is_const(s[dim]) and n and \
                    all(type(x) is int and x > 0 for x in cur):
                rest = s[dim] - sum(cur[:-1])  # sections that add up to the size (Split)
                if rest > 0:
                    out.append(cur[:-1] + [rest])
            for i in range(min(n, len(s))):
                if D.is_const(s[i]):
                    out.append(cur[:i] + [s[i]] + cur[i + 1:])
    if s:
        out.append(list(s))
        out.append([-1] + list(s[1:]))
        out.append([s[0], -1])
    return out


def _siblings(a: Around, node: dict, name: str) -> list:
    """The values other nodes of the same op give this argument, the nearest in the file first."""
    at = next((i for i, n in enumerate(a.d["nodes"]) if n["id"] == node["id"]), 0)
    near = sorted(((abs(i - at), n) for i, n in enumerate(a.d["nodes"])
                   if n["op"] == node["op"] and n["id"] != node["id"] and name in (n.get("args") or {})),
                  key=lambda t: t[0])
    return [n["args"][name] for _, n in near[:8]]


def _arg_values(a: Around, node: dict, arg) -> list:
    """Values to try for `arg` of `node`, most likely first, each one the kind accepts."""
    args = node.get("args") or {}
    had = arg.name in args
    cur = args.get(arg.name, None if arg.required else arg.default)
    form = _form(arg.kind)
    siblings = _siblings(a, node, arg.name)
    vals: list = [] if had else list(siblings)
    tag = form[0]
    if tag == "bool":
        vals = [not bool(cur)] if isinstance(cur, (bool, int)) else [False, True]
    elif tag == "enum":
        vals = list(form[1])
    else:
        ints = _ints(form)
        lf = _list_form(form)
        if lf is not None:
            vals += _list_values(a, node, arg, cur, lf)
        if ints is not None:
            vals += _int_values(a, node, arg, cur, *ints)
            if isinstance(cur, list) and cur and all(type(x) is int for x in cur):
                vals += [[v] * len(cur) for v in _int_values(a, node, arg, cur[0], *ints)[:6]]
        if tag == "optional":
            vals.append(None)
        if tag == "float" or (tag == "optional" and _form(form[1])[0] == "float"):
            if not arg.required and arg.default is not None:
                vals.append(arg.default)
            vals += [0.0, 0.5, 1.0]
    if had:
        vals += siblings
    if not arg.required:
        vals.append(arg.default)
    out, seen = [], set()
    for v in vals:
        key = repr(v)
        if key in seen or (had and v == cur and type(v) is type(cur)) or arg.problem(v) is not None:
            continue
        if type(v) is int and abs(v) > BIG:
            continue
        seen.add(key)
        out.append(v)
    return out[:MAX_PER_ARG]


def _set_arg(node: dict, name: str, value) -> dict:
    args = node.get("args") or {}
    e = {"edit": "set-arg", "node": node["id"], "arg": name}
    if name in args:
        e["from"] = args[name]
    e["to"] = value
    return e


# ---- what the rule's fix words name ----------------------------------------------------------------

_WORD = re.compile(r"[A-Za-z_]+")


def fix_words(rule: str) -> set:
    spec = RULES.get(rule)
    text = f"{spec.fix} {spec.title}" if spec is not None else ""
    return {w.lower() for w in _WORD.findall(text)}


def _mentioned(arg_name: str, words: set) -> bool:
    if arg_name.lower() in words:
        return True
    parts = [p for p in arg_name.lower().split("_") if len(p) > 2 and p not in ("num", "dim")]
    return any(p in words or p + "s" in words or p.rstrip("s") in words for p in parts)


# ---- the candidates ------------------------------------------------------------------------------

def candidates(a: Around, finding) -> list[Candidate]:
    """Every candidate edit for `finding` in `a`, in the order tried within a cost: the rule's fix first."""
    words = fix_words(finding.rule)
    out: list[Candidate] = []
    out += _guarded(_structure, a, finding)
    for nid in finding.nodes:
        node = a.nodes.get(nid)
        if node is None:
            continue
        out += _guarded(_own_args, a, node, words)
        out += _guarded(_results, a, node)
        out += _guarded(_producer_args, a, node)
        out += _guarded(_operand_count, a, node)
        out += _guarded(_inputs_and_sizes, a, node)
        out += _guarded(_adapters, a, node)
        out += _guarded(_removal, a, node)
    out += _guarded(_bad_outputs, a, finding)
    return out


def _guarded(fn, *args) -> list:
    # a design is hostile input: values of any type sit in its arguments. A proposer that cannot read
    # them proposes nothing; the others still do
    try:
        return fn(*args)
    except (TypeError, ValueError, KeyError, IndexError, AttributeError, ZeroDivisionError, OverflowError):
        return []


def _own_args(a: Around, node: dict, words: set) -> list:
    spec = OP_TABLE.get(node["op"])
    out = []
    if spec is None:
        return _unknown_op(a, node)
    args = node.get("args") or {}
    for k in args:
        if k not in spec.arg_names:
            # a misspelt argument (in_channel, kernel, num_head): the value kept under the name the op takes
            for name in difflib.get_close_matches(k, sorted(spec.arg_names - set(args)), n=2, cutoff=0.6):
                out.append(Candidate(1, [{"edit": "set-arg", "node": node["id"], "arg": k, "from": args[k]},
                                         _set_arg(node, name, args[k])], f"{k} read as {name}"))
            out.append(Candidate(1, [{"edit": "set-arg", "node": node["id"], "arg": k, "from": args[k]}],
                                 f"drop {k}, which {node['op']} does not take"))
    order = sorted(spec.args, key=lambda g: not _mentioned(g.name, words))
    per_arg = {}
    for g in order:
        if isinstance(args.get(g.name), dict) or _form(g.kind)[0] == "nested":
            out += _nested_args(a, node, g, words)
            continue
        vals = _arg_values(a, node, g)
        per_arg[g.name] = vals
        for v in vals:
            out.append(Candidate(1, [_set_arg(node, g.name, v)], f"{g.name} = {v!r}"))
    # two sizes that must agree with each other and with the input (a depthwise convolution's groups,
    # a kernel and its padding): the pair, each from the other's values
    ints = [g for g in order if type(args.get(g.name)) is int][:4]
    for i, g in enumerate(ints):
        for h in ints[i + 1:]:
            for v in per_arg.get(g.name, [])[:4]:
                for w in per_arg.get(h.name, [])[:4]:
                    if type(v) is int and type(w) is int:
                        out.append(Candidate(2, [_set_arg(node, g.name, v), _set_arg(node, h.name, w)],
                                             f"{g.name} = {v}, {h.name} = {w}"))
    return out


def _nested_args(a: Around, node: dict, g, words: set) -> list:
    """An argument that holds another layer's arguments (TransformerEncoder's encoder_layer): one of
    those, changed as it would be on that layer (with this node's operands)."""
    form = _form(g.kind)
    inner = (node.get("args") or {}).get(g.name)
    if form[0] != "nested" or not isinstance(inner, dict):
        return []
    probe = {"id": node["id"], "op": node["op"], "args": inner, "in": node.get("in", [])}
    out = []
    takes = {h.name for h in form[1]}
    for k in inner:
        if k not in takes:  # a name that layer does not take (or a factory kwarg archgraph/1 leaves out): dropped
            e = {"edit": "set-arg", "node": node["id"], "arg": g.name, "from": inner,
                 "to": {x: y for x, y in inner.items() if x != k}}
            out.append(Candidate(1, [e], f"drop {g.name}.{k}"))
    for h in sorted(form[1], key=lambda h: not _mentioned(h.name, words)):
        if _form(h.kind)[0] == "nested":
            continue
        for v in _arg_values(a, probe, h):
            e = {"edit": "set-arg", "node": node["id"], "arg": g.name, "from": inner, "to": {**inner, h.name: v}}
            out.append(Candidate(1, [e], f"{g.name}.{h.name} = {v!r}"))
    return out


def _unknown_op(a: Around, node: dict) -> list:
    """An op the table does not know: the known ops whose name is close, then those whose arguments
    are the ones the node gives (a `MambaBlock(input_size, hidden_size, num_layers)` reads as an RNN)."""
    names = {n.lower(): n for n in OP_TABLE}
    close = [names[c] for c in difflib.get_close_matches(node["op"].lower(), list(names), n=3, cutoff=0.6)]
    given = set(node.get("args") or {})
    n_in = len(node.get("in", []))
    by_args = []
    if given:
        for op, spec in OP_TABLE.items():
            lo, hi = spec.arity
            if n_in < lo or (hi is not None and n_in > hi):
                continue
            if any(g.required and g.name not in given for g in spec.args):
                continue
            overlap = len(given & spec.arg_names) / len(given | {g.name for g in spec.args if g.required})
            if overlap >= 0.5:
                by_args.append((-overlap, op))
    out = []
    for op in list(dict.fromkeys(close + [op for _, op in sorted(by_args)[:3]])):
        keep = {k: v for k, v in (node.get("args") or {}).items() if k in OP_TABLE[op].arg_names}
        out.append(Candidate(1, [{"edit": "set-op", "node": node["id"], "from": node["op"], "to": op,
                                  "args": keep}], f"op {op}"))
    return out + _removal(a, node)


def _results(a: Around, node: dict) -> list:
    """An operand reading a result its producer does not have (`lstm:3`): another of its results."""
    out = []
    ins = node.get("in", [])
    for i, ref in enumerate(ins):
        rid, idx = parse_ref(ref)
        if ":" not in ref or rid not in a.report.types:
            continue
        n = len(a.report.types[rid])
        for k in range(n):
            if k != idx:
                new = rid if k == 0 else f"{rid}:{k}"
                out.append(Candidate(1, [{"edit": "set-in", "node": node["id"], "from": ins,
                                          "to": ins[:i] + [new] + ins[i + 1:]}], f"operand {i} reads {new}"))
    return out


def _producer_args(a: Around, node: dict) -> list:
    """The layer before it made the wrong size: its size arguments, set to what this node expects."""
    out = []
    shared = {n.get("shares") for n in a.d["nodes"]} | {n["id"] for n in a.d["nodes"] if n.get("shares")}
    wants = [v for v in (node.get("args") or {}).values() if type(v) is int and 0 < v <= BIG]
    others = []
    for ref in node.get("in", []):
        s = a.shape(ref)
        others += _consts(s[1:]) if s else []
    targets = list(dict.fromkeys(wants + others))
    for ref in node.get("in", []):
        pid = parse_ref(ref)[0]
        p = a.nodes.get(pid)
        if p is None or pid in shared or OP_TABLE.get(p["op"]) is None:
            continue
        spec = OP_TABLE[p["op"]]
        for g in spec.args:
            cur = (p.get("args") or {}).get(g.name)
            form = _form(g.kind)
            if type(cur) is not int or form[0] != "int" or form[1] is None or form[1] < 0:
                continue
            for v in targets[:8]:
                if v != cur and g.problem(v) is None:
                    out.append(Candidate(1, [_set_arg(p, g.name, v)], f"{pid}.{g.name} = {v}"))
    return out


def _operand_count(a: Around, node: dict) -> list:
    spec = OP_TABLE.get(node["op"])
    if spec is None:
        return []
    lo, hi = spec.arity
    ins = node.get("in", [])
    out = []
    if hi is not None and len(ins) > hi:
        out.append(Candidate(1, [{"edit": "set-in", "node": node["id"], "from": ins, "to": ins[:hi]}],
                             f"keep the first {hi} operands"))
    for i in reversed(range(max(lo, 1), min(len(ins), hi) if hi is not None else 0)):
        # an optional operand (a mask, an initial state) that does not fit: the op without it
        out.append(Candidate(1, [{"edit": "set-in", "node": node["id"], "from": ins, "to": ins[:i]}],
                             f"drop operands {i}.."))
    if len(ins) < lo and ins:
        out.append(Candidate(1, [{"edit": "set-in", "node": node["id"], "from": ins,
                                  "to": ins + [ins[0]] * (lo - len(ins))}], "repeat the first operand"))
    for i, ref in enumerate(ins):
        if parse_ref(ref)[0] not in a.ids:
            continue
        # an operand that makes the node's shapes disagree: another value defined before it
        if len(ins) > 1:
            for alt in a.values_before(node["id"])[:6]:
                if alt != ref and alt not in ins:
                    out.append(Candidate(1, [{"edit": "set-in", "node": node["id"], "from": ins,
                                              "to": ins[:i] + [alt] + ins[i + 1:]}], f"operand {i} reads {alt}"))
    return out


def _insert(a: Around, node: dict, i: int, op: str, args: dict, tag: str, cost: int = 2) -> Candidate | None:
    if op not in OP_TABLE:
        return None
    ref = node["in"][i]
    new_id = a.fresh(f"{parse_ref(ref)[0]}.{tag}")
    new = {"id": new_id, "op": op, "args": args, "in": [ref]}
    return Candidate(cost, [{"edit": "insert", "node": new, "before": node["id"], "operand": i}], f"{op} before")


def _chain(a: Around, node: dict, i: int, steps: list, tag: str, cost: int) -> Candidate | None:
    """Several nodes inserted in a row before operand i."""
    ref = node["in"][i]
    edits = []
    taken = set()
    for k, (op, args) in enumerate(steps):
        if op not in OP_TABLE:
            return None
        base = f"{parse_ref(ref)[0]}.{tag}{k}"
        new_id = a.fresh(base)
        while new_id in taken:
            new_id += "_"
        taken.add(new_id)
        edits.append({"edit": "insert", "node": {"id": new_id, "op": op, "args": args, "in": [ref]},
                      "before": node["id"], "operand": i})
        ref = new_id
    return Candidate(cost, edits, "+".join(op for op, _ in steps))


def _adapters(a: Around, node: dict) -> list:
    """One node between an operand and `node`: a layout change, a projection, a resize."""
    out: list = []
    ins = node.get("in", [])
    wants = [v for v in (node.get("args") or {}).values() if type(v) is int and 0 < v <= BIG]
    for i, ref in enumerate(ins):
        t = a.result(ref)
        if t is None or t.shape is None:
            continue
        s = t.shape
        r = len(s)
        others = [a.shape(x) for j, x in enumerate(ins) if j != i]
        others = [o for o in others if o is not None]
        cands = []
        if r >= 3:
            cands.append(_insert(a, node, i, "Flatten", {"start_dim": 1}, "fix_flatten"))
        cands.append(_insert(a, node, i, "Unsqueeze", {"dim": 0}, "fix_unsqueeze"))
        if r >= 1:
            cands.append(_insert(a, node, i, "Unsqueeze", {"dim": 1}, "fix_unsqueeze"))
            cands.append(_insert(a, node, i, "Unsqueeze", {"dim": -1}, "fix_unsqueeze"))
        for j, x in enumerate(s):
            if x == 1:
                cands.append(_insert(a, node, i, "Squeeze", {"dim": j}, "fix_squeeze"))
        if r >= 2:
            cands.append(_insert(a, node, i, "Transpose", {"dim0": -2, "dim1": -1}, "fix_transpose"))
        if r >= 3:
            cands.append(_insert(a, node, i, "Transpose", {"dim0": 1, "dim1": -1}, "fix_transpose"))
            cands.append(_insert(a, node, i, "Transpose", {"dim0": 0, "dim1": 1}, "fix_transpose"))
        if r == 4:
            cands.append(_insert(a, node, i, "Permute", {"dims": [0, 3, 1, 2]}, "fix_permute"))
            cands.append(_insert(a, node, i, "Permute", {"dims": [0, 2, 3, 1]}, "fix_permute"))
        for o in others:
            if len(o) == r and all(D.is_const(x) or D.is_sym(x) for x in o):
                cands.append(_insert(a, node, i, "Expand", {"shape": [x if x != 1 else -1 for x in o]},
                                     "fix_expand"))
                spatial = list(o[2:])
                if r >= 3 and spatial and all(D.is_const(x) and x > 0 for x in spatial):
                    cands.append(_insert(a, node, i, f"AdaptiveAvgPool{r - 2}d",
                                         {"output_size": spatial if r > 3 else spatial[0]}, "fix_pool"))
        if t.is_float:
            last = [o[-1] for o in others if o and D.is_const(o[-1])]
            chan = [o[1] for o in others if len(o) > 1 and D.is_const(o[1])]
            if r >= 2 and D.is_const(s[-1]):
                for v in list(dict.fromkeys(last + wants))[:MAX_TARGETS]:
                    if v != s[-1]:
                        cands.append(_insert(a, node, i, "Linear", {"in_features": s[-1], "out_features": v},
                                             "fix_proj"))
            if 3 <= r <= 5 and D.is_const(s[1]):
                for v in list(dict.fromkeys(chan + wants))[:MAX_TARGETS]:
                    if v != s[1]:
                        cands.append(_insert(a, node, i, f"Conv{r - 2}d",
                                             {"in_channels": s[1], "out_channels": v, "kernel_size": 1},
                                             "fix_proj"))
            if r >= 3:
                cands.append(_chain(a, node, i, [(f"AdaptiveAvgPool{r - 2}d", {"output_size": 1}),
                                                 ("Flatten", {"start_dim": 1})], "fix_head", 3))
        else:
            # integers into a float layer: a multiplication by 1.0 gives torch's default float
            cands.append(_insert(a, node, i, "Scale", {"value": 1.0}, "fix_float"))
        out += [c for c in cands if c is not None]
    return out


def _input_dtypes(a: Around, rid: str) -> list:
    out = []
    for spec in a.d["inputs"]:
        if spec["id"] != rid:
            continue
        cur = spec.get("dtype", "float32")
        for dt in ("float32", "int64", "bool"):
            if dt != cur:
                e = {"edit": "set-input", "input": rid, "field": "dtype", "from": cur, "to": dt}
                out.append(Candidate(2, [e], f"input {rid} as {dt}"))
    return out


def _inputs_and_sizes(a: Around, node: dict) -> list:
    out: list = []
    ins = node.get("in", [])
    for ref in ins:
        rid = parse_ref(ref)[0]
        if rid in a.nodes:
            continue
        out += _input_dtypes(a, rid)
    train = a.d.get("train") or {}
    if train.get("batch_size") == 1:
        out.append(Candidate(2, [{"edit": "set-train", "field": "batch_size", "from": 1, "to": 2}], "batch 2"))
    if type(train.get("seq_len")) is int:
        for v in _sizes_around(a, node)[:4]:
            if v != train["seq_len"]:
                out.append(Candidate(2, [{"edit": "set-train", "field": "seq_len", "from": train["seq_len"],
                                          "to": v}], f"seq_len {v}"))
    if train.get("mode", "train") != "eval":
        out.append(Candidate(3, [{"edit": "set-train", "field": "mode", "from": train.get("mode"), "to": "eval"}],
                             "eval mode"))
    return out


def _removal(a: Around, node: dict, producers: bool = True) -> list:
    """The node removed (its readers read its first operand); also each node feeding it, when one of
    them is what broke it (a stray Flatten before a convolution)."""
    out = []
    if producers:
        for ref in node.get("in", []):
            p = a.nodes.get(parse_ref(ref)[0])
            if p is not None:
                out += [c for c in _removal(a, p, False) if c.cost > 1]
    return _removed(a, node) + out


def _removed(a: Around, node: dict) -> list:
    nid = node["id"]
    read = a.users.get(nid) or any(parse_ref(o)[0] == nid for o in a.d["outputs"])
    if any(n.get("shares") == nid for n in a.d["nodes"]):
        return []
    if not read:
        return [Candidate(1, [{"edit": "remove", "node": nid}], "remove a node nobody reads")]
    ins = node.get("in", [])
    if not ins or parse_ref(ins[0])[0] not in a.ids:
        return []
    return [Candidate(4, [{"edit": "remove", "node": nid, "to": ins[0]}], "remove the node")]


def _structure(a: Around, finding) -> list:
    """Faults of the graph itself: a reference to nothing, a loop, no outputs, a tie to nothing."""
    out: list = []
    for nid in finding.nodes:
        node = a.nodes.get(nid)
        if node is None:
            continue
        ins = node.get("in", [])
        if node.get("shares") is not None:
            out.append(Candidate(1, [{"edit": "drop-shares", "node": nid, "from": node["shares"]}], "drop shares"))
        before = a.values_before(nid)
        for i, ref in enumerate(ins):
            rid = parse_ref(ref)[0]
            dangling = rid not in a.ids
            cyclic = rid in finding.nodes and rid not in before
            if not (dangling or cyclic):
                continue
            near = difflib.get_close_matches(rid, before, n=3, cutoff=0.5) if dangling else []
            for alt in list(dict.fromkeys(near + before[:4])):
                if alt in finding.nodes and cyclic:
                    continue
                out.append(Candidate(1, [{"edit": "set-in", "node": nid, "from": ins,
                                          "to": ins[:i] + [alt] + ins[i + 1:]}], f"operand {i} reads {alt}"))
            spec = OP_TABLE.get(node["op"])
            if spec is not None and len(ins) - 1 >= spec.arity[0]:
                out.append(Candidate(1, [{"edit": "set-in", "node": nid, "from": ins,
                                          "to": ins[:i] + ins[i + 1:]}], f"drop operand {i}"))
    return out


def _bad_outputs(a: Around, finding) -> list:
    outs = a.d["outputs"]
    bad = [o for o in outs if parse_ref(o)[0] not in a.ids or
           (":" in o and parse_ref(o)[0] in a.report.types and
            parse_ref(o)[1] >= len(a.report.types[parse_ref(o)[0]]))]
    if outs and not bad and finding.nodes:
        return []
    read = {parse_ref(r)[0] for n in a.d["nodes"] for r in n.get("in", [])}
    sinks = [n["id"] for n in a.d["nodes"] if n["id"] not in read][::-1]
    out = []
    for o in bad:
        rid = parse_ref(o)[0]
        near = difflib.get_close_matches(rid, sorted(a.ids), n=2, cutoff=0.5)
        for alt in list(dict.fromkeys(([rid] if rid in a.ids else []) + near + sinks[:2])):
            to = outs[:]
            to[outs.index(o)] = alt
            out.append(Candidate(1, [{"edit": "set-outputs", "from": outs, "to": to}], f"output {alt}"))
        out.append(Candidate(1, [{"edit": "set-outputs", "from": outs, "to": [x for x in outs if x != o]}],
                             "drop the output"))
    if not outs and sinks:
        out.append(Candidate(1, [{"edit": "set-outputs", "from": outs, "to": sinks[:1]}], "output the last node"))
        if len(sinks) > 1:
            out.append(Candidate(2, [{"edit": "set-outputs", "from": outs, "to": sinks[::-1]}], "output every sink"))
    return out


__all__ = ["Around", "Candidate", "candidates", "fix_words"]

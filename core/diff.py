"""The structural difference between two designs: what was added, removed, changed, rewired.

`diff_designs(a, b) -> DesignDiff` compares design `a` (the base: a parent,
a reference architecture, any design) with design `b` (the one under review).

Matching, in three passes (exact graph edit distance is too slow beyond
about ten nodes):

1. **by id** — parsed designs use qualified module names (`layer1.0.conv1`),
   so a node that kept its id is the same node;
2. **by signature** — the nodes left over on each side, in topological
   order, are aligned by a longest common subsequence (Myers' O(ND)
   algorithm) over their signatures: op, arguments with torch's defaults
   filled in, and operand count; equal signatures are the same node renamed;
3. **by op** — what is still left is aligned again by op alone: those pairs
   are the same node with different arguments.

Then, for the matched pairs: a **changed** node differs in op, arguments
(argument by argument, defaults filled so `padding=0` equals no padding) or
weight sharing; a **rewired** edge is an operand of a matched node that now
comes from a different matched node. An operand that now comes from an added
node, or came from a removed one, is part of that insertion or removal, not
a rewiring, so one inserted node is reported once.

Shapes that change downstream because of those edits are **consequences**,
listed apart (`consequences`): a matched, otherwise unchanged node whose
result types differ. `rows` aligns both designs side by side (inputs first,
then nodes in `b`'s topological order with removed nodes placed where they
stood in `a`); `folded(context)` folds long unchanged stretches.

Pure Python over `core.graph.Design`; no torch.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from .graph import Design, Node, parse_ref

_MISSING = object()


# ---- results -----------------------------------------------------------------

@dataclass(frozen=True)
class ArgChange:
    name: str
    old: Any  # None with old_set False: the argument is absent (and has no default)
    new: Any
    old_set: bool = True
    new_set: bool = True

    def to_dict(self) -> dict:
        return {"arg": self.name, "old": self.old if self.old_set else None,
                "new": self.new if self.new_set else None, "oldSet": self.old_set, "newSet": self.new_set}

    def describe(self) -> str:
        old = _fmt(self.old) if self.old_set else "—"
        new = _fmt(self.new) if self.new_set else "—"
        return f"{self.name}: {old} → {new}"


@dataclass
class NodeChange:
    a_id: str
    b_id: str
    op_a: str
    op_b: str
    args: list[ArgChange] = field(default_factory=list)
    shares: tuple | None = None  # (old, new) when weight sharing changed
    how: str = "id"  # how the pair was matched: id | signature | op

    @property
    def renamed(self) -> bool:
        return self.a_id != self.b_id

    def describe(self) -> str:
        parts = []
        if self.op_a != self.op_b:
            parts.append(f"op: {self.op_a} → {self.op_b}")
        parts.extend(c.describe() for c in self.args)
        if self.shares is not None:
            parts.append(f"shares: {self.shares[0] or '—'} → {self.shares[1] or '—'}")
        return "; ".join(parts)

    def to_dict(self) -> dict:
        return {"a": self.a_id, "b": self.b_id, "opA": self.op_a, "opB": self.op_b,
                "args": [c.to_dict() for c in self.args],
                "shares": list(self.shares) if self.shares else None, "matchedBy": self.how}


@dataclass(frozen=True)
class Rewire:
    node: str  # b's id of the node whose operand changed
    a_node: str
    position: int  # operand index
    old: str | None  # a's operand ref (None: no operand at this position before)
    old_in_b: str | None  # the same source, named as in b (None when it has no counterpart)
    new: str | None  # b's operand ref (None: the operand was dropped)

    def describe(self) -> str:
        old = self.old if self.old is not None else "—"
        if self.old is not None and self.old_in_b and self.old_in_b != self.old:
            old += f" (= {self.old_in_b})"
        return f"{self.node} operand {self.position}: {old} → {self.new if self.new is not None else '—'}"

    def to_dict(self) -> dict:
        return {"node": self.node, "a": self.a_node, "position": self.position, "old": self.old,
                "oldInB": self.old_in_b, "new": self.new}


@dataclass(frozen=True)
class Consequence:
    node: str  # b's id
    a_node: str
    result: int
    old: str  # shape text, e.g. "[B, 64, 56, 56] float32"
    new: str

    def describe(self) -> str:
        suffix = f":{self.result}" if self.result else ""
        return f"{self.node}{suffix}: {self.old} → {self.new}"

    def to_dict(self) -> dict:
        return {"node": self.node, "a": self.a_node, "result": self.result, "old": self.old, "new": self.new}


@dataclass(frozen=True)
class InputChange:
    a_id: str | None
    b_id: str | None
    old: str | None  # "shape dtype"
    new: str | None

    def describe(self) -> str:
        if self.a_id is None:
            return f"input {self.b_id} added: {self.new}"
        if self.b_id is None:
            return f"input {self.a_id} removed (was {self.old})"
        name = self.b_id if self.a_id == self.b_id else f"{self.a_id} → {self.b_id}"
        return f"input {name}: {self.old} → {self.new}"

    def to_dict(self) -> dict:
        return {"a": self.a_id, "b": self.b_id, "old": self.old, "new": self.new}


@dataclass(frozen=True)
class Row:
    """One line of the side-by-side view."""

    kind: str  # same | changed | added | removed | input
    a: str | None
    b: str | None
    rewired: bool = False  # an operand of this (matched) node was rewired
    consequence: bool = False  # its shape changed downstream of an edit


@dataclass(frozen=True)
class Fold:
    """A folded stretch of unchanged rows: rows[start:end]."""

    start: int
    end: int

    @property
    def count(self) -> int:
        return self.end - self.start


@dataclass
class DesignDiff:
    a_name: str
    b_name: str
    matched: dict[str, str]  # a node id -> b node id (inputs included)
    added: list[str]  # b node ids, in b's topological order
    removed: list[str]  # a node ids, in a's topological order
    changed: list[NodeChange]
    rewired: list[Rewire]
    inputs: list[InputChange]
    outputs: tuple | None  # (a's outputs in b's names, b's outputs) when they differ
    consequences: list[Consequence]
    rows: list[Row]
    a_nodes: dict[str, Node] = field(default_factory=dict, repr=False)
    b_nodes: dict[str, Node] = field(default_factory=dict, repr=False)
    shapes_a: dict = field(default_factory=dict, repr=False)  # id -> [shape text per result]
    shapes_b: dict = field(default_factory=dict, repr=False)

    @property
    def identical(self) -> bool:
        return not (self.added or self.removed or self.changed or self.rewired or self.inputs or self.outputs)

    def summary(self) -> str:
        if self.identical:
            return "no structural difference" + (
                f"; {len(self.consequences)} shape changes" if self.consequences else "")
        parts = []
        for n, word in ((len(self.added), "added"), (len(self.removed), "removed"),
                        (len(self.changed), "changed"), (len(self.rewired), "rewired")):
            if n:
                parts.append(f"{n} {word}")
        if self.inputs:
            parts.append(f"{len(self.inputs)} input changes")
        if self.outputs:
            parts.append("outputs changed")
        text = ", ".join(parts)
        if self.consequences:
            text += f"; consequences: {len(self.consequences)} shapes change downstream"
        return text

    def folded(self, context: int = 2) -> list[Row | Fold]:
        """`rows` with every run of unchanged rows longer than 2*context+1 folded in the middle."""
        out: list[Row | Fold] = []
        i = 0
        rows = self.rows
        n = len(rows)
        while i < n:
            if rows[i].kind != "same" or rows[i].rewired or rows[i].consequence:
                out.append(rows[i])
                i += 1
                continue
            j = i
            while j < n and rows[j].kind == "same" and not rows[j].rewired and not rows[j].consequence:
                j += 1
            head = context if i > 0 else 0
            tail = context if j < n else 0
            if j - i > head + tail + 1:
                out.extend(rows[i:i + head])
                out.append(Fold(i + head, j - tail))
                out.extend(rows[j - tail:j])
            else:
                out.extend(rows[i:j])
            i = j
        return out

    def to_dict(self) -> dict:
        return {
            "a": self.a_name, "b": self.b_name, "summary": self.summary(),
            "added": [{"id": i, "op": self.b_nodes[i].op, "in": list(self.b_nodes[i].inputs)} for i in self.added],
            "removed": [{"id": i, "op": self.a_nodes[i].op, "in": list(self.a_nodes[i].inputs)}
                        for i in self.removed],
            "changed": [c.to_dict() for c in self.changed],
            "rewired": [r.to_dict() for r in self.rewired],
            "inputs": [c.to_dict() for c in self.inputs],
            "outputs": {"old": list(self.outputs[0]), "new": list(self.outputs[1])} if self.outputs else None,
            "consequences": [c.to_dict() for c in self.consequences],
            "renamed": {a: b for a, b in self.matched.items() if a != b},
        }


# ---- the diff ------------------------------------------------------------------

def diff_designs(a: Design | dict, b: Design | dict, *, shapes: bool = True) -> DesignDiff:
    """The structural difference from design `a` (base) to design `b`.

    `shapes=False` skips shape inference (no consequences, no shapes on rows).
    """
    a = a if isinstance(a, Design) else Design.from_dict(a)
    b = b if isinstance(b, Design) else Design.from_dict(b)
    a_order, b_order = a.topo_order(), b.topo_order()
    a_nodes, b_nodes = {n.id: n for n in a_order}, {n.id: n for n in b_order}
    resolved: dict[int, dict] = {}

    def args_of(node: Node) -> dict:
        key = id(node)
        got = resolved.get(key)
        if got is None:
            got = resolved[key] = _resolved_args(node)
        return got

    # inputs: by id, then by position among the rest
    matched: dict[str, str] = {}
    how: dict[str, str] = {}
    a_in = [i.id for i in a.inputs]
    b_in = [i.id for i in b.inputs]
    b_in_set = set(b_in)
    for iid in a_in:
        if iid in b_in_set:
            matched[iid] = iid
    rest_a = [i for i in a_in if i not in matched]
    rest_b = [i for i in b_in if i not in matched.values()]
    for x, y in zip(rest_a, rest_b):
        matched[x] = y

    # 1. nodes by id
    for n in a_order:
        if n.id in b_nodes:
            matched[n.id] = n.id
            how[n.id] = "id"
    b_taken = {matched[k] for k in matched}
    left_a = [n for n in a_order if n.id not in matched]
    left_b = [n for n in b_order if n.id not in b_taken]

    # 2. by full signature, 3. by op
    for kind, sig in (("signature", lambda n: _signature(n, args_of(n))), ("op", lambda n: n.op)):
        if not left_a or not left_b:
            break
        pairs = _lcs_pairs([sig(n) for n in left_a], [sig(n) for n in left_b])
        if not pairs:
            continue
        for i, j in pairs:
            matched[left_a[i].id] = left_b[j].id
            how[left_a[i].id] = kind
        got_a = {i for i, _ in pairs}
        got_b = {j for _, j in pairs}
        left_a = [n for k, n in enumerate(left_a) if k not in got_a]
        left_b = [n for k, n in enumerate(left_b) if k not in got_b]

    removed = [n.id for n in left_a]
    added = [n.id for n in left_b]
    removed_set, added_set = set(removed), set(added)

    # changed nodes
    changed: list[NodeChange] = []
    changed_b: set[str] = set()
    for an in a_order:
        bid = matched.get(an.id)
        if bid is None:
            continue
        bn = b_nodes[bid]
        arg_changes = _arg_changes(args_of(an), args_of(bn))
        share_a = matched.get(an.shares, an.shares) if an.shares else None
        shares = (an.shares, bn.shares) if share_a != bn.shares else None
        if an.op != bn.op or arg_changes or shares:
            changed.append(NodeChange(an.id, bid, an.op, bn.op, arg_changes, shares, how.get(an.id, "id")))
            changed_b.add(bid)

    # rewired edges
    def in_b(ref: str) -> str | None:
        rid, idx = parse_ref(ref)
        m = matched.get(rid)
        if m is None:
            return None
        return m if idx == 0 and ":" not in ref else f"{m}:{idx}"

    def src_removed(ref: str | None) -> bool:
        return ref is not None and parse_ref(ref)[0] in removed_set

    def src_added(ref: str | None) -> bool:
        return ref is not None and parse_ref(ref)[0] in added_set

    rewired: list[Rewire] = []
    rewired_b: set[str] = set()
    for an in a_order:
        bid = matched.get(an.id)
        if bid is None:
            continue
        bn = b_nodes[bid]
        old_ins, new_ins = list(an.inputs), list(bn.inputs)
        for pos in range(max(len(old_ins), len(new_ins))):
            old = old_ins[pos] if pos < len(old_ins) else None
            new = new_ins[pos] if pos < len(new_ins) else None
            old_b = in_b(old) if old is not None else None
            if old is not None and new is not None and old_b is not None and _same_ref(old_b, new):
                continue
            if src_removed(old) or src_added(new):
                continue  # part of an insertion or a removal, reported there
            rewired.append(Rewire(bid, an.id, pos, old, old_b, new))
            rewired_b.add(bid)

    # inputs
    input_changes: list[InputChange] = []
    a_specs = {i.id: i for i in a.inputs}
    b_specs = {i.id: i for i in b.inputs}
    for iid in a_in:
        bid = matched.get(iid)
        if bid is None:
            input_changes.append(InputChange(iid, None, _spec_text(a_specs[iid]), None))
        elif _spec_text(a_specs[iid]) != _spec_text(b_specs[bid]):
            input_changes.append(InputChange(iid, bid, _spec_text(a_specs[iid]), _spec_text(b_specs[bid])))
    matched_in_b = {matched[i] for i in a_in if i in matched}
    for iid in b_in:
        if iid not in matched_in_b:
            input_changes.append(InputChange(None, iid, None, _spec_text(b_specs[iid])))

    # outputs: a difference that an added or removed node explains is not reported
    old_outs = [in_b(o) or o for o in a.outputs]
    outputs = None
    for pos in range(max(len(a.outputs), len(b.outputs))):
        o = a.outputs[pos] if pos < len(a.outputs) else None
        nw = b.outputs[pos] if pos < len(b.outputs) else None
        ob = in_b(o) if o is not None else None
        if o is not None and nw is not None and ob is not None and _same_ref(ob, nw):
            continue
        if src_removed(o) or src_added(nw):
            continue
        outputs = (tuple(old_outs), tuple(b.outputs))
        break

    # consequences: shapes that changed downstream
    consequences: list[Consequence] = []
    shapes_a: dict = {}
    shapes_b: dict = {}
    if shapes:
        shapes_a = _shapes(a)
        shapes_b = _shapes(b)
        for an in a_order:
            bid = matched.get(an.id)
            if bid is None or bid in changed_b:
                continue
            old, new = shapes_a.get(an.id, []), shapes_b.get(bid, [])
            for k in range(max(len(old), len(new))):
                o = old[k] if k < len(old) else "—"
                nw = new[k] if k < len(new) else "—"
                if o != nw:
                    consequences.append(Consequence(bid, an.id, k, o, nw))
    conseq_b = {c.node for c in consequences}

    # side-by-side rows
    rows: list[Row] = []
    for iid in b_in:
        back = next((x for x in a_in if matched.get(x) == iid), None)
        kind = "input" if back is not None else "added"
        rows.append(Row(kind, back, iid))
    for iid in a_in:
        if iid not in matched:
            rows.append(Row("removed", iid, None))
    a_pos = {n.id: k for k, n in enumerate(a_order)}
    b_to_a = {v: k for k, v in matched.items() if k in a_nodes}
    emitted_a: set[str] = set()
    ptr = 0
    for bn in b_order:
        aid = b_to_a.get(bn.id)
        if aid is None:
            rows.append(Row("added", None, bn.id))
            continue
        stop = a_pos[aid]
        while ptr < stop:
            cand = a_order[ptr].id
            if cand in removed_set and cand not in emitted_a:
                rows.append(Row("removed", cand, None))
                emitted_a.add(cand)
            ptr += 1
        kind = "changed" if bn.id in changed_b else "same"
        rows.append(Row(kind, aid, bn.id, bn.id in rewired_b, bn.id in conseq_b))
        emitted_a.add(aid)
    for n in a_order:
        if n.id in removed_set and n.id not in emitted_a:
            rows.append(Row("removed", n.id, None))

    return DesignDiff(
        a_name=a.name, b_name=b.name, matched=matched, added=added, removed=removed, changed=changed,
        rewired=rewired, inputs=input_changes, outputs=outputs, consequences=consequences, rows=rows,
        a_nodes=a_nodes, b_nodes=b_nodes, shapes_a=shapes_a, shapes_b=shapes_b,
    )


# ---- helpers ---------------------------------------------------------------------

def _same_ref(x: str, y: str) -> bool:
    return parse_ref(x) == parse_ref(y)


def _resolved_args(node: Node) -> dict:
    """The node's args with torch's defaults filled in (when the op is known)."""
    try:
        from .ops import OP_TABLE
    except Exception:  # pragma: no cover - the op table is part of core
        return dict(node.args)
    spec = OP_TABLE.get(node.op)
    if spec is None:
        return dict(node.args)
    args, _missing, _unknown = spec.resolve_args(node.args)
    args.update({k: v for k, v in node.args.items() if k not in args})
    return args


def _canon(value: Any) -> str:
    try:
        return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
    except (TypeError, ValueError):
        return repr(value)


def _signature(node: Node, args: dict) -> str:
    return f"{node.op}|{len(node.inputs)}|{_canon(args)}|{'s' if node.shares else ''}"


def _arg_changes(old: dict, new: dict) -> list[ArgChange]:
    if old == new:
        return []
    out = []
    for name in list(old) + [k for k in new if k not in old]:
        o = old.get(name, _MISSING)
        n = new.get(name, _MISSING)
        if o is _MISSING or n is _MISSING or (o != n or type(o) is not type(n)) and _canon(o) != _canon(n):
            out.append(ArgChange(name, None if o is _MISSING else o, None if n is _MISSING else n,
                                 o is not _MISSING, n is not _MISSING))
    return out


def _fmt(v: Any) -> str:
    if isinstance(v, str):
        return v
    return _canon(v).replace(",", ", ")


def shape_text(t) -> str:
    """A TensorType as text: `[B, 64, 56, 56] float32`; `?` for unknown sizes."""
    shape = getattr(t, "shape", None)
    dtype = getattr(t, "dtype", "")
    if shape is None:
        body = "[?]"
    else:
        body = "[" + ", ".join("?" if d is None else str(d) for d in shape) + "]"
    return f"{body} {dtype}".strip()


def _spec_text(spec) -> str:
    return "[" + ", ".join("?" if d is None else str(d) for d in spec.shape) + f"] {spec.dtype}"


def _shapes(design: Design) -> dict:
    from .shapes import infer_design

    try:
        inf = infer_design(design)
    except Exception:  # a design the walk cannot read: no shapes, no consequences
        return {}
    memo: dict = {}

    def text(t) -> str:
        try:
            key = (t.shape, t.dtype)
            got = memo.get(key)
        except TypeError:  # an unhashable dim: no memo
            return shape_text(t)
        if got is None:
            got = memo[key] = shape_text(t)
        return got

    return {k: [text(t) for t in v] for k, v in inf.types.items()}


def _lcs_pairs(xs: list, ys: list, max_d: int = 1500) -> list[tuple[int, int]]:
    """Index pairs (i, j) of a longest common subsequence of xs and ys.

    Common prefix and suffix are taken first; the middle goes through Myers'
    O((N+M)·D) algorithm, which is fast when the sequences differ little.
    Past `max_d` differences it falls back to difflib's matcher (not always
    a longest subsequence, but quick)."""
    n, m = len(xs), len(ys)
    pairs: list[tuple[int, int]] = []
    lo = 0
    while lo < n and lo < m and xs[lo] == ys[lo]:
        pairs.append((lo, lo))
        lo += 1
    hi_x, hi_y = n, m
    tail = []
    while hi_x > lo and hi_y > lo and xs[hi_x - 1] == ys[hi_y - 1]:
        hi_x -= 1
        hi_y -= 1
        tail.append((hi_x, hi_y))
    mid_x, mid_y = xs[lo:hi_x], ys[lo:hi_y]
    if mid_x and mid_y:
        # intern to ints: compares are cheaper
        table: dict = {}
        ax = [table.setdefault(v, len(table)) for v in mid_x]
        by = [table.setdefault(v, len(table)) for v in mid_y]
        common = set(ax) & set(by)
        if common:
            got = _myers(ax, by, max_d)
            if got is None:
                import difflib

                sm = difflib.SequenceMatcher(None, ax, by, autojunk=False)
                got = [(blk.a + k, blk.b + k) for blk in sm.get_matching_blocks() for k in range(blk.size)]
            pairs.extend((i + lo, j + lo) for i, j in got)
    pairs.extend(reversed(tail))
    return pairs


def _myers(a: list[int], b: list[int], max_d: int) -> list[tuple[int, int]] | None:
    n, m = len(a), len(b)
    offset = n + m
    v = [0] * (2 * offset + 2)
    trace: list[list[int]] = []
    for d in range(0, min(max_d, n + m) + 1):
        trace.append(v[:])
        for k in range(-d, d + 1, 2):
            if k == -d or (k != d and v[offset + k - 1] < v[offset + k + 1]):
                x = v[offset + k + 1]
            else:
                x = v[offset + k - 1] + 1
            y = x - k
            while x < n and y < m and a[x] == b[y]:
                x += 1
                y += 1
            v[offset + k] = x
            if x >= n and y >= m:
                return _backtrack(trace, a, b, offset, d, k)
    return None


def _backtrack(trace, a, b, offset, d, k) -> list[tuple[int, int]]:
    x, y = len(a), len(b)
    out = []
    for depth in range(d, -1, -1):
        v = trace[depth]
        k = x - y
        if depth == 0:
            while x > 0 and y > 0:
                x -= 1
                y -= 1
                out.append((x, y))
            break
        if k == -depth or (k != depth and v[offset + k - 1] < v[offset + k + 1]):
            prev_k = k + 1
        else:
            prev_k = k - 1
        prev_x = v[offset + prev_k]
        prev_y = prev_x - prev_k
        while x > prev_x and y > prev_y:
            x -= 1
            y -= 1
            out.append((x, y))
        x, y = prev_x, prev_y
    out.reverse()
    return out



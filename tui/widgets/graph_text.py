"""The design's graph as layered text, with shapes on the edges.

Pure functions over `core.graph.Design` and the inferred types: they run in
worker threads (no widget is touched). Layout:

    L0  ● x                    input
         │ [B, 3, 32, 32] float32
    L1  ■ features.0           Conv2d in_channels=3 out_channels=16 kernel_size=3
         │ [B, 16, 32, 32] float32
    L2  ■ features.1           ReLU
    …
    L7  ■ layer1.0.add         Add
         ◀ layer1.0.bn2        [B, 64, 56, 56] float32
         ◀ maxpool             [B, 64, 56, 56] float32

`L` is the node's layer (its longest distance from an input). A node whose
only operand is the node just above is joined to it by `│ shape` (the
edge's tensor); any other operand is listed under the node as `◀ source
shape`. In a neighbourhood view the nodes left out are folded into
`⋮ N nodes` lines.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from rich.text import Text

from ..sanitise import visible
from .lines import Line

STYLE_LAYER = "dim"
STYLE_ID = "bold"
STYLE_OP = "cyan"
STYLE_ARGS = "dim"
STYLE_SHAPE = "green"
STYLE_UNKNOWN = "yellow"
STYLE_EDGE = "dim"
STYLE_BLOCK = "bold red"
STYLE_WARN = "bold yellow"
ID_WIDTH = 28
BIG_GRAPH = 120  # nodes: above this the design screen opens on a neighbourhood


@dataclass
class GraphModel:
    """What the layout needs, computed once per design (in a worker)."""

    order: list  # node ids in topological order (inputs first)
    kind: dict  # id -> "input" | "node"
    op: dict  # id -> op name ("input" for inputs)
    label: dict  # id -> args text
    operands: dict  # id -> [ref, ...]
    users: dict  # id -> [id, ...]
    layer: dict  # id -> int
    shapes: dict  # id -> [shape text per result]
    outputs: set = field(default_factory=set)
    severity: dict = field(default_factory=dict)  # id -> "block" | "warn" (worst finding on it)

    @property
    def n_nodes(self) -> int:
        return sum(1 for k in self.kind.values() if k == "node")

    def neighbourhood(self, focus, radius: int) -> set:
        """Ids within `radius` edges (either direction) of `focus`."""
        seen = {f for f in focus if f in self.kind}
        frontier = deque((f, 0) for f in seen)
        while frontier:
            nid, d = frontier.popleft()
            if d >= radius:
                continue
            for nb in list(self.users.get(nid, ())) + [_ref_id(r) for r in self.operands.get(nid, ())]:
                if nb in self.kind and nb not in seen:
                    seen.add(nb)
                    frontier.append((nb, d + 1))
        return seen


def _ref_id(ref: str) -> str:
    head, sep, tail = ref.rpartition(":")
    if sep and tail.isdigit() and head:
        return head
    return ref


def _ref_index(ref: str) -> int:
    head, sep, tail = ref.rpartition(":")
    return int(tail) if sep and tail.isdigit() and head else 0


def _fmt_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (list, tuple)):
        return "(" + ",".join(_fmt_value(x) for x in v) + ")"
    if isinstance(v, float):
        return f"{v:g}"
    if v is None:
        return "null"
    return str(v)


def args_text(args: dict, limit: int = 90) -> str:
    """`name=value ...`, made visible (argument names and values come from the design)."""
    text = visible(" ".join(f"{k}={_fmt_value(v)}" for k, v in (args or {}).items()))
    return text if len(text) <= limit else text[:limit - 1] + "…"


def shape_text(t) -> str:
    shape = getattr(t, "shape", None)
    dtype = getattr(t, "dtype", "") or ""
    if shape is None:
        return f"[?] {dtype}".strip()
    return "[" + ", ".join("?" if d is None else str(d) for d in shape) + f"] {dtype}".rstrip()


def build_model(design, types: dict | None, findings: list[dict] | None = None) -> GraphModel:
    """A GraphModel of a `core.graph.Design` and its inferred types (id -> [TensorType])."""
    order: list[str] = []
    kind: dict = {}
    op: dict = {}
    label: dict = {}
    operands: dict = {}
    users: dict = {}
    layer: dict = {}
    for spec in design.inputs:
        order.append(spec.id)
        kind[spec.id] = "input"
        op[spec.id] = "input"
        label[spec.id] = ""
        operands[spec.id] = []
        layer[spec.id] = 0
    for node in design.topo_order():
        order.append(node.id)
        kind[node.id] = "node"
        op[node.id] = node.op
        extra = args_text(node.args)
        if node.shares:
            extra = (extra + " " if extra else "") + visible(f"shares={node.shares}")
        label[node.id] = extra
        operands[node.id] = list(node.inputs)
    for nid in order:
        users.setdefault(nid, [])
    for nid in order:
        for ref in operands[nid]:
            src = _ref_id(ref)
            if src in users and nid not in users[src]:
                users[src].append(nid)
    for nid in order:
        if kind[nid] != "node":
            continue
        srcs = [layer.get(_ref_id(r)) for r in operands[nid]]
        srcs = [s for s in srcs if s is not None]
        layer[nid] = (max(srcs) + 1) if srcs else 1
    shapes = {}
    for nid, ts in (types or {}).items():
        shapes[nid] = [shape_text(t) for t in ts]
    severity: dict = {}
    for f in findings or ():
        if f.get("stale"):
            continue
        for n in f.get("nodes") or ():
            if severity.get(n) != "block":
                severity[n] = f.get("severity", "warn")
    return GraphModel(order=order, kind=kind, op=op, label=label, operands=operands, users=users,
                      layer=layer, shapes=shapes, outputs={_ref_id(o) for o in design.outputs},
                      severity=severity)


def _edge_shape(model: GraphModel, ref: str) -> Text:
    src = _ref_id(ref)
    results = model.shapes.get(src)
    idx = _ref_index(ref)
    if not results or idx >= len(results):
        return Text("[?]", style=STYLE_UNKNOWN)
    s = results[idx]
    return Text(visible(s), style=STYLE_UNKNOWN if "?" in s else STYLE_SHAPE)


def layout(model: GraphModel, subset: set | None = None) -> list[Line]:
    """The lines of the whole graph, or of the nodes in `subset` with the rest folded."""
    lines: list[Line] = []
    prev: str | None = None
    hidden = 0
    gutter = max(3, len(str(max(model.layer.values(), default=0))) + 1)
    idw = min(max((len(n) for n in model.order), default=8), ID_WIDTH)

    def flush_hidden() -> None:
        nonlocal hidden
        if hidden:
            t = Text(" " * (gutter + 2))
            t.append(f"⋮ {hidden} node{'s' if hidden != 1 else ''} not shown", style="dim italic")
            lines.append(Line(t, None, selectable=False))
            hidden = 0

    for nid in model.order:
        if subset is not None and nid not in subset:
            hidden += 1
            prev = None
            continue
        flush_hidden()
        ops = model.operands.get(nid, [])
        chain = len(ops) == 1 and prev is not None and _ref_id(ops[0]) == prev
        if chain:
            t = Text(" " * (gutter + 2))
            t.append("│ ", style=STYLE_EDGE)
            t.append_text(_edge_shape(model, ops[0]))
            lines.append(Line(t, prev, selectable=False))
        head = Text()
        head.append(f"L{model.layer.get(nid, 0):<{gutter - 1}} ", style=STYLE_LAYER)
        sev = model.severity.get(nid)
        if model.kind[nid] == "input":
            head.append("● ", style="bold green")
        elif sev == "block":
            head.append("✖ ", style=STYLE_BLOCK)
        elif sev == "warn":
            head.append("▲ ", style=STYLE_WARN)
        else:
            head.append("■ ", style="blue")
        head.append(visible(nid).ljust(idw), style=STYLE_ID)
        head.append(" ")
        if model.kind[nid] == "input":
            head.append("input ", style=STYLE_OP)
            head.append_text(_edge_shape(model, nid))
        else:
            head.append(visible(model.op[nid]), style=STYLE_OP)
            if model.label.get(nid):
                head.append(" " + model.label[nid], style=STYLE_ARGS)
        lines.append(Line(head, nid))
        if not chain:
            for ref in ops:
                t = Text(" " * (gutter + 2))
                t.append("◀ ", style=STYLE_EDGE)
                t.append(visible(ref).ljust(idw), style="")
                t.append(" ")
                t.append_text(_edge_shape(model, ref))
                lines.append(Line(t, nid, selectable=False))
        if nid in model.outputs:
            t = Text(" " * (gutter + 2))
            t.append("⇒ output ", style="bold magenta")
            t.append_text(_edge_shape(model, nid))
            lines.append(Line(t, nid, selectable=False))
        prev = nid
    flush_hidden()
    return lines

"""The check catalogue's machinery: a CheckSpec per check, its words beside its code.

Three kinds of check, one registry:
- requirements the op table's shape rules raise (`declare`, the ops that can
  raise each are read off `OpSpec.rules`);
- node checks, dispatched by op type (`node_check(ops=...)`), so a node only
  meets the checks that concern it;
- graph checks (`graph_check`), run once per design.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

SEVERITIES = ("block", "warn")
CATEGORIES = ("shape", "dtype", "connectivity", "numerics", "efficiency", "parse")


@dataclass(frozen=True)
class CheckSpec:
    id: str
    severity: str
    category: str
    title: str
    condition: str  # what triggers it
    why: str  # what it costs
    fix: str
    kind: str = "node"  # requirement | structure | node | graph
    ops: tuple = ()
    likely_defect: bool = False  # a warn that is most often a real mistake: listed before the other warns

    def to_dict(self, grounding: Iterable[str] = ()) -> dict:
        return {
            "id": self.id, "severity": self.severity, "category": self.category, "title": self.title,
            "condition": self.condition, "why": self.why, "fix": self.fix, "kind": self.kind,
            "ops": list(self.ops), "grounding": list(grounding),
        }


CATALOGUE: dict[str, CheckSpec] = {}
NODE_CHECKS: dict[str, list] = {}  # op name (or "*") -> [(spec, fn)]
GRAPH_CHECKS: list = []  # [(spec, fn)]


def _register(spec: CheckSpec) -> CheckSpec:
    if spec.id in CATALOGUE:
        raise RuntimeError(f"check {spec.id} declared twice")
    if spec.severity not in SEVERITIES or spec.category not in CATEGORIES:
        raise RuntimeError(f"check {spec.id}: bad severity or category")
    CATALOGUE[spec.id] = spec
    return spec


def declare(id: str, severity: str, category: str, title: str, *, condition: str, why: str, fix: str,
            kind: str = "requirement", likely_defect: bool = False) -> CheckSpec:
    """A check whose condition is evaluated elsewhere (the op table, the structural pass)."""
    return _register(CheckSpec(id, severity, category, title, condition, why, fix, kind,
                               likely_defect=likely_defect))


def node_check(id: str, severity: str, category: str, title: str, *, ops: tuple, condition: str, why: str,
               fix: str) -> Callable:
    """Register fn(node, ctx) -> iterable of messages or (nodes, message)."""

    def wrap(fn):
        spec = _register(CheckSpec(id, severity, category, title, condition, why, fix, "node", tuple(ops)))
        for op in ops:
            NODE_CHECKS.setdefault(op, []).append((spec, fn))
        fn.spec = spec
        return fn

    return wrap


def graph_check(id: str, severity: str, category: str, title: str, *, condition: str, why: str,
                fix: str) -> Callable:
    """Register fn(ctx) -> iterable of (nodes, message)."""

    def wrap(fn):
        spec = _register(CheckSpec(id, severity, category, title, condition, why, fix, "graph"))
        GRAPH_CHECKS.append((spec, fn))
        fn.spec = spec
        return fn

    return wrap


@dataclass
class CheckCtx:
    """What checks read: the design, the op table's inference, the cost, the wiring."""

    design: object
    inf: object
    cost: dict = field(default_factory=dict)
    nodes: dict = field(default_factory=dict)
    users: dict = field(default_factory=dict)  # id -> [consumer node ids]
    operands: dict = field(default_factory=dict)  # node id -> [producer ids] (result index dropped)
    faulty: set = field(default_factory=set)  # node ids named by a block finding before the checks ran
    # per-design results checks share (walks up the graph), so that a question asked of every
    # node is answered in one pass over the design instead of one walk per node
    memo: dict = field(default_factory=dict)

    def producer(self, node, i: int = 0):
        """The node that feeds operand i, or None for a design input."""
        ids = self.operands.get(node.id, [])
        return self.nodes.get(ids[i]) if i < len(ids) else None

    def only_user(self, node_id: str):
        us = self.users.get(node_id, [])
        return self.nodes[us[0]] if len(us) == 1 else None

    def out_type(self, node_id: str, idx: int = 0):
        res = self.inf.types.get(node_id)
        return res[idx] if res and idx < len(res) else None

    def args(self, node) -> dict:
        return self.inf.args.get(node.id, node.args)

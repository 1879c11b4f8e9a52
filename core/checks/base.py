"""The check catalogue's machinery: a `Rule` (core/rule.py) per check, its words beside its code.

Three kinds of check, one registry (`RULES`):
- requirements the op table's shape rules raise (declared in core/ops/rules.py,
  the ops that can raise each are read off `OpSpec.rules`);
- node checks, dispatched by op type (`node_check(ops=...)`), so a node only
  meets the checks that concern it;
- graph checks (`graph_check`), run once per design.
"""

from __future__ import annotations

from ..rule import CATEGORIES, RULES, SEVERITIES, Rule
from ..valueclass import field, value_class

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the start-up of verify --json)

if TYPE_CHECKING:  # core.shapes reads the rules this room declares
    from collections.abc import Callable

    from ..graph import Design
    from ..shapes import Inference

CheckSpec = Rule  # a check is a rule: its words and its id, one object
CATALOGUE: dict[str, Rule] = RULES
NODE_CHECKS: dict[str, list] = {}  # op name (or "*") -> [(rule, fn)]
GRAPH_CHECKS: list = []  # [(rule, fn)]


def node_check(rule: Rule, *, ops: tuple) -> Callable:
    """Register fn(node, ctx) -> iterable of messages or (nodes, message) as the check of `rule`, run on the
    nodes whose op is one of `ops`."""

    def wrap(fn):
        rule.kind, rule.ops = "node", tuple(ops)
        for op in ops:
            NODE_CHECKS.setdefault(op, []).append((rule, fn))
        fn.spec = rule
        return fn

    return wrap


def graph_check(rule: Rule) -> Callable:
    """Register fn(ctx) -> iterable of (nodes, message) as the check of `rule`, run once per design."""

    def wrap(fn):
        rule.kind = "graph"
        GRAPH_CHECKS.append((rule, fn))
        fn.spec = rule
        return fn

    return wrap


__all__ = ["CATALOGUE", "CATEGORIES", "SEVERITIES", "CheckSpec", "Rule", "node_check", "graph_check"]


@value_class
class CheckCtx:
    """What checks read: the design, the op table's inference, the cost, the wiring."""

    design: Design
    inf: Inference
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

    def ops_present(self) -> set:
        """The op names the design uses (once per design): a graph check asking whether any node is a norm, a
        shortcut, a BatchNorm ... asks this set instead of walking every node."""
        found = self.memo.get("ops_present")
        if found is None:
            found = self.memo["ops_present"] = {n.op for n in self.design.nodes}
        return found

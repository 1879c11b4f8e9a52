"""What the verifier answers: findings, the verdict, the cost quote."""

from __future__ import annotations

from functools import cached_property

from .valueclass import field, value_class

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the start-up of verify --json)
if TYPE_CHECKING:
    from typing import Any

VERIFIER_VERSION = "1"


@value_class(frozen=True)
class Finding:
    rule: str
    severity: str  # block | warn
    nodes: tuple
    message: str

    def __post_init__(self) -> None:
        if type(self.rule) is not str:  # a Rule is its id; findings carry the plain id (JSON, DuckDB)
            object.__setattr__(self, "rule", str(self.rule))

    def to_dict(self) -> dict:
        return {"rule": self.rule, "severity": self.severity, "nodes": list(self.nodes), "message": self.message}

    @cached_property
    def key(self) -> str:
        """Stable identity across re-verification: rule + node ids (made once: a design with many
        findings asks for each key several times)."""
        return self.rule + "@" + ",".join(self.nodes)


@value_class
class Report:
    findings: list[Finding] = field(default_factory=list)
    cost: dict = field(default_factory=dict)
    types: dict = field(default_factory=dict)  # "node" or "node:N" -> TensorType
    version: str = VERIFIER_VERSION

    @property
    def verdict(self) -> str:
        if any(f.severity == "block" for f in self.findings):
            return "block"
        if self.findings:
            return "warn"
        return "pass"

    def to_dict(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "findings": [f.to_dict() for f in self.findings],
            "cost": self.cost,
        }

    def count(self, severity: str) -> int:
        return sum(1 for f in self.findings if f.severity == severity)


def graph_positions(design_dict: dict | None) -> dict:
    """node id -> its place in the design (inputs first, then nodes as written): the order a curator reads
    the graph in, so `features.3` comes before `features.10`."""
    out: dict = {}
    if not isinstance(design_dict, dict):
        return out
    for group in ("inputs", "nodes"):
        for item in design_dict.get(group) or ():
            if isinstance(item, dict) and isinstance(item.get("id"), str):
                out.setdefault(item["id"], len(out))
    return out


def display_key(rule: str, severity: str, nodes, positions: dict) -> tuple:
    """How findings are listed for a curator: blocks first, then the warns the catalogue marks as likely
    defects, then the other warns; within each, in graph order (a finding on no node after those on
    nodes), then by rule."""
    from .checks import CATALOGUE

    spec = CATALOGUE.get(rule)
    where = min((positions.get(n, len(positions)) for n in nodes or ()), default=len(positions) + 1)
    return (severity != "block", not (spec is not None and spec.likely_defect), where, rule, tuple(nodes or ()))

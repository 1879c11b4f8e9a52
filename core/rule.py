"""A rule of the verifier as a typed object (Ruff's layout): its id, severity, category and words, declared once
in the module that raises it (or beside it) and referenced by name, so that a misspelt rule fails at import.

A `Rule` is its id as a string (findings, reports, the store and JSON carry the plain id), with the rest as
attributes. Every rule registers itself in `RULES` when its module is imported; the published catalogue
(assets/checks.json) is generated from them. core/checks/README.md says how to add one.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable

SEVERITIES = ("block", "warn")
CATEGORIES = ("shape", "dtype", "connectivity", "numerics", "efficiency", "parse")
KINDS = ("requirement", "structure", "node", "graph")

RULES: dict[str, Rule] = {}


class Rule(str):
    """One rule: `Rule("shape.rank", "block", "shape", "Input has the wrong number of dimensions",
    condition=..., why=..., fix=...)`. Equal to (and hashed as) its id."""

    severity: str
    category: str
    title: str
    condition: str  # what triggers it
    why: str  # what it costs
    fix: str
    kind: str  # requirement (the op table raises it) | structure | node | graph (a check function)
    ops: tuple  # the ops a node check is dispatched on
    module: str  # where it is declared
    likely_defect: bool  # a warn that is most often a real mistake: listed before the other warns

    def __new__(cls, id: str, severity: str, category: str, title: str, *, condition: str, why: str, fix: str,
                kind: str = "requirement", likely_defect: bool = False) -> Rule:
        if id in RULES:
            raise RuntimeError(f"rule {id} declared twice ({RULES[id].module} and here)")
        if severity not in SEVERITIES or category not in CATEGORIES or kind not in KINDS:
            raise RuntimeError(f"rule {id}: bad severity, category or kind")
        if not id.startswith(category + "."):
            raise RuntimeError(f"rule {id}: its id must start with its category {category!r}")
        self = super().__new__(cls, id)
        self.severity, self.category, self.title = severity, category, title
        self.condition, self.why, self.fix, self.kind, self.ops = condition, why, fix, kind, ()
        self.likely_defect = likely_defect
        self.module = sys._getframe(1).f_globals.get("__name__", "?")
        RULES[id] = self
        return self

    @property
    def id(self) -> str:
        return str.__str__(self)

    def __reduce__(self):
        # across processes a rule is its id, found again in the registry of the process that loads it
        return (_rule_of, (self.id,))

    def __repr__(self) -> str:
        return f"Rule({self.id!r})"

    def to_dict(self, grounding: Iterable[str] = ()) -> dict:
        return {
            "id": self.id, "severity": self.severity, "category": self.category, "title": self.title,
            "condition": self.condition, "why": self.why, "fix": self.fix, "kind": self.kind,
            "ops": list(self.ops), "grounding": list(grounding),
        }


def _rule_of(rule_id: str) -> str:
    return RULES.get(rule_id, rule_id)

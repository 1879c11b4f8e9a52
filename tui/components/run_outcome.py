"""What a run says about a design's findings: confirmed, refuted, or a defect no rule saw.

A forward run that fails names the node whose module raised (the child
reports `metrics.failed_node`); a blocking finding on that node is
confirmed by it. A warn finding on that node is not: a warning predicts
waste, never a crash (`Relation.warns` names them, to say so). A design that ran fine refutes its blocking findings (the
verifier said it would not run). A failure at a node no finding names
points at a missed defect. A timeout, a kill or a cancel says nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rich.text import Text

from ..sanitise import visible


@dataclass
class Relation:
    kind: str  # agrees | refutes | missed | unrelated | none
    rules: list[str]  # the findings' rules it is about
    keys: list[str]  # their keys
    node: str | None  # where the run failed
    warns: list[str] = field(default_factory=list)  # warn findings' keys at the failing node (not confirmed)

    def describe(self) -> str:
        rules = ", ".join(self.rules)
        if self.kind == "agrees":
            return f"agrees with {rules}"
        if self.kind == "refutes":
            return f"refutes {rules} (it ran)"
        if self.kind == "missed":
            if self.warns:
                return "no blocking finding names this node: a missed defect? (a warning there predicts no crash)"
            return "no finding names this node: a missed defect?"
        if self.kind == "unrelated":
            return f"not where the findings are ({rules})"
        return ""


def failed_node(run: dict) -> str | None:
    node = (run.get("metrics") or {}).get("failed_node")
    return node if isinstance(node, str) else None


def relation(run: dict, findings: list[dict]) -> Relation:
    """How `run` (a stored run row) stands to the design's live findings."""
    live = [f for f in findings if not f.get("stale")]
    blocks = [f for f in live if f.get("severity") == "block"]
    status = run.get("status")
    node = failed_node(run)
    if status == "ok":
        if blocks:
            return Relation("refutes", sorted({f["rule"] for f in blocks}), [f["key"] for f in blocks], None)
        return Relation("none", [], [], None)
    if status != "failed":
        return Relation("none", [], [], node)
    if node is not None:
        here = [f for f in blocks if node in (f.get("nodes") or [])]
        warns = [f["key"] for f in live if f.get("severity") != "block" and node in (f.get("nodes") or [])]
        if here:
            return Relation("agrees", sorted({f["rule"] for f in here}), [f["key"] for f in here], node, warns)
        if blocks:
            return Relation("unrelated", sorted({f["rule"] for f in blocks}), [], node, warns)
        return Relation("missed", [], [], node, warns)
    if blocks:  # failed before any node ran (a build error): the blocking findings said so
        return Relation("agrees", sorted({f["rule"] for f in blocks}), [f["key"] for f in blocks], None)
    return Relation("missed", [], [], None)


def outcome_text(run: dict, findings: list[dict], verdict: str | None = None) -> Text:
    """One line: `run: RuntimeError at node conv2 — agrees with shape.conv-channels`."""
    t = Text("run: ", style="dim")
    status, exc = run.get("status"), run.get("exception")
    node = failed_node(run)
    if status == "ok":
        t.append("ran fine", style="bold green")
    elif exc == "BuildError":
        t.append("cannot be built", style="bold red")
    elif status == "failed":
        t.append(visible(exc or "failed"), style="bold red")
        if node:
            t.append(" at node ", style="red")
            t.append(visible(node), style="bold red")
    else:
        t.append(visible(status or "?"), style="yellow")
    if run.get("device"):
        t.append(f" on {visible(run['device'])}", style="dim")
    rel = relation(run, findings)
    words = rel.describe()
    if words:
        t.append(" — ", style="dim")
        t.append(visible(words), style={"agrees": "green", "refutes": "bold yellow", "missed": "bold yellow"}.get(
            rel.kind, "dim"))
    elif status == "ok" and verdict in ("pass", "warn"):
        t.append(" — as the verifier said", style="green")
    return t

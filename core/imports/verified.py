"""What an import keeps of the verifier's answer: `core.verify.verify_graph` reduced to the store's columns.

`verify_design(design, verifier=None) -> Verified`. `verifier` is any
callable `design -> Report` with the shape of `core.report.Report`
(`.verdict`, `.findings[*].rule/.severity/.nodes/.message/.key`, `.cost`,
`.version`); None means `core.verify.verify_graph`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

DEFAULT_GPU = "A10G"
SEVERITY_RANK = {"warn": 1, "block": 2}


@dataclass
class Verified:
    verdict: str
    findings: list[dict] = field(default_factory=list)  # key, rule, severity, nodes, node_list, message
    params: int | None = None
    flops: float | None = None
    quoted_cost_usd: float | None = None
    quote_device: str | None = None
    cost_a10g_usd: float | None = None
    cost_json: str | None = None
    version: str | None = None

    @property
    def n_block(self) -> int:
        return sum(1 for f in self.findings if f["severity"] == "block")

    @property
    def n_warn(self) -> int:
        return sum(1 for f in self.findings if f["severity"] != "block")


def default_verifier() -> Callable[[Any], Any]:
    from ..verify import verify_graph  # the lead's entry point

    return verify_graph


def finding_key(rule: str, nodes) -> str:
    return rule + "@" + ",".join(nodes)


def reduce_findings(findings) -> list[dict]:
    """Findings as rows, one per key (rule@nodes); a repeated key keeps its first
    message and the more severe severity."""
    out: dict[str, dict] = {}
    for f in findings:
        nodes = [str(n) for n in (f.nodes or ())]
        key = getattr(f, "key", None) or finding_key(f.rule, nodes)
        sev = f.severity if f.severity in SEVERITY_RANK else "warn"
        prev = out.get(key)
        if prev is None:
            out[key] = {
                "key": key,
                "rule": f.rule,
                "severity": sev,
                "nodes": ",".join(nodes),
                "node_list": nodes,
                "message": f.message,
            }
        elif SEVERITY_RANK[sev] > SEVERITY_RANK[prev["severity"]]:
            prev["severity"] = sev
    return list(out.values())


def verify_design(design, verifier: Callable | None = None) -> Verified:
    report = (verifier or default_verifier())(design)
    findings = reduce_findings(report.findings)
    cost = report.cost or {}
    quote = cost.get("quote") or {}
    if not isinstance(quote, dict):
        quote = {}
    if any(f["severity"] == "block" for f in findings):
        verdict = "block"
    elif findings:
        verdict = "warn"
    else:
        verdict = "pass"
    return Verified(
        verdict=verdict,
        findings=findings,
        params=_int(cost.get("params")),
        flops=_num(cost.get("flops_per_sample")),
        quoted_cost_usd=_num(quote.get("usd")),
        quote_device=quote.get("device"),
        cost_a10g_usd=default_gpu_usd(cost),
        cost_json=json.dumps(cost, default=str, separators=(",", ":")) if cost else None,
        version=str(getattr(report, "version", "") or "") or None,
    )


def verify_graphs(graphs: Iterable[tuple[str, str]], verifier: Callable | None = None) -> list[tuple[str, Verified]]:
    """(id, `Verified`) of each stored (id, graph JSON text): the re-verification of kept designs."""
    from ..graph import Design

    return [(did, verify_design(Design.from_dict(json.loads(graph), source=did), verifier))
            for did, graph in graphs]


def default_gpu() -> str:
    """The GPU price table's default device (A10G)."""
    try:
        from ..assets import gpu_prices

        return gpu_prices().get("default") or DEFAULT_GPU
    except Exception:
        return DEFAULT_GPU


def default_gpu_usd(cost: dict) -> float | None:
    """USD of one training run on the default GPU (A10G), whatever device the design declares.

    `core.cost.quote_on(cost)` re-prices the quote on the table's default
    GPU; without it, the quote itself counts only when it was made for that GPU.
    """
    quote = cost.get("quote") if isinstance(cost, dict) else None
    if not isinstance(quote, dict):
        return None
    try:
        from ..cost import quote_on
    except ImportError:
        pass
    else:
        try:
            return _num(quote_on(cost, None))
        except Exception:
            pass
    if quote.get("device") in (None, default_gpu()):
        return _num(quote.get("usd"))
    return None


def _num(v) -> float | None:
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, (int, float)):
        f = float(v)
        return f if math.isfinite(f) else None
    return None


def _int(v) -> int | None:
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, int):
        return v if -(2**63) <= v < 2**63 else None
    if isinstance(v, float) and math.isfinite(v):
        return int(v)
    return None

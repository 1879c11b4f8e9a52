"""verify_graph(design) -> Report: the only entry the rest of the code needs.

`Report.verdict` is "pass" | "warn" | "block"; `.findings` are `Finding(rule,
severity, nodes, message)` with a `key` (rule@node ids) stable across
re-verification; `.cost` is the quote of `core.cost`; `.to_dict()` is SPEC
§4's `verify --json` answer.
"""

from __future__ import annotations

import gc

from .checks import GRAPH_CHECKS, NODE_CHECKS, CheckCtx
from .checks.shape import UNKNOWN_DIM, faults_upstream
from .cost import compute_cost
from .graph import Design, _kahn, parse_ref, wiring
from .ops.rules import CONNECTIVITY_BAD_RESULT, CONNECTIVITY_CYCLE, CONNECTIVITY_DANGLING, CONNECTIVITY_NO_OUTPUT
from .report import Finding, Report
from .shapes import Inference, infer_design

_STRUCTURE_RULES = {"dangling": CONNECTIVITY_DANGLING, "bad-shares": CONNECTIVITY_DANGLING,
                    "cycle": CONNECTIVITY_CYCLE, "no-output": CONNECTIVITY_NO_OUTPUT,
                    "dangling-output": CONNECTIVITY_NO_OUTPUT}


def verify_graph(design: Design, with_cost: bool = True) -> Report:
    # the walk allocates many small objects and frees none until it returns: the cyclic garbage
    # collector's passes over a large heap would make big graphs cost more than linear time
    paused = gc.isenabled()
    gc.disable()
    try:
        return _verify(design, with_cost)
    finally:
        if paused:
            gc.enable()


def _verify(design: Design, with_cost: bool) -> Report:
    findings: list[Finding] = []
    wired = wiring(design)
    order, stuck = _kahn(design, wired)  # one walk for both: order = design.topo_order()
    for p in design.structural_problems(stuck, wired[0], wired[1]):
        findings.append(Finding(_STRUCTURE_RULES[p.kind], "block", tuple(p.nodes), p.message))
    inf = infer_design(design, order, wired[0])
    for v in inf.violations:
        findings.append(Finding(v.rule, v.severity, tuple(v.nodes), v.message))
    findings.extend(_bad_output_results(design, inf))
    cost = compute_cost(design, inf) if with_cost else {}
    ctx = _check_ctx(design, inf, cost, wired)
    ctx.faulty = {n for f in findings if f.severity == "block" for n in f.nodes}
    if ctx.faulty and any(f.rule == UNKNOWN_DIM for f in findings):
        # a size lost at a fault that is already refused needs no warn of its own
        upstream = faults_upstream(ctx)
        findings = [f for f in findings if f.rule != UNKNOWN_DIM or not upstream.get(f.nodes[0], True)]
    try:
        findings.extend(_checks(design, ctx, guarded=False))
    except Exception:  # noqa: BLE001 - again, one check at a time, to keep what the others say
        findings.extend(_checks(design, ctx, guarded=True))
    return Report(findings=_dedupe(findings), cost=cost, types=inf.types)


def _bad_output_results(design: Design, inf) -> list:
    """An output naming a result its node does not have ("sp:2" of a Split in two pieces, "fc:1" of a
    Linear): torch's forward fails to return it, as a node reading it would."""
    out = []
    for ref in design.outputs:
        if not isinstance(ref, str) or ":" not in ref:
            continue
        rid, idx = parse_ref(ref)
        results = inf.types.get(rid)
        if results and idx >= len(results) and not (len(results) == 1 and results[0].shape is None) and \
                rid in inf.ok:
            out.append(Finding(CONNECTIVITY_BAD_RESULT, "block", (rid,),
                               f"output {ref!r} reads result {idx} of {rid!r}, which has only {len(results)} "
                               "result(s)"))
    return out


def _check_ctx(design: Design, inf: Inference, cost: dict, wired: tuple | None = None) -> CheckCtx:
    nodes, operands, users = wired or wiring(design)
    return CheckCtx(design=design, inf=inf, cost=cost, nodes=nodes, users=users, operands=operands)


def _checks(design: Design, ctx: CheckCtx, guarded: bool) -> list:
    out: list = []
    ok = ctx.inf.ok
    for node in design.nodes:
        if node.id not in ok:
            continue  # a node that failed its own requirements is already refused; its args may be anything
        for spec, fn in NODE_CHECKS.get(node.op, ()):
            if guarded:
                out.extend(_run_check(spec, fn, (node, ctx), node.id))
            else:
                for item in fn(node, ctx) or ():
                    out.append(_finding(spec, item, node.id))
    for spec, fn in GRAPH_CHECKS:
        if guarded:
            out.extend(_run_check(spec, fn, (ctx,), None))
        else:
            for item in fn(ctx) or ():
                out.append(_finding(spec, item, None))
    return out


def _run_check(spec, fn, args, node_id) -> list:
    try:
        return [_finding(spec, item, node_id) for item in (fn(*args) or ())]
    except Exception:  # noqa: BLE001 - malformed values elsewhere in the design must not stop the verdict
        if not any(v.severity == "block" for v in args[-1].inf.violations):
            raise  # on a design that is otherwise sound, a crashing check is our bug: let the tests see it
        return []


def _finding(spec, item, node_id) -> Finding:
    if isinstance(item, str):
        return Finding(spec.id, spec.severity, (node_id,) if node_id else (), item)
    nodes, message = item
    return Finding(spec.id, spec.severity, tuple(nodes), message)


def _dedupe(findings: list[Finding]) -> list[Finding]:
    seen = set()
    out = []
    for f in findings:
        key = f.rule + "@" + ",".join(f.nodes)  # = f.key, without the cached property's lock per finding
        if key in seen:
            continue
        seen.add(key)
        out.append(f)
    return out



"""Differential testing: the verdict on random designs against what torch does with them.

`run_differential(first, count)` starts one child (`python -m
archcurator.core.ground.child --generate FIRST:END`) that draws each design
from `core.ground.generate` and runs it eagerly on the CPU; each design is
verified here as its line arrives. `summarize_differential(results)`
answers, overall and per op:

- agreement: block <=> torch fails;
- false blocks: a block on a design that ran;
- crashes without a block, split into those whose warn states a condition
  on a symbolic size (the verdict's promise allows those: "runs only when
  T = 768") and the rest (a broken promise);
- builder refusals apart from failures in torch itself.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from ..graph import Design
from ..ops.rules import SHAPE_SIZE_MEETS_WIDTH, SHAPE_SYMBOL_CONDITION

CONDITION_RULE = SHAPE_SYMBOL_CONDITION
CONDITION_RULES = (SHAPE_SYMBOL_CONDITION, SHAPE_SIZE_MEETS_WIDTH)  # the warns that state a condition on a size


@dataclass
class DiffResult:
    case: str
    graph: dict | None
    status: str
    exception: str | None
    origin: str | None
    node: str | None
    message: str
    verdict: str = ""
    blocking: list = field(default_factory=list)  # (rule, node ids) of block findings
    fired: list = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return self.status != "ok"

    @property
    def resource(self) -> bool:
        """Ended by the child's memory or time limit: neither ran nor failed on its shapes."""
        return self.status in ("killed", "timeout")

    @property
    def blocked(self) -> bool:
        return self.verdict == "block"

    @property
    def agrees(self) -> bool:
        return self.blocked == self.failed

    @property
    def conditional(self) -> bool:
        """The verdict states a condition on a symbolic size under which it runs."""
        return any(rule in self.fired for rule in CONDITION_RULES)

    def op_of(self, node_id: str | None) -> str | None:
        if not node_id or not self.graph:
            return None
        for n in self.graph.get("nodes", []):
            if n.get("id") == node_id:
                return n.get("op")
        return None

    def to_dict(self) -> dict:
        return {"case": self.case, "status": self.status, "exception": self.exception, "origin": self.origin,
                "node": self.node, "op": self.op_of(self.node), "message": self.message, "verdict": self.verdict,
                "blocking": self.blocking, "fired": self.fired, "agrees": self.agrees, "graph": self.graph}


def verify_result(r: DiffResult) -> None:
    from ..verify import verify_graph

    if r.graph is None or r.status == "skipped":
        r.verdict = "error"
        return
    try:
        report = verify_graph(Design.from_dict(r.graph))
    except Exception as exc:  # noqa: BLE001 - a verifier crash is a finding of this run, not its end
        r.verdict = "crash"
        r.fired = [f"verifier crash: {type(exc).__name__}: {exc}"[:200]]
        return
    r.verdict = report.verdict
    r.fired = sorted({f.rule for f in report.findings})
    r.blocking = [[f.rule, list(f.nodes)] for f in report.findings if f.severity == "block"]


def run_differential(first: int, count: int, *, timeout: float = 20.0,
                     on_result: Callable[[DiffResult], None] | None = None) -> list[DiffResult]:
    """Generate, run and verify the designs of seeds first..first+count-1."""
    results: list[DiffResult] = []
    seed = first
    end = first + count
    while seed < end:
        env = dict(os.environ)
        env.setdefault("PYTHONWARNINGS", "ignore")
        cmd = [sys.executable, "-m", "archcurator.core.ground.child", "--generate", f"{seed}:{end}",
               "--timeout", str(timeout), "--threads", "1"]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
        in_flight = None
        # the child's alarm cannot interrupt one long C call (a tensor that keeps growing, gen-65598): a child
        # silent past `stall` seconds is killed here, and its design recorded as killed
        last, done, stalled = [time.monotonic()], threading.Event(), threading.Event()
        stall = 3 * timeout + 10

        def watch(proc=proc, last=last, done=done, stalled=stalled, stall=stall):
            while not done.wait(1.0):
                if time.monotonic() - last[0] > stall:
                    stalled.set()
                    proc.kill()
                    return

        threading.Thread(target=watch, daemon=True).start()
        for line in proc.stdout:
            last[0] = time.monotonic()
            try:
                msg = json.loads(line)
            except json.JSONDecodeError:
                continue
            if "start" in msg:
                in_flight = msg["start"]
                continue
            r = DiffResult(msg["case"], msg.get("graph"), msg["status"], msg.get("exception"), msg.get("origin"),
                           msg.get("node"), msg.get("message", ""))
            verify_result(r)
            results.append(r)
            if on_result is not None:
                on_result(r)
            seed = int(r.case.split("-")[1]) + 1
            in_flight = None
        proc.wait()
        done.set()
        if seed < end:
            # the child died on a design: it is recorded as killed, the next child goes on after it
            dead = int((in_flight or f"gen-{seed}").split("-")[1])
            why = f"stalled past {stall:g} s" if stalled.is_set() else f"child exited {proc.returncode}"
            r = DiffResult(f"gen-{dead}", None, "killed", None, None, None, why)
            r.verdict = "error"
            results.append(r)
            seed = dead + 1
    return results


def summarize_differential(results: list[DiffResult]) -> dict:
    n = len(results)
    crashes = [r for r in results if r.verdict == "crash"]
    judged = [r for r in results if r.verdict not in ("error", "crash") and not r.resource]
    limited = [r for r in results if r.verdict not in ("error", "crash") and r.resource]
    tp = sum(1 for r in judged if r.blocked and r.failed)
    fp = [r for r in judged if r.blocked and not r.failed]
    missed = [r for r in judged if not r.blocked and r.failed]
    explained = [r for r in missed if r.conditional]
    unexplained = [r for r in missed if not r.conditional]
    tn = sum(1 for r in judged if not r.blocked and not r.failed)
    per_op: dict = {}

    def row(op):
        return per_op.setdefault(op, {"designs": 0, "agree": 0, "false_block": 0, "crash_no_block": 0,
                                      "crash_condition_warn": 0})

    for r in judged:
        ops = {n.get("op") for n in (r.graph or {}).get("nodes", [])}
        for op in ops:
            x = row(op)
            x["designs"] += 1
            x["agree"] += r.agrees
        if r in fp:
            for _rule, nodes in r.blocking:
                for nid in nodes[:1]:
                    row(r.op_of(nid) or "?")["false_block"] += 1
        elif not r.blocked and r.failed:
            key = "crash_condition_warn" if r.conditional else "crash_no_block"
            row(r.op_of(r.node) or "?")[key] += 1
    builder = sum(1 for r in judged if r.failed and r.origin == "builder")
    return {
        "designs": n,
        "judged": len(judged),
        "killed": n - len(judged) - len(crashes),
        # past the child's memory (killed) or time limit: not judged; what the verifier said of them
        "resource_limited": [{"case": r.case, "status": r.status, "message": r.message[:160],
                              "verdict": r.verdict, "fired": r.fired} for r in limited],
        "verifier_crashes": [r.case for r in crashes],
        "ran": sum(1 for r in judged if not r.failed),
        "failed_in_torch": sum(1 for r in judged if r.failed and r.origin != "builder"),
        "refused_by_builder": builder,
        "matrix": {"block_failed": tp, "block_ran": len(fp), "notblock_failed": len(missed), "notblock_ran": tn},
        "agreement": (tp + tn) / len(judged) if judged else 1.0,
        "agreement_counting_conditions": (tp + tn + len(explained)) / len(judged) if judged else 1.0,
        "false_blocks": [r.case for r in fp],
        "crashes_without_block": [r.case for r in unexplained],
        "crashes_with_condition_warn": [r.case for r in explained],
        "per_op": dict(sorted(per_op.items())),
    }


__all__ = ["DiffResult", "run_differential", "summarize_differential", "verify_result"]

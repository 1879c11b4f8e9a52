"""The grounding study: the verifier's verdicts against real torch runs.

`ground_set()` is the study: every clean zoo graph and every
corrupted variant. `run_study()` runs all of them in ONE child process
(`python -m archcurator.core.ground.child`, each graph under its own time limit),
verifies each one here meanwhile, and `summarize()` answers:

- the confusion matrix of verdict (block / not block) against observed
  failure (raised, or refused by the builder) — overall and per rule;
- the warn-only graphs that failed when run (there must be none);
- the corruptions whose claim (block / warn) the run contradicts.

`grounding_map()` is what the catalogue publishes: block rule -> the cases
that back it (verification fires the rule and the case claims block),
computed statically, smallest graph first.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from ..graph import Design

DEFAULT_TIMEOUT = 20.0


@dataclass
class CaseResult:
    case: str
    kind: str
    base: str
    expect: str
    rules: list  # the kind's target rules
    verdict: str = ""
    fired: list = field(default_factory=list)  # rule ids of the findings (sorted, unique)
    blocking: list = field(default_factory=list)  # rule ids of block findings
    status: str = ""  # ok | failed | timeout | killed
    origin: str | None = None  # of a failure: "torch" (torch raised, its constructors included) | "builder"
    exception: str | None = None
    message: str = ""
    stage: str = ""
    seconds: float = 0.0

    @property
    def blocked(self) -> bool:
        return self.verdict == "block"

    @property
    def failed(self) -> bool:
        return self.status in ("failed", "timeout", "killed")

    @property
    def agrees(self) -> bool:
        return self.blocked == self.failed

    @property
    def claim_holds(self) -> bool:
        """The corruption is what it claims: block kinds fail, warn kinds and clean graphs run (a random
        mutation claims nothing)."""
        if self.expect == "unknown":
            return True
        if self.expect == "block":
            return self.failed
        return not self.failed

    def to_dict(self) -> dict:
        return {"case": self.case, "kind": self.kind, "base": self.base, "expect": self.expect,
                "rules": self.rules, "verdict": self.verdict, "fired": self.fired, "blocking": self.blocking,
                "status": self.status, "origin": self.origin, "exception": self.exception, "message": self.message,
                "stage": self.stage, "seconds": self.seconds, "agrees": self.agrees}


# ---------------------------------------------------------------------------------------------
# verification (static)


def verify_case(case: dict) -> tuple[str, list, list]:
    from ..verify import verify_graph

    report = verify_graph(Design.from_dict(case["graph"]), with_cost=True)
    fired = sorted({f.rule for f in report.findings})
    blocking = sorted({f.rule for f in report.findings if f.severity == "block"})
    return report.verdict, fired, blocking


def grounding_map(cases: Iterable[dict] | None = None) -> dict[str, list[str]]:
    """Block rule id -> ids of the cases that back it: the case claims block and its
    verification fires the rule. Smallest graph first, then by case id."""
    from ..checks import CATALOGUE
    from .kinds import corruption_set

    cases = corruption_set() if cases is None else cases
    found: dict[str, list] = {}
    for case in cases:
        if case["expect"] != "block":
            continue
        _, _, blocking = verify_case(case)
        for rule in blocking:
            if CATALOGUE.get(rule) is not None and CATALOGUE[rule].severity == "block":
                found.setdefault(rule, []).append((len(case["graph"]["nodes"]), case["case"]))
    return {rule: [cid for _, cid in sorted(v)] for rule, v in sorted(found.items())}


# ---------------------------------------------------------------------------------------------
# the child


def child_command(cases_path: str, timeout: float, device: str, threads: int = 0, full: bool = False) -> list[str]:
    cmd = [sys.executable, "-m", "archcurator.core.ground.child", cases_path,
           "--timeout", str(timeout), "--device", device]
    if threads:
        cmd += ["--threads", str(threads)]
    if full:
        cmd.append("--full")
    return cmd


def observe_all(cases: list[dict], *, timeout: float = DEFAULT_TIMEOUT, device: str = "auto", threads: int = 0,
                full: bool = False, on_observation: Callable[[dict], None] | None = None,
                while_waiting: Callable[[], None] | None = None) -> dict[str, dict]:
    """Run every case's graph in one child process; case id -> observation.

    `while_waiting` runs here while the child starts (torch's import takes a while). If the child
    dies, the case in flight is recorded as `killed` and a new child takes the remaining cases.
    """
    observations: dict[str, dict] = {}
    remaining = list(cases)
    waiting = while_waiting
    while remaining:
        with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False, encoding="utf-8") as fh:
            for c in remaining:
                fh.write(json.dumps({"case": c["case"], "graph": c["graph"]}) + "\n")
            path = fh.name
        env = dict(os.environ)
        env.setdefault("PYTHONWARNINGS", "ignore")
        try:
            proc = subprocess.Popen(child_command(path, timeout, device, threads, full), stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True, env=env)
            err_chunks: list[str] = []
            drain = threading.Thread(target=lambda out=err_chunks, p=proc: out.append(p.stderr.read()), daemon=True)
            drain.start()
            if waiting is not None:
                waiting()
                waiting = None
            in_flight = None
            for line in proc.stdout:
                line = line.strip()
                if not line:
                    continue
                try:
                    msg = json.loads(line)
                except json.JSONDecodeError:
                    continue
                if "start" in msg:
                    in_flight = msg["start"]
                    continue
                observations[msg["case"]] = msg
                in_flight = None
                if on_observation is not None:
                    on_observation(msg)
            rc = proc.wait()
            drain.join(timeout=5)
        finally:
            os.unlink(path)
        done = set(observations)
        remaining = [c for c in remaining if c["case"] not in done]
        if not remaining:
            break
        # the child died: blame the case in flight (or the next one), then go on without it
        victim = in_flight or remaining[0]["case"]
        tail = "".join(err_chunks).strip().splitlines()[-1:] or [""]
        obs = {"case": victim, "status": "killed", "exception": None,
               "message": f"the ground child exited with {rc} on this graph: {tail[0][:200]}",
               "stage": "killed", "seconds": 0.0, "device": device}
        observations[victim] = obs
        if on_observation is not None:
            on_observation(obs)
        remaining = [c for c in remaining if c["case"] != victim]
    return observations


# ---------------------------------------------------------------------------------------------
# the study


def run_study(cases: list[dict], *, timeout: float = DEFAULT_TIMEOUT, device: str = "auto", threads: int = 0,
              full: bool = False, on_result: Callable[[CaseResult], None] | None = None) -> list[CaseResult]:
    """Verify and run every case; the results in the cases' order."""
    results = {c["case"]: CaseResult(c["case"], c.get("kind", ""), c.get("base", ""), c.get("expect", ""),
                                     list(c.get("rules", []))) for c in cases}
    verified = threading.Event()
    pending: list[dict] = []
    lock = threading.Lock()

    def verify_all():
        for c in cases:
            r = results[c["case"]]
            r.verdict, r.fired, r.blocking = verify_case(c)
        with lock:
            verified.set()
            for obs in pending:
                _record(obs)
            pending.clear()

    def _record(obs):
        r = results.get(obs["case"])
        if r is None:
            return
        r.status, r.exception = obs["status"], obs.get("exception")
        r.origin = obs.get("origin") if r.failed else None
        r.message, r.stage, r.seconds = obs.get("message", ""), obs.get("stage", ""), obs.get("seconds", 0.0)
        if on_result is not None:
            on_result(r)

    def on_observation(obs):
        with lock:
            if verified.is_set():
                _record(obs)
            else:
                pending.append(obs)

    observe_all(cases, timeout=timeout, device=device, threads=threads, full=full, on_observation=on_observation,
                while_waiting=verify_all)
    if not verified.is_set():
        verify_all()
    return [results[c["case"]] for c in cases]


def _arm(results: list[CaseResult]) -> dict:
    """The confusion matrix of one arm, with the failures in torch apart from our builder's refusals."""
    n = len(results)
    tp = sum(1 for r in results if r.blocked and r.failed)
    fp = sum(1 for r in results if r.blocked and not r.failed)
    fn = sum(1 for r in results if not r.blocked and r.failed)
    return {"graphs": n, "matrix": {"block_failed": tp, "block_ran": fp, "notblock_failed": fn,
                                    "notblock_ran": n - tp - fp - fn},
            "agreement": (n - fp - fn) / n if n else 1.0,
            # a graph stopped by the child's time or memory limit is neither torch's failure nor our refusal
            "failed_in_torch": sum(1 for r in results if r.status == "failed" and r.origin != "builder"),
            "refused_by_builder": sum(1 for r in results if r.status == "failed" and r.origin == "builder"),
            "timed_out_or_killed": sum(1 for r in results if r.status in ("timeout", "killed")),
            "ran": sum(1 for r in results if not r.failed),
            "disagreements": [r.case for r in results if not r.agrees],
            "warn_only_failed": [r.case for r in results if r.verdict == "warn" and r.failed]}


def summarize(results: list[CaseResult]) -> dict:
    """The study's answer. Mutations (the out-of-distribution arm) are summarised apart under
    "mutations" and left out of every other figure."""
    mutations = [r for r in results if r.kind == "mutation"]
    results = [r for r in results if r.kind != "mutation"]
    n = len(results)
    tp = sum(1 for r in results if r.blocked and r.failed)
    fp = sum(1 for r in results if r.blocked and not r.failed)
    fn = sum(1 for r in results if not r.blocked and r.failed)
    tn = sum(1 for r in results if not r.blocked and not r.failed)
    warn_failed = [r.case for r in results if r.verdict == "warn" and r.failed]
    per_rule: dict[str, dict] = {}
    from ..checks import CATALOGUE

    for r in results:
        for rule in r.fired:
            spec = CATALOGUE.get(rule)
            sev = spec.severity if spec else ("block" if rule in r.blocking else "warn")
            row = per_rule.setdefault(rule, {"severity": sev, "cases": 0, "failed": 0, "ran": 0})
            row["cases"] += 1
            row["failed" if r.failed else "ran"] += 1
    per_kind: dict[str, dict] = {}
    for r in results:
        row = per_kind.setdefault(r.kind, {"expect": r.expect, "cases": 0, "blocked": 0, "failed": 0, "agree": 0,
                                           "claim_holds": 0})
        row["cases"] += 1
        row["blocked"] += r.blocked
        row["failed"] += r.failed
        row["agree"] += r.agrees
        row["claim_holds"] += r.claim_holds
    exceptions: dict[str, int] = {}
    for r in results:
        if r.failed:
            key = r.exception or r.status
            exceptions[key] = exceptions.get(key, 0) + 1
    arm = _arm(results)
    return {
        "graphs": n,
        "failed_in_torch": arm["failed_in_torch"],
        "refused_by_builder": arm["refused_by_builder"],
        "timed_out_or_killed": arm["timed_out_or_killed"],
        "ran": arm["ran"],
        "clean": sum(1 for r in results if r.kind == "clean"),
        "corrupted": sum(1 for r in results if r.kind != "clean"),
        "matrix": {"block_failed": tp, "block_ran": fp, "notblock_failed": fn, "notblock_ran": tn},
        "agreement": (tp + tn) / n if n else 1.0,
        "disagreements": [r.case for r in results if not r.agrees],
        "warn_only_failed": warn_failed,
        "claims_broken": [r.case for r in results if not r.claim_holds],
        "timeouts": [r.case for r in results if r.status == "timeout"],
        "killed": [r.case for r in results if r.status == "killed"],
        "exceptions": dict(sorted(exceptions.items(), key=lambda kv: -kv[1])),
        "per_rule": dict(sorted(per_rule.items())),
        "per_kind": per_kind,
        "mutations": _arm(mutations),
    }


__all__ = ["CaseResult", "DEFAULT_TIMEOUT", "grounding_map", "observe_all", "run_study", "summarize",
           "verify_case"]

"""Repair: the smallest verified edits that remove every block of a design.

    from archcurator.core.repair import repair_design
    rep = repair_design(design_dict)          # pure: the verifier only, no torch
    rep.found, rep.design, rep.verdict        # the repaired archgraph/1 dict (None when not found)
    rep.repairs                               # one per block finding repaired, in order: RepairStep
    rep.prove(run)                            # optional: run(design_dict) -> RunResult; sets `ran`
    rep.to_dict()                             # `archcurator repair --json`'s answer (README)

For each block finding, candidate edits come from the finding's nodes, the op table's argument schema
and the rule's fix words (`candidates`); the search (`search`) tries them cheapest first, re-verifies
each, and keeps one only when the finding is gone and no other finding is worse. Every repair's
design is a whole archgraph/1 design: the original with that repair's edits and every one before it,
so the last one is the design with every block repaired. `ran` is true only when the design was built
and ran one forward pass in torch (the runs machinery: a child process under a time and memory limit).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..graph import Design
from .edits import apply_edit, apply_edits, describe
from .search import DEFAULT_MAX_CANDIDATES, DEFAULT_TIME_LIMIT_S, SearchResult, solutions

PROVE_TRIES = 3  # repairs `prove` runs in torch before it answers that none ran


@dataclass
class RepairStep:
    finding: dict  # the block finding this step repairs (SPEC §4's finding object)
    edits: list  # edit objects (core.repair.edits)
    design: dict | None  # the design after this step and every one before it; None: not repaired
    verdict: str
    ran: bool | None = None
    run: dict | None = None  # the run's answer when one was made

    def to_dict(self) -> dict:
        return {"finding": self.finding, "edits": self.edits, "design": self.design, "verdict": self.verdict,
                "ran": self.ran}


@dataclass
class Repair:
    original: dict
    original_report: object
    repairs: list = field(default_factory=list)
    found: bool = False
    tried: int = 0
    seconds: float = 0.0
    stopped: str | None = None
    run: dict | None = None
    runs_tried: int = 0  # repairs run in torch by `prove` (more than one when torch refused the first)
    _more: object = None  # the search, to go on from when torch refuses a repair

    @property
    def design(self) -> dict | None:
        return self.repairs[-1].design if self.found and self.repairs else (self.original if self.found else None)

    @property
    def verdict(self) -> str:
        if self.found and self.repairs:
            return self.repairs[-1].verdict
        return self.original_report.verdict

    @property
    def ran(self) -> bool | None:
        return self.repairs[-1].ran if self.found and self.repairs else None

    @property
    def edits(self) -> list:
        return [e for r in self.repairs if r.design is not None for e in r.edits]

    def prove(self, run, tries: int = PROVE_TRIES) -> bool | None:
        """Run the repaired design in torch with `run(design_dict) -> RunResult` (status "ok" is a run) and
        set `ran` on the repair whose design is the whole repair (earlier ones still block: not run).
        When torch refuses it (the verifier passed a design torch does not run), the next repair in cost
        order is searched and run, up to `tries` in all; the answer is the first that ran, else the first."""
        if not self.found or not self.repairs:
            return None
        first = None
        for attempt in range(tries):
            last = self.repairs[-1]
            result = run(last.design)
            last.ran = result.status == "ok"
            last.run = result.to_answer() if hasattr(result, "to_answer") else {"status": result.status}
            self.run = last.run
            self.runs_tried = attempt + 1
            if last.ran:
                return True
            first = first or (list(self.repairs), self.run)
            nxt = next(self._more, None) if self._more is not None else None
            if nxt is None or not nxt.solved:
                break
            self._take(nxt)
        self.repairs, self.run = first
        self.found = True
        return False

    def _take(self, res: SearchResult) -> None:
        self.found = res.solved
        self.tried += res.tried
        self.seconds += res.seconds
        self.stopped = res.stopped
        self.repairs = [RepairStep(st.finding.to_dict(), st.edits, st.d, st.report.verdict) for st in res.steps]
        if not res.solved and res.stuck_on is not None:
            self.repairs.append(RepairStep(res.stuck_on.to_dict(), [], None, "block"))

    def to_dict(self) -> dict:
        return {"design": self.design, "verdict": self.verdict, "ran": self.ran,
                "repairs": [r.to_dict() for r in self.repairs]}


def repair_design(design: dict | Design, *, time_limit_s: float = DEFAULT_TIME_LIMIT_S,
                  max_candidates: int = DEFAULT_MAX_CANDIDATES) -> Repair:
    """The cheapest verified repair of `design` (a dict or a Design), within the limits."""
    d = design.to_dict() if isinstance(design, Design) else design
    more = solutions(d, time_limit_s=time_limit_s, max_candidates=max_candidates)
    res: SearchResult = next(more)
    rep = Repair(d, res.original, _more=more)
    rep._take(res)
    return rep


__all__ = ["Repair", "RepairStep", "apply_edit", "apply_edits", "describe", "repair_design",
           "DEFAULT_MAX_CANDIDATES", "DEFAULT_TIME_LIMIT_S"]

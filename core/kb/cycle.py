"""The loop, as ArchitectureIQ runs it: answer with the pack, take the outcome, log every use, propose.

For each question of a stream (questions no cycle has answered yet), a
**solver** answers with the current pack and names the propositions it
invoked. The question's **outcome** is its executed record, or a run made
now (the caller passes ``execute``). Every invoked proposition gets a
**use**, ACE-style:

- ``helpful``: the winner is among the candidates it favoured;
- ``harmful``: the winner is among the candidates it disfavoured;
- ``neutral``: it said nothing about the winner (the winner is outside its
  scope, it no longer applies, or the question had no retained outcome).

The rules solver then **proposes** from the outcome when it was wrong or
nothing in the pack decided: a claim of the miner's vocabulary that singles
out this question's winner, scoped by this question's own features (its
family, and one dataset feature of its own when that scope holds better),
kept only when its record on the training questions inside that scope is
for it. Proposals are structures; the store enters them as ``proposed``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from .features import FEATURES, QuestionView, view
from .miner import claim_vocabulary, scope_vocabulary
from .pack import PackEntry, solver_entries
from .props import Condition, Structure, applies, judge
from .replay import rules_from_pack, solve
from .stats import wilson_lower

EFFECTS = ("helpful", "harmful", "neutral")
PROPOSE_MIN_SUPPORT = 3     # training supports a proposal needs inside its scope
CITE_TAG = re.compile(r"<used>(.*?)</used>", re.S | re.I)
CITE_INSTRUCTION = ("After your answer, name the knowledge-base propositions you relied on by their numbers, "
                    "e.g. <used>1, 4</used> (or <used></used> for none).")


@dataclass(frozen=True)
class Use:
    prop_id: int | str
    effect: str               # helpful | harmful | neutral
    favoured: tuple[str, ...]
    reason: str

    def to_dict(self) -> dict:
        return {"prop_id": self.prop_id, "effect": self.effect, "favoured": list(self.favoured),
                "reason": self.reason}


@dataclass
class Step:
    """One question of a cycle: the answer, the outcome, the uses, the proposals."""

    question_id: str
    answer: str | None                 # the solver's letter (None: it gave none)
    by: str                            # kb | fallback | llm | unparsed
    outcome: str | None                # the winner's letter (None: no retained outcome)
    outcome_from: str                  # record | executed
    reproduced: bool | None = None     # executed: the recorded winner came back
    uses: list[Use] = field(default_factory=list)
    proposals: list[Structure] = field(default_factory=list)
    note: str = ""

    @property
    def correct(self) -> bool | None:
        return None if self.outcome is None else self.answer == self.outcome

    def to_dict(self) -> dict:
        return {"question_id": self.question_id, "answer": self.answer, "by": self.by, "outcome": self.outcome,
                "outcome_from": self.outcome_from, "reproduced": self.reproduced, "correct": self.correct,
                "uses": [u.to_dict() for u in self.uses], "proposals": [p.key for p in self.proposals],
                "note": self.note}


def use_of(structure: Structure, q: QuestionView, winner: int | None) -> tuple[str, tuple[str, ...], str]:
    """(effect, favoured letters, why) of STRUCTURE invoked on Q whose winner is WINNER (an index)."""
    a = applies(structure, q)
    if a is None:
        return "neutral", (), "does not tell this question's candidates apart"
    keep, fav = a
    letters = tuple(sorted(q.letters[i] for i in fav))
    if winner is None:
        return "neutral", letters, "no retained outcome"
    w = q.letters[winner]
    if winner in fav:
        return "helpful", letters, f"favoured {','.join(letters)}; {w} won"
    if winner in keep:
        return "harmful", letters, f"favoured {','.join(letters)}; {w} won"
    return "neutral", letters, f"the winner {w} is outside its scope"


# --------------------------------------------------------------------------- solvers

class RulesSolver:
    """The replay's rule solver over the pack (weights fitted on the training questions): it reads
    the pack's live entries only, pinned ones first, in pack order (``replay.solve``)."""

    name = "rules"

    def __init__(self, entries: Sequence[PackEntry], train: Sequence[QuestionView]):
        self.entries = solver_entries(entries)
        self.rules = rules_from_pack(self.entries, train)

    def answer(self, q: dict, v: QuestionView) -> tuple[int | None, str, list]:
        a = solve(v, self.rules)
        return a.index, a.by, list(a.used)


class LLMSolver:
    """An OpenAI-compatible endpoint answers with the pack before the question and cites the
    propositions it relied on (<used>ranks</used>); without a citation, the pack propositions that
    apply to the question count as invoked."""

    name = "llm"

    def __init__(self, entries: Sequence[PackEntry], ask: Callable[[str], str]):
        self.entries = solver_entries(entries)
        self.ask = ask

    def answer(self, q: dict, v: QuestionView) -> tuple[int | None, str, list]:
        from .llm import full_prompt, parse_answer

        reply = self.ask(full_prompt(q, self.entries) + "\n" + CITE_INSTRUCTION + "\n")
        letter = parse_answer(reply, list(v.letters))
        cited = cited_ids(reply, self.entries)
        if cited is None:
            cited = [e.prop.id for e in self.entries if applies(e.prop.structure, v) is not None]
        if letter is None:
            return None, "unparsed", cited
        return v.letters.index(letter), "llm", cited


def cited_ids(reply: str, entries: Sequence[PackEntry]) -> list | None:
    """Proposition ids named in the reply's last <used> tag (pack ranks), None when it has none."""
    found = CITE_TAG.findall(reply or "")
    if not found:
        return None
    by_rank = {e.rank: e.prop.id for e in entries}
    out = []
    for tok in re.findall(r"\d+", found[-1]):
        pid = by_rank.get(int(tok))
        if pid is not None and pid not in out:
            out.append(pid)
    return out


# --------------------------------------------------------------------------- proposing

class Proposer:
    """Proposals from one outcome: the miner's claims that single out the winner, scoped by the
    question's own features, judged on the training questions inside that scope."""

    def __init__(self, train: Sequence[QuestionView]):
        self.train = [q for q in train if q.winner >= 0]
        self.claims = claim_vocabulary(self.train)
        self.scopes = [c for c in scope_vocabulary(self.train) if FEATURES[c.feature][0] == "question"
                       and c.feature not in ("family", "task", "category")]
        self._by_family: dict[str, list[QuestionView]] = {}
        for q in self.train:
            self._by_family.setdefault(q.family, []).append(q)

    def _record(self, st: Structure, qs: Sequence[QuestionView]) -> tuple[int, int]:
        s = c = 0
        for q in qs:
            v = judge(st, q)
            if v is not None:
                s, c = (s + 1, c) if v.verdict == "support" else (s, c + 1)
        return s, c

    def propose(self, q: QuestionView, winner: int, known: set[str], limit: int = 1) -> list[Structure]:
        fam = Condition("family", "==", q.family.lower())
        own = [c for c in self.scopes if c.holds(q.cands[0])]
        pool = self._by_family.get(q.family, [])
        found: list[tuple[float, int, Structure]] = []
        for claim in self.claims:
            a = applies(Structure((), claim), q)
            if a is None or a[1] != {winner}:
                continue   # the claim does not single out this question's winner
            best: tuple[float, int, Structure] | None = None
            for extra in (None, *own):
                scope = (fam,) if extra is None else tuple(sorted((fam, extra), key=lambda c: c.key))
                st = Structure(scope, claim)
                s, c = self._record(st, pool)
                if s < PROPOSE_MIN_SUPPORT or s <= c:
                    continue
                lb = wilson_lower(s, s + c)
                if best is None or lb > best[0] + 1e-9:   # a narrower scope must hold better
                    best = (lb, s, st)
            if best is not None and best[2].key not in known:
                found.append(best)
        found.sort(key=lambda t: (-t[0], -t[1], t[2].key))
        return [st for _, _, st in found[:limit]]


# --------------------------------------------------------------------------- the loop

def run_cycle(questions: Sequence[dict], solver, train: Sequence[QuestionView], *,
              execute: Callable[[dict], dict] | None = None, known: set[str] | None = None,
              propose: bool = True, progress: Callable[[int, int], None] | None = None) -> list[Step]:
    """Answer each of QUESTIONS with SOLVER, take its outcome (its record, or EXECUTE(question) →
    core.aiq.execute.execute_question's answer), log the uses, and propose (rules solver)."""
    known = set(known or ())
    proposer = Proposer(train) if propose else None
    steps = []
    for i, q in enumerate(questions, 1):
        v = view(q)
        idx, by, invoked = solver.answer(q, v)
        answer = v.letters[idx] if idx is not None else None
        outcome_from, reproduced, note = "record", None, ""
        winner: int | None = v.winner if v.winner >= 0 else None
        if execute is not None:
            out = execute(q)
            outcome_from = "executed"
            reproduced = bool(out["reproduced"])
            sig = out["significance"]
            if sig["passed"]:
                winner = v.letters.index(out["winner_letter"])
                note = "re-executed; " + ("the recorded winner came back" if reproduced else
                                          f"winner {out['winner_letter']} (recorded {q['correct_letter']})")
            else:
                winner = None
                note = f"re-executed; not retained by the rule ({sig['reason']})"
        entries = {e.prop.id: e for e in getattr(solver, "entries", [])}
        uses = []
        for pid in invoked:
            e = entries.get(pid)
            if e is None:
                continue
            effect, fav, why = use_of(e.prop.structure, v, winner)
            uses.append(Use(pid, effect, fav, why))
        step = Step(q["question_id"], answer, by, v.letters[winner] if winner is not None else None, outcome_from,
                    reproduced, uses, [], note)
        if proposer is not None and winner is not None and (step.correct is False or by != "kb"):
            step.proposals = proposer.propose(v, winner, known)
            known |= {p.key for p in step.proposals}
        steps.append(step)
        if progress is not None:
            progress(i, len(questions))
    return steps


def summary(steps: Sequence[Step]) -> dict:
    answered = [s for s in steps if s.outcome is not None]
    uses = {e: sum(1 for s in steps for u in s.uses if u.effect == e) for e in EFFECTS}
    return {"questions": len(steps), "with_outcome": len(answered),
            "correct": sum(1 for s in answered if s.correct), "uses": uses,
            "proposed": sum(len(s.proposals) for s in steps),
            "executed": sum(1 for s in steps if s.outcome_from == "executed"),
            "reproduced": sum(1 for s in steps if s.reproduced)}

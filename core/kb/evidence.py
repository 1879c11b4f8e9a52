"""Evidence: one row per proposition and question, derived from executed outcomes.

``derive`` judges every question of the evidence split (``train`` by
default: the replay's ``test`` questions stay unseen) and keeps a row where
the question supports or contradicts the structure. ``recheck`` re-judges
existing rows under a new structure (a narrowed child): rows whose question
now falls outside the scope become ``inapplicable``. ``union`` merges two
propositions' rows, one per question (the first argument's row wins).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, replace

from .features import QuestionView
from .props import Structure, judge

VERDICTS = ("support", "contradict", "inapplicable")
EVIDENCE_SPLITS = ("train",)


@dataclass(frozen=True)
class EvidenceRow:
    question_id: str
    verdict: str        # support | contradict | inapplicable
    reason: str
    split: str
    via: str = "derived"   # derived | merged from P<n> | narrowed from P<n>

    def to_dict(self) -> dict:
        return asdict(self)


def derive(structure: Structure, views: Iterable[QuestionView], splits=EVIDENCE_SPLITS) -> list[EvidenceRow]:
    rows = []
    for q in views:
        if splits and q.split not in splits:
            continue
        v = judge(structure, q)
        if v is not None:
            rows.append(EvidenceRow(q.question_id, v.verdict, v.reason, q.split))
    return rows


def recheck(rows: Iterable[EvidenceRow], structure: Structure, views_by_id: dict[str, QuestionView],
            via: str) -> list[EvidenceRow]:
    out = []
    for r in rows:
        q = views_by_id.get(r.question_id)
        v = judge(structure, q) if q is not None else None
        if v is None:
            why = "outside the narrowed scope" if q is not None else "question no longer stored"
            out.append(EvidenceRow(r.question_id, "inapplicable", why, r.split, via))
        else:
            out.append(EvidenceRow(r.question_id, v.verdict, v.reason, r.split, via))
    return out


def union(first: Iterable[EvidenceRow], second: Iterable[EvidenceRow], via_second: str) -> list[EvidenceRow]:
    """All of FIRST, plus SECOND's rows for questions FIRST has no row for."""
    out = {r.question_id: r for r in first}
    for r in second:
        if r.question_id not in out:
            out[r.question_id] = replace(r, via=via_second if r.via == "derived" else r.via)
    return sorted(out.values(), key=lambda r: r.question_id)


def counts(rows: Iterable[EvidenceRow]) -> dict[str, int]:
    c = {"support": 0, "contradict": 0, "inapplicable": 0}
    for r in rows:
        c[r.verdict] = c.get(r.verdict, 0) + 1
    return c

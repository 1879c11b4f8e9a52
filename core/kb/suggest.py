"""Suggestions for the curator: near-duplicates and narrowing candidates. Never applied by themselves.

**Near-duplicates**: structure first — the same structure, or the same claim
with one scope inside the other — then text: rapidfuzz's token-set ratio
surfaces pairs whose wording is close though their structures differ. Pairs
the curator marked distinct are never suggested again.

**Narrowing**: a proposition with contradictions where one added condition
keeps most of its supports and drops most of its contradictions.

**Clusters** (for the pack's one-per-cluster rule): connected components of
the duplicate pairs, distinct pairs cut.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from .evidence import EvidenceRow, counts, recheck
from .features import QuestionView
from .props import Condition, Structure

TEXT_THRESHOLD = 80.0   # token-set ratio to surface a pair on text alone
CLUSTER_TEXT = 90.0     # ... to count it as the same cluster in the pack


@dataclass(frozen=True)
class PropLite:
    """What suggestions and the pack need of a stored proposition."""

    id: int | str  # a stored proposition's id; a raw miner pack's entries are "m1", "m2", ...
    text: str
    structure: Structure
    status: str = "active"
    pinned: bool = False
    support: int = 0
    contradict: int = 0


@dataclass(frozen=True)
class DuplicatePair:
    a: int
    b: int
    kind: str        # same structure | nested scope | similar text
    score: float     # 0..100
    reason: str

    def to_dict(self) -> dict:
        return {"a": self.a, "b": self.b, "kind": self.kind, "score": round(self.score, 1), "reason": self.reason}


def _key(a: int, b: int) -> tuple[int, int]:
    return (a, b) if a < b else (b, a)


def duplicate_pairs(props: Sequence[PropLite], distinct: Iterable[tuple[int, int]] = (),
                    text_threshold: float = TEXT_THRESHOLD) -> list[DuplicatePair]:
    from rapidfuzz import fuzz

    cut = {_key(*p) for p in distinct}
    out: list[DuplicatePair] = []
    items = sorted(props, key=lambda p: p.id)
    for i, a in enumerate(items):
        for b in items[i + 1:]:
            if _key(a.id, b.id) in cut:
                continue
            sa, sb = a.structure, b.structure
            text = fuzz.token_set_ratio(a.text.lower(), b.text.lower())
            if sa.key == sb.key:
                out.append(DuplicatePair(a.id, b.id, "same structure", 100.0, f"both: {sa.key}"))
            elif sa.claim == sb.claim and (set(sa.scope) < set(sb.scope) or set(sb.scope) < set(sa.scope)):
                narrow, wide = (a, b) if len(sa.scope) > len(sb.scope) else (b, a)
                extra = set(narrow.structure.scope) - set(wide.structure.scope)
                added = ", ".join(str(c) for c in sorted(extra, key=lambda c: c.key))
                out.append(DuplicatePair(a.id, b.id, "nested scope", 90.0, f"same claim; P{narrow.id} adds {added}"))
            elif text >= text_threshold:
                out.append(DuplicatePair(a.id, b.id, "similar text", float(text), f"text similarity {text:.0f}"))
    order = {"same structure": 0, "nested scope": 1, "similar text": 2}
    out.sort(key=lambda d: (order[d.kind], -d.score, d.a, d.b))
    return out


def clusters(props: Sequence[PropLite], distinct: Iterable[tuple[int, int]] = ()) -> dict[int, int]:
    """prop id -> cluster id (the smallest member's id)."""
    parent = {p.id: p.id for p in props}

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for d in duplicate_pairs(props, distinct, text_threshold=CLUSTER_TEXT):
        ra, rb = find(d.a), find(d.b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    return {p.id: find(p.id) for p in props}


@dataclass(frozen=True)
class NarrowSuggestion:
    prop_id: int
    condition: Condition
    support_before: int
    contradict_before: int
    support_after: int
    contradict_after: int
    reason: str = field(default="")

    def to_dict(self) -> dict:
        return {"prop_id": self.prop_id, "condition": str(self.condition),
                "before": {"support": self.support_before, "contradict": self.contradict_before},
                "after": {"support": self.support_after, "contradict": self.contradict_after},
                "reason": self.reason}


def narrowing(prop: PropLite, rows: Sequence[EvidenceRow], views_by_id: dict[str, QuestionView],
              vocabulary: Sequence[Condition], *, top: int = 3) -> list[NarrowSuggestion]:
    """Conditions that separate PROP's supports from its contradictions, best first."""
    live = [r for r in rows if r.verdict in ("support", "contradict")]
    before = counts(live)
    s0, c0 = before["support"], before["contradict"]
    if c0 == 0 or s0 == 0:
        return []
    have = set(prop.structure.scope)
    sup = [r for r in live if r.verdict == "support"]
    con = [r for r in live if r.verdict == "contradict"]
    out = []
    for cond in vocabulary:
        if cond in have or any(c.feature == cond.feature for c in have):
            continue
        child = prop.structure.narrowed([cond])
        # contradictions first: most conditions drop none and are skipped cheaply
        c1 = counts(recheck(con, child, views_by_id, via="suggestion"))["contradict"]
        if c1 >= c0 or 1 - c1 / c0 < 0.5:
            continue
        s1 = counts(recheck(sup, child, views_by_id, via="suggestion"))["support"]
        if s1 == 0 or s1 / s0 < 0.5:
            continue
        kept_s, dropped_c = s1 / s0, 1 - c1 / c0
        score = kept_s + dropped_c
        out.append((score, NarrowSuggestion(prop.id, cond, s0, c0, s1, c1,
                                            f"keeps {s1}/{s0} supports, leaves {c1}/{c0} contradictions")))
    out.sort(key=lambda t: (-t[0], str(t[1].condition)))
    return [n for _, n in out[:top]]

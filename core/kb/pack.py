"""The prompt pack: at most 20 live propositions for a solver.

Order of entry:
1. pinned propositions (the curator's call; they enter whatever their evidence);
2. tested propositions by the Wilson 95% lower bound of supports out of
   supports + contradictions (ties: more supports, then the lower id); a
   tested proposition contradicted at least as often as supported never
   enters;
3. up to 3 untested propositions (no evidence yet) in the slots kept for them.

Only one proposition per duplicate cluster enters (the first in this order).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass

from .stats import wilson_lower
from .suggest import PropLite

CAP = 20
UNTESTED_SLOTS = 3


@dataclass(frozen=True)
class PackEntry:
    rank: int
    prop: PropLite
    lower: float
    reason: str          # pinned | evidence | untested
    cluster: int

    def to_dict(self) -> dict:
        p = self.prop
        return {
            "rank": self.rank, "id": p.id, "text": p.text,
            "scope": [str(c) for c in p.structure.scope],
            "claim": p.structure.claim.to_obj(),
            "claim_text": str(p.structure.claim),
            "pinned": p.pinned, "status": p.status,
            "supports": p.support, "contradicts": p.contradict,
            "wilson_lower": round(self.lower, 4),
            "entered_as": self.reason, "cluster": self.cluster,
        }


def build_pack(props: Sequence[PropLite], cluster_of: dict[int, int] | None = None, *, cap: int = CAP,
               untested_slots: int = UNTESTED_SLOTS) -> list[PackEntry]:
    cluster_of = cluster_of or {p.id: p.id for p in props}
    live = [p for p in props if p.status in ("active", "proposed")]
    lb = {p.id: wilson_lower(p.support, p.support + p.contradict) for p in live}
    pinned = sorted((p for p in live if p.pinned), key=lambda p: (-lb[p.id], p.id))
    tested = sorted((p for p in live if not p.pinned and p.support + p.contradict > 0 and p.support > p.contradict),
                    key=lambda p: (-lb[p.id], -p.support, p.id))
    untested = sorted((p for p in live if not p.pinned and p.support + p.contradict == 0), key=lambda p: p.id)
    used: set[int] = set()
    out: list[PackEntry] = []

    def add(p: PropLite, why: str) -> bool:
        c = cluster_of.get(p.id, p.id)
        if c in used or len(out) >= cap:
            return False
        used.add(c)
        out.append(PackEntry(len(out) + 1, p, lb[p.id], why, c))
        return True

    for p in pinned:
        add(p, "pinned")
    # keep room for the untested, as many as there are (up to the slots)
    free_untested = [p for p in untested if cluster_of.get(p.id, p.id) not in used]
    reserve = min(untested_slots, len({cluster_of.get(p.id, p.id) for p in free_untested}))
    for p in tested:
        if len(out) >= cap - reserve:
            break
        add(p, "evidence")
    n_untested = 0
    for p in untested:
        if n_untested >= untested_slots:
            break
        if add(p, "untested"):
            n_untested += 1
    return out


def pack_json(entries: Sequence[PackEntry], **meta) -> dict:
    return {"propositions": [e.to_dict() for e in entries], "cap": CAP, "count": len(entries), **meta}


def pack_text(entries: Sequence[PackEntry]) -> str:
    lines = [f"Knowledge base ({len(entries)} of at most {CAP} propositions; pinned first, then by evidence)"]
    for e in entries:
        p = e.prop
        tag = "pinned; " if p.pinned else ""
        ev = "untested" if e.reason == "untested" else f"{p.support} for, {p.contradict} against"
        lines.append(f"{e.rank}. {p.text} [{tag}{ev}]")
    return "\n".join(lines) + "\n"


def content_hash(content: str) -> str:
    return hashlib.sha256(content.encode()).hexdigest()


def canonical(obj: dict) -> str:
    return json.dumps(obj, sort_keys=True, indent=2) + "\n"

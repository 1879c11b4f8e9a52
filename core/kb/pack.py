"""The prompt pack: at most 20 live propositions for a solver.

Order of entry:
1. pinned propositions — the curator's call: every one enters, whatever its
   evidence and whichever cluster it shares (the store refuses a pin past
   the cap, so they always fit);
2. tested propositions by the Wilson 95% lower bound of supports out of
   supports + contradictions (ties: more supports, then the lower id); a
   tested proposition contradicted at least as often as supported never
   enters;
3. up to 3 untested propositions (no evidence yet) in the slots kept for them.

Only one proposition per duplicate cluster enters from 2 and 3 (the first
in this order, or none when a pinned one holds the cluster). ``pack_status``
says for every proposition its rank, or why it is out.
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
LIVE = ("active", "proposed")   # the statuses that may answer; rejected, retired and merged never do


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


def _plan(props: Sequence[PropLite], cluster_of: dict[int, int] | None, cap: int, untested_slots: int
          ) -> tuple[list[PackEntry], dict[int, str]]:
    cluster_of = cluster_of or {p.id: p.id for p in props}
    live = [p for p in props if p.status in LIVE]
    lb = {p.id: wilson_lower(p.support, p.support + p.contradict) for p in live}
    pinned = sorted((p for p in live if p.pinned), key=lambda p: (-lb[p.id], p.id))
    tested = sorted((p for p in live if not p.pinned and p.support + p.contradict > 0),
                    key=lambda p: (-lb[p.id], -p.support, p.id))
    untested = sorted((p for p in live if not p.pinned and p.support + p.contradict == 0), key=lambda p: p.id)
    holder: dict[int, int] = {}
    out: list[PackEntry] = []
    why: dict[int, str] = {p.id: f"not live ({p.status})" for p in props if p not in live}

    def add(p: PropLite, reason: str) -> None:
        c = cluster_of.get(p.id, p.id)
        holder.setdefault(c, p.id)
        out.append(PackEntry(len(out) + 1, p, lb[p.id], reason, c))

    for p in pinned:
        if len(out) >= cap:  # only when more pins than slots were stored before the cap was enforced
            why[p.id] = f"pinned, but {len(pinned)} pins exceed the cap of {cap}"
            continue
        add(p, "pinned")
    free_untested = {cluster_of.get(p.id, p.id) for p in untested} - set(holder)
    reserve = min(untested_slots, len(free_untested))
    for p in tested:
        c = cluster_of.get(p.id, p.id)
        if p.support <= p.contradict:
            why[p.id] = f"contradicted as often as supported or more ({p.support} for, {p.contradict} against)"
        elif c in holder:
            why[p.id] = f"a duplicate of P{holder[c]}, which holds its cluster in the pack"
        elif len(out) >= cap - reserve:
            why[p.id] = f"below the cut: {cap - reserve} slots for tested propositions are taken by stronger ones"
        else:
            add(p, "evidence")
    n_untested = 0
    for p in untested:
        c = cluster_of.get(p.id, p.id)
        if c in holder:
            why[p.id] = f"a duplicate of P{holder[c]}, which holds its cluster in the pack"
        elif n_untested >= untested_slots or len(out) >= cap:
            why[p.id] = f"untested, and the {untested_slots} slots kept for untested propositions are taken"
        else:
            add(p, "untested")
            n_untested += 1
    return out, why


def build_pack(props: Sequence[PropLite], cluster_of: dict[int, int] | None = None, *, cap: int = CAP,
               untested_slots: int = UNTESTED_SLOTS) -> list[PackEntry]:
    return _plan(props, cluster_of, cap, untested_slots)[0]


def pack_status(props: Sequence[PropLite], cluster_of: dict[int, int] | None = None, *, cap: int = CAP,
                untested_slots: int = UNTESTED_SLOTS) -> dict[int, tuple[int | None, str]]:
    """Every proposition: (its rank in the pack, how it entered) or (None, why it is out)."""
    entries, why = _plan(props, cluster_of, cap, untested_slots)
    out: dict[int, tuple[int | None, str]] = {e.prop.id: (e.rank, e.reason) for e in entries}
    for pid, reason in why.items():
        out.setdefault(pid, (None, reason))
    return out


def solver_entries(entries: Sequence[PackEntry]) -> list[PackEntry]:
    """What a solver reads of a pack: its live entries, in pack order (rank). A pack file may carry
    a proposition curated out since it was written; that one never answers."""
    return sorted((e for e in entries if e.prop.status in LIVE), key=lambda e: e.rank)


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


class PackFileError(ValueError):
    """A pack file that cannot be read; one line (the caller names the file)."""


MAX_PACK_BYTES = 8 << 20


def read_pack(path) -> list[PackEntry]:
    """A pack written by `kb pack --json` (or `--out FILE.json`), as entries in its order: what a
    replay of that pack version reads. Read at the JSON door (a regular file, capped, no NaN)."""
    from .. import jsontext
    from .props import PropError, Structure, clean_text

    try:
        text = jsontext.read_file(path, limit=MAX_PACK_BYTES)
    except (OSError, UnicodeDecodeError, jsontext.FileRefused) as e:
        raise PackFileError(jsontext.read_problem(e).replace("to be a design", "to be a pack")) from None
    try:
        obj = jsontext.loads(text)
    except ValueError as e:
        raise PackFileError(f"not JSON: {str(e)[:200]}") from None
    props = obj.get("propositions") if isinstance(obj, dict) else None
    if not isinstance(props, list):
        raise PackFileError("not a pack: no 'propositions' list (write one with `kb pack --json`)")
    if len(props) > CAP:
        raise PackFileError(f"{len(props)} propositions; a pack holds at most {CAP}")
    out = []
    for i, p in enumerate(props, 1):
        try:
            if not isinstance(p, dict):
                raise PropError("a proposition is an object")
            st = Structure.from_obj(p.get("scope") or [], p.get("claim"))
            text = clean_text(p.get("text") or st.render())
            pid = p.get("id", f"#{i}")
            if not isinstance(pid, (int, str)) or isinstance(pid, bool):
                raise PropError("'id' is a number or a name")
            lite = PropLite(pid, text, st, str(p.get("status") or "active"), bool(p.get("pinned")),
                            int(p.get("supports") or 0), int(p.get("contradicts") or 0))
        except (PropError, TypeError, ValueError) as e:
            raise PackFileError(f"proposition {i}: {e}") from None
        out.append(PackEntry(i, lite, float(p.get("wilson_lower") or 0.0), str(p.get("entered_as") or "file"), i))
    return out

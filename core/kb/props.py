"""Propositions: text plus a structured form that the evidence and the solver read.

A proposition has a **scope** — conditions over question and candidate
features, all of which must hold (``budget < 4096``, ``optimizer == sgd``,
``momentum == 0``) — and a **claim** about which candidate wins:

- ``{"kind": "wins",  "when": [conditions]}``: a candidate meeting the
  ``when`` conditions wins;
- ``{"kind": "loses", "when": [conditions]}``: a candidate meeting them does
  not win;
- ``{"kind": "prefer", "feature": F, "direction": "higher"|"lower"}``: the
  candidate with the highest (lowest) F wins.

How a question is judged (``judge``): the scope keeps the candidates that
meet it (a condition on a question-level feature keeps all or none). The
claim is *tested* by the question when at least two candidates remain, the
claim tells them apart, and the question's winner is among them. Then the
question **supports** it (the winner is the one the claim points to) or
**contradicts** it. Otherwise the question says nothing about it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from .features import FEATURES, QuestionView

OPS = ("==", "!=", "<=", ">=", "<", ">", "in")
_COND_RE = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(==|!=|<=|>=|<|>|=|\bin\b)\s*(.+?)\s*$")


class PropError(ValueError):
    """A proposition that does not hold together; one line."""


MAX_VALUES = 32        # names in one 'in' condition
MAX_VALUE_CHARS = 64   # characters of one value (an optimizer's, an activation's name)
MAX_TEXT = 1000   # characters of a proposition's words: one line of a prompt pack, not a document
# What a proposition's words may not hold: control characters (a terminal escape among them) and the
# invisible format characters that reorder or hide text (bidirectional overrides, zero-width marks).
# Whitespace (a newline, a tab) is folded to one space instead: the pack gives each proposition one
# line, so a newline in the words would start what reads as another proposition of the prompt.
_NOT_PLAIN = re.compile("[\x00-\x08\x0e-\x1f\x7f-\x9f\u00ad\u200b-\u200f\u202a-\u202e\u2060-\u2064"
                        "\u2066-\u2069\ufeff]")


def clean_text(text: str, *, what: str = "text", limit: int = MAX_TEXT) -> str:
    """A proposition's words as stored: whitespace folded to single spaces; PropError when empty,
    longer than LIMIT characters, or holding a control or invisible format character."""
    if not isinstance(text, str):
        raise PropError(f"'{what}' is a string, not {type(text).__name__}")
    folded = " ".join(text.split())
    if not folded:
        raise PropError(f"'{what}' is empty")
    if len(folded) > limit:
        raise PropError(f"'{what}' is {len(folded):,} characters long (at most {limit:,})")
    m = _NOT_PLAIN.search(folded)
    if m:
        raise PropError(f"'{what}' holds the control character U+{ord(m.group()):04X} (plain text only)")
    return folded


def _coerce(v: Any) -> Any:
    if isinstance(v, (bool, int, float)) or v is None:
        return v
    if isinstance(v, list):
        return [_coerce(x) for x in v]
    s = str(v).strip().strip("'\"")
    low = s.lower()
    if low in ("true", "yes"):
        return True
    if low in ("false", "no"):
        return False
    try:
        f = float(s)
        return int(f) if f.is_integer() and "e" not in low and "." not in s else f
    except ValueError:
        return low


@dataclass(frozen=True)
class Condition:
    feature: str
    op: str
    value: Any

    def __post_init__(self) -> None:
        if self.op not in OPS:
            raise PropError(f"unknown operator {_short(self.op)} (use {', '.join(OPS)})")
        if not isinstance(self.feature, str) or self.feature not in FEATURES:
            raise PropError(f"unknown feature {_short(self.feature)} (known: {', '.join(sorted(FEATURES))})")
        values = self.value if self.op == "in" else (self.value,)
        if self.op == "in" and not 0 < len(values) <= MAX_VALUES:
            raise PropError(f"an 'in' condition names 1 to {MAX_VALUES} values, not {len(values)}")
        for v in values:
            if isinstance(v, float) and not math.isfinite(v):
                raise PropError(f"{self.feature}: {v} is not a finite number")
            if isinstance(v, str) and len(v) > MAX_VALUE_CHARS:
                raise PropError(f"{self.feature}: a value of {len(v):,} characters (at most {MAX_VALUE_CHARS})")

    @classmethod
    def parse(cls, text: str) -> Condition:
        m = _COND_RE.match(text)
        if not m:
            raise PropError(f"cannot read condition {_short(text)} (expected e.g. 'budget < 4096')")
        feat, op, val = m.group(1), m.group(2), m.group(3)
        op = "==" if op == "=" else op
        if op == "in":
            vals = [x for x in re.split(r"[,\s]+", val.strip("[]() ")) if x]
            return cls(feat, "in", tuple(_coerce(x) for x in vals))
        return cls(feat, op, _coerce(val))

    @classmethod
    def from_obj(cls, o: Any) -> Condition:
        if isinstance(o, str):
            return cls.parse(o)
        if isinstance(o, dict):
            v = o.get("value")
            op = o.get("op", "==")
            op = "==" if op == "=" else op
            if not isinstance(o.get("feature"), str) or not isinstance(op, str):
                raise PropError(f"a condition's feature and op are names: {_short(o)}")
            if op == "in":
                if isinstance(v, str):
                    v = [x for x in re.split(r"[,\s]+", v.strip("[]() ")) if x]
                if not isinstance(v, (list, tuple)) or not all(_scalar(x) for x in v):
                    raise PropError(f"an 'in' condition's value is a list of names or numbers: {_short(o)}")
                return cls(o["feature"], op, tuple(_coerce(x) for x in v))
            if not _scalar(v):
                raise PropError(f"a condition's value is a name or a number: {_short(o)}")
            return cls(o["feature"], op, _coerce(v))
        if isinstance(o, (list, tuple)) and len(o) == 3:
            return cls.from_obj({"feature": o[0], "op": o[1], "value": o[2]})
        raise PropError(f"cannot read condition {_short(o)}")

    def to_obj(self) -> dict:
        return {"feature": self.feature, "op": self.op, "value": list(self.value) if self.op == "in" else self.value}

    def holds(self, row: dict) -> bool:
        if self.feature not in row or row[self.feature] is None:
            return False
        x = row[self.feature]
        v = self.value
        if isinstance(x, str):
            x = x.lower()
        try:
            if self.op == "==":
                return x == v
            if self.op == "!=":
                return x != v
            if self.op == "in":
                return x in v
            if isinstance(x, bool) or isinstance(v, (bool, str)):
                return False
            return {"<": x < v, "<=": x <= v, ">": x > v, ">=": x >= v}[self.op]
        except TypeError:
            return False

    def __str__(self) -> str:
        if self.op == "in":
            return f"{self.feature} in {','.join(str(x) for x in self.value)}"
        v = self.value
        if isinstance(v, bool):
            v = str(v).lower()
        elif isinstance(v, float):
            v = f"{v:g}"
        return f"{self.feature} {self.op} {v}"

    @cached_property
    def key(self) -> str:
        return str(self)


def _scalar(v: Any) -> bool:
    return isinstance(v, (str, bool, int, float))


def _short(o: Any, limit: int = 80) -> str:
    """A value named in an error: its repr, cut (a hostile file's value may be megabytes)."""
    r = repr(o)
    return r if len(r) <= limit else r[:limit] + "..."


MAX_CONDITIONS = 12   # in a scope or a claim: more is not a proposition a solver can read


def conditions(objs: Iterable[Any]) -> tuple[Condition, ...]:
    if isinstance(objs, (str, dict)) or not isinstance(objs, (list, tuple)) and objs is not None:
        raise PropError(f"conditions come as a list: {_short(objs)}")
    out = tuple(sorted({Condition.from_obj(o) for o in objs or ()}, key=lambda c: c.key))
    if len(out) > MAX_CONDITIONS:
        raise PropError(f"{len(out)} conditions (at most {MAX_CONDITIONS})")
    return out


@dataclass(frozen=True)
class Claim:
    kind: str                       # wins | loses | prefer
    when: tuple[Condition, ...] = ()
    feature: str | None = None      # prefer
    direction: str | None = None    # prefer: higher | lower

    def __post_init__(self) -> None:
        if self.kind in ("wins", "loses"):
            if not self.when:
                raise PropError(f"a '{self.kind}' claim needs conditions naming which candidate")
        elif self.kind == "prefer":
            numeric = isinstance(self.feature, str) and FEATURES.get(self.feature, (None, None))[1] == "num"
            if not numeric:
                raise PropError(f"a 'prefer' claim needs a numeric candidate feature, got {_short(self.feature)}")
            if self.direction not in ("higher", "lower"):
                raise PropError("a 'prefer' claim's direction is 'higher' or 'lower'")
        else:
            raise PropError(f"claim kind must be wins, loses or prefer, got {self.kind!r}")

    @classmethod
    def from_obj(cls, o: Any) -> Claim:
        if isinstance(o, str):
            return cls.parse(o)
        if not isinstance(o, dict):
            raise PropError(f"cannot read claim {_short(o)}")
        kind = o.get("kind") or ("prefer" if "direction" in o else None)
        if not isinstance(kind, (str, type(None))):
            raise PropError(f"claim kind must be wins, loses or prefer, got {_short(kind)}")
        if kind == "prefer":
            return cls("prefer", (), o.get("feature"), o.get("direction"))
        return cls(kind, conditions(o.get("when") or ()))

    @classmethod
    def parse(cls, text: str) -> Claim:
        """'higher lr wins' / 'lower batch_size wins' / 'optimizer == sgd, momentum == 0 loses'."""
        t = text.strip()
        m = re.match(r"^(higher|lower)\s+([A-Za-z_]+)\s+wins$", t)
        if m:
            return cls("prefer", (), m.group(2), m.group(1))
        m = re.match(r"^(.*)\s+(wins|loses)$", t)
        if not m:
            raise PropError(f"cannot read claim {_short(text)} (e.g. 'optimizer == adam wins', 'higher lr wins')")
        return cls(m.group(2), conditions([c for c in re.split(r"\s*(?:,|\band\b|&)\s*", m.group(1)) if c]))

    def to_obj(self) -> dict:
        if self.kind == "prefer":
            return {"kind": "prefer", "feature": self.feature, "direction": self.direction}
        return {"kind": self.kind, "when": [c.to_obj() for c in self.when]}

    def __str__(self) -> str:
        if self.kind == "prefer":
            return f"{self.direction} {self.feature} wins"
        return f"{' & '.join(str(c) for c in self.when)} {self.kind}"

    @cached_property
    def key(self) -> str:
        return str(self)

    def pick(self, rows: list[dict]) -> tuple[set[int], set[int]] | None:
        """(favoured, disfavoured) indices among ROWS, or None when the claim cannot tell them apart."""
        idx = range(len(rows))
        if self.kind == "prefer":
            vals = [rows[i].get(self.feature) for i in idx]
            if any(v is None for v in vals):
                return None
            best = max(vals) if self.direction == "higher" else min(vals)
            top = {i for i in idx if vals[i] == best}
            if len(top) == len(rows):
                return None
            return top, set(idx) - top
        meets = {i for i in idx if all(c.holds(rows[i]) for c in self.when)}
        if not meets or len(meets) == len(rows):
            return None
        rest = set(idx) - meets
        return (meets, rest) if self.kind == "wins" else (rest, meets)


@dataclass(frozen=True)
class Structure:
    scope: tuple[Condition, ...]
    claim: Claim

    @cached_property
    def key(self) -> str:
        return " & ".join(c.key for c in self.scope) + " => " + self.claim.key

    def to_obj(self) -> dict:
        return {"scope": [c.to_obj() for c in self.scope], "claim": self.claim.to_obj()}

    @classmethod
    def from_obj(cls, scope: Any, claim: Any) -> Structure:
        if isinstance(scope, str):
            scope = [s for s in re.split(r"\s*(?:,|\band\b|&)\s*", scope) if s.strip()]
        if scope is not None and not isinstance(scope, (list, tuple)):
            raise PropError(f"a scope is a list of conditions or one string: {_short(scope)}")
        return cls(conditions(scope or ()), Claim.from_obj(claim))

    def narrowed(self, extra: Iterable[Condition]) -> Structure:
        return Structure(tuple(sorted(set(self.scope) | set(extra), key=lambda c: c.key)), self.claim)

    def render(self) -> str:
        """Plain-English text of the structure (the default text of a proposition)."""
        claim = self.claim
        if claim.kind == "prefer":
            most = "highest" if claim.direction == "higher" else "lowest"
            what = f"the candidate with the {most} {claim.feature} wins"
        else:
            who = " and ".join(str(c) for c in claim.when)
            what = f"a candidate with {who} {'wins' if claim.kind == 'wins' else 'does not win'}"
        if not self.scope:
            return what[0].upper() + what[1:] + "."
        return f"When {' and '.join(str(c) for c in self.scope)}: {what}."


@dataclass
class Verdict:
    verdict: str            # support | contradict
    reason: str
    favoured: tuple[str, ...] = field(default_factory=tuple)


def in_scope(structure: Structure, q: QuestionView) -> list[int]:
    """Indices of the question's candidates that meet the scope."""
    return [i for i, row in enumerate(q.cands) if all(c.holds(row) for c in structure.scope)]


def judge(structure: Structure, q: QuestionView) -> Verdict | None:
    """Does Q support or contradict the structure? None when it does not test it."""
    keep = in_scope(structure, q)
    if len(keep) < 2 or q.winner not in keep:
        return None
    pick = structure.claim.pick([q.cands[i] for i in keep])
    if pick is None:
        return None
    fav, _ = pick
    fav_letters = tuple(sorted(q.letters[keep[i]] for i in fav))
    w = keep.index(q.winner)
    if w in fav:
        return Verdict("support", f"winner {q.correct_letter} is favoured ({','.join(fav_letters)})", fav_letters)
    return Verdict("contradict", f"winner {q.correct_letter} is not favoured ({','.join(fav_letters)})", fav_letters)


def applies(structure: Structure, q: QuestionView) -> tuple[list[int], set[int]] | None:
    """For the solver (who does not know the winner): (kept indices, favoured indices into the question)."""
    keep = in_scope(structure, q)
    if len(keep) < 2:
        return None
    pick = structure.claim.pick([q.cands[i] for i in keep])
    if pick is None:
        return None
    return keep, {keep[i] for i in pick[0]}



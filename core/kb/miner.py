"""A rule miner: proposes propositions from the executed questions of the training split.

With no model at hand, the miner stands in for a solver: it tries claims
(a feature value wins or loses, a numeric feature is better high or low)
under scopes of no condition, one condition and pairs of conditions over
the features, judges each on the training questions, and proposes those
with enough support and precision, best Wilson lower bound first. A scoped
variant is proposed only when it beats its broader parent. Proposals enter
the knowledge base as ``proposed`` candidates for the curator.
"""

from __future__ import annotations

import itertools
import statistics
from collections.abc import Iterable
from dataclasses import dataclass

from .features import QuestionView
from .props import Claim, Condition, Structure
from .stats import wilson_lower

PREFER_FEATURES = ("lr", "weight_decay", "depth", "width", "params", "batch_size", "steps")
CAT_CLAIM_FEATURES = ("optimizer", "activation", "loss", "model")
BOOL_CLAIM_FEATURES = ("adaptive", "residual", "layer_norm", "regularized")
SCOPE_CAT = ("family", "task", "category", "rule_family", "optimizer", "model")
SCOPE_NUM = ("budget", "batch_size", "steps", "noise_std", "target_freq", "alpha", "train_size", "input_dim", "lr")
SCOPE_BOOL = ("adaptive", "regularized")


@dataclass(frozen=True)
class Mined:
    structure: Structure
    support: int
    contradict: int

    @property
    def n(self) -> int:
        return self.support + self.contradict

    @property
    def lower(self) -> float:
        return wilson_lower(self.support, self.n)

    def to_dict(self) -> dict:
        return {"text": self.structure.render(), **self.structure.to_obj(), "support": self.support,
                "contradict": self.contradict, "wilson_lower": round(self.lower, 4)}


def _values(views: Iterable[QuestionView], feat: str) -> list:
    vals = []
    for q in views:
        for row in q.cands:
            if row.get(feat) is not None:
                vals.append(row[feat])
    return vals


def claim_vocabulary(views: list[QuestionView]) -> list[Claim]:
    claims: list[Claim] = []
    for f in CAT_CLAIM_FEATURES:
        for v in sorted({str(x).lower() for x in _values(views, f)}):
            for kind in ("wins", "loses"):
                claims.append(Claim(kind, (Condition(f, "==", v),)))
    for f in BOOL_CLAIM_FEATURES:
        if len(set(_values(views, f))) > 1:
            for kind in ("wins", "loses"):
                claims.append(Claim(kind, (Condition(f, "==", True),)))
    moms = sorted(set(_values(views, "momentum")))
    for m in moms:
        for kind in ("wins", "loses"):
            when = (Condition("optimizer", "==", "sgd"), Condition("momentum", "==", m))
            claims.append(Claim(kind, tuple(sorted(when, key=lambda c: c.key))))
    for f in PREFER_FEATURES:
        if len(set(_values(views, f))) > 1:
            for d in ("higher", "lower"):
                claims.append(Claim("prefer", (), f, d))
    return claims


def _threshold(vals: list) -> float | None:
    distinct = sorted(set(vals))
    if len(distinct) < 2:
        return None
    med = statistics.median(vals)
    # the smallest distinct value above the median, so both sides are non-empty
    above = [v for v in distinct if v > med]
    return above[0] if above else distinct[-1]


def scope_vocabulary(views: list[QuestionView]) -> list[Condition]:
    conds: list[Condition] = []
    for f in SCOPE_CAT:
        vals = sorted({str(x).lower() for x in _values(views, f)})
        if len(vals) > 1:
            conds += [Condition(f, "==", v) for v in vals]
    for f in SCOPE_BOOL:
        if len(set(_values(views, f))) > 1:
            conds += [Condition(f, "==", True), Condition(f, "==", False)]
    for f in SCOPE_NUM:
        vals = _values(views, f)
        t = _threshold(vals)
        if t is None:
            continue
        t = int(t) if float(t).is_integer() else t
        conds += [Condition(f, "<", t), Condition(f, ">=", t)]
        if f == "noise_std" and 0 in set(vals):
            conds += [Condition(f, "==", 0)]
    if any(v == 0 for v in _values(views, "momentum")):
        conds.append(Condition("momentum", "==", 0))
    return conds


class _Table:
    """Per-question truth vectors, computed once, so judging a (scope, claim) is a few tuple ops."""

    def __init__(self, views: list[QuestionView]):
        self.views = views
        self._cond: dict[Condition, list[tuple[bool, ...]]] = {}
        self._claim: dict[Claim, list[tuple]] = {}

    def cond(self, c: Condition) -> list[tuple[bool, ...]]:
        v = self._cond.get(c)
        if v is None:
            v = self._cond[c] = [tuple(c.holds(r) for r in q.cands) for q in self.views]
        return v

    def claim(self, cl: Claim) -> list[tuple]:
        v = self._claim.get(cl)
        if v is None:
            if cl.kind == "prefer":
                v = [tuple(r.get(cl.feature) for r in q.cands) for q in self.views]
            else:
                v = [tuple(all(c.holds(r) for c in cl.when) for r in q.cands) for q in self.views]
            self._claim[cl] = v
        return v

    def keeps(self, scope: tuple[Condition, ...], qidx: list[int]) -> list[tuple[int, list[int]]]:
        """(question index, kept candidate indices) for the questions where >= 2 are kept, winner among them."""
        vecs = [self.cond(c) for c in scope]
        out = []
        for qi in qidx:
            q = self.views[qi]
            n = len(q.cands)
            keep = [i for i in range(n) if all(v[qi][i] for v in vecs)] if vecs else list(range(n))
            if len(keep) >= 2 and q.winner in keep:
                out.append((qi, keep))
        return out

    def score(self, claim: Claim, kept: list[tuple[int, list[int]]]) -> tuple[int, int]:
        cv = self.claim(claim)
        prefer, higher, wins = claim.kind == "prefer", claim.direction == "higher", claim.kind == "wins"
        s = c = 0
        for qi, keep in kept:
            vals = cv[qi]
            w = self.views[qi].winner
            if prefer:
                sub = [vals[i] for i in keep]
                if None in sub:
                    continue
                best = max(sub) if higher else min(sub)
                if sub.count(best) == len(sub):
                    continue
                ok = vals[w] == best
            else:
                meets = sum(1 for i in keep if vals[i])
                if meets == 0 or meets == len(keep):
                    continue
                ok = bool(vals[w]) == wins
            if ok:
                s += 1
            else:
                c += 1
        return s, c


def mine(views: Iterable[QuestionView], *, min_support: int = 5, min_precision: float = 0.7,
         max_props: int = 30, pairs: bool = True, per_claim: int = 2, min_gain: float = 0.05) -> list[Mined]:
    """Proposals from VIEWS (pass the training split only)."""
    views = list(views)
    claims = claim_vocabulary(views)
    scope_conds = scope_vocabulary(views)
    # which questions each scope condition can touch, to skip empty combinations quickly
    touches = {c: frozenset(q.question_id for q in views if sum(c.holds(r) for r in q.cands) >= 2)
               for c in scope_conds}
    scopes: list[tuple[Condition, ...]] = [()] + [(c,) for c in scope_conds if len(touches[c]) >= min_support]
    if pairs:
        singles = [c for c in scope_conds if len(touches[c]) >= 2 * min_support]
        for a, b in itertools.combinations(singles, 2):
            if a.feature == b.feature:
                continue
            if len(touches[a] & touches[b]) >= min_support:
                scopes.append(tuple(sorted((a, b), key=lambda c: c.key)))
    pos = {q.question_id: i for i, q in enumerate(views)}
    table = _Table(views)
    claim_feats = [(cl, frozenset(w.feature for w in cl.when)) for cl in claims]
    for cl in claims:
        table.claim(cl)
    found: dict[str, Mined] = {}
    for scope in scopes:
        ids = frozenset.intersection(*(touches[c] for c in scope)) if scope else pos.keys()
        pool = sorted(pos[i] for i in ids)
        if len(pool) < min_support:
            continue
        kept = table.keeps(scope, pool)
        if len(kept) < min_support:
            continue
        pinned = {c.feature for c in scope if c.op == "=="}
        for claim, feats in claim_feats:
            # a claim about a feature the scope pins to one value cannot discriminate
            if feats & pinned:
                continue
            s, c = table.score(claim, kept)
            if s < min_support or s / (s + c) < min_precision:
                continue
            st = Structure(scope, claim)
            found[st.key] = Mined(st, s, c)
    # keep a scoped variant only when it beats every broader kept variant of the same claim
    ranked = sorted(found.values(), key=lambda m: (len(m.structure.scope), -m.lower, m.structure.key))
    kept: list[Mined] = []
    by_claim: dict[str, list[tuple[frozenset, float]]] = {}
    for m in ranked:
        mine_scope = frozenset(c.key for c in m.structure.scope)
        same = by_claim.setdefault(m.structure.claim.key, [])
        if any(sc < mine_scope and m.lower < lo + min_gain for sc, lo in same):
            continue
        same.append((mine_scope, m.lower))
        kept.append(m)
    kept.sort(key=lambda m: (-m.lower, -m.support, m.structure.key))
    out: list[Mined] = []
    per: dict[str, int] = {}
    for m in kept:
        ck = m.structure.claim.key
        if per.get(ck, 0) >= per_claim:
            continue
        per[ck] = per.get(ck, 0) + 1
        out.append(m)
        if len(out) >= max_props:
            break
    return out

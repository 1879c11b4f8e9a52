"""A rule miner that prefers what generalises: proposals from executed training questions.

With no model at hand, the miner stands in for a solver. It tries claims —
a feature value wins or loses, a numeric feature is better high or low
(``higher params wins``: the candidate with the most parameters wins), a
relative feature inside the question (``lowest_lr & optimizer == sgd
loses``) — with no scope, under one condition and under pairs of
conditions, and judges each on the training questions.

What it keeps, and how it ranks, is chosen to carry over to questions it has
not seen, from families it has not seen:

- **held-out support, cross-validated over families**: for each family f,
  the proposal is selected (enough support, enough precision) on the other
  families alone, and only then are its supports and contradictions *on f*
  counted. The sum over families is its held-out support; it is reported
  beside the training support, and the ranking uses it;
- **at least two families**: a proposal must hold (precision >= 0.55 on at
  least 3 tested questions) in two task families or more. One that holds in
  a single family is kept only scoped to it and says so (``family_specific``);
- **no restating the generator**: scopes on how questions were assembled or
  on sizes the generator fixes per family (``category``, ``task``,
  ``train_size``, ``vocab_size``, ``context_length``, ``alpha``) cost a
  penalty in the ranking;
- a scoped variant is kept only when it beats its broader parent.

Proposals enter the knowledge base as ``proposed`` candidates for the curator.
"""

from __future__ import annotations

import itertools
import statistics
from collections.abc import Iterable
from dataclasses import dataclass, field

from .features import QuestionView
from .props import Claim, Condition, Structure
from .stats import wilson_lower

PREFER_FEATURES = ("lr", "weight_decay", "depth", "width", "params", "batch_size", "steps", "layer_norm_share",
                   "lambda", "d_ff", "grid_size")
CAT_CLAIM_FEATURES = ("optimizer", "activation", "loss", "model")
BOOL_CLAIM_FEATURES = ("adaptive", "residual", "layer_norm", "regularized")
RELATIVE_ATOMS = ("most_params", "fewest_params", "highest_lr", "lowest_lr", "deepest", "shallowest")
SCOPE_CAT = ("family", "task", "category", "rule_family", "optimizer", "model")
SCOPE_NUM = ("budget", "batch_size", "steps", "noise_std", "target_freq", "target_degree", "alpha", "train_size",
             "input_dim", "lr", "params", "turns", "epochs", "margin", "neighbour_agreement", "target_std",
             "target_offset", "transition_entropy", "transition_sparsity")
SCOPE_BOOL = ("adaptive", "regularized", "residual")
#: scope features that only restate how the generator built the questions
GENERATOR_FEATURES = frozenset({"category", "task", "train_size", "vocab_size", "context_length", "alpha"})
GENERATOR_PENALTY = 0.1
FAMILY_HOLDS = (3, 0.55)   # a family "holds" a proposal: tested at least 3 times, precision >= 0.55
MIN_FAMILIES = 2


@dataclass(frozen=True)
class Mined:
    structure: Structure
    support: int
    contradict: int
    by_family: tuple[tuple[str, int, int], ...] = ()
    heldout_support: int = 0
    heldout_contradict: int = 0
    heldout_folds: int = 0
    family_specific: str | None = None
    penalty: float = 0.0
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def n(self) -> int:
        return self.support + self.contradict

    @property
    def lower(self) -> float:
        return wilson_lower(self.support, self.n)

    @property
    def heldout_lower(self) -> float:
        return wilson_lower(self.heldout_support, self.heldout_support + self.heldout_contradict)

    @property
    def families_held(self) -> tuple[str, ...]:
        k, p = FAMILY_HOLDS
        return tuple(f for f, s, c in self.by_family if s + c >= k and s / (s + c) >= p)

    @property
    def score(self) -> float:
        """Ranking: the held-out Wilson lower bound (training's, halved, when nothing was held out),
        less the generator penalty."""
        if self.heldout_support + self.heldout_contradict >= 3:
            base = self.heldout_lower
        else:
            base = 0.5 * self.lower
        return base - self.penalty

    def heldout(self) -> dict:
        return {"support": self.heldout_support, "contradict": self.heldout_contradict,
                "folds": self.heldout_folds, "wilson_lower": round(self.heldout_lower, 4),
                "families_held": list(self.families_held), "family_specific": self.family_specific,
                "by_family": {f: {"support": s, "contradict": c} for f, s, c in self.by_family}}

    def to_dict(self) -> dict:
        return {"text": render(self), **self.structure.to_obj(), "support": self.support,
                "contradict": self.contradict, "wilson_lower": round(self.lower, 4), "heldout": self.heldout(),
                "score": round(self.score, 4), "notes": list(self.notes)}


def render(m: Mined) -> str:
    text = m.structure.render()
    if m.family_specific:
        text = text[:-1] + f" (family-specific: {m.family_specific})."
    return text


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
    for m in sorted(set(_values(views, "momentum"))):
        for kind in ("wins", "loses"):
            when = (Condition("optimizer", "==", "sgd"), Condition("momentum", "==", m))
            claims.append(Claim(kind, tuple(sorted(when, key=lambda c: c.key))))
    for f in PREFER_FEATURES:
        if len(set(_values(views, f))) > 1:
            for d in ("higher", "lower"):
                claims.append(Claim("prefer", (), f, d))
    # relative atoms, alone and with an optimizer kind: "lowest_lr & optimizer == sgd loses"
    extra = [Condition("adaptive", "==", True), Condition("adaptive", "==", False)]
    for atom in RELATIVE_ATOMS:
        if len(set(_values(views, atom))) < 2:
            continue
        a = Condition(atom, "==", True)
        for kind in ("wins", "loses"):
            for e in extra:
                claims.append(Claim(kind, tuple(sorted((a, e), key=lambda c: c.key))))
    return claims


def _threshold(vals: list) -> float | None:
    distinct = sorted(set(vals))
    if len(distinct) < 2:
        return None
    med = statistics.median(vals)
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
        if f in ("noise_std", "target_freq") and 0 in set(vals):
            conds += [Condition(f, "==", 0)]
    if any(v == 0 for v in _values(views, "momentum")):
        conds.append(Condition("momentum", "==", 0))
    return conds


class _Table:
    """Every claim's verdict on every question under every subset of its candidates, as one array.

    ``verdicts[claim, question, kept]`` is +1 (the question supports the claim when only the
    candidates in bitmask ``kept`` are in scope), -1 (contradicts) or 0 (does not test it: fewer
    than two kept, the winner not kept, or the claim cannot tell the kept ones apart). A scope is
    then a bitmask per question, and judging every claim under it is one gather.
    """

    def __init__(self, views: list[QuestionView], claims: list[Claim]):
        import numpy as np

        self.views = views
        self.claims = claims
        self.n_max = max(len(q.cands) for q in views)
        masks = 1 << self.n_max
        self.full = np.array([(1 << len(q.cands)) - 1 for q in views], dtype=np.int64)
        self.verdicts = np.zeros((len(claims), len(views), masks), dtype=np.int8)
        subsets = [[i for i in range(self.n_max) if m >> i & 1] for m in range(masks)]
        for ci, cl in enumerate(claims):
            for qi, q in enumerate(views):
                if cl.kind == "prefer":
                    vals = [r.get(cl.feature) for r in q.cands]
                else:
                    vals = [all(c.holds(r) for c in cl.when) for r in q.cands]
                n = len(q.cands)
                for m in range(3, 1 << n):
                    keep = subsets[m]
                    if len(keep) < 2 or q.winner not in keep:
                        continue
                    sub = [vals[i] for i in keep]
                    if cl.kind == "prefer":
                        if None in sub:
                            continue
                        best = max(sub) if cl.direction == "higher" else min(sub)
                        if sub.count(best) == len(sub):
                            continue
                        ok = vals[q.winner] == best
                    else:
                        meets = sum(1 for v in sub if v)
                        if meets == 0 or meets == len(sub):
                            continue
                        ok = bool(vals[q.winner]) == (cl.kind == "wins")
                    self.verdicts[ci, qi, m] = 1 if ok else -1
        self._cond: dict[Condition, object] = {}
        fams = sorted({q.family for q in views})
        self.families = fams
        self.family_onehot = np.array([[q.family == f for q in views] for f in fams], dtype=np.int32)
        self.rows = np.arange(len(views))

    def cond(self, c: Condition):
        import numpy as np

        v = self._cond.get(c)
        if v is None:
            v = self._cond[c] = np.array([sum(1 << i for i, r in enumerate(q.cands) if c.holds(r))
                                          for q in self.views], dtype=np.int64)
        return v

    def judge_all(self, scope: tuple[Condition, ...]):
        """[claims, questions] verdicts under SCOPE."""
        mask = self.full
        for c in scope:
            mask = mask & self.cond(c)
        return self.verdicts[:, self.rows, mask]


def _heldout(fam: dict[str, list[int]], min_support: int, min_precision: float) -> tuple[int, int, int]:
    """Held-out counts: for each family, selected on the others alone, then judged on it."""
    S = sum(s for s, _ in fam.values())
    C = sum(c for _, c in fam.values())
    hs = hc = folds = 0
    for s, c in fam.values():
        rs, rc = S - s, C - c
        if rs >= min_support and rs / max(rs + rc, 1) >= min_precision:
            hs, hc, folds = hs + s, hc + c, folds + 1
    return hs, hc, folds


def mine(views: Iterable[QuestionView], *, min_support: int = 5, min_precision: float = 0.6,
         max_props: int = 30, pairs: bool = True, per_claim: int = 2, min_gain: float = 0.03,
         min_families: int = MIN_FAMILIES) -> list[Mined]:
    """Proposals from VIEWS (pass the training questions only), best held-out score first."""
    import numpy as np

    views = [q for q in views if 2 <= len(q.cands) <= 6 and q.winner >= 0]
    if not views:
        return []
    claims = claim_vocabulary(views)
    scope_conds = scope_vocabulary(views)
    table = _Table(views, claims)
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
    families = table.families
    claim_feats = [frozenset(w.feature for w in cl.when) | ({cl.feature} if cl.feature else set()) for cl in claims]
    found: dict[str, Mined] = {}
    for scope in scopes:
        if scope and len(frozenset.intersection(*(touches[c] for c in scope))) < min_support:
            continue
        verdicts = table.judge_all(scope)
        sup = (verdicts == 1).sum(1)
        con = (verdicts == -1).sum(1)
        ok = (sup >= min_support) & (sup >= min_precision * np.maximum(sup + con, 1))
        if not ok.any():
            continue
        pinned = {c.feature for c in scope if c.op == "=="}
        fam_scope = next((str(c.value) for c in scope if c.feature == "family" and c.op == "=="), None)
        penalty = GENERATOR_PENALTY * sum(1 for c in scope if c.feature in GENERATOR_FEATURES)
        for ci in np.nonzero(ok)[0]:
            if claim_feats[ci] & pinned:  # a claim about a feature the scope pins cannot discriminate
                continue
            claim, s, c = claims[ci], int(sup[ci]), int(con[ci])
            fs = table.family_onehot @ (verdicts[ci] == 1)
            fc = table.family_onehot @ (verdicts[ci] == -1)
            fam = {f: [int(fs[k]), int(fc[k])] for k, f in enumerate(families) if fs[k] + fc[k]}
            hs, hc, folds = _heldout(fam, min_support, min_precision)
            m = Mined(Structure(scope, claim), s, c, tuple((f, *fam.get(f, [0, 0])) for f in families),
                      hs, hc, folds, fam_scope, penalty)
            if fam_scope is None and len(families) >= min_families and len(m.families_held) < min_families:
                held = m.families_held
                if len(held) != 1 or fam[held[0]][0] < min_support:
                    continue
                # holds in one family only: kept scoped to it, and says so
                narrowed = Structure(tuple(sorted((*scope, Condition("family", "==", held[0])),
                                                  key=lambda x: x.key)), claim)
                m = Mined(narrowed, *fam[held[0]], ((held[0], *fam[held[0]]),), 0, 0, 0, held[0], penalty,
                          ("held in one family only",))
            if m.structure.key not in found or found[m.structure.key].score < m.score:
                found[m.structure.key] = m
    # keep a scoped variant only when it beats every broader kept variant of the same claim
    ranked = sorted(found.values(), key=lambda m: (len(m.structure.scope), -m.score, m.structure.key))
    kept_m: list[Mined] = []
    by_claim: dict[str, list[tuple[frozenset, float]]] = {}
    for m in ranked:
        mine_scope = frozenset(c.key for c in m.structure.scope)
        same = by_claim.setdefault(m.structure.claim.key, [])
        if any(sc < mine_scope and m.score < sco + min_gain for sc, sco in same):
            continue
        same.append((mine_scope, m.score))
        kept_m.append(m)
    kept_m.sort(key=lambda m: (-m.score, -m.support, m.structure.key))
    out: list[Mined] = []
    per: dict[str, int] = {}
    for m in kept_m:
        ck = m.structure.claim.key
        if per.get(ck, 0) >= per_claim:
            continue
        per[ck] = per.get(ck, 0) + 1
        out.append(m)
        if len(out) >= max_props:
            break
    return out


# --------------------------------------------------------------------------- single-feature baselines

def single_feature_rules(views: list[QuestionView]) -> list[Claim]:
    """Every one-feature, unscoped rule a baseline can be: prefer-higher / prefer-lower for each
    numeric feature, a value or flag that wins or loses."""
    out: list[Claim] = []
    for cl in claim_vocabulary(views):
        if cl.kind == "prefer" or len(cl.when) == 1:
            out.append(cl)
    for atom in RELATIVE_ATOMS:
        if len(set(_values(views, atom))) > 1:
            out += [Claim("wins", (Condition(atom, "==", True),)), Claim("loses", (Condition(atom, "==", True),))]
    return out

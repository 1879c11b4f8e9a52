"""Offline replay: a rule-based solver answering from a prompt pack, with no model call.

The solver reads each pack proposition's structure. For a question, every
proposition that applies (its scope keeps at least two candidates and its
claim tells them apart) adds its weight to the candidates it favours and
takes it from the ones it disfavours; the highest score wins. Weight: the
proposition's Wilson lower bound (pinned: at least 0.5; untested: 0.25).

Without the knowledge base — or when no proposition applies, or scores tie
— the solver falls back to a stated default: **the first listed choice
(A)**. Letters are shuffled when questions are made, so that default is a
uniform guess in effect (33.3% expected on three choices).

Accuracies come with n and a Wilson 95% interval; the KB-minus-fallback
difference with a paired (Newcombe) interval, so a difference under the
noise is said to be one. Pairs: combined accuracy (both questions of a pair
right) and the switch rate (the solver picks a different recipe on the two
datasets; the true winners flip in the stated share of pairs).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .features import QuestionView
from .pack import PackEntry
from .props import Structure, applies
from .stats import fmt_interval, fmt_pct, paired_difference, wilson

FALLBACK = "the first listed choice (A)"
CHANCE = 1 / 3
CATEGORY_ORDER = ("optimizer_only", "architecture_only", "mixed", "loss_only")


@dataclass(frozen=True)
class Rule:
    id: int
    structure: Structure
    weight: float


def rules_from_pack(entries: Sequence[PackEntry]) -> list[Rule]:
    out = []
    for e in entries:
        w = e.lower if e.reason != "untested" else 0.25
        if e.prop.pinned:
            w = max(w, 0.5)
        out.append(Rule(e.prop.id, e.prop.structure, max(w, 0.05)))
    return out


@dataclass(frozen=True)
class Answer:
    index: int
    letter: str
    by: str                 # kb | fallback
    used: tuple[int, ...]   # rule ids that applied


def solve(q: QuestionView, rules: Sequence[Rule]) -> Answer:
    scores = [0.0] * len(q.cands)
    used = []
    for r in rules:
        a = applies(r.structure, q)
        if a is None:
            continue
        keep, fav = a
        used.append(r.id)
        for i in keep:
            scores[i] += r.weight if i in fav else -r.weight
    if used:
        best = max(scores)
        top = [i for i, s in enumerate(scores) if abs(s - best) < 1e-12]
        if len(top) == 1:
            return Answer(top[0], q.letters[top[0]], "kb", tuple(used))
        i = min(top)  # tie: the fallback's order among the tied
        return Answer(i, q.letters[i], "fallback", tuple(used))
    return Answer(0, q.letters[0], "fallback", ())


def fallback(q: QuestionView) -> Answer:
    return Answer(0, q.letters[0], "fallback", ())


def _acc(flags: list[bool]) -> dict:
    k, n = sum(flags), len(flags)
    lo, hi = wilson(k, n)
    return {"correct": k, "n": n, "accuracy": (k / n if n else None), "ci95": [lo, hi]}


def replay(views: Iterable[QuestionView], entries: Sequence[PackEntry], *, split: str | None = "test") -> dict:
    qs = [q for q in views if split is None or q.split == split]
    rules = rules_from_pack(entries)
    with_kb = {q.question_id: solve(q, rules) for q in qs}
    without = {q.question_id: fallback(q) for q in qs}
    ok_kb = [with_kb[q.question_id].index == q.winner for q in qs]
    ok_fb = [without[q.question_id].index == q.winner for q in qs]
    d, dlo, dhi = paired_difference(ok_kb, ok_fb)
    by_cat: dict[str, dict] = {}
    groups: dict[str, list[int]] = defaultdict(list)
    for i, q in enumerate(qs):
        groups[q.category].append(i)
    for cat in sorted(groups, key=lambda c: (CATEGORY_ORDER.index(c) if c in CATEGORY_ORDER else 99, c)):
        idx = groups[cat]
        by_cat[cat] = {"with_kb": _acc([ok_kb[i] for i in idx]), "without_kb": _acc([ok_fb[i] for i in idx])}
    # pairs: both members in this replay
    by_id = {q.question_id: q for q in qs}
    pairs = {}
    for q in qs:
        if q.pair_id and q.partner in by_id and q.pair_id not in pairs:
            pairs[q.pair_id] = (q, by_id[q.partner])
    both_kb, both_fb, switch_kb, switch_fb, flips = [], [], [], [], []
    for a, b in pairs.values():
        ia, ib = with_kb[a.question_id], with_kb[b.question_id]
        fa, fb = without[a.question_id], without[b.question_id]
        both_kb.append(ia.index == a.winner and ib.index == b.winner)
        both_fb.append(fa.index == a.winner and fb.index == b.winner)
        rec = lambda q, i: q.recipes[i] if q.recipes else q.letters[i]  # noqa: E731
        switch_kb.append(rec(a, ia.index) != rec(b, ib.index))
        switch_fb.append(rec(a, fa.index) != rec(b, fb.index))
        flips.append(rec(a, a.winner) != rec(b, b.winner))
    coverage = sum(1 for q in qs if with_kb[q.question_id].by == "kb")
    return {
        "split": split, "n": len(qs), "pack_size": len(entries), "pack_ids": [e.prop.id for e in entries],
        "fallback": FALLBACK, "chance": CHANCE,
        "with_kb": _acc(ok_kb), "without_kb": _acc(ok_fb),
        "difference": {"points": d, "ci95": [dlo, dhi], "within_noise": dlo <= 0.0 <= dhi},
        "answered_by_kb": coverage,
        "by_category": by_cat,
        "pairs": {
            "n": len(pairs),
            "combined_with_kb": _acc(both_kb), "combined_without_kb": _acc(both_fb),
            "switch_rate_with_kb": _acc(switch_kb), "switch_rate_without_kb": _acc(switch_fb),
            "true_flip_rate": _acc(flips),
        },
        "answers": {qid: {"with_kb": a.letter, "by": a.by, "used": list(a.used),
                          "without_kb": without[qid].letter, "correct": by_id[qid].correct_letter}
                    for qid, a in with_kb.items()},
    }


def _fmt(a: dict) -> str:
    return fmt_interval(a["correct"], a["n"])


def render(report: dict) -> str:
    r = report
    lines = [
        f"Offline replay on {r['n']} held-out questions (split {r['split']}), pack of {r['pack_size']} "
        f"propositions, rule-based solver, no model call.",
        f"  without KB (fallback: {r['fallback']}; uniform guessing {fmt_pct(r['chance'])}): {_fmt(r['without_kb'])}",
        f"  with KB: {_fmt(r['with_kb'])}; the KB decided {r['answered_by_kb']}/{r['n']}, the fallback the rest",
    ]
    d = r["difference"]
    lo, hi = d["ci95"]
    verdict = "within the noise (the interval holds 0)" if d["within_noise"] else "beyond the noise"
    lines.append(f"  difference: {100 * d['points']:+.1f} points "
                 f"(95% CI {100 * lo:+.1f} to {100 * hi:+.1f}), {verdict}")
    lines.append("  by category:")
    for cat, v in r["by_category"].items():
        lines.append(f"    {cat:<18} without {_fmt(v['without_kb'])}; with {_fmt(v['with_kb'])}")
    p = r["pairs"]
    if p["n"]:
        lines.append(f"  pairs (n={p['n']}): both right without KB {_fmt(p['combined_without_kb'])}; "
                     f"with KB {_fmt(p['combined_with_kb'])}")
        lines.append(f"    switch rate with KB {_fmt(p['switch_rate_with_kb'])}; without KB "
                     f"{_fmt(p['switch_rate_without_kb'])}; the true winner flips in {_fmt(p['true_flip_rate'])}")
    else:
        lines.append("  pairs: none among these questions")
    return "\n".join(lines) + "\n"

"""Offline replay: a rule-based solver answering from a prompt pack, and baselines it must beat.

**The solver** reads the pack and nothing else: its live entries (a
rejected, retired or merged proposition never answers, even from an old pack
file), in pack order. **Pinned** propositions are consulted first, in pack
order, as a decision list: each one that applies drops the candidates it
disfavours (unless that would drop every candidate still in the running).
Among the candidates left, every other proposition that applies (its scope
keeps at least two candidates and its claim tells them apart) votes: +w for
each candidate it favours, -w for each it disfavours; the highest total wins,
and a tie goes to the first proposition in pack order that tells the tied
candidates apart. The weights w come from the
training questions: one conditional-logit fit (the winner's probability is
the softmax of the candidates' totals) with an L2 penalty, so propositions
that say the same thing share their weight instead of each counting in
full, and a proposition that is right less often than chance gets none.
A proposition that applies to no training question (a pinned, untested one)
votes with the prior weight PRIOR_WEIGHT.

**Without the KB** — or when nothing applies, or a tie nothing breaks — the solver
answers the first listed choice (A). Letters are shuffled when questions
are made, so that default is a uniform guess in effect.

**Baselines** printed beside the KB, on the same questions: uniform chance
(the expected value, 1/choices per question), always-A, and the **best
single-feature rule**: of every one-feature rule (``higher params wins``,
``optimizer == adam wins``, ...), the one most accurate on the training
questions, falling back to A like the solver. The headline is the KB's
margin over that best baseline, with a paired (Newcombe) 95% interval.

Reported per source (``shipped``: our generated questions; ``imported``:
from bundles, test questions unless marked otherwise), per family, per
category, on pairs, and **leave one family out**: for each family, the
miner runs on the other families' questions only, its top 20 proposals are
the pack, and the pack answers the held-out family; the best single-feature
rule is chosen on the same training families.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from .features import QuestionView
from .pack import CAP, PackEntry, solver_entries
from .props import Claim, Structure, applies, judge
from .stats import fmt_interval, fmt_pct, paired_difference, wilson

FALLBACK = "the first listed choice (A)"
CATEGORY_ORDER = ("optimizer_only", "architecture_only", "mixed", "loss_only")
#: what ``select_rules`` holds out while it chooses: whole task groups when the training questions
#: span several (the unit the headline holds out, so the selection inside a fold is nested the same
#: way: a rule kept for carrying across sibling families that share models and grammar need not
#: carry across task groups), else families
HOLD_BY = "task"
PRIOR_WEIGHT = 0.5    # a proposition no training question tests
L2 = 2.0              # the fit's penalty on the weights (in questions' worth of log-likelihood)


@dataclass(frozen=True)
class Rule:
    id: int | str
    structure: Structure
    weight: float = PRIOR_WEIGHT
    support: int = 0
    contradict: int = 0
    pinned: bool = False       # the curator's call: consulted before any vote

    @property
    def n(self) -> int:
        return self.support + self.contradict


def rule_record(structure: Structure, views: Iterable[QuestionView]) -> tuple[int, int]:
    """(supports, contradictions) of STRUCTURE on VIEWS."""
    s = c = 0
    for q in views:
        v = judge(structure, q)
        if v is not None:
            s, c = (s + 1, c) if v.verdict == "support" else (s, c + 1)
    return s, c


def _votes(structures: Sequence[Structure], views: Sequence[QuestionView]):
    """[questions, rules, candidates] array: +1 favoured, -1 disfavoured, 0 not applicable."""
    import numpy as np

    width = max((len(q.cands) for q in views), default=1)
    out = np.zeros((len(views), len(structures), width))
    for qi, q in enumerate(views):
        for ri, st in enumerate(structures):
            a = applies(st, q)
            if a is None:
                continue
            keep, fav = a
            for i in keep:
                out[qi, ri, i] = 1.0 if i in fav else -1.0
    return out


def _valid_and_winners(qs: Sequence[QuestionView], width: int):
    import numpy as np

    valid = np.zeros((len(qs), width), dtype=bool)
    for qi, q in enumerate(qs):
        valid[qi, :len(q.cands)] = True
    return valid, np.array([q.winner for q in qs])


def fit_weights(structures: Sequence[Structure], train: Sequence[QuestionView], l2: float = L2,
                iters: int = 30) -> list[float | None]:
    """Conditional-logit weights of STRUCTURES on TRAIN (Newton's method on the penalised
    log-likelihood of the winners); None for a structure no training question tests."""
    qs = [q for q in train if q.winner >= 0]
    if not structures or not qs:
        return [None] * len(structures)
    votes = _votes(structures, qs)                       # [Q, R, C]
    valid, winners = _valid_and_winners(qs, votes.shape[2])
    w = _newton(votes, valid, winners, l2, iters)
    used = abs(votes).sum(axis=(0, 2)) > 0
    return [float(x) if u else None for x, u in zip(w, used)]


def _newton(votes, valid, winners, l2: float = L2, iters: int = 30, w=None):
    """Penalised conditional-logit weights for VOTES [Q, R, C] (Newton's method)."""
    import numpy as np

    w = np.zeros(votes.shape[1]) if w is None else w.copy()
    if votes.shape[1] == 0 or votes.shape[0] == 0:
        return w
    rows = np.arange(votes.shape[0])
    for _ in range(iters):
        scores = np.einsum("qrc,r->qc", votes, w)
        scores = np.where(valid, scores, -np.inf)
        scores -= scores.max(axis=1, keepdims=True)
        p = np.exp(scores)
        p /= p.sum(axis=1, keepdims=True)
        mean = np.einsum("qc,qrc->qr", p, votes)           # expected votes per rule
        grad = (votes[rows, :, winners] - mean).sum(0) - l2 * w
        centred = votes - mean[:, :, None]                  # [Q, R, C]
        hess = -np.einsum("qc,qrc,qsc->rs", p, centred, centred) - l2 * np.eye(len(w))
        step = np.linalg.solve(hess, grad)
        w = w - step
        if np.abs(step).max() < 1e-6:
            break
    return w


def select_rules(structures: Sequence[Structure], train: Sequence[QuestionView], cap: int = CAP,
                 l2: float = L2) -> list[int]:
    """Which of STRUCTURES make the pack: forward selection on how the weighted solver does on
    task groups (or, inside one task group, families) it was not fitted on. Each step tries every
    remaining structure beside the chosen ones (its weight by a one-dimensional Newton fit on the
    other groups, the chosen ones' weights held), scores it by the questions it gets right on each
    held-out training group, and keeps the best while it adds a correct answer. With a single
    family, questions are held out by a fixed four-way split instead. Returns indices into
    STRUCTURES, in the order chosen."""
    import numpy as np

    qs = [q for q in train if q.winner >= 0]
    if not structures or not qs:
        return []
    votes = _votes(structures, qs)                              # [Q, K, C]
    valid, winners = _valid_and_winners(qs, votes.shape[2])
    fams = sorted({q.family for q in qs})
    tasks = sorted({q.task for q in qs})
    if HOLD_BY == "task" and len(tasks) > 1:
        held = [np.array([q.task == t for q in qs]) for t in tasks]
    elif len(fams) > 1:
        held = [np.array([q.family == f for q in qs]) for f in fams]
    else:
        held = [np.array([i % 4 == k for i in range(len(qs))]) for k in range(4)]
    neg = np.where(valid, 0.0, -np.inf)
    chosen: list[int] = []
    best = sum(int((winners[h] == 0).sum()) for h in held)     # the fallback: the first choice
    while len(chosen) < cap:
        correct = np.zeros(votes.shape[1])
        for h in held:
            tr, te = ~h, h
            w = _newton(votes[tr][:, chosen], valid[tr], winners[tr], l2) if chosen else np.zeros(0)
            base_tr = np.einsum("qrc,r->qc", votes[tr][:, chosen], w) + neg[tr]
            base_te = np.einsum("qrc,r->qc", votes[te][:, chosen], w) + neg[te]
            a = np.zeros(votes.shape[1])                          # one weight per candidate structure
            cand_tr = votes[tr].transpose(1, 0, 2)                # [K, Qtr, C]
            rows = np.arange(cand_tr.shape[1])
            for _ in range(8):
                sc = base_tr[None] + a[:, None, None] * cand_tr
                sc = sc - sc.max(axis=2, keepdims=True)
                p = np.exp(sc)
                p /= p.sum(axis=2, keepdims=True)
                mean = (p * cand_tr).sum(2)                       # [K, Qtr]
                grad = (cand_tr[:, rows, winners[tr]] - mean).sum(1) - l2 * a
                var = (p * cand_tr ** 2).sum(2) - mean ** 2
                hess = -var.sum(1) - l2
                a = a - grad / hess
            pred = (base_te[None] + a[:, None, None] * votes[te].transpose(1, 0, 2)).argmax(axis=2)
            correct += (pred == winners[te][None]).sum(1)
        correct[chosen] = -1
        k = int(correct.argmax())
        if correct[k] <= best:
            break
        chosen.append(k)
        best = correct[k]
    return chosen


def rules_from_pack(entries: Sequence[PackEntry], train: Sequence[QuestionView]) -> list[Rule]:
    """The pack's live propositions as rules, in pack order, weighted on the TRAIN questions (the
    unpinned ones' weights fitted together; a pinned one decides before any vote)."""
    entries = solver_entries(entries)
    voters = [e for e in entries if not e.prop.pinned]
    weights = dict(zip((e.prop.id for e in voters), fit_weights([e.prop.structure for e in voters], train)))
    out = []
    for e in entries:
        w = weights.get(e.prop.id)
        s, c = rule_record(e.prop.structure, train) if w is not None or e.prop.pinned else (0, 0)
        out.append(Rule(e.prop.id, e.prop.structure, PRIOR_WEIGHT if w is None else w, s, c, e.prop.pinned))
    return out


@dataclass(frozen=True)
class Answer:
    index: int
    letter: str
    by: str                         # kb | fallback
    used: tuple = ()                # rule ids that applied


def solve(q: QuestionView, rules: Sequence[Rule]) -> Answer:
    """The pack's answer to Q. RULES are in pack order: the pinned ones narrow the candidates first
    (a decision list), the others vote on what is left, a tie goes to the first rule in order that
    tells the tied candidates apart, and the first listed choice when none does."""
    alive = set(range(len(q.cands)))
    used: list = []
    for r in rules:
        if not r.pinned:
            continue
        a = applies(r.structure, q)
        if a is None:
            continue
        keep, fav = a
        left = alive - (set(keep) - fav)
        if left and left != alive:
            alive = left
            used.append(r.id)
    if len(alive) == 1:
        i = next(iter(alive))
        return Answer(i, q.letters[i], "kb", tuple(used))
    scores = [0.0] * len(q.cands)
    applied = []
    for r in rules:
        if r.pinned:
            continue
        a = applies(r.structure, q)
        if a is None:
            continue
        keep, fav = a
        if not (set(keep) & alive):
            continue
        applied.append((r, set(keep), fav))
        used.append(r.id)
        for i in keep:
            scores[i] += r.weight if i in fav else -r.weight
    if not used:
        return Answer(0, q.letters[0], "fallback", ())
    best = max(scores[i] for i in alive)
    top = sorted(i for i in alive if abs(scores[i] - best) < 1e-9)
    for _, keep, fav in applied:
        if len(top) == 1:
            break
        split = [i for i in top if i in fav]
        if split and len(split) < len(top) and set(top) <= keep:
            top = split
    if len(top) == 1:
        return Answer(top[0], q.letters[top[0]], "kb", tuple(used))
    return Answer(top[0], q.letters[top[0]], "fallback", tuple(used))


def solve_in_order(q: QuestionView, rules: Sequence[Rule]) -> Answer:
    """A decision list: RULES in priority order each drop the candidates they disfavour (unless that
    would drop every candidate still in the running), until one is left."""
    alive = set(range(len(q.cands)))
    used = []
    for r in rules:
        a = applies(r.structure, q)
        if a is None:
            continue
        keep, fav = a
        left = alive - (set(keep) - fav)
        if not left or left == alive:
            continue
        alive = left
        used.append(r.id)
        if len(alive) == 1:
            i = alive.pop()
            return Answer(i, q.letters[i], "kb", tuple(used))
    i = min(alive)
    return Answer(i, q.letters[i], "fallback", tuple(used))


def fallback(q: QuestionView) -> Answer:
    return Answer(0, q.letters[0], "fallback", ())


def single_rule_answer(claim: Claim) -> Callable[[QuestionView], Answer]:
    """A one-feature baseline: the claim's favoured candidate when it singles one out (the first
    listed of them otherwise), else A."""
    st = Structure((), claim)

    def answer(q: QuestionView) -> Answer:
        a = applies(st, q)
        if a is None:
            return fallback(q)
        i = min(a[1])
        return Answer(i, q.letters[i], "rule" if len(a[1]) == 1 else "fallback", (str(claim),))
    return answer


def best_single_rule(train: Sequence[QuestionView]) -> tuple[str, Callable[[QuestionView], Answer], float]:
    """The one-feature rule most accurate on TRAIN: (its text, its answerer, its training accuracy)."""
    from .miner import single_feature_rules

    best = ("always A", fallback, _accuracy(train, fallback))
    for cl in single_feature_rules(list(train)):
        f = single_rule_answer(cl)
        acc = _accuracy(train, f)
        if acc > best[2] + 1e-12:
            best = (str(cl), f, acc)
    return best


def _accuracy(qs: Sequence[QuestionView], f: Callable[[QuestionView], Answer]) -> float:
    return sum(f(q).index == q.winner for q in qs) / len(qs) if qs else 0.0


def _acc(flags: list[bool]) -> dict:
    k, n = sum(flags), len(flags)
    lo, hi = wilson(k, n)
    return {"correct": k, "n": n, "accuracy": (k / n if n else None), "ci95": [lo, hi]}


def _margin(a: list[bool], b: list[bool]) -> dict:
    d, lo, hi = paired_difference(a, b)
    return {"points": d, "ci95": [lo, hi], "excludes_zero": not (lo <= 0.0 <= hi), "n": len(a)}


def _chance(qs: Sequence[QuestionView]) -> float | None:
    return sum(1 / len(q.cands) for q in qs) / len(qs) if qs else None


def _slice(idx: list[int], ok_kb, ok_fb, ok_bb, rule: str) -> dict:
    """The per-source / per-family shape SPEC §4 names."""
    def part(flags):
        k = sum(flags[i] for i in idx)
        return {"correct": k, "accuracy": (k / len(idx) if idx else None)}
    bb = part(ok_bb)
    return {"n": len(idx), "with_kb": part(ok_kb), "without_kb": part(ok_fb),
            "best_baseline": {"rule": rule, "accuracy": bb["accuracy"]}}


def replay(views: Iterable[QuestionView], entries: Sequence[PackEntry], *, split: str | None = "test",
           train: Sequence[QuestionView] | None = None, lofo: bool = True,
           mine_kw: dict | None = None) -> dict:
    """The pack on the held-out questions (SPLIT; imported questions are test questions unless
    marked otherwise), with the baselines, per source and family, and leave one family out.

    TRAIN: the questions the rules' records and the best single-feature rule come from (default:
    the shipped questions of the train split among VIEWS)."""
    views = list(views)
    if train is None:
        train = [q for q in views if q.split == "train" and q.origin == "shipped"]
    qs = [q for q in views if split is None or q.split == split]
    rules = rules_from_pack(entries, train)
    with_kb = {q.question_id: solve(q, rules) for q in qs}
    without = {q.question_id: fallback(q) for q in qs}
    bb_rule, bb_fn, bb_train = best_single_rule(train)
    baseline = {q.question_id: bb_fn(q) for q in qs}
    ok_kb = [with_kb[q.question_id].index == q.winner for q in qs]
    ok_fb = [without[q.question_id].index == q.winner for q in qs]
    ok_bb = [baseline[q.question_id].index == q.winner for q in qs]
    d, dlo, dhi = paired_difference(ok_kb, ok_fb)

    def groups(key) -> dict[str, list[int]]:
        g: dict[str, list[int]] = defaultdict(list)
        for i, q in enumerate(qs):
            g[key(q)].append(i)
        return g

    by_source = {src: _slice(groups(lambda q: q.origin).get(src, []), ok_kb, ok_fb, ok_bb, bb_rule)
                 for src in ("shipped", "imported")}
    for v in by_source.values():   # the no-KB solver that is a real prior, per source
        v["prior"] = {"rule": bb_rule, "accuracy": v["best_baseline"]["accuracy"]}
    fam_groups = groups(lambda q: q.family)
    by_family = {f: _slice(fam_groups[f], ok_kb, ok_fb, ok_bb, bb_rule) for f in sorted(fam_groups)}
    cat_groups = groups(lambda q: q.category)
    by_cat = {}
    for cat in sorted(cat_groups, key=lambda c: (CATEGORY_ORDER.index(c) if c in CATEGORY_ORDER else 99, c)):
        idx = cat_groups[cat]
        by_cat[cat] = {"with_kb": _acc([ok_kb[i] for i in idx]), "without_kb": _acc([ok_fb[i] for i in idx]),
                       "best_baseline": _acc([ok_bb[i] for i in idx])}
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
    report = {
        "split": split, "n": len(qs), "pack_size": len(entries), "pack_ids": [e.prop.id for e in entries],
        "fallback": FALLBACK, "chance": _chance(qs),
        "with_kb": _acc(ok_kb), "without_kb": _acc(ok_fb),
        "difference": {"points": d, "ci95": [dlo, dhi], "within_noise": dlo <= 0.0 <= dhi},
        "baselines": {
            "chance": {"accuracy": _chance(qs), "note": "expected value of a uniform guess"},
            "always_a": _acc(ok_fb),
            "best_single_feature": {"rule": bb_rule, "train_accuracy": bb_train, **_acc(ok_bb)},
        },
        "headline": {"best_baseline": bb_rule, "kb_minus_best_baseline": _margin(ok_kb, ok_bb)},
        "answered_by_kb": coverage,
        "by_source": by_source,
        "by_family": by_family,
        "by_category": by_cat,
        "pairs": {
            "n": len(pairs),
            "combined_with_kb": _acc(both_kb), "combined_without_kb": _acc(both_fb),
            "switch_rate_with_kb": _acc(switch_kb), "switch_rate_without_kb": _acc(switch_fb),
            "true_flip_rate": _acc(flips),
        },
        "answers": {qid: {"with_kb": a.letter, "by": a.by, "used": list(a.used),
                          "without_kb": without[qid].letter, "baseline": baseline[qid].letter,
                          "correct": by_id[qid].correct_letter}
                    for qid, a in with_kb.items()},
    }
    report["prior"] = {"rule": bb_rule, "train_accuracy": bb_train, **_acc(ok_bb)}
    report["leave_one_family_out"] = leave_one_family_out(views, **(mine_kw or {})) if lofo else None
    report["leave_one_task_group_out"] = leave_one_task_group_out(views, **(mine_kw or {})) if lofo else None
    return report


def mined_rules(train: Sequence[QuestionView], cap: int = CAP, pool: int = 60, **mine_kw) -> list[Rule]:
    """The automatic pack on TRAIN: the miner's best POOL proposals and every one-feature rule are
    the candidates; ``select_rules`` keeps at most CAP of them by how they carry to held-out
    families; their weights are fitted on all of TRAIN."""
    from .miner import mine, single_feature_rules

    candidates: dict[str, Structure] = {}
    for m in mine(train, max_props=pool, **mine_kw):
        candidates.setdefault(m.structure.key, m.structure)
    for cl in single_feature_rules(list(train)):
        st = Structure((), cl)
        candidates.setdefault(st.key, st)
    structures = list(candidates.values())
    picked = [structures[i] for i in select_rules(structures, train, cap)]
    weights = fit_weights(picked, train)
    out = []
    for i, (st, w) in enumerate(zip(picked, weights)):
        s, c = rule_record(st, train)
        out.append(Rule(f"m{i + 1}", st, PRIOR_WEIGHT if w is None else w, s, c))
    return out


def _held_out_fold(views: Sequence[QuestionView], held: Callable[[QuestionView], bool], mine_kw: dict):
    """One fold: mine, select and weigh on the questions HELD does not take (imported ones never
    train), the prior rule chosen on the same; answer the held ones. (train, test, rules, prior
    rule, its training accuracy, KB right, prior right, always-A right) or None."""
    train = [q for q in views if not held(q) and q.origin != "imported"]
    test = [q for q in views if held(q)]
    if not train or not test:
        return None
    rules = mined_rules(train, **mine_kw)
    rule_text, prior_fn, prior_train = best_prior(train)
    return (train, test, rules, rule_text, prior_train, [solve(q, rules).index == q.winner for q in test],
            [prior_fn(q).index == q.winner for q in test], [fallback(q).index == q.winner for q in test])


def leave_one_family_out(views: Iterable[QuestionView], **mine_kw) -> dict:
    """Per family: mine on the other families' questions (imported ones never train), answer this
    family's questions with the top 20; the best single-feature rule chosen on the same training."""
    views = list(views)
    families = sorted({q.family for q in views})
    folds, kb_all, bb_all, fb_all = {}, [], [], []
    for f in families:
        fold = _held_out_fold(views, lambda q, f=f: q.family == f, mine_kw)
        if fold is None:
            continue
        train, test, rules, rule_text, bb_train, ok_kb, ok_bb, ok_fb = fold
        kb_all += ok_kb
        bb_all += ok_bb
        fb_all += ok_fb
        k = sum(ok_kb)
        folds[f] = {"n": len(test), "with_kb": {"correct": k, "accuracy": k / len(test)},
                    "without_kb": {"correct": sum(ok_fb), "accuracy": sum(ok_fb) / len(test)},
                    "best_baseline": {"rule": rule_text, "accuracy": sum(ok_bb) / len(test),
                                      "train_accuracy": bb_train},
                    "pack": [str(r.structure.key) for r in rules], "train_n": len(train)}
    return {"folds": folds, "pooled": {"n": len(kb_all), "with_kb": _acc(kb_all), "without_kb": _acc(fb_all),
                                       "best_baseline": _acc(bb_all),
                                       "kb_minus_best_baseline": _margin(kb_all, bb_all)}}


BOOTSTRAP = 2000


def compare_packs(views: Iterable[QuestionView], packs: Sequence[tuple[str, Sequence[PackEntry]]], *,
                  split: str | None = "test", train: Sequence[QuestionView] | None = None,
                  task_group: str | None = None) -> dict:
    """Two (or more) pack versions on the same questions: each one's accuracy, and the first minus
    each other with a paired (Newcombe) interval and a pool-bootstrap one. TASK_GROUP: answer that
    task group's questions (every split) with weights fitted on the other groups' training questions."""
    views = list(views)
    if task_group is not None:
        qs = [q for q in views if q.task == task_group]
        train = [q for q in views if q.task != task_group and q.split == "train" and q.origin != "imported"]
    else:
        qs = [q for q in views if split is None or q.split == split]
        if train is None:
            train = [q for q in views if q.split == "train"]
    rule, prior_fn, _ = best_prior(train)
    ok_prior = [prior_fn(q).index == q.winner for q in qs]
    out, oks, picks = [], [], []
    for name, entries in packs:
        rules = rules_from_pack(entries, train)
        answers = [solve(q, rules).index for q in qs]
        ok = [i == q.winner for i, q in zip(answers, qs)]
        picks.append(answers)
        oks.append(ok)
        live = solver_entries(entries)
        out.append({"pack": name, "size": len(live), "ids": [e.prop.id for e in live], **_acc(ok)})
    diffs = []
    pools = [q.pool for q in qs]
    for (name, _), ok, answers in zip(packs[1:], oks[1:], picks[1:]):
        value, ci = pool_bootstrap(pools, oks[0], ok)
        m = _margin(oks[0], ok)
        # the questions the two packs answer differently: where curation changed the answer
        disagree = [{"question": q.question_id, "family": q.family, "pool": q.pool, "a": q.letters[ia],
                     "b": q.letters[ib], "winner": q.letters[q.winner] if q.winner >= 0 else None}
                    for q, ia, ib in zip(qs, picks[0], answers) if ia != ib]
        diffs.append({"a": packs[0][0], "b": name, "value": value, "ci": ci, "newcombe_ci95": m["ci95"],
                      "excludes_zero": not (ci[0] <= 0.0 <= ci[1]), "disagree": disagree,
                      "a_right_b_wrong": sum(a and not b for a, b in zip(oks[0], ok)),
                      "b_right_a_wrong": sum(b and not a for a, b in zip(oks[0], ok))})
    return {"n": len(qs), "pools": len(set(pools)), "split": split if task_group is None else None,
            "task_group": task_group, "train_n": len(train), "packs": out, "difference": diffs,
            "prior": {"rule": rule, **_acc(ok_prior)}}


def pool_bootstrap(pools: Sequence[str], a: Sequence[bool], b: Sequence[bool], *, n: int = BOOTSTRAP,
                   seed: int = 0) -> tuple[float, list[float]]:
    """The accuracy margin of A over B on the same questions and its 95% interval, resampling whole
    candidate pools (the questions of one pool share runs, so they are not independent)."""
    import random

    by: dict[str, list[int]] = defaultdict(list)
    for i, p in enumerate(pools):
        by[p].append(i)
    units = [(sum(a[i] for i in idx) - sum(b[i] for i in idx), len(idx)) for idx in by.values()]
    total = sum(k for _, k in units)
    value = sum(d for d, _ in units) / total if total else 0.0
    if not units:
        return value, [0.0, 0.0]
    rng = random.Random(seed)
    draws = []
    for _ in range(n):
        d = k = 0
        for _ in range(len(units)):
            du, ku = units[rng.randrange(len(units))]
            d += du
            k += ku
        draws.append(d / k if k else 0.0)
    draws.sort()
    return value, [draws[int(0.025 * (n - 1))], draws[int(0.975 * (n - 1))]]


def best_prior(train: Sequence[QuestionView]) -> tuple[str, Callable[[QuestionView], Answer], float]:
    """The no-KB solver as a real prior: of always-A and every one-feature rule ("higher params
    wins" among them), the most accurate on TRAIN."""
    return best_single_rule(train)


def leave_one_task_group_out(views: Iterable[QuestionView], **mine_kw) -> dict:
    """Per task group (regression, classification, language modelling — not sibling families, which
    share models, grids and grammar): mine, select and weigh the pack on the other groups' questions
    only (imported ones never train), answer every question of the held-out group; the prior is the
    best prior rule chosen on the same training groups. The pooled margin over the prior comes with
    a 95% interval from a bootstrap over candidate pools."""
    views = list(views)
    groups = sorted({q.task for q in views})
    folds, kb_all, pr_all, fb_all, pools = {}, [], [], [], []
    for g in groups:
        fold = _held_out_fold(views, lambda q, g=g: q.task == g, mine_kw)
        if fold is None:
            continue
        train, test, rules, rule_text, prior_train, ok_kb, ok_pr, ok_fb = fold
        kb_all += ok_kb
        pr_all += ok_pr
        fb_all += ok_fb
        pools += [q.pool for q in test]
        value, ci = pool_bootstrap([q.pool for q in test], ok_kb, ok_pr)
        folds[g] = {"n": len(test), "pools": len({q.pool for q in test}),
                    "families": sorted({q.family for q in test}),
                    "with_kb": _acc(ok_kb), "without_kb": _acc(ok_fb), "chance": _chance(test),
                    "prior": {"rule": rule_text, "train_accuracy": prior_train, **_acc(ok_pr)},
                    "margin_over_prior": {"value": value, "ci": ci},
                    "pack": [str(r.structure.key) for r in rules], "train_n": len(train)}
    value, ci = pool_bootstrap(pools, kb_all, pr_all)
    return {"folds": folds, "pooled": {
        "n": len(kb_all), "pools": len(set(pools)), "with_kb": _acc(kb_all), "without_kb": _acc(fb_all),
        "prior": _acc(pr_all)},
        "margin_over_prior": {"value": value, "ci": ci, "excludes_zero": not (ci[0] <= 0.0 <= ci[1]),
                              "resampled": "candidate pools", "draws": BOOTSTRAP}}


def _fmt(a: dict) -> str:
    return fmt_interval(a["correct"], a["n"])


def _pct(x) -> str:
    return "—" if x is None else fmt_pct(x)


def render(report: dict) -> str:
    r = report
    lines = [
        f"Offline replay on {r['n']} held-out questions (split {r['split']}), pack of {r['pack_size']} "
        f"propositions, rule-based solver, no model call.",
        f"  uniform chance (expected): {_pct(r['chance'])}",
        f"  always A (the solver without the KB): {_fmt(r['without_kb'])}",
        f"  best single-feature rule on the training split ({r['baselines']['best_single_feature']['rule']}): "
        f"{_fmt(r['baselines']['best_single_feature'])}",
        f"  with KB: {_fmt(r['with_kb'])}; the KB decided {r['answered_by_kb']}/{r['n']}, the fallback the rest",
    ]
    h = r["headline"]["kb_minus_best_baseline"]
    verdict = "beyond the noise" if h["excludes_zero"] else "within the noise (the interval holds 0)"
    lines.append(f"  headline: KB minus the best baseline {100 * h['points']:+.1f} points "
                 f"(95% CI {100 * h['ci95'][0]:+.1f} to {100 * h['ci95'][1]:+.1f}), {verdict}")
    lines.append("  by source:")
    for src, v in r["by_source"].items():
        lines.append(f"    {src:<9} n={v['n']:<4} with KB {_pct(v['with_kb']['accuracy'])}; without "
                     f"{_pct(v['without_kb']['accuracy'])}; best baseline {_pct(v['best_baseline']['accuracy'])}")
    lines.append("  by family:")
    for fam, v in r["by_family"].items():
        lines.append(f"    {fam:<34} n={v['n']:<4} with KB {_pct(v['with_kb']['accuracy'])}; without "
                     f"{_pct(v['without_kb']['accuracy'])}; best baseline {_pct(v['best_baseline']['accuracy'])}")
    lines.append("  by category:")
    for cat, v in r["by_category"].items():
        lines.append(f"    {cat:<18} without {_fmt(v['without_kb'])}; with {_fmt(v['with_kb'])}")
    p = r["pairs"]
    if p["n"]:
        lines.append(f"  pairs (n={p['n']}): both right without KB {_fmt(p['combined_without_kb'])}; "
                     f"with KB {_fmt(p['combined_with_kb'])}")
        lines.append(f"    switch rate with KB {_fmt(p['switch_rate_with_kb'])}; without KB "
                     f"{_fmt(p['switch_rate_without_kb'])}; the true winner flips in {_fmt(p['true_flip_rate'])}")
    pr = r.get("prior")
    if pr:
        lines.append(f"  the prior (the no-KB solver: the best prior rule on the training split, {pr['rule']}): "
                     f"{_fmt(pr)}")
    tg = r.get("leave_one_task_group_out")
    if tg and tg["folds"]:
        lines.append("  leave one task group out (mined, selected and weighed on the other task groups):")
        for g, v in tg["folds"].items():
            m = v["margin_over_prior"]
            lines.append(f"    {g:<16} n={v['n']:<4} pools={v['pools']:<3} KB {_pct(v['with_kb']['accuracy'])}; prior "
                         f"{_pct(v['prior']['accuracy'])} ({v['prior']['rule']}); always A "
                         f"{_pct(v['without_kb']['accuracy'])}; chance {_pct(v['chance'])}; margin "
                         f"{100 * m['value']:+.1f} (95% CI {100 * m['ci'][0]:+.1f} to {100 * m['ci'][1]:+.1f})")
        m = tg["margin_over_prior"]
        p = tg["pooled"]
        lines.append(f"    pooled n={p['n']} ({p['pools']} pools): KB {_fmt(p['with_kb'])}; prior {_fmt(p['prior'])}; "
                     f"margin over the prior {100 * m['value']:+.1f} points (pool bootstrap 95% CI "
                     f"{100 * m['ci'][0]:+.1f} to {100 * m['ci'][1]:+.1f})"
                     + (", beyond the noise" if m["excludes_zero"] else ", within the noise"))
    lo = r.get("leave_one_family_out")
    if lo and lo["folds"]:
        lines.append("  leave one family out (mined on the other families, top 20 as the pack):")
        for fam, v in lo["folds"].items():
            lines.append(f"    {fam:<34} n={v['n']:<4} KB {_pct(v['with_kb']['accuracy'])}; best single rule "
                         f"{_pct(v['best_baseline']['accuracy'])} ({v['best_baseline']['rule']}); always A "
                         f"{_pct(v['without_kb']['accuracy'])}")
        pooled = lo["pooled"]
        m = pooled["kb_minus_best_baseline"]
        lines.append(f"    pooled n={pooled['n']}: KB {_fmt(pooled['with_kb'])}; best single rule "
                     f"{_fmt(pooled['best_baseline'])}; margin {100 * m['points']:+.1f} points "
                     f"(95% CI {100 * m['ci95'][0]:+.1f} to {100 * m['ci95'][1]:+.1f})"
                     + (", beyond the noise" if m["excludes_zero"] else ", within the noise"))
    return "\n".join(lines) + "\n"

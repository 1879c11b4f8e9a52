"""The search: the cheapest sequence of candidate edits after which the design verifies without a block.

A best-first search (A*) over designs. A state is a design reached by some edits, with its report; its
priority is the edits' cost so far plus one per block it still has (each needs at least one edit).
Expanding a state takes its first block finding (in the order of the graph: a fault upstream hides
what follows it) and verifies that finding's candidates one cost at a time, so a cheap fix is always
tried before a dearer one. A candidate is kept when

- the finding is gone, and
- every other finding is no worse: no block appears on a node outside the finding's nodes and what
  they feed (what they feed was hidden behind the fault and is only now seen), no warn becomes a
  block, and no new warn that a crash can hide behind (shape, dtype) appears outside them either.

The first state popped with no block is the repair. The search is bounded by a number of candidates
verified and a time; past either it stops and answers what it has (possibly no repair).
"""

from __future__ import annotations

import heapq
import itertools
import json
import time
from dataclasses import dataclass, field

from ..graph import Design, DesignError, parse_ref
from ..rule import RULES
from ..verify import verify_graph
from .candidates import Around, Candidate, candidates
from .edits import apply_edits

DEFAULT_TIME_LIMIT_S = 20.0
DEFAULT_MAX_CANDIDATES = 3000
# warns of these categories say the design may still crash at some size (a condition on a symbol, a size
# or a position the verifier cannot follow); the others (efficiency, numerics) say it runs
MAY_CRASH = ("shape", "dtype")


@dataclass
class Step:
    finding: object  # the Finding this step repairs
    edits: list
    d: dict  # the design after this step (and every step before it)
    report: object


@dataclass
class State:
    d: dict
    report: object
    cost: int
    steps: list = field(default_factory=list)

    @property
    def blocks(self) -> list:
        return [f for f in self.report.findings if f.severity == "block"]


@dataclass
class SearchResult:
    original: object  # Report of the design as given
    steps: list  # Step, in order (the repair's path, or the best partial path)
    solved: bool
    stuck_on: object | None  # the block finding no candidate repaired (when not solved)
    tried: int
    seconds: float
    stopped: str | None = None  # "time" | "candidates" when a limit ended the search


def _verify(d: dict):
    try:
        design = Design.from_dict(d)
    except DesignError:
        return None
    try:
        return verify_graph(design, with_cost=False)
    except Exception:  # noqa: BLE001 - a candidate the verifier cannot read is no repair
        return None


def _first_block(d: dict, report) -> object | None:
    order = {n["id"]: i for i, n in enumerate(_topo(d))}
    blocks = [f for f in report.findings if f.severity == "block"]
    if not blocks:
        return None
    return min(blocks, key=lambda f: min((order.get(n, len(order)) for n in f.nodes), default=-1))


def _topo(d: dict) -> list:
    try:
        return [{"id": n.id} for n in Design.from_dict(d).topo_order()]
    except DesignError:
        return d["nodes"]


def _downstream(d: dict, start) -> set:
    users: dict = {}
    for n in d["nodes"]:
        for r in n.get("in", []):
            users.setdefault(parse_ref(r)[0], []).append(n["id"])
    seen = set(start)
    todo = list(start)
    while todo:
        for u in users.get(todo.pop(), ()):
            if u not in seen:
                seen.add(u)
                todo.append(u)
    return seen


def no_worse(before, after, target, d_before: dict, d_after: dict, created: set) -> bool:
    """`after` lost `target` and made no other finding worse (see the module's words)."""
    return risk(before, after, target, d_before, d_after, created) is not None


def risk(before, after, target, d_before: dict, d_after: dict, created: set) -> float | None:
    """None when `after` still has `target` or made another finding worse; else a penalty below one
    cost step: half a step per new shape or dtype warn (a size the verifier cannot follow, a condition
    on a symbol) on a node the fault was hiding. Such a warn anywhere else makes it worse: a crash
    can hide behind it, and the repair is meant to run."""
    keys_after = {f.key for f in after.findings}
    if target.key in keys_after:
        return None
    old = {f.key: f.severity for f in before.findings}
    hidden = (_downstream(d_before, target.nodes) | _downstream(d_after, target.nodes)) - created
    penalty = 0.0
    for f in after.findings:
        if f.severity != "block":
            spec = RULES.get(f.rule)
            if f.key not in old and spec is not None and spec.category in MAY_CRASH:
                if not f.nodes or not set(f.nodes) <= hidden:
                    return None
                penalty += 0.5
            continue
        if old.get(f.key) == "block":
            continue
        if f.key in old:
            return None  # a warn became a block
        if not f.nodes or not set(f.nodes) <= hidden:
            return None
    return penalty


def _canon(d: dict) -> str:
    return json.dumps(d, sort_keys=True, separators=(",", ":"))


def search(d0: dict, *, time_limit_s: float = DEFAULT_TIME_LIMIT_S,
           max_candidates: int = DEFAULT_MAX_CANDIDATES) -> SearchResult:
    """The cheapest repair (or, past a limit or with none, the best partial path)."""
    return next(solutions(d0, time_limit_s=time_limit_s, max_candidates=max_candidates))


def solutions(d0: dict, *, time_limit_s: float = DEFAULT_TIME_LIMIT_S,
              max_candidates: int = DEFAULT_MAX_CANDIDATES):
    """Repairs in the order of their cost, each a SearchResult: the search goes on from where it was when
    the next one is asked for (with fresh limits), so a repair torch refuses can give way to the next.
    The last one yielded is unsolved (nothing more within the limits)."""
    t0 = time.monotonic()
    report0 = _verify(d0)
    if report0 is None:
        raise DesignError("the design cannot be verified")
    start = State(d0, report0, 0)
    if not start.blocks:
        yield SearchResult(report0, [], True, None, 0, 0.0)
        return
    seq = itertools.count()
    heap: list = []
    seen = {_canon(d0)}
    tried = 0
    best = start  # the state with the fewest blocks (then the cheapest): the answer when nothing solves it
    stopped = None
    tiers: dict[int, dict] = {}  # id(state) -> {cost: [candidates]}
    solved = 0

    def push_state(s: State) -> None:
        heapq.heappush(heap, (s.cost + len(s.blocks), _warns(s), next(seq), "state", s, 0))

    push_state(start)
    while heap:
        if time.monotonic() - t0 > time_limit_s:
            stopped = "time"
            break
        if tried >= max_candidates:
            stopped = "candidates"
            break
        _, _, _, what, s, cost = heapq.heappop(heap)
        if what == "state":
            if not s.blocks:
                yield SearchResult(report0, s.steps, True, None, tried, time.monotonic() - t0)
                t0, tried, solved = time.monotonic(), 0, solved + 1
                continue
            target = _first_block(s.d, s.report)
            groups: dict[int, list] = {}
            for c in candidates(Around.of(s.d, s.report), target):
                groups.setdefault(c.cost, []).append(c)
            tiers[id(s)] = (target, groups)
            costs = sorted(groups)
            if not costs:
                continue
            heapq.heappush(heap, (s.cost + costs[0] + len(s.blocks) - 1, _warns(s), next(seq), "expand", s,
                                  costs[0]))
            continue
        target, groups = tiers[id(s)]
        costs = sorted(groups)
        for c in groups[cost]:
            if time.monotonic() - t0 > time_limit_s or tried >= max_candidates:
                break
            d1 = _apply(s.d, c)
            if d1 is None:
                continue
            key = _canon(d1)
            if key in seen:
                continue
            seen.add(key)
            tried += 1
            r1 = _verify(d1)
            if r1 is None:
                continue
            created = {e["node"]["id"] for e in c.edits if e["edit"] == "insert"}
            penalty = risk(s.report, r1, target, s.d, d1, created)
            if penalty is None:
                continue
            child = State(d1, r1, s.cost + c.cost + c.nudge + penalty, s.steps + [Step(target, c.edits, d1, r1)])
            if (len(child.blocks), child.cost) < (len(best.blocks), best.cost):
                best = child
            push_state(child)
        nxt = [k for k in costs if k > cost]
        if nxt:
            heapq.heappush(heap, (s.cost + nxt[0] + len(s.blocks) - 1, _warns(s), next(seq), "expand", s, nxt[0]))
    if not best.blocks and not solved:  # a limit stopped the search after it verified a repair, before it took it
        yield SearchResult(report0, best.steps, True, None, tried, time.monotonic() - t0, stopped)
        return
    stuck = _first_block(best.d, best.report)
    yield SearchResult(report0, best.steps, False, stuck, tried, time.monotonic() - t0, stopped)


def _warns(s: State) -> int:
    return len(s.report.findings) - len(s.blocks)


def _apply(d: dict, c: Candidate) -> dict | None:
    try:
        return apply_edits(d, c.edits)
    except (KeyError, IndexError, ValueError, TypeError):
        return None


__all__ = ["DEFAULT_MAX_CANDIDATES", "DEFAULT_TIME_LIMIT_S", "SearchResult", "Step", "no_worse", "search",
           "solutions"]

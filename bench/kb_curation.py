"""Does curation change the answer? A curated pack against the raw miner top 20, each held-out task group
answered by a pack that never saw it.

    python bench/kb_curation.py [--policy dups|narrow|both] [--questions assets/aiq/questions.jsonl]

`kb replay --pack current --pack miner --task-group G` on a seeded store compares a pack mined and
curated on every group's training questions (G's among them) with a miner fitted on the other groups
only, so it flatters the curated pack. Here, per task group G, a fresh store holds only the other
groups' questions; the store's miner runs on them and a fixed curation policy is applied to its
suggestions, as a curator taking every suggestion would:

- dups: merge every same-structure duplicate pair (keep the older);
- narrow: also apply each narrowing suggestion that at least halves the contradiction rate;

and the store's pack (at most 20) and the raw miner's top 20 on the same training questions answer
G's questions (`core.kb.replay.compare_packs`, a pool-bootstrap 95% interval). Nothing is executed.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from archcurator.core.kb.features import view
from archcurator.core.kb.replay import compare_packs
from archcurator.store import kb as K
from archcurator.store.kb_loop import miner_pack

ROOT = Path(__file__).resolve().parents[1]


def curate(db: str, policy: str) -> tuple[int, int]:
    merged = narrowed = 0
    for _ in range(5):  # a merge or narrowing changes the next suggestions
        s = K.suggestions(db)
        acted = False
        for d in s.duplicates:
            if d.kind == "same structure":
                try:
                    K.merge(db, min(d.a, d.b), max(d.a, d.b), actor="bench")
                except K.KBError:  # one of the pair was merged this round
                    continue
                merged += 1
                acted = True
        if policy in ("narrow", "both"):
            for n in s.narrowing:
                before = n.contradict_before / max(1, n.support_before + n.contradict_before)
                after = n.contradict_after / max(1, n.support_after + n.contradict_after)
                if after <= before / 2:
                    try:
                        K.narrow(db, n.prop_id, [n.condition], actor="bench")
                    except K.KBError:
                        continue
                    narrowed += 1
                    acted = True
        if not acted:
            break
    return merged, narrowed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--policy", choices=("dups", "narrow", "both"), default="both")
    ap.add_argument("--questions", type=Path, default=ROOT / "assets" / "aiq" / "questions.jsonl")
    a = ap.parse_args()
    qs = [json.loads(line) for line in a.questions.read_text().splitlines() if line.strip()]
    views = [view(q, origin="shipped") for q in qs]
    policies = ("dups", "narrow") if a.policy == "both" else (a.policy,)
    print(f"{'policy':<7} {'held out':<15} {'n':>4} {'pools':>5} {'merged':>6} {'narrowed':>8} "
          f"{'curated':>11} {'miner':>8}  curated - miner [95% pool bootstrap]")
    for policy in policies:
        for g in sorted({v.task for v in views}):
            with tempfile.TemporaryDirectory() as tmp:
                db = str(Path(tmp) / "kb.duckdb")
                K.import_questions(db, [q for q, v in zip(qs, views) if v.task != g], source=str(a.questions),
                                   origin="shipped")
                K.mine(db, actor="bench")
                merged, narrowed = curate(db, policy)
                curated = K.current_pack(db)
            train = [v for v in views if v.task != g and v.split == "train"]
            r = compare_packs(views, [("curated", curated), ("miner", miner_pack(train))], task_group=g)
            (c, m), d = r["packs"], r["difference"][0]
            lo, hi = d["ci"]
            print(f"{policy:<7} {g:<15} {r['n']:>4} {r['pools']:>5} {merged:>6} {narrowed:>8} "
                  f"{c['correct']:>4} ({c['size']:>2})  {m['correct']:>4}    {100 * d['value']:+.1f} "
                  f"[{100 * lo:+.1f}, {100 * hi:+.1f}]{'  excludes 0' if d['excludes_zero'] else ''}")


if __name__ == "__main__":
    main()

"""Does the pack's answer depend on the data? Swap a question's dataset and count changed picks.

    python -m archcurator.core.kb.swap [--questions assets/aiq/questions.jsonl] [--others 10]
        [--flips assets/aiq/flips.jsonl] [--json]

For each question, its dataset is replaced by OTHERS fresh instances of the same family and shape
(``datasets.sample_dataset_spec`` with the input dimension / vocabulary kept, so every recipe still
fits), the same recipes and letters; the pack answers each swapped question and the measurement
counts how often its pick differs from its pick on the original. A solver blind to the data
changes nothing (the issue's measurement: 0 of 600). The pack is the automatic one
(``replay.mined_rules``) mined, selected and weighed on the training split; nothing is executed,
only answered. A pick that changes is not a claim that it is right on the swapped data: no
outcome exists for it (the flip search, ``core.aiq.flips``, executes that).

``--flips FILE`` also answers executed flipping pairs (``assets/aiq/flips.jsonl``: the same recipes
on two datasets, the winner reversed) with the same pack: how often its pick switches between the
two questions of a pair (the study's switch rate) and how often it gets both right. Either file may be
gzipped (the study world's ``assets/aiq/study-cache/world/questions.jsonl.gz``); of a file that holds
kept pairs too, only the pairs marked ``flip`` are answered.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from ..aiq import datasets as ds_mod
from .features import view
from .replay import Rule, mined_rules, solve

SWAP_SEED = 9_000


def swap_datasets(ds: dict, others: int) -> list[dict]:
    """OTHERS fresh datasets of DS's family and shape (never DS itself)."""
    fam, p = ds["family"], ds.get("params") or {}
    opts: dict = {}
    if fam == "multivariate_regression":
        opts["input_dim"] = int(p.get("input_dim", 2))
    elif fam == "bigram_lm":
        opts = {k: int(p[k]) for k in ("vocab_size", "context_length") if k in p}
    out = []
    for k in range(others * 2):
        if len(out) >= others:
            break
        spec = ds_mod.sample_dataset_spec(fam, SWAP_SEED + 131 * k + int(p.get("instance_seed", 0)), **opts)
        if spec["dataset_id"] != ds.get("dataset_id"):
            out.append(spec)
    return out


def swapped(q: dict, ds: dict) -> dict:
    """Q with its dataset replaced by DS (the same choices; the answer key is unknown there)."""
    return {**q, "dataset": ds, "dataset_id": ds["dataset_id"], "question_id": f"{q['question_id']}@{ds['dataset_id']}"}


def measure(questions: Sequence[dict], rules: Sequence[Rule], others: int = 10) -> dict:
    """{"swaps", "changed", "rate", "by_family": {family: {"swaps", "changed"}}}."""
    swaps: Counter = Counter()
    changed: Counter = Counter()
    cache: dict[str, list[dict]] = {}
    for q in questions:
        if q["family"] not in ds_mod.ID_PREFIX or not ds_mod.is_synthesisable(q.get("dataset") or {}):
            continue
        pick = solve(view(q), rules).index
        key = q["dataset_id"]
        if key not in cache:
            cache[key] = swap_datasets(q["dataset"], others)
        for ds in cache[key]:
            swaps[q["family"]] += 1
            changed[q["family"]] += solve(view(swapped(q, ds)), rules).index != pick
    n, c = sum(swaps.values()), sum(changed.values())
    return {"swaps": n, "changed": c, "rate": c / n if n else None,
            "by_family": {f: {"swaps": swaps[f], "changed": changed[f]} for f in sorted(swaps)}}


def flip_rates(questions: Sequence[dict], rules: Sequence[Rule]) -> dict:
    """The pack on flipping pairs (QUESTIONS holds both of each, ``pair`` set): {"pairs", "switched",
    "both_right", "switch_rate", "both_right_rate", "by_split"}; a pair's split is its questions'."""
    by_id = {q["question_id"]: q for q in questions}
    seen: set[str] = set()
    rows = []
    for q in questions:
        pair = q.get("pair") or {}
        pid, partner = pair.get("pair_id"), pair.get("partner")
        if not pid or pid in seen or partner not in by_id:
            continue
        seen.add(pid)
        a, b = view(q), view(by_id[partner])
        ia, ib = solve(a, rules).index, solve(b, rules).index
        rows.append((q.get("split", "test"), a.recipes[ia] != b.recipes[ib], ia == a.winner and ib == b.winner))

    def rates(rs):
        n = len(rs)
        sw, both = sum(r[1] for r in rs), sum(r[2] for r in rs)
        return {"pairs": n, "switched": sw, "both_right": both, "switch_rate": sw / n if n else None,
                "both_right_rate": both / n if n else None}
    return {**rates(rows), "by_split": {s: rates([r for r in rows if r[0] == s]) for s in sorted({r[0] for r in rows})}}


def _read_jsonl(path: Path) -> list[dict]:
    text = gzip.decompress(path.read_bytes()).decode() if path.suffix == ".gz" else path.read_text()
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--questions", type=Path, default=Path(__file__).resolve().parents[2] / "assets" / "aiq"
                    / "questions.jsonl")
    ap.add_argument("--others", type=int, default=10)
    ap.add_argument("--flips", type=Path, default=None, help="flipping pairs to answer (assets/aiq/flips.jsonl)")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    qs = _read_jsonl(a.questions)
    train = [view(q) for q in qs if q.get("split") == "train"]
    rules = mined_rules(train)
    r = measure(qs, rules, a.others)
    r["pack"] = [str(x.structure.key) for x in rules]
    if a.flips is not None:
        r["flips"] = flip_rates([q for q in _read_jsonl(a.flips) if (q.get("pair") or {}).get("flip")], rules)
    if a.json:
        print(json.dumps(r, indent=2))
    else:
        print(f"{r['changed']} of {r['swaps']} swaps changed the pack's pick"
              + (f" ({100 * r['rate']:.1f}%)" if r["rate"] is not None else ""))
        for f, v in r["by_family"].items():
            print(f"  {f:<26} {v['changed']} of {v['swaps']}")
        if "flips" in r:
            fr = r["flips"]
            print(f"flipping pairs: {fr['pairs']}; the pick switches on {fr['switched']}, both right on "
                  f"{fr['both_right']}")
            for sp, v in fr["by_split"].items():
                print(f"  {sp:<6} {v['pairs']} pairs: switched {v['switched']}, both right {v['both_right']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

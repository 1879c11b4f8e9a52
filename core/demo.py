"""The shipped demo data (synthetic): `python -m archcurator.core.demo` writes assets/demo/*.jsonl.

- the reference architectures, author `reference`;
- three synthetic agent authors (models `synth-alpha`, `synth-beta`,
  `synth-gamma`) over two task sets (`plain-sentence`, `repair`) and three
  recorded runs each, made from the reference zoo with the corruption
  generator at different rates; some lines are ungenerated (`error`);
  `repair` designs link to the design they repair (`parent`) and every agent
  design names the reference it came from (`reference`); a later run's
  revision of a design links to the earlier version (`parent`).

Every agent line carries `meta.synthetic = true`. Deterministic: the same
code writes the same files.
"""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path

from .assets import asset_path

AUTHORS = {"synth-alpha": 0.12, "synth-beta": 0.30, "synth-gamma": 0.55}  # share of corrupted designs
UNGENERATED = {"synth-alpha": 0.02, "synth-beta": 0.06, "synth-gamma": 0.12}
TASK_SETS = ("plain-sentence", "repair")
RUNS = ("2026-11-02a", "2026-11-09a", "2026-11-16a")
PER_RUN = 22
MAX_NODES = 160
UNGENERATED_REASONS = [
    "could not generate: op 'Mamba' unknown",
    "could not generate: output was not valid JSON",
    "could not generate: the model stopped before closing the graph",
    "could not generate: refused the task",
]


def _zoo() -> dict:
    folder = asset_path("architectures")
    out = {}
    for p in sorted(folder.glob("*.json")):
        out[p.stem] = json.loads(p.read_text())
    return out


def _clean_variant(base: dict, rng: random.Random) -> dict:
    g = copy.deepcopy(base)
    train = dict(g.get("train") or {})
    train["steps"] = rng.choice([500, 1000, 2000, 5000])
    train["batch_size"] = rng.choice([16, 32, 64, 128])
    train["device"] = rng.choice(["A10G", "A10G", "L4", "H100"])
    g["train"] = train
    return g


def _corrupted(base: dict, rng: random.Random, kinds: list) -> tuple[dict, str] | None:
    from .ground import corrupt

    order = list(kinds)
    rng.shuffle(order)
    for kind in order:
        g = corrupt(copy.deepcopy(base), kind, rng)
        if g is not None:
            return g, kind
    return None


def generate() -> dict[str, list[dict]]:
    from .ground import KINDS

    zoo = _zoo()
    small = [n for n, g in zoo.items() if len(g["nodes"]) <= MAX_NODES]
    kinds = [k for k in (KINDS if isinstance(KINDS, (list, tuple)) else list(KINDS))]
    files: dict[str, list[dict]] = {"reference": []}
    for name, g in zoo.items():
        files["reference"].append({"id": f"ref-{name}", "author": "reference", "model": None,
                                   "task_set": "reference", "run": "zoo-v1", "reference": name, "graph": g})
    for model, rate in AUTHORS.items():
        rng = random.Random(f"demo:{model}")
        lines: list[dict] = []
        previous: dict[tuple, str] = {}  # (task set, slot) -> id in the previous run
        for r_i, run in enumerate(RUNS):
            run_rate = max(0.0, min(0.95, rate + rng.uniform(-0.08, 0.08)))
            this_run: dict[tuple, tuple] = {}
            for task_set in TASK_SETS:
                for slot in range(PER_RUN):
                    did = f"{model.split('-')[1][:1]}{r_i}{task_set[0]}-{slot:03d}"
                    rec = {"id": did, "author": "agent", "model": model, "task_set": task_set, "run": run}
                    if rng.random() < UNGENERATED[model]:
                        rec["error"] = rng.choice(UNGENERATED_REASONS)
                        lines.append(rec)
                        continue
                    base_name = small[(slot * 7 + r_i * 3 + len(model)) % len(small)]
                    base = zoo[base_name]
                    rec["reference"] = base_name
                    if task_set == "repair" and ("plain-sentence", slot) in this_run:
                        # a repair task starts from this run's plain-sentence design of the same slot
                        start_id, start_base = this_run[("plain-sentence", slot)]
                        rec["parent"] = start_id
                        base_name, base = start_base, zoo[start_base]
                        rec["reference"] = base_name
                    if rng.random() < run_rate:
                        got = _corrupted(base, rng, kinds)
                        if got is None:
                            continue
                        graph, kind = got
                        graph = _label(graph, f"{base_name}: {kind}")
                    else:
                        graph = _label(_clean_variant(base, rng), f"{base_name}: clean")
                    graph["name"] = f"{model}/{did}"
                    if task_set != "repair" and (task_set, slot) in previous and rng.random() < 0.3:
                        rec["parent"] = previous[(task_set, slot)]  # a revision of last run's design
                    previous[(task_set, slot)] = did
                    this_run[(task_set, slot)] = (did, base_name)
                    rec["graph"] = graph
                    lines.append(rec)
        files[model] = lines
    return files


def _label(graph: dict, what: str) -> dict:
    meta = dict(graph.get("meta") or {})
    meta.update({"synthetic": True, "generator": "core.demo", "derived": what})
    graph["meta"] = meta
    return graph


def write(folder: Path | None = None) -> list[Path]:
    folder = folder or asset_path("demo")
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, lines in generate().items():
        path = folder / f"{name}.jsonl"
        with path.open("w", encoding="utf-8") as fh:
            for rec in lines:
                fh.write(json.dumps(rec, separators=(",", ":")) + "\n")
        written.append(path)
    return written


if __name__ == "__main__":
    for p in write():
        print(p)

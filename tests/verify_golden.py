"""The verifier's answers, recorded: every verdict, finding and message (byte for byte) and a digest of the
cost quote and every inferred type, on the zoo, the grounding study's graphs, a fixed sample of the
differential generator's designs and the benchmark's chains.

    python tests/verify_golden.py --update   # re-record tests/fixtures/verify_golden.json

tests/test_verify_golden.py compares the current code against the record (the repeat cache on and off), so
a speed-up that changes any answer fails. Re-record only for a change meant to alter answers, and say so in
the commit: the record is the contract the optimisations keep.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

GOLDEN = Path(__file__).resolve().parent / "fixtures" / "verify_golden.json"
GENERATOR_SEEDS = range(90_000, 90_200)  # a sample no fix was made against


def chain(n_nodes: int) -> dict:
    """bench/bench_verify.py's chain of distinct layers (Linear, LayerNorm, GELU of widths that never repeat)."""
    nodes, prev, width, i = [], "x", 64, 0
    while len(nodes) < n_nodes:
        nodes += [
            {"id": f"l{i}.fc", "op": "Linear", "args": {"in_features": width, "out_features": width + 1},
             "in": [prev]},
            {"id": f"l{i}.norm", "op": "LayerNorm", "args": {"normalized_shape": width + 1}, "in": [f"l{i}.fc"]},
            {"id": f"l{i}.act", "op": "GELU", "args": {}, "in": [f"l{i}.norm"]},
        ][:n_nodes - len(nodes)]
        prev, width, i = nodes[-1]["id"], width + 1, i + 1
    return {"format": "archgraph/1", "name": f"chain-{n_nodes}",
            "inputs": [{"id": "x", "shape": ["B", "T", 64], "dtype": "float32"}], "nodes": nodes,
            "outputs": [prev], "train": {"loss": "mse", "batch_size": 32, "steps": 1000, "seq_len": 128}}


def designs() -> dict:
    """name -> design dict, in a fixed order."""
    from archcurator.core.ground.generate import generate
    from archcurator.core.ground.kinds import ground_set, load_zoo

    out = {f"zoo/{k}": v for k, v in sorted(load_zoo().items())}
    out.update({f"ground/{c['case']}": c["graph"] for c in ground_set()})
    out.update({f"gen/{s}": generate(s) for s in GENERATOR_SEEDS})
    out.update({f"chain/{n}": chain(n) for n in (100, 1000)})
    return out


def answer(design: dict) -> dict:
    """What the verifier says of one design: the findings in full, the rest as a digest."""
    from archcurator.core.graph import Design
    from archcurator.core.verify import verify_graph

    report = verify_graph(Design.from_json(json.dumps(design)))
    types = {k: [[list(t.shape) if t.shape is not None else None, t.dtype] for t in v]
             for k, v in report.types.items()}
    body = json.dumps({"cost": report.cost, "types": types}, sort_keys=True, allow_nan=False)
    return {"verdict": report.verdict, "findings": [f.to_dict() for f in report.findings],
            "digest": hashlib.sha256(body.encode()).hexdigest()}


def record() -> dict:
    return {name: answer(d) for name, d in designs().items()}


if __name__ == "__main__":
    if sys.argv[1:] != ["--update"]:
        raise SystemExit(__doc__)
    answers = record()
    GOLDEN.write_text(json.dumps(answers, indent=0, sort_keys=True) + "\n", encoding="utf-8")
    print(f"recorded {len(answers)} designs in {GOLDEN}")

"""Hostile designs: whatever the args hold, verify answers with findings, never a traceback."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path

import pytest

from archcurator.core.graph import Design, DesignError
from archcurator.core.verify import verify_graph

ARCH = Path(__file__).resolve().parents[1] / "assets" / "architectures"
VALUES = [None, -1, 0, 1, 3, 2 ** 40, "x", "B", 1.5, [], [1], [1, 2, 3], {}, {"a": 1}, True, "same", [-1], [0, 0]]


def _mutants(n: int, seed: int = 0):
    zoo = [json.loads(p.read_text()) for p in sorted(ARCH.glob("*.json")) if p.stat().st_size < 60_000]
    rng = random.Random(seed)
    for _ in range(n):
        g = copy.deepcopy(rng.choice(zoo))
        for _ in range(rng.randint(1, 3)):
            node = rng.choice(g["nodes"])
            r = rng.random()
            if r < 0.5 and node.get("args"):
                node["args"][rng.choice(list(node["args"]))] = rng.choice(VALUES)
            elif r < 0.65:
                node["args"] = node.get("args") or {}
                node["args"][rng.choice(["dim", "shape", "kernel_size", "padding", "stride", "groups"])] = \
                    rng.choice(VALUES)
            elif r < 0.8:
                node["in"] = [rng.choice(g["nodes"])["id"] + rng.choice(["", ":1", ":7"])]
            else:
                node["op"] = rng.choice(["Linear", "Conv2d", "Reshape", "Concat", "LSTM", "Select", "Split",
                                         "MultiheadAttention"])
        yield g


def test_mutated_designs_get_findings_not_tracebacks():
    checked = 0
    for g in _mutants(400):
        try:
            design = Design.from_dict(g)
        except DesignError:
            continue
        report = verify_graph(design)
        json.dumps(report.to_dict())
        assert report.verdict in ("pass", "warn", "block")
        checked += 1
    assert checked > 300


@pytest.mark.parametrize("shape,dtype,needle", [
    ([-3, 4], "float32", "sizes >= 0"),
    (["B", ""], "float32", "sizes >= 0"),
    (["B", 4], "complex-ish", "dtype 'complex-ish'"),
])
def test_bad_inputs_are_one_line_design_errors(shape, dtype, needle):
    g = {"format": "archgraph/1", "name": "x", "inputs": [{"id": "x", "shape": shape, "dtype": dtype}],
         "nodes": [], "outputs": ["x"]}
    with pytest.raises(DesignError) as e:
        Design.from_dict(g, source="bad.json")
    assert needle in str(e.value) and str(e.value).startswith("bad.json: ") and "\n" not in str(e.value)

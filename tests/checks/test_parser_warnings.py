"""parse.unfollowed says every parser warning, not the first only: a design's finding is keyed by its rule
and nodes, and these name no node, so each warning after the first was dropped as a duplicate (an outside
tester's find: a LayerNorm's dtype note hid the TypeError nn.ReLU(dtype=...) raises)."""

from __future__ import annotations

import json

from archcurator.core.graph import Design
from archcurator.core.verify import verify_graph


def _design(warnings: list) -> Design:
    return Design.from_json(json.dumps({
        "format": "archgraph/1", "name": "w", "inputs": [{"id": "x", "shape": ["B", 4], "dtype": "float32"}],
        "nodes": [{"id": "a", "op": "Linear", "args": {"in_features": 4, "out_features": 2}, "in": ["x"]}],
        "outputs": ["a"], "meta": {"parser_warnings": warnings}}))


def _said(warnings: list) -> list[str]:
    return [f.message for f in verify_graph(_design(warnings)).findings if f.rule == "parse.unfollowed"]


def test_one_warning_is_said_as_it_is():
    assert _said([{"line": "m.py:3", "message": "first"}]) == ["m.py:3: first"]


def test_every_warning_is_said_in_one_finding():
    (msg,) = _said([{"line": "m.py:3", "message": "first"}, {"line": "m.py:4", "message": "second"}])
    assert msg == "2 constructs the parser did not follow: m.py:3: first; m.py:4: second"


def test_many_warnings_are_counted_past_the_ones_shown():
    (msg,) = _said([{"line": f"m.py:{i}", "message": f"w{i}"} for i in range(7)])
    assert msg.startswith("7 constructs") and "m.py:4: w4" in msg and "m.py:5" not in msg
    assert msg.endswith("; and 2 more (meta.parser_warnings keeps 7)")

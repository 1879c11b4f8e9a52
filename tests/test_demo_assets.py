"""The shipped demo is what `python -m archcurator.core.demo` writes (a change to the zoo or the
corruption generator means regenerating it), and it is labelled synthetic."""

from __future__ import annotations

import json

from archcurator.core.assets import asset_path
from archcurator.core.demo import AUTHORS, generate


def test_shipped_demo_equals_the_generator():
    for name, lines in generate().items():
        shipped = asset_path("demo", f"{name}.jsonl").read_text().splitlines()
        stale = f"assets/demo/{name}.jsonl is stale: python -m archcurator.core.demo"
        assert [json.loads(x) for x in shipped] == lines, stale


def test_agent_designs_are_labelled_synthetic_and_linked():
    parents = 0
    for model in AUTHORS:
        for line in asset_path("demo", f"{model}.jsonl").read_text().splitlines():
            rec = json.loads(line)
            assert rec["author"] == "agent" and rec["model"] == model
            if "graph" in rec:
                assert rec["graph"]["meta"]["synthetic"] is True
                assert rec["reference"]
            parents += "parent" in rec
    assert parents > 50

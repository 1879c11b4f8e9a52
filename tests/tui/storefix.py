"""A small real store for the app's tests: a few designs with findings, a parent, a reference, an ungenerated one."""

from __future__ import annotations

import copy
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _tiny() -> dict:
    return json.loads((ROOT / "tests" / "fixtures" / "tiny_cnn.json").read_text())


def _with(g: dict, **node_args) -> dict:
    g = copy.deepcopy(g)
    for n in g["nodes"]:
        if n["id"] in node_args:
            n.setdefault("args", {}).update(node_args[n["id"]])
    return g


def _dead(g: dict, name: str) -> dict:
    g = copy.deepcopy(g)
    g["nodes"].append({"id": name, "op": "Linear", "args": {"in_features": 16, "out_features": 4}, "in": ["flat"]})
    return g


def records() -> list[dict]:
    tiny = _tiny()
    bad_fc = _with(tiny, fc={"in_features": 32})
    r18 = json.loads((ROOT / "assets" / "architectures" / "resnet18.json").read_text())
    r18_bad = _with(r18, **{"layer2.0.conv1": {"out_channels": 96}})
    common = {"author": "agent", "model": "model-a", "task_set": "plain-sentence", "run": "2026-11-02a"}
    return [
        {"id": "d-001", **common, "graph": _dead(bad_fc, "aux_head")},
        {"id": "d-002", **common, "graph": _dead(tiny, "probe")},
        {"id": "d-003", **common, "model": "model-b", "graph": tiny},
        {"id": "d-004", "author": "human", "model": None, "task_set": "open-source", "run": "2026-10-30",
         "graph": tiny},
        {"id": "d-005", **common, "task_set": "repair", "parent": "d-001",
         "graph": _with(tiny, fc={"out_features": 12})},
        {"id": "d-006", **common, "task_set": "repair", "reference": "resnet18", "graph": r18_bad},
        {"id": "d-007", **common, "error": "could not generate: op 'Mamba' unknown"},
        {"id": "d-008", **common, "model": "model-b", "run": "2026-11-02b",
         "graph": _dead(_dead(bad_fc, "probe_a"), "probe_b")},
    ]


def make_store(path: Path) -> Path:
    from archcurator.store.importers import import_records

    res = import_records(path, records(), label="tui-fixture")
    assert not res.rejected, res.rejected
    return path


KB_PROPOSITIONS = [
    ("Adam wins.", [], "optimizer == adam wins"),
    ("Adam beats every other optimizer.", [], "optimizer == adam wins"),
    ("The highest learning rate wins.", [], "higher lr wins"),
    ("With a small budget, plain SGD without momentum loses.", ["budget < 4096"],
     "optimizer == sgd & momentum == 0 loses"),
    ("Wider networks win.", [], "higher width wins"),
    ("LayerNorm helps.", [], "layer_norm == true wins"),
]


def make_kb(path: Path) -> Path:
    """A small fixed knowledge base (40 executed questions kept with the tests, six propositions, one
    near-duplicate pair, broad ones to narrow): independent of the shipped questions and the miner."""
    from archcurator.store import kb as K

    lines = (ROOT / "tests" / "tui" / "fixtures" / "aiq_questions.jsonl").read_text().splitlines()
    K.import_questions(path, [json.loads(line) for line in lines if line.strip()], source="tests/tui/fixtures")
    for text, scope, claim in KB_PROPOSITIONS:
        K.add(path, text, scope, claim, actor="fixture")
    return path

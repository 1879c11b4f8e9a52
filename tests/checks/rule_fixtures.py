"""The fixture folder of each rule (Ruff style): `rules/<rule id>/` holds `fire.json`, a small design where
the rule fires, `clean.json`, a twin that differs only where the rule looks, and `messages.txt`, the reviewed
snapshot of the exact findings the verifier prints for both.

`FIXTURES[rule_id] = (fire, clean)`, read from the folders. test_fixtures.py asserts that every rule of the
catalogue has a folder, that each fires on fire.json and not on clean.json, that the messages are the
snapshot's, and that block pairs hold in torch too (the firing design fails, the clean one runs).
The helpers below build designs for other tests.
"""

from __future__ import annotations

import json
from pathlib import Path

RULES_DIR = Path(__file__).resolve().parent / "rules"


def load_fixtures() -> dict[str, tuple[dict, dict]]:
    out = {}
    for folder in sorted(RULES_DIR.iterdir()):
        if folder.is_dir():
            out[folder.name] = tuple(json.loads((folder / f"{name}.json").read_text(encoding="utf-8"))
                                     for name in ("fire", "clean"))
    return out


FIXTURES = load_fixtures()


def N(id, op, ins=(), shares=None, **args):
    d = {"id": id, "op": op, "args": args, "in": list(ins)}
    if shares:
        d["shares"] = shares
    return d


def G(nodes, outputs, inputs=None, train=None, meta=None, name="fixture"):
    d = {"format": "archgraph/1", "name": name,
         "inputs": inputs if inputs is not None else [{"id": "x", "shape": ["B", 16], "dtype": "float32"}],
         "nodes": nodes, "outputs": outputs}
    if train is not None:
        d["train"] = train
    if meta is not None:
        d["meta"] = meta
    return d


def X(*shape, dtype="float32", id="x"):
    return {"id": id, "shape": list(shape), "dtype": dtype}


CE = {"loss": "cross_entropy", "batch_size": 32, "steps": 100}


def mlp(fc2_in=32, extra=(), outputs=("fc2",), train=None, hidden=32, act="ReLU", inputs=None):
    nodes = [N("fc1", "Linear", ["x"], in_features=16, out_features=hidden),
             N("act", act, ["fc1"]),
             N("fc2", "Linear", ["act"], in_features=fc2_in, out_features=10)]
    return G(nodes + list(extra), list(outputs), inputs=inputs, train=train)

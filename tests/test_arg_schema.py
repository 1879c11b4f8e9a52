"""The op table's argument schema: every argument has a kind, every default is a value of it, and a
malformed argument is one block finding of the verifier's first pass (nothing malformed reaches the
shape rules, the checks or the cost)."""

from __future__ import annotations

import math

import pytest

from archcurator.core.graph import Design
from archcurator.core.ops import OP_TABLE
from archcurator.core.ops.base import ANY
from archcurator.core.verify import verify_graph

# arguments whose values are free-form in torch too
FREE = {("Constant", "value"), ("SyncBatchNorm", "process_group")}


def test_every_argument_has_a_kind_and_its_default_is_one():
    loose = []
    for op, spec in OP_TABLE.items():
        for a in spec.args:
            if a.kind is ANY and (op, a.name) not in FREE:
                loose.append(f"{op}.{a.name}")
            if not a.required:
                assert a.kind.problem(a.default) is None, f"{op}.{a.name}: default {a.default!r} is not a value of it"
    assert not loose, loose


def _one(op, args, shape=(2, 8), dtype="float32"):
    return Design.from_dict({"format": "archgraph/1", "name": "x",
                             "inputs": [{"id": "x", "shape": list(shape), "dtype": dtype}],
                             "nodes": [{"id": "n", "op": op, "args": args, "in": ["x"]}], "outputs": ["n"]})


@pytest.mark.parametrize("op,args,needle", [
    ("Linear", {"in_features": -3, "out_features": 4}, "in_features must be an int >= 0, got -3"),
    ("Linear", {"in_features": 8.0, "out_features": 4}, "in_features must be an int >= 0, got 8.0"),
    ("Linear", {"in_features": 8, "out_features": "4"}, "out_features must be an int >= 0"),
    ("Linear", {"in_features": 8, "out_features": 4, "bias": "yes"}, "bias must be true or false"),
    ("Linear", {"in_features": 8, "out_features": 10 ** 40 + 0.5}, "out_features must be an int >= 0"),
    ("Dropout", {"p": 1.5}, "p must be a finite number in [0, 1], got 1.5"),
    ("Dropout", {"p": math.nan}, "p must be a finite number in [0, 1]"),
    ("Softmax", {"dim": [1]}, "dim must be null or an int"),
    ("GELU", {"approximate": "fast"}, "approximate must be one of 'none', 'tanh'"),
    ("Conv1d", {"in_channels": 8, "out_channels": 4, "kernel_size": [3, 3]}, "kernel_size must be"),
    ("Reshape", {"shape": [2, -2]}, "shape must be"),
    ("LayerNorm", {"normalized_shape": {"a": 1}}, "normalized_shape must be"),
])
def test_a_malformed_argument_is_one_block_finding(op, args, needle):
    report = verify_graph(_one(op, args))
    assert report.verdict == "block"
    bad = [f for f in report.findings if f.rule == "connectivity.bad-arg"]
    assert len(bad) == 1 and needle in bad[0].message, [f.message for f in report.findings]
    assert "\n" not in bad[0].message
    assert report.cost["params"] == 0


def test_good_arguments_pass_the_schema():
    report = verify_graph(_one("Linear", {"in_features": 8, "out_features": 4, "bias": False}))
    assert report.verdict == "pass", report.findings

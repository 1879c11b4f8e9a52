"""archgraph/1: load, validate, save with exact round-trip; one-line errors naming file and node."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from archcurator.core.graph import Design, DesignError, parse_ref
from archcurator.core.verify import verify_graph

FIX = Path(__file__).parent / "fixtures"


def _base():
    return json.loads((FIX / "tiny_cnn.json").read_text())


def test_round_trip_is_exact(tmp_path):
    raw = (FIX / "tiny_cnn.json").read_text()
    d = Design.from_json(raw, "tiny_cnn.json")
    assert d.to_dict() == json.loads(raw)
    assert list(d.to_dict()) == list(json.loads(raw))
    out = tmp_path / "again.json"
    d.save(out)
    assert json.loads(out.read_text()) == json.loads(raw)


def test_round_trip_keeps_unknown_keys_and_omissions():
    data = _base()
    data["x-extra"] = {"k": 1}
    data["nodes"][1]["note"] = "keep me"
    del data["train"]
    data["inputs"][0].pop("dtype")
    d = Design.from_dict(data)
    assert d.to_dict() == data


def test_malformed_json_names_file_and_position(tmp_path):
    p = tmp_path / "bad.json"
    p.write_text('{"format": "archgraph/1", "nodes": [}')
    with pytest.raises(DesignError) as e:
        Design.load(p)
    msg = str(e.value)
    assert str(p) in msg and "malformed JSON" in msg and "line 1" in msg
    assert "\n" not in msg


@pytest.mark.parametrize("mutate,needle", [
    (lambda d: d.pop("nodes"), "missing field 'nodes'"),
    (lambda d: d.__setitem__("format", "archgraph/2"), "format must be"),
    (lambda d: d["nodes"][1].__setitem__("id", "features.0"), "node 'features.0': duplicate id"),
    (lambda d: d["nodes"][2].pop("op"), "node 'pool': missing field 'op'"),
    (lambda d: d["nodes"][0].__setitem__("id", "bad id!"), "must use letters"),
    (lambda d: d["nodes"][0].__setitem__("args", [1, 2]), "node 'features.0': 'args' must be an object"),
    (lambda d: d["inputs"][0].__setitem__("shape", "B,3"), "input 'x': shape"),
])
def test_structural_errors_are_one_line_with_file_and_node(mutate, needle):
    data = _base()
    mutate(data)
    with pytest.raises(DesignError) as e:
        Design.from_dict(data, source="models/x.json")
    msg = str(e.value)
    assert msg.startswith("models/x.json: ")
    assert needle in msg
    assert "\n" not in msg


def test_dangling_reference_is_a_finding_naming_the_node():
    data = _base()
    data["nodes"][1]["in"] = ["nowhere"]
    report = verify_graph(Design.from_dict(data))
    hits = [f for f in report.findings if f.rule == "connectivity.dangling"]
    assert hits and hits[0].nodes == ("features.1",) and "nowhere" in hits[0].message
    assert report.verdict == "block"


def test_cycle_is_a_finding_naming_its_nodes():
    data = _base()
    data["nodes"][0]["in"] = ["features.1"]  # conv <- relu <- conv
    d = Design.from_dict(data)
    report = verify_graph(d)
    hits = [f for f in report.findings if f.rule == "connectivity.cycle"]
    assert hits and set(hits[0].nodes) == {"features.0", "features.1"}
    assert report.verdict == "block"
    # the walk still covers every node
    assert {n.id for n in d.topo_order()} == {n.id for n in d.nodes}


def test_parse_ref():
    assert parse_ref("lstm:2") == ("lstm", 2)
    assert parse_ref("layer1.0.conv1") == ("layer1.0.conv1", 0)

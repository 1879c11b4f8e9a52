"""Curators' verdicts feed back (issue 26): each rule's judged false-alarm rate with its interval, a rule
the project demotes (with the reason on its findings), "to judge" counts that pass demoted findings by;
and a design's findings listed in graph order, likely defects before the other warns."""

from __future__ import annotations

import json

import pytest
from fake_verifier import record
from storetest import cli

from archcurator import store
from archcurator.store.app_queries import first_unfinished, progress, rows_for
from archcurator.store.importers import import_paths, import_records
from archcurator.store.reports import wilson_interval


@pytest.fixture
def judged(db, fake):
    import_records(db, [
        record("d1", ["Meh", "Bad"], rules={0: "rule.noisy", 1: "rule.good"}),
        record("d2", ["Meh"], rules={0: "rule.noisy"}),
        record("d3", ["Meh"], rules={0: "rule.noisy"}),
    ], verifier=fake)
    store.record_judgment(db, "d1", "rule.noisy@n0", "ada", "false_alarm")
    store.record_judgment(db, "d2", "rule.noisy@n0", "ada", "false_alarm")
    store.record_judgment(db, "d3", "rule.noisy@n0", "ada", "real")
    return db


def test_rules_report_gives_the_false_alarm_rate_with_its_interval(judged):
    row = next(r for r in store.rules_report(judged)["rows"] if r["rule"] == "rule.noisy")
    assert row["falseAlarmRate"] == pytest.approx(2 / 3)
    lo, hi = row["falseAlarmInterval"]
    assert lo < 2 / 3 < hi and [lo, hi] == wilson_interval(2, 3)
    assert row["demoted"] is None
    good = next(r for r in store.rules_report(judged)["rows"] if r["rule"] == "rule.good")
    assert good["falseAlarmRate"] is None and good["falseAlarmInterval"] is None  # never judged


def test_a_demoted_rule_keeps_its_findings_shows_the_reason_and_leaves_the_to_judge_counts(db, fake):
    import_records(db, [record("d1", ["Meh", "Bad"], rules={0: "rule.noisy", 1: "rule.good"}),
                        record("d2", ["Meh"], rules={0: "rule.noisy"})], verifier=fake)
    before = rows_for(db, ["d1", "d2"])
    assert before["d1"]["n_findings"] == 2 and before["d2"]["judged"] == "unjudged"
    assert first_unfinished(db, ["d2", "d1"]) == 0
    store.demote_rule(db, "rule.noisy", "false-alarm rate 67% (21-94%)", "ada")
    d1 = store.get_design(db, "d1")
    noisy = next(f for f in d1["findings"] if f["rule"] == "rule.noisy")
    assert noisy["demoted"] == "false-alarm rate 67% (21-94%)"  # still there, with the reason
    after = rows_for(db, ["d1", "d2"])
    assert after["d1"]["n_findings"] == 1 and after["d2"]["judged"] == "judged"  # nothing left to judge on d2
    assert first_unfinished(db, ["d2", "d1"]) == 1
    assert progress(db)["findings"] == 1
    store.record_judgment(db, "d1", "rule.good@n1", "ada", "real")
    assert rows_for(db, ["d1"])["d1"]["judged"] == "judged" and store.get_design(db, "d1")["judged"] == "judged"
    assert next(r for r in store.rules_report(db)["rows"] if r["rule"] == "rule.noisy")["demoted"]["by"] == "ada"
    assert store.restore_rule(db, "rule.noisy")
    assert rows_for(db, ["d2"])["d2"]["judged"] == "unjudged"


@pytest.mark.slow
def test_demote_command_names_a_catalogue_rule_and_needs_a_reason(db, fake):
    import_records(db, [record("d1", ["Meh"], rules={0: "shape.silent-broadcast"})], verifier=fake)
    r = cli("demote", "shape.silent-broadcast", "--db", db)
    assert r.returncode == 2 and "needs a reason" in r.stderr
    r = cli("demote", "no.such-rule", "--reason", "x", "--db", db)
    assert r.returncode == 2 and "no such rule" in r.stderr
    r = cli("demote", "shape.silent-broadcast", "--reason", "noisy on outer sums", "--json", "--db", db)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["shape.silent-broadcast"]["reason"] == "noisy on outer sums"
    rep = json.loads(cli("report", "rules", "--json", "--db", db).stdout)
    assert next(x for x in rep["rows"] if x["rule"] == "shape.silent-broadcast")["demoted"]["reason"]
    r = cli("demote", "shape.silent-broadcast", "--restore", "--json", "--db", db)
    assert json.loads(r.stdout) == {}


def test_findings_are_listed_in_graph_order_likely_defects_first(tmp_path, db):
    # a bias a BatchNorm cancels at features.3 and at features.10, and a likely defect on the last node:
    # string order put features.10 before features.3
    def conv_bn(i, prev):
        return [{"id": f"features.{i}", "op": "Conv1d", "args": {"in_channels": 176, "out_channels": 176,
                                                                  "kernel_size": 1}, "in": [prev]},
                {"id": f"features.{i + 1}", "op": "BatchNorm1d", "args": {"num_features": 176},
                 "in": [f"features.{i}"]}]

    nodes = conv_bn(3, "x") + conv_bn(10, "features.4") + [
        {"id": "fc", "op": "Linear", "args": {"in_features": 176, "out_features": 4}, "in": ["features.11"]}]
    g = {"format": "archgraph/1", "name": "order", "inputs": [{"id": "x", "shape": ["B", 176, "T"]}],
         "nodes": nodes, "outputs": ["fc"]}
    p = tmp_path / "order.json"
    p.write_text(json.dumps(g))
    import_paths(db, [p], workers=0)
    found = [(f["rule"], f["nodes"][0]) for f in store.get_design(db, "order")["findings"]]
    assert found == [("shape.size-meets-width", "fc"), ("numerics.bias-before-batchnorm", "features.3"),
                     ("numerics.bias-before-batchnorm", "features.10")], found

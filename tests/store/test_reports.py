import json
import shutil
import subprocess

import pytest
from fake_verifier import record
from storetest import cli

from archcurator import store
from archcurator.store.importers import import_records
from archcurator.store.reports import cohen_kappa, wilson_lower


@pytest.fixture
def refusals(db, fake):
    A = dict(author="agent", model="model-a", task_set="plain")
    import_records(db, [
        # run r1: 4 returned, 2 blocked, 1 ungenerated
        record("a1", ["Bad"], run="r1", usd=1, rules={0: "rule.a"}, **A),
        record("a2", ["Bad", "Meh"], run="r1", usd=3, rules={0: "rule.a", 1: "rule.w"}, **A),
        record("a3", ["Linear"], run="r1", **A),
        record("a4", ["Meh"], run="r1", rules={0: "rule.w"}, **A),
        record("a5", error="could not generate", run="r1", **A),
        # run r2: 2 returned, 2 blocked
        record("a6", ["Bad", "Bad"], run="r2", usd=2, rules={0: "rule.a", 1: "rule.b"}, **A),
        record("a7", ["Bad"], run="r2", usd=10, rules={0: "rule.b"}, **A),
        # the same model on another task set: its own row, its own costs
        record("b1", ["Bad"], author="agent", model="model-a", task_set="repair", run="r1", usd=1000,
               rules={0: "rule.a"}),
        # people: model null
        record("h1", ["Linear"], author="human", model=None, task_set="open-source", run="2026-10-30"),
        record("h2", ["Bad"], author="human", model=None, task_set="open-source", run="2026-10-30", usd=5),
        # a run where nothing came back: no share, not part of the range
        record("a8", error="nope", run="r3", **A),
    ], verifier=fake)
    return db


def _row(rep, author, model, task_set):
    return next(r for r in rep["rows"] if (r["author"], r["model"], r["taskSet"]["label"]) == (author, model, task_set))


def test_refusal_report_fields(refusals):
    rep = store.refusal_report(refusals)
    assert len(rep["rows"]) == 3
    r = _row(rep, "agent", "model-a", "plain")
    assert (r["returned"], r["blocked"], r["ungenerated"]) == (6, 4, 2)
    assert r["blockedShare"] == pytest.approx(4 / 6)
    assert r["blockedShareRange"] == [0.5, 1.0]
    assert r["ruleIds"] == {"rule.a": 3, "rule.b": 2, "rule.w": 1}   # rule.w on a4 is not a refusal
    assert list(r["ruleIds"]) == ["rule.a", "rule.b", "rule.w"]
    assert r["medianQuotedCost"] == pytest.approx(2.5)             # median of 1, 3, 2, 10
    rp = _row(rep, "agent", "model-a", "repair")
    assert rp["medianQuotedCost"] == 1000 and rp["blockedShareRange"] == [1.0, 1.0]
    h = _row(rep, "human", None, "open-source")
    assert (h["returned"], h["blocked"], h["blockedShare"], h["medianQuotedCost"]) == (2, 1, 0.5, 5)


def test_refusal_report_empty_store(db):
    assert store.refusal_report(db) == {"rows": []}


def test_refusal_report_cli_runs_the_seed_query_unchanged(refusals):
    p = cli("report", "refusals", "--json", db=refusals)
    assert p.returncode == 0, p.stderr
    data = json.loads(p.stdout)
    assert data == json.loads(json.dumps(store.refusal_report(refusals)))
    if shutil.which("jq") is None:
        pytest.skip("jq not installed")
    q = subprocess.run(["jq", "-c", ".rows[] | {author, model, taskSet: .taskSet.label, returned, blocked, "
                        "blockedShare, range: .blockedShareRange}"], input=p.stdout, capture_output=True, text=True)
    assert q.returncode == 0, q.stderr
    rows = [json.loads(line) for line in q.stdout.splitlines()]
    assert {"author": "agent", "model": "model-a", "taskSet": "plain", "returned": 6, "blocked": 4,
            "blockedShare": pytest.approx(4 / 6), "range": [0.5, 1.0]} in rows


@pytest.mark.slow
def test_report_tables_render(refusals):
    for args in (["refusals"], ["rules"]):
        p = cli("report", *args, db=refusals)
        assert p.returncode == 0, p.stderr
        assert p.stdout.strip()
    # nobody judged in this store: agreement names no curator it could compare, in the error form
    p = cli("report", "agreement", "--a", "ann", "--b", "bob", db=refusals)
    assert p.returncode == 2 and p.stderr.startswith("archcurator report agreement: --a: no curator 'ann'"), p.stderr
    p = cli("report", "rules", "--db", refusals, "--json")   # --db also after the report's name
    assert p.returncode == 0 and json.loads(p.stdout)["rows"]


def test_wilson_lower_bound():
    assert wilson_lower(2, 3) == pytest.approx(0.2077, abs=1e-4)
    assert wilson_lower(0, 0) is None
    assert wilson_lower(10, 10) == pytest.approx(0.7225, abs=1e-4)
    assert wilson_lower(0, 10) == 0.0


def test_rules_report(refusals):
    db = refusals
    for design, key, verdict in [("a1", "rule.a@n0", "real"), ("a2", "rule.a@n0", "real"),
                                 ("a6", "rule.a@n0", "false_alarm"), ("b1", "rule.a@n0", "unsure")]:
        store.record_judgment(db, design, key, "ann", verdict)
    store.record_judgment(db, "a6", "rule.a@n0", "bob", "real")   # 1 real vs 1 false alarm: a tie
    store.record_missed_defect(db, "a3", "ann", ["n0"], rule="rule.a")
    store.record_missed_defect(db, "h1", "bob", ["n0"], rule="rule.a")
    with pytest.raises(ValueError, match="not a rule of the check catalogue"):
        store.record_missed_defect(db, "h1", "bob", ["n0"], rule="rule.never-fires")
    store.record_missed_defect(db, "h1", "bob", ["n0"], rule="other: never fires")
    report = store.rules_report(db, curator="ann")
    rows = {r["rule"]: r for r in report["rows"]}
    a = rows["rule.a"]
    assert (a["firings"], a["designs"], a["block"], a["real"], a["false_alarm"], a["unsure"], a["unjudged"]) == \
        (4, 4, 4, 2, 1, 1, 0)
    assert a["precision"] == pytest.approx(2 / 3) and a["precisionLower"] == pytest.approx(0.2077, abs=1e-4)
    assert a["missed"] == 2 and a["recall"] == pytest.approx(0.5)
    assert rows["rule.b"]["precision"] is None and rows["rule.b"]["recall"] is None
    # free text is kept apart from the rules: no phantom row with recall 0%
    assert "rule.never-fires" not in rows and "other: never fires" not in rows
    assert report["other"] == [{"rule": "other: never fires", "missed": 1}]
    # all curators: the majority verdict per finding; a tie is unsure
    a_all = {r["rule"]: r for r in store.rules_report(db)["rows"]}["rule.a"]
    assert (a_all["real"], a_all["false_alarm"], a_all["unsure"]) == (2, 0, 2)


def test_agreement_kappa(refusals):
    db = refusals
    pairs = [("a1", "rule.a@n0", "real", "real"), ("a2", "rule.a@n0", "real", "real"),
             ("a6", "rule.a@n0", "false_alarm", "false_alarm"), ("a7", "rule.b@n0", "real", "false_alarm")]
    for design, key, x, y in pairs:
        store.record_judgment(db, design, key, "ann", x)
        store.record_judgment(db, design, key, "bob", y)
    store.record_judgment(db, "b1", "rule.a@n0", "ann", "real")       # only ann: not counted
    rep = store.agreement_report(db, "ann", "bob")
    assert rep["n"] == 4 and rep["observed"] == 0.75 and rep["expected"] == 0.5
    assert rep["kappa"] == pytest.approx(0.5)
    assert rep["matrix"]["real"]["false_alarm"] == 1
    assert store.agreement_report(db, "ann", "nobody")["kappa"] is None


def test_kappa_edge_cases():
    assert cohen_kappa([("real", "real")] * 3)["kappa"] is None    # chance agreement 1
    k = cohen_kappa([("real", "false_alarm"), ("false_alarm", "real")])
    assert k["kappa"] == pytest.approx(-1.0)


def test_report_and_export_on_a_missing_store_say_so(tmp_path):
    missing = tmp_path / "nope.duckdb"
    for args in (["report", "refusals", "--json"], ["export", "--format", "csv", "--out", tmp_path / "o"]):
        p = cli(*args, db=missing)
        assert p.returncode == 2
        why = "no such store (import designs first, or pass --db)"
        assert p.stderr.strip() == f"archcurator {args[0]}: {missing}: {why}"
    assert not missing.exists()

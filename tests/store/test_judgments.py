import pytest
from fake_verifier import record, verify_v2

from archcurator import store
from archcurator.store.importers import import_records
from archcurator.store.judgments import JudgmentError


@pytest.fixture
def seeded(db, fake):
    import_records(db, [
        record("d-1", ["Linear", "Bad", "Meh"]),
        record("d-2", ["Linear"]),
        record("d-3", ["Bad", "Bad"]),
        record("d-4", error="failed"),
    ], verifier=fake)
    return db


def _verdict(db, design, key, curator):
    return store.current_verdicts(db, design, curator).get(key, {}).get(curator)


def test_record_and_current_verdict(seeded):
    db = seeded
    e1 = store.record_judgment(db, "d-1", "fake.block@n1", "ann", "real", "shape really is off")
    assert isinstance(e1, int)
    assert _verdict(db, "d-1", "fake.block@n1", "ann") == "real"
    e2 = store.record_judgment(db, "d-1", "fake.block@n1", "ann", "false_alarm")
    assert e2 > e1 and _verdict(db, "d-1", "fake.block@n1", "ann") == "false_alarm"
    store.record_judgment(db, "d-1", "fake.block@n1", "bob", "unsure")
    d = store.get_design(db, "d-1", curator="ann")
    f = next(x for x in d["findings"] if x["key"] == "fake.block@n1")
    assert f["verdict"] == "false_alarm"
    assert {k: v["verdict"] for k, v in f["judgments"].items()} == {"ann": "false_alarm", "bob": "unsure"}


def test_events_are_append_only_and_undo_falls_back(seeded):
    """One undo model: a step is taken back as a whole (`undo_last_step`, the app's z), newest first;
    the undo is an event of its own and the verdict falls back to the one before."""
    db = seeded
    e1 = store.record_judgment(db, "d-1", "fake.block@n1", "ann", "real")
    e2 = store.record_judgment(db, "d-1", "fake.block@n1", "ann", "false_alarm")
    first = store.undo_last_step(db, "ann")
    assert first["undone"] and _verdict(db, "d-1", "fake.block@n1", "ann") == "real"
    store.undo_last_step(db, "ann")
    assert _verdict(db, "d-1", "fake.block@n1", "ann") is None
    events = store.judgment_events(db, "d-1")
    undos = sorted(e["id"] for e in events if e["undoes"] is not None)
    assert len(events) == 4 and [e["id"] for e in events] == sorted([e1, e2, *undos], reverse=True)
    assert {e["undoes"] for e in events} == {None, e1, e2}
    assert store.undo_last_step(db, "ann") is None  # nothing left: undo events are never undone


def test_undo_is_per_curator(seeded):
    store.record_judgment(seeded, "d-1", "fake.warn@n2", "ann", "real")
    assert store.undo_last_step(seeded, "bob") is None
    assert _verdict(seeded, "d-1", "fake.warn@n2", "ann") == "real"


def test_design_level_clean(seeded):
    db = seeded
    assert store.get_design(db, "d-2")["judged"] == "unjudged"
    store.record_judgment(db, "d-2", None, "ann", "clean")
    d = store.get_design(db, "d-2", curator="ann")
    assert d["design_judgments"]["ann"]["verdict"] == "clean" and d["judged"] == "judged"
    assert store.get_design(db, "d-2", curator="bob")["judged"] == "unjudged"
    store.undo_last_step(db, "ann")
    assert store.get_design(db, "d-2")["judged"] == "unjudged"


@pytest.mark.parametrize("args,match", [
    (("nope", "k", "ann", "real"), "no design"),
    (("d-1", "fake.block@n9", "ann", "real"), "no finding"),
    (("d-1", "fake.block@n1", "ann", "clean"), "verdict is one of"),
    (("d-1", None, "ann", "real"), "only be judged 'clean'"),
    (("d-1", "fake.block@n1", "", "real"), "curator"),
])
def test_bad_judgments_are_refused(seeded, args, match):
    with pytest.raises(JudgmentError, match=match):
        store.record_judgment(seeded, *args)
    assert store.judgment_events(seeded) == []


def test_judged_state_and_filters(seeded):
    db = seeded
    assert store.count_designs(db, {"judged": "unjudged"}) == 3   # d-4 is ungenerated: no state
    store.record_judgment(db, "d-1", "fake.block@n1", "ann", "real")
    store.record_judgment(db, "d-3", "fake.block@n0", "bob", "real")
    store.record_judgment(db, "d-3", "fake.block@n1", "bob", "false_alarm")
    assert [r["id"] for r in store.list_designs(db, {"judged": "partly"})] == ["d-1"]
    assert [r["id"] for r in store.list_designs(db, {"judged": "judged"})] == ["d-3"]
    assert [r["id"] for r in store.list_designs(db, {"judged": "unjudged", "curator": "bob"})] == ["d-1", "d-2"]
    row = store.list_designs(db, {"text": "d-1"})[0]
    assert (row["n_findings"], row["n_judged"], row["judged"]) == (2, 1, "partly")


def test_reverify_keeps_judged_findings_as_stale(seeded, fake):
    db = seeded
    store.record_judgment(db, "d-1", "fake.warn@n2", "ann", "real")      # judged warn
    import_records(db, [record("d-5", ["Meh"])], verifier=fake)           # unjudged warn
    assert store.reverify(db, verifier=verify_v2) == 4
    d = store.get_design(db, "d-1", curator="ann")
    stale = [f for f in d["findings"] if f["stale"]]
    assert [f["key"] for f in stale] == ["fake.warn@n2"] and stale[0]["verdict"] == "real"
    assert d["n_warn"] == 0 and d["verdict"] == "block"
    d5 = store.get_design(db, "d-5")
    assert d5["findings"] == [] and d5["verdict"] == "pass"      # unjudged: dropped
    # it fires again with the old catalogue: live again, judgment still attached
    store.reverify(db, ["d-1"], verifier=fake)
    d = store.get_design(db, "d-1", curator="ann")
    f = next(x for x in d["findings"] if x["key"] == "fake.warn@n2")
    assert not f["stale"] and f["verdict"] == "real" and d["n_warn"] == 1
    # judged state counts live findings only
    assert store.list_designs(db, {"text": "d-1"})[0]["n_findings"] == 2


def test_judging_a_stale_finding_is_allowed(seeded):
    db = seeded
    store.record_judgment(db, "d-1", "fake.warn@n2", "ann", "unsure")
    store.reverify(db, ["d-1"], verifier=verify_v2)
    store.record_judgment(db, "d-1", "fake.warn@n2", "ann", "false_alarm")
    assert _verdict(db, "d-1", "fake.warn@n2", "ann") == "false_alarm"


def test_missed_defects(seeded):
    db = seeded
    m = store.record_missed_defect(db, "d-2", "ann", ["n0"], rule="fake.block")
    store.record_missed_defect(db, "d-2", "ann", "n0,x", description="wrong activation")
    rows = store.list_missed_defects(db, "d-2")
    assert [(r["nodes"], r["node_list"], r["rule"]) for r in rows] == [
        ("n0", ["n0"], "fake.block"), ("n0,x", ["n0", "x"], None)]
    assert len(store.get_design(db, "d-2")["missed_defects"]) == 2
    store.retract_missed_defect(db, m, "ann")
    assert len(store.list_missed_defects(db, "d-2")) == 1
    with pytest.raises(ValueError):
        store.record_missed_defect(db, "d-2", "ann", ["n0"])

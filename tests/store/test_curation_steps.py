"""Curation steps: one undo model over verdicts, notes, bulk verdicts, flags, missed defects and
adjudications, read from the store's log (so it survives a restart) and repeatable."""

import pytest
from fake_verifier import record

from archcurator import store
from archcurator.store import judgments as J
from archcurator.store.importers import import_records
from archcurator.store.missed import (
    MissedDefectError,
    catalogue_rules,
    record_missed_defect,
    retract_missed_defect,
)


@pytest.fixture
def seeded(db, fake):
    import_records(db, [
        record("d-1", ["Linear", "Bad", "Meh"]),
        record("d-2", ["Bad", "Bad"]),
        record("d-3", ["Linear"]),
    ], verifier=fake)
    return db


def _current(db, curator="ann"):
    with store.reading(db) as con:
        return {(d, k): (v, n) for d, k, v, n in con.execute(
            "SELECT design_id, finding_key, verdict, note FROM current_judgments WHERE curator = ?",
            [curator]).fetchall()}


def _flags(db, curator="ann"):
    with store.reading(db) as con:
        return {(d, k) for d, k in con.execute(
            "SELECT design_id, finding_key FROM current_flags WHERE curator = ?", [curator]).fetchall()}


@pytest.mark.slow
def test_undo_walks_back_steps_of_every_kind_newest_first(seeded):
    db = seeded
    J.record_judgment(db, "d-1", "fake.block@n1", "ann", "real")
    J.record_note(db, "d-1", "fake.block@n1", "ann", "checked the width by hand")
    bulk = J.record_bulk(db, [("d-2", "fake.block@n0"), ("d-2", "fake.block@n1")], "ann", "false_alarm")
    J.set_flag(db, "d-1", "fake.warn@n2", "ann")
    m = record_missed_defect(db, "d-3", "ann", ["n0"], rule="fake.block")
    retract_missed_defect(db, m, "ann")
    J.record_judgment(db, "d-1", "fake.block@n1", "bob", "unsure")  # another curator's: never undone by ann

    assert bulk["n"] == 2 and bulk["designs"] == ["d-2"]
    assert _current(db)[("d-1", "fake.block@n1")] == ("real", "checked the width by hand")
    recent = J.recent_steps(db, "ann")
    assert [s["kind"] for s in recent] == ["retract", "missed", "flag", "bulk", "judgment", "judgment"]
    assert recent[3]["summary"] == "false alarm on 2 findings of fake.block (1 design)"

    assert J.undo_last_step(db, "ann")["kind"] == "retract"
    assert len(store.list_missed_defects(db, "d-3")) == 1
    assert J.undo_last_step(db, "ann")["kind"] == "missed"
    assert store.list_missed_defects(db, "d-3") == []
    assert J.undo_last_step(db, "ann")["kind"] == "flag"
    assert _flags(db) == set()
    undone = J.undo_last_step(db, "ann")  # the whole bulk verdict in one undo
    assert undone["kind"] == "bulk" and undone["n"] == 2
    assert ("d-2", "fake.block@n0") not in _current(db) and ("d-2", "fake.block@n1") not in _current(db)
    assert J.undo_last_step(db, "ann")["summary"].startswith("real on fake.block@n1")  # the note edit
    assert _current(db)[("d-1", "fake.block@n1")] == ("real", None)
    J.undo_last_step(db, "ann")
    assert _current(db) == {}
    assert J.undo_last_step(db, "ann") is None
    assert _current(db, "bob") == {("d-1", "fake.block@n1"): ("unsure", None)}


def test_a_verdict_ends_a_flag_and_its_undo_brings_the_flag_back(seeded):
    db = seeded
    J.set_flag(db, "d-1", "fake.block@n1", "ann")
    assert _flags(db) == {("d-1", "fake.block@n1")}
    J.record_judgment(db, "d-1", "fake.block@n1", "ann", "real")
    assert _flags(db) == set()
    J.undo_last_step(db, "ann")
    assert _flags(db) == {("d-1", "fake.block@n1")} and _current(db) == {}


def test_note_needs_a_verdict_and_bulk_needs_real_findings(seeded):
    db = seeded
    with pytest.raises(J.JudgmentError, match="no verdict"):
        J.record_note(db, "d-1", "fake.block@n1", "ann", "a note")
    with pytest.raises(J.JudgmentError, match="no finding"):
        J.record_bulk(db, [("d-1", "fake.block@n1"), ("d-1", "nope@n9")], "ann", "real")
    assert _current(db) == {}  # nothing half-written


def test_missed_defect_rules_and_nodes_are_checked(seeded):
    db = seeded
    with pytest.raises(MissedDefectError, match="not a rule of the check catalogue"):
        record_missed_defect(db, "d-3", "ann", ["n0"], rule="shape.unknown-output")
    with pytest.raises(MissedDefectError, match="no node 'conv9'"):
        record_missed_defect(db, "d-3", "ann", ["conv9"], rule="fake.block")
    record_missed_defect(db, "d-3", "ann", ["n0"], rule=sorted(catalogue_rules())[0])
    record_missed_defect(db, "d-3", "ann", ["n0"], rule="other: the head is too narrow")
    assert len(store.list_missed_defects(db, "d-3")) == 2


def test_adjudication_overrides_the_majority_in_the_rules_report(seeded):
    db = seeded
    J.record_judgment(db, "d-2", "fake.block@n0", "ann", "real")
    J.record_judgment(db, "d-2", "fake.block@n0", "bob", "false_alarm")
    row = {r["rule"]: r for r in store.rules_report(db)["rows"]}["fake.block"]
    assert row["unsure"] >= 1 and row["real"] == 0  # a tie is unsure
    J.adjudicate(db, "d-2", "fake.block@n0", "cyd", "real")
    row = {r["rule"]: r for r in store.rules_report(db)["rows"]}["fake.block"]
    assert row["real"] == 1
    assert J.undo_last_step(db, "cyd")["kind"] == "adjudication"
    row = {r["rule"]: r for r in store.rules_report(db)["rows"]}["fake.block"]
    assert row["real"] == 0


def test_steps_of_an_older_store_are_undone_after_the_migration(tmp_path):
    """Rows written before steps existed are given steps by the migration, in time order."""
    import duckdb

    from archcurator.store import connection

    db = tmp_path / "old.duckdb"
    con = duckdb.connect(str(db))
    con.execute("CREATE TABLE schema_version (version INTEGER PRIMARY KEY, name VARCHAR, applied_at TIMESTAMP)")
    for version, name, sql in connection.migrations():
        if version < 10:
            con.execute(sql)
            con.execute("INSERT INTO schema_version VALUES (?, ?, now())", [version, name])
    con.execute("INSERT INTO designs (id, author, graph, verdict, imported_at) VALUES ('o-1', 'human', '{}', 'pass',"
                " now())")
    con.execute("INSERT INTO judgments (design_id, finding_key, curator, verdict, judged_at) VALUES"
                " ('o-1', NULL, 'ann', 'clean', TIMESTAMP '2025-01-01 10:00:00')")
    con.close()
    J.record_judgment(db, "o-1", None, "ann", "clean")
    assert J.undo_last_step(db, "ann")["at"].year >= 2026
    assert J.undo_last_step(db, "ann")["at"].year == 2025
    assert J.undo_last_step(db, "ann") is None

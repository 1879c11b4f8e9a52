import pytest
from fake_verifier import record

from archcurator import store
from archcurator.store.importers import import_records


def test_record_and_update_a_run(db, fake):
    import_records(db, [record("r-1")], verifier=fake)
    rid = store.record_run(db, kind="forward", design_id="r-1", backend="local", device="cpu",
                           spec={"check": "forward"})
    store.update_run(db, rid, status="running", started_at=store.connection.utcnow())
    store.update_run(db, rid, status="failed", seconds=1.25, exception="RuntimeError",
                     message="mat1 and mat2 shapes cannot be multiplied", log_tail="x" * 50_000,
                     metrics={"peak_mb": 12})
    run = store.get_run(db, rid)
    assert run["status"] == "failed" and run["exception"] == "RuntimeError" and run["metrics"] == {"peak_mb": 12}
    assert len(run["log_tail"]) == 20_000 and run["spec"] == {"check": "forward"}
    assert store.get_design(db, "r-1")["runs"][0]["id"] == rid
    q = store.record_run(db, kind="question", question_id="q-7", status="ok", seconds=3.0)
    assert [r["id"] for r in store.list_runs(db)] == [q, rid]
    assert [r["id"] for r in store.list_runs(db, question_id="q-7")] == [q]


def test_bad_runs(db):
    with pytest.raises(ValueError):
        store.record_run(db, kind="forward")
    with pytest.raises(ValueError):
        store.record_run(db, kind="forward", design_id="x", status="exploded")
    rid = store.record_run(db, kind="forward", design_id="x")
    with pytest.raises(ValueError):
        store.update_run(db, rid, colour="red")
    with pytest.raises(ValueError):
        store.update_run(db, 999, status="ok")

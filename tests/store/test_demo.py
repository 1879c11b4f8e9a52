import pytest
from fake_verifier import record
from storetest import write_jsonl

from archcurator import store
from archcurator.store import demo


def test_seed_demo_loads_every_batch_once(db, tmp_path, fake):
    folder = tmp_path / "demo"
    folder.mkdir()
    write_jsonl(folder / "01-reference.jsonl", [record("ref-1", author="reference", model=None, task_set="zoo")])
    write_jsonl(folder / "02-agents.jsonl", [record("ag-1", ["Bad"], parent="ref-1"), record("ag-2", error="x")])
    r = demo.seed_demo(db, folder, verifier=fake)
    assert sorted(r.imported) == ["ag-1", "ag-2", "ref-1"] and demo.is_seeded(db)
    assert store.get_design(db, "ag-1")["parent"] == "ref-1"
    r = demo.seed_demo(db, folder, verifier=fake)
    assert r.imported == [] and len(r.skipped) == 3


def test_ensure_demo_only_on_a_new_store(db, tmp_path, fake):
    folder = tmp_path / "demo"
    folder.mkdir()
    write_jsonl(folder / "a.jsonl", [record("d-1")])
    assert demo.ensure_demo(db, folder=folder, verifier=fake) is not None
    assert demo.ensure_demo(db, folder=folder, verifier=fake) is None
    other = tmp_path / "other.duckdb"
    store.import_records(other, [record("mine")], verifier=fake)
    assert demo.ensure_demo(other, folder=folder, verifier=fake) is None   # has designs already
    assert store.count_designs(other) == 1


@pytest.mark.slow
def test_the_shipped_demo_imports_cleanly(db):
    assert demo.demo_files(), "assets/demo is empty: python -m archcurator.core.demo"
    r = demo.seed_demo(db)
    assert not r.rejected and r.imported
    rep = store.refusal_report(db)
    authors = {row["author"] for row in rep["rows"]}
    assert {"reference", "agent"} <= authors

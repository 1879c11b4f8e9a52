import pytest
from fake_verifier import record

from archcurator import store
from archcurator.store.importers import import_records


@pytest.fixture
def many(db, fake):
    recs = []
    for i in range(60):
        author = ["agent", "human", "reference"][i % 3]
        ops = ["Linear"] * (1 + i % 5) + (["Bad"] if i % 4 == 0 else []) + (["Meh"] if i % 5 == 0 else [])
        recs.append(record(f"z-{i:03d}", ops, author=author, model="m1" if author == "agent" else None,
                           task_set="ts-a" if i < 30 else "ts-b", run=f"r{i % 2}",
                           rules={ops.index("Bad"): "rule.x"} if "Bad" in ops else None))
    recs.append(record("z-ung", error="nope"))
    import_records(db, recs, verifier=fake)
    return db


def test_paging_covers_everything_once_in_order(many):
    ids = []
    for off in range(0, 61, 7):
        ids += [r["id"] for r in store.list_designs(many, sort="id", offset=off, limit=7)]
    assert ids == sorted(ids) and len(ids) == 61 == store.count_designs(many)


def test_rows_are_light(many):
    row = store.list_designs(many, limit=1)[0]
    assert "graph" not in row and "cost" not in row
    assert {"id", "author", "verdict", "n_block", "n_warn", "judged", "n_findings"} <= set(row)


def test_filters(many):
    assert store.count_designs(many, {"author": "agent"}) == 21   # 20 + the ungenerated one
    assert store.count_designs(many, {"author": ["human", "reference"]}) == 40
    assert store.count_designs(many, {"verdict": "block"}) == 15
    assert store.count_designs(many, {"verdict": "ungenerated"}) == 1
    assert store.count_designs(many, {"verdict": ["block", "ungenerated"]}) == 16
    assert store.count_designs(many, {"rule": "rule.x"}) == 15
    assert store.count_designs(many, {"model": [None]}) == 40
    assert store.count_designs(many, {"model": None}) == 61   # None: no filter
    assert store.count_designs(many, {"model": ["m1", None]}) == 60   # not z-ung (model-a)
    assert store.count_designs(many, {"task_set": "ts-b", "author": "human"}) == 10
    assert store.count_designs(many, {"text": "Z-00"}) == 10
    assert store.count_designs(many, {"text": "%"}) == 0            # wildcards are literal
    assert store.count_designs(many, {"run": "r1", "verdict": "block"}) == 0


def test_sorting(many):
    rows = store.list_designs(many, sort="-verdict", limit=16)
    assert [r["verdict"] for r in rows[:15]] == ["block"] * 15 and rows[15]["verdict"] == "warn"
    rows = store.list_designs(many, sort=["-n_findings", "id"], limit=3)
    assert rows[0]["n_findings"] >= rows[1]["n_findings"] >= rows[2]["n_findings"]
    rows = store.list_designs(many, sort=[("params", True)], limit=None)
    ps = [r["params"] for r in rows if r["params"] is not None]
    assert ps == sorted(ps, reverse=True) and rows[-1]["params"] is None  # nulls last
    with pytest.raises(ValueError):
        store.list_designs(many, sort="graph; DROP TABLE designs")
    with pytest.raises(ValueError):
        store.list_designs(many, {"colour": "red"})


def test_get_design_whole(many):
    d = store.get_design(many, "z-000")
    assert d["graph"]["format"] == "archgraph/1" and d["cost"]["params"] == d["params"]
    assert [f["severity"] for f in d["findings"]] == ["block", "warn"]   # block first
    assert d["runs"] == [] and d["missed_defects"] == [] and d["judged"] == "unjudged"
    assert store.get_design(many, "nope") is None


def test_children(db, fake):
    import_records(db, [record("p"), record("c1", parent="p"), record("c2", parent="p")], verifier=fake)
    assert store.children(db, "p") == ["c1", "c2"]

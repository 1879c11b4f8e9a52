import csv
import json

import duckdb
import pytest

import store
from storetest import cli
from fake_verifier import record
from store.exports import ExportError
from store.importers import import_records


@pytest.fixture
def filled(db, fake):
    import_records(db, [record("e-1", ["Bad"]), record("e-2"), record("e-3", error="x")], verifier=fake)
    store.record_judgment(db, "e-1", "fake.block@n0", "ann", "real")
    return db


@pytest.mark.parametrize("fmt", ["parquet", "csv", "json"])
def test_export_every_table(filled, tmp_path, fmt):
    out = tmp_path / "out"
    files = store.export(filled, fmt, out)
    names = {f.name for f in files}
    assert {f"designs.{fmt}", f"findings.{fmt}", f"judgments.{fmt}", f"current_judgments.{fmt}",
            f"missed_defects.{fmt}", f"runs.{fmt}"} <= names
    des = out / f"designs.{fmt}"
    if fmt == "parquet":
        n = duckdb.connect().execute(f"SELECT count(*) FROM '{des}'").fetchone()[0]
    elif fmt == "csv":
        n = len(list(csv.DictReader(open(des))))
    else:
        rows = json.loads(des.read_text())
        n = len(rows)
        assert {r["id"] for r in rows} == {"e-1", "e-2", "e-3"}
    assert n == 3
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".export-")]


def test_export_to_a_file_path_fails_cleanly(filled, tmp_path):
    f = tmp_path / "afile"
    f.write_text("x")
    with pytest.raises(ExportError):
        store.export(filled, "csv", f)
    p = cli("export", "--format", "csv", "--out", f, db=filled)
    assert p.returncode == 2 and p.stderr.strip() == f"{f}: exists and is not a folder"


def test_export_cli(filled, tmp_path):
    p = cli("export", "--format", "parquet", "--out", tmp_path / "pq", db=filled)
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "pq" / "designs.parquet").exists()
    p = cli("export", "--format", "json", "--out", tmp_path / "js", "--table", "designs", db=filled)
    assert p.returncode == 0 and [x.name for x in (tmp_path / "js").iterdir()] == ["designs.json"]
    p = cli("export", "--format", "json", "--out", tmp_path / "js2", "--table", "nope", db=filled)
    assert p.returncode == 2 and not (tmp_path / "js2").exists()

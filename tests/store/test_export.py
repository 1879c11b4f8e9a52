import csv
import json

import duckdb
import pytest
from fake_verifier import record
from storetest import cli

from archcurator import store
from archcurator.store.exports import ExportError
from archcurator.store.importers import import_records


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
    assert p.returncode == 2
    assert p.stderr.strip() == f"archcurator export: {f}: exists and is not a folder (a file to write must end in .csv)"


def test_export_cli(filled, tmp_path):
    p = cli("export", "--format", "parquet", "--out", tmp_path / "pq", db=filled)
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "pq" / "designs.parquet").exists()
    p = cli("export", "--format", "json", "--out", tmp_path / "js", "--table", "designs", db=filled)
    assert p.returncode == 0 and [x.name for x in (tmp_path / "js").iterdir()] == ["designs.json"]
    p = cli("export", "--format", "json", "--out", tmp_path / "js2", "--table", "nope", db=filled)
    assert p.returncode == 2 and not (tmp_path / "js2").exists()


@pytest.mark.parametrize("fmt", ["parquet", "csv", "json"])
def test_export_to_one_file(filled, tmp_path, fmt):
    target = tmp_path / f"store.{fmt}"
    p = cli("export", "--format", fmt, "--out", target, db=filled)
    assert p.returncode == 0, p.stderr
    assert [x.name for x in tmp_path.iterdir() if not x.name.startswith("store.duckdb")] == [target.name]
    assert p.stdout.strip() == str(target)
    if fmt == "parquet":
        ids = {r[0] for r in duckdb.connect().execute(f"SELECT id FROM '{target}'").fetchall()}
    elif fmt == "csv":
        ids = {r["id"] for r in csv.DictReader(open(target))}
    else:
        ids = {r["id"] for r in json.loads(target.read_text())}
    assert ids == {"e-1", "e-2", "e-3"}


def test_export_one_file_of_another_table(filled, tmp_path):
    target = tmp_path / "j.json"
    p = cli("export", "--format", "json", "--out", target, "--table", "judgments", db=filled)
    assert p.returncode == 0, p.stderr
    rows = json.loads(target.read_text())
    assert [r["verdict"] for r in rows] == ["real"]
    p = cli("export", "--format", "json", "--out", tmp_path / "two.json", "--table", "judgments",
            "--table", "designs", db=filled)
    assert p.returncode == 2 and "one file holds one table" in p.stderr
    assert not (tmp_path / "two.json").exists()


def test_export_help_says_file_or_folder(tmp_path):
    p = cli("export", "--help")
    assert p.returncode == 0
    assert "FILE.EXT|FOLDER" in p.stdout and "a file per table" in p.stdout

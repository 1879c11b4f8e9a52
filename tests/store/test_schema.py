import duckdb
import pytest

from archcurator import store
from archcurator.store import connection
from archcurator.store.paths import default_db_path, resolve_db_path

TABLES = {"designs", "findings", "judgments", "missed_defects", "runs", "store_meta", "schema_version"}


def _tables(db):
    with store.connect(db) as con:
        return {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}


def test_new_store_gets_every_table_and_a_version(db):
    assert store.schema_version(db) >= 1
    assert TABLES <= _tables(db)
    with store.connect(db) as con:
        views = {r[0] for r in con.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()}
    assert "current_judgments" in views


def test_reopening_applies_nothing_twice(db):
    with store.connect(db) as con:
        assert connection.migrate_schema(con) == []
        before = con.execute("SELECT count(*) FROM schema_version").fetchone()[0]
    with store.connect(db) as con:
        assert con.execute("SELECT count(*) FROM schema_version").fetchone()[0] == before


def test_migrations_are_numbered_files_applied_in_order():
    ms = connection.migrations()
    assert [v for v, _, _ in ms] == sorted(v for v, _, _ in ms)
    assert ms[0][0] == 1 and ms[0][1] == "core"


def test_a_later_migration_numbered_between_applied_ones_still_runs(db, monkeypatch):
    """Versions are tracked one by one: room for e.g. 0100_kb.sql next to later core ones."""
    real = connection.migrations()
    kb = (100, "kb", "CREATE TABLE kb_propositions (id VARCHAR PRIMARY KEY, text VARCHAR);")
    core2 = (50, "more", "CREATE TABLE extra_core (x INTEGER);")
    monkeypatch.setattr(connection, "migrations", lambda: sorted(real + [kb]))
    store.schema_version(db)
    monkeypatch.setattr(connection, "migrations", lambda: sorted(real + [kb, core2]))
    with store.connect(db) as con:
        got = {r[0] for r in con.execute("SELECT version FROM schema_version").fetchall()}
    assert {1, 2, 100} <= got
    assert {"kb_propositions", "extra_core"} <= _tables(db)


def test_a_failing_migration_leaves_nothing_behind(db, monkeypatch):
    real = connection.migrations()
    store.schema_version(db)
    bad = (7, "broken", "CREATE TABLE half_made (x INTEGER); SELECT * FROM no_such_table;")
    monkeypatch.setattr(connection, "migrations", lambda: sorted(real + [bad]))
    with pytest.raises(store.StoreError, match="0007_broken"):
        with store.connect(db):
            pass
    monkeypatch.setattr(connection, "migrations", lambda: real)
    assert "half_made" not in _tables(db)
    assert store.schema_version(db) == max(v for v, _, _ in real)


def test_default_path_honours_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("ARCHCURATOR_DB", str(tmp_path / "env.duckdb"))
    assert default_db_path() == tmp_path / "env.duckdb"
    assert resolve_db_path(None) == tmp_path / "env.duckdb"
    assert resolve_db_path(tmp_path / "x.duckdb") == tmp_path / "x.duckdb"
    monkeypatch.delenv("ARCHCURATOR_DB")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert default_db_path() == tmp_path / "data" / "archcurator" / "archcurator.duckdb"


def test_store_file_and_its_folder_are_created(tmp_path):
    db = tmp_path / "deep" / "er" / "s.duckdb"
    store.schema_version(db)
    assert db.exists()


def test_not_a_store_file_is_one_line(tmp_path):
    bad = tmp_path / "junk.duckdb"
    bad.write_bytes(b"this is not a duckdb file" * 100)
    with pytest.raises(store.StoreError) as e:
        store.schema_version(bad)
    assert str(bad) in str(e.value) and "\n" not in str(e.value)


def test_connection_closes_after_each_unit_of_work(db):
    store.schema_version(db)
    # another configuration of the same file would fail if this process still held it open
    con = duckdb.connect(str(db), read_only=True)
    con.close()

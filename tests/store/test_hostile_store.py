"""Hostile batches, a per-design budget, pool workers that die with their import, and store files
that cannot be used: each gives one line naming the file and what to do, and nothing is half-written.

Every test here failed before its fix (issue 12).
"""

from __future__ import annotations

import hashlib
import json
import os
import resource
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import duckdb
import pytest

from archcurator import store
from archcurator.store.importers import import_paths

ROOT = Path(__file__).resolve().parents[2]
TINY = json.loads((ROOT / "tests" / "fixtures" / "tiny_cnn.json").read_text())


def rec(i: int, **fields) -> dict:
    r = {"id": f"d{i}", "author": "agent", "model": "m", "task_set": "t", "run": "r1", "graph": TINY}
    r.update(fields)
    return r


def write_batch(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def stored_ids(db) -> set:
    with store.connect(db) as con:
        return {r[0] for r in con.execute("SELECT id FROM designs").fetchall()}


def cli(*args, env=None, preexec_fn=None, timeout=300):
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "archcurator", *map(str, args)], capture_output=True, text=True,
                          env=e, preexec_fn=preexec_fn, timeout=timeout)


def one_line(stderr: str, command: str, where) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    assert lines[0].startswith(f"archcurator {command}: {where}"), lines[0]
    assert "Traceback" not in stderr
    return lines[0]


# ---- batches: the JSON door and the record's fields --------------------------------------

def test_a_bom_on_line_one_is_not_a_rejection(tmp_path, db):
    p = tmp_path / "b.jsonl"
    p.write_bytes(b"\xef\xbb\xbf" + (json.dumps(rec(1)) + "\n" + json.dumps(rec(2)) + "\n").encode())
    result = import_paths(db, [p], workers=0)
    assert not result.rejected and sorted(result.imported) == ["d1", "d2"]


@pytest.mark.parametrize("bad,why", [
    ('{"id": "d9", "author": "agent", "graph": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested deeper"),
    ('{"id": "d9", "author": "agent", "n": ' + "7" * 5000 + ', "graph": {}}', "digits"),
    ('{"id": "d9", "author": "agent", "n": NaN, "graph": {}}', "NaN"),
    ('{"id": "d9", "author": "agent", "model": "\\ud800", "graph": {}}', "surrogate"),
], ids=["deep", "digits", "nan", "surrogate"])
def test_a_hostile_line_is_rejected_and_the_rest_import(tmp_path, db, bad, why):
    p = write_batch(tmp_path / "b.jsonl", [json.dumps(rec(1)), bad, json.dumps(rec(3))])
    result = import_paths(db, [p], workers=0)
    assert sorted(result.imported) == ["d1", "d3"]
    assert [r.line for r in result.rejected] == [2] and why in result.rejected[0].message
    assert "\n" not in result.rejected[0].message


@pytest.mark.parametrize("field,value", [
    ("id", "d9\n"), ("id", "d9\x1b[2J"), ("model", "\x1b]52;c;cHduZWQ=\x07"), ("task_set", "a\u202eb"),
    ("run", "x" * 1000), ("parent", "p\rq"), ("reference", "\x00"), ("error", "boom\x1b[31m"),
])
def test_record_names_must_be_plain_text(tmp_path, db, field, value):
    line = rec(9, **{field: value})
    if field == "error":
        del line["graph"]
    p = write_batch(tmp_path / "b.jsonl", [json.dumps(rec(1)), json.dumps(line)])
    result = import_paths(db, [p], workers=0)
    assert result.imported == ["d1"]
    assert len(result.rejected) == 1 and f"field '{field}'" in result.rejected[0].message


@pytest.mark.parametrize("how,text", [
    ("name", "tiny\u202egpj.exe"), ("name", "ti\u200bny"), ("name", "tiny\x1b[2J"),
    ("file", "cnn\u202etxt"), ("file", "c\u200dnn"), ("file", "cnn\x07"),
])
def test_an_id_derived_from_a_name_or_file_name_is_plain_text(tmp_path, db, how, text):
    # a design file's id is its graph's `name`, else its file stem: the batch id's door holds for both
    graph = dict(TINY, name=text) if how == "name" else {k: v for k, v in TINY.items() if k != "name"}
    p = tmp_path / (f"{text}.json" if how == "file" else "d.json")
    p.write_text(json.dumps(graph), encoding="utf-8")
    result = import_paths(db, [p], workers=0)
    assert result.imported == []
    assert len(result.rejected) == 1 and "its id, derived from" in result.rejected[0].message
    assert "control character" in result.rejected[0].message


def test_a_multi_line_error_is_kept(tmp_path, db):
    line = rec(9, error="could not generate:\n  Traceback ...\n\tValueError: x")
    del line["graph"]
    p = write_batch(tmp_path / "b.jsonl", [json.dumps(line)])
    result = import_paths(db, [p], workers=0)
    assert result.imported == ["d9"] and result.ungenerated == ["d9"]


def test_a_file_name_that_is_not_utf8_is_stored_readably(tmp_path, db):
    folder = tmp_path / "b"
    folder.mkdir()
    name = os.fsdecode(b"batch-\xff.jsonl")
    write_batch(folder / name, [json.dumps(rec(1))])
    r = cli("import", folder / name, "--db", db)
    assert r.returncode == 0, r.stderr
    with store.connect(db) as con:
        source = con.execute("SELECT source FROM designs").fetchone()[0]
    assert source.endswith("batch-\ufffd.jsonl:1")


def test_a_flag_that_is_not_plain_text_is_one_line(tmp_path, db):
    p = write_batch(tmp_path / "b.jsonl", [json.dumps(rec(1))])
    r = cli("import", p, "--db", db, "--model", "m\x1b[2J")
    assert r.returncode == 2
    assert "--model" in one_line(r.stderr, "import", "--model")
    assert not db.exists() or not stored_ids(db)


# ---- the per-design budget ----------------------------------------------------------------

def _chain(n: int) -> dict:
    nodes = [{"id": f"l{i}", "op": "Linear", "args": {"in_features": 8, "out_features": 8},
              "in": [f"l{i - 1}" if i else "x"]} for i in range(n)]
    return {"format": "archgraph/1", "name": "long", "inputs": [{"id": "x", "shape": ["B", 8]}], "nodes": nodes,
            "outputs": [f"l{n - 1}"]}


@pytest.mark.parametrize("workers", [0, 2], ids=["in-process", "pool"])
def test_a_design_over_its_budget_is_rejected_and_the_rest_go_on(tmp_path, db, monkeypatch, workers):
    monkeypatch.setenv("ARCHCURATOR_DESIGN_BUDGET_S", "0.05")
    lines = [json.dumps(rec(1)), json.dumps(rec(2, graph=_chain(20_000))), json.dumps(rec(3))]
    p = write_batch(tmp_path / "b.jsonl", lines)
    result = import_paths(db, [p], workers=workers)
    assert sorted(result.imported) == ["d1", "d3"]
    assert [r.line for r in result.rejected] == [2]
    assert "over the time budget" in result.rejected[0].message
    assert stored_ids(db) == {"d1", "d3"}


def test_the_budget_stops_a_thread_that_spins_and_spares_one_that_finishes():
    from archcurator.core.budget import Budget, OverBudget

    got = {}

    def spin():
        try:
            with Budget(0.2):
                while True:
                    pass
        except OverBudget:
            got["spin"] = "stopped"

    def quick():
        with Budget(5.0):
            got["quick"] = sum(range(1000))

    threads = [threading.Thread(target=spin), threading.Thread(target=quick)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert got == {"spin": "stopped", "quick": 499500}
    time.sleep(0.3)  # a budget that ended is never fired later
    assert sum(range(10)) == 45


# ---- pool workers die with their import -----------------------------------------------------

def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
        return True
    except ProcessLookupError:
        return False


def _children(pid: int) -> list[int]:
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                stat = (d / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(d.name))
    return out


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads the process table from /proc")
def test_pool_workers_and_the_resource_tracker_die_with_a_killed_import(tmp_path, db):
    big = json.loads((ROOT / "assets" / "architectures" / "resnet50.json").read_text())
    p = write_batch(tmp_path / "b.jsonl", [json.dumps(rec(i, graph=big)) for i in range(600)])
    proc = subprocess.Popen([sys.executable, "-m", "archcurator", "import", str(p), "--db", str(db), "-q",
                             "--workers", "2"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and len(_children(proc.pid)) < 3:  # 2 workers + the resource tracker
            time.sleep(0.2)
        assert len(_children(proc.pid)) >= 2, "the import never started its workers"
        time.sleep(1.0)
        proc.kill()
        proc.wait(30)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and _group_alive(proc.pid):
            time.sleep(0.2)
        assert not _group_alive(proc.pid), "processes of the killed import are still running"
    finally:
        if _group_alive(proc.pid):
            os.killpg(proc.pid, signal.SIGKILL)


# ---- store files that cannot be used ----------------------------------------------------------

@pytest.fixture
def filled(tmp_path) -> Path:
    db = tmp_path / "good.duckdb"
    p = write_batch(tmp_path / "b.jsonl", [json.dumps(rec(i)) for i in range(40)])
    assert not import_paths(db, [p], workers=0).rejected
    return db


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


COMMANDS = [["report", "refusals", "--json"], ["archive", "d1"], ["kb", "list"]]


@pytest.mark.slow
@pytest.mark.parametrize("keep", [0.4, 0.05], ids=["truncated-late", "truncated-early"])
def test_a_truncated_store_is_one_line(tmp_path, filled, keep):
    db = tmp_path / "cut.duckdb"
    shutil.copy(filled, db)
    os.truncate(db, int(db.stat().st_size * keep))
    batch = write_batch(tmp_path / "more.jsonl", [json.dumps(rec(99))])
    for args in COMMANDS + [["import", batch]]:
        r = cli(*args, "--db", db)
        assert r.returncode == 2, (args, r.stdout, r.stderr)
        line = one_line(r.stderr, " ".join(map(str, args[:2 if args[0] == "kb" else 1])), db)
        assert "damaged" in line and "backup" in line


@pytest.mark.parametrize("kind", ["text", "empty", "random", "sqlite"])
def test_a_foreign_file_as_the_store_is_one_line_and_left_alone(tmp_path, kind):
    db = tmp_path / "foreign.duckdb"
    if kind == "text":
        db.write_text("hello world")
    elif kind == "empty":
        db.write_bytes(b"")
    elif kind == "random":
        db.write_bytes(os.urandom(50_000))
    else:
        con = sqlite3.connect(db)
        con.execute("CREATE TABLE t (a)")
        con.commit()
        con.close()
    before = _digest(db)
    for args in COMMANDS:
        r = cli(*args, "--db", db)
        assert r.returncode == 2, (args, r.stderr)
        assert "not an archcurator store" in one_line(r.stderr, " ".join(args[:2 if args[0] == "kb" else 1]), db)
    assert _digest(db) == before


@pytest.mark.slow
def test_a_store_from_a_newer_archcurator_is_neither_read_nor_written(tmp_path, filled):
    db = tmp_path / "newer.duckdb"
    shutil.copy(filled, db)
    con = duckdb.connect(str(db))
    con.execute("INSERT INTO schema_version VALUES (9999, 'from_the_future', now())")
    con.close()
    before = _digest(db)
    batch = write_batch(tmp_path / "more.jsonl", [json.dumps(rec(99))])
    for args in COMMANDS + [["import", batch]]:
        r = cli(*args, "--db", db)
        assert r.returncode == 2, (args, r.stderr)
        line = one_line(r.stderr, " ".join(map(str, args[:2 if args[0] == "kb" else 1])), db)
        assert "newer archcurator" in line and "9999" in line
    assert _digest(db) == before
    with pytest.raises(store.StoreError, match="newer archcurator"):
        store.schema_version(db)


def _unwritable(path: Path) -> bool:
    """Make `path` unwritable even for root (the immutable attribute), or by its mode for others."""
    if os.geteuid() != 0:
        path.chmod(0o444)
        path.parent.chmod(0o555)
        return True
    return subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode == 0


def _writable(path: Path) -> None:
    if os.geteuid() != 0:
        path.parent.chmod(0o755)
        path.chmod(0o644)
    else:
        subprocess.run(["chattr", "-i", str(path)], capture_output=True)


def test_an_unwritable_store_is_one_line(tmp_path, filled):
    folder = tmp_path / "ro"
    folder.mkdir()
    db = folder / "s.duckdb"
    shutil.copy(filled, db)
    if not _unwritable(db):
        pytest.skip("cannot make a file unwritable here (no chattr as root)")
    try:
        r = cli("archive", "d1", "--db", db)
        assert r.returncode == 2
        assert "writable" in one_line(r.stderr, "archive", db)
    finally:
        _writable(db)
    assert "d1" in stored_ids(db)
    with store.connect(db) as con:
        assert con.execute("SELECT archived_at FROM designs WHERE id = 'd1'").fetchone()[0] is None


@pytest.mark.parametrize("name,content", [
    ("x.json", '{"a": 1}\n'), ("x.csv", "a,b\n1,2\n"), ("new.parquet", None), ("new.jsonl", None),
    ("x.duckdb", "id,author\n"),
])
def test_a_data_file_as_the_store_is_refused_not_read_into_memory(tmp_path, name, content):
    """DuckDB opens an existing .json/.csv as a table of a throwaway in-memory database (and makes a
    new *.parquet a database file): an import there was reported done and lost."""
    db = tmp_path / name
    if content is not None:
        db.write_text(content)
    before = db.read_bytes() if content is not None else None
    batch = write_batch(tmp_path / "b.jsonl", [json.dumps(rec(1))])
    r = cli("import", batch, "--db", db)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert "not an archcurator store" in one_line(r.stderr, "import", db)
    if content is None:
        assert not db.exists()
    else:
        assert db.read_bytes() == before
    with pytest.raises(store.StoreError, match="not an archcurator store"):
        store.schema_version(db)


@pytest.mark.parametrize("special", ["fifo", "/dev/null"])
def test_a_fifo_or_a_device_as_the_store_is_one_line_not_a_hang(tmp_path, special):
    """A FIFO as --db hung the command for ever (DuckDB waited to open it); /dev/null failed on fsync."""
    if special == "fifo":
        db = tmp_path / "s.duckdb"
        os.mkfifo(db)
    else:
        db = Path(special)
    r = cli("report", "refusals", "--db", db, timeout=60)
    assert r.returncode == 2, r.stderr
    assert "not a store file" in one_line(r.stderr, "report", db)


def _without_file_permission_override():
    """In the child: let file modes bind even for root (drop CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH and
    CAP_FOWNER from the bounding set; the exec that follows recomputes root's capabilities from it)."""
    if os.geteuid() != 0:
        return
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (1, 2, 3):
        if libc.prctl(24, cap, 0, 0, 0) != 0:  # PR_CAPBSET_DROP
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


@pytest.mark.slow
def test_a_read_only_store_serves_reading_commands_and_refuses_writes_in_one_line(tmp_path, filled):
    db = tmp_path / "ro.duckdb"
    shutil.copy(filled, db)
    db.chmod(0o444)
    before = _digest(db)
    run = lambda *a: cli(*a, "--db", db, preexec_fn=_without_file_permission_override)  # noqa: E731
    r = run("report", "refusals", "--json")
    assert r.returncode == 0, r.stderr
    assert sum(row["returned"] for row in json.loads(r.stdout)["rows"]) == 40
    r = run("export", "--out", tmp_path / "out")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "out" / "designs.parquet").is_file()
    r = run("kb", "list")
    assert r.returncode == 0, r.stderr
    batch = write_batch(tmp_path / "more.jsonl", [json.dumps(rec(99))])
    for args in (["archive", "d1"], ["import", batch]):
        r = run(*args)
        assert r.returncode == 2, (args, r.stdout, r.stderr)
        line = one_line(r.stderr, args[0], db)
        assert "read-only" in line and "writable" in line
    assert _digest(db) == before
    assert "d99" not in stored_ids(db)


def test_a_folder_import_names_each_member_it_cannot_read_and_takes_the_rest(tmp_path):
    """Unreadable subfolders, broken symbolic links and unreadable files were skipped in silence."""
    folder = tmp_path / "batch"
    (folder / "sub").mkdir(parents=True)
    (folder / "locked").mkdir()
    for i, where in enumerate(["a.json", "sub/b.json", "locked/c.json", "noperm.json"]):
        (folder / where).write_text(json.dumps({**TINY, "name": f"net{i}"}))
    (folder / "d.jsonl").write_text(json.dumps(rec(1)) + "\n")
    (folder / "noperm.jsonl").write_text(json.dumps(rec(2)) + "\n")
    (folder / "dangling.json").symlink_to("nowhere.json")
    (folder / "fifo.json").parent.mkdir(exist_ok=True)
    os.mkfifo(folder / "fifo.json")
    for p in (folder / "locked", folder / "noperm.json", folder / "noperm.jsonl"):
        p.chmod(0)
    db = tmp_path / "s.duckdb"
    try:
        r = cli("import", folder, "--db", db, "--json", preexec_fn=_without_file_permission_override)
    finally:
        for p in (folder / "locked", folder / "noperm.json", folder / "noperm.jsonl"):
            p.chmod(0o755)
    assert r.returncode == 1, (r.stdout, r.stderr)
    assert "Traceback" not in r.stderr
    answer = json.loads(r.stdout)
    assert len(answer["imported"]) == 3  # a.json, sub/b.json and d.jsonl's d1
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    rejected = {line.split(": ")[1]: line for line in lines}
    assert set(rejected) == {str(folder / n) for n in ("locked", "noperm.json", "noperm.jsonl", "dangling.json",
                                                       "fifo.json")}, lines
    assert "permission denied" in rejected[str(folder / "locked")]
    assert "permission denied" in rejected[str(folder / "noperm.json")]
    assert "permission denied" in rejected[str(folder / "noperm.jsonl")]
    assert "broken symbolic link" in rejected[str(folder / "dangling.json")]
    assert "not a regular file" in rejected[str(folder / "fifo.json")]
    assert all(line.startswith("archcurator import: ") for line in lines)


@pytest.mark.slow
@pytest.mark.parametrize("workers", [None, "2"], ids=["in-process", "pool"])  # a small batch: in process
def test_a_full_disk_is_one_line_and_nothing_half_written(tmp_path, filled, workers):
    """The file may not grow (RLIMIT_FSIZE stands in for a full disk: writes fail with EFBIG)."""
    db = tmp_path / "full.duckdb"
    shutil.copy(filled, db)
    before = stored_ids(db)
    big = json.loads((ROOT / "assets" / "architectures" / "resnet50.json").read_text())
    n = 300  # about 6 MB of graphs: more than the store file or its write-ahead log may grow by
    batch = write_batch(tmp_path / "big.jsonl", [json.dumps(rec(100 + i, graph=big)) for i in range(n)])
    limit = db.stat().st_size + 100_000

    def small_disk():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    pool = ["--workers", workers] if workers else []
    r = cli("import", batch, "--db", db, "-q", *pool, preexec_fn=small_disk)
    assert r.returncode == 2, (r.stdout, r.stderr)
    line = one_line(r.stderr, "import", db)
    assert "disk is full" in line and "rolled back" in line
    assert stored_ids(db) == before
    r = cli("import", batch, "--db", db, "-q")  # room again: the store works and takes the batch
    assert r.returncode == 0, r.stderr
    assert len(stored_ids(db)) == len(before) + n


def test_a_store_path_that_is_not_utf8_is_one_line(tmp_path):
    p = write_batch(tmp_path / "b.jsonl", [json.dumps(rec(1))])
    db = tmp_path / os.fsdecode(b"s-\xff.duckdb")
    r = cli("import", p, "--db", db)
    assert r.returncode == 2 and "not UTF-8" in one_line(r.stderr, "import", "")


def test_an_endless_line_is_rejected_without_being_held(tmp_path, db, monkeypatch):
    from archcurator.core.imports import inputs

    monkeypatch.setattr(inputs, "MAX_LINE", 10_000)
    p = tmp_path / "b.jsonl"
    p.write_text(json.dumps(rec(1)) + "\n" + "x" * 50_000 + "\n" + json.dumps(rec(3)) + "\n", encoding="utf-8")
    result = import_paths(db, [p], workers=0)
    assert sorted(result.imported) == ["d1", "d3"]
    assert [r.line for r in result.rejected] == [2] and "longer than 10,000" in result.rejected[0].message

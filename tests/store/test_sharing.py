"""Sharing the store between processes, and surviving kill -9 mid-judging."""

import json
import os
import random
import signal
import subprocess
import sys
import time

import pytest
from fake_verifier import record
from storetest import cli, subprocess_env, write_jsonl

from archcurator import store
from archcurator.store.importers import import_records

HOLD = """
import sys, time, duckdb
con = duckdb.connect(sys.argv[1])
print("holding", flush=True)
time.sleep(60)
"""

# the app's way: every unit of work opens the store, commits and closes
APP = """
import sys, time
sys.path[:0] = sys.argv[3:]
from archcurator import store
from fake_verifier import verify
import os
db, n = sys.argv[1], int(sys.argv[2])
stop = db + ".stop"
print("ready", flush=True)
verdicts = ["real", "false_alarm", "unsure"]
for i in range(n):
    if os.path.exists(stop):
        break
    store.list_designs(db, {"judged": "unjudged"}, limit=50)
    d = store.get_design(db, "s-%d" % (i % 20), curator="app")
    eid = store.record_judgment(db, d["id"], d["findings"][0]["key"], "app", verdicts[i % 3])
    print(eid, flush=True)
    time.sleep(0.01)
"""


def _spawn(code, *args):
    from storetest import HERE

    return subprocess.Popen([sys.executable, "-c", code, *map(str, args), str(HERE)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=subprocess_env())


@pytest.fixture
def judged_store(db, fake):
    import_records(db, [record(f"s-{i}", ["Linear", "Bad"]) for i in range(20)], verifier=fake)
    return db


# a holder whose lock on the store file is gone while its lock on the write-ahead log stays: what a process
# closing the store looks like for an instant (the file's lock goes first). Opening the file then succeeds and
# the commit fails, at the log's lock. Closing any descriptor of a file drops the process's POSIX locks on it.
HOLD_LOG_ONLY = """
import sys, time, duckdb
con = duckdb.connect(sys.argv[1])
con.execute("CREATE TABLE IF NOT EXISTS hold_probe (i INTEGER)")
con.execute("INSERT INTO hold_probe VALUES (1)")
open(sys.argv[1], "rb").close()
print("holding", flush=True)
time.sleep(60)
"""


def test_a_lock_lost_at_commit_is_store_busy_and_the_step_is_written_once_when_tried_again(judged_store):
    db = judged_store
    key = store.get_design(db, "s-0", curator="ada")["findings"][0]["key"]
    holder = _spawn(HOLD_LOG_ONLY, db)
    try:
        assert holder.stdout.readline().strip() == "holding"
        with pytest.raises(store.StoreBusy) as e:
            store.record_judgment(db, "s-0", key, "ada", "real")
        msg = str(e.value)
        assert "\n" not in msg and str(db) in msg and f"PID {holder.pid}" in msg
    finally:
        holder.kill()
        holder.wait()
    store.record_judgment(db, "s-0", key, "ada", "real")  # what the app's write queue does on StoreBusy
    with store.connect(db) as con:
        assert con.execute("SELECT count(*) FROM judgments WHERE curator = 'ada'").fetchone() == (1,)


@pytest.mark.slow
def test_busy_store_names_the_holder_in_one_line(db):
    store.schema_version(db)
    holder = _spawn(HOLD, db)
    try:
        assert holder.stdout.readline().strip() == "holding"
        t0 = time.monotonic()
        with pytest.raises(store.StoreBusy) as e:
            with store.connect(db, timeout=0.6):
                pass
        assert 0.5 <= time.monotonic() - t0 < 5
        msg = str(e.value)
        assert "\n" not in msg and str(db) in msg and f"PID {holder.pid}" in msg and "python" in msg
        assert e.value.pid == holder.pid
        p = cli("report", "refusals", "--json", db=db, env_extra={"ARCHCURATOR_DB_TIMEOUT": "0.5"})
        assert p.returncode == 2 and p.stdout == ""
        assert len(p.stderr.strip().splitlines()) == 1 and f"PID {holder.pid}" in p.stderr
        p = cli("import", write_jsonl(db.parent / "b.jsonl", [record("late")]), db=db,
                env_extra={"ARCHCURATOR_DB_TIMEOUT": "0.5"})
        assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1 and str(db) in p.stderr
    finally:
        holder.kill()
        holder.wait()
    assert store.get_design(db, "late") is None  # nothing half-written


def test_waits_for_a_short_holder(db):
    store.schema_version(db)
    holder = _spawn(HOLD.replace("time.sleep(60)", "time.sleep(1.0)"), db)
    try:
        assert holder.stdout.readline().strip() == "holding"
        with store.connect(db, timeout=10) as con:   # gets it once the holder lets go
            assert con.execute("SELECT 1").fetchone() == (1,)
    finally:
        holder.kill()
        holder.wait()


@pytest.mark.slow
def test_import_and_report_from_a_second_process_while_the_app_works(judged_store, tmp_path):
    db = judged_store
    app = _spawn(APP, db, 2000)   # works until told to stop
    try:
        assert app.stdout.readline().strip() == "ready"
        batch = write_jsonl(tmp_path / "b.jsonl", [record(f"n-{i}", ["Bad"] if i % 2 else ["Linear"])
                                                   for i in range(100)])
        p = cli("import", batch, db=db)
        assert p.returncode == 0, p.stderr
        assert "imported 100" in p.stdout
        p = cli("report", "refusals", "--json", db=db)
        assert p.returncode == 0, p.stderr
        row = json.loads(p.stdout)["rows"][0]
        assert row["returned"] == 120 and row["blocked"] == 70
        assert app.poll() is None, "the app should still be working"
        # the app goes on judging after the import and the report (how many it managed while they
        # ran depends on timing, so count what it commits from here on)
        ids = []
        while len(ids) < 5:
            line = app.stdout.readline()
            assert line, "the app stopped judging"
            ids.append(int(line))
        (db.parent / (db.name + ".stop")).touch()
        out, err = app.communicate(timeout=120)
    finally:
        if app.poll() is None:
            app.kill()
            app.wait()
    assert app.returncode == 0, err
    ids += [int(x) for x in out.split()]
    assert len(ids) >= 5
    events = {e["id"] for e in store.judgment_events(db, curator="app")}
    assert set(ids) <= events


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_kill_9_mid_judging_loses_no_committed_judgment(judged_store, seed):
    db = judged_store
    rng = random.Random(seed)
    app = _spawn(APP.replace("time.sleep(0.01)", "pass"), db, 100000)
    committed = []
    try:
        assert app.stdout.readline().strip() == "ready"
        want = rng.randint(5, 40)
        while len(committed) < want:
            line = app.stdout.readline()
            assert line, app.stderr.read()
            committed.append(int(line))
        time.sleep(rng.random() * 0.05)      # kill at any moment, likely mid-transaction
        os.kill(app.pid, signal.SIGKILL)
        rest, _ = app.communicate()
        committed += [int(x) for x in rest.split()]   # printed after their commit
    finally:
        if app.poll() is None:
            app.kill()
            app.wait()
    assert app.returncode == -signal.SIGKILL
    events = {e["id"] for e in store.judgment_events(db, curator="app")}
    assert set(committed) <= events
    # the store still works after the crash
    assert store.record_judgment(db, "s-0", "fake.block@n1", "after", "real") > max(committed)


def test_a_duckdb_instance_outliving_its_last_connection_keeps_the_store_locked_when_the_store_is_opened_again(db):
    """DuckDB's lock on the file is a POSIX record lock, dropped when the process closes any descriptor of the
    file. The header was read on every open while no connection of ours was counted, even when DuckDB still
    had the file open (an instance outliving its last connection): another process could then write it at
    the same time. Here a second connection stands for the instance that lives on."""
    import duckdb

    from archcurator.store import connection

    store.schema_version(db)
    lives_on = duckdb.connect(str(db), config=connection._CONFIG)
    try:
        with store.connect(db) as con:
            con.execute("SELECT 1").fetchone()
        probe = subprocess.run([sys.executable, "-c", "import sys, duckdb; duckdb.connect(sys.argv[1])", str(db)],
                               capture_output=True, text=True, timeout=60)
        assert probe.returncode != 0 and "lock" in probe.stderr.lower(), probe.stderr[-400:]
    finally:
        lives_on.close()

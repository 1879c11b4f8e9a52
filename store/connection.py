"""Opening the store: one unit of work at a time, with a clear answer when it is busy.

DuckDB lets one *process* hold a database file at a time (even a read-only
open fails while another process holds it). So nothing keeps the store open:
every unit of work opens the file, does its work in one transaction and
closes it, and a second process (an import or a report run while the app is
open) waits a few seconds for its turn. When it cannot get the file in time
it raises `StoreBusy`, whose one-line message names the file and the process
holding it.

Inside one process, connections to the same file share one database
instance, so worker threads may each open and close their own connection.
"""

from __future__ import annotations

import os
import re
import stat
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from importlib import resources
from pathlib import Path

import duckdb

from .paths import resolve_db_path

DEFAULT_TIMEOUT = float(os.environ.get("ARCHCURATOR_DB_TIMEOUT", "5"))

DB = str | os.PathLike | None | duckdb.DuckDBPyConnection

_LOCK_RE = re.compile(r"Conflicting lock is held in (?P<prog>.*?) \(PID (?P<pid>\d+)\)")
_MIGRATION_RE = re.compile(r"^(\d{4})_([A-Za-z0-9_\-]+)\.sql$")
_migrate_lock = threading.Lock()
# Store files this process has open through DuckDB, and how many connections each. DuckDB holds the
# file with a POSIX record lock, which the kernel drops when the process closes ANY descriptor of the
# file: reading the header (`check_store_path`) while a worker thread had the store open released the
# lock, and a second app then wrote the same file at once (a damaged store, judgments lost). So the
# header is read only while no connection of this process has the file open, under `_holders_lock`.
_holders: dict[str, int] = {}
_holders_lock = threading.Lock()
# ... and even then only once per file: a DuckDB instance can outlive the last connection's close (a result
# still referenced, garbage not yet collected), and still holds the lock the header read would drop. A file
# DuckDB has opened is known by its device and inode; one replaced since (a new inode) is read again.
_known_stores: dict[str, tuple[int, int]] = {}


class StoreError(RuntimeError):
    """The store cannot be used; the message is one line naming the file."""


class StoreNewer(StoreError):
    """The store holds schema changes this archcurator does not know: a newer one wrote it."""


class StoreFault(StoreError):
    """The store file cannot be used as it is: damaged, foreign, unwritable, or the disk is full."""


class StoreBusy(StoreError):
    """Another process holds the store file. `.pid` / `.holder` name it when DuckDB says."""

    def __init__(self, path: Path, pid: int | None, holder: str | None, waited: float):
        self.path = path
        self.pid = pid
        self.holder = holder
        self.waited = waited
        who = f"PID {pid}" if pid is not None else "another process"
        if holder:
            who += f" ({holder})"
        super().__init__(
            f"{path}: store is busy: held by {who}; gave up after {waited:g}s, try again when it finishes"
        )


def utcnow() -> datetime:
    """Naive UTC timestamp, the store's time convention."""
    return datetime.now(timezone.utc).replace(tzinfo=None)


def _describe_pid(pid: int) -> str | None:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return None
    parts = [p.decode("utf-8", "replace") for p in raw.split(b"\0") if p]
    if not parts:
        return None
    parts[0] = os.path.basename(parts[0])
    text = " ".join(" ".join(parts).split())
    return text if len(text) <= 80 else text[:77] + "..."


# A store file never loads code: DuckDB would otherwise fetch an extension from the network to
# read a SQLite file given as --db, and load it
_CONFIG: dict[str, str | bool | int | float | list[str]] = {
    "autoinstall_known_extensions": False, "autoload_known_extensions": False}


# DuckDB reads a file named *.json, *.csv, *.parquet, ... as a table of an in-memory database
# (or makes a new one there): imports into it would be lost when the command ends
FOREIGN_SUFFIXES = frozenset({
    ".json", ".jsonl", ".ndjson", ".csv", ".tsv", ".parquet", ".arrow", ".feather", ".xlsx", ".xls",
    ".sqlite", ".sqlite3", ".gz", ".zst",
})
_DUCKDB_MAGIC = b"DUCK"  # bytes 8..12 of every DuckDB database file


def _foreign_kind(path: Path) -> str | None:
    """What a file that is not a DuckDB database is (None for a DuckDB file, an empty or absent one)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(16)
    except FileNotFoundError:
        return None
    except OSError:
        return None  # unreadable: DuckDB's own open names the problem
    if not head or head[8:12] == _DUCKDB_MAGIC:
        return None
    if head.startswith(b"SQLite format 3"):
        return "a SQLite database"
    if head.startswith(b"PAR1"):
        return "a Parquet file"
    return "not a DuckDB database file"


def _identity(path: Path) -> tuple[int, int] | None:
    """The file's device and inode (a stat: no descriptor opened), None when there is none."""
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def check_store_path(path: Path) -> None:
    """Refuse a --db that DuckDB would not keep as a database file: a foreign file, or a name
    whose suffix DuckDB reads as a data file."""
    try:
        mode = path.stat().st_mode
    except OSError:
        mode = None
    if mode is not None and not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
        # DuckDB would open a FIFO and wait on it for ever, and fail on a device only after writing
        what = "a FIFO" if stat.S_ISFIFO(mode) else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else \
            "a socket" if stat.S_ISSOCK(mode) else "not a regular file"
        raise StoreFault(f"{path}: is {what}, not a store file; nothing was read or written: pass --db a store, or a "
                         "new path ending in .duckdb")
    kind = _foreign_kind(path) if path.is_file() else None
    if kind is None and path.suffix.lower() in FOREIGN_SUFFIXES:
        kind = f"a {path.suffix} name, which DuckDB reads as a data file and would not keep as a store"
    if kind is not None:
        raise StoreFault(f"{path}: not an archcurator store ({kind}); nothing was read or written: pass --db a "
                         "store, or a new path ending in .duckdb")


def _is_in_memory(con: duckdb.DuckDBPyConnection) -> bool:
    row = con.execute("SELECT path FROM duckdb_databases() WHERE database_name = current_database()").fetchone()
    return row is None or row[0] is None


def _open(path: Path, timeout: float) -> duckdb.DuckDBPyConnection:
    """The store opened for writing or, when the file may only be read, read-only (writes on it then
    fail with `store_fault`'s read-only line)."""
    deadline = time.monotonic() + max(timeout, 0.0)
    # poll often: the app holds the file only for short units of work, and a slow poll
    # can keep missing the gaps between them
    delay = 0.01
    start = time.monotonic()
    read_only = False
    while True:
        try:
            con = duckdb.connect(str(path), read_only=read_only, config=_CONFIG)
            if _is_in_memory(con):
                con.close()
                raise StoreFault(f"{path}: not an archcurator store (DuckDB opened it as a data file, not a "
                                 "database); nothing was read or written: pass --db a store, or a new path ending "
                                 "in .duckdb")
            return con
        except duckdb.IOException as exc:
            msg = str(exc)
            low = msg.lower()
            if not read_only and path.is_file() and any(k in low for k in _NO_ACCESS):
                read_only = True  # a store we may only read still serves reports, exports and lists
                continue
            if "lock" not in low or any(k in low for k in _NO_ACCESS + _NO_ROOM + _FOREIGN + _DAMAGED):
                raise store_fault(path, exc, "open") or StoreError(
                    f"{path}: cannot open the store: {_first_line(msg)}") from None
            if time.monotonic() >= deadline:
                raise _busy(path, msg, round(time.monotonic() - start, 1)) from None
            time.sleep(delay)
            delay = min(delay * 1.5, 0.05)
        except duckdb.Error as exc:
            raise store_fault(path, exc, "open") or StoreError(
                f"{path}: cannot open the store: {_first_line(str(exc))}") from None


def _first_line(msg: str, limit: int = 300) -> str:
    text = " ".join(msg.split())
    return text if len(text) <= limit else text[:limit] + "…"


_NO_ROOM = ("no space left", "file too large", "disk quota", "out of disk")
_NO_ACCESS = ("permission denied", "operation not permitted", "read-only file system")
_DAMAGED = ("could not read enough bytes", "corrupt", "checksum", "invalid block", "failed to read",
            "deserializ", "serializ")
_FOREIGN = ("not a valid duckdb database file",)


def _lock_lost(path: Path, exc: BaseException) -> StoreBusy | None:
    """A lock DuckDB could not take in the middle of a unit of work (at commit, on the write-ahead log: another
    process was opening or closing the store at that instant) as `StoreBusy`: DuckDB rolled the work back, so
    the caller may do it again, as it would for a store busy at open. Any other error: None."""
    msg = str(exc)
    return _busy(path, msg, 0.0) if "could not set lock" in msg.lower() else None


def _busy(path: Path, msg: str, waited: float) -> StoreBusy:
    """`StoreBusy` for DuckDB's lock message `msg`, naming the process it says holds the file."""
    m = _LOCK_RE.search(msg)
    pid = int(m.group("pid")) if m else None
    holder = (_describe_pid(pid) if pid is not None else None) or (os.path.basename(m.group("prog")) if m else None)
    return StoreBusy(path, pid, holder, waited)


def store_fault(path: Path, exc: BaseException, doing: str = "use") -> StoreFault | None:
    """The one line for a DuckDB error that comes from the store *file* (and what to do about it),
    or None for any other error (a mistake in the project's SQL stays a traceback for its tests)."""
    detail = _first_line(str(exc))
    low = detail.lower()
    if "read-only mode" in low or "attached in read-only" in low:
        return StoreFault(f"{path}: cannot write the store: the file is read-only (only reading commands can use "
                          "it); nothing was written: make it writable (chmod u+w), or pass --db another store")
    if any(k in low for k in _NO_ROOM):
        return StoreFault(f"{path}: cannot write the store: the disk is full or the file may grow no larger "
                          f"({detail}); what was being written was rolled back: free space and run the command again")
    if any(k in low for k in _NO_ACCESS):
        return StoreFault(f"{path}: cannot {doing} the store: not allowed to write it or its folder ({detail}); "
                          "what was being written was rolled back: make both writable, or pass --db another store")
    if any(k in low for k in _FOREIGN) or (doing == "open" and "sqlite" in low):
        what = "a SQLite database" if "sqlite" in low else "not a DuckDB database file"
        return StoreFault(f"{path}: not an archcurator store ({what}); pass --db a store, or a path where a new "
                          "one may be made")
    if any(k in low for k in _DAMAGED) or isinstance(exc, duckdb.SerializationException):
        return StoreFault(f"{path}: the store file is damaged (truncated or corrupt: {detail}); restore it from a "
                          "backup, or pass --db a new path to start another store")
    if isinstance(exc, (duckdb.IOException, duckdb.FatalException)) or "invalidated" in low:
        return StoreFault(f"{path}: cannot {doing} the store: {detail}; what was being written was rolled back: "
                          "check the file and the disk, then run the command again")
    return None


@contextmanager
def connect(db: str | os.PathLike | None = None, *, timeout: float | None = None,
            migrate: bool = True) -> Iterator[duckdb.DuckDBPyConnection]:
    """Open the store for one unit of work; closed (and released) on exit.

    `db` is a path (None: `--db` default / `$ARCHCURATOR_DB`). Retries for
    `timeout` seconds (default 5, `$ARCHCURATOR_DB_TIMEOUT`) while another
    process holds the file, then raises `StoreBusy`. Applies pending
    migrations first. The connection is in auto-commit mode; use
    `transaction()` for a unit of work that must be all-or-nothing.
    """
    path = resolve_db_path(db)
    try:
        str(path).encode("utf-8")
    except UnicodeEncodeError:  # bytes that are not UTF-8 in the name: DuckDB fails on them with std::bad_cast
        raise StoreFault(f"{path}: the store's path is not UTF-8 text; name the store with a UTF-8 path") from None
    if path.exists() and path.is_dir():
        raise StoreError(f"{path}: is a folder, not a store file")
    key = os.path.realpath(path)
    with _holders_lock:
        ident = _identity(path)
        if not _holders.get(key) and (ident is None or _known_stores.get(key) != ident):
            check_store_path(path)
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError(f"{path}: cannot create its folder: {exc.strerror or exc}") from None
        con = _open(path, DEFAULT_TIMEOUT if timeout is None else timeout)
        _holders[key] = _holders.get(key, 0) + 1
        ident = _identity(path)  # the file DuckDB made, where there was none
        if ident is not None:
            _known_stores[key] = ident
    try:
        try:
            if migrate:
                migrate_schema(con, path)
            else:
                check_schema(con, path)
            yield con
        except duckdb.Error as exc:
            busy = _lock_lost(path, exc)
            if busy is not None:
                raise busy from None
            # the file failed under the work (a truncated store read, a full disk at commit):
            # one line naming the file; the transaction that was open is rolled back by DuckDB
            fault = store_fault(path, exc)
            if fault is None:
                raise
            raise fault from None
    finally:
        with _holders_lock:
            try:
                con.close()
            except duckdb.Error:
                pass  # closing after a failed write: nothing more to keep
            _holders[key] -= 1
            if not _holders[key]:
                del _holders[key]


@contextmanager
def transaction(db: DB = None, *, timeout: float | None = None) -> Iterator[duckdb.DuckDBPyConnection]:
    """One unit of work in one transaction: committed on success, rolled back on error.

    `db` may also be an open connection: then the work joins its transaction
    if one is open, or runs in a new one on it.
    """
    if isinstance(db, duckdb.DuckDBPyConnection):
        with _tx(db) as con:
            yield con
        return
    with connect(db, timeout=timeout) as con:
        with _tx(con):
            yield con


@contextmanager
def _tx(con: duckdb.DuckDBPyConnection) -> Iterator[duckdb.DuckDBPyConnection]:
    try:
        con.execute("BEGIN TRANSACTION")
    except duckdb.TransactionException:
        # already inside the caller's transaction: it commits or rolls back
        yield con
        return
    try:
        yield con
    except BaseException:
        try:
            con.execute("ROLLBACK")
        except duckdb.Error:
            pass
        raise
    con.execute("COMMIT")


@contextmanager
def reading(db: DB = None, *, timeout: float | None = None) -> Iterator[duckdb.DuckDBPyConnection]:
    """A connection for reading: the given connection, or a fresh one closed after."""
    if isinstance(db, duckdb.DuckDBPyConnection):
        yield db
        return
    with connect(db, timeout=timeout) as con:
        yield con


# ---- schema -------------------------------------------------------------

def one(cur: duckdb.DuckDBPyConnection) -> tuple:
    """The row of a query that always gives one (a count, a nextval, an INSERT ... RETURNING of one row)."""
    row = cur.fetchone()
    if row is None:
        raise StoreError("a query that always gives one row gave none")
    return row


def migrations() -> list[tuple[int, str, str]]:
    """(version, name, sql) of every `store/migrations/NNNN_name.sql`, in order."""
    out = []
    folder = resources.files(__package__) / "migrations"
    for entry in folder.iterdir():
        m = _MIGRATION_RE.match(entry.name)
        if m:
            out.append((int(m.group(1)), m.group(2), entry.read_text(encoding="utf-8")))
    out.sort()
    versions = [v for v, _, _ in out]
    if len(set(versions)) != len(versions):
        raise StoreError("store/migrations: two migrations share a number")
    return out


def applied_versions(con: duckdb.DuckDBPyConnection) -> set[int]:
    has = one(con.execute(
        "SELECT count(*) FROM duckdb_tables() WHERE database_name = current_database()"
        " AND schema_name = 'main' AND table_name = 'schema_version'"
    ))[0]
    if not has:
        return set()
    return {r[0] for r in con.execute("SELECT version FROM schema_version").fetchall()}


def check_schema(con: duckdb.DuckDBPyConnection, path: Path | str = "store", applied: set | None = None) -> None:
    """Refuse a store stamped with schema changes this archcurator does not know (a newer one
    wrote it): reading it could misread its tables, writing it could break it for its owner."""
    applied = applied_versions(con) if applied is None else applied
    unknown = sorted(applied - {v for v, _, _ in migrations()})
    if unknown:
        names = ", ".join(f"{v:04d}" for v in unknown[:5]) + (" …" if len(unknown) > 5 else "")
        raise StoreNewer(f"{path}: the store was written by a newer archcurator (schema change {names} is unknown "
                         "here); nothing was read or written: upgrade archcurator to use it")


def migrate_schema(con: duckdb.DuckDBPyConnection, path: Path | str = "store") -> list[int]:
    """Apply every migration not yet applied, lowest number first, one transaction each.

    Versions are tracked one by one (not as a high-water mark), so a
    migration numbered between two applied ones (e.g. a knowledge-base
    `0100_kb.sql` next to core `0002_...`) is still applied. Returns what ran.
    """
    with _migrate_lock:
        done = applied_versions(con)
        check_schema(con, path, done)
        todo = [m for m in migrations() if m[0] not in done]
        ran = []
        for version, name, sql in todo:
            con.execute("BEGIN TRANSACTION")
            try:
                con.execute(
                    "CREATE TABLE IF NOT EXISTS schema_version ("
                    " version INTEGER PRIMARY KEY, name VARCHAR NOT NULL, applied_at TIMESTAMP NOT NULL)"
                )
                if version in applied_versions(con):  # another thread got there first
                    con.execute("ROLLBACK")
                    continue
                con.execute(sql)
                con.execute("INSERT INTO schema_version VALUES (?, ?, ?)", [version, name, utcnow()])
                con.execute("COMMIT")
            except BaseException as exc:
                try:
                    con.execute("ROLLBACK")
                except duckdb.Error:
                    pass
                if isinstance(exc, duckdb.Error) and "read-only" in str(exc).lower():
                    raise StoreFault(
                        f"{path}: the store file is read-only and its schema is older than this archcurator's "
                        f"({version:04d}_{name} is pending); nothing was written: make it writable once (chmod u+w) "
                        "and run the command again") from None
                if isinstance(exc, duckdb.Error):
                    raise StoreError(
                        f"store migration {version:04d}_{name}.sql failed: {_first_line(str(exc))}"
                    ) from None
                raise
            ran.append(version)
        return ran


def schema_version(db: DB = None) -> int:
    """The highest applied migration number."""
    with reading(db) as con:
        return max(applied_versions(con), default=0)

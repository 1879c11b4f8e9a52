"""Importing designs: archgraph files, folders of them, JSONL batches (SPEC §2), `.py` sources.

`import_paths(db, paths, ...) -> ImportResult` is what `archcurator import`
runs. It happens in two steps:

1. **Plan** (nothing written): every named path is checked. A path that
   cannot be read at all (missing, unreadable, not UTF-8, a named `.json`
   that is not a design, an unsupported kind) raises `ImportInputError`
   with one line naming the file: the command exits 2 and the store is
   untouched.
2. **Batches**: each JSONL file is one batch, the loose design files named
   on the command line are one batch, each folder's design files are one
   batch. Each line / file is parsed and verified outside the store (in a
   pool of 2 processes for big batches); then the batch is written in one
   short transaction. A line whose id is stored adds nothing (skipped); a
   bad line is rejected with its file and line number while the rest import.

Ids: a batch line's `id`; a design file's `name`, else its file stem; a
parsed `.py` design's name, else its entry. Authors: a batch line's
`author`; design files default to `human` (`--author` to change it). A
batch line without `author` is rejected unless `--author` is given.
"""

from __future__ import annotations

import codecs
import gc
import json
import os
import re
import stat
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from archcurator.core import jsontext
from archcurator.core.budget import design_budget_s

from .connection import DB, utcnow

AUTHORS = ("human", "agent", "reference")
RECORD_FIELDS = ("id", "author", "model", "task_set", "run", "parent", "reference", "graph", "error")
BATCH_SUFFIXES = (".jsonl", ".ndjson")
DESIGN_SUFFIXES = (".json",)
CHUNK = 128
POOL_THRESHOLD = 400  # designs in a batch before a process pool pays for itself
POOL_SIZE = 2
MAX_LINE = jsontext.MAX_FILE_BYTES  # characters of one batch line (a design file's own limit)


class ImportInputError(ValueError):
    """An input that cannot be read at all; the message is one line naming the file."""


@dataclass
class Rejection:
    file: str
    line: int | None
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line is not None else self.file
        return f"{where}: rejected: {self.message}"

    def to_dict(self) -> dict:
        return {"file": self.file, "line": self.line, "message": self.message}


@dataclass
class BatchSummary:
    label: str
    imported: int = 0
    skipped: int = 0
    rejected: int = 0
    ungenerated: int = 0


@dataclass
class ImportResult:
    imported: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    rejected: list[Rejection] = field(default_factory=list)
    ungenerated: list[str] = field(default_factory=list)  # imported ids that are ungenerated
    batches: list[BatchSummary] = field(default_factory=list)
    #: skipped ids whose graph is already stored under another id: {id: stored id}
    present: dict[str, str] = field(default_factory=dict)

    @property
    def exit_code(self) -> int:
        return 1 if self.rejected else 0

    def to_dict(self) -> dict:
        return {
            "imported": self.imported,
            "skipped": self.skipped,
            "rejected": [r.to_dict() for r in self.rejected],
            "ungenerated": self.ungenerated,
            "already_present": [{"id": k, "as": v} for k, v in self.present.items()],
            "batches": [b.__dict__ for b in self.batches],
        }


@dataclass
class Defaults:
    """Fields a record does not carry itself (command-line flags)."""

    author: str | None = None  # None: batch lines must say; design files: human
    model: str | None = None
    task_set: str | None = None
    run: str | None = None


@dataclass
class PyOptions:
    entry: str | None = None
    args: dict | None = None
    inputs: list[str] = field(default_factory=list)


# ---- items: one line or one file, as text -----------------------------------------

@dataclass
class Item:
    file: str
    line: int | None  # None for a whole design file
    text: str | None = None  # JSON text
    obj: Any = None  # already-parsed (parsed .py designs)


@dataclass
class Batch:
    label: str
    kind: str  # jsonl | files | py
    path: Path | None = None
    items: list[Item] = field(default_factory=list)
    count: int = 0

    def iter_items(self) -> Iterator[Item]:
        if self.kind != "jsonl":
            yield from self.items
            return
        name = str(self.path)
        try:
            with os.fdopen(jsontext.open_regular(self.path), encoding="utf-8") as fh:
                n = 0
                while True:
                    # a line is read up to MAX_LINE characters: a longer one (a design no budget can take,
                    # or no design at all) is skipped to its end and rejected, not held in memory
                    line = fh.readline(MAX_LINE + 1)
                    if not line:
                        break
                    n += 1
                    if len(line) > MAX_LINE and not line.endswith("\n"):
                        while (rest := fh.readline(1 << 20)) and not rest.endswith("\n"):
                            pass
                        yield Item(name, n, None, obj=ImportInputError(
                            f"the line is longer than {MAX_LINE:,} characters (a design holds far fewer)"))
                        continue
                    if n == 1:
                        line = jsontext.strip_bom(line)  # a BOM is not part of line 1's JSON
                    if line.strip():
                        yield Item(name, n, line)
        except (OSError, UnicodeDecodeError, jsontext.FileRefused) as exc:
            raise ImportInputError(f"{name}: {_reason(exc)}") from None


def _reason(exc: BaseException) -> str:
    """The one wording of a file that cannot be read (`jsontext.read_problem`)."""
    return jsontext.read_problem(exc)


def _scan_jsonl(path: Path) -> int:
    """Check that the whole file decodes as UTF-8; count its non-blank lines."""
    dec = codecs.getincrementaldecoder("utf-8")()
    count = 0
    carry = ""
    offset = 0
    try:
        fd = jsontext.open_regular(path)  # a FIFO or /dev/zero named as a batch is never read
    except jsontext.FileRefused as exc:
        raise ImportInputError(f"{path}: {exc}") from None
    except OSError as exc:
        raise ImportInputError(f"{path}: {_reason(exc)}") from None
    try:
        with os.fdopen(fd, "rb") as fh:
            while True:
                block = fh.read(1 << 22)
                try:
                    text = carry + dec.decode(block, final=not block)
                except UnicodeDecodeError as exc:
                    raise ImportInputError(
                        f"{path}: cannot read: not UTF-8 text (byte {offset + max(exc.start, 0)})") from None
                offset += len(block)
                lines = text.split("\n")
                carry = lines.pop()
                count += sum(1 for line in lines if line.strip())
                if not block:
                    break
    except OSError as exc:
        raise ImportInputError(f"{path}: {_reason(exc)}") from None
    return count + (1 if carry.strip() else 0)


def _read_text(path: Path) -> str:
    try:
        return jsontext.read_file(path)
    except jsontext.FileRefused as exc:
        raise ImportInputError(f"{path}: {exc}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ImportInputError(f"{path}: {_reason(exc)}") from None


def plan(paths: Iterable[str | os.PathLike], py: PyOptions | None = None) -> list[Batch]:
    """Check every input and group it in batches; raises ImportInputError (exit 2)."""
    loose = Batch("files", "files")
    batches: list[Batch] = []
    paths = [Path(p) for p in paths]
    if not paths:
        raise ImportInputError("import: name at least one file or folder")
    for path in paths:
        if not path.exists():
            raise ImportInputError(f"{path}: no such file or folder")
        if not path.is_dir() and not path.is_file():  # a FIFO, a device, a socket: never opened
            raise ImportInputError(f"{path}: is not a regular file or a folder")
        if path.is_dir():
            batches.extend(_plan_folder(path))
        elif path.suffix.lower() in BATCH_SUFFIXES:
            batches.append(Batch(str(path), "jsonl", path, count=_scan_jsonl(path)))
        elif path.suffix.lower() in DESIGN_SUFFIXES:
            text = _read_text(path)
            problem = _design_file_problem(text, path)
            if problem:
                raise ImportInputError(problem)
            loose.items.append(Item(str(path), None, text))
        elif path.suffix.lower() == ".py":
            batches.append(_plan_py(path, py or PyOptions()))
        else:
            raise ImportInputError(
                f"{path}: not something import reads (a .json design, a .jsonl batch, a .py file or a folder)")
    if loose.items:
        loose.count = len(loose.items)
        batches.insert(0, loose)
    return batches


def _walk_folder(folder: Path) -> tuple[list[Path], list[tuple[Path, str]]]:
    """The design and batch files under `folder` (hidden names skipped, symlinked folders not
    followed), and each member that cannot be read: a subfolder that may not be listed, a broken
    symbolic link, a FIFO or device named like a design."""
    files: list[Path] = []
    problems: list[tuple[Path, str]] = []

    def unlisted(exc: OSError) -> None:
        where = Path(exc.filename) if exc.filename else folder
        if where == folder:
            raise ImportInputError(f"{folder}: {_reason(exc)}")
        problems.append((where, _reason(exc).replace("cannot read:", "cannot read this folder:", 1)))

    for root, dirs, names in os.walk(folder, onerror=unlisted):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in names:
            p = Path(root) / name
            if name.startswith(".") or p.suffix.lower() not in DESIGN_SUFFIXES + BATCH_SUFFIXES:
                continue
            try:
                st = p.stat()
            except FileNotFoundError:
                target = os.readlink(p) if p.is_symlink() else None
                problems.append((p, f"broken symbolic link (to {target}, which does not exist)" if target
                                 else "no such file"))
                continue
            except OSError as exc:
                problems.append((p, _reason(exc)))
                continue
            if not stat.S_ISREG(st.st_mode):
                problems.append((p, "is not a regular file, not read"))
                continue
            files.append(p)
    return sorted(files), sorted(problems)


def _plan_folder(folder: Path) -> list[Batch]:
    files, problems = _walk_folder(folder)
    py_batch = _plan_py_folder(folder)
    if not files and not problems and py_batch is None:
        raise ImportInputError(f"{folder}: no .json designs, .jsonl batches or nn.Module classes in this folder")
    out = [py_batch] if py_batch is not None else []
    designs = Batch(str(folder), "files")
    # one member that cannot be read is a rejection naming it, not the end of the import
    designs.items.extend(Item(str(p), None, None, obj=ImportInputError(why)) for p, why in problems)
    for p in files:
        if p.suffix.lower() in BATCH_SUFFIXES:
            try:
                out.append(Batch(str(p), "jsonl", p, count=_scan_jsonl(p)))
            except ImportInputError as exc:
                msg = str(exc)
                designs.items.append(Item(str(p), None, None, obj=ImportInputError(
                    msg[len(str(p)) + 2:] if msg.startswith(f"{p}: ") else msg)))
        else:
            try:
                text = jsontext.read_file(p)
            except (OSError, UnicodeDecodeError, jsontext.FileRefused) as exc:
                # one unreadable member of a folder is a rejection, not the end of the import
                designs.items.append(Item(str(p), None, None, obj=ImportInputError(_reason(exc))))
                continue
            designs.items.append(Item(str(p), None, text))
    designs.count = len(designs.items)
    if designs.items:
        out.insert(0, designs)
    return out


def _design_file_problem(text: str, path: Path) -> str | None:
    from archcurator.core.graph import Design, DesignError

    try:
        obj = jsontext.loads(text)
    except json.JSONDecodeError as exc:
        return f"{path}: malformed JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
    if isinstance(obj, dict) and "format" not in obj and ("graph" in obj or "error" in obj):
        return None  # a single batch record in a file: checked like a line
    try:
        Design.from_dict(obj, source=str(path))
    except DesignError as exc:
        return str(exc)
    return None


def _parser():
    try:
        from archcurator.core import parse as P

        return P
    except ImportError:
        return None


def _plan_py(path: Path, py: PyOptions) -> Batch:
    """A .py file: the --entry class or builder; without --entry, every nn.Module subclass
    whose constructor needs no argument, with symbolic inputs."""
    P = _parser()
    if P is None:
        raise ImportInputError(f"{path}: cannot import .py files: the static parser is not available")
    if not py.entry:
        try:
            names = list(P.discover_modules(path))
        except Exception as exc:  # the parser's one-line reason
            raise ImportInputError(_one_line(exc, path)) from None
        if not names:
            raise ImportInputError(f"{path}: no nn.Module subclass whose constructor needs no argument; "
                                   "name a class or builder with --entry")
        items = [_parsed_item(P, path, name, f"{path.stem}.{name}") for name in names]
        return Batch(str(path), "py", path, items=items, count=len(items))
    try:
        design = P.parse_source(path, py.entry, py.args or {}, py.inputs)
    except Exception as exc:  # the parser's own one-line reason
        raise ImportInputError(_one_line(exc, path)) from None
    data = design.to_dict() if hasattr(design, "to_dict") else design
    return Batch(str(path), "py", path, items=[Item(str(path), None, None, obj=data)], count=1)


def _plan_py_folder(folder: Path) -> Batch | None:
    """Every no-argument nn.Module subclass of a folder's .py files, as human designs."""
    P = _parser()
    if P is None:
        return None
    try:
        found = list(P.discover_modules(folder))
    except Exception:  # noqa: BLE001 - a folder whose sources cannot be read offers nothing
        return None
    items = []
    for entry in found:
        rel, _, name = str(entry).rpartition(":")
        ident = rel[:-3].replace("/", ".").replace("\\", ".") + "." + name
        items.append(_parsed_item(P, folder / rel, name, ident))
    return Batch(f"{folder} (.py)", "py", folder, items=items, count=len(items)) if items else None


def _parsed_item(P, path: Path, name: str, ident: str) -> Item:
    try:
        design = P.parse_source(path, name, {}, None)
    except Exception as exc:  # one module the parser cannot follow is a rejection, not the end
        return Item(f"{path}:{name}", None, None, obj=ImportInputError(_one_line(exc, path)))
    data = design.to_dict() if hasattr(design, "to_dict") else design
    rec = {"id": ident, "author": "human", "model": None, "graph": data}
    return Item(f"{path}:{name}", None, None, obj=rec)


def _one_line(exc: BaseException, path: Path) -> str:
    msg = " ".join(str(exc).split()) or type(exc).__name__
    return msg if msg.startswith(str(path)) else f"{path}: {msg}"


# ---- turning an item into rows (runs in the worker processes) -----------------------

_W: dict = {}


def _init_worker(defaults: Defaults, known: frozenset | set, verifier: Callable | None,
                 budget_s: float | None = None, parent: int | None = None) -> None:
    _W["defaults"] = defaults
    _W["known"] = known
    _W["verifier"] = verifier
    _W["budget"] = budget_s if budget_s is not None else design_budget_s()
    if parent is not None:  # a pool worker
        _die_with_parent(parent)
        # imported here, so that the first design's budget is not spent importing the verifier
        from archcurator.core import verify  # noqa: F401

        from . import verifier  # noqa: F401


def _die_with_parent(parent: int) -> None:
    """A pool worker ends when the import that started it ends, however it ends (kill -9
    included): it would otherwise wait on its queue for ever, and keep the resource tracker
    (which waits for every holder of its pipe) alive with it."""
    import signal
    import sys

    if sys.platform.startswith("linux"):
        try:
            libc = ctypes_libc()
            libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG: the kernel kills us when the parent dies
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:  # it died before we could ask
        os._exit(1)

    def watch():  # where there is no PR_SET_PDEATHSIG: look
        import time

        while True:
            time.sleep(1.0)
            if os.getppid() != parent:
                os._exit(1)

    threading.Thread(target=watch, name="archcurator-parent-watch", daemon=True).start()


def ctypes_libc():
    import ctypes
    import ctypes.util

    return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)


class _Bad(Exception):
    pass


# A record's names reach the store, the app's queue and every report: plain text only. Control
# characters (terminal escapes among them) and the invisible format characters that reorder or
# hide text (bidirectional overrides, zero-width marks) are refused at the door.
_NOT_PLAIN = re.compile("[\x00-\x1f\x7f-\x9f\u00ad\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")
_NOT_PLAIN_MESSAGE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")
NAME_LIMIT = 256  # characters of an id, author, model, task set, run, parent or reference
MESSAGE_LIMIT = 65_536  # characters of an `error` (an agent's own traceback fits)


def plain_text_problem(value: str, limit: int = NAME_LIMIT, lines: bool = False) -> str | None:
    """Why `value` is not a plain one-line (or, with `lines`, multi-line) text, or None."""
    if len(value) > limit:
        return f"is {len(value):,} characters long (at most {limit:,})"
    m = (_NOT_PLAIN_MESSAGE if lines else _NOT_PLAIN).search(value)
    if m:
        return f"holds the control character U+{ord(m.group()):04X} at {m.start()} (plain text only)"
    return None


def _opt_str(obj: dict, name: str, default=None):
    v = obj.get(name, default)
    if v is not None and not isinstance(v, str):
        raise _Bad(f"field {name!r} must be a string or null")
    if v is not None:
        problem = plain_text_problem(v)
        if problem:
            raise _Bad(f"field {name!r} {problem}")
    return v


def _shown(value: Any, limit: int = 60) -> str:
    text = repr(value[:limit] if isinstance(value, (str, list)) else value)
    return text if len(text) <= limit else text[:limit] + "…"


def check_defaults(defaults: Defaults) -> None:
    """The command line's fields for records that do not carry their own (ImportInputError)."""
    for flag, v in (("--author", defaults.author), ("--model", defaults.model), ("--task-set", defaults.task_set),
                    ("--run", defaults.run)):
        if v is None:
            continue
        problem = _encoding_problem(v) or plain_text_problem(v)
        if problem:
            raise ImportInputError(f"{flag}: the value {problem}")


def _encoding_problem(text: str) -> str | None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "is not UTF-8 text"
    return None


def stored_text(text: str) -> str:
    """A name from outside (a file path from the command line) as text a UTF-8 store can hold:
    bytes that are not UTF-8 (kept by Python as lone surrogates) become U+FFFD."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _record(item: Item, defaults: Defaults) -> dict:
    """The SPEC §2 record of a line or a design file (raises _Bad)."""
    if isinstance(item.obj, ImportInputError):
        raise _Bad(str(item.obj))
    span = None
    text = item.text
    if item.obj is not None:
        obj = item.obj
    else:
        try:
            if item.line is not None:
                obj, span = loads_with_span(text)
            else:
                text = jsontext.strip_bom(text)
                obj = jsontext.loads(text)
        except json.JSONDecodeError as exc:
            where = f"column {exc.colno}" if item.line is not None else f"line {exc.lineno} column {exc.colno}"
            raise _Bad(f"malformed JSON at {where}: {exc.msg}") from None
    if not isinstance(obj, dict):
        raise _Bad(f"expected a JSON object, got {type(obj).__name__}")
    is_record = item.line is not None or ("format" not in obj and ("graph" in obj or "error" in obj))
    if is_record:
        rec = dict(obj)
        did = rec.get("id")
        if not isinstance(did, str) or not did.strip():
            raise _Bad("missing field 'id'" if did is None else "field 'id' must be a non-empty string")
        problem = plain_text_problem(did)
        if problem:
            raise _Bad(f"field 'id' {problem}")
        author = rec.get("author", defaults.author)
        if author is None:
            raise _Bad("missing field 'author' (human, agent or reference; or pass --author)")
        has_graph, has_error = rec.get("graph") is not None, rec.get("error") is not None
        if has_graph and has_error:
            raise _Bad("has both 'graph' and 'error'")
        if not has_graph and not has_error:
            raise _Bad("needs 'graph' (a design) or 'error' (why it could not be generated)")
        if has_error and not isinstance(rec["error"], str):
            raise _Bad("field 'error' must be a string")
        if has_error:
            problem = plain_text_problem(rec["error"], MESSAGE_LIMIT, lines=True)
            if problem:
                raise _Bad(f"field 'error' {problem}")
        out = {
            "id": did, "author": author,
            "model": _opt_str(rec, "model", defaults.model),
            "task_set": _opt_str(rec, "task_set", defaults.task_set),
            "run": _opt_str(rec, "run", defaults.run),
            "parent": _opt_str(rec, "parent"), "reference": _opt_str(rec, "reference"),
            "graph": rec.get("graph"), "error": rec.get("error"),
            "graph_text": text[span[0]:span[1]] if span and has_graph else None,
            "extra": {k: v for k, v in rec.items() if k not in RECORD_FIELDS} or None,
            "by_content": False,
        }
    else:
        name = obj.get("name")
        stem = Path(item.file).stem
        derived = name if isinstance(name, str) and name.strip() else stem
        # the derived id reaches the store, the queue and exports as a batch line's id does: the same door
        problem = plain_text_problem(derived)
        if problem:
            source = "the graph's name" if derived is name else "the file name"
            raise _Bad(f"its id, derived from {source}, {problem}; give the design a plain `name`")
        out = {
            "id": derived,
            "author": defaults.author or "human",
            "model": defaults.model, "task_set": defaults.task_set, "run": defaults.run,
            "parent": None, "reference": None, "graph": obj, "error": None, "extra": None,
            # the id is only derived (name or file stem): the same graph under another file name
            # is the same design, already present
            "by_content": True,
        }
    if out["author"] not in AUTHORS:
        raise _Bad(f"author must be human, agent or reference, not {_shown(out['author'])}")
    return out


_HASH_LOCK = threading.Lock()
_HASH_CON = None


def canonical_hash(graph: Any) -> str:
    """The `content_hash` a graph gets in the store: sha256 of its DuckDB-minified JSON text
    (what `designs.graph` holds), computed on a private in-memory DuckDB."""
    global _HASH_CON
    text = graph if isinstance(graph, str) else json.dumps(graph, ensure_ascii=False)
    with _HASH_LOCK:
        if _HASH_CON is None:
            import duckdb

            _HASH_CON = duckdb.connect(":memory:")
        return _HASH_CON.execute("SELECT sha256(CAST(json(?) AS VARCHAR))", [text]).fetchone()[0]


_DEC = json.JSONDecoder()
_WS = re.compile(r"[ \t\n\r]*")


def loads_with_span(text: str, key: str = "graph") -> tuple[Any, tuple[int, int] | None]:
    """`core.jsontext.loads(text)` (the door's limits), plus where the value of the top-level
    object's `key` lies in `text`, so a batch line's graph is stored from its own text instead of
    being serialised again. Anything unusual falls back to `jsontext.loads` (and its error)."""
    decoder = jsontext.guard(text)
    try:
        return _scan_top(text, key, decoder)
    except (ValueError, StopIteration, IndexError):
        return jsontext.loads(text), None


def _scan_top(s: str, key: str, decoder: json.JSONDecoder = _DEC):
    i = _WS.match(s, 0).end()
    if s[i:i + 1] != "{":
        raise ValueError
    obj: dict = {}
    span = None
    i = _WS.match(s, i + 1).end()
    if s[i:i + 1] == "}":
        i += 1
    else:
        while True:
            if s[i:i + 1] != '"':
                raise ValueError
            k, i = decoder.scan_once(s, i)
            i = _WS.match(s, i).end()
            if s[i:i + 1] != ":":
                raise ValueError
            i = _WS.match(s, i + 1).end()
            v, j = decoder.scan_once(s, i)
            if k == key:
                span = (i, j)
            obj[k] = v
            i = _WS.match(s, j).end()
            c = s[i:i + 1]
            if c == ",":
                i = _WS.match(s, i + 1).end()
                continue
            if c == "}":
                i += 1
                break
            raise ValueError
    if _WS.match(s, i).end() != len(s):
        raise ValueError
    return obj, span


def build_rows(rec: dict, source: str, verifier: Callable | None, now=None) -> tuple[dict, list[dict]]:
    """Design row and finding rows of one record (raises _Bad when the graph is unreadable)."""
    from archcurator.core.graph import Design, DesignError

    from .verifier import verify_design

    now = now or utcnow()
    row = {
        "id": rec["id"], "name": None, "author": rec["author"], "model": rec["model"],
        "task_set": rec["task_set"], "run": rec["run"], "parent": rec["parent"],
        "reference": rec["reference"], "source": source, "graph": None, "content_hash": None,
        "verdict": None, "n_nodes": None, "n_block": 0, "n_warn": 0, "params": None, "flops": None,
        "quoted_cost_usd": None, "quote_device": None, "cost_a10g_usd": None, "cost": None,
        "error": rec["error"], "extra": json.dumps(rec["extra"]) if rec.get("extra") else None,
        "verifier_version": None, "imported_at": now, "verified_at": None,
    }
    if rec["graph"] is None:
        return row, []
    graph = rec["graph"]
    try:
        design = Design.from_dict(graph, source=None)
    except DesignError as exc:
        raise _Bad(str(exc).removeprefix("<design>: ")) from None
    try:
        v = verify_design(design, verifier)
    except Exception as exc:
        raise _Bad(f"the verifier failed: {type(exc).__name__}: {' '.join(str(exc).split())}") from None
    # stored minified by DuckDB, which also computes content_hash (see designs.insert_designs)
    text = rec.get("graph_text") or json.dumps(graph, separators=(",", ":"), ensure_ascii=False)
    row.update({
        "name": design.name or None,
        "graph": text,
        "verdict": v.verdict, "n_nodes": len(design.nodes), "n_block": v.n_block, "n_warn": v.n_warn,
        "params": v.params, "flops": v.flops, "quoted_cost_usd": v.quoted_cost_usd,
        "quote_device": v.quote_device, "cost_a10g_usd": v.cost_a10g_usd, "cost": v.cost_json,
        "verifier_version": v.version, "verified_at": now,
    })
    findings = [{
        "design_id": rec["id"], "key": f["key"], "rule": f["rule"], "severity": f["severity"],
        "nodes": f["nodes"], "node_list": f["node_list"], "message": f["message"],
        "verifier_version": v.version, "stale": False, "first_seen": now, "last_seen": now,
    } for f in v.findings]
    return row, findings


def _process(items: list[Item]) -> list[tuple]:
    """("ok", file, line, row, findings, by_content) | ("skip", file, line, id) | ("bad", file, line, message)."""
    from archcurator.core.budget import Budget, OverBudget

    defaults, known, verifier = _W["defaults"], _W["known"], _W["verifier"]
    budget = _W.get("budget") or design_budget_s()
    collecting = gc.isenabled()
    now = utcnow()
    out = []
    for it in items:
        try:
            with Budget(budget):
                rec = _record(it, defaults)
                if rec["id"] in known:
                    out.append(("skip", it.file, it.line, rec["id"]))
                    continue
                source = stored_text(f"{it.file}:{it.line}" if it.line is not None else it.file)
                row, findings = build_rows(rec, source, verifier, now)
            out.append(("ok", it.file, it.line, row, findings, rec["by_content"]))
        except _Bad as exc:
            out.append(("bad", it.file, it.line, str(exc)))
        except OverBudget:
            if collecting and not gc.isenabled():
                gc.enable()  # the budget may have ended the verifier between its gc.disable() and its finally
            out.append(("bad", it.file, it.line,
                        f"over the time budget: reading and verifying it took more than {budget:g} s of CPU "
                        "(the rest of the import goes on; $ARCHCURATOR_DESIGN_BUDGET_S sets the budget)"))
    return out


def _chunks(items: Iterable[Item], size: int) -> Iterator[list[Item]]:
    buf: list[Item] = []
    for it in items:
        buf.append(it)
        if len(buf) >= size:
            yield buf
            buf = []
    if buf:
        yield buf


# ---- the whole import ---------------------------------------------------------------

def import_paths(db: DB, paths: Iterable[str | os.PathLike], *, defaults: Defaults | None = None,
                 py: PyOptions | None = None, verifier: Callable | None = None,
                 workers: int | None = None, progress: Callable[[int, int], None] | None = None,
                 on_total: Callable[[int], None] | None = None) -> ImportResult:
    """Import designs from files, folders and batches (see the module doc).

    Raises ImportInputError (nothing written) when an input cannot be read
    at all. `verifier`: a picklable `design -> Report` (default
    `core.verify.verify_graph`). `workers`: processes verifying a batch (None:
    2 for batches of 400+ designs, else in-process; 0: in-process).
    `on_total(n)` is told the number of designs first, `progress(done, n)` after each chunk.
    """
    batches = plan(paths, py)
    return import_batches(db, batches, defaults=defaults, verifier=verifier, workers=workers,
                          progress=progress, on_total=on_total)


def import_batches(db: DB, batches: list[Batch], *, defaults: Defaults | None = None,
                   verifier: Callable | None = None, workers: int | None = None,
                   progress: Callable[[int, int], None] | None = None,
                   on_total: Callable[[int], None] | None = None) -> ImportResult:
    from .designs import insert_designs, stored_ids

    defaults = defaults or Defaults()
    check_defaults(defaults)
    budget = design_budget_s()
    total = sum(b.count for b in batches)
    if on_total:
        on_total(total)
    known = frozenset(stored_ids(db))
    result = ImportResult()
    done = 0
    pool = None
    try:
        for batch in batches:
            summary = BatchSummary(batch.label)
            rows: list[dict] = []
            findings: list[dict] = []
            by_content: set[str] = set()
            seen: dict[str, str] = {}
            use_pool = (workers if workers is not None else (POOL_SIZE if batch.count >= POOL_THRESHOLD else 0))
            use_pool = min(use_pool, os.cpu_count() or 1) if use_pool and use_pool > 1 else 0
            if use_pool and pool is None:
                import multiprocessing as mp

                pool = ProcessPoolExecutor(use_pool, mp_context=mp.get_context("spawn"),
                                           initializer=_init_worker,
                                           initargs=(defaults, known, verifier, budget, os.getpid()))
            if use_pool:
                chunk_results = pool.map(_process, _chunks(batch.iter_items(), CHUNK))
            else:
                _init_worker(defaults, known, verifier, budget)
                chunk_results = map(_process, _chunks(batch.iter_items(), CHUNK))
            for res in chunk_results:
                for r in res:
                    kind, file, line = r[0], r[1], r[2]
                    if kind == "bad":
                        result.rejected.append(Rejection(file, line, r[3]))
                        summary.rejected += 1
                    elif kind == "skip":
                        result.skipped.append(r[3])
                        summary.skipped += 1
                    else:
                        row = r[3]
                        if row["id"] in seen:
                            result.skipped.append(row["id"])
                            summary.skipped += 1
                            continue
                        seen[row["id"]] = row["source"]
                        rows.append(row)
                        if r[5]:
                            by_content.add(row["id"])
                        findings.extend(r[4])
                done += len(res)
                if progress:
                    progress(done, total)
            inserted, skipped, present = insert_designs(db, rows, findings, by_content)
            result.present.update(present)
            if pool is None:
                known = known | set(inserted)
            result.imported.extend(inserted)
            result.skipped.extend(skipped)
            summary.imported += len(inserted)
            summary.skipped += len(skipped)
            new = set(inserted)
            ung = [r["id"] for r in rows if r["error"] is not None and r["id"] in new]
            result.ungenerated.extend(ung)
            summary.ungenerated = len(ung)
            result.batches.append(summary)
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)
    return result


def import_records(db: DB, records: Iterable[dict], *, label: str = "<records>",
                   defaults: Defaults | None = None, verifier: Callable | None = None,
                   workers: int | None = 0) -> ImportResult:
    """Import SPEC §2 records given as dicts (one batch, one transaction)."""
    items = [Item(label, i, json.dumps(r)) for i, r in enumerate(records, 1)]
    batch = Batch(label, "files", items=items, count=len(items))
    return import_batches(db, [batch], defaults=defaults, verifier=verifier, workers=workers)

"""Planning an import (nothing written): every named path checked and grouped in batches.

A path that cannot be read at all (missing, unreadable, not UTF-8, a named
`.json` that is not a design, an unsupported kind) raises `ImportInputError`
with one line naming the file. Each JSONL file is one batch, the loose design
files named on the command line are one batch, each folder's design files are
one batch, each `.py` file (or a folder's sources) one more. `.py` sources are
read by the static parser (`core.parse`), never imported or executed.
"""

from __future__ import annotations

import codecs
import json
import os
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import jsontext
from .types import ImportInputError, PyOptions

BATCH_SUFFIXES = (".jsonl", ".ndjson")
DESIGN_SUFFIXES = (".json",)
MAX_LINE = jsontext.MAX_FILE_BYTES  # characters of one batch line (a design file's own limit)


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
    given = [str(p) for p in paths]
    if "" in given:  # Path("") is ".": an empty argument (an unset shell variable) would import the working folder
        raise ImportInputError("'': an empty name, not a file or folder to import")
    named = [Path(p) for p in given]
    if not named:
        raise ImportInputError("import: name at least one file or folder")
    for path in named:
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
    from ..graph import Design, DesignError

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
        from .. import parse as P

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

"""One line or one design file as a SPEC §2 record, checked at the door (hostile text included).

`record(item, defaults)` raises `Refused` with the one-line reason a rejection
prints; `loads_with_span` reads a batch line keeping where its graph lies, so
the graph is stored from its own text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .. import jsontext
from .inputs import Item
from .types import Defaults, ImportInputError

AUTHORS = ("human", "agent", "reference")
RECORD_FIELDS = ("id", "author", "model", "task_set", "run", "parent", "reference", "graph", "error")


class Refused(Exception):
    """A record that is rejected; the message is the reason, one line."""


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
        raise Refused(f"field {name!r} must be a string or null")
    if v is not None:
        problem = plain_text_problem(v)
        if problem:
            raise Refused(f"field {name!r} {problem}")
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


def record(item: Item, defaults: Defaults) -> dict:
    """The SPEC §2 record of a line or a design file (raises Refused)."""
    if isinstance(item.obj, ImportInputError):
        raise Refused(str(item.obj))
    span = None
    text = item.text or ""  # an item holds its JSON text unless it holds the object itself
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
            raise Refused(f"malformed JSON at {where}: {exc.msg}") from None
    if not isinstance(obj, dict):
        raise Refused(f"expected a JSON object, got {type(obj).__name__}")
    is_record = item.line is not None or ("format" not in obj and ("graph" in obj or "error" in obj))
    if is_record:
        rec = dict(obj)
        did = rec.get("id")
        if not isinstance(did, str) or not did.strip():
            raise Refused("missing field 'id'" if did is None else "field 'id' must be a non-empty string")
        problem = plain_text_problem(did)
        if problem:
            raise Refused(f"field 'id' {problem}")
        author = rec.get("author", defaults.author)
        if author is None:
            raise Refused("missing field 'author' (human, agent or reference; or pass --author)")
        has_graph, has_error = rec.get("graph") is not None, rec.get("error") is not None
        if has_graph and has_error:
            raise Refused("has both 'graph' and 'error'")
        if not has_graph and not has_error:
            raise Refused("needs 'graph' (a design) or 'error' (why it could not be generated)")
        if has_error and not isinstance(rec["error"], str):
            raise Refused("field 'error' must be a string")
        if has_error:
            problem = plain_text_problem(rec["error"], MESSAGE_LIMIT, lines=True)
            if problem:
                raise Refused(f"field 'error' {problem}")
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
            raise Refused(f"its id, derived from {source}, {problem}; give the design a plain `name`")
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
        raise Refused(f"author must be human, agent or reference, not {_shown(out['author'])}")
    return out




_DEC = json.JSONDecoder()
# the pattern matches the empty string, so its match never gives None (typed so, at no cost on this hot path)
_WS: Callable[[str, int], re.Match[str]] = re.compile(r"[ \t\n\r]*").match  # type: ignore[assignment]


def loads_with_span(text: str, key: str = "graph") -> tuple[Any, tuple[int, int] | None]:
    """`core.jsontext.loads(text)` (the door's limits), plus where the value of the top-level
    object's `key` lies in `text`, so a batch line's graph is stored from its own text instead of
    being serialised again. Anything unusual falls back to `jsontext.loads` (and its error)."""
    decoder = jsontext.guard(text)
    try:
        return _scan_top(text, key, decoder)
    except (ValueError, StopIteration, IndexError):
        return jsontext.loads(text), None


def _scan_top(s: str, key: str, decoder: json.JSONDecoder = _DEC) -> tuple[dict, tuple[int, int] | None]:
    scan_once = decoder.scan_once  # type: ignore[attr-defined]  # set by JSONDecoder.__init__, not in typeshed
    i = _WS(s, 0).end()
    if s[i:i + 1] != "{":
        raise ValueError
    obj: dict = {}
    span = None
    i = _WS(s, i + 1).end()
    if s[i:i + 1] == "}":
        i += 1
    else:
        while True:
            if s[i:i + 1] != '"':
                raise ValueError
            k, i = scan_once(s, i)
            i = _WS(s, i).end()
            if s[i:i + 1] != ":":
                raise ValueError
            i = _WS(s, i + 1).end()
            v, j = scan_once(s, i)
            if k == key:
                span = (i, j)
            obj[k] = v
            i = _WS(s, j).end()
            c = s[i:i + 1]
            if c == ",":
                i = _WS(s, i + 1).end()
                continue
            if c == "}":
                i += 1
                break
            raise ValueError
    if _WS(s, i).end() != len(s):
        raise ValueError
    return obj, span

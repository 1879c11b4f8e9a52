"""Outside solvers' proposals, one JSON object a line.

    {"text": "With a small budget SGD without momentum loses.",
     "scope": ["budget < 4096"],                       # or [{"feature", "op", "value"}], or "a, b"
     "claim": "optimizer == sgd & momentum == 0 loses",  # or {"kind": ..., "when"|"feature"/"direction"}
     "source": "solver-x/run-3",                       # optional; default: the file name
     "id": "sx-17"}                                    # optional: the solver's own id, kept in source

Anyone may have written the file, so it is read at the door as a design is
(`core.jsontext`: a regular file of at most MAX_FILE_BYTES, each line within
the JSON limits: no nesting past 100 levels, no NaN, no lone surrogate), and
at most MAX_PROPOSALS proposals are taken from one file. A line without a
structure the knowledge base can read, or whose words cannot be a
proposition's (`props.clean_text`), is rejected with its line number; the
others enter as ``proposed`` propositions.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from .. import jsontext
from .props import PropError, Structure, clean_text

MAX_FILE_BYTES = 8 << 20   # a proposal is a few hundred bytes: this is tens of thousands of lines
MAX_PROPOSALS = 500        # each is judged on every stored question at import, and pairwise by `kb suggest`
MAX_SOURCE = 200           # characters of a source name (with the solver's id)


@dataclass(frozen=True)
class Proposal:
    text: str
    structure: Structure
    source: str
    line: int


@dataclass(frozen=True)
class ProposalRejection:
    file: str
    line: int
    message: str

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"

    def to_dict(self) -> dict:
        return {"file": self.file, "line": self.line, "problem": self.message}

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"


class ProposalFileError(ValueError):
    """The file cannot be read at all (one line: what is wrong with it)."""


def _label(obj: dict, key: str) -> str:
    v = obj.get(key)
    if isinstance(v, (dict, list)):
        raise PropError(f"'{key}' is a name or a number, not a JSON {'object' if isinstance(v, dict) else 'array'}")
    return clean_text(str(v), what=key, limit=MAX_SOURCE)


def _proposal(obj, source: str, lineno: int) -> Proposal:
    if not isinstance(obj, dict):
        raise PropError("not a JSON object")
    if "claim" not in obj:
        raise PropError("no 'claim'")
    st = Structure.from_obj(obj.get("scope") or [], obj["claim"])
    text = obj.get("text")
    if text is not None and not isinstance(text, str):
        raise PropError("'text' is a string")
    text_ = clean_text(text) if text and text.strip() else st.render()
    src = _label(obj, "source") if obj.get("source") not in (None, "") else Path(source).name
    if obj.get("id") is not None:
        src += "#" + _label(obj, "id")
    return Proposal(text_, st, src[:MAX_SOURCE], lineno)


def parse_proposals(text: str, source: str) -> tuple[list[Proposal], list[ProposalRejection]]:
    ok: list[Proposal] = []
    bad: list[ProposalRejection] = []
    for lineno, line in enumerate(jsontext.strip_bom(text).splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if len(ok) >= MAX_PROPOSALS:
            bad.append(ProposalRejection(source, lineno, f"past the {MAX_PROPOSALS} proposals one file may hold "
                                                         f"(split the file)"))
            break
        try:
            obj = jsontext.loads(line)
        except json.JSONDecodeError as e:
            bad.append(ProposalRejection(source, lineno, f"not JSON ({e.msg}, column {e.colno})"))
            continue
        try:
            ok.append(_proposal(obj, source, lineno))
        except PropError as e:
            bad.append(ProposalRejection(source, lineno, str(e)))
    return ok, bad


def read_proposals(path: str | os.PathLike) -> tuple[list[Proposal], list[ProposalRejection]]:
    """Raises ProposalFileError when the file cannot be read at all (nothing of it is taken)."""
    p = Path(path)
    try:
        text = jsontext.read_file(p, limit=MAX_FILE_BYTES)
    except jsontext.FileRefused as e:
        raise ProposalFileError(str(e).replace("to be a design", "to be a proposals file")) from None
    except UnicodeDecodeError as e:
        raise ProposalFileError(f"not UTF-8 text (byte {e.start})") from None
    except OSError as e:
        raise ProposalFileError(f"cannot read ({e.strerror or e.__class__.__name__})") from None
    return parse_proposals(text, str(p))

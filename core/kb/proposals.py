"""Outside solvers' proposals, one JSON object a line.

    {"text": "With a small budget SGD without momentum loses.",
     "scope": ["budget < 4096"],                       # or [{"feature", "op", "value"}], or "a, b"
     "claim": "optimizer == sgd & momentum == 0 loses",  # or {"kind": ..., "when"|"feature"/"direction"}
     "source": "solver-x/run-3",                       # optional; default: the file name
     "id": "sx-17"}                                    # optional: the solver's own id, kept in source

A line without a structure the knowledge base can read is rejected with its
line number; the others enter as ``proposed`` propositions.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from .props import PropError, Structure


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

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: rejected: {self.message}"


def parse_proposals(text: str, source: str) -> tuple[list[Proposal], list[ProposalRejection]]:
    ok, bad = [], []
    for lineno, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            bad.append(ProposalRejection(source, lineno, f"not JSON ({e.msg})"))
            continue
        if not isinstance(obj, dict):
            bad.append(ProposalRejection(source, lineno, "not a JSON object"))
            continue
        if "claim" not in obj:
            bad.append(ProposalRejection(source, lineno, "no 'claim'"))
            continue
        try:
            st = Structure.from_obj(obj.get("scope") or [], obj["claim"])
        except PropError as e:
            bad.append(ProposalRejection(source, lineno, str(e)))
            continue
        text_ = str(obj.get("text") or st.render()).strip()
        src = str(obj.get("source") or Path(source).name)
        if obj.get("id") is not None:
            src += f"#{obj['id']}"
        ok.append(Proposal(text_, st, src, lineno))
    return ok, bad


def read_proposals(path: str | Path) -> tuple[list[Proposal], list[ProposalRejection]]:
    """Raises OSError / UnicodeDecodeError when the file cannot be read at all."""
    p = Path(path)
    return parse_proposals(p.read_text(encoding="utf-8"), str(p))

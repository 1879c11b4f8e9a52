"""What an import is told and what it answers: options, rejections, the result."""

from __future__ import annotations

from dataclasses import dataclass, field


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

"""The knowledge base's curator operations as typed values: what the app's KB screen asks of the store.

Each operation is a frozen dataclass holding its arguments, with `apply(db, actor)` calling the one
store.kb (or store.kb_loop) function it stands for and returning that function's result, typed:
`AppStore.kb_apply(Merge(keep, other))` is an `int`, checked where it is built. The screen queues
them as they are, one at a time; `name` is what the screen's words are keyed by.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

from .connection import DB

if TYPE_CHECKING:
    from .kb import PropRow

R = TypeVar("R", covariant=True)


class KbOp(Generic[R]):
    """One curator operation on the knowledge base; its result is R."""

    name: ClassVar[str]

    def apply(self, db: DB, actor: str | None) -> R:
        raise NotImplementedError


@dataclass(frozen=True)
class Add(KbOp[int]):
    """A new proposition (its id)."""

    text: str | None
    scope: Any
    claim: Any
    name: ClassVar[str] = "add"

    def apply(self, db: DB, actor: str | None) -> int:
        from . import kb as K

        return K.add(db, self.text, self.scope, self.claim, actor=actor)


@dataclass(frozen=True)
class Edit(KbOp["PropRow"]):
    pid: int
    text: str | None = None
    scope: Any = None
    claim: Any = None
    name: ClassVar[str] = "edit"

    def apply(self, db: DB, actor: str | None) -> PropRow:
        from . import kb as K

        return K.edit(db, self.pid, text=self.text, scope=self.scope, claim=self.claim, actor=actor)


@dataclass(frozen=True)
class Merge(KbOp[int]):
    """OTHER merged into KEEP (KEEP's id)."""

    keep: int
    other: int
    name: ClassVar[str] = "merge"

    def apply(self, db: DB, actor: str | None) -> int:
        from . import kb as K

        return K.merge(db, self.keep, self.other, actor=actor)


@dataclass(frozen=True)
class Narrow(KbOp[int]):
    """CONDITIONS added to PID's scope (the id of the narrowed proposition)."""

    pid: int
    conditions: tuple[str, ...]
    name: ClassVar[str] = "narrow"

    def apply(self, db: DB, actor: str | None) -> int:
        from . import kb as K

        return K.narrow(db, self.pid, list(self.conditions), actor=actor)


@dataclass(frozen=True)
class Retire(KbOp["PropRow"]):
    pid: int
    note: str | None = None
    name: ClassVar[str] = "retire"

    def apply(self, db: DB, actor: str | None) -> PropRow:
        from . import kb as K

        return K.retire(db, self.pid, note=self.note, actor=actor)


@dataclass(frozen=True)
class Pin(KbOp["PropRow"]):
    pid: int
    name: ClassVar[str] = "pin"

    def apply(self, db: DB, actor: str | None) -> PropRow:
        from . import kb as K

        return K.pin(db, self.pid, actor=actor)


@dataclass(frozen=True)
class Unpin(KbOp["PropRow"]):
    pid: int
    name: ClassVar[str] = "unpin"

    def apply(self, db: DB, actor: str | None) -> PropRow:
        from . import kb as K

        return K.unpin(db, self.pid, actor=actor)


@dataclass(frozen=True)
class Accept(KbOp["PropRow"]):
    pid: int
    name: ClassVar[str] = "accept"

    def apply(self, db: DB, actor: str | None) -> PropRow:
        from . import kb as K

        return K.accept(db, self.pid, actor=actor)


@dataclass(frozen=True)
class MarkDistinct(KbOp[None]):
    a: int
    b: int
    note: str | None = None
    name: ClassVar[str] = "mark_distinct"

    def apply(self, db: DB, actor: str | None) -> None:
        from . import kb as K

        K.mark_distinct(db, self.a, self.b, note=self.note, actor=actor)


@dataclass(frozen=True)
class Undo(KbOp[dict]):
    """The acting curator's newest step taken back, a KB operation or a curation step: the one undo
    model of store/undo.py, so z means the same on the KB screen as everywhere (None: nothing left)."""

    name: ClassVar[str] = "undo"

    def apply(self, db: DB, actor: str | None) -> dict:
        from . import kb as K
        from .undo import undo_newest

        if actor is None:
            return K.undo(db, actor=actor)
        done = undo_newest(db, actor)
        if done is None:
            raise K.KBError(f"nothing of {actor}'s left to undo")
        return done


@dataclass(frozen=True)
class ExportPack(KbOp[tuple[str, int]]):
    """The pack as text, recorded as an export ((content, export id))."""

    fmt: str = "json"
    name: ClassVar[str] = "export_pack"

    def apply(self, db: DB, actor: str | None) -> tuple[str, int]:
        from . import kb as K

        return K.export_pack(db, self.fmt, actor=actor)


@dataclass(frozen=True)
class WritePack(KbOp[dict]):
    """The pack written to PATH ({"path", "export", "count", "format"})."""

    path: str
    fmt: str | None = None
    name: ClassVar[str] = "write_pack"

    def apply(self, db: DB, actor: str | None) -> dict:
        from . import kb as K

        return K.write_pack(db, self.path, self.fmt, actor=actor)


@dataclass(frozen=True)
class SeedKb(KbOp[dict]):
    """The demo knowledge base, seeded once (by the actor "seed", whoever asks)."""

    force: bool = False
    name: ClassVar[str] = "seed_kb"

    def apply(self, db: DB, actor: str | None) -> dict:
        from . import kb as K

        return K.seed_kb(db, force=self.force)


@dataclass(frozen=True)
class Cycle(KbOp[dict]):
    """One cycle of the loop over the next QUESTIONS of the stream, with the rules solver."""

    questions: int = 10
    name: ClassVar[str] = "cycle"

    def apply(self, db: DB, actor: str | None) -> dict:
        from . import kb_loop

        return kb_loop.cycle(db, questions=self.questions, actor=actor)

"""One undo for every curator step: the newest of the curator's own curation steps (verdicts, notes,
flags, missed defects, bulk verdicts, adjudications) and knowledge-base operations is taken back.

A curator who pins a proposition and then presses z expects the pin back, not the verdict judged
an hour before on another screen; two undo histories on one key answered by the screen in view did
exactly that.  Both histories stay where they are (the judgment rows, the KB audit log); this only
chooses which is newer."""

from __future__ import annotations

from typing import Any

from . import kb as K
from .connection import DB
from .judgments import newest_step_at, undo_last_step


def undo_newest(db: DB, curator: str) -> dict[str, Any] | None:
    """Take back the curator's newest step of either kind; None when nothing of theirs is left.

    A curation step comes back as `undo_last_step` describes it, with `room` "curation"; a KB operation
    as {"room": "kb", "summary", "undone", "op", "designs": []}.  A KB operation another curator has
    built on since raises store.kb.KBError (one line), as `kb undo` does."""
    step_at = newest_step_at(db, curator)
    kb_at = K.newest_undoable_at(db, actor=curator)
    if step_at is None and kb_at is None:
        return None
    if kb_at is not None and (step_at is None or kb_at >= step_at):
        done = K.undo(db, actor=curator)
        return {"room": "kb", "summary": f"knowledge base: {done['summary']}", "undone": done["undone"],
                "op": done["op"], "designs": [], "keys": []}
    step = undo_last_step(db, curator)
    return None if step is None else {**step, "room": "curation"}

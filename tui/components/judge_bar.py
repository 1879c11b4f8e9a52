"""JudgeBar: how far judging of this design has come, and the highlighted finding's note.

The note belongs to the highlighted finding: it shows that finding's note
(the curator's own, when judged), is emptied when the highlight leaves it,
goes with the next verdict on it, or — on a finding already judged — is
saved on Enter without judging again.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Input, ProgressBar, Static

from ..sanitise import visible


class JudgeBar(Vertical):
    def __init__(self, *, id: str | None = None, cursor_blink: bool = True) -> None:
        super().__init__(id=id)
        self.cursor_blink = cursor_blink
        self.note_key: object = ()  # which finding the note field belongs to (() : none yet)
        self._shown: tuple | None = None  # the progress shown (the next design often has the same)

    def compose(self) -> ComposeResult:
        with Horizontal(id="judge-row"):
            yield Static(id="judge-label")
            yield ProgressBar(total=1, show_eta=False, id="design-progress")
        note = Input(placeholder="note (n)", id="note")
        note.cursor_blink = self.cursor_blink
        yield note

    @property
    def note_field(self) -> Input:
        return self.query_one("#note", Input)

    def progress(self, done: int, total: int, text: str) -> None:
        if (done, total, text) == self._shown:
            return
        self._shown = (done, total, text)
        self.query_one("#design-progress", ProgressBar).update(total=max(total, 1), progress=done)
        self.query_one("#judge-label", Static).update(visible(text), layout=False)

    def attach_note(self, key, note: str | None, judged: bool, label: str) -> None:
        """The field now belongs to finding `key` (None: the design): show its note, drop unsaved text."""
        field = self.note_field
        self.note_key = key
        field.value = visible(note or "")
        if judged:
            field.placeholder = f"note on your verdict on {label} (n, enter saves it)"
        else:
            field.placeholder = f"note for your verdict on {label} (n, then r / f / u)"

    def take_note(self) -> str | None:
        text = self.note_field.value.strip() or None
        return text

"""JudgeBar: how far judging of this design has come, and the highlighted finding's note.

The note belongs to the highlighted finding: it shows that finding's note
(the curator's own, when judged), goes with the next verdict on it, or — on
a finding already judged — is saved on Enter without judging again. Text
typed and not saved is dropped when the highlight leaves its finding, and
the screen says so (`attach_note` hands the dropped text back); a re-read of
the same finding keeps it.
"""

from __future__ import annotations

from textual import events
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Input, ProgressBar, Static

from ..sanitise import visible

NOTE_MAX = 2000  # characters: a note is a remark on one finding, not a document


def clip(text: str, limit: int = 160) -> str:
    """`text` as a list shows it: long notes cut, with how long they are."""
    return text if len(text) <= limit else f"{text[:limit - 1]}… ({len(text):,} chars)"


class NoteInput(Input):
    """The note field: editing starts at the end of the note (nothing selected, so the first key adds to
    it), a pasted note keeps all its lines (joined by spaces), and a note is capped at NOTE_MAX, saying
    so when it cuts."""

    def __init__(self, **kw) -> None:
        super().__init__(select_on_focus=False, max_length=NOTE_MAX, **kw)

    # Textual calls these handlers for each class up the MRO (Input's after these) unless the default
    # is prevented: so no super() calls here.
    def _on_focus(self, event: events.Focus) -> None:
        self.cursor_position = len(self.value)

    def _on_key(self, event: events.Key) -> None:
        if event.is_printable and self.selection.is_empty and len(self.value) >= NOTE_MAX:
            event.stop()
            event.prevent_default()
            self.app.bell()
            self.notify(f"a note holds at most {NOTE_MAX:,} characters", severity="warning", timeout=3)

    def _on_paste(self, event: events.Paste) -> None:
        event.stop()
        event.prevent_default()  # Input's own paste keeps the first line only
        if not event.text:
            return
        text = " ".join(event.text.splitlines())
        start, end = sorted(self.selection) if not self.selection.is_empty else (self.cursor_position,) * 2
        kept = len(self.value) - (end - start)
        room = NOTE_MAX - kept
        if len(text) > room:
            self.notify(f"pasted note cut to {NOTE_MAX:,} characters (it had {kept + len(text):,})",
                        severity="warning", timeout=5)
            text = text[:max(room, 0)]
        if text:
            self.replace(text, start, end)


class JudgeBar(Vertical):
    def __init__(self, *, id: str | None = None, cursor_blink: bool = True) -> None:
        super().__init__(id=id)
        self.cursor_blink = cursor_blink
        self.note_key: object = ()  # which finding the note field belongs to (() : none yet)
        self.note_label = ""  # that finding, as the curator reads it
        self._attached = ""  # the note as shown when attached or last saved: more is typed and unsaved
        self._shown: tuple | None = None  # the progress shown (the next design often has the same)

    def compose(self) -> ComposeResult:
        with Horizontal(id="judge-row"):
            yield Static(id="judge-label")
            yield ProgressBar(total=1, show_eta=False, id="design-progress")
        note = NoteInput(placeholder="note (n)", id="note")
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

    @property
    def unsaved(self) -> str | None:
        """Text typed in the field that no verdict or Enter has saved yet."""
        value = self.note_field.value.strip()
        return value if value != self._attached.strip() else None

    def attach_note(self, key, note: str | None, judged: bool, label: str) -> str | None:
        """The field now belongs to finding `key` (None: the design): show its note. Returns the unsaved
        text this drops (for the screen to say so), if any."""
        field = self.note_field
        # typed before the design was on screen (n pressed as it opened): kept, for the finding now shown
        early = field.value if self.note_key == () and field.value.strip() else None
        dropped = self.unsaved if key != self.note_key and early is None else None
        self.note_key = key
        self.note_label = label
        self._attached = visible(note or "")
        field.value = early if early is not None else self._attached
        if early is not None:
            field.cursor_position = len(early)
        # the finding first: the field shows one line, and a long rule@nodes after "note for your verdict
        # on" wrapped whole onto a second, unseen line
        if judged:
            field.placeholder = f"note: {label} · on your verdict (n; enter saves it)"
        else:
            field.placeholder = f"note: {label} · goes with your verdict (n, then r / f / u)"
        return dropped

    def take_note(self) -> str | None:
        """The note going with a verdict now: from here on it is saved."""
        text = self.note_field.value.strip() or None
        self._attached = self.note_field.value
        return text

    def mark_saved(self) -> None:
        self._attached = self.note_field.value

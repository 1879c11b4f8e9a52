"""AppFooter: Textual's Footer without two stylesheet passes per key each time it is built.

Footer builds a FooterKey per binding (again whenever the focused widget's
bindings change: the note field taking focus, a screen opening). A FooterKey
starts compact, then follows the footer's `compact` (False here) through a
data binding: the class `-compact` is added when it mounts and removed just
after, and each change restyles the key through the whole stylesheet. With
about fifteen keys that was ~0.1 s of the UI thread per footer (a third of
the queue's first page at start-up). Here each key starts with the footer's
value, so neither change happens; what is drawn is the same.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.widgets import Footer
from textual.widgets._footer import FooterKey


class AppFooter(Footer):
    def compose(self) -> ComposeResult:
        for widget in super().compose():
            # the command palette's key is not bound to the footer's `compact`: it keeps its own
            if isinstance(widget, FooterKey) and not widget.has_class("-command-palette"):
                widget.set_reactive(FooterKey.compact, self.compact)
            yield widget

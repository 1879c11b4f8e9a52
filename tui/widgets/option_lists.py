"""Option lists whose up / down stop at the ends.

Textual's OptionList (and SelectionList, one of its kind) wraps: up on the first row jumps to the last.
A curator stepping up through findings or a dialog's choices, as in lazygit or Harlequin, expects the
top row to stay put, and a wrap there put the highlight, and the next verdict, on a row far from the one
they were reading. home / end (and page keys) still reach the ends at once.
"""

from __future__ import annotations

from textual.widgets import OptionList, SelectionList


def _next_enabled(options, anchor: int | None, direction: int) -> int | None:
    """The next enabled option from `anchor` in `direction`, or `anchor` itself at an end."""
    if not options:
        return None
    if anchor is None:
        order = range(len(options)) if direction > 0 else range(len(options) - 1, -1, -1)
        return next((k for k in order if not options[k].disabled), None)
    k = anchor + direction
    while 0 <= k < len(options):
        if not options[k].disabled:
            return k
        k += direction
    return anchor


class StopOptionList(OptionList):
    def action_cursor_up(self) -> None:
        self.highlighted = _next_enabled(self.options, self.highlighted, -1)

    def action_cursor_down(self) -> None:
        self.highlighted = _next_enabled(self.options, self.highlighted, 1)


class StopSelectionList(SelectionList):
    def action_cursor_up(self) -> None:
        self.highlighted = _next_enabled(self.options, self.highlighted, -1)

    def action_cursor_down(self) -> None:
        self.highlighted = _next_enabled(self.options, self.highlighted, 1)

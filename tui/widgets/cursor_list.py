"""CursorList: the one cursor base of the app's line-API lists (Toolong style: `ScrollView` + `render_line`).

The graph and the diff (`LinesView`) and the queue (`QueueList`) are lists of
lines drawn on demand with a cursor line. What they share lives here: the
cursor (clamped to the line count), moving it by a line, a page, to either
end or to a clicked line, keeping it in view, and Enter on it. A subclass
says how many lines it has (`line_count`), draws them (`render_line`), and
what Enter means (`line_selected`).
"""

from __future__ import annotations

from textual.binding import Binding
from textual.geometry import Region
from textual.reactive import reactive
from textual.scroll_view import ScrollView


class CursorList(ScrollView, can_focus=True):
    """A scrolling list of lines with a cursor line."""

    BINDINGS = [
        Binding("up,k", "cursor_up", "Up", show=False),
        Binding("down,j", "cursor_down", "Down", show=False),
        Binding("pageup", "page_up_cursor", "Page up", show=False),
        Binding("pagedown", "page_down_cursor", "Page down", show=False),
        Binding("home", "cursor_home", "Top", show=False),
        Binding("end", "cursor_end", "Bottom", show=False),
        Binding("enter", "select_line", "Select", show=False),
    ]

    cursor: reactive[int] = reactive(0, always_update=True)
    #: a second click on the cursor line selects it (the queue opens the design)
    DOUBLE_CLICK_SELECTS = False

    # ---- what a subclass provides -------------------------------------------------
    def line_count(self) -> int:  # pragma: no cover - abstract
        raise NotImplementedError

    def line_selected(self, index: int) -> None:
        """Enter (or a double click) on line `index`."""

    # ---- the cursor ---------------------------------------------------------------------
    def validate_cursor(self, value: int) -> int:
        return max(0, min(value, max(self.line_count() - 1, 0)))

    def set_cursor_quietly(self, index: int) -> None:
        """Move the cursor without its watcher (after the lines were replaced)."""
        self.set_reactive(type(self).cursor, self.validate_cursor(index))

    def move_to(self, index: int, center: bool = False) -> None:
        """Put the cursor on line `index` and scroll it into view."""
        self.cursor = index
        self.scroll_to_region(Region(0, self.cursor, 1, 1), animate=False, center=center, immediate=True,
                              force=True)

    def reveal(self, index: int, *, center: bool = True, move_cursor: bool = True) -> None:
        """Bring line `index` into view (scrolling only when it is out of view)."""
        if not self.line_count():
            return
        index = self.validate_cursor(index)
        if move_cursor and index != self.cursor:
            self.cursor = index
        top = self.scroll_offset.y
        if self.size.height and top <= index < top + self.size.height - 1:
            return  # already in view: no scroll, no extra repaint
        self.scroll_to_region(Region(0, index, 1, 1), animate=False, center=center, immediate=True, force=True)

    def _page(self) -> int:
        return max(self.size.height - 1, 1)

    def action_cursor_up(self) -> None:
        if self.line_count():
            self.move_to(self.cursor - 1)

    def action_cursor_down(self) -> None:
        if self.line_count():
            self.move_to(self.cursor + 1)

    def action_page_up_cursor(self) -> None:
        if self.line_count():
            self.move_to(self.cursor - self._page())

    def action_page_down_cursor(self) -> None:
        if self.line_count():
            self.move_to(self.cursor + self._page())

    def action_cursor_home(self) -> None:
        if self.line_count():
            self.move_to(0)

    def action_cursor_end(self) -> None:
        if self.line_count():
            self.move_to(self.line_count() - 1)

    def action_select_line(self) -> None:
        if self.line_count():
            self.line_selected(self.cursor)

    def on_click(self, event) -> None:
        index = event.y + self.scroll_offset.y
        if 0 <= index < self.line_count():
            if self.DOUBLE_CLICK_SELECTS and index == self.cursor and getattr(event, "chain", 1) >= 2:
                self.line_selected(index)
            self.cursor = index

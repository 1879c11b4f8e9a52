"""LinesView: a line-API list of prepared Rich lines with a cursor and highlighted keys.

The graph and the diff are drawn with it. Lines are prepared off the UI
thread (a worker builds the `Line` list); the widget only turns the visible
ones into strips (`render_line`), caching them, so a 2,000-line graph costs
what the screen shows, not what the graph holds.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.geometry import Size
from textual.message import Message
from textual.strip import Strip

from .cursor_list import CursorList


@dataclass(frozen=True)
class Line:
    text: Text
    key: str | None = None  # what the line is about (a node id, a diff row); highlight and cursor use it
    selectable: bool = True


class LinesView(CursorList):
    """Prepared lines, a cursor line (CursorList), and a set of highlighted keys."""

    DEFAULT_CSS = """
    LinesView { background: $surface; }
    LinesView:focus > .lines--cursor { background: $primary 45%; }
    LinesView > .lines--highlight { background: $warning 35%; text-style: bold; }
    """
    COMPONENT_CLASSES = {"lines--cursor", "lines--highlight"}
    class Activated(Message):
        """Enter pressed on a line."""

        def __init__(self, view: LinesView, index: int, key: str | None) -> None:
            super().__init__()
            self.view = view
            self.index = index
            self.key = key

        @property
        def control(self) -> LinesView:
            return self.view

    class CursorMoved(Message):
        def __init__(self, view: LinesView, index: int, key: str | None) -> None:
            super().__init__()
            self.view = view
            self.index = index
            self.key = key

        @property
        def control(self) -> LinesView:
            return self.view

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None,
                 show_cursor: bool = True) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.lines: list[Line] = []
        self.highlighted: frozenset = frozenset()
        self.show_cursor = show_cursor
        self._cache: dict[tuple, Strip] = {}
        self._width = 0

    # ---- content -----------------------------------------------------------
    def set_lines(self, lines: list[Line], *, keep_cursor: bool = False) -> None:
        self.lines = lines
        self._cache.clear()
        self._width = max((ln.text.cell_len for ln in lines), default=0)
        self.virtual_size = Size(self._width, len(lines))
        if not keep_cursor:
            self.set_cursor_quietly(0)
            self.scroll_to(0, 0, animate=False)
        else:
            self.set_cursor_quietly(self.cursor)
        self.refresh()

    def line_count(self) -> int:
        return len(self.lines)

    def set_highlight(self, keys) -> None:
        keys = frozenset(k for k in keys if k is not None)
        if keys != self.highlighted:
            self.highlighted = keys
            self._cache.clear()
            self.refresh()

    def index_of(self, key: str) -> int | None:
        for i, ln in enumerate(self.lines):
            if ln.key == key:
                return i
        return None

    def key_at(self, index: int | None = None) -> str | None:
        i = self.cursor if index is None else index
        return self.lines[i].key if 0 <= i < len(self.lines) else None

    # ---- rendering ---------------------------------------------------------
    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._cache.clear()

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        index = scroll_y + y
        width = self.size.width
        base = self.rich_style
        if index >= len(self.lines):
            return Strip.blank(width, base)
        is_cursor = self.show_cursor and index == self.cursor
        line = self.lines[index]
        hl = line.key is not None and line.key in self.highlighted
        key = (index, is_cursor, hl)
        strip = self._cache.get(key)
        if strip is None:
            text = line.text.copy()
            text.no_wrap = True
            text.end = ""
            if hl:
                text.stylize(self.get_component_rich_style("lines--highlight", partial=True))
            if is_cursor:
                text.stylize(self.get_component_rich_style("lines--cursor", partial=True))
            text.stylize_before(base)
            segments = list(text.render(self.app.console))
            strip = Strip(segments, text.cell_len)
            if len(self._cache) > 400:
                self._cache.clear()
            self._cache[key] = strip
        line_style = base
        if is_cursor:
            line_style = base + self.get_component_rich_style("lines--cursor", partial=True)
        elif hl:
            line_style = base + self.get_component_rich_style("lines--highlight", partial=True)
        return strip.crop_extend(scroll_x, scroll_x + width, line_style)

    # ---- cursor ------------------------------------------------------------
    def watch_cursor(self, old: int, new: int) -> None:
        self._cache.pop((old, True, False), None)
        self._cache.pop((old, True, True), None)
        self.refresh()
        if self.lines:
            self.post_message(self.CursorMoved(self, new, self.key_at(new)))

    def line_selected(self, index: int) -> None:
        self.post_message(self.Activated(self, index, self.key_at(index)))

"""LinesView: a line-API list of prepared Rich lines with a cursor and highlighted keys.

The graph and the diff are drawn with it. Lines are prepared off the UI
thread (a worker builds the `Line` list); the widget only turns the visible
ones into strips (`render_line`), caching them, so a 2,000-line graph costs
what the screen shows, not what the graph holds.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from rich.console import Console
from rich.segment import Segment
from rich.text import Text
from textual.geometry import Region, Size
from textual.message import Message
from textual.strip import Strip
from textual.widget import Widget

from .cursor_list import CursorList


@dataclass(frozen=True)
class Line:
    text: Text
    key: str | None = None  # what the line is about (a node id, a diff row); highlight and cursor use it
    selectable: bool = True
    # the text as segments, made off the UI thread (`prerender`): drawing a line then costs a Strip
    segments: tuple[Segment, ...] | None = None


def prerender(lines: list[Line]) -> list[Line]:
    """The lines with their segments made, in the calling (worker) thread; plain styles only (no theme
    lookups), so a console of its own gives what the app's would."""
    console = Console(width=10_000, color_system=None, force_terminal=False, legacy_windows=False)
    return [replace(ln, segments=tuple(ln.text.render(console, end=""))) for ln in lines]


def lines_width(lines: list[Line]) -> int:
    return max((ln.text.cell_len for ln in lines), default=0)


def set_virtual_size(widget: Widget, size: Size) -> None:
    """A new scrollable size for a widget whose own size the stylesheet fixes: its scrollbars follow,
    without a layout of the whole screen (which Textual's `virtual_size` reactive asks for). The
    layout comes only when a scrollbar appears or goes (that changes the widget's content area)."""
    if size == widget.virtual_size:
        return
    widget.set_reactive(Widget.virtual_size, size)
    widget._scroll_update(size)
    widget.refresh()


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
        self._base = None  # the widget's style, read once per drawing (see render_lines)

    # ---- content -----------------------------------------------------------
    def set_lines(self, lines: list[Line], *, keep_cursor: bool = False, width: int | None = None) -> None:
        """New lines (`width`: their widest, when already known)."""
        self.lines = lines
        self._cache.clear()
        self._width = lines_width(lines) if width is None else width
        set_virtual_size(self, Size(self._width, len(lines)))
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

    def render_lines(self, crop: Region) -> list[Strip]:
        self._base = self.rich_style  # the same for every line of this drawing (it walks the ancestors)
        try:
            return super().render_lines(crop)
        finally:
            self._base = None

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        index = scroll_y + y
        width = self.size.width
        base = self._base if self._base is not None else self.rich_style
        if index >= len(self.lines):
            return Strip.blank(width, base)
        is_cursor = self.show_cursor and index == self.cursor
        line = self.lines[index]
        hl = line.key is not None and line.key in self.highlighted
        key = (index, is_cursor, hl)
        strip = self._cache.get(key)
        if strip is None:
            if line.segments is not None and not (hl or is_cursor):
                strip = Strip(Segment.apply_style(line.segments, base), line.text.cell_len)
            else:
                text = line.text.copy()
                text.no_wrap = True
                text.end = ""
                if hl:
                    text.stylize(self.get_component_rich_style("lines--highlight", partial=True))
                if is_cursor:
                    text.stylize(self.get_component_rich_style("lines--cursor", partial=True))
                text.stylize_before(base)
                strip = Strip(list(text.render(self.app.console)), text.cell_len)
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

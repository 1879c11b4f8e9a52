"""TextPane: a scrolling block of wrapped text drawn a line at a time (the line API).

The design screen's tabs (the highlighted finding, cost, source, runs) change
on every step. As a `Static` inside a `VerticalScroll` each new text changed
the Static's height, and Textual answers a height change with a layout of the
whole screen, then a second one when the scroll area learns the new height.
Here the pane's size is the stylesheet's; a new text is wrapped once (with
Textual's own `Visual.to_strips`, as a Static would wrap it) and only the
scrollbar learns the new length: no layout unless a scrollbar appears or goes.
"""

from __future__ import annotations

from rich.text import Text
from textual.geometry import Region, Size
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.visual import Visual, visualize

from .lines import set_virtual_size


def same_text(a, b) -> bool:
    """Whether two rich Texts draw the same (Text's own == leaves out its base style)."""
    return isinstance(a, Text) and isinstance(b, Text) and a == b and a.style == b.style


class TextPane(ScrollView):
    DEFAULT_CSS = """
    TextPane {
        height: 1fr;
        overflow-x: hidden;
        overflow-y: auto;
    }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._text = Text()
        self._strips: list[Strip] = []
        self._wrapped_at: int | None = None  # the width the strips were wrapped to (None: not yet)

    @property
    def text(self) -> Text:
        return self._text

    def render(self) -> Text:
        """The whole text (what the lines show); drawing itself goes through `render_line`."""
        return self._text

    def update(self, text: Text) -> None:
        """Show `text` (scrolled as it was, as far as the new text goes: as a Static in a scroll did).
        The same text again (the next design without findings) is neither wrapped nor drawn again."""
        if same_text(text, self._text) and self._wrapped_at is not None:
            return
        self._text = text
        self._wrapped_at = None
        self._wrap()
        self.refresh()

    # ---- wrapping ----------------------------------------------------------------------------
    def _full_width(self) -> int:
        """The width with no vertical scrollbar."""
        return self.scrollable_content_region.width + self.scrollbar_size_vertical

    def _wrap(self) -> None:
        full = self._full_width()
        if full <= 0:
            return  # not laid out yet (a tab not shown): wrapped when it gets a size
        height = self.scrollable_content_region.height
        strips = self._strips_at(full)
        width = full
        if len(strips) > height and self.styles.overflow_y == "auto":
            width = max(full - self.styles.scrollbar_size_vertical, 1)  # the scrollbar takes its column
            strips = self._strips_at(width)
        self._strips = strips
        self._wrapped_at = full
        set_virtual_size(self, Size(width, len(strips)))
        if self.scroll_y > self.max_scroll_y:
            self.scroll_to(y=self.max_scroll_y, animate=False)

    def _strips_at(self, width: int) -> list[Strip]:
        visual = visualize(self, self._text, markup=False)
        return Visual.to_strips(self, visual, width, None, self.visual_style)

    def on_resize(self) -> None:
        if self._full_width() != self._wrapped_at:
            self._wrap()

    # ---- drawing -------------------------------------------------------------------------------
    def render_lines(self, crop: Region) -> list[Strip]:
        if self._wrapped_at != self._full_width():
            self._wrap()  # shown for the first time since the text came
        return super().render_lines(crop)

    def render_line(self, y: int) -> Strip:
        index = self.scroll_offset.y + y
        width = self.scrollable_content_region.width
        style = self.visual_style.rich_style
        if 0 <= index < len(self._strips):
            return self._strips[index].crop_extend(0, width, style)
        return Strip.blank(width, style)

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._wrapped_at = None  # new colours: wrap (and style) again when next drawn

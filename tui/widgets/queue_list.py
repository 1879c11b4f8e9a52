"""The queue: a virtualised list of designs (Toolong-style `ScrollView` + `render_line`).

Never one widget per row. `QueueModel` holds the ordered ids of the whole
filtered queue (one query) and a cache of the rows fetched so far; the list
draws only the visible lines and asks its screen for rows it lacks
(`QueueList.NeedRows`), which a worker fetches by id. A row not yet loaded
is drawn as its id and a dim `…`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rich.text import Text
from textual.geometry import Size
from textual.message import Message
from textual.strip import Strip

from ..sanitise import visible
from .cursor_list import CursorList

SORTS: list[tuple[str, str]] = [
    ("id", "id"),
    ("-verdict", "verdict (block first)"),
    ("-n_findings", "most findings"),
    ("judged", "judging state (unjudged first)"),
    ("-cost_a10g_usd", "quoted cost (dearest first)"),
    ("author", "author"),
    ("-imported_at", "newest first"),
]
FILTER_KEYS = ("author", "model", "task_set", "run", "verdict", "rule", "judged", "flagged", "text")


@dataclass
class QueueModel:
    """The filtered, sorted queue: every id in order, and the rows fetched so far."""

    filters: dict = field(default_factory=dict)
    sort: str = "id"
    ids: list = field(default_factory=list)
    rows: dict = field(default_factory=dict)  # id -> row
    generation: int = 0
    loaded: bool = False
    id_width: int = 20
    _pos: dict | None = None

    def set_ids(self, ids: list[str], width: int | None = None) -> None:
        self.ids = ids
        self.id_width = width if width is not None else id_width(ids)
        self._pos = None
        self.loaded = True

    def __len__(self) -> int:
        return len(self.ids)

    def index_of(self, design_id: str) -> int | None:
        if self._pos is None:
            self._pos = {d: i for i, d in enumerate(self.ids)}
        return self._pos.get(design_id)


    def missing(self, start: int, end: int) -> list[str]:
        start = max(0, start)
        return [d for d in self.ids[start:end] if d not in self.rows]

    def add_rows(self, rows: dict) -> None:
        if len(self.rows) > 20000:  # keep memory bounded on huge queues
            self.rows.clear()
        self.rows.update(rows)

    def describe_filters(self) -> str:
        parts = []
        for k in FILTER_KEYS:
            v = self.filters.get(k)
            if v not in (None, "", []):
                if k == "flagged":
                    parts.append("flagged for later")
                else:
                    parts.append(f"{k.replace('_', ' ')}: {v!r}" if k == "text" else f"{k.replace('_', ' ')}: {v}")
        return " · ".join(parts) if parts else "no filter"

    def sort_label(self) -> str:
        for key, label in SORTS:
            if key == self.sort:
                return label
        return self.sort


# column: (title, width, key, priority) in display order; at a narrow width the lowest priorities
# (highest numbers) drop out. The id column is as wide as the longest id of the queue: ids are never cut.
COLUMNS = [
    ("id", 0, "id", 0),
    ("verdict", 8, "verdict", 1),
    ("B", 3, "n_block", 4),
    ("W", 3, "n_warn", 5),
    ("judged", 8, "judged", 2),
    ("blocking rule", 28, "block_rule", 3),
    ("author", 9, "author", 6),
    ("model", 12, "model", 7),
    ("task set", 14, "task_set", 8),
    ("run", 12, "run", 9),
    ("cost", 9, "cost_a10g_usd", 10),
]
VERDICT_STYLE = {"block": "bold red", "warn": "yellow", "pass": "green", None: "dim"}
ID_WIDTH_MAX = 64


def id_width(ids) -> int:
    return min(max((len(i) for i in ids), default=2), ID_WIDTH_MAX)


def columns_for(width: int, id_w: int) -> list[tuple[str, int, str]]:
    """The columns that fit `width` cells (the id's always), in display order."""
    chosen = set()
    used = 1
    for _title, w, key, _prio in sorted(COLUMNS, key=lambda c: c[3]):
        w = max(id_w, 2) if key == "id" else w
        if key != "id" and used + w + 1 > width:
            continue
        chosen.add(key)
        used += w + 1
    return [(t, max(id_w, 2) if k == "id" else w, k) for t, w, k, _p in COLUMNS if k in chosen]


def _cell(text: str, width: int) -> str:
    text = visible(text)
    if len(text) > width:
        return text[: max(width - 1, 0)] + "…"
    return text.ljust(width)


def _judged_text(row: dict) -> tuple[str, str]:
    state = row.get("judged")
    if state is None:
        return "—", "dim"
    n, k = row.get("n_findings") or 0, row.get("n_judged") or 0
    flag = " ⚑" if row.get("n_flagged") else ""
    if n == 0:
        return (("clean ✓", "green") if state == "judged" else ("to mark" + flag, "dim"))
    style = {"judged": "green", "partly": "yellow", "unjudged": ""}.get(state, "")
    return (f"{k}/{n}" + (" ✓" if state == "judged" else "") + flag), style


def header_text(width: int, id_w: int = 20) -> Text:
    t = Text(" ")
    for title, w, _key in columns_for(width, id_w):
        t.append(_cell(title, w) + " ", style="bold")
    return t


def row_text(row: dict | None, design_id: str, width: int, id_w: int | None = None) -> Text:
    t = Text(" ")
    for _title, w, key in columns_for(width, id_w if id_w is not None else len(design_id)):
        if key == "id":
            t.append(visible(design_id).ljust(w) + " ", style="bold")
            continue
        if row is None:
            t.append(_cell("…" if key == "verdict" else "", w) + " ", style="dim")
            continue
        if key == "verdict":
            v = row.get("verdict")
            t.append(_cell(v or "ungen.", w) + " ", style=VERDICT_STYLE.get(v, ""))
        elif key in ("n_block", "n_warn"):
            n = row.get(key) or 0
            style = ("red" if key == "n_block" else "yellow") if n else "dim"
            t.append(_cell(str(n) if n else "·", w) + " ", style=style)
        elif key == "judged":
            text, style = _judged_text(row)
            t.append(_cell(text, w) + " ", style=style)
        elif key == "block_rule":
            rule = row.get("block_rule")
            more = (row.get("n_block_rules") or 0) - 1
            text = "" if rule is None else (f"{rule} +{more}" if more > 0 else rule)
            t.append(_cell(text, w) + " ", style="red" if rule else "dim")
        elif key == "cost_a10g_usd":
            v = row.get(key)
            t.append(_cell("" if v is None else f"${v:,.2f}", w).rjust(w) + " ", style="")
        else:
            v = row.get(key)
            t.append(_cell("—" if v is None else str(v), w) + " ", style="" if v is not None else "dim")
    return t


class QueueList(CursorList):
    """The designs of a QueueModel, one line each, drawn on demand (the cursor is CursorList's)."""

    DEFAULT_CSS = """
    QueueList { background: $surface; }
    QueueList > .queue--cursor { background: $accent 35%; }
    QueueList:focus > .queue--cursor { background: $accent 60%; }
    """
    COMPONENT_CLASSES = {"queue--cursor"}
    DOUBLE_CLICK_SELECTS = True
    MARGIN = 60  # rows fetched beyond the visible ones, each way

    class NeedRows(Message):
        """Rows start..end (exclusive) are wanted and some are not loaded."""

        def __init__(self, start: int, end: int) -> None:
            super().__init__()
            self.start = start
            self.end = end

    class Selected(Message):
        def __init__(self, index: int, design_id: str) -> None:
            super().__init__()
            self.index = index
            self.design_id = design_id

    def __init__(self, model: QueueModel, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.model = model
        self._cache: dict[tuple, Strip] = {}
        self._asked: tuple | None = None

    # ---- data ----------------------------------------------------------------
    def reset(self, keep_cursor: bool = False) -> None:
        """The model's ids changed: resize and redraw."""
        self._cache.clear()
        self._asked = None
        self.virtual_size = Size(self.size.width or 80, len(self.model))
        if not keep_cursor:
            self.set_cursor_quietly(0)
            self.scroll_to(0, 0, animate=False, immediate=True)
        else:
            self.set_cursor_quietly(self.cursor)
        self.refresh()

    def line_count(self) -> int:
        return len(self.model)

    def rows_arrived(self) -> None:
        self._cache.clear()
        self._asked = None
        self.refresh()

    def row_changed(self, design_id: str) -> None:
        self._cache = {k: v for k, v in self._cache.items() if k[0] != design_id}
        self.refresh()

    @property
    def current_id(self) -> str | None:
        ids = self.model.ids
        return ids[self.cursor] if 0 <= self.cursor < len(ids) else None

    # ---- drawing ---------------------------------------------------------------
    def on_resize(self) -> None:
        self._cache.clear()
        self.virtual_size = Size(self.size.width, len(self.model))

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._cache.clear()

    def render_line(self, y: int) -> Strip:
        _, scroll_y = self.scroll_offset
        index = scroll_y + y
        width = self.size.width
        base = self.rich_style
        ids = self.model.ids
        if index >= len(ids):
            if index == 0 and self.model.loaded:
                msg = Text("  no designs match (esc clears the filters)", style="dim italic")
                return Strip(list(msg.render(self.app.console)), msg.cell_len).extend_cell_length(width, base)
            return Strip.blank(width, base)
        did = ids[index]
        row = self.model.rows.get(did)
        if row is None:
            self._want(scroll_y)
        is_cursor = index == self.cursor
        key = (did, index, is_cursor, row is not None, width)
        strip = self._cache.get(key)
        if strip is None:
            text = row_text(row, did, width, self.model.id_width)
            text.stylize_before(base)
            style = base
            if is_cursor:
                cur = self.get_component_rich_style("queue--cursor", partial=True)
                text.stylize(cur)
                style = base + cur
            strip = Strip(list(text.render(self.app.console)), text.cell_len).extend_cell_length(width, style)
            if len(self._cache) > 400:
                self._cache.clear()
            self._cache[key] = strip
        return strip.crop(0, width)

    def _want(self, scroll_y: int) -> None:
        start = max(0, scroll_y - self.MARGIN)
        end = min(len(self.model), scroll_y + self.size.height + self.MARGIN)
        if self._asked == (start, end):
            return
        self._asked = (start, end)
        self.call_later(self.post_message, self.NeedRows(start, end))


    # ---- cursor ------------------------------------------------------------------
    def watch_cursor(self, old: int, new: int) -> None:
        self._cache = {k: v for k, v in self._cache.items() if k[1] not in (old, new)}
        self.refresh()

    def line_selected(self, index: int) -> None:
        did = self.current_id
        if did is not None:
            self.post_message(self.Selected(index, did))

    def action_select(self) -> None:
        self.action_select_line()

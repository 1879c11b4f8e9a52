"""The queue: every design, filtered and sorted, drawn a screenful at a time."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Input, ProgressBar, Static

from ..sanitise import plain, visible
from ..widgets.footer import AppFooter
from ..widgets.header import AppHeader
from ..widgets.messages import NextFound, QueueLoaded, RowsLoaded
from ..widgets.queue_list import SORTS, QueueList, QueueModel, header_text

SEARCH_DELAY = 0.25  # seconds of typing pause before the queue is filtered again

_NONE = object()  # a facet's missing value
CYCLES = {
    "verdict": [None, "block", "warn", "pass", "ungenerated"],
    "judged": [None, "unjudged", "partly", "judged"],
}


class QueueScreen(Screen):
    """The designs in the store. In pick mode (a diff's other side) Enter returns the id."""

    BINDINGS = [
        Binding("enter", "open", "Open", id="open_design", show=False),
        Binding("slash", "search", "Search", id="filter_text"),
        Binding("a", "pick('author')", "Author", id="filter_author"),
        Binding("M", "pick('model')", "Model", id="filter_model", show=False),
        Binding("T", "pick('task_set')", "Task set", id="filter_task_set", show=False),
        Binding("v", "cycle('verdict')", "Verdict", id="filter_verdict"),
        Binding("J", "cycle('judged')", "Judged", id="filter_judged"),
        Binding("F", "toggle_flagged", "Flagged", id="filter_flagged", show=False),
        Binding("L", "pick_rule", "Rule", id="filter_rule"),
        Binding("s", "cycle_sort", "Sort", id="sort"),
        Binding("S", "reverse_sort", "Reverse sort", id="sort_reverse", show=False),
        Binding("colon,g", "jump", "Jump", id="jump"),
        Binding("N", "next_unjudged", "Next to judge", id="next_unjudged"),
        Binding("escape", "clear_filters", "Clear filters", id="clear_filters"),
    ]
    ACTION_HELP = {
        "open_design": "Open the design under the cursor",
        "filter_text": "Filter by a piece of the id or name, as you type",
        "filter_author": "Pick the author filter (human, agent, reference) from a list",
        "filter_model": "Pick the model filter from a list (type to narrow)",
        "filter_task_set": "Pick the task set filter from a list (type to narrow)",
        "filter_flagged": "Only designs with findings you flagged for later",
        "filter_verdict": "Cycle the verdict filter: block, warn, pass, ungenerated",
        "filter_judged": "Cycle the judged filter: unjudged, partly, judged (your own judgments)",
        "filter_rule": "Show only designs on which a chosen rule fires",
        "sort": "Cycle the sort order",
        "sort_reverse": "Reverse the sort order",
        "jump": "Jump to a row number or a design id",
        "next_unjudged": "Open the next design you have not finished judging",
        "clear_filters": "Clear every filter",
    }

    def __init__(self, model: QueueModel, *, main: bool = False, pick: bool = False,
                 title: str | None = None) -> None:
        super().__init__()
        self.model = model
        self.main = main
        self.pick = pick
        self.pick_title = title
        self._next_request = 0
        self._search_timer = None
        self._open_when_loaded = False  # enter pressed while the list was being read: open when it is

    def compose(self) -> ComposeResult:
        yield AppHeader()
        with Horizontal(id="queue-top"):
            yield Static(id="queue-status")
            yield ProgressBar(total=1, show_eta=False, id="queue-progress")
        yield Static(id="queue-filters")
        search = Input(placeholder="search ids and names as you type — enter or esc leaves", id="search")
        search.cursor_blink = self.app.cursor_blink
        yield search
        yield Static(id="queue-header")
        yield QueueList(self.model, id="queue")
        yield AppFooter()

    def on_mount(self) -> None:
        if self not in self.app.screen_stack:
            return  # closed before it was mounted (a key pressed at once): nothing to set up
        if self.pick:
            self.sub_title = visible(self.pick_title or "pick a design (enter) — esc cancels")
        self.query_one("#search", Input).display = False
        self.query_one(QueueList).focus()
        if self.model.loaded:
            self.query_one(QueueList).reset()
            self._show_status()
        else:
            self.reload()
        if self.app.progress is not None:
            self.progress_changed(self.app.progress)

    # ---- data ----------------------------------------------------------------
    def reload(self, select: str | None = None) -> None:
        self.model.generation += 1
        self.model.rows.clear()
        self.model.loaded = False
        self._show_status(loading=True)
        self.app.load_queue(self, self.model, self.model.generation, select)
        if self.main and self.app._started:
            self.app.load_progress(dict(self.model.filters))

    def refresh_data(self) -> None:
        ql = self.query_one(QueueList)
        self.reload(select=ql.current_id)

    def on_queue_loaded(self, message: QueueLoaded) -> None:
        if message.model is not self.model or message.generation != self.model.generation:
            return
        self.model.set_ids(message.ids, message.id_width)
        self.model.add_rows(message.rows)
        ql = self.query_one(QueueList)
        ql.reset()
        if message.select:
            index = self.model.index_of(message.select)
            if index is not None:
                ql.move_to(index, center=True)
        self._show_status()
        if self._open_when_loaded:
            self._open_when_loaded = False
            if len(self.model) and self.app.screen is self:
                ql.action_select()
        for screen in self.app.screen_stack:
            handler = getattr(screen, "queue_changed", None)
            if handler is not None:
                handler(self.model)
        if self.main:
            self.call_after_refresh(self.app.first_page_shown)

    def on_queue_list_need_rows(self, message: QueueList.NeedRows) -> None:
        message.stop()
        ids = self.model.missing(message.start, message.end)
        if ids:
            self.app.load_rows(self, self.model, self.model.generation, ids)

    def on_rows_loaded(self, message: RowsLoaded) -> None:
        if message.model is not self.model or message.generation != self.model.generation:
            return
        self.model.add_rows(message.rows)
        self.query_one(QueueList).rows_arrived()

    def progress_changed(self, progress: dict) -> None:
        if not self.main or not self.is_mounted:
            return
        bar = self.query_one("#queue-progress", ProgressBar)
        bar.update(total=max(progress["findings"], 1), progress=progress["findings_judged"])
        self._show_status()

    def write_done(self, op, result, designs) -> None:
        pass  # rows refresh through the app (refresh_rows)

    def _show_status(self, loading: bool = False) -> None:
        n = len(self.model)
        head = "loading…" if loading else f"{n:,} design{'s' if n != 1 else ''}"
        text = f"{head} · sorted by {self.model.sort_label()}"
        p = self.app.progress if self.main else None
        if p is not None:
            text += (f" · judged by {self.app.curator}: {p['findings_judged']:,}/{p['findings']:,} findings,"
                     f" {p['designs_judged']:,}/{p['designs']:,} designs")
        self.query_one("#queue-status", Static).update(plain(text))
        self.query_one("#queue-filters", Static).update(plain("filter: " + self.model.describe_filters()))
        self._show_header()

    def _show_header(self) -> None:
        width = self.query_one(QueueList).size.width or self.size.width
        self.query_one("#queue-header", Static).update(header_text(max(width, 40), self.model.id_width))

    def on_resize(self) -> None:
        if self.is_mounted:
            self._show_header()

    def on_screen_resume(self) -> None:
        """Back from a design: the cursor stands on the design last worked on (], N and the auto-advance
        moved on from the one opened), so enter reopens that one."""
        shown = getattr(self.app, "last_design_shown", None)
        if shown is None or self.pick:
            return
        # once: back from a dialog (the jump prompt, a picker) the cursor is where that dialog put it
        self.app.last_design_shown = None
        model, design_id = shown
        if model is not self.model:
            return
        index = self.model.index_of(design_id)
        if index is not None:
            self.query_one(QueueList).move_to(index, center=True)

    # ---- opening -------------------------------------------------------------------
    def on_queue_list_selected(self, message: QueueList.Selected) -> None:
        message.stop()
        if not self.model.loaded:
            # the list on screen is the one being replaced (a search, a filter): open the row the new
            # list shows under the cursor once it is read, never a row of the old one
            self._open_when_loaded = True
            return
        if self.pick:
            self.dismiss(message.design_id)
            return
        self.open_index(message.index)

    def open_index(self, index: int) -> None:
        from .design import DesignScreen

        self.app.push_screen(DesignScreen(self.model, index))

    def action_open(self) -> None:
        self.query_one(QueueList).action_select()

    def action_next_unjudged(self) -> None:
        ql = self.query_one(QueueList)
        self._next_request += 1
        start = ql.cursor
        self.app.find_next(self, self.model.ids[start:], start, self._next_request)

    def on_next_found(self, message: NextFound) -> None:
        if message.request != self._next_request:
            return
        if message.index is None:
            self.notify("nothing left to judge from here on")
            return
        ql = self.query_one(QueueList)
        ql.move_to(message.index, center=True)
        if not self.pick:
            self.open_index(message.index)

    # ---- filters and sort ------------------------------------------------------------
    def _set_filter(self, key: str, value) -> None:
        if value in (None, ""):
            self.model.filters.pop(key, None)
        else:
            self.model.filters[key] = value
        current = self.query_one(QueueList).current_id
        self.reload(select=current)

    def apply_filters(self, filters: dict) -> None:
        """Show the queue filtered by exactly `filters` (a Reports row)."""
        if self._search_timer is not None:
            self._search_timer.stop()
            self._search_timer = None
        self.model.filters.clear()
        self.model.filters.update({k: v for k, v in filters.items() if v not in (None, "")})
        search = self.query_one("#search", Input)
        search.display = bool(self.model.filters.get("text"))
        self.reload(select=self.query_one(QueueList).current_id)

    def action_pick(self, key: str) -> None:
        """Pick one author / model / task set from the store's values (with their counts), type-ahead."""
        from .modals import ChoiceScreen

        facet = self.app.facets.get(key)
        if facet is None:
            self.notify("still reading the store…")
            return
        name = key.replace("_", " ")
        choices = [(None, Text(f"any {name}", style="italic"))]
        for v, n in facet:
            label = Text(visible(v) if v is not None else f"(no {name})", style="" if v is not None else "dim")
            label.append(f"  ({n:,} designs)", style="dim")
            choices.append((v if v is not None else _NONE, label))

        def done(value) -> None:
            if value is ChoiceScreen.CANCELLED:
                return
            if value is _NONE:
                self.notify(f"designs without a {name} cannot be filtered for yet", severity="warning")
                return
            self._set_filter(key, value)

        self.app.push_screen(ChoiceScreen(f"Show the designs of one {name}", choices, filter=True), done)

    def action_toggle_flagged(self) -> None:
        self._set_filter("flagged", None if self.model.filters.get("flagged") else True)

    def action_cycle(self, key: str) -> None:
        values = CYCLES[key]
        current = self.model.filters.get(key)
        try:
            nxt = values[(values.index(current) + 1) % len(values)]
        except ValueError:
            nxt = None
        self._set_filter(key, nxt)  # the filter line shows it

    def action_pick_rule(self) -> None:
        from .modals import ChoiceScreen

        rules = self.app.facets.get("rule") or []
        choices = [(None, Text("any rule", style="italic"))]
        choices += [(r, Text.assemble(visible(r), (f"  ({n:,} designs)", "dim"))) for r, n in rules]

        def done(value) -> None:
            if value is not ChoiceScreen.CANCELLED:
                self._set_filter("rule", value)

        self.app.push_screen(ChoiceScreen("Show designs on which this rule fires", choices, filter=True), done)

    def action_cycle_sort(self) -> None:
        keys = [k for k, _ in SORTS]
        base = self.model.sort
        try:
            i = keys.index(base)
        except ValueError:
            i = -1
        self.model.sort = keys[(i + 1) % len(keys)]
        self.reload(select=self.query_one(QueueList).current_id)

    def action_reverse_sort(self) -> None:
        s = self.model.sort
        self.model.sort = s[1:] if s.startswith("-") else "-" + s
        self.reload(select=self.query_one(QueueList).current_id)

    def action_search(self) -> None:
        search = self.query_one("#search", Input)
        search.display = True
        search.value = self.model.filters.get("text", "")
        search.focus()

    def on_input_changed(self, message: Input.Changed) -> None:
        if message.input.id != "search" or not message.input.has_focus:
            return
        message.stop()
        if self._search_timer is not None:
            self._search_timer.stop()
        value = message.value.strip()
        self._search_timer = self.set_timer(SEARCH_DELAY, lambda: self._search_now(value))

    def _search_now(self, value: str) -> None:
        self._search_timer = None
        if (self.model.filters.get("text") or "") != value:
            self._set_filter("text", value)

    def on_input_submitted(self, message: Input.Submitted) -> None:
        if message.input.id != "search":
            return
        message.stop()
        if self._search_timer is not None:
            self._search_timer.stop()
            self._search_timer = None
        self._leave_search()
        self._search_now(message.value.strip())

    def _leave_search(self) -> None:
        search = self.query_one("#search", Input)
        if self._search_timer is not None:  # what was typed applies
            self._search_timer.stop()
            self._search_timer = None
            self._search_now(search.value.strip())
        search.display = bool(self.model.filters.get("text"))
        self.query_one(QueueList).focus()

    def action_clear_filters(self) -> None:
        if self.query_one("#search", Input).has_focus:
            self._leave_search()
            return
        if self.pick and not self.model.filters:
            self.dismiss(None)
            return
        if self.model.filters:
            self.model.filters.clear()
            self.query_one("#search", Input).display = False
            self.reload(select=self.query_one(QueueList).current_id)

    def action_jump(self) -> None:
        from .modals import PromptScreen

        def done(value: str | None) -> None:
            if value:
                self.jump_to(value)

        self.app.push_screen(PromptScreen("Jump to a row number or a design id", "e.g. 120 or t3-0042"), done)

    def jump_to(self, text: str) -> None:
        text = text.strip()
        ql = self.query_one(QueueList)
        index = self.model.index_of(text)
        if index is None and text.isdigit():
            index = min(max(int(text) - 1, 0), max(len(self.model) - 1, 0))
        if index is None:
            low = text.lower()
            index = next((i for i, d in enumerate(self.model.ids) if d.lower().startswith(low)), None)
        if index is None:
            self.notify(f"no design {visible(text)!r} in this queue", severity="warning")
            return
        ql.move_to(index, center=True)

"""Runs: those launched from the app (live progress, a loss plot, logs, cancel) and those stored before.

The app launches a run through the run bridge (`tui.run_bridge`) after a
confirmation that names the device and what it will cost; the child process
does the work and the app, which launched it, stores the result. This
screen lists the live handles and the runs the store holds (so runs survive
a restart), newest first; a timer reads each live handle's new events
(`events_since`, non-blocking) four times a second. Enter opens the run's
design, where its outcome stands next to the finding it confirms or refutes.
"""

from __future__ import annotations

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import DataTable, ProgressBar, Static

from ..components.run_outcome import failed_node
from ..components.table import Table
from ..sanitise import plain, visible, visible_lines
from ..widgets.footer import AppFooter
from ..widgets.header import AppHeader
from ..widgets.messages import RunsLoaded
from .base import CuratorScreen

BLOCKS = " ▁▂▃▄▅▆▇█"
STATUS_STYLE = {"ok": "bold green", "failed": "bold red", "timeout": "bold yellow", "killed": "bold red",
                "cancelled": "yellow", "running": "bold cyan", "queued": "dim"}


class RunView:
    """What one handle has said so far (accumulated from its events)."""

    def __init__(self, handle) -> None:
        self.handle = handle
        self.seen = 0
        self.stage = "queued"
        self.fraction: float | None = None
        self.step: int | None = None
        self.total: int | None = None
        self.logs: list[str] = []
        self.loss: list[float] = []
        self.device: str | None = None

    def update(self) -> bool:
        events = self.handle.events_since(self.seen)
        if not events:
            return False
        self.seen += len(events)
        for ev in events:
            kind = getattr(ev, "type", "")
            if kind == "progress":
                self.stage = ev.stage
                self.step, self.total = ev.step, ev.total
                self.fraction = ev.fraction
                if ev.info.get("device"):
                    self.device = ev.info["device"]
            elif kind == "log":
                self.logs.append(ev.message)
                if len(self.logs) > 400:
                    del self.logs[:100]
            elif kind == "metric" and ev.name == "loss" and ev.value is not None:
                self.loss.append(float(ev.value))
            elif kind == "status":
                self.stage = ev.status
        return True


def resample(values: list[float], width: int) -> list[float]:
    """At most `width` points spread over the whole curve, first and last included."""
    n = len(values)
    if n <= width:
        return list(values)
    if width <= 1:
        return [values[-1]]
    return [values[round(i * (n - 1) / (width - 1))] for i in range(width)]


def loss_plot(values: list[float], width: int = 56, height: int = 6) -> Text:
    """A column chart of the loss curve: every point when they fit, else `width` spread over all of them."""
    t = Text()
    values = [float(v) for v in values if v is not None]
    if not values:
        t.append("no loss reported (a forward check has none; a training run reports one per step)", style="dim")
        return t
    n = len(values)
    cols = resample(values, width)
    lo, hi = min(cols), max(cols)
    span = (hi - lo) or 1.0
    levels = [(v - lo) / span * (height * 8) for v in cols]
    for row in range(height, 0, -1):
        label = hi if row == height else (lo if row == 1 else None)
        t.append(f"{label:>9.4g} ┤" if label is not None else " " * 10 + "│", style="dim")
        line = []
        for lv in levels:
            full = lv - (row - 1) * 8
            line.append(BLOCKS[max(0, min(8, int(round(full))))])
        t.append("".join(line) + "\n", style="cyan")
    t.append(" " * 10 + "└" + "─" * len(cols) + "\n", style="dim")
    t.append(f"{'':>11}{n} points: {values[0]:.4g} → {values[-1]:.4g} (min {min(values):.4g})", style="dim")
    return t


class RunsScreen(CuratorScreen):
    BINDINGS = [
        Binding("c", "cancel_run", "Cancel run", id="run_cancel"),
        Binding("enter", "open_design", "Open design", id="run_open_design"),
        Binding("f5", "reload", "Refresh", id="runs_refresh", show=False),
        Binding("escape", "back", "Back", id="runs_back"),
    ]
    ACTION_HELP = {"run_cancel": "Cancel the highlighted run (SIGTERM, then SIGKILL); its outcome is stored",
                   "run_open_design": "Open the highlighted run's design (its outcome beside its findings)",
                   "runs_refresh": "Read the stored runs again", "runs_back": "Back"}

    def __init__(self) -> None:
        super().__init__()
        self.views: dict[str, RunView] = {}
        self.stored: list[dict] = []
        self.rows: list[tuple[str, object]] = []  # ("live", handle) | ("stored", run row)

    @work(thread=True, exclusive=True, group="runs-load", exit_on_error=False)
    def load_runs(self) -> None:
        self.post_from_worker(RunsLoaded(self.app.store.runs()))

    def compose(self) -> ComposeResult:
        yield AppHeader()
        with Horizontal(id="runs-body"):
            with Vertical(id="runs-left"):
                yield Table(id="runs-table", cursor_type="row", zebra_stripes=True)
            with Vertical(id="runs-right"):
                yield Static(id="run-detail")
                yield ProgressBar(total=1, show_eta=False, id="run-progress")
                yield Static(id="run-plot")
                with VerticalScroll(id="run-log-box"):
                    yield Static(id="run-log")
        yield AppFooter()

    def on_mount(self) -> None:
        if self not in self.app.screen_stack:
            return  # closed before it was mounted (a key pressed at once): nothing to set up
        self.sub_title = "runs"
        table = self.query_one("#runs-table", DataTable)
        table.add_columns("run", "kind", "design", "status", "device", "seconds", "result")
        table.focus()
        self._fill_table()
        self.poll()
        self.set_interval(0.25, self.poll)
        self.action_reload()

    def action_reload(self) -> None:
        self.load_runs()

    def refresh_data(self) -> None:
        self.action_reload()

    def on_runs_loaded(self, message: RunsLoaded) -> None:
        message.stop()
        self.stored = message.runs
        self._fill_table()
        self._show_detail()

    def run_stored(self, handle, stored_id) -> None:
        self.action_reload()

    # ---- the rows ------------------------------------------------------------------------------------
    def _live(self) -> list:
        """Launched here, outcome not stored yet, newest first."""
        stored = self.app.stored_runs
        return [h for h in reversed(self.app.run_handles) if h.run_id not in stored]

    def _handle_of(self, run_id) -> object | None:
        for h in self.app.run_handles:
            if self.app.stored_runs.get(h.run_id) == run_id:
                return h
        return None

    def poll(self) -> None:
        changed = False
        for h in self.app.run_handles:
            view = self.views.get(h.run_id)
            if view is None:
                view = self.views[h.run_id] = RunView(h)
                changed = True
            changed = view.update() or changed
        if changed:
            self._fill_table()
            self._show_detail()

    def _fill_table(self) -> None:
        table = self.query_one("#runs-table", DataTable)
        keep = table.cursor_row
        table.clear()
        self.rows = [("live", h) for h in self._live()] + [("stored", r) for r in self.stored]
        for kind, item in self.rows:
            if kind == "live":
                h = item
                view = self.views.get(h.run_id) or RunView(h)
                status = h.status()
                r = h.result
                result = "" if r is None else (r.exception or ("ran fine" if r.status == "ok" else r.status))
                table.add_row(plain(h.run_id[-8:]), plain(h.spec.kind),
                              plain((h.spec.tags or {}).get("design_id", "—")),
                              Text(visible(status), style=STATUS_STYLE.get(status, "")),
                              plain((r.device if r is not None else view.device)
                                    or (h.spec.tags or {}).get("device_choice") or "—"),
                              plain(f"{r.seconds:.1f}" if r is not None else ""), plain(result))
            else:
                r = item
                status = r.get("status") or "?"
                node = failed_node(r)
                result = r.get("exception") or ("ran fine" if status == "ok" else status)
                if node:
                    result += f" at {node}"
                table.add_row(plain(f"#{r.get('id')}"), plain(r.get("kind")), plain(r.get("design_id") or "—"),
                              Text(visible(status), style=STATUS_STYLE.get(status, "")), plain(r.get("device") or "—"),
                              plain(f"{r['seconds']:.1f}" if isinstance(r.get("seconds"), (int, float)) else ""),
                              plain(result))
        self.query_one("#run-progress", ProgressBar).display = bool(self._live())
        if not self.rows:
            self.query_one("#run-detail", Static).update(
                Text("No runs yet. On a design, e runs a forward check and E a short training.", style="dim"))
        if keep is not None and table.row_count:
            table.move_cursor(row=min(keep, table.row_count - 1))

    def current(self) -> tuple[str, object] | None:
        table = self.query_one("#runs-table", DataTable)
        if not self.rows or table.cursor_row is None or not 0 <= table.cursor_row < len(self.rows):
            return None
        return self.rows[table.cursor_row]

    def on_data_table_row_highlighted(self, message: DataTable.RowHighlighted) -> None:
        self._show_detail()

    def on_data_table_row_selected(self, message: DataTable.RowSelected) -> None:
        message.stop()
        self.action_open_design()

    # ---- the detail ------------------------------------------------------------------------------------
    def _show_detail(self) -> None:
        row = self.current()
        if row is None:
            return
        kind, item = row
        if kind == "live":
            self._show_live(item)
        else:
            self._show_stored(item)

    def _show_live(self, h) -> None:
        view = self.views.get(h.run_id) or RunView(h)
        t = Text()
        design = (h.spec.tags or {}).get("design_id", "?")
        t.append(f"{visible(h.spec.kind)} of {visible(design)}", style="bold")
        status = h.status()
        t.append(f"  {visible(status)}", style=STATUS_STYLE.get(status, ""))
        t.append(f"  on {visible((h.spec.tags or {}).get('device_choice', h.spec.device))}", style="dim")
        r = h.result
        if r is not None:
            if r.exception:
                t.append(f"  {visible(r.exception)}", style="bold red")
            if r.message:
                t.append(f"\n{visible_lines(r.message[:400])}")
            t.append("\nstoring the outcome…", style="dim")
        else:
            t.append(f"\nstage {visible(view.stage)}", style="dim")
            if view.total:
                t.append(f" · step {view.step}/{view.total}", style="dim")
        self.query_one("#run-detail", Static).update(t)
        bar = self.query_one("#run-progress", ProgressBar)
        progress = 1 if r is not None else (view.fraction or 0)
        bar.update(total=1, progress=progress)
        self.query_one("#run-plot", Static).update(loss_plot(view.loss))
        logs = view.logs[-200:]
        if r is not None and r.log_tail and not logs:
            logs = r.log_tail.splitlines()[-200:]
        self.query_one("#run-log", Static).update(
            Text(visible_lines("\n".join(logs)) or "no log lines", style="" if logs else "dim"))

    def _show_stored(self, r: dict) -> None:
        t = Text()
        t.append(f"run #{r.get('id')}: {visible(r.get('kind'))} of {visible(r.get('design_id'))}", style="bold")
        status = r.get("status") or "?"
        t.append(f"  {visible(status)}", style=STATUS_STYLE.get(status, ""))
        if r.get("exception"):
            t.append(f"  {visible(r['exception'])}", style="bold red")
        node = failed_node(r)
        if node:
            t.append(" at node ", style="red")
            t.append(visible(node), style="bold red")
        t.append(f"\non {visible(r.get('device') or '?')} ({visible(r.get('backend') or '?')})", style="dim")
        if isinstance(r.get("seconds"), (int, float)):
            t.append(f" · {r['seconds']:.1f} s", style="dim")
        when = r.get("ended_at") or r.get("created_at")
        if when:
            t.append(f" · {str(when)[:19]}", style="dim")
        if r.get("message"):
            t.append(f"\n{visible_lines(str(r['message'])[:400])}")
        t.append("\nenter: its design, with this outcome next to the finding it confirms or refutes", style="dim")
        self.query_one("#run-detail", Static).update(t)
        self.query_one("#run-progress", ProgressBar).display = False
        handle = self._handle_of(r.get("id"))
        view = self.views.get(handle.run_id) if handle is not None else None
        curve = view.loss if view is not None and view.loss else list((r.get("metrics") or {}).get("loss_curve")
                                                                      or [])
        self.query_one("#run-plot", Static).update(loss_plot(curve))
        log = str(r.get("log_tail") or "")
        self.query_one("#run-log", Static).update(
            Text(visible_lines(log[-8000:]) or "no log lines", style="" if log else "dim"))

    # ---- actions --------------------------------------------------------------------------------------------
    def action_cancel_run(self) -> None:
        row = self.current()
        if row is None:
            return
        kind, item = row
        if kind != "live" or item.result is not None:
            self.notify("that run has ended")
            return
        item.cancel()
        self.notify("cancelling… (its outcome is stored as cancelled)", timeout=2)

    def action_open_design(self) -> None:
        from .design import DesignScreen

        row = self.current()
        if row is None:
            return
        kind, item = row
        did = (item.spec.tags or {}).get("design_id") if kind == "live" else item.get("design_id")
        if not did or str(did).startswith("file:"):
            self.notify("that run is not of a stored design", severity="warning")
            return
        model = self.app.main_queue
        self.app.push_screen(DesignScreen(model, model.index_of(did), design_id=did))

    def action_back(self) -> None:
        self.dismiss()

"""Runs launched from the app: live progress, a loss plot, logs, cancel.

The app launches a run (`CuratorApp.launch_run`: a forward check or a short
training of a design) through `core.runs.get_runner()`; the child process
does the work and the app, which launched it, stores the result
(`tui.commands.run_cmd.persist_result`). This screen only watches: a timer
reads each handle's new events (`events_since`, non-blocking) four times a
second.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, ProgressBar, Static

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


def loss_plot(values: list[float], width: int = 56, height: int = 6) -> Text:
    """A column chart of the loss curve (latest `width` points resampled)."""
    t = Text()
    if not values:
        t.append("no loss reported (a forward check has none; a training run reports one per step)", style="dim")
        return t
    n = len(values)
    cols = [values[min(n - 1, int(i * n / width))] for i in range(min(width, n))]
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
    t.append(f"{'':>11}step 0 … {n - 1}: {values[0]:.4g} → {values[-1]:.4g} (min {min(values):.4g})", style="dim")
    return t


class RunsScreen(Screen):
    BINDINGS = [
        Binding("c", "cancel_run", "Cancel run", id="run_cancel"),
        Binding("escape", "back", "Back", id="runs_back"),
    ]
    ACTION_HELP = {"run_cancel": "Cancel the highlighted run (SIGTERM, then SIGKILL)", "runs_back": "Back"}

    @staticmethod
    def launch(app, design_id: str, kind: str = "forward") -> None:
        """What the design screen's run keys call (through `CuratorApp.launch_run`)."""
        app.start_run(design_id, kind)

    def __init__(self) -> None:
        super().__init__()
        self.views: dict[str, RunView] = {}

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="runs-body"):
            with Vertical(id="runs-left"):
                yield DataTable(id="runs-table", cursor_type="row", zebra_stripes=True)
            with Vertical(id="runs-right"):
                yield Static(id="run-detail")
                yield ProgressBar(total=1, show_eta=False, id="run-progress")
                yield Static(id="run-plot")
                with VerticalScroll(id="run-log-box"):
                    yield Static(id="run-log")
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = "runs"
        table = self.query_one("#runs-table", DataTable)
        table.add_columns("run", "kind", "design", "status", "stage", "device", "seconds", "result")
        table.focus()
        self._fill_table()
        self.poll()
        self.set_interval(0.25, self.poll)

    def _handles(self) -> list:
        return list(reversed(self.app.run_handles))

    def poll(self) -> None:
        changed = False
        for h in self._handles():
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
        for h in self._handles():
            view = self.views.get(h.run_id)
            if view is None:
                view = self.views[h.run_id] = RunView(h)
            status = h.status()
            r = h.result
            result = ""
            if r is not None:
                result = r.exception or ("ran fine" if r.status == "ok" else r.status)
            table.add_row(h.run_id[-8:], h.spec.kind, (h.spec.tags or {}).get("design_id", "—"),
                          Text(status, style=STATUS_STYLE.get(status, "")), view.stage,
                          (r.device if r is not None else view.device) or "—",
                          f"{r.seconds:.1f}" if r is not None else "", result, key=h.run_id)
        self.query_one("#run-progress", ProgressBar).display = bool(self.app.run_handles)
        if not self.app.run_handles:
            self.query_one("#run-detail", Static).update(
                Text("No runs yet. On a design, e runs a forward check and E a short training.", style="dim"))
        if keep is not None and table.row_count:
            table.move_cursor(row=min(keep, table.row_count - 1))

    def current(self) -> RunView | None:
        table = self.query_one("#runs-table", DataTable)
        handles = self._handles()
        if not handles or table.cursor_row is None or not 0 <= table.cursor_row < len(handles):
            return None
        return self.views.get(handles[table.cursor_row].run_id)

    def on_data_table_row_highlighted(self, message: DataTable.RowHighlighted) -> None:
        self._show_detail()

    def _show_detail(self) -> None:
        view = self.current()
        if view is None:
            return
        h = view.handle
        t = Text()
        design = (h.spec.tags or {}).get("design_id", "?")
        t.append(f"{h.spec.kind} of {design}", style="bold")
        status = h.status()
        t.append(f"  {status}", style=STATUS_STYLE.get(status, ""))
        r = h.result
        if r is not None:
            if r.exception:
                t.append(f"  {r.exception}", style="bold red")
            if r.message:
                t.append(f"\n{r.message[:400]}")
            stored = self.app.stored_runs.get(h.run_id)
            if stored is not None:
                t.append(f"\nstored as run {stored}", style="dim")
        else:
            t.append(f"\nstage {view.stage}", style="dim")
            if view.total:
                t.append(f" · step {view.step}/{view.total}", style="dim")
        self.query_one("#run-detail", Static).update(t)
        bar = self.query_one("#run-progress", ProgressBar)
        if r is not None:
            bar.update(total=1, progress=1)
        elif view.fraction is not None:
            bar.update(total=1, progress=view.fraction)
        else:
            bar.update(total=1, progress=0)
        self.query_one("#run-plot", Static).update(loss_plot(view.loss))
        logs = view.logs[-200:]
        if r is not None and r.log_tail and not logs:
            logs = r.log_tail.splitlines()[-200:]
        self.query_one("#run-log", Static).update(Text("\n".join(logs) or "no log lines", style="dim" if not logs
                                                        else ""))

    def action_cancel_run(self) -> None:
        view = self.current()
        if view is None:
            return
        if view.handle.result is not None:
            self.notify("that run has ended")
            return
        view.handle.cancel()
        self.notify("cancelling…", timeout=2)

    def action_back(self) -> None:
        self.dismiss()

"""Reports: refusal rate by author (table and bar chart), precision per rule."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Static, TabbedContent, TabPane

from ..widgets.messages import ReportsLoaded

BAR_WIDTH = 30


def _pct(v) -> str:
    return "—" if v is None else f"{100 * v:.1f}%"


def _money(v) -> str:
    return "—" if v is None else f"${v:,.2f}"


def share_chart(rows: list[dict], width: int = BAR_WIDTH) -> Text:
    """One bar per author / model / task set: the blocked share, with its range over runs."""
    t = Text()
    if not rows:
        t.append("no designs in the store", style="dim")
        return t
    labels = [" · ".join(x for x in (r["author"], r.get("model") or "", (r.get("taskSet") or {}).get("label") or "")
                         if x) for r in rows]
    lw = min(max(len(s) for s in labels), 40)
    for label, r in zip(labels, rows):
        share = r.get("blockedShare")
        t.append(f"{label[:lw]:<{lw}} ", style="bold")
        if share is None:
            t.append("nothing returned\n", style="dim")
            continue
        lo, hi = r.get("blockedShareRange") or [None, None]
        cells = [" "] * width
        filled = int(round(share * width))
        for i in range(filled):
            cells[i] = "█"
        for i in range(filled, width):
            cells[i] = "░"
        bar = Text("".join(cells), style="red" if share >= 0.5 else ("yellow" if share >= 0.2 else "green"))
        if lo is not None and hi is not None and hi > lo:
            a, b = int(round(lo * (width - 1))), int(round(hi * (width - 1)))
            bar.stylize("underline", a, b + 1)
        t.append_text(bar)
        t.append(f" {_pct(share):>6}", style="bold")
        t.append(f"  {r['blocked']}/{r['returned']}", style="dim")
        if lo is not None and hi is not None and r.get("runs", 0) > 1:
            t.append(f"  runs {_pct(lo)}–{_pct(hi)}", style="dim")
        t.append("\n")
    t.append("\nbar: blocked / returned designs; underlined: the range over recorded runs", style="dim italic")
    return t


class ReportsScreen(Screen):
    BINDINGS = [
        Binding("escape", "back", "Back", id="reports_back"),
        Binding("f5", "reload", "Refresh", id="reports_refresh"),
    ]
    ACTION_HELP = {"reports_back": "Back", "reports_refresh": "Read the reports again"}

    def compose(self) -> ComposeResult:
        yield Header()
        with TabbedContent(id="report-tabs"):
            with TabPane("Refusals by author", id="tab-refusals"):
                with VerticalScroll():
                    yield Static("Refusal rate (blocked share of returned designs)", classes="report-title")
                    yield Static(id="refusal-chart")
                    yield DataTable(id="refusal-table", zebra_stripes=True, cursor_type="row")
            with TabPane("Precision per rule", id="tab-rules"):
                with VerticalScroll():
                    yield Static(id="rules-note", classes="report-title")
                    yield DataTable(id="rules-table", zebra_stripes=True, cursor_type="row")
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = "reports"
        self.action_reload()

    def action_reload(self) -> None:
        self.query_one("#refusal-chart", Static).update("reading the store…")
        self.app.load_reports(self)

    def refresh_data(self) -> None:
        self.action_reload()

    def on_reports_loaded(self, message: ReportsLoaded) -> None:
        message.stop()
        rows = message.refusals.get("rows", [])
        self.query_one("#refusal-chart", Static).update(share_chart(rows))
        table = self.query_one("#refusal-table", DataTable)
        table.clear(columns=True)
        table.add_columns("author", "model", "task set", "returned", "blocked", "share", "runs range",
                          "ungenerated", "top rules", "median cost")
        for r in rows:
            lo, hi = r.get("blockedShareRange") or [None, None]
            top = ", ".join(f"{k} {v}" for k, v in list((r.get("ruleIds") or {}).items())[:2])
            table.add_row(r["author"], r.get("model") or "—", (r.get("taskSet") or {}).get("label") or "—",
                          Text(str(r["returned"]), justify="right"), Text(str(r["blocked"]), justify="right"),
                          Text(_pct(r.get("blockedShare")), justify="right"),
                          f"{_pct(lo)}–{_pct(hi)}" if lo is not None else "—",
                          Text(str(r.get("ungenerated", 0)), justify="right"), top or "—",
                          Text(_money(r.get("medianQuotedCost")), justify="right"))
        rules = message.rules.get("rows", [])
        self.query_one("#rules-note", Static).update(
            "precision = real / (real + false alarm) over the majority verdict of each finding; "
            "≥ is its Wilson 95% lower bound; recall counts missed defects naming the rule")
        table = self.query_one("#rules-table", DataTable)
        table.clear(columns=True)
        table.add_columns("rule", "firings", "designs", "real", "false alarm", "unsure", "unjudged", "precision",
                          "≥ (95%)", "missed", "recall")
        for r in rules:
            table.add_row(r["rule"], *[Text(str(r[k]), justify="right") for k in
                                       ("firings", "designs", "real", "false_alarm", "unsure", "unjudged")],
                          Text(_pct(r.get("precision")), justify="right"),
                          Text(_pct(r.get("precisionLower")), justify="right"),
                          Text(str(r.get("missed", 0)), justify="right"),
                          Text(_pct(r.get("recall")), justify="right"))

    def action_back(self) -> None:
        self.dismiss()

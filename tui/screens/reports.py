"""Reports: refusal rate by author (table and bar chart), precision per rule, agreement between curators.

Enter on a refusals row opens the queue filtered to that author, model and
task set; on a rules row, to the designs on which that rule fires.
"""

from __future__ import annotations

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static, TabbedContent, TabPane, Tabs

from ..components.table import Table
from ..report_text import false_alarm_text
from ..sanitise import plain, visible
from ..widgets.footer import AppFooter
from ..widgets.header import AppHeader
from ..widgets.messages import AgreementLoaded, ReportsLoaded
from .base import CuratorScreen

BAR_WIDTH = 30
TABS = Binding.Group("Tabs", compact=True)  # 1-3 shown once in the footer, as on the design screen


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
    labels = [visible(" · ".join(x for x in (r["author"], r.get("model") or "",
                                             (r.get("taskSet") or {}).get("label") or "") if x)) for r in rows]
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


class ReportsScreen(CuratorScreen):
    BINDINGS = [
        Binding("escape", "back", "Back", id="reports_back"),
        Binding("f5", "reload", "Refresh", id="reports_refresh"),
        Binding("A", "pick_curators", "Agreement of…", id="reports_agreement"),
        Binding("1", "tab('tab-refusals')", "Refusals tab", id="reports_tab_refusals", group=TABS),
        Binding("2", "tab('tab-rules')", "Rules tab", id="reports_tab_rules", group=TABS),
        Binding("3", "tab('tab-agreement')", "Agreement tab", id="reports_tab_agreement", group=TABS),
    ]
    ACTION_HELP = {"reports_back": "Back", "reports_refresh": "Read the reports again",
                   "reports_agreement": "Agreement (Cohen's kappa) between two curators you pick",
                   "reports_tab_refusals": "Show the Refusals tab: refusal rate by author, model and task set",
                   "reports_tab_rules": "Show the Rules tab: precision and false-alarm rate per rule",
                   "reports_tab_agreement": "Show the Agreement tab: Cohen's kappa between two curators"}

    def __init__(self) -> None:
        super().__init__()
        self.refusal_rows: list[dict] = []
        self.rule_rows: list[dict] = []
        self.curators: list[str] = []

    @work(thread=True, exclusive=True, group="reports", exit_on_error=False)
    def load_reports(self) -> None:
        store = self.app.store
        self.post_from_worker(ReportsLoaded(store.refusals(), store.rules(), store.curators()))

    @work(thread=True, exclusive=True, group="agreement", exit_on_error=False)
    def load_agreement(self, a: str, b: str) -> None:
        self.post_from_worker(AgreementLoaded(self.app.store.agreement(a, b)))

    def compose(self) -> ComposeResult:
        yield AppHeader()
        with TabbedContent(id="report-tabs"):
            with TabPane("Refusals by author", id="tab-refusals"):
                with VerticalScroll():
                    yield Static("Refusal rate (blocked share of returned designs)", classes="report-title")
                    yield Static(id="refusal-chart")
                    yield Table(id="refusal-table", zebra_stripes=True, cursor_type="row")
            with TabPane("Precision per rule", id="tab-rules"):
                with VerticalScroll():
                    yield Static(id="rules-note", classes="report-title")
                    yield Table(id="rules-table", zebra_stripes=True, cursor_type="row")
                    yield Static(id="rules-other", classes="report-note")
            with TabPane("Agreement", id="tab-agreement"):
                with VerticalScroll():
                    yield Static(id="agreement-note", classes="report-title")
                    yield Static(id="agreement")
        yield AppFooter()

    def on_mount(self) -> None:
        if self not in self.app.screen_stack:
            return  # closed before it was mounted (a key pressed at once): nothing to set up
        self.sub_title = "reports"
        self.action_reload()

    def action_reload(self) -> None:
        self.query_one("#refusal-chart", Static).update("reading the store…")
        self.load_reports()

    def refresh_data(self) -> None:
        self.action_reload()

    def on_reports_loaded(self, message: ReportsLoaded) -> None:
        message.stop()
        rows = message.refusals.get("rows", [])
        self.refusal_rows = rows
        self.curators = message.curators
        self._agreement_default()
        self.query_one("#refusal-chart", Static).update(share_chart(rows))
        table = self.query_one("#refusal-table", DataTable)
        table.clear(columns=True)
        table.add_columns("author", "model", "task set", "returned", "blocked", "share", "runs range",
                          "ungenerated", "rules that blocked", "median cost")
        for r in rows:
            lo, hi = r.get("blockedShareRange") or [None, None]
            top = ", ".join(f"{k} {v}" for k, v in list((r.get("blockingRuleIds") or {}).items())[:2])
            table.add_row(plain(r["author"]), plain(r.get("model") or "—"),
                          plain((r.get("taskSet") or {}).get("label") or "—"),
                          Text(str(r["returned"]), justify="right"), Text(str(r["blocked"]), justify="right"),
                          Text(_pct(r.get("blockedShare")), justify="right"),
                          f"{_pct(lo)}–{_pct(hi)}" if lo is not None else "—",
                          Text(str(r.get("ungenerated", 0)), justify="right"), plain(top or "—"),
                          Text(_money(r.get("medianQuotedCost")), justify="right"))
        rules = message.rules.get("rows", [])
        self.rule_rows = rules
        self.query_one("#rules-note", Static).update(
            "precision = real / (real + false alarm) over the adjudicated (else majority) verdict of each "
            "finding; ≥ is its Wilson 95% lower bound; false-alarm rate with its Wilson 95% interval (a rule "
            "the project demoted says so: archcurator demote); recall counts missed defects naming the rule · "
            "enter: the designs it fires on")
        other = message.rules.get("other") or []
        note = Text()
        if other:
            note.append("Missed defects no rule covers (kept apart): ", style="bold")
            note.append(visible(", ".join(f"{o['rule']} ({o['missed']})" for o in other)))
        self.query_one("#rules-other", Static).update(note)
        table = self.query_one("#rules-table", DataTable)
        table.clear(columns=True)
        # what a curator reads a rule by (precision, false alarms) next to its id, the counts after: at 100
        # columns the false-alarm columns were past the right edge
        table.add_columns("rule", "precision", "≥ (95%)", "false-alarm rate (95%)", "real", "false alarm",
                          "unsure", "unjudged", "firings", "designs", "missed", "recall", "demoted")
        for r in rules:
            table.add_row(plain(r["rule"]),
                          Text(_pct(r.get("precision")), justify="right"),
                          Text(_pct(r.get("precisionLower")), justify="right"),
                          Text(false_alarm_text(r), justify="right"),
                          *[Text(str(r[k]), justify="right") for k in
                            ("real", "false_alarm", "unsure", "unjudged", "firings", "designs")],
                          Text(str(r.get("missed", 0)), justify="right"),
                          Text(_pct(r.get("recall")), justify="right"),
                          plain((r.get("demoted") or {}).get("reason") or ""))
        self._focus_table()

    def _focus_table(self) -> None:
        """The open tab's table takes the keys (down / enter open a row) without a Tab first."""
        if isinstance(self.focused, DataTable) or isinstance(self.app.screen, ModalScreen):
            return
        active = self.query_one("#report-tabs", TabbedContent).active
        table = {"tab-refusals": "#refusal-table", "tab-rules": "#rules-table"}.get(active)
        if table is not None:
            self.query_one(table, DataTable).focus()

    def on_tabbed_content_tab_activated(self, message: TabbedContent.TabActivated) -> None:
        if message.tabbed_content.id == "report-tabs":
            active = message.pane.id
            table = {"tab-refusals": "#refusal-table", "tab-rules": "#rules-table"}.get(active or "")
            if table is not None and not isinstance(self.focused, Tabs):
                self.query_one(table, DataTable).focus()

    # ---- a row opens the queue filtered to it --------------------------------------------------------
    def on_data_table_row_selected(self, message: DataTable.RowSelected) -> None:
        message.stop()
        row = message.cursor_row
        if message.data_table.id == "refusal-table" and 0 <= row < len(self.refusal_rows):
            r = self.refusal_rows[row]
            filters = {"author": r["author"], "model": r.get("model"),
                       "task_set": (r.get("taskSet") or {}).get("label")}
        elif message.data_table.id == "rules-table" and 0 <= row < len(self.rule_rows):
            filters = {"rule": self.rule_rows[row]["rule"]}
        else:
            return
        self.app.open_queue_filtered(filters)

    # ---- agreement ---------------------------------------------------------------------------------------
    def _agreement_default(self) -> None:
        note = self.query_one("#agreement-note", Static)
        others = [c for c in self.curators if c != self.app.curator]
        if not others:
            note.update(Text("Agreement needs two curators who judged the same findings; only "
                             f"{visible(', '.join(self.curators) or 'nobody')} has judged so far.", style="dim"))
            return
        note.update(Text("A: pick two curators", style="dim"))
        if self.app.curator in self.curators:
            self.load_agreement(self.app.curator, others[0])

    def action_pick_curators(self) -> None:
        from .modals import ChoiceScreen

        if len(self.curators) < 2:
            self.notify("agreement needs two curators who have judged", severity="warning")
            return
        pairs = [((a, b), f"{a} and {b}") for i, a in enumerate(self.curators) for b in self.curators[i + 1:]]

        def chosen(value) -> None:
            if value is not ChoiceScreen.CANCELLED and value is not None:
                self.query_one("#report-tabs", TabbedContent).active = "tab-agreement"
                self.load_agreement(*value)

        self.app.push_screen(ChoiceScreen("Agreement between…", pairs), chosen)

    def on_agreement_loaded(self, message: AgreementLoaded) -> None:
        message.stop()
        rep = message.report
        t = Text()
        t.append(f"{visible(rep['a'])} (rows) vs {visible(rep['b'])} (columns): {rep['n']} findings both judged\n\n",
                 style="bold")
        cats = rep.get("categories") or []
        t.append(" " * 14 + "".join(f"{c.replace('_', ' '):>14}" for c in cats) + "\n", style="bold")
        for a in cats:
            t.append(f"{a.replace('_', ' '):<14}", style="bold")
            t.append("".join(f"{rep['matrix'][a][b]:>14}" for b in cats) + "\n")

        def pct(v):
            return "—" if v is None else f"{100 * v:.1f}%"

        kappa = rep.get("kappa")
        t.append(f"\nobserved agreement {pct(rep.get('observed'))}, chance {pct(rep.get('expected'))}, "
                 f"Cohen's kappa {'—' if kappa is None else f'{kappa:.3f}'}\n")
        t.append("V opens the review of the findings they disagree on.", style="dim")
        self.query_one("#agreement-note", Static).update(Text("A: pick two other curators", style="dim"))
        self.query_one("#agreement", Static).update(t)

    def action_tab(self, tab_id: str) -> None:
        self.query_one("#report-tabs", TabbedContent).active = tab_id

    def action_back(self) -> None:
        """esc: from the tab bar, back to the open tab's table; from there, back."""
        if isinstance(self.focused, Tabs):
            self.set_focus(None)
            self._focus_table()
            if isinstance(self.focused, DataTable):
                return
        self.dismiss()

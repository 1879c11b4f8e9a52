"""Review: findings curators judged differently, side by side; an adjudicator records the final verdict.

Each row is one finding whose current verdicts differ between curators
(`AppStore.disagreements`), with every curator's verdict and note in columns
of their own, and the final verdict once adjudicated. `r` / `f` / `u`
record the final verdict of the highlighted finding (an adjudication, a
curation step: `z` takes it back); enter opens its design. `report rules`
then counts the adjudicated verdict instead of the majority.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Static

from ..components.findings import VERDICT_LABEL, VERDICT_STYLE, finding_label
from ..components.table import Table
from ..sanitise import plain, visible, visible_lines
from ..widgets.footer import AppFooter
from ..widgets.header import AppHeader
from ..widgets.messages import DisagreementsLoaded
from .base import CuratorScreen

if TYPE_CHECKING:
    from archcurator.store.records import Disagreement


def _verdict(v: str | None) -> Text:
    return Text(VERDICT_LABEL.get(v, "—") if v else "—", style=VERDICT_STYLE.get(v or "", "dim"))


class ReviewScreen(CuratorScreen):
    BINDINGS = [
        Binding("r", "adjudicate('real')", "Final: real", id="adjudicate_real"),
        Binding("f", "adjudicate('false_alarm')", "Final: false alarm", id="adjudicate_false_alarm"),
        Binding("u", "adjudicate('unsure')", "Final: unsure", id="adjudicate_unsure"),
        Binding("o", "open_design", "Open design", id="review_open"),
        Binding("f5", "reload", "Refresh", id="review_refresh", show=False),
        Binding("escape", "back", "Back", id="review_back"),
    ]
    ACTION_HELP = {
        "adjudicate_real": "Record the final verdict of the highlighted finding: real",
        "adjudicate_false_alarm": "Record the final verdict of the highlighted finding: false alarm",
        "adjudicate_unsure": "Record the final verdict of the highlighted finding: unsure",
        "review_open": "Open the highlighted finding's design",
        "review_refresh": "Read the disagreements again",
        "review_back": "Back",
    }

    def __init__(self) -> None:
        super().__init__()
        self.items: list[Disagreement] = []
        self.curators: list[str] = []

    @work(thread=True, exclusive=True, group="review", exit_on_error=False)
    def load_disagreements(self) -> None:
        self.post_from_worker(DisagreementsLoaded(self.app.store.disagreements()))

    def compose(self) -> ComposeResult:
        yield AppHeader()
        yield Static(id="review-status")
        yield Table(id="review-table", cursor_type="row", zebra_stripes=True)
        yield Static(id="review-detail")
        yield AppFooter()

    def on_mount(self) -> None:
        if self not in self.app.screen_stack:
            return  # closed before it was mounted (a key pressed at once): nothing to set up
        self.sub_title = "review: where curators disagree"
        self.query_one("#review-table", DataTable).focus()
        self.action_reload()

    def action_reload(self) -> None:
        self.query_one("#review-status", Static).update(Text("reading the judgments…", style="dim"))
        self.load_disagreements()

    def refresh_data(self) -> None:
        self.action_reload()

    def write_done(self, op, result, designs) -> None:
        if op.kind in ("adjudicate", "undo"):
            self.action_reload()

    def on_disagreements_loaded(self, message: DisagreementsLoaded) -> None:
        message.stop()
        self.items = message.items
        self.curators = sorted({c for it in self.items for c in it["votes"]})
        table = self.query_one("#review-table", DataTable)
        keep = table.cursor_row
        table.clear(columns=True)
        table.add_columns("design", "finding", *[plain(c) for c in self.curators], "final")
        for it in self.items:
            cells = [plain(it["design_id"]), plain(finding_label(it))]
            for c in self.curators:
                vote = it["votes"].get(c)
                cells.append(_verdict(vote["verdict"]) if vote else Text("·", style="dim"))
            final = _verdict(it.get("final"))
            if it.get("adjudicator"):
                final.append(f" ({visible(it['adjudicator'])})", style="dim")
            cells.append(final)
            table.add_row(*cells)
        n = len(self.items)
        done = sum(1 for it in self.items if it.get("final"))
        status = Text()
        if not n:
            status.append("No disagreements: every finding judged by two or more curators got the same verdict.",
                          style="green")
        else:
            status.append(f"{n} finding{'s' if n != 1 else ''} where curators disagree · {done} adjudicated",
                          style="bold")
            status.append(" · r / f / u: final verdict · o: open the design", style="dim")
        self.query_one("#review-status", Static).update(status)
        if keep is not None and table.row_count:
            table.move_cursor(row=min(keep, table.row_count - 1))
        self._show_detail()

    def current(self) -> Disagreement | None:
        table = self.query_one("#review-table", DataTable)
        row = table.cursor_row
        return self.items[row] if self.items and row is not None and 0 <= row < len(self.items) else None

    def on_data_table_row_highlighted(self, message: DataTable.RowHighlighted) -> None:
        self._show_detail()

    def on_data_table_row_selected(self, message: DataTable.RowSelected) -> None:
        message.stop()
        self.action_open_design()

    def _show_detail(self) -> None:
        it = self.current()
        t = Text()
        if it is not None:
            t.append(visible(it.get("rule") or it["key"]), style="bold")
            t.append(f"  {visible(it.get('severity') or '')}\n", style="dim")
            t.append(visible_lines(it.get("message") or "") + "\n")
            for who, vote in sorted(it["votes"].items()):
                t.append(f"{visible(who)}: ", style="bold")
                t.append_text(_verdict(vote["verdict"]))
                if vote.get("note"):
                    t.append(f" — {visible_lines(vote['note'])}", style="italic")
                t.append("\n")
        self.query_one("#review-detail", Static).update(t)

    def action_adjudicate(self, verdict: str) -> None:
        it = self.current()
        if it is None:
            self.notify("no finding highlighted", severity="warning")
            return
        it["final"], it["adjudicator"] = verdict, self.app.curator
        self.app.adjudicate(it["design_id"], it["key"], verdict)
        self.notify(f"final verdict {VERDICT_LABEL[verdict]} on {it['key']} ({it['design_id']}) — z undoes it",
                    timeout=4)

    def action_open_design(self) -> None:
        from .design import DesignScreen

        it = self.current()
        if it is None:
            return
        model = self.app.main_queue
        self.app.push_screen(DesignScreen(model, model.index_of(it["design_id"]), design_id=it["design_id"]))

    def action_back(self) -> None:
        self.dismiss()

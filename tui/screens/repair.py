"""A proposed repair: the diff of the original against the repaired design, the edits, the cost quote
before and after, and one key (`s`) that stores the repair as a new version of the design.

The diff is the diff screen's own (this screen is one, with the repaired graph as its right side); the
repair itself was searched by `core.repair` in the design screen's worker. Keeping it stores the
repaired design through the store API (`AppStore.keep_repair`: a design of its own, parent = the
original), so the curator's judgments on the original stay where they are.
"""

from __future__ import annotations

from rich.text import Text
from textual import work
from textual.binding import Binding

from ..sanitise import visible
from ..widgets.messages import RepairKept
from .diff import DiffScreen


def quote_line(cost: dict | None) -> str:
    if not cost:
        return "—"
    q = cost.get("quote") or {}
    return (f"${q.get('usd', 0):,.4f} on {q.get('device', '?')}, {cost.get('params', 0):,} params, "
            f"{cost.get('flops_per_sample', 0) / 1e9:.3f} GFLOPs/sample")


class RepairScreen(DiffScreen):
    BINDINGS = [
        Binding("s", "keep", "Store as new version", id="repair_keep"),
    ]
    ACTION_HELP = {
        **DiffScreen.ACTION_HELP,
        "repair_keep": "Store the repaired design as a new version of this one (parent = the original; "
                       "the judgments on the original stay)",
    }

    def __init__(self, view, repair, cost_before: dict, cost_after: dict | None) -> None:
        super().__init__(view, "design", view.id, repair.design, f"{view.id} repaired")
        self.repair = repair
        self.cost_before = cost_before
        self.cost_after = cost_after
        self.kept: str | None = None
        self.keeping = False

    def _details(self) -> Text:
        return self._repair_text() + super()._details()

    def _repair_text(self) -> Text:
        from archcurator.core.repair import describe

        t = Text()
        t.append("Repair\n", style="bold underline")
        for r in self.repair.repairs:
            f = r.finding
            t.append("  ✗ ", style="bold red")
            t.append(visible(f"{f['rule']} at {', '.join(f['nodes']) or 'the graph'}"), style="bold")
            t.append(visible(f": {f['message']}") + "\n", style="dim")
            for e in r.edits:
                t.append("      → " + visible(describe(e)) + "\n", style="green")
        t.append(visible(f"  verdict: {self.repair.original_report.verdict} → {self.repair.verdict} "
                         f"(verified, not run)") + "\n")
        t.append(visible(f"  cost before: {quote_line(self.cost_before)}") + "\n")
        t.append(visible(f"  cost after:  {quote_line(self.cost_after)}") + "\n")
        t.append("  s stores it as a new version of this design\n\n", style="bold")
        return t

    def action_keep(self) -> None:
        if self.kept is not None:
            self.notify(visible(f"already kept as {self.kept}"), timeout=3)
            return
        if self.keeping:
            return
        self.keeping = True
        self._keep(self.view.id, self.repair.design, self.repair.edits)

    @work(thread=True, exclusive=True, group="repair-keep", exit_on_error=False)
    def _keep(self, design_id: str, graph: dict, edits: list) -> None:
        try:
            new_id = self.app.store.keep_repair(design_id, graph, edits)
        finally:
            self.keeping = False
        self.post_message(RepairKept(design_id, new_id))

    def on_repair_kept(self, message: RepairKept) -> None:
        message.stop()
        self.kept = message.new_id
        self.notify(visible(f"kept as {message.new_id} (parent {message.original_id})"), timeout=4)
        self.app.action_refresh()

"""DesignTabs: the highlighted finding (catalogue words, judgments), cost, source, runs, recent verdicts.

Only the visible tab is filled when the design changes; the others when
they are opened (less to draw per design: next-design latency).
"""

from __future__ import annotations

import json

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import OptionList, TabbedContent, TabPane
from textual.widgets.option_list import Option

from ..sanitise import visible, visible_lines
from ..widgets.design_model import catalogue_entry
from ..widgets.option_lists import StopOptionList
from ..widgets.text_pane import TextPane
from .findings import VERDICT_LABEL, VERDICT_STYLE
from .judge_bar import clip
from .run_outcome import outcome_text, relation
from .summary import big_number, money

# What a generator put in a design to score the verifier (the corruption applied, the expected
# verdict): the person judging must not see the answer key.
ANSWER_KEY_META = ("corruption", "derived", "expect", "expected", "expected_verdict")
ANSWER_KEY_EXTRA = ("expect", "expected", "expected_verdict", "corruption", "label")


def _bytes(n) -> str:
    if n is None:
        return "—"
    n = float(n)
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            return f"{n / size:,.1f} {unit}"
    return f"{n:,.0f} B"


def _value_text(v) -> str:
    return visible(v if isinstance(v, str) else json.dumps(v, default=str))


class DesignTabs(Vertical):
    """The side pane's tabs (a TabbedContent, id `tabs`)."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.view = None
        self.curator = ""
        self.filled: set = set()
        self.live_runs: list = []
        self.recent_stale = True  # the Recent tab is read when opened, and again after a step

    def compose(self) -> ComposeResult:
        with TabbedContent(id="tabs"):
            with TabPane("Finding", id="tab-finding"):
                yield TextPane(id="finding-detail")
            with TabPane("Cost", id="tab-cost"):
                yield TextPane(id="cost")
            with TabPane("Source", id="tab-source"):
                yield TextPane(id="meta")
            with TabPane("Runs", id="tab-runs"):
                yield TextPane(id="design-runs")
            with TabPane("Recent", id="tab-recent"):
                yield StopOptionList(id="recent")

    @property
    def active(self) -> str:
        return self.query_one("#tabs", TabbedContent).active

    def open_tab(self, tab_id: str) -> None:
        """Show one tab (the number keys): its content is filled as it opens."""
        self.query_one("#tabs", TabbedContent).active = tab_id

    # ---- a new design ----------------------------------------------------------------------------
    def show(self, view, curator: str, live_runs: list | None = None) -> None:
        self.view, self.curator = view, curator
        self.live_runs = list(live_runs or [])
        self.filled = {"tab-recent"}  # filled by its own loads
        self.fill_active()

    def fill_active(self) -> None:
        if self.view is None:
            return
        active = self.active
        if active in self.filled:
            return
        if active == "tab-cost":
            self._fill_cost()
        elif active == "tab-source":
            self._fill_source()
        elif active == "tab-runs":
            self._fill_runs()
        self.filled.add(active)

    def on_tabbed_content_tab_activated(self, message: TabbedContent.TabActivated) -> None:
        self.fill_active()

    # ---- the finding --------------------------------------------------------------------------------
    def show_item(self, item: tuple[str, dict] | None) -> None:
        detail = self.query_one("#finding-detail", TextPane)
        t = Text()
        if item is None:
            view = self.view
            if view is not None and view.data.get("error") is not None:
                t.append("Not generated: ", style="bold red")
                t.append(visible_lines(view.data["error"]))
            else:
                t.append("Nothing reported on this design.", style="dim")
                if view is not None and view.data.get("missed_defects"):
                    t.append(" Missed defects marked on it are listed with the findings.", style="dim")
            detail.update(t)
            return
        kind, obj = item
        if kind == "missed":
            self._missed_text(t, obj)
        else:
            self._finding_text(t, obj)
        detail.update(t)

    def _missed_text(self, t: Text, m: dict) -> None:
        t.append("Missed defect", style="bold magenta")
        t.append(f"  marked by {visible(m.get('curator'))}\n", style="dim")
        t.append("rule         ", style="dim")
        t.append(visible(m.get("rule") or "—") + "\n")
        t.append("nodes        ", style="dim")
        t.append(visible(", ".join(m.get("nodes") or []) or "—") + "\n")
        if m.get("description"):
            t.append("description  ", style="dim")
            t.append(visible_lines(m["description"]) + "\n")
        if m.get("curator") == self.curator:
            t.append("\nx retracts it (z undoes the retraction)\n", style="dim italic")

    def _finding_text(self, t: Text, f: dict) -> None:
        spec = catalogue_entry(f["rule"])
        t.append(visible(f["rule"]), style="bold")
        t.append(f"  {f['severity']}", style="bold red" if f["severity"] == "block" else "bold yellow")
        t.append(f"  {visible(spec.title)}\n" if spec is not None else "\n", style="italic")
        t.append(visible_lines(f.get("message") or "") + "\n")
        if f.get("nodes"):
            t.append("nodes: ", style="dim")
            t.append(visible(", ".join(f["nodes"])) + "\n")
        view = self.view
        runs = [r for r in (view.data.get("runs") or []) if r.get("kind") == "forward"] if view else []
        for r in runs[:1]:
            rel = relation(r, view.data.get("findings") or [])
            if f["key"] in rel.keys:
                t.append("\n")
                t.append_text(outcome_text(r, view.data.get("findings") or [], view.data.get("verdict")))
                t.append(f" (run {r.get('id')})\n", style="dim")
            elif f["key"] in rel.warns:
                t.append(f"\nrun {r.get('id')}: {visible(r.get('exception') or 'a crash')} at node "
                         f"{visible(rel.node)} — not what this warning predicts (a warning says waste, "
                         "not a crash)\n", style="dim")
        if view is not None and f["key"] in (view.data.get("flags") or {}) and not f.get("verdict"):
            t.append("\n⚑ flagged for later (l clears it; a verdict too)\n", style="magenta")
        judgments = f.get("judgments") or {}
        if judgments:
            t.append("\nJudgments\n", style="bold underline")
            for who, j in judgments.items():
                v = j.get("verdict")
                t.append(f"{visible(who)}: ", style="bold" if who == self.curator else "")
                t.append(VERDICT_LABEL.get(v, visible(v)), style=VERDICT_STYLE.get(v, ""))
                if j.get("note"):
                    t.append(f" — {visible_lines(clip(j['note'], 600))}", style="italic")
                t.append("\n")
        if spec is not None:
            for label, text in (("Condition", spec.condition), ("Why it costs", spec.why), ("Fix", spec.fix)):
                t.append(f"\n{label}\n", style="bold underline")
                t.append(visible_lines(text) + "\n")
        else:
            t.append("\n(rule not in this build's catalogue)\n", style="dim")

    # ---- cost -------------------------------------------------------------------------------------------
    def _fill_cost(self) -> None:
        d = self.view.data
        cost = d.get("cost") or {}
        t = Text()
        quote = cost.get("quote") or {}
        t.append("Quote\n", style="bold underline")
        if quote:
            t.append(money(quote.get("usd")), style="bold")
            t.append(f" for one training run on {visible(quote.get('device', '?'))}\n")
            for label, key, fmt in (("hours", "hours", lambda v: f"{v:,.2f}"),
                                    ("steps", "steps", lambda v: f"{v:,}"),
                                    ("batch size", "batch_size", lambda v: f"{v:,}"),
                                    ("price / hour", "price_per_hour", lambda v: f"${v:,.3f}"),
                                    ("peak TFLOPS", "peak_tflops", lambda v: f"{v:g}"),
                                    ("utilisation", "utilisation", lambda v: f"{100 * v:.0f}%"),
                                    ("prices of", "price_date", str)):
                if quote.get(key) is not None:
                    t.append(f"  {label:<13}", style="dim")
                    try:
                        t.append(visible(fmt(quote[key])) + "\n")
                    except (TypeError, ValueError):
                        t.append(_value_text(quote[key]) + "\n")
        else:
            t.append("no quote\n", style="dim")
        if d.get("cost_a10g_usd") is not None:
            t.append(f"  {'on A10G':<13}", style="dim")
            t.append(money(d["cost_a10g_usd"]) + "\n")
        t.append("\nSize\n", style="bold underline")
        for label, value in (("parameters", cost.get("params", d.get("params"))),
                             ("FLOPs/sample", cost.get("flops_per_sample", d.get("flops"))),
                             ("FLOPs/step", cost.get("train_flops_per_step"))):
            if value is None and label == "FLOPs/step":
                continue
            t.append(f"  {label:<13}", style="dim")
            try:
                t.append(big_number(value) + "\n")
            except (TypeError, ValueError):
                t.append(_value_text(value) + "\n")
        mem = cost.get("memory") or {}
        if isinstance(mem, dict) and mem:
            t.append("\nMemory (training)\n", style="bold underline")
            for k, v in mem.items():
                t.append(f"  {visible(str(k).replace('_bytes', '')):<13}", style="dim")
                try:
                    t.append(_bytes(v) + "\n")
                except (TypeError, ValueError):
                    t.append(_value_text(v) + "\n")
        assumptions = cost.get("assumptions") or []
        if assumptions:
            t.append("\nAssumptions\n", style="bold underline")
            for a in assumptions:
                t.append(f"  • {visible(a)}\n")
        self.query_one("#cost", TextPane).update(t)

    # ---- source ------------------------------------------------------------------------------------------
    def _fill_source(self) -> None:
        d = self.view.data
        t = Text()
        for label, key in (("id", "id"), ("name", "name"), ("author", "author"), ("model", "model"),
                           ("task set", "task_set"), ("run", "run"), ("parent", "parent"),
                           ("reference", "reference"), ("source", "source"), ("verifier", "verifier_version")):
            v = d.get(key)
            t.append(f"{label:<10}", style="dim")
            t.append(("—" if v in (None, "") else visible(v)) + "\n")
        if d.get("children"):
            t.append(f"{'children':<10}", style="dim")
            t.append(visible(", ".join(d["children"][:10])) + ("…" if len(d["children"]) > 10 else "") + "\n")
        if d.get("error"):
            t.append("\nnot generated: ", style="bold red")
            t.append(visible_lines(d["error"]) + "\n")
        graph = d.get("graph") or {}
        hidden = []
        for section in ("train", "meta"):
            block = graph.get(section)
            if not isinstance(block, dict) or not block:
                continue
            t.append(f"\n{section}\n", style="bold underline")
            for k, v in block.items():
                if section == "meta" and k in ANSWER_KEY_META:
                    hidden.append(f"meta.{k}")
                    continue
                t.append(f"  {visible(k):<12}", style="dim")
                t.append(_value_text(v) + "\n")
        extra = d.get("extra")
        if isinstance(extra, dict) and extra:
            shown = {k: v for k, v in extra.items() if k not in ANSWER_KEY_EXTRA}
            hidden += [f"batch field {k}" for k in extra if k in ANSWER_KEY_EXTRA]
            if shown:
                t.append("\nbatch fields\n", style="bold underline")
                t.append(visible_lines(json.dumps(shown, indent=1, default=str)) + "\n")
        if hidden:
            t.append(f"\nnot shown while judging (the generator's answer key): {visible(', '.join(hidden))}\n",
                     style="dim italic")
        self.query_one("#meta", TextPane).update(t)

    # ---- runs -----------------------------------------------------------------------------------------------
    def _fill_runs(self) -> None:
        d = self.view.data
        findings = d.get("findings") or []
        t = Text()
        live = [h for h in self.live_runs if h.result is None]
        for h in live:
            t.append(f"● {h.spec.kind} {h.status()}…", style="bold cyan")
            t.append(f" ({visible((h.spec.tags or {}).get('device_choice', h.spec.device))})\n", style="dim")
        runs = d.get("runs") or []
        for r in runs[:20]:
            t.append(f"#{r.get('id')} {visible(r.get('kind'))} ", style="bold")
            t.append_text(outcome_text(r, findings if r.get("kind") == "forward" else [], d.get("verdict")))
            if r.get("seconds") is not None:
                t.append(f"  {r['seconds']:.1f} s", style="dim")
            if r.get("ended_at") or r.get("created_at"):
                t.append(f"  {str(r.get('ended_at') or r.get('created_at'))[:16]}", style="dim")
            t.append("\n")
            if r.get("message") and r.get("status") != "ok":
                msg = visible(r["message"])
                t.append(f"   {msg[:300]}\n", style="red")
            m = r.get("metrics") or {}
            if r.get("kind") == "train" and m.get("loss_first") is not None:
                try:
                    t.append(f"   loss {float(m['loss_first']):.4g} → {float(m['loss_last']):.4g}\n", style="dim")
                except (TypeError, ValueError, KeyError):
                    pass
        if not runs and not live:
            t.append("No runs of this design yet. e: forward check · E: short training (the confirmation names "
                     "the device and what it will cost).", style="dim")
        self.query_one("#design-runs", TextPane).update(t)

    def runs_changed(self, live_runs: list) -> None:
        self.live_runs = list(live_runs)
        self.filled.discard("tab-runs")
        self.fill_active()

    # ---- recent verdicts --------------------------------------------------------------------------------------
    def show_recent(self, steps: list[dict]) -> None:
        ol = self.query_one("#recent", OptionList)
        keep = ol.highlighted
        ol.clear_options()
        options = []
        for s in steps:
            t = Text()
            t.append(f"{str(s.get('at') or '')[11:16]} ", style="dim")
            designs = s.get("designs") or []
            summary = clip(s["summary"], 200)
            if len(designs) == 1 and designs[0] not in summary:
                # a step on one design names it (enter opens it), even when its text was cut before the id
                summary = f"{designs[0]} · {summary}"
            t.append(visible(summary), style="dim strike" if s.get("undone") else "")
            options.append(Option(t, id=f"step{s['step']}:{designs[0] if designs else ''}"))
        if not options:
            options.append(Option(Text("nothing judged yet — your verdicts appear here (z undoes the newest)",
                                       style="dim"), disabled=True))
        ol.add_options(options)
        if keep is not None and keep < len(options):
            ol.highlighted = keep

"""One design: its graph, its findings with the catalogue's words, its cost; and judging.

Keys judge the highlighted finding (real / false alarm / unsure), then move
to the next finding not yet judged, and once a design is done, to the next
design in the queue still to judge. A design without findings is judged
clean, or given a missed defect. The note field takes the text that goes
with the next verdict; while it has focus, single-key shortcuts type into
it instead.
"""

from __future__ import annotations

import json
import time

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Header, Input, OptionList, ProgressBar, Static, TabbedContent, TabPane
from textual.widgets.option_list import Option

from ..widgets.design_model import DesignView, catalogue_entry, catalogue_ids
from ..widgets.graph_text import layout
from ..widgets.lines import Line, LinesView
from ..widgets.messages import DesignLoaded, NextFound
from ..widgets.queue_list import QueueModel

VERDICT_LABEL = {"real": "real", "false_alarm": "false alarm", "unsure": "unsure", "clean": "clean"}
VERDICT_STYLE = {"real": "bold red", "false_alarm": "bold green", "unsure": "bold yellow", "clean": "bold green"}


def _money(v) -> str:
    return "—" if v is None else f"${v:,.2f}"


def _big(n) -> str:
    if n is None:
        return "—"
    n = float(n)
    for unit, size in (("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(n) >= size:
            return f"{n / size:,.2f}{unit}"
    return f"{n:,.0f}"


def _bytes(n) -> str:
    if n is None:
        return "—"
    n = float(n)
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            return f"{n / size:,.1f} {unit}"
    return f"{n:,.0f} B"


def run_outcome(d: dict) -> Text | None:
    """The latest forward run beside the verdict: confirmed crash, cannot be built, or ran fine."""
    runs = [r for r in (d.get("runs") or []) if r.get("kind") == "forward"]
    if not runs:
        return None
    r = runs[0]
    t = Text("run: ", style="dim")
    status, exc = r.get("status"), r.get("exception")
    if status == "ok":
        t.append("ran fine", style="bold green")
        if d.get("verdict") == "block":
            t.append(" — a false refusal? judge the blocking findings", style="yellow")
    elif exc == "BuildError":
        t.append("cannot be built", style="bold red")
        if r.get("message"):
            t.append(f": {r['message'][:80]}", style="red")
    elif status == "failed":
        t.append(f"confirmed crash ({exc or 'error'})", style="bold red")
    else:
        t.append(status or "?", style="yellow")
    if r.get("device"):
        t.append(f" on {r['device']}", style="dim")
    return t


class DesignScreen(Screen):
    BINDINGS = [
        Binding("r", "judge('real')", "Real", id="judge_real"),
        Binding("f", "judge('false_alarm')", "False alarm", id="judge_false_alarm"),
        Binding("u", "judge('unsure')", "Unsure", id="judge_unsure"),
        Binding("c", "clean", "Clean", id="judge_clean"),
        Binding("m", "missed", "Missed", id="mark_missed"),
        Binding("n", "note", "Note", id="note"),
        Binding("right_square_bracket", "step(1)", "Next", id="next_design"),
        Binding("left_square_bracket", "step(-1)", "Prev", id="prev_design"),
        Binding("N", "next_unjudged", "Next to judge", id="next_unjudged", show=False),
        Binding("d", "diff", "Diff", id="diff"),
        Binding("D", "diff_pick", "Diff with…", id="diff_pick", show=False),
        Binding("g", "toggle_graph", "Full/near", id="toggle_graph", show=False),
        Binding("plus", "radius(1)", "Wider", id="wider", show=False),
        Binding("minus", "radius(-1)", "Narrower", id="narrower", show=False),
        Binding("e", "run_check('forward')", "Run check", id="run_check", show=False),
        Binding("E", "run_check('train')", "Train briefly", id="run_train", show=False),
        Binding("escape", "back", "Back", id="back"),
    ]
    ACTION_HELP = {
        "judge_real": "The highlighted finding is a real defect",
        "judge_false_alarm": "The highlighted finding is a false alarm",
        "judge_unsure": "Not sure about the highlighted finding",
        "judge_clean": "A design without findings: nothing wrong with it",
        "mark_missed": "Record a defect no rule reported (nodes, rule, description)",
        "note": "Type a note that goes with the next verdict",
        "next_design": "Next design in the queue",
        "prev_design": "Previous design in the queue",
        "next_unjudged": "Next design you have not finished judging",
        "diff": "Diff against the parent (or the reference architecture)",
        "diff_pick": "Diff against the parent, the reference, or a design picked from the queue",
        "toggle_graph": "Whole graph, or the neighbourhood of the highlighted finding",
        "wider": "Widen the neighbourhood",
        "narrower": "Narrow the neighbourhood",
        "run_check": "Run a forward check of this design in a child process (X: runs)",
        "run_train": "Train this design briefly on a synthetic task (loss curve on the runs screen)",
        "back": "Back to the queue",
    }

    def __init__(self, model: QueueModel, index: int | None = None, design_id: str | None = None) -> None:
        super().__init__()
        self.model = model
        self.index = index
        self.design_id = design_id if design_id is not None else model.ids[index]
        self.view: DesignView | None = None
        self.request = 0
        self.next_request = 0
        self.full_graph: bool | None = None  # None: decided by the graph's size
        self.radius = 2
        self.shown_id: str | None = None
        self.shown_at: float = 0.0
        self.shown_cpu: float = 0.0  # UI thread CPU time at that moment (benchmarks)
        self._focus_nodes: set = set()
        self._keep_key: str | None = None
        self._filled_tabs: set = set()

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="design-body"):
            with Vertical(id="graph-pane"):
                yield Static(id="graph-title")
                yield LinesView(id="graph")
            with Vertical(id="side-pane"):
                yield Static(id="design-summary")
                yield OptionList(id="findings")
                with TabbedContent(id="tabs"):
                    with TabPane("Finding", id="tab-finding"):
                        with VerticalScroll():
                            yield Static(id="finding-detail")
                    with TabPane("Cost", id="tab-cost"):
                        with VerticalScroll():
                            yield Static(id="cost")
                    with TabPane("Source", id="tab-source"):
                        with VerticalScroll():
                            yield Static(id="meta")
                with Horizontal(id="judge-row"):
                    yield Static(id="judge-label")
                    yield ProgressBar(total=1, show_eta=False, id="design-progress")
                note = Input(placeholder="note for the next verdict (n) — enter keeps it", id="note")
                note.cursor_blink = self.app.cursor_blink
                yield note
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#findings", OptionList).focus()
        self.show(self.design_id, self.index)

    # ---- loading -------------------------------------------------------------------
    def show(self, design_id: str, index: int | None) -> None:
        self.design_id = design_id
        self.index = index
        self.request += 1
        view = self.app.cached_view(design_id)
        if view is not None:
            self._display(view)
            return
        self.query_one("#graph-title", Static).update(f"loading {design_id}…")
        self.app.load_design(self, design_id, self.request)

    def on_design_loaded(self, message: DesignLoaded) -> None:
        message.stop()
        if message.request != self.request:
            self.app.cache_view(message.view)
            return
        if message.view is None:
            self.query_one("#graph-title", Static).update(f"{message.design_id}: not in the store")
            return
        self.app.cache_view(message.view)
        self._display(message.view)

    def reload_if_showing(self, design_id: str) -> None:
        if self.view is not None and self.view.id == design_id:
            self.show(design_id, self.index)

    def refresh_data(self) -> None:
        if self.view is not None:
            self.show(self.view.id, self.index)

    def worker_failed(self, group: str, text: str) -> None:
        if group == "design" and self.view is None:
            self.query_one("#graph-title", Static).update(f"could not load {self.design_id}: {text}")

    def _neighbours(self) -> list[str]:
        if self.index is None:
            return []
        out = []
        for k in (self.index + 1, self.index + 2, self.index - 1):
            if 0 <= k < len(self.model.ids):
                out.append(self.model.ids[k])
        return out

    # ---- drawing -------------------------------------------------------------------------
    def _display(self, view: DesignView) -> None:
        with self.app.batch_update():
            self._display_inner(view)

    def _display_inner(self, view: DesignView) -> None:
        self.view = view
        self.full_graph = None
        d = view.data
        pos = f"{self.index + 1:,}/{len(self.model):,} · " if self.index is not None else ""
        self.sub_title = f"{pos}{view.id}"
        summary = Text()
        summary.append(view.id, style="bold")
        if d.get("name") and d.get("name") != view.id:
            summary.append(f"  {d['name']}", style="dim")
        summary.append("\n")
        summary.append(f"{d.get('author')}", style="cyan")
        for k in ("model", "task_set", "run"):
            if d.get(k):
                summary.append(f" · {d[k]}")
        summary.append("\n")
        verdict = d.get("verdict") or "ungenerated"
        summary.append(verdict, style={"block": "bold red", "warn": "bold yellow", "pass": "bold green"}.get(
            verdict, "dim"))
        summary.append(f"  {d.get('n_block', 0)} block · {d.get('n_warn', 0)} warn\n")
        size = []
        if d.get("n_nodes") is not None:
            size.append(f"{d['n_nodes']} nodes")
        if d.get("params") is not None:
            size.append(f"{_big(d['params'])} params")
        if d.get("cost_a10g_usd") is not None:
            size.append(f"{_money(d['cost_a10g_usd'])} on A10G")
        summary.append(" · ".join(size), style="dim")
        outcome = run_outcome(d)
        if outcome is not None:
            summary.append("\n")
            summary.append_text(outcome)
        self.query_one("#design-summary", Static).update(summary, layout=False)
        keep, self._keep_key = self._keep_key, None
        self._fill_findings(keep)
        self._filled_tabs = set()
        self._fill_active_tab()
        self._update_judging()
        self._draw_graph()
        self.shown_id = view.id
        self.call_after_refresh(self._mark_shown, view.id)
        self.app.want_prefetch(self._neighbours())

    def _mark_shown(self, design_id: str) -> None:
        if self.shown_id == design_id:
            self.shown_at = time.perf_counter()
            self.shown_cpu = time.thread_time()

    def _finding_prompt(self, f: dict) -> Text:
        t = Text()
        if f.get("stale"):
            t.append("○ ", style="dim")
        elif f["severity"] == "block":
            t.append("✖ ", style="bold red")
        else:
            t.append("▲ ", style="bold yellow")
        t.append(f["rule"], style="dim" if f.get("stale") else "bold")
        nodes = ",".join(f.get("nodes") or [])
        if nodes:
            t.append(f"  @{nodes if len(nodes) <= 28 else nodes[:27] + '…'}", style="dim")
        v = f.get("verdict")
        if v:
            t.append(f"  [{VERDICT_LABEL[v]}]", style=VERDICT_STYLE[v])
        if f.get("stale"):
            t.append("  (no longer fires)", style="dim italic")
        return t

    def _fill_findings(self, keep: str | None = None) -> None:
        ol = self.query_one("#findings", OptionList)
        view = self.view
        ol.clear_options()
        findings = view.findings if view is not None else []
        if not findings:
            if view is not None and view.data.get("error") is not None:
                ol.add_option(Option(Text("not generated: nothing to judge", style="dim"), disabled=True))
            else:
                clean = view is not None and view.is_clean_marked(self.app.curator)
                msg = "no findings — marked clean ✓" if clean else "no findings — c: clean · m: missed defect"
                ol.add_option(Option(Text(msg, style="green" if clean else "dim"), disabled=True))
            self._show_finding(None)
            return
        ol.add_options([Option(self._finding_prompt(f), id=f["key"]) for f in findings])
        target = None
        if keep is not None:
            target = next((i for i, f in enumerate(findings) if f["key"] == keep), None)
        if target is None:
            target = next((i for i, f in enumerate(findings) if not f.get("stale") and not f.get("verdict")), 0)
        ol.highlighted = target
        self._show_finding(findings[target])

    def current_finding(self) -> dict | None:
        if self.view is None or not self.view.findings:
            return None
        i = self.query_one("#findings", OptionList).highlighted
        if i is None or i >= len(self.view.findings):
            return None
        return self.view.findings[i]

    def on_option_list_option_highlighted(self, message: OptionList.OptionHighlighted) -> None:
        if message.option_list.id != "findings" or self.view is None:
            return
        f = self.current_finding()
        self._show_finding(f)

    def _show_finding(self, f: dict | None) -> None:
        detail = self.query_one("#finding-detail", Static)
        if f is None:
            self._focus_nodes = set()
            view = self.view
            t = Text()
            if view is not None and view.data.get("missed_defects"):
                t.append("Missed defects marked\n", style="bold")
                for m in view.data["missed_defects"]:
                    t.append(f"• {m.get('rule') or '(no rule)'}", style="bold")
                    if m.get("nodes"):
                        t.append(f" @{','.join(m['nodes'])}", style="dim")
                    if m.get("description"):
                        t.append(f" — {m['description']}")
                    t.append(f"  ({m.get('curator')})\n", style="dim")
            else:
                t.append("Nothing reported on this design.", style="dim")
            detail.update(t)
            self._apply_graph_focus()
            return
        self._focus_nodes = set(f.get("nodes") or [])
        spec = catalogue_entry(f["rule"])
        t = Text()
        t.append(f["rule"], style="bold")
        t.append(f"  {f['severity']}", style="bold red" if f["severity"] == "block" else "bold yellow")
        if spec is not None:
            t.append(f"  {spec.title}\n", style="italic")
        else:
            t.append("\n")
        t.append(f"{f.get('message') or ''}\n", style="")
        if f.get("nodes"):
            t.append("nodes: ", style="dim")
            t.append(", ".join(f["nodes"]) + "\n")
        if spec is not None:
            for label, text in (("Condition", spec.condition), ("Why it costs", spec.why), ("Fix", spec.fix)):
                t.append(f"\n{label}\n", style="bold underline")
                t.append(text + "\n")
        else:
            t.append("\n(rule not in this build's catalogue)\n", style="dim")
        judgments = f.get("judgments") or {}
        if judgments:
            t.append("\nJudgments\n", style="bold underline")
            for who, j in judgments.items():
                v = j.get("verdict")
                t.append(f"{who}: ", style="bold" if who == self.app.curator else "")
                t.append(VERDICT_LABEL.get(v, str(v)), style=VERDICT_STYLE.get(v, ""))
                if j.get("note"):
                    t.append(f" — {j['note']}", style="italic")
                t.append("\n")
        detail.update(t)
        self._apply_graph_focus()

    def _fill_active_tab(self) -> None:
        """Fill the visible tab now; the others when they are opened (less to draw per design)."""
        if self.view is None:
            return
        active = self.query_one("#tabs", TabbedContent).active
        if active in self._filled_tabs:
            return
        if active == "tab-cost":
            self._fill_cost()
        elif active == "tab-source":
            self._fill_meta()
        self._filled_tabs.add(active)

    def on_tabbed_content_tab_activated(self, message: TabbedContent.TabActivated) -> None:
        self._fill_active_tab()

    def _fill_cost(self) -> None:
        d = self.view.data
        cost = d.get("cost") or {}
        t = Text()
        quote = cost.get("quote") or {}
        t.append("Quote\n", style="bold underline")
        if quote:
            t.append(f"{_money(quote.get('usd'))}", style="bold")
            t.append(f" for one training run on {quote.get('device', '?')}\n")
            for label, key, fmt in (("hours", "hours", lambda v: f"{v:,.2f}"),
                                    ("steps", "steps", lambda v: f"{v:,}"),
                                    ("batch size", "batch_size", lambda v: f"{v:,}"),
                                    ("price / hour", "price_per_hour", lambda v: f"${v:,.3f}"),
                                    ("peak TFLOPS", "peak_tflops", lambda v: f"{v:g}"),
                                    ("utilisation", "utilisation", lambda v: f"{100 * v:.0f}%"),
                                    ("prices of", "price_date", str)):
                if quote.get(key) is not None:
                    t.append(f"  {label:<13}", style="dim")
                    t.append(fmt(quote[key]) + "\n")
        else:
            t.append("no quote\n", style="dim")
        if d.get("cost_a10g_usd") is not None:
            t.append(f"  {'on A10G':<13}", style="dim")
            t.append(_money(d["cost_a10g_usd"]) + "\n")
        t.append("\nSize\n", style="bold underline")
        t.append(f"  {'parameters':<13}", style="dim")
        t.append(_big(cost.get("params", d.get("params"))) + "\n")
        t.append(f"  {'FLOPs/sample':<13}", style="dim")
        t.append(_big(cost.get("flops_per_sample", d.get("flops"))) + "\n")
        if cost.get("train_flops_per_step") is not None:
            t.append(f"  {'FLOPs/step':<13}", style="dim")
            t.append(_big(cost["train_flops_per_step"]) + "\n")
        mem = cost.get("memory") or {}
        if mem:
            t.append("\nMemory (training)\n", style="bold underline")
            for k, v in mem.items():
                t.append(f"  {k.replace('_bytes', ''):<13}", style="dim")
                t.append(_bytes(v) + "\n")
        for a in cost.get("assumptions") or []:
            if a == (cost.get("assumptions") or [None])[0]:
                t.append("\nAssumptions\n", style="bold underline")
            t.append(f"  • {a}\n")
        self.query_one("#cost", Static).update(t)

    def _fill_meta(self) -> None:
        d = self.view.data
        t = Text()
        for label, key in (("id", "id"), ("name", "name"), ("author", "author"), ("model", "model"),
                           ("task set", "task_set"), ("run", "run"), ("parent", "parent"),
                           ("reference", "reference"), ("source", "source"), ("verifier", "verifier_version")):
            v = d.get(key)
            t.append(f"{label:<10}", style="dim")
            t.append(("—" if v in (None, "") else str(v)) + "\n")
        if d.get("children"):
            t.append(f"{'children':<10}", style="dim")
            t.append(", ".join(d["children"][:10]) + ("…" if len(d["children"]) > 10 else "") + "\n")
        if d.get("error"):
            t.append("\nnot generated: ", style="bold red")
            t.append(d["error"] + "\n")
        graph = d.get("graph") or {}
        for section in ("train", "meta"):
            if graph.get(section):
                t.append(f"\n{section}\n", style="bold underline")
                for k, v in graph[section].items():
                    t.append(f"  {k:<12}", style="dim")
                    t.append((v if isinstance(v, str) else json.dumps(v)) + "\n")
        if d.get("extra"):
            t.append("\nbatch fields\n", style="bold underline")
            t.append(json.dumps(d["extra"], indent=1) + "\n")
        runs = d.get("runs") or []
        if runs:
            t.append("\nruns\n", style="bold underline")
            for r in runs[:8]:
                t.append(f"  {r.get('kind')} {r.get('status')}", style="bold")
                if r.get("exception"):
                    t.append(f" {r['exception']}", style="red")
                if r.get("device"):
                    t.append(f" on {r['device']}", style="dim")
                t.append("\n")
        self.query_one("#meta", Static).update(t)

    def _update_judging(self) -> None:
        view = self.view
        done, total = view.judged_count() if view is not None else (0, 0)
        bar = self.query_one("#design-progress", ProgressBar)
        label = self.query_one("#judge-label", Static)
        session = len(self.app.session)
        if view is not None and total == 0 and view.data.get("error") is None:
            clean = view.is_clean_marked(self.app.curator)
            bar.update(total=1, progress=1 if clean else 0)
            label.update(f"{'clean ✓' if clean else 'to mark'} · {session} this session", layout=False)
        else:
            bar.update(total=max(total, 1), progress=done)
            label.update(f"{done}/{total} judged · {session} this session", layout=False)

    # ---- the graph ---------------------------------------------------------------------
    def _graph_full(self) -> bool:
        if self.full_graph is not None:
            return self.full_graph
        return not (self.view is not None and self.view.big)

    def _draw_graph(self) -> None:
        gv = self.query_one("#graph", LinesView)
        title = self.query_one("#graph-title", Static)
        view = self.view
        if view is None or view.graph is None:
            gv.set_lines([Line(Text(view.problem if view is not None else "", style="dim italic"))])
            title.update("no graph", layout=False)
            return
        n = view.graph.n_nodes
        if self._graph_full():
            gv.set_lines(view.full_lines)
            title.update(Text.assemble(("Graph", "bold"), f" · {n} nodes · layered, shapes on edges"
                                       + (" · g: neighbourhood" if view.big else "")), layout=False)
        else:
            focus = self._focus_nodes or {view.graph.order[0]} if view.graph.order else set()
            subset = view.graph.neighbourhood(focus, self.radius)
            gv.set_lines(layout(view.graph, subset))
            names = ", ".join(sorted(focus))
            shown = names if len(names) < 40 else names[:39] + "…"
            title.update(Text.assemble(("Graph", "bold"), f" · {n} nodes · within {self.radius} of "
                                       f"{shown} · g: whole · +/-: radius"), layout=False)
        self._apply_graph_focus(redraw=False)

    def _apply_graph_focus(self, redraw: bool = True) -> None:
        view = self.view
        if view is None or view.graph is None:
            return
        gv = self.query_one("#graph", LinesView)
        if redraw and not self._graph_full():
            self._draw_graph()
            return
        gv.set_highlight(self._focus_nodes)
        if self._focus_nodes:
            first = next((i for i, ln in enumerate(gv.lines) if ln.key in self._focus_nodes and ln.selectable),
                         None)
            if first is not None:
                gv.reveal(first, center=True)

    def action_toggle_graph(self) -> None:
        self.full_graph = not self._graph_full()
        self._draw_graph()

    def action_radius(self, delta: int) -> None:
        self.radius = max(1, min(self.radius + delta, 12))
        if self._graph_full():
            self.full_graph = False
        self._draw_graph()

    # ---- judging --------------------------------------------------------------------------
    def _take_note(self) -> str | None:
        note = self.query_one("#note", Input)
        text = note.value.strip() or None
        note.value = ""
        return text

    def action_judge(self, verdict: str) -> None:
        view = self.view
        if view is None:
            return
        if view.data.get("error") is not None:
            self.notify("an ungenerated design has nothing to judge", severity="warning")
            return
        f = self.current_finding()
        if f is None:
            self.notify("no finding here — c marks the design clean, m records a missed defect",
                        severity="warning")
            return
        self.app.judge(view, f, verdict, self._take_note())
        self._after_judgment(f["key"])

    def _after_judgment(self, key: str | None) -> None:
        view = self.view
        self._update_judging()
        findings = view.findings
        if key is None:
            self._fill_findings()
            self._advance_design()
            return
        i = next((k for k, f in enumerate(findings) if f["key"] == key), 0)
        ol = self.query_one("#findings", OptionList)
        ol.replace_option_prompt_at_index(i, self._finding_prompt(findings[i]))
        order = list(range(i + 1, len(findings))) + list(range(0, i))
        nxt = next((k for k in order if not findings[k].get("stale") and not findings[k].get("verdict")), None)
        if nxt is not None:
            ol.highlighted = nxt
            return
        self._show_finding(findings[i])
        if all(f.get("verdict") for f in view.live_findings):
            self._advance_design()

    def _advance_design(self) -> None:
        if self.index is None:
            return
        start = self.index + 1
        self.next_request += 1
        if start >= len(self.model.ids):
            self.notify("that was the last design in the queue")
            return
        self.app.find_next(self, self.model.ids[start:], start, self.next_request)

    def on_next_found(self, message: NextFound) -> None:
        message.stop()
        if message.request != self.next_request:
            return
        if message.index is None:
            self.notify("nothing left to judge in this queue ✓")
            return
        self.show(self.model.ids[message.index], message.index)

    def action_next_unjudged(self) -> None:
        self._advance_design()

    def action_clean(self) -> None:
        view = self.view
        if view is None:
            return
        if view.data.get("error") is not None:
            self.notify("an ungenerated design has nothing to judge", severity="warning")
            return
        if view.live_findings:
            self.notify("this design has findings: judge them (r / f / u) instead", severity="warning")
            return
        if view.is_clean_marked(self.app.curator):
            self.notify("already marked clean")
            return
        self.app.judge(view, None, "clean", self._take_note())
        self._after_judgment(None)

    def action_missed(self) -> None:
        from .modals import MissedDefectScreen

        view = self.view
        if view is None or view.graph is None:
            self.notify("no graph to mark a defect on", severity="warning")
            return
        gv = self.query_one("#graph", LinesView)
        cursor_node = gv.key_at() if gv.has_focus else None
        nodes = [cursor_node] if cursor_node else sorted(self._focus_nodes)
        node_ids = [n for n in view.graph.order]

        def done(result) -> None:
            if result:
                self.app.mark_missed(view, result["nodes"], result["rule"], result["description"])
                self.notify(f"missed defect recorded on {view.id}")
                if self.view is view and self.current_finding() is None:
                    self._show_finding(None)

        self.app.push_screen(MissedDefectScreen(view.id, nodes, node_ids, catalogue_ids()), done)

    def action_note(self) -> None:
        self.query_one("#note", Input).focus()

    def on_input_submitted(self, message: Input.Submitted) -> None:
        if message.input.id != "note":
            return
        message.stop()
        self.query_one("#findings", OptionList).focus()
        if message.value.strip():
            self.notify("the note goes with your next verdict", timeout=3)

    def write_done(self, op) -> None:
        if self.view is None:
            return
        if op.kind == "undo" and op.event.design_id != self.view.id and self.is_current:
            # show what was undone
            idx = self.model.index_of(op.event.design_id)
            self.show(op.event.design_id, idx)
        elif op.kind == "undo" and op.event.design_id == self.view.id:
            key = op.event.finding_key
            self._keep_key = key
            self.request += 1
            self.app.load_design(self, self.view.id, self.request)
        self._update_judging()

    # ---- moving ----------------------------------------------------------------------------
    def action_step(self, delta: int) -> None:
        if self.index is None:
            return
        k = self.index + delta
        if not 0 <= k < len(self.model.ids):
            self.notify("start of the queue" if k < 0 else "end of the queue")
            return
        self.show(self.model.ids[k], k)

    def action_back(self) -> None:
        note = self.query_one("#note", Input)
        if note.has_focus:
            self.query_one("#findings", OptionList).focus()
            return
        self.dismiss()

    def on_screen_resume(self) -> None:
        if self.view is not None:
            self._update_judging()

    # ---- diff and runs ------------------------------------------------------------------------
    def _open_diff(self, kind: str, name: str) -> None:
        from .diff import DiffScreen

        self.app.push_screen(DiffScreen(self.view, kind, name))

    def action_diff(self) -> None:
        view = self.view
        if view is None or view.design is None:
            self.notify("no graph to diff", severity="warning")
            return
        d = view.data
        if d.get("parent") and d.get("parent_stored"):
            self._open_diff("parent", d["parent"])
        elif d.get("reference"):
            self._open_diff("reference", d["reference"])
        else:
            self.action_diff_pick()

    def action_diff_pick(self) -> None:
        from .modals import ChoiceScreen, PromptScreen
        from .queue import QueueScreen

        view = self.view
        if view is None or view.design is None:
            self.notify("no graph to diff", severity="warning")
            return
        d = view.data
        choices = []
        if d.get("parent"):
            choices.append((("parent", d["parent"]), f"parent: {d['parent']}"
                            + ("" if d.get("parent_stored") else " (not in the store)")))
        if d.get("reference"):
            choices.append((("reference", d["reference"]), f"reference: {d['reference']}"))
        choices.append((("pick", None), "a design picked from the queue…"))
        choices.append((("named", None), "a reference architecture by name…"))

        def picked_design(design_id) -> None:
            if design_id:
                self._open_diff("design", design_id)

        def named(name) -> None:
            if name:
                self._open_diff("reference", name.strip())

        def chosen(value) -> None:
            if value is ChoiceScreen.CANCELLED or value is None:
                return
            kind, name = value
            if kind == "pick":
                pick_model = QueueModel(filters={}, sort=self.model.sort)
                self.app.push_screen(QueueScreen(pick_model, pick=True,
                                                 title=f"pick the design to compare {view.id} with"),
                                     picked_design)
            elif kind == "named":
                self.app.push_screen(PromptScreen("Reference architecture", "e.g. resnet18"), named)
            else:
                self._open_diff(kind, name)

        self.app.push_screen(ChoiceScreen(f"Compare {view.id} with…", choices), chosen)

    def action_run_check(self, kind: str = "forward") -> None:
        if self.view is None:
            return
        if self.view.data.get("error") is not None:
            self.notify("an ungenerated design has nothing to run", severity="warning")
            return
        self.app.launch_run(self.view.id, kind)

"""One design: its graph, its findings with the catalogue's words, its cost, its runs; and judging.

The panes are widgets of their own (`tui.components`); this screen wires
them and owns the keys. A verdict key judges the highlighted finding and
moves to the next one still to judge; the verdict that finishes a design
opens the next design still to judge (re-judging a finding on a finished
design stays on it). `l` flags a finding (or a design) for later: it is
passed by until judged. `b` gives one verdict to every finding of the
highlighted finding's rule, on this design or in the queue's filter, with
a count first; one `z` takes it back. The note field belongs to the
highlighted finding (see `tui.components.judge_bar`). Missed defects are
listed with the findings; `x` retracts one of yours.
"""

from __future__ import annotations

import time

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.reactive import Reactive
from textual.screen import Screen
from textual.widgets import Input, OptionList

from ..components.detail import DesignTabs
from ..components.findings import VERDICT_LABEL, FindingsList, finding_label, item_key
from ..components.graph_pane import GraphPane
from ..components.judge_bar import JudgeBar, clip
from ..components.run_outcome import relation
from ..components.summary import DesignSummary
from ..sanitise import visible
from ..widgets.design_model import DesignView, catalogue_entry, catalogue_ids
from ..widgets.footer import AppFooter
from ..widgets.header import AppHeader
from ..widgets.messages import BulkPreview, DesignLoaded, NextFound, RecentLoaded, RepairReady
from ..widgets.queue_list import QueueModel

TABS = Binding.Group("Tabs", compact=True)  # 1-5 shown once in the footer
REPAIR_TIME_LIMIT_S = 10.0  # the repair search's bound in the app (the command line's default is 20 s)


def run_warnings(data: dict, kind: str) -> list[str]:
    """Why a training of this design is likely wasted: blocked by the verifier, or its forward run failed."""
    if kind != "train":
        return []
    out = []
    if data.get("verdict") == "block":
        rules = sorted({f["rule"] for f in data.get("findings") or [] if f.get("severity") == "block"
                        and not f.get("stale")})
        out.append(f"{visible(data.get('id'))} is blocked ({visible(', '.join(rules[:3]) or 'a block finding')}): "
                   "the verifier expects training to fail at its first step")
    forward = [r for r in data.get("runs") or [] if r.get("kind") == "forward"]
    if forward and forward[0].get("status") != "ok":
        r = forward[0]
        out.append(f"its last forward run (#{r.get('id')}) ended {visible(r.get('exception') or r.get('status'))}: "
                   "training runs the same forward pass")
    return out


class DesignScreen(Screen):
    # The sub-title (queue position and design id) changes on every step; Screen's own reactive
    # repaints the whole screen when it does, and the header redraws it anyway (its watcher).
    sub_title: Reactive[str | None] = Reactive(None, compute=False, repaint=False)

    BINDINGS = [
        Binding("r", "judge('real')", "Real", id="judge_real"),
        Binding("f", "judge('false_alarm')", "False alarm", id="judge_false_alarm"),
        Binding("u", "judge('unsure')", "Unsure", id="judge_unsure"),
        Binding("c", "clean", "Clean", id="judge_clean"),
        Binding("l", "later", "Later", id="flag_later"),
        Binding("b", "bulk", "Bulk", id="judge_bulk"),
        Binding("m", "missed", "Missed", id="mark_missed"),
        Binding("x", "retract", "Retract missed", id="retract_missed", show=False),
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
        Binding("P", "propose_repair", "Repair", id="propose_repair", show=False),
        Binding("1", "tab('tab-finding')", "Finding tab", id="tab_finding", group=TABS),
        Binding("2", "tab('tab-cost')", "Cost tab", id="tab_cost", group=TABS),
        Binding("3", "tab('tab-source')", "Source tab", id="tab_source", group=TABS),
        Binding("4", "tab('tab-runs')", "Runs tab", id="tab_runs", group=TABS),
        Binding("5", "tab('tab-recent')", "Recent tab", id="tab_recent", group=TABS),
        Binding("escape", "back", "Back", id="back"),
    ]
    ACTION_HELP = {
        "judge_real": "The highlighted finding is a real defect",
        "judge_false_alarm": "The highlighted finding is a false alarm",
        "judge_unsure": "Not sure about the highlighted finding",
        "judge_clean": "A design without findings: nothing wrong with it",
        "flag_later": "Flag the highlighted finding (or the design) for later: passed by until judged",
        "judge_bulk": "One verdict for every finding of this rule, on this design or in the queue's filter",
        "mark_missed": "Record a defect no rule reported (nodes, rule from the catalogue, description)",
        "retract_missed": "Retract the highlighted missed defect (yours)",
        "note": "The note of the highlighted finding (goes with its verdict; enter saves it on a judged one)",
        "next_design": "Next design in the queue",
        "prev_design": "Previous design in the queue",
        "next_unjudged": "Next design you have not finished judging (flagged ones passed by)",
        "diff": "Diff against the parent (or the reference architecture)",
        "diff_pick": "Diff against the parent, the reference, or a design picked from the queue",
        "toggle_graph": "Whole graph, or the neighbourhood of the highlighted finding",
        "wider": "Widen the neighbourhood",
        "narrower": "Narrow the neighbourhood",
        "run_check": "Run a forward check of this design (asks the device, says the cost first)",
        "run_train": "Train this design briefly on a synthetic task (asks the device, says the cost first)",
        "propose_repair": "Propose the smallest verified repair of every block: the diff, the cost before and "
                          "after; s there stores it as a new version",
        "tab_finding": "Show the Finding tab: the highlighted finding in the catalogue's words, its judgments",
        "tab_cost": "Show the Cost tab: the quote, the size, the memory",
        "tab_source": "Show the Source tab: where the design came from, its train settings",
        "tab_runs": "Show the Runs tab: the design's runs, live and stored",
        "tab_recent": "Show the Recent tab: your latest steps (enter opens one's design)",
        "back": "Back to the queue (from a pane or the tab bar: back to the findings list first)",
    }

    def __init__(self, model: QueueModel, index: int | None = None, design_id: str | None = None) -> None:
        super().__init__()
        self.model = model
        self.index = index
        self._ids_read: list[str] | None = None
        self.design_id = design_id if design_id is not None else model.ids[index]
        self.view: DesignView | None = None
        self.request = 0
        self.next_request = 0
        self.bulk_request = 0
        self.shown_id: str | None = None
        self.shown_at: float = 0.0
        self.shown_cpu: float = 0.0  # UI thread CPU time at that moment (benchmarks)
        self._keep_key = None
        self._last_item: tuple = ()
        self._lost: str | None = None  # a re-read lost the highlighted finding: judging waits for a move
        self._opening: str | None = None  # another design is being opened: judging keys wait for it

    def compose(self) -> ComposeResult:
        yield AppHeader()
        with Horizontal(id="design-body"):
            yield GraphPane(id="graph-pane")
            with Vertical(id="side-pane"):
                yield DesignSummary(id="design-summary")
                yield FindingsList(id="findings")
                yield DesignTabs(id="design-tabs")
                yield JudgeBar(id="judge-bar", cursor_blink=self.app.cursor_blink)
        yield AppFooter()

    # the panes
    @property
    def graph(self) -> GraphPane:
        return self.query_one(GraphPane)

    @property
    def findings(self) -> FindingsList:
        return self.query_one(FindingsList)

    @property
    def tabs(self) -> DesignTabs:
        return self.query_one(DesignTabs)

    @property
    def judge_bar(self) -> JudgeBar:
        return self.query_one(JudgeBar)

    def on_resize(self) -> None:
        self.set_class(self.size.width < 110, "narrow")
        self.set_class(self.size.height < 32, "short")

    def on_mount(self) -> None:
        if self not in self.app.screen_stack:
            return  # closed before it was mounted (a key pressed at once): nothing to set up
        self.on_resize()
        self.findings.focus()
        self.show(self.design_id, self.index)

    def on_tabbed_content_tab_activated(self, message) -> None:
        if message.pane.id == "tab-recent" and self.tabs.recent_stale:
            self.load_recent()

    # ---- loading -------------------------------------------------------------------
    def show(self, design_id: str, index: int | None) -> None:
        self.design_id = design_id
        self.index = index
        self.request += 1
        view = self.app.cached_view(design_id)
        if view is not None:
            self._display(view)
            return
        if self.view is not None and self.view.id != design_id:
            self._opening = design_id
        self.graph.title(f"loading {design_id}…")
        self.app.load_design(self, design_id, self.request)

    def on_design_loaded(self, message: DesignLoaded) -> None:
        message.stop()
        if message.request != self.request:
            self.app.cache_view(message.view)
            return
        if message.view is None:
            self._opening = None
            self.graph.title(f"{message.design_id}: not in the store")
            return
        self.app.cache_view(message.view)
        self._display(message.view)

    def reload_if_showing(self, design_id: str) -> None:
        if self.view is not None and self.view.id == design_id:
            self.show(design_id, self.index)  # the highlight stays on its finding (see _display_inner)

    def refresh_data(self) -> None:
        if self.view is not None:
            self.show(self.view.id, self.index)

    def on_worker_state_changed(self, event) -> None:
        # this screen's own workers (recent, bulk-preview, repair, run-offer): Worker.StateChanged stops at
        # the node that runs the worker, so a failure is handed to the app's one report
        self.app.report_worker(event)

    def worker_failed(self, group: str, text: str) -> None:
        if group in ("run-offer", "bulk-preview"):
            self.app.keys.refused(f"{group} failed")
        if group in ("design", "next"):
            self._opening = None  # nothing is coming: the design on screen is the one judged
        if group == "design" and self.view is None:
            self.graph.title(f"could not load {self.design_id}: {text}")

    def _neighbours(self) -> list[str]:
        if self.index is None:
            return []
        return [self.model.ids[k] for k in (self.index + 1, self.index + 2, self.index - 1)
                if 0 <= k < len(self.model.ids)]

    def _live_runs(self, design_id: str) -> list:
        return [h for h in self.app.run_handles if (h.spec.tags or {}).get("design_id") == design_id]

    def _run_marks(self, view: DesignView) -> dict:
        runs = [r for r in (view.data.get("runs") or []) if r.get("kind") == "forward"]
        if not runs:
            return {}
        rel = relation(runs[0], view.data.get("findings") or [])
        return {k: rel.kind for k in rel.keys}

    # ---- drawing -------------------------------------------------------------------------
    def _display(self, view: DesignView) -> None:
        if self not in self.app.screen_stack:
            return  # a result that arrived after the screen was closed: nothing to draw on
        with self.app.batch_update():
            self._display_inner(view)

    def _display_inner(self, view: DesignView) -> None:
        self._opening = None  # the design asked for is on screen: judging keys act on it again
        same = self.view is not None and self.view.id == view.id
        keep, self._keep_key = self._keep_key, None
        lost = None
        if same:
            self._resync_index()  # the same design read again: the queue may have been re-read meanwhile
            if keep is None:
                # a re-read (F5, an import or archive from outside, a write coming back): the highlight
                # stays on its finding by key, never by position
                current = self.findings.current()
                keep = item_key(current)
                if current is not None and current[0] == "finding":
                    lost = finding_label(current[1])
        self.view = view
        self.app.last_design_shown = (self.model, view.id)  # the queue's cursor follows it (on return)
        self._ids_read = self.model.ids  # the queue as it was when this design was shown (see _resync_index)
        self._show_title()
        live = self._live_runs(view.id)
        self.query_one(DesignSummary).show(view, live)
        kept = self.findings.show(view, self.app.curator, keep, self._run_marks(view))
        if lost is not None and not kept:
            # the finding being judged is gone (re-verified, archived): say so; the next judging key
            # is refused until the highlight is moved, so no verdict lands on another finding unseen
            self._lost = lost
            self.findings.focus()
            self.notify(f"{self._lost} is no longer on {view.id}: nothing was judged; the highlight moved — "
                        "check it before judging", severity="warning", timeout=8)
        self.tabs.show(view, self.app.curator, live)
        focus = self._item_changed(draw_graph=False)
        self._update_judging()
        self.graph.show(view, focus)
        self.shown_id = view.id
        self.call_after_refresh(self._mark_shown, view.id)

    def _show_title(self) -> None:
        """Queue position and id; a design no longer in the queue (archived from outside) says so."""
        view = self.view
        if view is None:
            return
        ids = self.model.ids
        if self.index is None:
            pos = ""
        elif 0 <= self.index < len(ids) and ids[self.index] == view.id:
            pos = f"{self.index + 1:,}/{len(ids):,} · "
        elif self.model.index_of(view.id) is None:
            pos = "not in the queue now (archived or filtered out) · "
        else:
            self._resync_index()
            pos = f"{self.index + 1:,}/{len(ids):,} · "
        self.sub_title = visible(f"{pos}{view.id}")

    def queue_changed(self, model) -> None:
        """The queue was read again (an import or archive from outside, F5): the title's position follows."""
        if model is self.model:
            self._show_title()

    def _mark_shown(self, design_id: str) -> None:
        if self.shown_id == design_id:
            self.shown_at = time.perf_counter()
            self.shown_cpu = time.thread_time()
            # The neighbours are read and laid out once this design is on screen: the worker's pure
            # Python (parse, shapes, layout) holds the GIL, and started earlier it slowed this frame.
            self.app.want_prefetch(self._neighbours())

    def on_option_list_option_highlighted(self, message: OptionList.OptionHighlighted) -> None:
        if message.option_list.id == "findings" and self.view is not None:
            message.stop()
            if self._item_key() != self._last_item:
                self._lost = None  # the curator moved the highlight: judging is theirs again
                self._item_changed()

    def _item_key(self) -> tuple:
        item = self.findings.current()
        if item is None:
            return (self.view.id if self.view else None, None, None)
        kind, obj = item
        return (self.view.id, kind, obj.get("key") if kind == "finding" else id(obj))

    def _item_changed(self, draw_graph: bool = True) -> tuple:
        """The highlight moved (or the design changed): detail, graph focus, and the note field follow.
        Returns the nodes to focus the graph on."""
        self._last_item = self._item_key()
        item = self.findings.current()
        self.tabs.show_item(item)
        focus: tuple = ()
        if item is None:
            key, label = (self.view.id if self.view else None, None), "the design"
            mine = (self.view.data.get("design_judgments") or {}).get(self.app.curator) if self.view else None
        else:
            kind, obj = item
            focus = tuple(obj.get("nodes") or ())
            if kind == "missed":
                self._attach_note((self.view.id, "missed", obj.get("id")), None, False, "this missed defect")
                if draw_graph:
                    self.graph.set_focus(focus)
                return focus
            # the design is part of the key: two designs share rule@node keys (a note typed on one design's
            # finding must never go with a verdict on the next design's finding of the same rule and node)
            key, label = (self.view.id, obj["key"]), visible(finding_label(obj))
            mine = (obj.get("judgments") or {}).get(self.app.curator)
        if draw_graph:
            self.graph.set_focus(focus)
        self._attach_note(key, (mine or {}).get("note"), bool(mine), label)
        return focus

    def _attach_note(self, key, note: str | None, judged: bool, label: str) -> None:
        """The note field follows the highlight. The same finding shown again (a re-read of the store)
        keeps what is being typed; leaving a finding with a note typed and not saved says so."""
        bar = self.judge_bar
        if bar.note_key == key and bar.unsaved is not None:
            return
        what = bar.note_label
        dropped = bar.attach_note(key, note, judged, label)
        if dropped:
            self.notify(f"note not saved (it was for {what}): {clip(dropped, 80)}", severity="warning", timeout=6)

    def _update_judging(self) -> None:
        view = self.view
        done, total = view.judged_count() if view is not None else (0, 0)
        flagged = len(view.data.get("flags") or {}) if view is not None else 0
        later = f" · ⚑ {flagged} later" if flagged else ""
        saved = self.app.writes_status()
        if view is not None and total == 0 and view.data.get("error") is None:
            clean = view.is_clean_marked(self.app.curator)
            self.judge_bar.progress(1 if clean else 0, 1, f"{'clean ✓' if clean else 'to mark'}{later} · {saved}")
        else:
            self.judge_bar.progress(done, total, f"{done}/{total} judged{later} · {saved}")

    def writes_changed(self) -> None:
        if self.is_mounted and self.view is not None:
            self._update_judging()

    # ---- the graph ---------------------------------------------------------------------
    def action_toggle_graph(self) -> None:
        self.graph.toggle()

    def action_radius(self, delta: int) -> None:
        self.graph.widen(delta)

    # ---- judging --------------------------------------------------------------------------
    def _judgeable(self) -> bool:
        view = self.view
        if view is None:
            self.app.bell()
            self.notify(f"still opening {self.design_id}… that key was not applied", severity="warning", timeout=3)
            return False
        if self._still_opening("that key"):
            # a key pressed in a burst after the verdict that finished a design, or after ] : the design
            # on screen is on its way out, and the next is not drawn yet. Dropped, not queued: a verdict
            # is only ever given on a finding the curator has seen.
            return False
        if self._lost is not None:
            self.app.bell()
            self.notify(f"{self._lost} is gone: the highlight is on another finding now — move it (or press "
                        "the key again) to judge", severity="warning", timeout=6)
            self._lost = None
            return False
        if view.data.get("error") is not None:
            self.notify("an ungenerated design has nothing to judge", severity="warning")
            return False
        return True

    def action_judge(self, verdict: str) -> None:
        if not self._judgeable():
            return
        view = self.view
        f = self.findings.current_finding()
        if f is None:
            what = "a missed defect is not judged (x retracts yours)" if self.findings.current() else \
                "no finding here — c marks the design clean, m records a missed defect"
            self.notify(what, severity="warning")
            return
        was_judged = bool(f.get("verdict"))
        design_done = self._design_done()
        self.app.judge(view, f, verdict, self.judge_bar.take_note())
        self._after_step(f["key"], was_judged, design_done)

    def _design_done(self) -> bool:
        view = self.view
        return bool(view.live_findings) and all(f.get("verdict") for f in view.live_findings)

    def _after_step(self, key: str | None, was_judged: bool, design_done: bool) -> None:
        """After a verdict or a flag on finding `key`: redraw it; re-judging stays put; else on to the next
        finding still to judge, and when none is left and this step finished the design, the next design."""
        view = self.view
        self._update_judging()
        fl = self.findings
        fl.run_marks = self._run_marks(view)
        fl.refresh_finding(key)
        self._item_changed()
        if was_judged:
            return  # re-judging: stay on the finding, on this design
        findings = view.findings
        flags = view.data.get("flags") or {}
        i = next((k for k, f in enumerate(findings) if f["key"] == key), 0)
        order = list(range(i + 1, len(findings))) + list(range(0, i))
        nxt = next((k for k in order if not findings[k].get("stale") and not findings[k].get("verdict")
                    and findings[k]["key"] not in flags), None)
        if nxt is not None:
            fl.highlighted = nxt
            return
        if not design_done and all(f.get("verdict") or f["key"] in flags for f in view.live_findings):
            self._advance_design()

    def _resync_index(self) -> None:
        """The queue was re-read meanwhile (an import or archive from outside): find this design in it
        again, or, archived, stand just before the design that took its place."""
        if self.index is None or self.view is None:
            return
        ids = self.model.ids
        if 0 <= self.index < len(ids) and ids[self.index] == self.view.id:
            return
        k = self.model.index_of(self.view.id)
        if k is None:  # gone: the first design after it, in the list it was read from, that is still there
            before = self._ids_read
            later = (self.model.index_of(d) for d in before[self.index + 1:]) if before is not None else ()
            k = next((j for j in later if j is not None), len(ids)) - 1
        self.index = k

    def _advance_design(self) -> None:
        self._resync_index()
        if self.index is None:
            return
        start = self.index + 1
        self.next_request += 1
        if start >= len(self.model.ids):
            self.notify("that was the last design in the queue")
            return
        self._opening = "the next design to judge"
        self.app.find_next(self, self.model.ids[start:], start, self.next_request)

    def on_next_found(self, message: NextFound) -> None:
        message.stop()
        if message.request != self.next_request:
            return
        self._opening = None
        if message.index is None:
            self.notify("nothing left to judge in this queue ✓")
            return
        self.show(self.model.ids[message.index], message.index)

    def action_next_unjudged(self) -> None:
        if self._still_opening("that move"):
            return
        self._advance_design()

    def action_clean(self) -> None:
        if not self._judgeable():
            return
        view = self.view
        if view.live_findings:
            self.notify("this design has findings: judge them (r / f / u) instead", severity="warning")
            return
        if view.is_clean_marked(self.app.curator):
            self.notify("already marked clean")
            return
        self.app.judge(view, None, "clean", self.judge_bar.take_note())
        self.findings.show(view, self.app.curator)
        self._item_changed()
        self._update_judging()
        self._advance_design()

    def action_later(self) -> None:
        """Flag the highlighted finding (or a design without findings) for later, or clear the flag."""
        if not self._judgeable():
            return
        view = self.view
        item = self.findings.current()
        if item is not None and item[0] == "missed":
            self.notify("a missed defect is not flagged (x retracts yours)", severity="warning")
            return
        f = item[1] if item is not None else None
        if f is None and view.live_findings:
            return
        key = f["key"] if f is not None else None
        flags = view.data.get("flags") or {}
        if f is not None and f.get("verdict") and key not in flags:
            self.notify("already judged: nothing to come back to", severity="warning")
            return
        flagged = key not in flags
        design_done = self._design_done()
        self.app.flag(view, f, flagged)
        if f is None:
            self.findings.show(view, self.app.curator)
            self._update_judging()
            if flagged:
                self._advance_design()
            return
        if flagged:
            self._after_step(key, False, design_done)
        else:
            self.findings.refresh_finding(key)
            self._item_changed()
            self._update_judging()

    # ---- the note -------------------------------------------------------------------------------
    def action_note(self) -> None:
        if self._still_opening("the note key"):
            return
        self.set_focus(self.judge_bar.note_field)

    def on_input_submitted(self, message: Input.Submitted) -> None:
        if message.input.id != "note":
            return
        message.stop()
        self.findings.focus()
        view = self.view
        if view is None:
            return
        item = self.findings.current()
        text = message.value.strip() or None
        if item is not None and item[0] == "missed":
            return
        f = item[1] if item is not None else None
        holder = (f.get("judgments") if f is not None else view.data.get("design_judgments")) or {}
        mine = holder.get(self.app.curator)
        what = visible(finding_label(f)) if f is not None else "the design"
        if mine is not None:
            self.judge_bar.mark_saved()
            if (mine.get("note") or None) != text:
                self.app.save_note(view, f, text)
                if f is not None:
                    self.findings.refresh_finding(f["key"])
                self.notify(f"note saved on your verdict on {what}" if text else f"note removed from {what}",
                            timeout=3)
        elif text:
            self.notify(f"the note goes with your verdict on {what}", timeout=3)

    # ---- missed defects -------------------------------------------------------------------------------
    def action_missed(self) -> None:
        from .modals import MissedDefectScreen

        if self._still_opening("the missed-defect key"):
            return
        view = self.view
        if view is None or view.graph is None:
            self.app.keys.refused("no graph to mark a defect on")
            self.notify("no graph to mark a defect on", severity="warning")
            return
        cursor_node = self.graph.node_at_cursor()
        rules = [(r, getattr(catalogue_entry(r), "title", "")) for r in catalogue_ids()]

        def done(result) -> None:
            if result:
                self.app.mark_missed(view, result["nodes"], result["rule"], result["description"])
                self.notify(f"missed defect recorded on {view.id}")
                if self.view is view:
                    current = self.findings.current_finding()
                    self.findings.show(view, self.app.curator, current["key"] if current else None,
                                       self._run_marks(view))
                    self._item_changed()

        self.app.push_screen(MissedDefectScreen(view.id, list(view.graph.order), rules,
                                                [cursor_node] if cursor_node else []), done)

    def action_retract(self) -> None:
        if self._still_opening("that key"):
            return
        view = self.view
        item = self.findings.current()
        if view is None or item is None or item[0] != "missed":
            self.notify("highlight one of your missed defects to retract it", severity="warning")
            return
        m = item[1]
        if m.get("curator") != self.app.curator:
            self.notify(f"that missed defect is {m.get('curator')}'s, not yours", severity="warning")
            return
        if m.get("id") is None:
            self.notify("still saving it — a moment")
            return
        self.app.retract_missed(view, m)
        self.findings.show(view, self.app.curator, None, self._run_marks(view))
        self._item_changed()
        self.notify("missed defect retracted (z brings it back)")

    # ---- bulk ------------------------------------------------------------------------------------------
    def action_bulk(self) -> None:
        if not self._judgeable():
            self.app.keys.refused("the bulk verdict")
            return
        f = self.findings.current_finding()
        if f is None:
            self.app.keys.refused("the bulk verdict")
            self.notify("highlight a finding: its rule is what a bulk verdict covers", severity="warning")
            return
        self.app.keys.expect("the bulk verdict dialog")
        self.bulk_request += 1
        self.bulk_preview(f["rule"], self.view.id, dict(self.model.filters), self.bulk_request)

    def on_bulk_preview(self, message: BulkPreview) -> None:
        from .modals import ChoiceScreen

        message.stop()
        if message.request != self.bulk_request or self.view is None:
            self.app.keys.refused("the bulk verdict")
            return
        rule, here, queue = message.rule, message.here, message.queue
        design_id = self.view.id
        filters = dict(self.model.filters)
        where = self.model.describe_filters()
        choices = []
        for scope, p, label in (("design", here, f"on {design_id}"), ("filter", queue, f"in the queue ({where})")):
            n = len(p["targets"])
            for verdict in ("real", "false_alarm", "unsure"):
                text = Text.assemble((VERDICT_LABEL[verdict], "bold"),
                                     f" — {n} finding{'s' if n != 1 else ''} of ", (visible(rule), "bold"),
                                     f" {visible(label)}" + (f", on {p['designs']} designs" if scope == "filter"
                                                             else ""))
                choices.append(((scope, verdict) if n else ChoiceScreen.DISABLED, text))
        note = Text(f"Findings you have judged already keep their verdict ({here['judged']} here, "
                    f"{queue['judged']} in the queue). One z undoes the whole bulk verdict.", style="dim")

        def chosen(value) -> None:
            if value is ChoiceScreen.CANCELLED or value is None:
                return
            scope, verdict = value
            view = self.view
            if scope == "design" and view is not None and view.id == design_id:
                for f in view.findings:  # shown at once; the store's answer refreshes the rest
                    if f["rule"] == rule and not f.get("stale") and not f.get("verdict"):
                        f["verdict"] = verdict
                        f.setdefault("judgments", {})[self.app.curator] = {"verdict": verdict, "note": None}
                self.findings.show(view, self.app.curator, None, self._run_marks(view))
                self._item_changed()
                self._update_judging()
            self.app.bulk_judge(rule, verdict, scope, design_id, filters)

        self.app.push_screen(ChoiceScreen(f"One verdict for every unjudged finding of {visible(rule)}", choices,
                                          note=note, filter=False), chosen)
        self.app.keys.arrived()

    # ---- writes come back ---------------------------------------------------------------------------------
    def write_done(self, op, result, designs) -> None:
        if self.view is None:
            return
        if op.kind in ("undo", "bulk", "adjudicate", "retract") and self.view.id in designs:
            self.reload_if_showing(self.view.id)
        elif op.kind == "undo" and designs and self.is_current:
            # show what was undone
            did = designs[0]
            cur = [k for d, k in (result or {}).get("keys") or [] if d == did]
            self._keep_key = cur[0] if cur else None
            self.show(did, self.model.index_of(did))
        elif op.kind == "missed" and op.design_id == self.view.id:
            self.reload_if_showing(self.view.id)
        self._update_judging()
        self.tabs.recent_stale = True
        if self.tabs.active == "tab-recent":
            self.load_recent()

    def on_recent_loaded(self, message: RecentLoaded) -> None:
        message.stop()
        self.tabs.recent_stale = False
        self.tabs.show_recent(message.steps)

    def on_option_list_option_selected(self, message: OptionList.OptionSelected) -> None:
        if message.option_list.id == "recent":
            message.stop()
            did = (message.option.id or "").partition(":")[2]
            if did and (self.view is None or did != self.view.id) and not self._still_opening("that enter"):
                self.next_request += 1
                self.show(did, self.model.index_of(did))
        elif message.option_list.id == "findings":
            message.stop()

    def run_stored(self, handle, stored_id) -> None:
        if self.view is not None and (handle.spec.tags or {}).get("design_id") == self.view.id:
            self.tabs.runs_changed(self._live_runs(self.view.id))

    # ---- moving ----------------------------------------------------------------------------
    def _still_opening(self, what: str) -> bool:
        """True (and the key dropped, with what was typed after it) while another design is opening: a key
        typed then was meant for the design on screen when it was typed, which is on its way out, and
        applied once the next one is drawn it would act on a design the curator had not seen yet."""
        if self._opening is None:
            return False
        self.app.bell()
        self.notify(f"opening {self._opening}… {what} was not applied (nor the keys typed after it)",
                    severity="warning", timeout=4)
        self.app.keys.refused(f"opening {self._opening}", "the design on its way out")
        return True

    def action_step(self, delta: int) -> None:
        if self._still_opening("that move"):
            return
        self.next_request += 1  # an auto-advance still on its way is the curator's no longer
        self._resync_index()
        if self.index is None:
            return
        k = self.index + delta
        if not 0 <= k < len(self.model.ids):
            self.notify("start of the queue" if k < 0 else "end of the queue")
            return
        self.show(self.model.ids[k], k)

    def action_tab(self, tab_id: str) -> None:
        self.tabs.open_tab(tab_id)

    def action_back(self) -> None:
        """esc: from the note field, a pane or the tab bar, back to the findings list; from there, the queue."""
        if self.focused is not None and self.focused is not self.findings:
            self.set_focus(self.findings)
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
        if self._still_opening("the diff key"):
            return
        view = self.view
        if view is None or view.design is None:
            self.app.keys.refused("no graph to diff")
            self.notify("no graph to diff", severity="warning")
            return
        d = view.data
        if d.get("parent") and d.get("parent_stored"):
            self._open_diff("parent", d["parent"])
        elif d.get("reference"):
            self._open_diff("reference", d["reference"])
        else:
            # d means "against the parent": when there is none, the picker that comes up instead says why
            why = (f"{visible(view.id)}'s parent {visible(d['parent'])} is not in the store" if d.get("parent")
                   else f"{visible(view.id)} has no parent and no reference architecture")
            self.notify(f"{why}: pick what to compare it with", timeout=5)
            self.action_diff_pick(why)

    def action_diff_pick(self, why: str | None = None) -> None:
        from .modals import ChoiceScreen, PromptScreen
        from .queue import QueueScreen

        view = self.view
        if view is None or view.design is None:
            self.app.keys.refused("no graph to diff")
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
            if name and name.strip():
                self._open_diff("reference", name.strip())

        def chosen(value) -> None:
            if value is ChoiceScreen.CANCELLED or value is None:
                return
            kind, name = value
            if kind == "pick":
                pick_model = QueueModel(filters={}, sort=self.model.sort)
                self.app.push_screen(QueueScreen(pick_model, pick=True,
                                                 title=f"pick the design to compare {visible(view.id)} with"),
                                     picked_design)
            elif kind == "named":
                self.app.push_screen(PromptScreen("Reference architecture", "e.g. resnet18"), named)
            else:
                self._open_diff(kind, name)

        title = f"Compare {visible(view.id)} with…" + (f"  ({why})" if why else "")
        self.app.push_screen(ChoiceScreen(title, choices), chosen)

    def action_propose_repair(self) -> None:
        if self._still_opening("the repair key"):
            return
        view = self.view
        if view is None or view.design is None:
            self.notify("no graph to repair", severity="warning")
            return
        if not any(f.get("severity") == "block" for f in view.live_findings):
            self.notify("nothing blocks this design: nothing to repair", timeout=3)
            return
        self.notify("searching a repair…", timeout=2)
        self._search_repair(view.id, view.data["graph"])

    # ---- this screen's own reads (the app keeps only what several screens share) ----------------------
    def _post_from_worker(self, message) -> None:
        from textual.worker import get_current_worker

        if get_current_worker().is_cancelled or self not in self.app.screen_stack:
            return
        self.post_message(message)

    @work(thread=True, exclusive=True, group="recent", exit_on_error=False)
    def load_recent(self) -> None:
        self._post_from_worker(RecentLoaded(self.app.store.recent(12)))

    @work(thread=True, exclusive=True, group="bulk-preview", exit_on_error=False)
    def bulk_preview(self, rule: str, design_id: str, filters: dict, request: int) -> None:
        here = self.app.store.bulk_preview(rule, design_id, None)
        queue = self.app.store.bulk_preview(rule, None, filters)
        self._post_from_worker(BulkPreview(rule, here, queue, request))

    @work(thread=True, exclusive=True, group="repair", exit_on_error=False)
    def _search_repair(self, design_id: str, graph: dict) -> None:
        from archcurator.core.graph import Design
        from archcurator.core.repair import repair_design
        from archcurator.core.verify import verify_graph

        rep = repair_design(graph, time_limit_s=REPAIR_TIME_LIMIT_S)
        before = verify_graph(Design.from_dict(graph)).cost
        after = verify_graph(Design.from_dict(rep.design)).cost if rep.found else None
        self.post_message(RepairReady(design_id, rep, before, after))

    def on_repair_ready(self, message: RepairReady) -> None:
        message.stop()
        view = self.view
        if view is None or view.id != message.design_id or self not in self.app.screen_stack:
            return
        rep = message.repair
        if not rep.found:
            stuck = rep.repairs[-1].finding if rep.repairs else None
            why = f" for {stuck['rule']} at {', '.join(stuck['nodes']) or 'the graph'}" if stuck else ""
            self.notify(visible(f"no repair found{why} ({rep.tried} candidates verified)"), severity="warning",
                        timeout=6)
            return
        from .repair import RepairScreen

        self.app.push_screen(RepairScreen(view, rep, message.cost_before, message.cost_after))

    def action_run_check(self, kind: str = "forward") -> None:
        if self._still_opening("the run key"):
            return
        if self.view is None:
            self.app.keys.refused("the run dialog")
            return
        if self.view.data.get("error") is not None:
            self.app.keys.refused("the run dialog")
            self.notify("an ungenerated design has nothing to run", severity="warning")
            return
        self.app.keys.expect("the run dialog")
        self._offer_run(self.view, kind)

    @work(thread=True, exclusive=True, group="run-offer", exit_on_error=False)
    def _offer_run(self, view, kind: str) -> None:
        from archcurator.store.connection import StoreError

        from ..run_bridge import calibrate

        gpus = self.app.runs.gpus()  # may ask nvidia-smi: off the UI thread
        try:
            calibration = calibrate(self.app.store.run_timings(), self.app.TRAIN_STEPS)
        except StoreError:
            calibration = {}  # busy now: the assumed throughput, said so
        self.app.call_from_thread(self._confirm_run, view, kind, gpus, calibration)

    def _confirm_run(self, view, kind: str, gpus: list, calibration: dict | None = None) -> None:
        from ..run_bridge import duplicate_of, estimate
        from .modals import ChoiceScreen

        what = "forward check" if kind == "forward" else f"short training ({self.app.TRAIN_STEPS} steps)"
        cluster = self.app.runs.cluster_address()
        choices = []
        for device in ("cpu", "cuda", "cluster"):
            est = estimate(view.data, kind, device, self.app.TRAIN_STEPS, calibration)
            if device == "cuda" and not gpus:
                label = Text.assemble(("cuda", "bold"), "  no GPU found on this machine", style="dim")
                choices.append((ChoiceScreen.DISABLED, label))
            elif device == "cluster" and not cluster:
                label = Text.assemble(("cluster", "bold"), "  none set (RAY_API_SERVER_ADDRESS)", style="dim")
                choices.append((ChoiceScreen.DISABLED, label))
            else:
                where = {"cpu": "this machine's CPU", "cuda": f"GPU ({len(gpus)} here)",
                         "cluster": f"Ray at {visible(cluster)}"}[device]
                choices.append((device, Text.assemble((device, "bold"), f"  {where} — {est.describe()}",
                                                      (f"  ({est.basis})", "dim"))))
        dup = duplicate_of(view.id, kind, view.data, self.app.run_handles)
        note = Text()
        for warning in run_warnings(view.data, kind):
            note.append("⚠ " + warning + "\n", style="bold yellow")
        if dup:
            note.append("⚠ " + visible(dup) + ". Run it again?\n", style="bold yellow")
        note.append(f"The {what} of {visible(view.id)} runs in a child process with a time and memory limit; "
                    "its outcome is stored with the design.", style="dim")

        def chosen(device) -> None:
            if device is ChoiceScreen.CANCELLED or device is None:
                return
            self.app.launch_run(view.id, kind, device)
            self.tabs.runs_changed(self._live_runs(view.id))

        self.app.push_screen(ChoiceScreen(f"Launch a {what} of {visible(view.id)} on…", choices, note=note,
                                          filter=False), chosen)
        self.app.keys.arrived()

"""The knowledge base: propositions and their evidence, suggestions, operations, the 20-cap pack.

Everything goes through `store.app_queries.AppStore.kb_*` in the app's
workers (`kb-load`, `kb-detail`, `kb-suggest`, `kb-write`). Operations are
the store's own (`store.kb`): add, edit, merge, narrow, retire, pin/unpin,
accept, mark distinct, undo; each lands in the KB's append-only audit log
under the curator's name, and undo (z: store/undo.py, the one undo model)
reverts the curator's newest step of any kind.
Suggestions are never applied on their own: Enter on one asks, and only a
confirmation applies it. Every proposition shows its pack rank or why it is
out of the pack; the export asks for a file and says where it wrote.

Evidence a curator can judge: each evidence row and each use shows the
question's three recipes (the fields that differ), mean ± std over seeds
per candidate, the winner, the gap, the dataset and the candidate pool; the
detail shows the training record beside the held-out and imported ones,
counted per independent unit (pool × dataset) with the raw count beside,
the uses (helpful / harmful / neutral) and any conflict. `C` runs a cycle
of the loop (`kb cycle`) in the `kb-write` worker.

`c` compares pack versions (`kb replay --pack`) in the `kb-compare` worker:
the current pack beside the previous version (the latest JSON export) and
the raw miner's top 20, on the same held-out questions: each one's
accuracy, the paired difference with its pool-bootstrap interval, and the
questions where they answer differently (the Compare tab).
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import DataTable, Input, OptionList, Static, TabbedContent, TabPane
from textual.widgets.option_list import Option

from archcurator.store import kb_ops

from ..components.table import Table
from ..sanitise import plain, visible
from ..widgets.footer import AppFooter
from ..widgets.header import AppHeader
from ..widgets.messages import KbDetailLoaded, KbLoaded, KbOpDone, KbPacksCompared, KbSuggestionsLoaded
from ..widgets.option_lists import StopOptionList
from .base import CuratorScreen

if TYPE_CHECKING:
    from archcurator.store.kb import PropRow

STATUS_STYLE = {"active": "green", "proposed": "cyan", "retired": "dim", "merged": "dim", "narrowed": "dim",
                "withdrawn": "dim"}


def _label(pid: int | str) -> str:
    return f"P{pid}"


class KnowledgeBaseScreen(CuratorScreen):
    BINDINGS = [
        Binding("m", "merge", "Merge", id="kb_merge"),
        Binding("w", "narrow", "Narrow", id="kb_narrow"),
        Binding("x", "retire", "Retire", id="kb_retire"),
        Binding("p", "pin", "Pin/unpin", id="kb_pin"),
        Binding("a", "accept", "Accept", id="kb_accept"),
        Binding("e", "edit", "Edit", id="kb_edit", show=False),
        Binding("n", "add", "New", id="kb_add", show=False),
        Binding("d", "distinct", "Distinct", id="kb_distinct", show=False),
        Binding("ctrl+z,z", "kb_undo", "Undo", id="kb_undo"),
        Binding("C", "cycle", "Cycle", id="kb_cycle", show=False),
        Binding("c", "compare_packs", "Compare packs", id="kb_compare"),
        Binding("s", "toggle_status", "Live/all", id="kb_show_all", show=False),
        Binding("E", "export", "Export pack", id="kb_export", show=False),
        Binding("f5", "reload", "Refresh", id="kb_refresh", show=False),
        Binding("slash", "filter", "Filter", id="kb_filter", show=False),
        Binding("escape", "back", "Back", id="kb_back"),
    ]
    ACTION_HELP = {
        "kb_merge": "Merge another proposition into the highlighted one (union of evidence)",
        "kb_narrow": "Narrow the highlighted proposition: a child with added conditions",
        "kb_retire": "Retire the highlighted proposition",
        "kb_pin": "Pin (or unpin) the highlighted proposition: pinned ones enter the pack first",
        "kb_accept": "Accept a proposed proposition (it becomes active)",
        "kb_edit": "Edit the highlighted proposition's text",
        "kb_add": "Add a proposition (text, scope, claim)",
        "kb_distinct": "Mark the highlighted proposition and another as distinct (not duplicates)",
        "kb_undo": "Undo your newest step, a knowledge-base operation or a verdict (one undo everywhere)",
        "kb_cycle": "Run a cycle of the loop: the solver answers the next questions with the pack, each invoked "
                    "proposition gets a use from the outcome, proposals enter as proposed",
        "kb_compare": "Compare the current pack with the previous version (the latest JSON export) and the raw "
                      "miner's top 20 on the same held-out questions: accuracy of each, the paired difference "
                      "with its interval, and the questions where they answer differently",
        "kb_show_all": "Show live propositions, or all of them",
        "kb_export": "Export the 20-cap pack to a file (asks where; recorded)",
        "kb_refresh": "Read the knowledge base again",
        "kb_filter": "Show only the propositions whose id or text holds what you type",
        "kb_back": "Back",
    }

    def __init__(self) -> None:
        super().__init__()
        self.status = "live"
        self.props: dict[int, PropRow] = {}
        self.order: list[int] = []
        self.pack_ids: dict[int | str, int] = {}
        self.pack_status: dict[int, tuple] = {}
        self.last_export: str | None = None
        self.compared: dict | None = None   # the latest pack comparison (`c`)
        self.suggestions = None
        self.request = 0
        self.detail_request = 0
        self.busy = False
        self._select_after: int | None = None
        self._cursor_at_key: int | None = None  # the highlighted proposition when the running operation's key
        # operations asked for while one runs (with the row to select after it and the cursor then): done in
        # order, none dropped
        self._ops: deque[tuple[kb_ops.KbOp, int | None, int | None]] = deque()
        self._pin_intent: dict[int, bool] = {}  # pinned as the queued operations leave it

    def compose(self) -> ComposeResult:
        yield AppHeader()
        with Horizontal(id="kb-body"):
            with Vertical(id="kb-left"):
                yield Static(id="kb-status")
                kb_filter = Input(placeholder="filter as you type — enter or esc leaves", id="kb-filter")
                kb_filter.display = False
                yield kb_filter
                yield Table(id="kb-props", cursor_type="row", zebra_stripes=True)
            with Vertical(id="kb-right"):
                yield Static(id="kb-detail")
                yield Static(id="kb-records")
                with TabbedContent(id="kb-tabs"):
                    with TabPane("Evidence", id="kb-tab-evidence"):
                        yield Table(id="kb-evidence", cursor_type="row", zebra_stripes=True)
                    with TabPane("Uses", id="kb-tab-uses"):
                        yield Table(id="kb-uses", cursor_type="row", zebra_stripes=True)
                    with TabPane("Suggestions", id="kb-tab-suggestions"):
                        yield StopOptionList(id="kb-suggestions")
                    with TabPane("Pack", id="kb-tab-pack"):
                        yield Table(id="kb-pack", cursor_type="row", zebra_stripes=True)
                    with TabPane("Compare", id="kb-tab-compare"):
                        with VerticalScroll():
                            yield Static(Text("c compares the current pack with the previous version and the "
                                              "raw miner's top 20", style="dim"), id="kb-compare")
                    with TabPane("Audit", id="kb-tab-audit"):
                        with VerticalScroll():
                            yield Static(id="kb-audit")
        yield AppFooter()

    def on_mount(self) -> None:
        if self not in self.app.screen_stack:
            return  # closed before it was mounted (a key pressed at once): nothing to set up
        self.sub_title = "knowledge base"
        table = self.query_one("#kb-props", DataTable)
        table.add_columns("id", "status", "pin", "sup", "con", "≥95%", "pack", "proposition")
        ev = self.query_one("#kb-evidence", DataTable)
        ev.add_columns("question", "verdict", "dataset", "pool", "gap", "A", "B", "C")
        self.query_one("#kb-uses", DataTable).add_columns("cycle", "question", "use", "answer", "outcome", "A",
                                                          "B", "C")
        pack = self.query_one("#kb-pack", DataTable)
        pack.add_columns("#", "id", "≥95%", "why", "proposition")
        table.focus()
        self.action_reload()

    # ---- workers: the store, off the UI thread -------------------------------------------
    @work(thread=True, exclusive=True, group="kb-load", exit_on_error=False)
    def kb_load(self, status: str, request: int) -> None:
        self.post_from_worker(KbLoaded(self.app.store.kb_view(status), request))

    @work(thread=True, exclusive=True, group="kb-suggest", exit_on_error=False)
    def kb_suggest(self, request: int) -> None:
        self.post_from_worker(KbSuggestionsLoaded(self.app.store.kb_suggestions(), request))

    @work(thread=True, exclusive=True, group="kb-detail", exit_on_error=False)
    def kb_detail(self, pid: int, request: int) -> None:
        judge = self.app.store.kb_judge(pid)
        self.post_from_worker(KbDetailLoaded(pid, judge["evidence"], request, judge))

    @work(thread=True, exclusive=True, group="kb-compare", exit_on_error=False)
    def kb_compare(self) -> None:
        self.post_from_worker(KbPacksCompared(self.app.store.kb_compare_packs()))

    @work(thread=True, exclusive=True, group="kb-write", exit_on_error=False)
    def kb_write(self, op: kb_ops.KbOp) -> None:
        # one operation at a time (the screen waits for KbOpDone), so nothing is cancelled, and its result is
        # posted even after the screen closed: what was done is said
        self.post_message(KbOpDone(op.name, self.app.store.kb_apply(op)))

    # ---- loading ------------------------------------------------------------------
    def action_reload(self) -> None:
        self.request += 1
        self.query_one("#kb-status", Static).update("reading the knowledge base…")
        self.kb_load(self.status, self.request)
        self.kb_suggest(self.request)

    def refresh_data(self) -> None:
        self.action_reload()

    def on_kb_loaded(self, message: KbLoaded) -> None:
        message.stop()
        if message.request != self.request:
            return
        data = message.data
        self._data = data
        props = [p for p in data["props"] if self._matches(p)]
        current = self.current_id()
        self.props = {p.id: p for p in props}
        self.order = [p.id for p in props]
        self.pack_ids = {e.prop.id: e.rank for e in data["pack"]}
        self.pack_status = data.get("pack_status") or {}
        live = sum(1 for p in props if p.status in ("active", "proposed"))
        q = data.get("questions") or {}
        status = Text()
        status.append(f"{len(props)} propositions" + (" (live)" if self.status == "live" else " (all)"),
                      style="bold")
        status.append(f" · {live} live · pack {len(data['pack'])}/20 · {q.get('total', 0)} executed questions")
        self.query_one("#kb-status", Static).update(status)
        table = self.query_one("#kb-props", DataTable)
        row_before = table.cursor_row
        table.clear()
        for p in props:
            rank = self.pack_ids.get(p.id)
            table.add_row(
                Text(_label(p.id), style="bold"),
                Text(p.status, style=STATUS_STYLE.get(p.status, "")),
                Text("●", style="bold yellow") if p.pinned else "",
                Text(str(p.support), justify="right"),
                Text(str(p.contradict), justify="right"),
                Text(f"{100 * p.lower:.0f}%" if p.tested else "—", justify="right"),
                Text(str(rank), justify="right", style="bold green") if rank else Text("out", style="dim"),
                plain(p.text if len(p.text) <= 90 else p.text[:89] + "…"),
                key=str(p.id),
            )
        pack = self.query_one("#kb-pack", DataTable)
        pack.clear()
        for e in data["pack"]:
            pack.add_row(str(e.rank), _label(e.prop.id), f"{100 * e.lower:.0f}%", plain(e.reason),
                         plain(e.prop.text if len(e.prop.text) <= 70 else e.prop.text[:69] + "…"), key=str(e.prop.id))
        audit = Text()
        for a in data["audit"]:
            style = "dim strike" if a.get("undone_by") else ""
            audit.append(f"{a['seq']:>4} ", style="dim")
            audit.append(f"{visible(a['op']):<16}", style="bold")
            audit.append(visible(a["summary"]), style=style)
            audit.append(f"  ({visible(a['actor'])})\n", style="dim")
        self.query_one("#kb-audit", Static).update(audit or Text("no operations yet", style="dim"))
        # the operation's proposition is highlighted unless the curator moved on meanwhile
        moved = current != self._cursor_at_key
        want = self._select_after if self._select_after in self.props and not moved else current
        if not self.busy:
            self._select_after = None
            self._pin_intent.clear()
        if want in self.props:
            table.move_cursor(row=self.order.index(want))
        elif self.order and row_before is not None:
            # the highlighted proposition left the list (retired, merged away): the one that took its row,
            # as lazygit does, not the top row (a retire sent the cursor back to P1)
            table.move_cursor(row=min(row_before, len(self.order) - 1))
        self._show_detail()

    def on_kb_suggestions_loaded(self, message: KbSuggestionsLoaded) -> None:
        message.stop()
        self.suggestions = message.suggestions
        ol = self.query_one("#kb-suggestions", OptionList)
        ol.clear_options()
        s = message.suggestions
        options = []
        for i, d in enumerate(s.duplicates[:60]):
            t = Text()
            t.append("duplicate ", style="bold yellow")
            t.append(f"{_label(d.a)} ~ {_label(d.b)}", style="bold")
            t.append(f"  {visible(d.kind)}, {d.score:.0f}  ", style="dim")
            t.append(visible(d.reason))
            options.append(Option(t, id=f"dup:{i}"))
        for i, n in enumerate(s.narrowing[:60]):
            t = Text()
            t.append("narrow ", style="bold cyan")
            t.append(f"{_label(n.prop_id)} with {visible(n.condition)}", style="bold")
            t.append(f"  {visible(n.reason)}", style="dim")
            options.append(Option(t, id=f"narrow:{i}"))
        if not options:
            options.append(Option(Text("no suggestions", style="dim"), disabled=True))
        ol.add_options(options)

    def current_id(self) -> int | None:
        table = self.query_one("#kb-props", DataTable)
        if not self.order or table.cursor_row is None or not (0 <= table.cursor_row < len(self.order)):
            return None
        return self.order[table.cursor_row]

    def on_data_table_row_highlighted(self, message: DataTable.RowHighlighted) -> None:
        if message.data_table.id == "kb-props":
            self._show_detail()

    def _show_detail(self) -> None:
        pid = self.current_id()
        detail = self.query_one("#kb-detail", Static)
        if pid is None:
            words = getattr(self, "_filter_words", ())
            if words:
                why = f"no proposition matches the filter “{visible(' '.join(words))}” (/ edits it)"
            elif self.status == "live":
                why = "no live propositions (s shows retired ones too; n adds one)"
            else:
                why = "no propositions in this store's knowledge base yet (n adds one)"
            detail.update(Text(why, style="dim"))
            return
        p = self.props[pid]
        t = Text()
        t.append(f"{_label(pid)} ", style="bold")
        t.append(p.status, style=STATUS_STYLE.get(p.status, ""))
        if p.pinned:
            t.append(" · pinned", style="bold")
        if pid in self.pack_ids:
            how = self.pack_status.get(pid, (None, ""))[1]
            t.append(f" · pack #{self.pack_ids[pid]}" + (f" ({visible(how)})" if how else ""), style="bold green")
        else:
            why = self.pack_status.get(pid, (None, "not live"))[1]
            t.append(f" · not in the pack: {visible(why)}", style="dim")
        t.append(f"\n{visible(p.text)}\n", style="italic")
        scope = " & ".join(str(c) for c in p.structure.scope) or "(everywhere)"
        t.append("scope  ", style="dim")
        t.append(visible(scope) + "\n")
        t.append("claim  ", style="dim")
        t.append(visible(p.structure.claim) + "\n")
        t.append("evidence ", style="dim")
        t.append(f"{p.support} support · {p.contradict} contradict · {p.inapplicable} inapplicable · "
                 f"Wilson 95% lower {100 * p.lower:.0f}%\n")
        origin = p.origin + (f" ({p.source})" if p.source else "")
        t.append("origin ", style="dim")
        t.append(visible(origin))
        if p.parent_id:
            t.append(f" · narrowed from {_label(p.parent_id)}")
        if p.merged_from:
            t.append(" · merged from " + ", ".join(_label(x) for x in p.merged_from))
        if p.merged_into:
            t.append(f" · merged into {_label(p.merged_into)}")
        detail.update(t)
        self.detail_request += 1
        self.kb_detail(pid, self.detail_request)

    def on_kb_detail_loaded(self, message: KbDetailLoaded) -> None:
        message.stop()
        if message.request != self.detail_request:
            return
        table = self.query_one("#kb-evidence", DataTable)
        table.clear()
        style = {"support": "green", "contradict": "red", "inapplicable": "dim"}
        for e in message.evidence[:500]:
            table.add_row(plain(e.get("question", "")),
                          Text(visible(e.get("verdict", "")), style=style.get(e.get("verdict"), "")),
                          *_question_cells(e))
        uses = self.query_one("#kb-uses", DataTable)
        uses.clear()
        effect_style = {"helpful": "green", "harmful": "red", "neutral": "dim"}
        for u in message.judge.get("uses", [])[:500]:
            uses.add_row(f"#{u['cycle']}", plain(u["question"]),
                         Text(visible(u["effect"]), style=effect_style.get(u["effect"], "")),
                         plain(u.get("answer") or "—"), plain(f"{u.get('outcome') or '—'} ({u['outcome_from']})"),
                         *_question_cells(u)[3:])
        self.query_one("#kb-records", Static).update(_records_text(message.judge))

    # ---- operations -------------------------------------------------------------------
    def _run(self, op: kb_ops.KbOp, select: int | None = None) -> None:
        """Do `op` on the store; asked while another runs, it waits its turn (the cursor moves made meanwhile
        stay the curator's)."""
        self._ops.append((op, select, self.current_id()))
        if self.busy:
            self.notify(f"{op.name.replace('_', ' ')} queued after the operation running", timeout=2)
            return
        self._next_op()

    def _next_op(self) -> None:
        op, select, cursor = self._ops.popleft()
        self.busy = True
        self._select_after = select
        self._cursor_at_key = cursor
        self.kb_write(op)

    def on_kb_op_done(self, message: KbOpDone) -> None:
        message.stop()
        self.busy = False
        result = message.result
        if message.op in ("merge", "narrow", "add") and isinstance(result, int):
            self._select_after = result
        if self._ops:
            select, cursor = self._select_after, self._cursor_at_key
            self._next_op()
            if self._select_after is None:
                self._select_after, self._cursor_at_key = select, cursor
        text = {"merge": "merged", "narrow": "narrowed", "retire": "retired", "pin": "pinned", "unpin": "unpinned",
                "accept": "accepted", "edit": "edited", "add": "added", "mark_distinct": "marked distinct",
                "undo": "undone", "export_pack": "pack exported", "seed_kb": "knowledge base seeded"}.get(
            message.op, message.op)
        if message.op == "cycle" and isinstance(result, dict):
            s = result["summary"]
            text = (f"cycle #{result['cycle']}: {s['correct']}/{s['with_outcome']} right; uses {s['uses']['helpful']} "
                    f"helpful, {s['uses']['harmful']} harmful, {s['uses']['neutral']} neutral; "
                    f"{len(result['proposed'])} proposed")
        if message.op == "merge" and isinstance(result, int):
            text = f"merged into {_label(result)}"
        elif message.op == "undo" and isinstance(result, dict):
            text = f"undone: {visible(result.get('summary', ''))}"
            if result.get("room") == "curation":  # the newest step was a verdict: the app's views re-read it
                changed = list(result.get("designs") or [])
                for did in changed:
                    self.app.forget_design(did)
                if changed:
                    self.app.refresh_rows(changed[:500])
        elif message.op == "export_pack" and isinstance(result, tuple):
            text = f"pack exported (export #{result[1]})"
        elif message.op == "write_pack" and isinstance(result, dict):
            text = f"wrote {result['count']} propositions to {result['path']} (export #{result['export']})"
            self.last_export = result["path"]
        self.notify(text, timeout=3)
        self.action_reload()

    def worker_failed(self, group: str, text: str) -> None:
        if group == "kb-compare":
            self.query_one("#kb-compare", Static).update(Text(f"no comparison: {visible(text)}", style="red"))
        if group == "kb-write":
            self.busy = False
            if self._ops:
                self._next_op()

    def _need(self) -> int | None:
        pid = self.current_id()
        if pid is None:
            self.app.keys.refused("no proposition highlighted")
            self.notify("no proposition highlighted", severity="warning")
        return pid

    def _prompt(self, title: str, placeholder: str, value: str, then) -> None:
        from .modals import PromptScreen

        def done(text) -> None:
            if text and text.strip():
                then(text.strip())

        self.app.push_screen(PromptScreen(title, placeholder, value), done)

    def _partner(self, pid: int) -> int | None:
        s = self.suggestions
        if s is None:
            return None
        for d in s.duplicates:
            if pid in (d.a, d.b):
                return d.b if d.a == pid else d.a
        return None

    def action_merge(self) -> None:
        pid = self._need()
        if pid is None:
            return
        partner = self._partner(pid)
        self._prompt(f"Merge which proposition into {_label(pid)}? (its evidence joins {_label(pid)}'s)",
                     "e.g. P12", _label(partner) if partner else "",
                     lambda other: self._run(kb_ops.Merge(pid, other), select=pid))

    def action_narrow(self) -> None:
        pid = self._need()
        if pid is None:
            return
        default = ""
        if self.suggestions is not None:
            for n in self.suggestions.narrowing:
                if n.prop_id == pid:
                    default = str(n.condition)
                    break
        self._prompt(f"Narrow {_label(pid)} (it keeps its id): conditions to add, comma-separated",
                     "e.g. budget < 4096", default,
                     lambda cond: self._run(kb_ops.Narrow(pid, tuple(c.strip() for c in cond.split(",")
                                                                      if c.strip())), select=pid))

    def action_retire(self) -> None:
        pid = self._need()
        if pid is not None:
            self._run(kb_ops.Retire(pid))

    def action_pin(self) -> None:
        pid = self._need()
        if pid is not None:
            pinned = self._pin_intent.get(pid, self.props[pid].pinned)
            self._pin_intent[pid] = not pinned
            self._run(kb_ops.Unpin(pid) if pinned else kb_ops.Pin(pid), select=pid)

    def action_accept(self) -> None:
        pid = self._need()
        if pid is not None:
            self._run(kb_ops.Accept(pid), select=pid)

    def action_edit(self) -> None:
        pid = self._need()
        if pid is not None:
            self._prompt(f"New text for {_label(pid)}", "", self.props[pid].text,
                         lambda text: self._run(kb_ops.Edit(pid, text=text), select=pid))

    def action_distinct(self) -> None:
        pid = self._need()
        if pid is None:
            return
        partner = self._partner(pid)
        self._prompt(f"{_label(pid)} is distinct from which proposition?", "e.g. P12",
                     _label(partner) if partner else "",
                     lambda other: self._run(kb_ops.MarkDistinct(pid, other), select=pid))

    def action_add(self) -> None:
        from .modals import PropositionFormScreen

        def done(result) -> None:
            if result:
                self._run(kb_ops.Add(result["text"], result["scope"], result["claim"]))

        self.app.push_screen(PropositionFormScreen(), done)

    def action_cycle(self) -> None:
        def start(text: str) -> None:
            try:
                n = int(text)
            except ValueError:
                n = 0
            if n <= 0:
                self.notify(f"not a number of questions: {visible(text)}", severity="warning")
                return
            self.notify(f"cycle: answering {n} questions of the stream…", timeout=3)
            self._run(kb_ops.Cycle(questions=n))

        self._prompt("Cycle: how many questions of the stream? (the solver answers with the pack; each "
                     "invoked proposition gets a use; proposals enter as proposed)", "e.g. 10", "10", start)

    def action_compare_packs(self) -> None:
        self.query_one("#kb-compare", Static).update(Text("comparing pack versions on the held-out questions…",
                                                          style="dim"))
        self.query_one("#kb-tabs", TabbedContent).active = "kb-tab-compare"
        self.kb_compare()

    def on_kb_packs_compared(self, message: KbPacksCompared) -> None:
        message.stop()
        self.compared = message.report
        self.query_one("#kb-compare", Static).update(_compare_text(message.report))

    def action_kb_undo(self) -> None:
        pending = len(self.app.writes.pending_ops())
        if pending:
            # z takes back the newest step of either kind: with verdicts still on their way to DuckDB it
            # would take back an older one than the curator means
            self.notify(f"{pending} write{'s' if pending != 1 else ''} still saving: press z again once saved",
                        severity="warning", timeout=4)
            return
        self._run(kb_ops.Undo())

    def write_done(self, op, result, designs) -> None:
        """The app's z (the one undo model) may take back a KB operation: show the pack as it now is."""
        if op.kind == "undo" and isinstance(result, dict) and result.get("room") == "kb":
            self.action_reload()

    def action_toggle_status(self) -> None:
        self.status = "all" if self.status == "live" else "live"
        self.action_reload()

    def action_export(self) -> None:
        import os

        default = self.last_export or os.path.join(os.getcwd(), "archcurator-pack.json")
        self._prompt("Export the pack to which file? (.json for JSON, else text; the export is recorded)",
                     "e.g. ~/pack.json", default, lambda path: self._run(kb_ops.WritePack(path)))

    def on_option_list_option_selected(self, message: OptionList.OptionSelected) -> None:
        if message.option_list.id != "kb-suggestions" or self.suggestions is None:
            return
        message.stop()
        kind, _, index = (message.option.id or "").partition(":")
        from .modals import ChoiceScreen

        if kind == "dup":
            d = self.suggestions.duplicates[int(index)]
            keep, other = d.a, d.b
            a, b = self.props.get(d.a), self.props.get(d.b)
            if a is not None and b is not None and b.tested > a.tested:
                keep, other = d.b, d.a
            question = f"Merge {_label(other)} into {_label(keep)}? ({_label(other)} is retired into it)"
            apply = lambda keep=keep, other=other: self._run(kb_ops.Merge(keep, other), select=keep)  # noqa: E731
        elif kind == "narrow":
            n = self.suggestions.narrowing[int(index)]
            question = f"Narrow {_label(n.prop_id)} with {n.condition}? ({n.reason})"
            apply = lambda n=n: self._run(kb_ops.Narrow(n.prop_id, (str(n.condition),)), select=n.prop_id)  # noqa: E731
        else:
            return

        def answered(choice) -> None:
            if choice == "apply":
                apply()

        self.app.push_screen(ChoiceScreen(question, [("apply", "Apply it"), ("cancel", "Cancel")]), answered)

    # ---- the `/` filter (type-ahead, as on the queue) ----------------------------------------------
    def _matches(self, p) -> bool:
        words = getattr(self, "_filter_words", ())
        hay = f"{_label(p.id)} {p.text} {p.status}".lower()
        return all(w in hay for w in words)

    def action_filter(self) -> None:
        field = self.query_one("#kb-filter", Input)
        field.display = True
        field.focus()

    def on_input_changed(self, message: Input.Changed) -> None:
        if message.input.id != "kb-filter":
            return
        message.stop()
        self._filter_words = tuple(message.value.lower().split())
        if getattr(self, "_data", None) is not None:
            self.on_kb_loaded(KbLoaded(self._data, self.request))

    def on_input_submitted(self, message: Input.Submitted) -> None:
        if message.input.id == "kb-filter":
            message.stop()
            self.query_one("#kb-props", DataTable).focus()

    def action_back(self) -> None:
        """esc: from the filter, a tab or its table, back to the propositions; from there, back."""
        field = self.query_one("#kb-filter", Input)
        props = self.query_one("#kb-props", DataTable)
        if field.has_focus:
            field.display = bool(field.value.strip())
            self.set_focus(props)
            return
        if self.focused is not None and self.focused is not props:
            self.set_focus(props)
            return
        self.dismiss()


def _num(x) -> str:
    return "—" if x is None else f"{x:.3g}"


def _question_cells(e: dict) -> list:
    """dataset, pool, gap, then per candidate: mean ± std and the recipe fields that differ (* the winner)."""
    from archcurator.core.kb.evidence import recipe_text

    if "candidates" not in e:
        return [plain(e.get("family") or ""), "", "", "", "", ""]
    cells: list[Text | str] = [plain(e["dataset"]["id"]), plain(e.get("pool") or ""),
                               Text(_num(e.get("gap")), justify="right")]
    for c in e["candidates"][:3]:
        m, sd = e["means"].get(c["letter"]), e["stds"].get(c["letter"])
        win = c["letter"] == e.get("winner")
        t = Text("*" if win else " ", style="bold green")
        t.append(f"{_num(m)}±{_num(sd)} ", style="bold" if win else "")
        t.append(visible(recipe_text(c, e.get("differs"))), style="dim")
        cells.append(t)
    while len(cells) < 6:
        cells.append("")
    return cells


def _records_text(judge: dict) -> Text:
    """The training record beside the held-out and imported ones (per unit, raw beside), the uses,
    the conflicts."""
    t = Text()
    recs = judge.get("records") or {}
    for name in ("train", "heldout", "imported"):
        r = recs.get(name)
        if not r:
            continue
        t.append(f"{name:<9}", style="dim")
        t.append(f"{r['units_support']} for · {r['units_contradict']} against of {r['units']} units (pool × dataset)")
        t.append(f" · raw {r['support']}–{r['contradict']}\n", style="dim")
    u = judge.get("use_counts")
    if u:
        t.append("uses     ", style="dim")
        t.append(f"{u['helpful']} helpful", style="green")
        t.append(" · ")
        t.append(f"{u['harmful']} harmful", style="red")
        t.append(f" · {u['neutral']} neutral\n")
    for c in judge.get("conflicts") or []:
        t.append("conflict ", style="bold red")
        t.append(visible(c["text"]) + "\n")
    return t


def _compare_text(r: dict) -> Text:
    """Each pack version's accuracy, the paired differences with their intervals, and the questions
    where the first pack and each other answer differently."""
    from archcurator.core.kb.stats import fmt_interval

    t = Text()
    t.append(f"{r['n']} held-out questions (split {r['split'] or 'all'}, {r['pools']} candidate pools); weights "
             f"fitted on {r['train_n']} training questions\n", style="dim")
    t.append(f"{'prior':<28}", style="dim")
    t.append(f"{fmt_interval(r['prior']['correct'], r['prior']['n'])}  ({visible(r['prior']['rule'])})\n")
    for p in r["packs"]:
        t.append(f"{visible(p['pack'])[:26]:<28}", style="bold")
        t.append(f"{fmt_interval(p['correct'], p['n'])}  ({p['size']} propositions)\n")
    for d in r["difference"]:
        lo, hi = d["ci"]
        t.append(f"\n{visible(d['a'])} minus {visible(d['b'])}: ", style="bold")
        t.append(f"{100 * d['value']:+.1f} points", style="bold green" if lo > 0 else "bold red" if hi < 0 else "bold")
        t.append(f" (pool bootstrap 95% CI {100 * lo:+.1f} to {100 * hi:+.1f}); "
                 + ("beyond the noise" if d["excludes_zero"] else "within the noise (the interval holds 0)") + "\n")
        t.append(f"they disagree on {len(d['disagree'])} questions: {visible(d['a'])} right on "
                 f"{d['a_right_b_wrong']}, {visible(d['b'])} right on {d['b_right_a_wrong']}\n", style="dim")
        for q in d["disagree"][:200]:
            t.append(f"  {visible(q['question']):<14} {visible(q['family'])[:24]:<25} ")
            for name, letter in ((d["a"], q["a"]), (d["b"], q["b"])):
                style = "green" if letter == q["winner"] else "red"
                t.append(f"{visible(name)[:10]} {letter}  ", style=style)
            t.append(f"winner {q['winner'] or '—'}\n", style="dim")
    return t

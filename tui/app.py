"""CuratorApp: the curator's terminal app (queue, design, diff, judging, reports).

Shape (after Harlequin): the UI never touches DuckDB. Every store call goes
through `store.app_queries.AppStore` inside a thread worker defined here
(`@work(thread=True, exclusive=True, group=..., exit_on_error=False)`); each
worker sends its result back as a Message (`tui.widgets.messages`) and one
`Worker.StateChanged` handler reports failures. Nothing here imports torch:
graphs are parsed and shapes inferred by core's pure-Python walk.

Writes (judgments, undos, missed defects) go through one FIFO: one write
worker at a time, in the order the curator acted, so an undo always follows
the judgment it undoes. Quitting waits for the queue to drain.
"""

from __future__ import annotations

import gc
import os
import time
from collections import OrderedDict, deque
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from textual import work
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen
from textual.worker import Worker, WorkerState, get_current_worker

from archcurator.store.app_queries import AppStore

from .config import Config, load_config
from .widgets.messages import (
    DesignLoaded,
    DiffReady,
    FacetsLoaded,
    KbDetailLoaded,
    KbLoaded,
    KbOpDone,
    KbSuggestionsLoaded,
    NextFound,
    ProgressLoaded,
    QueueLoaded,
    ReportsLoaded,
    RowsLoaded,
    RunUpdate,
    WriteDone,
)
from .widgets.queue_list import QueueModel

CACHE_SIZE = 32  # prepared designs kept for instant back/next


@dataclass
class SessionEvent:
    """Something the curator did in this session that undo can take back."""

    kind: str  # judgment | clean | missed
    design_id: str
    finding_key: str | None
    verdict: str | None  # real | false_alarm | unsure | clean; the rule for a missed defect
    note: str | None = None
    event_id: int | None = None  # the store's id, once written
    failed: bool = False

    def describe(self) -> str:
        if self.kind == "missed":
            return f"missed defect on {self.design_id}"
        what = self.finding_key or "the design"
        return f"{(self.verdict or '').replace('_', ' ')} on {what} ({self.design_id})"


@dataclass
class WriteOp:
    kind: str  # judge | undo | missed
    event: SessionEvent
    nodes: list | None = None
    description: str | None = None


# Help lines for palette entries, by binding id.
ACTION_HELP = {
    "help": "Every key, and where the config file lives",
    "quit": "Quit (waits for judgments to be saved)",
    "undo": "Undo the last judgment or missed defect of this session",
    "reports": "Refusal rate by author; precision per rule",
    "refresh": "Re-read the store (after an import from the command line)",
    "open_runs": "Runs launched from the app",
    "open_kb": "The proposition knowledge base",
}


class CuratorApp(App[int]):
    """The curator's app on one store file."""

    CSS_PATH = "app.tcss"
    TITLE = "archcurator"
    ENABLE_COMMAND_PALETTE = True
    BINDINGS = [
        Binding("question_mark,f1", "help", "Help", id="help"),
        Binding("q", "quit", "Quit", id="quit"),
        Binding("ctrl+z,z", "undo", "Undo", id="undo"),
        Binding("R", "reports", "Reports", id="reports"),
        Binding("K", "open_kb", "Knowledge base", id="open_kb", show=False),
        Binding("X", "open_runs", "Runs", id="open_runs", show=False),
        Binding("f5", "refresh", "Refresh", id="refresh", show=False),
    ]

    def __init__(self, db_path: str | os.PathLike, config: Config | None = None, *, curator: str | None = None,
                 cursor_blink: bool | None = None, prefetch: bool = True) -> None:
        super().__init__()
        self.config = config or load_config()
        if curator:
            self.config.curator = curator
        self.curator = self.config.curator
        self.db_path = Path(db_path)
        self.store = AppStore(self.db_path, self.curator)
        self.cursor_blink = self.config.cursor_blink if cursor_blink is None else cursor_blink
        self.prefetch_enabled = prefetch
        self.main_queue = QueueModel()
        self.session: list[SessionEvent] = []
        self.design_cache: OrderedDict = OrderedDict()
        self.facets: dict = {}
        self.progress: dict | None = None
        self._writes: deque[WriteOp] = deque()
        self._write_running = False
        self._current_write: WriteOp | None = None
        self._quit_when_saved = False
        self._versions: dict[str, int] = {}  # design id -> writes submitted (stale prefetch guard)
        self._progress_timer = None
        self._design_request: tuple | None = None
        self._started = False
        self.gc_tuning = True
        self._gc_threshold = gc.get_threshold()
        self._last_input = 0.0
        self.run_handles: list = []  # runs launched in this session, oldest first
        self.stored_runs: dict = {}  # run id -> the store's run id
        self._persisting: set = set()
        self.sub_title = f"{self.db_path.name} · curator {self.curator}"

    # ---- start-up ----------------------------------------------------------------
    def get_default_screen(self) -> Screen:
        from .screens.queue import QueueScreen

        return QueueScreen(self.main_queue, main=True)

    def on_mount(self) -> None:
        if self.config.keymap:
            self.set_keymap(self.config.keymap)
        for problem in self.config.problems:
            self.notify(problem, title="config", severity="warning", timeout=10)

    def first_page_shown(self) -> None:
        """The queue drew its first screen: now read what can wait (filter values, progress)."""
        if not self._started:
            self._started = True
            self.load_facets()
            self.load_progress(dict(self.main_queue.filters))
            self._tune_gc()

    # ---- garbage collection off the keystroke path ------------------------------------------
    def _tune_gc(self) -> None:
        """A full (generation 2) collection walks every live object: 30-60 ms with a screen of
        widgets and caches, a visible stall when it lands on a key press. So the start-up objects
        are frozen (never garbage), automatic full collections are put off, and the app collects
        while the curator is idle instead. Young generations are collected as usual."""
        if not self.gc_tuning:
            return
        gc.freeze()
        g0, g1, _ = gc.get_threshold()
        gc.set_threshold(g0, g1, 1_000_000)
        self.set_interval(2.0, self._idle_collect)

    def on_key(self, event) -> None:
        self._last_input = time.monotonic()

    def _idle_collect(self) -> None:
        if time.monotonic() - self._last_input > 1.0 and gc.get_count()[2] > 0:
            gc.collect()

    def on_unmount(self) -> None:
        if self.gc_tuning and self._started:
            gc.set_threshold(*self._gc_threshold)
            gc.unfreeze()

    # ---- workers: reads ------------------------------------------------------------
    def _post(self, target, message) -> None:
        """Send a worker's result unless the worker was cancelled meanwhile."""
        worker = get_current_worker()
        if not worker.is_cancelled:
            target.post_message(message)

    @work(thread=True, exclusive=True, group="facets", exit_on_error=False)
    def load_facets(self) -> None:
        self._post(self, FacetsLoaded(self.store.facets()))

    @work(thread=True, exclusive=True, group="queue", exit_on_error=False)
    def load_queue(self, target, model: QueueModel, generation: int, select: str | None = None) -> None:
        ids, rows = self.store.queue_start(dict(model.filters), model.sort, around=select)
        self._post(target, QueueLoaded(model, generation, ids, select, rows))

    @work(thread=True, exclusive=True, group="rows", exit_on_error=False)
    def load_rows(self, target, model: QueueModel, generation: int, ids: list[str]) -> None:
        self._post(target, RowsLoaded(model, generation, self.store.rows_for(ids)))

    @work(thread=True, exclusive=False, group="row-refresh", exit_on_error=False)
    def refresh_rows(self, ids: list[str]) -> None:
        rows = self.store.rows_for(ids)
        self._post(self, RowsLoaded(None, -1, rows))

    @work(thread=True, exclusive=True, group="progress", exit_on_error=False)
    def load_progress(self, filters: dict) -> None:
        self._post(self, ProgressLoaded(self.store.progress(filters)))

    @work(thread=True, exclusive=True, group="design", exit_on_error=False)
    def load_design(self, target, design_id: str, request: int) -> None:
        from .widgets.design_model import prepare_view

        version = self._versions.get(design_id, 0)
        data = self.store.design(design_id)
        view = prepare_view(data) if data is not None else None
        if view is not None:
            view.version = version
        self._post(target, DesignLoaded(design_id, view, request))

    @work(thread=True, exclusive=True, group="prefetch", exit_on_error=False)
    def prefetch(self, design_ids: list[str]) -> None:
        from .widgets.design_model import prepare_view

        versions = {d: self._versions.get(d, 0) for d in design_ids}
        for did, data in self.store.designs(design_ids).items():
            if get_current_worker().is_cancelled:
                return
            view = prepare_view(data)
            view.version = versions[did]
            self._post(self, DesignLoaded(did, view, -1))

    @work(thread=True, exclusive=True, group="next", exit_on_error=False)
    def find_next(self, target, ids: list[str], base: int, request: int) -> None:
        k = self.store.first_unfinished(ids)
        self._post(target, NextFound(None if k is None else base + k, request))

    @work(thread=True, exclusive=True, group="diff", exit_on_error=False)
    def compute_diff(self, target, base_kind: str, base_name: str, b_graph: dict, b_label: str,
                     request: int) -> None:
        from archcurator.core.diff import diff_designs
        from archcurator.core.graph import Design

        if base_kind == "reference":
            graph, where = self.store.reference(base_name)
            label = f"{base_name} (reference)"
            if graph is None:
                raise LookupError(f"reference architecture {base_name!r} not found in assets/architectures "
                                  "or the store")
        else:
            graph = self.store.graph(base_name)
            label = f"{base_name} ({base_kind})"
            if graph is None:
                raise LookupError(f"design {base_name!r} has no graph in the store")
        diff = diff_designs(Design.from_dict(graph, source=label), Design.from_dict(b_graph, source=b_label))
        self._post(target, DiffReady(diff, label, b_label, request))

    # the knowledge base
    @work(thread=True, exclusive=True, group="kb-load", exit_on_error=False)
    def kb_load(self, target, status: str, request: int) -> None:
        self._post(target, KbLoaded(self.store.kb_view(status), request))

    @work(thread=True, exclusive=True, group="kb-suggest", exit_on_error=False)
    def kb_suggest(self, target, request: int) -> None:
        self._post(target, KbSuggestionsLoaded(self.store.kb_suggestions(), request))

    @work(thread=True, exclusive=True, group="kb-detail", exit_on_error=False)
    def kb_detail(self, target, pid: int, request: int) -> None:
        self._post(target, KbDetailLoaded(pid, self.store.kb_evidence(pid), request))

    @work(thread=True, exclusive=True, group="kb-write", exit_on_error=False)
    def kb_write(self, target, op: str, args: tuple, kwargs: dict) -> None:
        # the screen sends one operation at a time (it waits for KbOpDone), so nothing is cancelled
        result = self.store.kb_op(op, *args, **kwargs)
        target.post_message(KbOpDone(op, result))

    @work(thread=True, exclusive=True, group="reports", exit_on_error=False)
    def load_reports(self, target) -> None:
        self._post(target, ReportsLoaded(self.store.refusals(), self.store.rules()))

    # ---- the design cache ----------------------------------------------------------
    def cache_view(self, view) -> None:
        if view is None:
            return
        if getattr(view, "version", 0) != self._versions.get(view.id, 0):
            return  # fetched before a write to it: stale
        self.design_cache[view.id] = view
        self.design_cache.move_to_end(view.id)
        while len(self.design_cache) > CACHE_SIZE:
            self.design_cache.popitem(last=False)

    def cached_view(self, design_id: str):
        view = self.design_cache.get(design_id)
        if view is not None:
            self.design_cache.move_to_end(design_id)
        return view

    def want_prefetch(self, design_ids: Iterable[str]) -> None:
        if not self.prefetch_enabled:
            return
        todo = [d for d in design_ids if d and d not in self.design_cache]
        if todo:
            self.prefetch(todo)

    def on_design_loaded(self, message: DesignLoaded) -> None:
        # prefetched views arrive here (request -1); the design screen's own go to it
        self.cache_view(message.view)

    # ---- judging: optimistic local state + the write FIFO ---------------------------
    def _bump(self, design_id: str) -> None:
        self._versions[design_id] = self._versions.get(design_id, 0) + 1

    def judge(self, view, finding: dict | None, verdict: str, note: str | None = None) -> SessionEvent:
        """Record a verdict on a finding (or `clean` on the design, finding None)."""
        key = finding["key"] if finding is not None else None
        event = SessionEvent("clean" if key is None else "judgment", view.id, key, verdict, note)
        if finding is not None:
            finding["verdict"] = verdict
            finding.setdefault("judgments", {})[self.curator] = {"verdict": verdict, "note": note}
        else:
            view.data.setdefault("design_judgments", {})[self.curator] = {"verdict": "clean", "note": note}
        self._local_row_update(view)
        self.session.append(event)
        self._submit(WriteOp("judge", event))
        return event

    def mark_missed(self, view, nodes: list[str], rule: str | None, description: str | None) -> SessionEvent:
        event = SessionEvent("missed", view.id, None, rule, description)
        view.data.setdefault("missed_defects", []).append(
            {"id": None, "curator": self.curator, "nodes": nodes, "rule": rule, "description": description})
        self.session.append(event)
        self._submit(WriteOp("missed", event, nodes=nodes, description=description))
        return event

    def _local_row_update(self, view) -> None:
        row = self.main_queue.rows.get(view.id)
        if row is None:
            return
        done, total = view.judged_count()
        row["n_judged"] = done
        if total == 0:
            row["judged"] = "judged" if view.is_clean_marked(self.curator) else "unjudged"
        else:
            row["judged"] = "unjudged" if done == 0 else ("partly" if done < total else "judged")
        self._queue_row_changed(view.id)

    def _queue_row_changed(self, design_id: str) -> None:
        from .widgets.queue_list import QueueList

        for screen in self.screen_stack:
            for ql in screen.query(QueueList):
                if ql.model is self.main_queue:
                    ql.row_changed(design_id)

    def action_undo(self) -> None:
        while self.session and self.session[-1].failed:
            self.session.pop()
        if not self.session:
            self.notify("nothing to undo in this session")
            return
        event = self.session.pop()
        self._submit(WriteOp("undo", event))

    def _submit(self, op: WriteOp) -> None:
        self._bump(op.event.design_id)
        if op.kind == "undo":
            self.design_cache.pop(op.event.design_id, None)
        self._writes.append(op)
        self._pump()

    def _pump(self) -> None:
        if self._write_running:
            return
        if not self._writes:
            if self._quit_when_saved:
                self.exit(0)
            return
        op = self._writes.popleft()
        self._write_running = True
        self._current_write = op
        self._run_write(op)

    @property
    def writes_pending(self) -> int:
        return len(self._writes) + (1 if self._write_running else 0)

    @work(thread=True, exclusive=True, group="write", exit_on_error=False)
    def _run_write(self, op: WriteOp) -> None:
        ev = op.event
        if op.kind == "judge":
            result = self.store.judge(ev.design_id, ev.finding_key, ev.verdict, ev.note)
        elif op.kind == "missed":
            result = self.store.mark_missed(ev.design_id, op.nodes or [], ev.verdict, op.description)
        elif op.kind == "undo":
            if ev.event_id is None:
                raise RuntimeError(f"cannot undo {ev.describe()}: it was never saved")
            if ev.kind == "missed":
                self.store.retract_missed(ev.event_id)
                result = ev.event_id
            else:
                result = self.store.undo(ev.event_id)
        else:  # pragma: no cover
            raise ValueError(op.kind)
        self.post_message(WriteDone(op, result))

    def on_write_done(self, message: WriteDone) -> None:
        op = message.op
        if op.kind in ("judge", "missed"):
            op.event.event_id = message.result
        if op.kind == "undo":
            self.notify(f"undone: {op.event.describe()}", timeout=4)
        self.refresh_rows([op.event.design_id])
        self._schedule_progress()
        for screen in self.screen_stack:
            handler = getattr(screen, "write_done", None)
            if handler is not None:
                handler(op)

    def _schedule_progress(self) -> None:
        if self._progress_timer is not None:
            self._progress_timer.stop()
        self._progress_timer = self.set_timer(0.4, lambda: self.load_progress(dict(self.main_queue.filters)))

    def on_rows_loaded(self, message: RowsLoaded) -> None:
        # refreshed rows after a write (model None): merge into the main queue's cache
        if message.model is None:
            self.main_queue.rows.update(message.rows)
            for did in message.rows:
                self._queue_row_changed(did)

    def on_facets_loaded(self, message: FacetsLoaded) -> None:
        self.facets = message.facets

    def on_progress_loaded(self, message: ProgressLoaded) -> None:
        self.progress = message.progress
        for screen in self.screen_stack:
            handler = getattr(screen, "progress_changed", None)
            if handler is not None:
                handler(message.progress)

    # ---- errors: the one handler ---------------------------------------------------------
    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        worker = event.worker
        if event.state == WorkerState.ERROR:
            error = worker.error
            text = " ".join(str(error).split()) or type(error).__name__
            self.log.error(f"worker {worker.name or worker.group} failed: {error!r}")
            self.notify(text, title=f"{worker.group} failed", severity="error", timeout=10)
            if worker.group == "write":
                self._write_failed(worker)
            else:
                for screen in self.screen_stack:
                    handler = getattr(screen, "worker_failed", None)
                    if handler is not None:
                        handler(worker.group, text)
        if worker.group == "write" and event.state in (WorkerState.SUCCESS, WorkerState.ERROR,
                                                       WorkerState.CANCELLED):
            self._write_running = False
            self._pump()

    def _write_failed(self, worker: Worker) -> None:
        # the optimistic state shown was never saved: drop it and re-read the design
        op = self._current_write
        if op is None:
            return
        if op.kind != "undo":
            op.event.failed = True
            if op.event in self.session:
                self.session.remove(op.event)
        else:
            self.session.append(op.event)  # still there: it can be undone again
        did = op.event.design_id
        self.design_cache.pop(did, None)
        self._bump(did)
        self.refresh_rows([did])
        for screen in self.screen_stack:
            handler = getattr(screen, "reload_if_showing", None)
            if handler is not None:
                handler(did)

    # ---- navigation -------------------------------------------------------------------------
    def action_help(self) -> None:
        from .screens.help import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    def action_reports(self) -> None:
        from .screens.reports import ReportsScreen

        if not isinstance(self.screen, ReportsScreen):
            self.push_screen(ReportsScreen())

    def action_refresh(self) -> None:
        self.design_cache.clear()
        self.load_facets()
        for screen in self.screen_stack:
            handler = getattr(screen, "refresh_data", None)
            if handler is not None:
                handler()

    def action_open_runs(self) -> None:
        self._open_optional("runs")

    def action_open_kb(self) -> None:
        self._open_optional("kb")

    def _open_optional(self, name: str) -> None:
        # the runs and KB screens import their own heavier modules: loaded on first use
        if name == "runs":
            from .screens.runs import RunsScreen as cls
        else:
            from .screens.kb import KnowledgeBaseScreen as cls
        if isinstance(self.screen, cls):
            return
        for screen in self.screen_stack:
            if isinstance(screen, cls):  # already open below: go back to it
                while self.screen is not screen:
                    self.pop_screen()
                return
        self.push_screen(cls())

    def launch_run(self, design_id: str, kind: str = "forward") -> None:
        """Start a forward check (or a short training) of a stored design, through the runs screen's hook."""
        from .screens.runs import RunsScreen

        RunsScreen.launch(self, design_id, kind)

    # ---- runs: launched here, watched by the runs screen, stored by this process -------------
    TRAIN_STEPS = 200

    def start_run(self, design_id: str, kind: str = "forward") -> None:
        self._submit_run(design_id, kind)

    @work(thread=True, exclusive=False, group="run-launch", exit_on_error=False)
    def _submit_run(self, design_id: str, kind: str) -> None:
        from archcurator.core.runs import RunSpec, get_runner

        graph = self.store.graph(design_id)
        if graph is None:
            raise LookupError(f"{design_id} has no graph to run (it was not generated)")
        spec = RunSpec(kind=kind, design=graph, device="auto",
                       steps=self.TRAIN_STEPS if kind == "train" else None, tags={"design_id": design_id})
        handle = get_runner().submit(spec)
        self.call_from_thread(self._run_submitted, handle)
        handle.add_listener(lambda ev, h=handle: self._run_event(h, ev))  # replays what already happened

    def _run_submitted(self, handle) -> None:
        self.run_handles.append(handle)
        what = "forward check" if handle.spec.kind == "forward" else handle.spec.kind
        self.notify(f"{what} of {handle.spec.tags.get('design_id')} started — X shows the runs", timeout=4)

    def _run_event(self, handle, event) -> None:
        # on the runner's thread: only the end matters here (the runs screen polls the rest)
        if getattr(event, "type", "") == "result":
            self.post_message(RunUpdate(handle))

    def on_run_update(self, message: RunUpdate) -> None:
        handle = message.handle
        if message.stored_id is not None:
            self.stored_runs[handle.run_id] = message.stored_id
            did = (handle.spec.tags or {}).get("design_id")
            if did:
                self.design_cache.pop(did, None)
                self._bump(did)
                for screen in self.screen_stack:
                    handler = getattr(screen, "reload_if_showing", None)
                    if handler is not None:
                        handler(did)
            r = handle.result
            outcome = r.exception or r.status
            self.notify(f"{handle.spec.kind} of {did}: {outcome}", severity="information" if r.status == "ok"
                        else "warning", timeout=6)
            return
        if handle.run_id not in self._persisting:
            self._persisting.add(handle.run_id)
            self._persist_run(handle)

    @work(thread=True, exclusive=False, group="run-store", exit_on_error=False)
    def _persist_run(self, handle) -> None:
        from .commands.run_cmd import persist_result

        stored = persist_result(self.store.db, handle.spec, handle.result)
        self.post_message(RunUpdate(handle, stored))

    async def action_quit(self) -> None:
        if self.writes_pending:
            self._quit_when_saved = True
            self.notify(f"saving {self.writes_pending} judgment(s) before quitting…")
            return
        self.exit(0)

    # ---- the command palette ------------------------------------------------------------------
    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        seen = set()
        for binding in list(getattr(screen, "BINDINGS", [])) + list(self.BINDINGS):
            if not isinstance(binding, Binding) or not binding.id or binding.id in seen:
                continue
            seen.add(binding.id)
            keys = self.key_for(binding.id)
            target = screen if binding in getattr(screen, "BINDINGS", []) else self
            help_text = getattr(screen, "ACTION_HELP", {}).get(binding.id) or ACTION_HELP.get(binding.id) \
                or binding.description
            yield SystemCommand(f"{binding.description}", f"{help_text}  [{keys}]",
                                _runner(target, binding.action))

    def key_for(self, binding_id: str) -> str:
        """The keys a binding id is on now (config overrides applied), as shown to the curator."""
        from .screens.help import all_bindings

        keys = self.config.keymap.get(binding_id)
        if keys is None:
            for _scope, b in all_bindings():
                if b.id == binding_id:
                    keys = b.key
                    break
        return _pretty_keys(keys or "")


def _runner(target, action: str):
    async def run() -> None:
        await target.run_action(action)

    return run


_KEY_NAMES = {"question_mark": "?", "right_square_bracket": "]", "left_square_bracket": "[", "slash": "/",
              "plus": "+", "minus": "-", "escape": "esc", "enter": "enter", "colon": ":"}


def _pretty_keys(keys: str) -> str:
    return " / ".join(_KEY_NAMES.get(k.strip(), k.strip()) for k in keys.split(",") if k.strip())

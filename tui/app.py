"""CuratorApp: the curator's terminal app (queue, design, diff, judging, reports, runs, KB, review).

Shape (after Harlequin): the UI never touches DuckDB. Every store read goes
through `store.app_queries.AppStore` inside a thread worker defined here
(`@work(thread=True, exclusive=True, group=..., exit_on_error=False)`); each
worker sends its result back as a Message (`tui.widgets.messages`) and one
`Worker.StateChanged` handler reports failures. Writes go through the write
queue (`tui.writes`), runs through the run bridge (`tui.run_bridge`).
Nothing here imports torch: graphs are parsed and shapes inferred by core's
pure-Python walk.

Everything shown that came from outside (ids, names, messages, notes, logs)
is plain text made visible by `tui.sanitise`: never markup, never a raw
control character.
"""

from __future__ import annotations

import gc
import os
import time
from collections import OrderedDict
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import events, work
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen
from textual.timer import Timer
from textual.worker import Worker, WorkerState, get_current_worker

from archcurator.store.app_queries import AppStore
from archcurator.store.records import Progress, QueueState

from .config import Config, load_config
from .keygate import KeyGate
from .run_bridge import RunBridge
from .sanitise import markup_escape, one_line, visible, visible_lines
from .widgets.messages import (
    DesignLoaded,
    FacetsLoaded,
    NextFound,
    OutsideTokenRead,
    ProgressLoaded,
    QueueLoaded,
    RowsLoaded,
    RunUpdate,
    WriteDone,
)
from .widgets.queue_list import QueueModel, id_width
from .writes import WRITE_GROUP, WriteOp, WriteQueue

if TYPE_CHECKING:
    from .screens.modals import ChoiceScreen

CACHE_SIZE = 32  # prepared designs kept for instant back/next


# Help lines for palette entries, by binding id.
ACTION_HELP = {
    "help": "Every key, and where the config file lives",
    "quit": "Quit (waits for judgments to be saved; asks what to do with runs still going)",
    "undo": ("Undo your newest step (a verdict, a note, a bulk verdict, a flag, a missed defect, a "
             "knowledge-base operation), even after a restart"),
    "reports": "Refusal rate by author; precision per rule; agreement between two curators",
    "refresh": "Re-read the store now (the app also re-reads it by itself within a second of an import or "
               "archive from the command line)",
    "open_runs": "Runs launched from the app, and those stored before",
    "open_kb": "The proposition knowledge base",
    "open_review": "Findings two curators judged differently: record the final verdict",
}


class CuratorApp(App[int]):
    """The curator's app on one store file."""

    CSS_PATH = "app.tcss"
    TITLE = "archcurator"
    ENABLE_COMMAND_PALETTE = True
    TRAIN_STEPS = 200  # a short training launched from the app
    BINDINGS = [
        Binding("question_mark,f1", "help", "Help", id="help"),
        Binding("q", "quit", "Quit", id="quit"),
        Binding("ctrl+z,z", "undo", "Undo", id="undo"),
        Binding("R", "reports", "Reports", id="reports"),
        Binding("K", "open_kb", "Knowledge base", id="open_kb", show=False),
        Binding("X", "open_runs", "Runs", id="open_runs", show=False),
        Binding("V", "open_review", "Review", id="open_review", show=False),
        Binding("f5", "refresh", "Refresh", id="refresh", show=False),
    ]

    def __init__(self, db_path: str | os.PathLike, config: Config | None = None, *, curator: str | None = None,
                 cursor_blink: bool | None = None, prefetch: bool = True) -> None:
        super().__init__()
        read_esc_then_key_as_typed()
        self.config = config or load_config()
        if curator:
            self.config.curator = curator
        self.curator = self.config.curator
        self.db_path = Path(db_path)
        self.store = AppStore(self.db_path, self.curator)
        self.cursor_blink = self.config.cursor_blink if cursor_blink is None else cursor_blink
        self.prefetch_enabled = prefetch
        self.main_queue = QueueModel()
        self.writes = WriteQueue(self)
        self.runs = RunBridge(self)
        self.keys = KeyGate(self)
        self.steps_this_session = 0  # steps taken (shown at once, saved or not)
        # this curator's own verdicts as this app last wrote them ((design, key) -> event id) and its own
        # writes still queued per finding: what a second instance run under the same name is compared with
        self._own_event: dict = {}
        self._own_pending: dict = {}
        self.steps_saved = 0  # writes DuckDB has committed this session (undo counts as one): "N saved"
        self.design_cache: OrderedDict = OrderedDict()
        self.facets: dict = {}
        self.progress: Progress | None = None
        self._quitting = False
        # the "runs are still going" question, and the "a note is typed and not saved" one, while open
        self._quit_question: ChoiceScreen | None = None
        self._note_question: ChoiceScreen | None = None
        self._drop_notes = False  # the curator chose to quit without the unsaved note
        self.last_design_shown: tuple | None = None  # (queue model, design id) of the design screen's last
        self._versions: dict[str, int] = {}  # design id -> writes submitted (stale prefetch guard)
        self._progress_timer: Timer | None = None
        self._started = False
        self.gc_tuning = True
        self._gc_threshold = gc.get_threshold()
        self._last_input = 0.0
        self.store_watch_s = 1.0  # how often the store's file is looked at for changes from outside
        self._store_stamp: tuple | None = None
        self._outside_token: tuple | None = None
        self._queue_state_read = False
        self._queue_state_saved: tuple | None = None
        self.sub_title = visible(f"{self.db_path.name} · curator {self.curator}")

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
            self._store_stamp = self._file_stamp()
            self.read_outside_token()
            self.set_interval(self.store_watch_s, self._watch_store)

    # ---- changes made outside the app (import, archive from the command line) -----------------
    def _file_stamp(self) -> tuple:
        """The store file's and its write-ahead log's modification time and size: a stat, no DuckDB."""
        out: list[tuple[int, int] | None] = []
        for path in (self.db_path, self.db_path.with_name(self.db_path.name + ".wal")):
            try:
                st = path.stat()
                out.append((st.st_mtime_ns, st.st_size))
            except OSError:
                out.append(None)
        return tuple(out)

    def _watch_store(self) -> None:
        """The file changed (ours or another process's write): compare what only others change."""
        stamp = self._file_stamp()
        if stamp != self._store_stamp:
            self._store_stamp = stamp
            self.read_outside_token()

    def on_app_focus(self, event) -> None:
        """Back in the app's terminal (where it reports focus): look at the store at once."""
        if self._started:
            self._store_stamp = self._file_stamp()
            self.read_outside_token()

    @work(thread=True, exclusive=True, group="store-watch", exit_on_error=False)
    def read_outside_token(self) -> None:
        from archcurator.store.connection import StoreError

        try:
            token = self.store.outside_token()
        except StoreError:
            return  # busy or gone for now: the next change of the file looks again
        self._post(self, OutsideTokenRead(token))

    def on_outside_token_read(self, message: OutsideTokenRead) -> None:
        if self._outside_token is None:
            self._outside_token = message.token
            return
        if message.token != self._outside_token:
            self._outside_token = message.token
            self.notify("the store changed outside the app (an import or an archive): its lists were re-read",
                        timeout=5)
            self.action_refresh()

    # ---- what is shown: plain text, never markup ------------------------------------------
    def notify(self, message: str, *, title: str = "", severity="information", timeout: float | None = None,
               markup: bool = False) -> None:
        """Every notification is plain text made visible: ids and messages come from outside, and a
        screen's or widget's `notify` passes `markup=True` by default, so markup is never read here."""
        super().notify(visible_lines(message), title=visible(title), severity=severity, timeout=timeout,
                       markup=False)

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

    async def on_event(self, event: events.Event) -> None:
        # keys from the terminal one at a time, each after the last one's effects (tui.keygate)
        if isinstance(event, events.Key) and not event.is_forwarded:
            for key in _esc_then_key(event):
                if not self.keys.admit(key):
                    continue
                try:
                    await super().on_event(key)
                finally:
                    self.keys.handled()
            return
        await super().on_event(event)

    def _idle_collect(self) -> None:
        if time.monotonic() - self._last_input > 1.0 and gc.get_count()[2] > 0:
            gc.collect()

    def on_unmount(self) -> None:
        if self.gc_tuning and self._started:
            gc.set_threshold(*self._gc_threshold)
            gc.unfreeze()

    # ---- workers: reads ------------------------------------------------------------
    def _post(self, target, message) -> None:
        """Send a worker's result unless the worker was cancelled, or its screen closed, meanwhile."""
        worker = get_current_worker()
        if worker.is_cancelled:
            return
        if isinstance(target, Screen) and target not in self.screen_stack:
            return
        target.post_message(message)

    @work(thread=True, exclusive=True, group="facets", exit_on_error=False)
    def load_facets(self) -> None:
        self._post(self, FacetsLoaded(self.store.facets()))

    @work(thread=True, exclusive=True, group="queue", exit_on_error=False)
    def load_queue(self, target, model: QueueModel, generation: int, select: str | None = None) -> None:
        if model is self.main_queue:
            self._keep_queue_state(model)
        ids, rows = self.store.queue_start(dict(model.filters), model.sort, around=select)
        self._post(target, QueueLoaded(model, generation, ids, select, rows, id_width(ids)))

    def _keep_queue_state(self, model: QueueModel) -> None:
        """(In the queue worker.) The first read restores the filters and sort the curator left the queue
        with (kept per curator in the store); each later one keeps them."""
        from archcurator.store.connection import StoreError

        from .widgets.queue_list import FILTER_KEYS, SORTS

        try:
            if not self._queue_state_read:
                self._queue_state_read = True
                state: QueueState = self.store.queue_state() or {}
                filters = state.get("filters")
                saved = filters if isinstance(filters, dict) else {}
                if not model.filters:
                    model.filters.update({k: v for k, v in saved.items() if k in FILTER_KEYS and v not in (None, "")})
                sort = state.get("sort")
                if isinstance(sort, str) and sort.lstrip("-") in {k.lstrip("-") for k, _ in SORTS}:
                    model.sort = sort
                self._queue_state_saved = (dict(model.filters), model.sort)
                return
            now = (dict(model.filters), model.sort)
            if now != self._queue_state_saved:
                self.store.save_queue_state(*now)
                self._queue_state_saved = now
        except StoreError:
            pass  # busy now: the next change keeps it

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

    def forget_design(self, design_id: str) -> None:
        """A write changed this design in ways only the store knows: drop what is cached of it."""
        self._bump(design_id)
        self.design_cache.pop(design_id, None)

    # ---- judging: optimistic local state, then the write queue ---------------------------
    def _bump(self, design_id: str) -> None:
        self._versions[design_id] = self._versions.get(design_id, 0) + 1

    def submit(self, op: WriteOp) -> None:
        if op.design_id is not None:
            self._bump(op.design_id)
        if op.kind in ("undo", "bulk", "adjudicate"):
            self.design_cache.clear()  # which designs change, the store says when it is done
        if op.kind != "undo":
            self.steps_this_session += 1
        if op.kind in ("judge", "note") and op.design_id is not None:
            k = (op.design_id, op.args.get("key"))
            self._own_pending[k] = self._own_pending.get(k, 0) + 1
        self.writes.submit(op)
        self.writes_changed()

    def writes_changed(self) -> None:
        """Steps were submitted, committed or refused: the screens that show what is pending follow."""
        for screen in self.screen_stack:
            handler = getattr(screen, "writes_changed", None)
            if handler is not None:
                handler()

    @property
    def writes_pending(self) -> int:
        return self.writes.pending

    def writes_status(self) -> str:
        """What is saved and what is not yet, as the design screen shows it: a step counts as saved only
        once DuckDB has committed it, so a crash loses at most what is shown as saving. "N saved" counts
        the writes committed this session and never goes down: an undo is one more write."""
        text = f"{self.steps_saved} saved"
        if self.writes.pending:
            text += f" · saving {self.writes.pending}…"
            if self.writes.waiting_on:
                text += f" ({self.writes.waiting_on})"
        return text

    def judge(self, view, finding: dict | None, verdict: str, note: str | None = None) -> None:
        """Record a verdict on a finding (or `clean` on the design, finding None)."""
        key = finding["key"] if finding is not None else None
        mine = {"verdict": verdict, "note": note}
        args = {"key": key, "verdict": verdict, "note": note}
        if finding is not None:
            # the other curators' verdicts as shown: the store says which changed since (a notice, not a loss)
            seen: dict[str, Any] = {who: (j or {}).get("event_id")
                                    for who, j in (finding.get("judgments") or {}).items() if who != self.curator}
            own = self._own_shown(view, finding)
            if own is not False:
                seen[self.curator] = own
            args["seen"] = seen
            finding["verdict"] = verdict
            finding.setdefault("judgments", {})[self.curator] = mine
        else:
            view.data.setdefault("design_judgments", {})[self.curator] = mine
        (view.data.get("flags") or {}).pop(key, None)
        self._local_row_update(view)
        self.submit(WriteOp("judge", view.id, args))

    def _own_shown(self, view, finding: dict):
        """The event id of this curator's verdict on `finding` as this app shows it (None: none shown), or
        False where this app cannot tell (a write of its own still queued for it, or an undo, bulk verdict
        or adjudication that rewrote its verdicts since the design was read)."""
        k = (view.id, finding["key"])
        if self._own_pending.get(k) or view.data.get("_own_rewritten"):
            return False
        if any(op.kind in ("undo", "bulk", "adjudicate") for op in self.writes.pending_ops()):
            return False
        shown = ((finding.get("judgments") or {}).get(self.curator) or {}).get("event_id")
        ids = [i for i in (shown, self._own_event.get(k)) if i is not None]
        return max(ids) if ids else None

    def _own_written(self, op: WriteOp, result, failed: bool = False) -> None:
        if op.kind not in ("judge", "note") or op.design_id is None:
            return
        k = (op.design_id, op.args.get("key"))
        n = self._own_pending.get(k, 0) - 1
        if n > 0:
            self._own_pending[k] = n
        else:
            self._own_pending.pop(k, None)
        if failed:
            return
        event = result.get("event") if isinstance(result, dict) else result
        if isinstance(event, int):
            self._own_event[k] = event

    def save_note(self, view, finding: dict | None, note: str | None) -> None:
        """A note added to (or changed on) a verdict already given: the verdict stays."""
        key = finding["key"] if finding is not None else None
        holder = finding.get("judgments", {}) if finding is not None else view.data.get("design_judgments", {})
        if self.curator in holder:
            holder[self.curator] = dict(holder[self.curator], note=note)
        self.submit(WriteOp("note", view.id, {"key": key, "note": note}))

    def flag(self, view, finding: dict | None, flagged: bool) -> None:
        key = finding["key"] if finding is not None else None
        flags = view.data.setdefault("flags", {})
        if flagged:
            flags[key] = None
        else:
            flags.pop(key, None)
        self._local_row_update(view)
        self.submit(WriteOp("flag", view.id, {"key": key, "flagged": flagged}))

    def mark_missed(self, view, nodes: list[str], rule: str | None, description: str | None) -> None:
        view.data.setdefault("missed_defects", []).append(
            {"id": None, "curator": self.curator, "nodes": nodes, "rule": rule, "description": description})
        self.submit(WriteOp("missed", view.id, {"nodes": nodes, "rule": rule, "description": description}))

    def retract_missed(self, view, defect: dict) -> None:
        if defect in view.data.get("missed_defects", []):
            view.data["missed_defects"].remove(defect)
        self.submit(WriteOp("retract", view.id, {"defect_id": defect["id"]}))

    def bulk_judge(self, rule: str, verdict: str, scope: str, design_id: str, filters: dict) -> None:
        self.submit(WriteOp("bulk", design_id, {"rule": rule, "verdict": verdict, "scope": scope,
                                                "filters": dict(filters)}))

    def adjudicate(self, design_id: str, key: str, verdict: str, note: str | None = None) -> None:
        self.submit(WriteOp("adjudicate", design_id, {"key": key, "verdict": verdict, "note": note}))

    def _local_row_update(self, view) -> None:
        row = self.main_queue.rows.get(view.id)
        if row is None:
            return
        done, total = view.judged_count()
        row["n_judged"] = done
        row["n_flagged"] = len(view.data.get("flags") or {})
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
        self.submit(WriteOp("undo"))

    def on_write_done(self, message: WriteDone) -> None:
        op, result = message.op, message.result
        designs = [op.design_id] if op.design_id else []
        self._own_written(op, result)
        if op.kind in ("undo", "bulk", "adjudicate"):
            self._own_rewritten(op, result)
        if op.kind != "undo" or result is not None:
            # every write DuckDB committed, an undo included (it is a write of its own: the step it takes
            # back stays in the store's history, marked undone); a count that went down on z read as
            # saved work lost
            self.steps_saved += 1
        self.writes_changed()
        if op.kind == "judge" and isinstance(result, dict) and result.get("changed"):
            self._say_changed(op, result["changed"])
            self.forget_design(op.design_id)
        if op.kind == "undo":
            if result is None:
                self.notify("nothing of yours left to undo")
            else:
                self.steps_this_session = max(self.steps_this_session - 1, 0)
                designs = list(result.get("designs") or [])
                self.notify(f"undone: {result['summary']}", timeout=4)
        elif op.kind == "bulk":
            designs = list((result or {}).get("designs") or [])
            n = (result or {}).get("n", 0)
            self.notify(f"{op.args['verdict'].replace('_', ' ')} on {n} finding{'s' if n != 1 else ''} of "
                        f"{op.args['rule']} ({len(designs)} design{'s' if len(designs) != 1 else ''}) — z undoes "
                        "them all", timeout=5)
        for did in designs:
            if op.kind in ("undo", "bulk", "adjudicate", "retract", "missed"):
                self.forget_design(did)  # the store has what the optimistic view lacks (ids, others' rows)
        if designs:
            self.refresh_rows(designs[:500])
        self._schedule_progress()
        for screen in self.screen_stack:
            handler = getattr(screen, "write_done", None)
            if handler is not None:
                handler(op, result, designs)

    def _own_rewritten(self, op: WriteOp, result) -> None:
        """An undo, bulk verdict or adjudication changed this curator's verdicts: the designs shown now no
        longer say which of them stands until they are read again."""
        info = result if isinstance(result, dict) else {}  # an adjudication answers its event id alone
        designs = set(info.get("designs") or []) | ({op.design_id} if op.design_id else set())
        for d, k in info.get("keys") or []:
            self._own_event.pop((d, k), None)
        for k in [k for k in self._own_event if k[0] in designs]:
            self._own_event.pop(k, None)
        for screen in self.screen_stack:
            view = getattr(screen, "view", None)
            if view is not None and getattr(view, "id", None) in designs and hasattr(view, "data"):
                view.data["_own_rewritten"] = True

    def _say_changed(self, op: WriteOp, changed: list[dict]) -> None:
        from .components.findings import VERDICT_LABEL as VERDICT_WORDS

        parts = []
        for c in changed:
            now = VERDICT_WORDS.get(c["verdict"], c["verdict"])
            if c.get("same_curator"):
                parts.append(f"you ({c['curator']}) judged it {now} in another instance of the app")
            else:
                parts.append(f"{c['curator']} judged it {now}" + ("" if c["was"] is None else " (changed since)"))
        mine = VERDICT_WORDS.get(op.args["verdict"], op.args["verdict"])
        others = any(not c.get("same_curator") for c in changed)
        kept = (" Your {m} is stored beside it (Review, V, lists disagreements)." if others else
                " Your {m} here replaced it; the other instance's verdict stays in the history (z here undoes "
                "yours).").format(m=mine)
        self.notify(f"{op.args.get('key') or op.design_id} on {op.design_id}: since it was shown to you, "
                    f"{'; '.join(parts)}.{kept}",
                    title="changed by another curator" if others else "changed in another instance",
                    severity="warning", timeout=10)

    def write_failed(self, op: WriteOp, error: BaseException) -> None:
        # the optimistic state shown was never saved: drop it and re-read the design
        self._own_written(op, None, failed=True)
        if op.kind != "undo":
            self.steps_this_session = max(self.steps_this_session - 1, 0)
        self.writes_changed()
        did = op.design_id
        if did is None:
            return
        self.forget_design(did)
        self.refresh_rows([did])
        for screen in self.screen_stack:
            handler = getattr(screen, "reload_if_showing", None)
            if handler is not None:
                handler(did)

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
        self.report_worker(event)

    def report_worker(self, event: Worker.StateChanged) -> None:
        """A worker of the app's or of a screen's changed state: a failure is said in one line, and the
        screens that show what it was doing are told (`worker_failed(group, text)`)."""
        worker = event.worker
        if event.state == WorkerState.ERROR:
            error = worker.error
            text = one_line(str(error)) or type(error).__name__
            self.log.error(f"worker {worker.name or worker.group} failed: {error!r}")
            self.notify(text, title=f"{worker.group} failed", severity="error", timeout=10)
            if worker.group == "run-store":
                self.runs.persist_failed()
            elif worker.group != WRITE_GROUP:
                for screen in self.screen_stack:
                    handler = getattr(screen, "worker_failed", None)
                    if handler is not None:
                        handler(worker.group, text)
        if worker.group == WRITE_GROUP:
            self.writes.worker_changed(worker, event.state)

    # ---- navigation -------------------------------------------------------------------------
    def action_help(self) -> None:
        from .screens.help import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    def action_reports(self) -> None:
        from .screens.reports import ReportsScreen

        self._open(ReportsScreen)

    def action_refresh(self) -> None:
        self.design_cache.clear()
        self.load_facets()
        for screen in self.screen_stack:
            handler = getattr(screen, "refresh_data", None)
            if handler is not None:
                handler()

    def action_open_runs(self) -> None:
        from .screens.runs import RunsScreen

        self._open(RunsScreen)

    def action_open_kb(self) -> None:
        from .screens.kb import KnowledgeBaseScreen

        self._open(KnowledgeBaseScreen)

    def action_open_review(self) -> None:
        from .screens.review import ReviewScreen

        self._open(ReviewScreen)

    def _open(self, cls) -> None:
        """Open a screen of its own kind once: already on top, nothing; open below, go back to it."""
        if isinstance(self.screen, cls):
            return
        from textual.screen import ModalScreen

        if isinstance(self.screen, ModalScreen):
            return  # a dialog is open: it answers first
        for screen in self.screen_stack:
            if isinstance(screen, cls):
                while self.screen is not screen:
                    self.pop_screen()
                return
        self.push_screen(cls())

    def open_queue_filtered(self, filters: dict) -> None:
        """Back to the queue, filtered (a Reports row)."""
        from .screens.queue import QueueScreen

        while len(self.screen_stack) > 1 and not isinstance(self.screen, QueueScreen):
            self.pop_screen()
        screen = self.screen
        if isinstance(screen, QueueScreen):
            screen.apply_filters(filters)

    # ---- runs: the bridge does the work; the app tells the screens ---------------------------------
    @property
    def run_handles(self) -> list:
        return self.runs.handles

    @property
    def stored_runs(self) -> dict:
        return self.runs.stored

    def launch_run(self, design_id: str, kind: str = "forward", device: str = "cpu") -> None:
        self.runs.launch(design_id, kind, device)

    def on_run_update(self, message: RunUpdate) -> None:
        self.runs.update(message)

    def run_stored(self, handle, stored_id: int) -> None:
        did = (handle.spec.tags or {}).get("design_id")
        if did:
            self.forget_design(did)
            for screen in self.screen_stack:
                handler = getattr(screen, "reload_if_showing", None)
                if handler is not None:
                    handler(did)
        for screen in self.screen_stack:
            handler = getattr(screen, "run_stored", None)
            if handler is not None:
                handler(handle, stored_id)
        r = handle.result
        outcome = r.exception or r.status
        self.notify(f"{handle.spec.kind} of {did}: {outcome} (stored as run {stored_id})",
                    severity="information" if r.status == "ok" else "warning", timeout=6)

    # ---- quitting -------------------------------------------------------------------------------------
    async def action_quit(self) -> None:
        if self._quitting:
            self._ask_while_quitting()
            return
        if not self._quit_with_unsaved_note():
            return
        live = [h for h in self.runs.active() if h.result is None]
        if live:
            from .screens.modals import ChoiceScreen

            n = len(live)
            choices = [("wait", f"wait for the {n} run{'s' if n != 1 else ''} to finish, store the outcome, then quit"),
                       ("cancel", f"cancel {'them' if n != 1 else 'it'} (stored as cancelled), then quit"),
                       ("stay", "don't quit")]

            def chosen(value) -> None:
                if value == "wait":
                    self._quit_when_settled("waiting for the runs to finish…")
                elif value == "cancel":
                    self.runs.cancel_all()
                    self._quit_when_settled("cancelling the runs…")

            if self._quit_question is not None and self._quit_question in self.screen_stack:
                return  # already asked (q, or ctrl+q, pressed again while the question is open)
            self._quit_question = ChoiceScreen(f"{n} run{'s are' if n != 1 else ' is'} still going", choices)
            self.push_screen(self._quit_question, chosen)
            return
        self._quit_when_settled(None)

    def _ask_while_quitting(self) -> None:
        """Quit again while waiting for runs: the wait is never a trap (cancel them now, or stay after all)."""
        from .screens.modals import ChoiceScreen

        live = [h for h in self.runs.active() if h.result is None]
        if not live:
            self.notify("quitting as soon as everything is stored…")
            return
        if self._quit_question is not None and self._quit_question in self.screen_stack:
            return

        def chosen(value) -> None:
            if value == "cancel":
                self.runs.cancel_all()
                self.notify("cancelling the runs… the app quits when their outcome is stored", timeout=6)
            elif value == "stay":
                self._quitting = False
                self.runs.forget_waiters()
                self.writes.forget_waiters()
                self.clear_notifications()
                self.notify("not quitting: the runs go on (X shows them)", timeout=4)

        n = len(live)
        self._quit_question = ChoiceScreen(
            f"Quitting: waiting for {n} run{'s' if n != 1 else ''}",
            [("cancel", f"cancel {'them' if n != 1 else 'it'} now (stored as cancelled), then quit"),
             ("wait", "keep waiting, then quit"), ("stay", "don't quit after all")])
        self.push_screen(self._quit_question, chosen)

    def _quit_with_unsaved_note(self) -> bool:
        """A note typed and not saved: ask before quitting drops it. True: go on quitting."""
        from .screens.design import DesignScreen
        from .screens.modals import ChoiceScreen

        notes = [(s.judge_bar.note_label, s.judge_bar.unsaved) for s in self.screen_stack
                 if isinstance(s, DesignScreen) and s.is_mounted and s.judge_bar.unsaved]
        if not notes or self._drop_notes:
            return True
        if isinstance(self.screen, ChoiceScreen) and self.screen is self._note_question:
            return False
        label, text = notes[0]
        shown = text if len(text) <= 60 else text[:59] + "…"

        def chosen(value) -> None:
            if value == "quit":
                self._drop_notes = True
                self.call_later(self.run_action, "quit")

        self._note_question = ChoiceScreen(
            f"A note for {label} is typed and not saved: {shown}",
            [("stay", "don't quit (r / f / u saves it with a verdict; enter saves it on a judged finding)"),
             ("quit", "quit without it")], filter=False)
        self.push_screen(self._note_question, chosen)
        return False

    def _quit_when_settled(self, message: str | None) -> None:
        self._quitting = True
        if message:
            # stays up until the app quits: the screen otherwise gives no sign that a quit is pending
            n = len([h for h in self.runs.active() if h.result is None])
            self.notify(f"{message} The app quits by itself when {'they end' if n != 1 else 'it ends'} "
                        "(X shows the runs).", title="quitting", timeout=24 * 3600)
        if self.writes.pending:
            self.notify(f"saving {self.writes.pending} step(s) before quitting…")

        def runs_settled() -> None:
            self.writes.when_drained(lambda: self.exit(0))

        self.runs.when_settled(runs_settled)

    # ---- the command palette ------------------------------------------------------------------
    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        """Textual's own commands, then every binding of the screen and the app, each title once: the app's
        Quit (it asks about runs and unsaved notes; Textual's quits at once) and the app's Refresh (it re-reads
        every screen, this one too) stand for the screens' own of the same name."""
        app_titles = {b.description for b in self.BINDINGS if isinstance(b, Binding)}
        ours, titles, seen = [], set(), set()
        screen_bindings = list(getattr(screen, "BINDINGS", []))
        for binding in screen_bindings + list(self.BINDINGS):
            if not isinstance(binding, Binding) or not binding.id or binding.id in seen:
                continue
            seen.add(binding.id)
            on_screen = binding in screen_bindings
            if (on_screen and binding.description in app_titles) or binding.description in titles:
                continue
            titles.add(binding.description)
            keys = self.key_for(binding.id)
            target = screen if on_screen else self
            help_text = getattr(screen, "ACTION_HELP", {}).get(binding.id) or ACTION_HELP.get(binding.id) \
                or binding.description
            # the palette reads title and help as markup: a key such as [ or / must stay text
            ours.append(SystemCommand(markup_escape(binding.description), markup_escape(f"{help_text}  [{keys}]"),
                                      _runner(target, binding.action)))
        for command in super().get_system_commands(screen):
            if command.title not in titles:
                yield command
        yield from ours

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


def read_esc_then_key_as_typed() -> None:
    """Textual's terminal table reads `esc` followed at once by `f` or `b` as ctrl+right / ctrl+left (emacs
    word moves), by a digit as a macOS option character (esc 2 typed "™" into a note), and
    these never reach the alt+KEY reading below: a curator's esc-then-f left focus in the note and
    the next keys went into it, with the wrong verdict on save. Without those entries the terminal's
    sequence is alt+KEY, read as esc then KEY. Real ctrl+arrows (their own CSI sequences) are unchanged."""
    from typing import cast

    from textual._ansi_sequences import ANSI_SEQUENCES_KEYS as TABLE

    ANSI_SEQUENCES_KEYS = cast(dict, TABLE)  # typed as a Mapping; it is the dict the parser reads
    for seq in [s for s in ANSI_SEQUENCES_KEYS if len(s) == 2 and s[0] == "\x1b" and s[1].isalnum()]:
        ANSI_SEQUENCES_KEYS.pop(seq, None)


def _esc_then_key(event) -> list:
    """A terminal sends `esc` and a key typed soon after it as one sequence, which Textual reads as alt+key:
    a curator's `esc` then `r` (leave the note field, judge) put an `r` in the note. No key of this app is
    bound to alt, so alt+KEY is read as what was typed: esc, then KEY (each through the key gate)."""
    from textual import events

    key, char = event.key, event.character
    if (getattr(event, "_gate_released", False) or not key.startswith("alt+") or char is None or len(char) != 1
            or not char.isprintable()):
        return [event]
    rest = key[len("alt+"):]
    if rest.startswith("shift+"):
        rest = rest[len("shift+"):].upper()
    out = []
    for name, ch in (("escape", "\x1b"), (rest, char)):
        part = events.Key(name, ch)
        if event._sender is not None:
            part.set_sender(event._sender)
        out.append(part)
    return out


def _runner(target, action: str):
    async def run() -> None:
        await target.run_action(action)

    return run


_KEY_NAMES = {"question_mark": "?", "right_square_bracket": "]", "left_square_bracket": "[", "slash": "/",
              "plus": "+", "minus": "-", "escape": "esc", "enter": "enter", "colon": ":"}


def _pretty_keys(keys: str) -> str:
    return " / ".join(_KEY_NAMES.get(k.strip(), k.strip()) for k in keys.split(",") if k.strip())

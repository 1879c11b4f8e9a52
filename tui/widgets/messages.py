"""What the app's workers send back: one Message per result (errors go through Worker.StateChanged)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.message import Message

if TYPE_CHECKING:
    from archcurator.store.records import BulkPreview as BulkTargets
    from archcurator.store.records import Disagreement, KbView, Progress, Step


class QueueLoaded(Message):
    def __init__(self, model, generation: int, ids: list[str], select: str | None = None,
                 rows: dict | None = None, id_width: int | None = None) -> None:
        super().__init__()
        self.model = model
        self.generation = generation
        self.ids = ids
        self.select = select
        self.rows = rows or {}
        self.id_width = id_width


class RowsLoaded(Message):
    def __init__(self, model, generation: int, rows: dict) -> None:
        super().__init__()
        self.model = model
        self.generation = generation
        self.rows = rows


class OutsideTokenRead(Message):
    """`AppStore.outside_token` read after the store's file changed."""

    def __init__(self, token: tuple) -> None:
        super().__init__()
        self.token = token


class FacetsLoaded(Message):
    def __init__(self, facets: dict) -> None:
        super().__init__()
        self.facets = facets


class ProgressLoaded(Message):
    def __init__(self, progress: Progress) -> None:
        super().__init__()
        self.progress = progress


class DesignLoaded(Message):
    """A design's view (`tui.screens.design.DesignView`), or None when it is not in the store."""

    def __init__(self, design_id: str, view: Any, request: int) -> None:
        super().__init__()
        self.design_id = design_id
        self.view = view
        self.request = request


class NextFound(Message):
    """The next design (queue index) still to judge, or None."""

    def __init__(self, index: int | None, request: int) -> None:
        super().__init__()
        self.index = index
        self.request = request


class WriteDone(Message):
    def __init__(self, op: Any, result: Any) -> None:
        super().__init__()
        self.op = op
        self.result = result


class DiffReady(Message):
    def __init__(self, diff: Any, base_label: str, b_label: str, request: int) -> None:
        super().__init__()
        self.diff = diff
        self.base_label = base_label
        self.b_label = b_label
        self.request = request


class ReportsLoaded(Message):
    def __init__(self, refusals: dict, rules: dict, curators: list[str] | None = None) -> None:
        super().__init__()
        self.refusals = refusals
        self.rules = rules
        self.curators = curators or []


class AgreementLoaded(Message):
    def __init__(self, report: dict) -> None:
        super().__init__()
        self.report = report


class DisagreementsLoaded(Message):
    def __init__(self, items: list[Disagreement]) -> None:
        super().__init__()
        self.items = items


class RecentLoaded(Message):
    """The curator's newest steps (store.judgments.recent_steps)."""

    def __init__(self, steps: list[Step]) -> None:
        super().__init__()
        self.steps = steps


class BulkPreview(Message):
    """How many findings a bulk verdict would judge: on this design, and in the current filter."""

    def __init__(self, rule: str, here: BulkTargets, queue: BulkTargets, request: int) -> None:
        super().__init__()
        self.rule = rule
        self.here = here
        self.queue = queue
        self.request = request


class RunsLoaded(Message):
    """Runs of designs stored so far (runs of earlier sessions included)."""

    def __init__(self, runs: list[dict]) -> None:
        super().__init__()
        self.runs = runs


class KbLoaded(Message):
    def __init__(self, data: KbView, request: int) -> None:
        super().__init__()
        self.data = data
        self.request = request


class KbSuggestionsLoaded(Message):
    def __init__(self, suggestions: Any, request: int) -> None:
        super().__init__()
        self.suggestions = suggestions
        self.request = request


class KbDetailLoaded(Message):
    """One proposition's evidence rows (each with recipes, means ± std, pool), and in JUDGE its
    records (train / held-out / imported), uses and conflicts (store.kb_loop.show)."""

    def __init__(self, pid: int, evidence: list, request: int, judge: dict | None = None) -> None:
        super().__init__()
        self.pid = pid
        self.evidence = evidence
        self.request = request
        self.judge = judge or {}


class KbOpDone(Message):
    def __init__(self, op: str, result: Any) -> None:
        super().__init__()
        self.op = op
        self.result = result


class RunUpdate(Message):
    """A run launched from the app changed (an event arrived, or it was stored)."""

    def __init__(self, handle: Any, stored_id: int | None = None) -> None:
        super().__init__()
        self.handle = handle
        self.stored_id = stored_id


class RepairReady(Message):
    """The repair search of a design ended: `repair` is core.repair's Repair; `cost_before` /
    `cost_after` the cost quotes of the original and of the repaired design (None when not found)."""

    def __init__(self, design_id: str, repair: Any, cost_before: dict, cost_after: dict | None) -> None:
        super().__init__()
        self.design_id = design_id
        self.repair = repair
        self.cost_before = cost_before
        self.cost_after = cost_after


class RepairKept(Message):
    def __init__(self, original_id: str, new_id: str) -> None:
        super().__init__()
        self.original_id = original_id
        self.new_id = new_id

"""The typed records the store hands the app (`AppStore`): what each read returns, key by key.

TypedDicts, so a record is still the dict the store built (`row["verdict"]` reads as before, JSON
writes it as it is) while the type checker holds every caller to the keys the store gives.
`total=False` marks a record whose keys depend on the columns asked for or the state it is in.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, TypedDict

if TYPE_CHECKING:
    from archcurator.core.kb.pack import PackEntry

    from .kb import PropRow


class DesignColumns(TypedDict, total=False):
    """The columns of a design the queue's rows and the design screen's bundle both carry: what names it
    and where it came from, and what verification and the cost quote wrote (store.designs.LIST_COLUMNS
    and DESIGN_COLUMNS share them)."""

    id: str
    name: str | None
    author: str | None
    model: str | None
    task_set: str | None
    run: str | None
    parent: str | None
    reference: str | None
    verdict: str | None
    n_nodes: int | None
    n_block: int | None
    n_warn: int | None
    params: int | None
    flops: float | None
    quoted_cost_usd: float | None
    cost_a10g_usd: float | None
    error: str | None


class QueueRow(DesignColumns, total=False):
    """One design of the queue's list (store.app_queries.rows_for): store.designs.LIST_COLUMNS plus
    the judged state of the curator and the counts the list draws."""

    imported_at: datetime | None
    archived_at: datetime | None
    n_findings: int
    n_judged: int
    judged: str | None  # unjudged | partly | judged; None for a design that was never generated
    n_missed: int
    n_flagged: int
    block_rule: str | None
    n_block_rules: int


class Verdict(TypedDict):
    """One curator's current verdict on a finding or a design."""

    verdict: str
    note: str | None
    event_id: int
    judged_at: datetime | None


class FindingRecord(TypedDict):
    key: str
    rule: str
    severity: str
    nodes: list[str]
    nodes_text: str | None
    message: str
    stale: bool
    verifier_version: str | None
    first_seen: datetime | None
    last_seen: datetime | None
    judgments: dict[str, Verdict]  # curator -> their current verdict
    verdict: str | None  # the current verdict of the curator the design was read for
    demoted: str | None  # why its rule is demoted, or None


class DesignBundle(DesignColumns, total=False):
    """Everything the design screen shows (store.app_queries.design_bundle): the design's columns
    (store.designs.DESIGN_COLUMNS, with graph, cost and extra parsed) and what is gathered about it."""

    source: str | None
    graph: dict[str, Any] | None
    content_hash: str | None
    quote_device: str | None
    cost: dict[str, Any] | None
    extra: dict[str, Any] | None
    verifier_version: str | None
    imported_at: datetime | None
    verified_at: datetime | None
    archived_at: datetime | None
    findings: list[FindingRecord]
    design_judgments: dict[str, Verdict]
    missed_defects: list[dict[str, Any]]
    runs: list[dict[str, Any]]
    judged: str | None
    flags: dict[str | None, str | None]  # finding key (None: the design) -> the note it was flagged with
    children: list[str]
    parent_stored: bool


class Progress(TypedDict):
    designs: int
    designs_judged: int
    findings: int
    findings_judged: int


class BulkPreview(TypedDict):
    targets: list[tuple[str, str]]  # (design id, finding key) not yet judged by the curator
    findings: int
    judged: int
    designs: int


class BulkResult(TypedDict):
    step: int | None  # None: nothing was judged
    n: int
    designs: list[str]


class SeenResult(TypedDict):
    event: int
    changed: list[dict[str, Any]]  # other curators whose verdict changed since it was shown


class Step(TypedDict):
    """One curation step as the undo list shows it (store.judgments.recent_steps)."""

    step: int
    at: datetime | None
    kind: str
    summary: str
    n: int
    designs: list[str]
    keys: list[tuple[str, str | None]]
    undone: bool


class Vote(TypedDict):
    verdict: str
    note: str | None


class Disagreement(TypedDict):
    design_id: str
    key: str
    rule: str | None
    severity: str | None
    message: str | None
    votes: dict[str, Vote]
    final: str | None
    adjudicator: str | None


class RunTiming(TypedDict):
    kind: str
    device: str | None
    seconds: float
    flops: float
    batch: int | None
    steps: int | None


class QueueState(TypedDict, total=False):
    filters: dict[str, Any]
    sort: str


class KbView(TypedDict):
    props: list[PropRow]
    pack: list[PackEntry]  # the 20-cap pack in its order
    pack_status: dict[int, tuple[int | None, str]]  # proposition id -> (its place in the pack, why)
    audit: list[dict[str, Any]]  # the audit log's head, newest first
    questions: dict[str, Any]  # store.kb.question_summary

"""A design prepared for the screen, off the UI thread: parsed graph, inferred shapes, layout."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .graph_text import BIG_GRAPH, GraphModel, build_model, layout
from .lines import Line, lines_width, prerender

if TYPE_CHECKING:
    from archcurator.store.records import DesignBundle


@dataclass
class DesignView:
    id: str
    data: dict  # store.app_queries.design_bundle(...)
    design: Any = None  # core.graph.Design, None when ungenerated or unreadable
    problem: str | None = None  # why there is no graph to show
    graph: GraphModel | None = None
    full_lines: list[Line] = field(default_factory=list)
    full_width: int = 0  # the widest of full_lines
    version: int = 0  # the app's write counter for this design when it was read

    @property
    def findings(self) -> list[dict]:
        return self.data.get("findings") or []

    @property
    def live_findings(self) -> list[dict]:
        return [f for f in self.findings if not f.get("stale")]

    @property
    def big(self) -> bool:
        return self.graph is not None and self.graph.n_nodes > BIG_GRAPH

    def judged_count(self) -> tuple[int, int]:
        live = self.live_findings
        return sum(1 for f in live if f.get("verdict")), len(live)

    def is_clean_marked(self, curator: str) -> bool:
        return curator in (self.data.get("design_judgments") or {})


def prepare_view(data: DesignBundle) -> DesignView:
    """Parse the stored graph, infer its shapes, lay it out (no torch is imported)."""
    view = DesignView(id=data["id"], data=data)
    graph = data.get("graph")
    if graph is None:
        view.problem = f"not generated: {data.get('error') or 'no graph'}"
        return view
    try:
        from archcurator.core.graph import Design

        view.design = Design.from_dict(graph, source=data["id"])
    except Exception as exc:  # a stored graph the current reader rejects
        view.problem = f"cannot read the graph: {exc}"
        return view
    types: dict = {}
    try:
        from archcurator.core.shapes import infer_design

        types = infer_design(view.design).types
    except Exception as exc:  # shapes are a help, not a requirement
        view.problem = f"shapes unavailable: {type(exc).__name__}: {exc}"
    try:  # the catalogue's words are read on the UI thread: import them here, off it
        import archcurator.core.checks  # noqa: F401
    except Exception:  # pragma: no cover
        pass
    view.graph = build_model(view.design, types, data.get("findings"))
    view.full_lines = prerender(layout(view.graph))
    view.full_width = lines_width(view.full_lines)
    return view


def catalogue_entry(rule: str):
    """The check's catalogue words (condition, why, fix), or None for an unknown rule."""
    try:
        from archcurator.core.checks import CATALOGUE
    except Exception:  # pragma: no cover - the catalogue is part of core
        return None
    return CATALOGUE.get(rule)


def catalogue_ids() -> list[str]:
    try:
        from archcurator.core.checks import CATALOGUE
    except Exception:  # pragma: no cover
        return []
    return sorted(CATALOGUE)

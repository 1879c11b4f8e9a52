"""GraphPane: a design's graph, whole (layered, shapes on edges) or around the highlighted finding."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from ..sanitise import visible
from ..widgets.graph_text import layout
from ..widgets.lines import Line, LinesView
from ..widgets.text_pane import same_text


class GraphPane(Vertical):
    """The graph of the design shown, with the focus nodes (the highlighted finding's) highlighted."""

    RADIUS_MIN, RADIUS_MAX = 1, 12

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.view = None
        self.full: bool | None = None  # None: decided by the graph's size
        self.radius = 2
        self.focus_nodes: set = set()
        self._title = None  # the title shown (a new design of the same size keeps it: not drawn again)

    def compose(self) -> ComposeResult:
        yield Static(id="graph-title")
        yield LinesView(id="graph")

    @property
    def lines(self) -> LinesView:
        return self.query_one("#graph", LinesView)

    def title(self, text) -> None:
        text = text if isinstance(text, Text) else Text(visible(text))
        if not same_text(text, self._title):
            self._title = text
            self.query_one("#graph-title", Static).update(text, layout=False)

    def node_at_cursor(self) -> str | None:
        """The node under the graph's cursor, when the graph has focus (a choice the curator made)."""
        lv = self.lines
        return lv.key_at() if lv.has_focus else None

    # ---- drawing --------------------------------------------------------------------------
    def show(self, view, focus=()) -> None:
        """A new design, its graph drawn once with `focus` (the highlighted finding's nodes) highlighted."""
        self.view = view
        self.full = None
        self.focus_nodes = set(focus or ())
        self.draw()

    def is_full(self) -> bool:
        if self.full is not None:
            return self.full
        return not (self.view is not None and self.view.big)

    def draw(self) -> None:
        gv = self.lines
        view = self.view
        if view is None or view.graph is None:
            gv.set_lines([Line(Text(visible(view.problem) if view is not None else "", style="dim italic"))])
            self.title("no graph")
            return
        n = view.graph.n_nodes
        if self.is_full():
            gv.set_lines(view.full_lines, width=view.full_width)
            self.title(Text.assemble(("Graph", "bold"), f" · {n} nodes · layered, shapes on edges"
                                     + (" · g: neighbourhood" if view.big else "")))
        else:
            order = view.graph.order
            focus = self.focus_nodes or ({order[0]} if order else set())
            subset = view.graph.neighbourhood(focus, self.radius)
            gv.set_lines(layout(view.graph, subset))
            names = visible(", ".join(sorted(focus)))
            shown = names if len(names) < 40 else names[:39] + "…"
            self.title(Text.assemble(("Graph", "bold"), f" · {n} nodes · within {self.radius} of {shown}"
                                     " · g: whole · +/-: radius"))
        self._apply_focus(redraw=False)

    def set_focus(self, nodes) -> None:
        nodes = set(nodes or ())
        if nodes == self.focus_nodes and self.view is not None:
            return
        self.focus_nodes = nodes
        self._apply_focus()

    def _apply_focus(self, redraw: bool = True) -> None:
        view = self.view
        if view is None or view.graph is None:
            return
        if redraw and not self.is_full():
            self.draw()
            return
        gv = self.lines
        gv.set_highlight(self.focus_nodes)
        if self.focus_nodes:
            first = next((i for i, ln in enumerate(gv.lines) if ln.key in self.focus_nodes and ln.selectable), None)
            if first is not None:
                gv.reveal(first, center=True)

    def toggle(self) -> None:
        self.full = not self.is_full()
        self.draw()

    def widen(self, delta: int) -> None:
        self.radius = max(self.RADIUS_MIN, min(self.radius + delta, self.RADIUS_MAX))
        if self.is_full():
            self.full = False
        self.draw()

"""The diff: this design against its parent, its reference, or a design picked from the queue.

Computed in core (`core.diff.diff_designs`, in a worker). Side by side, the
base on the left and this design on the right, unchanged stretches folded;
below, the edits argument by argument, the rewired edges, and apart from
them the shape changes that follow downstream (consequences, not edits).
"""

from __future__ import annotations

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Static

from ..sanitise import visible
from ..widgets.footer import AppFooter
from ..widgets.graph_text import args_text
from ..widgets.header import AppHeader
from ..widgets.lines import Line, LinesView
from ..widgets.messages import DiffReady
from .base import CuratorScreen

MARK = {"same": (" ", ""), "input": ("●", "green"), "changed": ("~", "bold yellow"), "added": ("+", "bold green"),
        "removed": ("-", "bold red")}
CONSEQUENCES_SHOWN = 300


class DiffScreen(CuratorScreen):
    BINDINGS = [
        Binding("n", "next_change(1)", "Next change", id="diff_next"),
        Binding("p", "next_change(-1)", "Prev change", id="diff_prev"),
        Binding("a", "toggle_all", "Fold/unfold all", id="diff_unfold_all"),
        Binding("escape", "back", "Back", id="diff_back"),
    ]
    ACTION_HELP = {
        "diff_next": "Move to the next change",
        "diff_prev": "Move to the previous change",
        "diff_unfold_all": "Unfold every unchanged stretch, or fold them again (enter unfolds one)",
        "diff_back": "Back to the design",
    }

    def __init__(self, view, base_kind: str, base_name: str, b_graph: dict | None = None,
                 b_label: str | None = None) -> None:
        super().__init__()
        self.view = view
        self.base_kind = base_kind
        self.base_name = base_name
        # the right side: the design on screen, or a graph of it not stored (a proposed repair)
        self.b_graph = b_graph
        self.b_label = b_label or view.id
        self.diff = None
        self.base_label = ""
        self.unfolded: set[int] = set()
        self.all_open = False
        self.request = 1

    @work(thread=True, exclusive=True, group="diff", exit_on_error=False)
    def compute_diff(self, base_kind: str, base_name: str, b_graph: dict, b_label: str, request: int) -> None:
        from archcurator.core.diff import diff_designs
        from archcurator.core.graph import Design

        store = self.app.store
        if base_kind == "reference":
            graph, _where = store.reference(base_name)
            label = f"{base_name} (reference)"
            if graph is None:
                raise LookupError(f"reference architecture {base_name!r} not found in assets/architectures "
                                  "or the store")
        else:
            graph = store.graph(base_name)
            label = f"{base_name} ({base_kind})"
            if graph is None:
                raise LookupError(f"design {base_name!r} has no graph in the store")
        diff = diff_designs(Design.from_dict(graph, source=label), Design.from_dict(b_graph, source=b_label))
        self.post_from_worker(DiffReady(diff, label, b_label, request))

    def compose(self) -> ComposeResult:
        yield AppHeader()
        yield Static(id="diff-summary")
        yield LinesView(id="diff-lines")
        with VerticalScroll(id="diff-details-box"):
            yield Static(id="diff-details")
        yield AppFooter()

    def on_mount(self) -> None:
        if self not in self.app.screen_stack:
            return  # closed before it was mounted (a key pressed at once): nothing to set up
        self.sub_title = visible(f"diff: {self.base_name} ({self.base_kind}) → {self.b_label}")
        self.query_one("#diff-summary", Static).update(Text(visible(f"computing the diff against {self.base_name}…")))
        self.query_one("#diff-lines", LinesView).focus()
        self.compute_diff(self.base_kind, self.base_name,
                          self.view.data["graph"] if self.b_graph is None else self.b_graph, self.b_label,
                          self.request)

    def worker_failed(self, group: str, text: str) -> None:
        if group == "diff" and self.diff is None:
            self.query_one("#diff-summary", Static).update(Text(visible(f"no diff: {text}"), style="bold red"))

    def on_diff_ready(self, message: DiffReady) -> None:
        message.stop()
        if message.request != self.request:
            return
        self.diff = message.diff
        self.base_label = message.base_label
        d = self.diff
        t = Text()
        t.append(visible(message.base_label), style="bold")
        t.append("  →  ")
        t.append(visible(message.b_label), style="bold")
        t.append(f"   {len(d.a_nodes)} → {len(d.b_nodes)} nodes\n")
        t.append(visible(d.summary()), style="bold yellow" if not d.identical else "green")
        self.query_one("#diff-summary", Static).update(t)
        self._draw()
        self.query_one("#diff-details", Static).update(self._details())
        self.action_next_change(1, first=True)

    def on_resize(self) -> None:
        if self.diff is not None:
            self._draw(keep=True)

    # ---- the side-by-side view ------------------------------------------------------
    def _half(self, node_id: str | None, nodes: dict, shapes: dict, width: int, mark: str, style: str,
              kind: str) -> Text:
        t = Text()
        if node_id is None:
            return Text(" " * width)
        t.append(mark + " ", style=style)
        node = nodes.get(node_id)
        idw = min(max(12, width // 3), 28)
        shown = visible(node_id)
        t.append(f"{shown[:idw - 1] + '…' if len(shown) > idw else shown:<{idw}} ",
                 style="bold" if kind != "same" else "")
        if node is None:  # an input
            shape = (shapes.get(node_id) or ["?"])[0]
            t.append(visible(f"input {shape}"), style="green")
        else:
            t.append(visible(node.op), style="cyan")
            args = args_text(node.args, limit=max(width, 10))
            if args:
                t.append(" " + args, style="dim")
        t.truncate(width, pad=True)
        return t

    def _draw(self, keep: bool = False) -> None:
        d = self.diff
        lv = self.query_one("#diff-lines", LinesView)
        width = max(self.size.width - 3, 40)
        half = (width - 3) // 2
        lines: list[Line] = []
        folded = d.rows if self.all_open else d.folded(2)
        for item in folded:
            if hasattr(item, "kind"):
                row = item
                mark, style = MARK.get(row.kind, (" ", ""))
                if row.rewired and row.kind == "same":
                    mark, style = "⇄", "bold magenta"
                elif row.consequence and row.kind == "same":
                    mark, style = "≈", "cyan"
                left = self._half(row.a, d.a_nodes, d.shapes_a, half, mark if row.a else " ", style, row.kind)
                right = self._half(row.b, d.b_nodes, d.shapes_b, half, mark if row.b else " ", style, row.kind)
                t = Text()
                t.append_text(left)
                t.append(" │ ", style="dim")
                t.append_text(right)
                key = f"row:{row.b or row.a}"
                lines.append(Line(t, key))
            else:
                fold = item
                if fold.start in self.unfolded:
                    for row in d.rows[fold.start:fold.end]:
                        left = self._half(row.a, d.a_nodes, d.shapes_a, half, " ", "", "same")
                        right = self._half(row.b, d.b_nodes, d.shapes_b, half, " ", "", "same")
                        t = Text()
                        t.append_text(left)
                        t.append(" │ ", style="dim")
                        t.append_text(right)
                        lines.append(Line(t, f"row:{row.b or row.a}"))
                    continue
                label = f" ┄┄ {fold.count} unchanged node{'s' if fold.count != 1 else ''} (enter unfolds) ┄┄ "
                t = Text(label.center(width, " "), style="dim italic")
                lines.append(Line(t, f"fold:{fold.start}"))
        cursor_key = lv.key_at() if keep else None
        lv.set_lines(lines, keep_cursor=keep)
        if cursor_key is not None:
            i = lv.index_of(cursor_key)
            if i is not None:
                lv.reveal(i, center=False)

    def on_lines_view_activated(self, message: LinesView.Activated) -> None:
        message.stop()
        key = message.key or ""
        if key.startswith("fold:"):
            self.unfolded.add(int(key.split(":", 1)[1]))
            self._draw(keep=True)

    def action_toggle_all(self) -> None:
        if self.diff is None:
            return
        self.all_open = not self.all_open
        self.unfolded.clear()
        self._draw(keep=True)

    def action_next_change(self, step: int, first: bool = False) -> None:
        if self.diff is None:
            return
        lv = self.query_one("#diff-lines", LinesView)
        changed_keys = {f"row:{r.b or r.a}" for r in self.diff.rows
                        if r.kind in ("changed", "added", "removed") or r.rewired}
        n = len(lv.lines)
        if not n:
            return
        start = -1 if first else lv.cursor
        i = start + step
        while 0 <= i < n:
            if lv.lines[i].key in changed_keys:
                lv.reveal(i, center=True)
                return
            i += step
        if not first:
            self.notify("no more changes this way", timeout=2)

    def action_back(self) -> None:
        self.dismiss()

    # ---- the details ---------------------------------------------------------------------
    def _details(self) -> Text:
        d = self.diff
        t = Text()

        def section(title: str, n: int) -> None:
            t.append(f"{title} ({n})\n", style="bold underline")

        def io(node_id: str, nodes: dict, users: dict) -> str:
            node = nodes[node_id]
            parts = []
            if node.inputs:
                parts.append("◀ " + ", ".join(node.inputs))
            if users.get(node_id):
                parts.append("▶ " + ", ".join(users[node_id][:4]))
            return visible("  ".join(parts))

        def users_of(nodes: dict) -> dict:
            out: dict = {}
            for n in nodes.values():
                for ref in n.inputs:
                    out.setdefault(ref.split(":")[0], []).append(n.id)
            return out

        if d.identical:
            t.append("No structural difference.\n", style="green")
        if d.changed:
            section("Changed", len(d.changed))
            for c in d.changed:
                t.append("  ~ ", style="bold yellow")
                t.append(visible(c.b_id), style="bold")
                if c.renamed:
                    t.append(f" (was {visible(c.a_id)})", style="dim")
                t.append(f"  {visible(c.op_b)}\n", style="cyan")
                if c.op_a != c.op_b:
                    t.append(f"      op: {visible(c.op_a)} → {visible(c.op_b)}\n")
                for a in c.args:
                    t.append(f"      {visible(a.describe())}\n")
                if c.shares:
                    t.append(visible(f"      shares: {c.shares[0] or '—'} → {c.shares[1] or '—'}") + "\n")
                old = d.shapes_a.get(c.a_id)
                new = d.shapes_b.get(c.b_id)
                if old != new and (old or new):
                    t.append(visible(f"      result: {', '.join(old or ['?'])} → {', '.join(new or ['?'])}") + "\n",
                             style="dim")
        def node_list(title, ids, nodes, mark, style):
            section(title, len(ids))
            users = users_of(nodes)
            for nid in ids:
                node = nodes[nid]
                t.append(mark, style=style)
                t.append(visible(nid), style="bold")
                t.append(f"  {visible(node.op)}", style="cyan")
                if node.args:
                    t.append(" " + args_text(node.args), style="dim")
                t.append(f"   {io(nid, nodes, users)}\n", style="dim")

        if d.added:
            node_list("Added", d.added, d.b_nodes, "  + ", "bold green")
        if d.removed:
            node_list("Removed", d.removed, d.a_nodes, "  - ", "bold red")
        if d.rewired:
            section("Rewired edges", len(d.rewired))
            for r in d.rewired:
                t.append("  ⇄ ", style="bold magenta")
                t.append(visible(r.describe()) + "\n")
        if d.inputs:
            section("Inputs", len(d.inputs))
            for c in d.inputs:
                t.append(f"  {visible(c.describe())}\n")
        if d.outputs:
            t.append("Outputs\n", style="bold underline")
            t.append(visible(f"  {', '.join(d.outputs[0])} → {', '.join(d.outputs[1])}") + "\n")
        renamed = sum(1 for a, b in d.matched.items() if a != b)
        if renamed:
            t.append(f"\n{renamed} nodes matched under other ids (by signature or op)\n", style="dim")
        t.append("\n")
        t.append(f"Consequences: shapes that change downstream ({len(d.consequences)})\n", style="bold underline")
        if not d.consequences:
            t.append("  none\n", style="dim")
        for c in d.consequences[:CONSEQUENCES_SHOWN]:
            t.append("  ≈ ", style="cyan")
            t.append(visible(c.describe()) + "\n", style="")
        if len(d.consequences) > CONSEQUENCES_SHOWN:
            t.append(f"  … and {len(d.consequences) - CONSEQUENCES_SHOWN} more\n", style="dim")
        return t

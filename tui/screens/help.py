"""Help: every key of every screen (with the config file's overrides), and where the config lives."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static


def scopes() -> list[tuple[str, type]]:
    from ..app import CuratorApp
    from .design import DesignScreen
    from .diff import DiffScreen
    from .kb import KnowledgeBaseScreen
    from .queue import QueueScreen
    from .reports import ReportsScreen
    from .runs import RunsScreen

    return [("Everywhere", CuratorApp), ("Queue", QueueScreen), ("Design and judging", DesignScreen),
            ("Diff", DiffScreen), ("Reports", ReportsScreen), ("Knowledge base", KnowledgeBaseScreen),
            ("Runs", RunsScreen)]


def all_bindings():
    """(scope, Binding) for every binding with an id, in help order."""
    for scope, cls in scopes():
        for b in cls.BINDINGS:
            if isinstance(b, Binding) and b.id:
                yield scope, b


class HelpScreen(ModalScreen):
    BINDINGS = [Binding("escape,question_mark,q", "close", "Close", id="help_close")]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-box", classes="dialog"):
            yield Static(self._text(), id="help-text")

    def _text(self) -> Text:
        app = self.app
        t = Text()
        t.append("archcurator — keys\n", style="bold")
        t.append("Every action is also in the command palette (ctrl+p). Rebind a key in the config file's "
                 "[keys] table with the id shown on the right.\n\n", style="dim")
        current = None
        for scope, b in all_bindings():
            if scope != current:
                current = scope
                t.append(f"{scope}\n", style="bold underline")
            keys = app.key_for(b.id)
            overridden = b.id in app.config.keymap
            t.append(f"  {keys:<16}", style="bold yellow" if overridden else "bold")
            t.append(f"{b.description:<22}")
            t.append(f"{b.id}\n", style="dim")
        t.append("\nJudging\n", style="bold underline")
        t.append("  The highlighted finding takes the verdict; the next unjudged finding is highlighted, and "
                 "when a design is done the next design still to judge opens. A note typed in the note "
                 "field (n) goes with the next verdict; while it has focus, keys type into it. Undo takes "
                 "back everything judged since the app opened, newest first.\n")
        t.append("\nConfig\n", style="bold underline")
        path = app.config.path
        t.append(f"  file      {path}{'' if path and path.exists() else ' (not present: defaults)'}\n")
        t.append(f"  curator   {app.curator}\n")
        t.append(f"  store     {app.db_path}\n")
        t.append('  example   curator = "ada"\n            [keys]\n            judge_real = "r"\n'
                 '            next_design = "ctrl+n"\n', style="dim")
        return t

    def action_close(self) -> None:
        self.dismiss()

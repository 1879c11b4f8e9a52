"""Help: every key of every screen (with the config file's overrides), and where the config lives."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from ..sanitise import visible


def scopes() -> list[tuple[str, type]]:
    from ..app import CuratorApp
    from .design import DesignScreen
    from .diff import DiffScreen
    from .kb import KnowledgeBaseScreen
    from .queue import QueueScreen
    from .repair import RepairScreen
    from .reports import ReportsScreen
    from .review import ReviewScreen
    from .runs import RunsScreen

    return [("Everywhere", CuratorApp), ("Queue", QueueScreen), ("Design and judging", DesignScreen),
            ("Diff", DiffScreen), ("Repair", RepairScreen), ("Reports", ReportsScreen),
            ("Review (two curators)", ReviewScreen),
            ("Knowledge base", KnowledgeBaseScreen), ("Runs", RunsScreen)]


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
            t.append(f"  {visible(keys):<16}", style="bold yellow" if overridden else "bold")
            t.append(f"{b.description:<22}")
            t.append(f"{visible(b.id)}\n", style="dim")
        t.append("\nJudging\n", style="bold underline")
        t.append("  The highlighted finding takes the verdict; the next unjudged finding is highlighted, and "
                 "the verdict that finishes a design opens the next design still to judge (re-judging stays "
                 "put). The note field (n) belongs to the highlighted finding: it goes with the verdict on it, "
                 "enter saves it on a finding already judged, and it is emptied when you leave the finding; "
                 "while it has focus, keys type into it. l flags a finding for later; b gives one verdict to "
                 "every finding of a rule (this design or the queue's filter). z undoes your last step — a "
                 "verdict, a note, a bulk verdict (whole), a flag, a missed defect — newest first, even after "
                 "a restart.\n")
        t.append("\nConfig\n", style="bold underline")
        path = app.config.path
        t.append(f"  file      {visible(path)}{'' if path and path.exists() else ' (not present: defaults)'}\n")
        t.append(f"  curator   {visible(app.curator)}\n")
        t.append(f"  store     {visible(app.db_path)}\n")
        t.append('  example   curator = "ada"\n            [keys]\n            judge_real = "r"\n'
                 '            next_design = "ctrl+n"\n', style="dim")
        return t

    def action_close(self) -> None:
        self.dismiss()

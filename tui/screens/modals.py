"""Small dialogs: a choice from a list, a one-line prompt, a missed defect."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.suggester import SuggestFromList
from textual.widgets import Button, Input, Label, OptionList, Static
from textual.widgets.option_list import Option


class ChoiceScreen(ModalScreen):
    """Pick one of `choices` [(value, label)]; dismisses with the value, or CANCELLED."""

    CANCELLED = object()
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="dialog_cancel")]

    def __init__(self, title: str, choices: list[tuple]) -> None:
        super().__init__()
        self.title_text = title
        self.choices = choices

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(self.title_text, classes="dialog-title")
            yield OptionList(*[Option(label, id=str(i)) for i, (_v, label) in enumerate(self.choices)],
                             id="choices")

    def on_option_list_option_selected(self, message: OptionList.OptionSelected) -> None:
        message.stop()
        self.dismiss(self.choices[int(message.option.id)][0])

    def action_cancel(self) -> None:
        self.dismiss(self.CANCELLED)


class PromptScreen(ModalScreen):
    """One line of text; dismisses with it (None when cancelled)."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="dialog_cancel")]

    def __init__(self, title: str, placeholder: str = "", value: str = "") -> None:
        super().__init__()
        self.title_text = title
        self.placeholder = placeholder
        self.value = value

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(self.title_text, classes="dialog-title")
            field = Input(self.value, placeholder=self.placeholder, id="prompt")
            field.cursor_blink = self.app.cursor_blink
            yield field

    def on_input_submitted(self, message: Input.Submitted) -> None:
        message.stop()
        self.dismiss(message.value)

    def action_cancel(self) -> None:
        self.dismiss(None)


class MissedDefectScreen(ModalScreen):
    """A defect no rule reported: nodes, the rule that should have fired, a description.

    Dismisses with {"nodes": [...], "rule": str | None, "description": str | None} or None."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="dialog_cancel")]

    def __init__(self, design_id: str, nodes: list[str], node_ids: list[str], rules: list[str]) -> None:
        super().__init__()
        self.design_id = design_id
        self.default_nodes = nodes
        self.node_ids = node_ids
        self.rules = rules

    def compose(self) -> ComposeResult:
        blink = self.app.cursor_blink
        with Vertical(classes="dialog", id="missed-dialog"):
            yield Label(f"Missed defect on {self.design_id}", classes="dialog-title")
            yield Static("What did the verifier miss? Name the rule that should have fired, "
                         "or describe it (or both).", classes="dialog-help")
            yield Label("Nodes (comma-separated)")
            nodes = Input(", ".join(self.default_nodes), id="missed-nodes",
                          suggester=SuggestFromList(self.node_ids, case_sensitive=False))
            nodes.cursor_blink = blink
            yield nodes
            yield Label("Rule that should have fired")
            rule = Input(placeholder="e.g. shape.linear-in-features", id="missed-rule",
                         suggester=SuggestFromList(self.rules, case_sensitive=False))
            rule.cursor_blink = blink
            yield rule
            yield Label("Description")
            desc = Input(placeholder="what is wrong", id="missed-description")
            desc.cursor_blink = blink
            yield desc
            yield Static("", id="missed-error", classes="dialog-error")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Save", variant="primary", id="missed-save")
                yield Button("Cancel", id="missed-cancel")

    def on_mount(self) -> None:
        self.query_one("#missed-rule" if self.default_nodes else "#missed-nodes", Input).focus()

    def on_input_submitted(self, message: Input.Submitted) -> None:
        message.stop()
        order = ["missed-nodes", "missed-rule", "missed-description"]
        i = order.index(message.input.id)
        if i < len(order) - 1:
            self.query_one(f"#{order[i + 1]}", Input).focus()
        else:
            self.save()

    def on_button_pressed(self, message: Button.Pressed) -> None:
        message.stop()
        if message.button.id == "missed-save":
            self.save()
        else:
            self.dismiss(None)

    def save(self) -> None:
        nodes = [n.strip() for n in self.query_one("#missed-nodes", Input).value.split(",") if n.strip()]
        rule = self.query_one("#missed-rule", Input).value.strip() or None
        desc = self.query_one("#missed-description", Input).value.strip() or None
        error = self.query_one("#missed-error", Static)
        if not rule and not desc:
            error.update("name the rule that should have fired, or describe the defect")
            return
        unknown = [n for n in nodes if self.node_ids and n not in self.node_ids]
        if unknown:
            error.update(f"no node {unknown[0]!r} in this design")
            return
        self.dismiss({"nodes": nodes, "rule": rule, "description": desc})

    def action_cancel(self) -> None:
        self.dismiss(None)


class PropositionFormScreen(ModalScreen):
    """A new proposition: text, scope (conditions), claim. Dismisses with a dict or None."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="dialog_cancel")]

    def compose(self) -> ComposeResult:
        blink = self.app.cursor_blink
        with Vertical(classes="dialog"):
            yield Label("New proposition", classes="dialog-title")
            yield Static("scope: conditions that must all hold, e.g. budget < 4096, optimizer == sgd\n"
                         "claim: e.g. optimizer == adam wins · momentum == 0 & optimizer == sgd loses · "
                         "higher lr wins", classes="dialog-help")
            for fid, label, placeholder in (("prop-text", "Text", "With a small budget, Adam wins."),
                                            ("prop-scope", "Scope", "budget < 4096"),
                                            ("prop-claim", "Claim", "optimizer == adam wins")):
                yield Label(label)
                field = Input(placeholder=placeholder, id=fid)
                field.cursor_blink = blink
                yield field
            yield Static("", id="prop-error", classes="dialog-error")

    def on_input_submitted(self, message: Input.Submitted) -> None:
        message.stop()
        order = ["prop-text", "prop-scope", "prop-claim"]
        i = order.index(message.input.id)
        if i < len(order) - 1:
            self.query_one(f"#{order[i + 1]}", Input).focus()
            return
        text = self.query_one("#prop-text", Input).value.strip()
        scope = [c.strip() for c in self.query_one("#prop-scope", Input).value.split(",") if c.strip()]
        claim = self.query_one("#prop-claim", Input).value.strip()
        if not claim:
            self.query_one("#prop-error", Static).update("a proposition needs a claim")
            return
        self.dismiss({"text": text or None, "scope": scope, "claim": claim})

    def action_cancel(self) -> None:
        self.dismiss(None)

"""Dialogs: a choice from a list (with type-ahead), a one-line prompt, a missed defect, a proposition.

Every label that may hold outside text is a Rich `Text` made visible
(`tui.sanitise`): nothing here is read as markup.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, OptionList, SelectionList, Static
from textual.widgets.option_list import Option
from textual.widgets.selection_list import Selection

from ..sanitise import plain, visible
from ..widgets.option_lists import StopOptionList, StopSelectionList

FILTER_FROM = 8  # choices from which a type-ahead filter is offered


def _label(value) -> Text:
    return value if isinstance(value, Text) else plain(value)


class ChoiceScreen(ModalScreen):
    """Pick one of `choices` [(value, label)]; dismisses with the value, or CANCELLED.

    With many choices (or `filter=True`), a field on top narrows the list as you type (up / down move in
    the list, enter picks). A choice whose value is `ChoiceScreen.DISABLED` is shown but cannot be picked."""

    CANCELLED = object()
    DISABLED = object()
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="dialog_cancel")]

    def __init__(self, title: str, choices: list[tuple], *, note=None, filter: bool | None = None) -> None:
        super().__init__()
        self.title_text = title
        self.choices = choices
        self.note = note
        self.filterable = len(choices) >= FILTER_FROM if filter is None else filter
        self.shown: list[int] = list(range(len(choices)))

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(_label(self.title_text), classes="dialog-title")
            if self.note is not None:
                yield Static(_label(self.note), classes="dialog-help")
            if self.filterable:
                field = Input(placeholder="type to narrow the list — enter picks", id="choice-filter")
                field.cursor_blink = self.app.cursor_blink
                yield field
            yield StopOptionList(*self._options(), id="choices")

    def _options(self) -> list[Option]:
        return [Option(_label(self.choices[i][1]), id=str(i), disabled=self.choices[i][0] is self.DISABLED)
                for i in self.shown]

    def on_mount(self) -> None:
        if self not in self.app.screen_stack:
            return  # closed before it was mounted (a key pressed at once): nothing to set up
        if self.filterable:
            self.set_focus(self.query_one("#choice-filter", Input))
        else:
            self.set_focus(self.query_one("#choices", OptionList))
        ol = self.query_one("#choices", OptionList)
        first = next((k for k, i in enumerate(self.shown) if self.choices[i][0] is not self.DISABLED), None)
        ol.highlighted = first

    def on_input_changed(self, message: Input.Changed) -> None:
        if message.input.id != "choice-filter":
            return
        message.stop()
        words = message.value.lower().split()
        self.shown = [i for i, (_v, label) in enumerate(self.choices)
                      if all(w in _label(label).plain.lower() for w in words)]
        ol = self.query_one("#choices", OptionList)
        ol.clear_options()
        ol.add_options(self._options())
        first = next((k for k, i in enumerate(self.shown) if self.choices[i][0] is not self.DISABLED), None)
        ol.highlighted = first

    def on_input_submitted(self, message: Input.Submitted) -> None:
        if message.input.id != "choice-filter":
            return
        message.stop()
        ol = self.query_one("#choices", OptionList)
        if ol.highlighted is not None:
            self._pick(self.shown[ol.highlighted])

    def on_key(self, event) -> None:
        # in the filter field, up / down move the list's highlight
        if self.filterable and event.key in ("up", "down") and self.query_one("#choice-filter", Input).has_focus:
            ol = self.query_one("#choices", OptionList)
            if event.key == "up":
                ol.action_cursor_up()
            else:
                ol.action_cursor_down()
            event.stop()

    def on_option_list_option_selected(self, message: OptionList.OptionSelected) -> None:
        message.stop()
        self._pick(int(message.option.id))

    def _pick(self, index: int) -> None:
        value = self.choices[index][0]
        if value is not self.DISABLED:
            self.dismiss(value)

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
        with Vertical(classes="dialog", id="prompt-dialog"):
            yield Label(_label(self.title_text), classes="dialog-title")
            # the value offered is kept and the cursor put after it: selected, the first key typed replaced
            # it (`e` on a proposition, then a space, replaced its whole text)
            field = Input(visible(self.value), placeholder=visible(self.placeholder), id="prompt",
                          select_on_focus=False)
            field.cursor_blink = self.app.cursor_blink
            yield field

    def on_input_submitted(self, message: Input.Submitted) -> None:
        message.stop()
        self.dismiss(message.value)

    def action_cancel(self) -> None:
        self.dismiss(None)


OTHER = "other: "  # store.missed.OTHER_PREFIX


class MissedDefectScreen(ModalScreen):
    """A defect no rule reported: the design's nodes it is on (picked), the rule that should have fired
    (picked from the catalogue by type-ahead, or `other: TEXT`), a description.

    Dismisses with {"nodes": [...], "rule": str | None, "description": str | None} or None."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="dialog_cancel")]
    SHOWN = 40  # list lines offered at once (type to narrow)

    def __init__(self, design_id: str, node_ids: list[str], rules: list[tuple[str, str]],
                 nodes: list[str] | None = None) -> None:
        super().__init__()
        self.design_id = design_id
        self.node_ids = list(node_ids)
        self.rules = list(rules)  # (id, title)
        self.picked: list[str] = [n for n in (nodes or []) if n in set(node_ids)]
        self.rule: str | None = None
        self._asked_description = False

    def compose(self) -> ComposeResult:
        blink = self.app.cursor_blink
        # the form scrolls inside the dialog and the buttons stay below it: on a short terminal they are on
        # screen without scrolling the fields away
        with Vertical(classes="dialog", id="missed-dialog"):
            yield Label(Text.assemble("Missed defect on ", (visible(self.design_id), "bold")),
                        classes="dialog-title")
            yield Static("What did the verifier miss? Pick the nodes it is on, the rule that should have fired "
                         "(or other: …), and say what is wrong. In a field: type to narrow its list, up / down to "
                         "move, enter to pick; enter on an empty field goes on.", classes="dialog-help")
            with VerticalScroll(id="missed-form"):
                nodes = Input(placeholder="nodes: type to narrow, enter picks (space in the list too)",
                              id="missed-node-filter")
                nodes.cursor_blink = blink
                yield nodes
                yield StopSelectionList(*self._node_options(""), id="missed-nodes")
                rule = Input(placeholder="rule: type to narrow, enter picks", id="missed-rule")
                rule.cursor_blink = blink
                yield rule
                yield StopOptionList(*self._rule_options(""), id="missed-rules")
                yield Static(self._picked_text(), id="missed-picked")
                desc = Input(placeholder="what is wrong", id="missed-description")
                desc.cursor_blink = blink
                yield desc
            yield Static("", id="missed-error", classes="dialog-error")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Save", variant="primary", id="missed-save")
                yield Button("Cancel", id="missed-cancel")

    def on_mount(self) -> None:
        if self not in self.app.screen_stack:
            return  # closed before it was mounted (a key pressed at once): nothing to set up
        self.set_focus(self.query_one("#missed-node-filter", Input))

    # ---- nodes ----------------------------------------------------------------------------------
    def _node_options(self, text: str) -> list[Selection]:
        words = text.lower().split()
        shown = [n for n in self.node_ids if all(w in n.lower() for w in words)][: self.SHOWN * 4]
        return [Selection(plain(n), n, n in self.picked) for n in shown]

    def on_selection_list_selection_toggled(self, message: SelectionList.SelectionToggled) -> None:
        message.stop()
        node = message.selection.value
        if node in self.picked:
            self.picked.remove(node)
        else:
            self.picked.append(node)
        self._show_picked()

    # ---- rules ----------------------------------------------------------------------------------
    def _rule_options(self, text: str) -> list[Option]:
        words = text.lower().split()
        hits = [(r, title) for r, title in self.rules
                if all(w in r.lower() or w in (title or "").lower() for w in words)]
        # rules whose id holds every word first, then the shorter (more specific) ids
        hits.sort(key=lambda rt: (not all(w in rt[0].lower() for w in words), rt[0].lower() != text.strip().lower(),
                                  len(rt[0])))
        shown = hits[: self.SHOWN]
        options = [Option(Text.assemble((visible(r), "bold"), (f"  {visible(title)}" if title else "", "dim")),
                          id=f"rule:{k}") for k, (r, title) in enumerate(shown)]
        self._shown_rules = [r for r, _t in shown]
        free = text.strip()
        if free.startswith(OTHER):
            free = free[len(OTHER):].strip()
        options.append(Option(Text.assemble(("other: ", "bold magenta"),
                                            visible(free) if free else ("type what no rule covers", "dim")),
                              id="rule:other"))
        return options

    def on_input_changed(self, message: Input.Changed) -> None:
        if message.input.id == "missed-node-filter":
            message.stop()
            sl = self.query_one("#missed-nodes", SelectionList)
            sl.clear_options()
            sl.add_options(self._node_options(message.value))
        elif message.input.id == "missed-rule":
            message.stop()
            ol = self.query_one("#missed-rules", OptionList)
            ol.clear_options()
            ol.add_options(self._rule_options(message.value))
            ol.highlighted = 0

    def _choose_rule(self, option_id: str) -> None:
        if option_id == "rule:other":
            free = self.query_one("#missed-rule", Input).value.strip()
            if free.startswith(OTHER):
                free = free[len(OTHER):].strip()
            if not free:
                self.query_one("#missed-error", Static).update("type what the other defect is, then pick other:")
                return
            self.rule = OTHER + free
        else:
            self.rule = self._shown_rules[int(option_id.split(":")[1])]
        self.query_one("#missed-error", Static).update("")
        self._show_picked()
        self.set_focus(self.query_one("#missed-description", Input))

    def on_option_list_option_selected(self, message: OptionList.OptionSelected) -> None:
        message.stop()
        if message.option.id:
            self._choose_rule(message.option.id)

    def _picked_text(self) -> Text:
        t = Text()
        t.append("nodes ", style="dim")
        t.append(visible(", ".join(self.picked)) or "—", style="bold")
        t.append("   rule ", style="dim")
        t.append(visible(self.rule) if self.rule else "—", style="bold")
        return t

    def _show_picked(self) -> None:
        self.query_one("#missed-picked", Static).update(self._picked_text())

    # ---- keys -----------------------------------------------------------------------------------
    def on_key(self, event) -> None:
        # from a filter field, up / down move in its list and space (nodes) picks the highlighted node
        focused = self.focused
        fid = getattr(focused, "id", None)
        if fid == "missed-node-filter" and event.key in ("up", "down"):
            sl = self.query_one("#missed-nodes", SelectionList)
            if sl.highlighted is None and sl.option_count:
                sl.highlighted = 0
            elif event.key == "up":
                sl.action_cursor_up()
            else:
                sl.action_cursor_down()
            event.stop()
            event.prevent_default()
        elif fid == "missed-rule" and event.key in ("up", "down"):
            ol = self.query_one("#missed-rules", OptionList)
            if event.key == "up":
                ol.action_cursor_up()
            else:
                ol.action_cursor_down()
            event.stop()
            event.prevent_default()

    def on_input_submitted(self, message: Input.Submitted) -> None:
        message.stop()
        fid = message.input.id
        if fid == "missed-node-filter":
            sl = self.query_one("#missed-nodes", SelectionList)
            if not message.value.strip():
                self.set_focus(self.query_one("#missed-rule", Input))
                return
            if sl.option_count:  # pick the highlighted (else the first) node shown, and start a new search
                index = sl.highlighted if sl.highlighted is not None else 0
                node = sl.get_option_at_index(index).value
                if node not in self.picked:
                    self.picked.append(node)
                    self._show_picked()
                message.input.value = ""
        elif fid == "missed-rule":
            ol = self.query_one("#missed-rules", OptionList)
            if message.value.strip() and ol.highlighted is not None:
                self._choose_rule(ol.get_option_at_index(ol.highlighted).id)
            elif self.rule:
                self.set_focus(self.query_one("#missed-description", Input))
            else:
                # a missed defect is counted against the rule that should have fired: one without a rule
                # is counted nowhere, so the rule is asked for here, not skipped
                self.query_one("#missed-error", Static).update(
                    "pick the rule that should have fired: type to narrow the list, or other: what no rule covers")
        elif not message.value.strip() and not self._asked_description:
            # enter on the empty description does not close the dialog at once: a curator who typed
            # "rule, enter, enter" and then the description would have had it land on the design screen
            # as judging keys
            self._asked_description = True
            self.query_one("#missed-error", Static).update(
                "say what is wrong here, or press enter again to save without a description")
        else:
            self.save()

    def on_button_pressed(self, message: Button.Pressed) -> None:
        message.stop()
        if message.button.id == "missed-save":
            self.save()
        else:
            self.dismiss(None)

    def save(self) -> None:
        desc = self.query_one("#missed-description", Input).value.strip() or None
        error = self.query_one("#missed-error", Static)
        if not self.rule:
            error.update("pick the rule that should have fired (or other: …) before saving")
            self.set_focus(self.query_one("#missed-rule", Input))
            return
        self.dismiss({"nodes": list(self.picked), "rule": self.rule, "description": desc})

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
            self.set_focus(self.query_one(f"#{order[i + 1]}", Input))
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

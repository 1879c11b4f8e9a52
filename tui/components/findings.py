"""FindingsList: the design's findings to judge, then the missed defects marked on it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.text import Text
from textual.geometry import Size
from textual.reactive import Reactive
from textual.widgets.option_list import Option

from ..sanitise import visible
from ..widgets.option_lists import StopOptionList
from ..widgets.text_pane import same_text

VERDICT_LABEL = {"real": "real", "false_alarm": "false alarm", "unsure": "unsure", "clean": "clean"}
VERDICT_STYLE = {"real": "bold red", "false_alarm": "bold green", "unsure": "bold yellow", "clean": "bold green"}
RUN_MARK = {"agrees": ("⚙ run agrees", "green"), "refutes": ("⚙ run refutes", "bold yellow")}


def finding_label(f: Mapping[str, Any]) -> str:
    """A finding as the curator reads it: its key, rule@nodes (no trailing @ when it names no node)."""
    return str(f.get("key") or f.get("rule") or "").rstrip("@")


def item_key(item: tuple[str, dict] | None):
    """What identifies a highlighted line across a re-read: a finding's key, a missed defect's id."""
    if item is None:
        return None
    kind, obj = item
    return obj.get("key") if kind == "finding" else ("missed", obj.get("id"))


def finding_prompt(f: dict, curator: str, flagged: bool = False, run_kind: str | None = None) -> Text:
    t = Text()
    if f.get("stale"):
        t.append("○ ", style="dim")
    elif f["severity"] == "block":
        t.append("✖ ", style="bold red")
    else:
        t.append("▲ ", style="bold yellow")
    t.append(visible(f["rule"]), style="dim" if f.get("stale") else "bold")
    nodes = visible(",".join(f.get("nodes") or []))
    if nodes:
        t.append(f"  @{nodes if len(nodes) <= 28 else nodes[:27] + '…'}", style="dim")
    v = f.get("verdict")
    if v:
        t.append(f"  [{VERDICT_LABEL[v]}]", style=VERDICT_STYLE[v])
    mine = (f.get("judgments") or {}).get(curator) or {}
    if mine.get("note"):
        t.append(" ✎", style="italic")
    if flagged and not v:
        t.append("  ⚑ later", style="bold magenta")
    if run_kind in RUN_MARK:
        label, style = RUN_MARK[run_kind]
        t.append(f"  {label}", style=style)
    if f.get("stale"):
        t.append("  (no longer fires)", style="dim italic")
    elif f.get("demoted"):
        t.append(f"  (demoted: {visible(f['demoted'])})", style="dim italic")
    return t


def missed_prompt(m: dict, curator: str) -> Text:
    t = Text()
    t.append("◇ missed ", style="bold magenta")
    t.append(visible(m.get("rule") or "(no rule)"), style="bold")
    if m.get("nodes"):
        t.append(f"  @{visible(','.join(m['nodes']))}", style="dim")
    if m.get("description"):
        t.append(f" — {visible(m['description'])}")
    who = m.get("curator")
    t.append(f"  ({visible(who)})" if who != curator else "  (yours: x retracts)", style="dim")
    return t


class FindingsList(StopOptionList):
    """Findings (live first, then stale) and missed defects; `current()` says what is highlighted."""

    # The list's size is fixed by the stylesheet (a share of the side pane), so a refill with another
    # number of lines needs no layout of the screen: OptionList updates its scrollbars itself
    # (`_scroll_update`), and a scrollbar that appears or goes still asks for a layout.
    virtual_size: Reactive[Size] = Reactive(Size(0, 0), layout=False)

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.items: list[tuple[str, dict]] = []  # ("finding", f) | ("missed", m)
        self.view = None
        self.curator = ""
        self.run_marks: dict = {}  # finding key -> relation kind of the latest run

    def show(self, view, curator: str, keep_key=None, run_marks: dict | None = None) -> bool:
        """Fill the list; highlight `keep_key`'s line (see `item_key`), else the first finding still to
        judge. Returns whether `keep_key` was found."""
        self.view, self.curator = view, curator
        self.run_marks = run_marks or {}
        findings = view.findings if view is not None else []
        missed = list(view.data.get("missed_defects") or []) if view is not None else []
        self.items = [("finding", f) for f in findings] + [("missed", m) for m in missed]
        flags = (view.data.get("flags") or {}) if view is not None else {}
        options = [Option(finding_prompt(f, curator, f["key"] in flags, self.run_marks.get(f["key"])),
                          id=f"f{i}") for i, f in enumerate(findings)]
        options += [Option(missed_prompt(m, curator), id=f"m{i}") for i, m in enumerate(missed)]
        if not findings:
            if view is not None and view.data.get("error") is not None:
                msg, style = "not generated: nothing to judge", "dim"
            elif view is not None and view.is_clean_marked(curator):
                msg, style = "no findings — marked clean ✓", "green"
            elif view is not None and None in flags:
                msg, style = "no findings — ⚑ flagged for later (c: clean · m: missed defect)", "magenta"
            else:
                msg, style = "no findings — c: clean · m: missed defect · l: later", "dim"
            options.insert(0, Option(Text(msg, style=style), disabled=True))
        if not self._same_options(options):
            self.set_options(options)  # one refill (clear_options then add_options drew an empty list first)
        if not self.items:
            self.highlighted = None
            return False
        target = None
        if keep_key is not None:
            target = next((i for i, item in enumerate(self.items) if item_key(item) == keep_key), None)
        kept = target is not None
        if target is None:
            target = next((i for i, (k, f) in enumerate(self.items)
                           if k == "finding" and not f.get("stale") and not f.get("verdict")
                           and not f.get("demoted") and f["key"] not in flags), 0)
        self.highlighted = target + (0 if findings else 1)
        return kept

    def _same_options(self, options: list[Option]) -> bool:
        """Whether `options` draw what the list shows (the next design without findings, say)."""
        return len(options) == self.option_count and all(
            a.id == b.id and a.disabled == b.disabled and same_text(a.prompt, b.prompt)
            for a, b in zip(options, self.options, strict=True))

    def _index(self) -> int | None:
        i = self.highlighted
        if i is None:
            return None
        if self.view is not None and not self.view.findings:
            i -= 1  # the message line comes first
        return i if 0 <= i < len(self.items) else None

    def current(self) -> tuple[str, dict] | None:
        i = self._index()
        return None if i is None else self.items[i]

    def current_finding(self) -> dict | None:
        item = self.current()
        return item[1] if item is not None and item[0] == "finding" else None

    def highlight_finding(self, key: str) -> None:
        for i, (kind, f) in enumerate(self.items):
            if kind == "finding" and f["key"] == key:
                self.highlighted = i
                return

    def refresh_finding(self, key: str) -> None:
        flags = (self.view.data.get("flags") or {}) if self.view is not None else {}
        for i, (kind, f) in enumerate(self.items):
            if kind == "finding" and f["key"] == key:
                self.replace_option_prompt_at_index(
                    i, finding_prompt(f, self.curator, key in flags, self.run_marks.get(key)))
                return

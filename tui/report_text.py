"""The wording of report figures that both front ends print: the app's reports screen and
`archcurator report` (one wording, shared, so the two never drift apart)."""

from __future__ import annotations


def false_alarm_text(row: dict) -> str:
    """A rule's judged false-alarm rate with its Wilson 95% interval: `40% (17–69%)`, `—` unjudged."""
    rate, ci = row.get("falseAlarmRate"), row.get("falseAlarmInterval")
    if rate is None or not ci:
        return "—"
    return f"{rate:.0%} ({ci[0]:.0%}–{ci[1]:.0%})"

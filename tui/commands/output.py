"""What the commands print goes through the one sanitiser (`tui.sanitise`).

- `say(...)`: `print` with every argument made visible (newlines kept): ids,
  names, messages and paths from a design, a batch or the store reach the
  terminal as text, an ESC as `␛`, never as an escape sequence;
- `console()`: a Rich console that reads no markup (a model named `[/bold]`
  is printed as typed, not parsed) and makes the text of every segment
  visible just before it is written. Rich's own colours come from segment
  styles, not from text, so they still work on a terminal.

JSON output needs neither: `json.dumps` escapes every control character.
"""

from __future__ import annotations

import sys
from functools import cache

from ..sanitise import visible_lines


def say(*values, sep: str = " ", end: str = "\n", file=None, flush: bool = False) -> None:
    print(*(visible_lines(v) for v in values), sep=sep, end=end, file=file if file is not None else sys.stdout,
          flush=flush)


@cache
def _safe_console_class():
    # made on first use: rich was a fifth of `verify --json`'s start-up, which prints no Rich text
    from rich.console import Console
    from rich.segment import Segment

    class SafeConsole(Console):
        """A Console whose written text is always visible plain text (see the module's docstring)."""

        def __init__(self, **kwargs) -> None:
            kwargs.setdefault("markup", False)
            kwargs.setdefault("highlight", False)
            kwargs.setdefault("emoji", False)
            super().__init__(**kwargs)

        def on_broken_pipe(self) -> None:
            # Rich's own answer is SystemExit(1): a reader closing early is tui/cli.py's to answer, the one way
            # for every command (silent, status 141)
            self.quiet = True
            raise BrokenPipeError

        def _render_buffer(self, buffer) -> str:
            return super()._render_buffer(
                seg if seg.control else Segment(visible_lines(seg.text), seg.style, seg.control) for seg in buffer)

    return SafeConsole


def __getattr__(name: str):
    if name == "SafeConsole":
        return _safe_console_class()
    raise AttributeError(name)


def console(stderr: bool = False, **kwargs):
    return _safe_console_class()(stderr=stderr, **kwargs)

"""The one sanitiser for everything shown: text from outside reaches the terminal as plain text.

Every string that comes from a design, a batch, a bundle, a run or the store
(ids, names, models, node ids, messages, notes, run logs, KB text, file
names in error lines) is shown through this module, in the app and on the
command line:

- control characters are shown, never sent: C0 controls and DEL become their
  Unicode control pictures (ESC is `␛`, BEL `␇`, CR `␍`), so an escape
  sequence in a model name reads `␛]0;title␇` instead of setting the
  terminal's title; C1 controls (0x80-0x9f, e.g. the one-byte CSI 0x9b),
  bidirectional overrides and isolates (the "Trojan Source" characters),
  line and paragraph separators, zero-width characters and lone surrogates
  become `\\x9b` / `\\u202e` escapes;
- markup is never parsed: the app builds Rich `Text` objects (`plain`,
  `styled`), never markup strings, so `[/bold]` in a record is shown as
  typed. Where a Textual API takes only a markup string (a command's help
  line in the palette, a notification), `markup_escape` makes it literal.

Pure Python, no Textual: the command line imports it too.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the start-up of verify --json)

if TYPE_CHECKING:  # rich is imported where a Text is made: the command line's --json answers need none
    from rich.text import Text

# C0, DEL, C1; Arabic letter mark; zero-width and directional marks; line/paragraph separators;
# embeddings and overrides; word joiner .. isolates; BOM / zero-width no-break space; lone surrogates
_OTHER = "\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff\ud800-\udfff"
_UNSAFE_RE = re.compile(f"[\x00-\x1f{_OTHER}]")
_UNSAFE_MULTILINE_RE = re.compile(f"[\x00-\x09\x0b-\x1f{_OTHER}]")  # a newline stays a line break
TAB_WIDTH = 4


def _picture(match: re.Match) -> str:
    ch = match.group()
    code = ord(ch)
    if code < 0x20:
        return chr(0x2400 + code)  # ␀ .. ␟ (␛ for ESC)
    if code == 0x7F:
        return "\u2421"  # ␡
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}"


def visible(value: object) -> str:
    """`value` as one line of plain text: every control or invisible-format character shown visibly
    (a newline too: ␊). None is the empty string."""
    if value is None:
        return ""
    s = value if isinstance(value, str) else str(value)
    if _UNSAFE_RE.search(s) is None:
        return s
    return _UNSAFE_RE.sub(_picture, s)


def visible_lines(value: object) -> str:
    """Like `visible`, but newlines stay line breaks and tabs become spaces (notes, messages, logs)."""
    if value is None:
        return ""
    s = value if isinstance(value, str) else str(value)
    if _UNSAFE_MULTILINE_RE.search(s) is None and "\t" not in s:
        return s
    s = s.replace("\r\n", "\n").replace("\t", " " * TAB_WIDTH)
    return _UNSAFE_MULTILINE_RE.sub(_picture, s)


def plain(value: object, style: str = "", *, lines: bool = False) -> Text:
    """A Rich `Text` of `value`, made visible, with no markup read: what every widget is given."""
    from rich.text import Text

    return Text(visible_lines(value) if lines else visible(value), style=style)


def styled(*parts) -> Text:
    """`Text` from pieces: a str or (str, style) is outside data made visible; a `Text` is taken as built."""
    from rich.text import Text

    t = Text()
    for part in parts:
        if isinstance(part, Text):
            t.append_text(part)
        elif isinstance(part, tuple):
            value, style = part
            t.append(visible(value), style=style)
        else:
            t.append(visible(part))
    return t


def markup_escape(value: object) -> str:
    """`value` made visible, then escaped for an API that reads Textual markup (a command's help line in
    the palette): every `[` is preceded by a backslash, which Textual's markup reads as a literal `[`."""
    return visible(value).replace("[", "\\[")


def one_line(value: object, limit: int | None = None) -> str:
    """Whitespace runs folded to one space, then made visible; cut to `limit` characters with an ellipsis."""
    s = visible(" ".join(str("" if value is None else value).split()))
    if limit is not None and len(s) > limit:
        s = s[: max(limit - 1, 0)] + "…"
    return s


def has_unsafe(text: str) -> bool:
    """Whether `text` holds a character `visible` would have replaced (tests use it on rendered output)."""
    return _UNSAFE_RE.search(text) is not None

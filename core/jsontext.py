"""Reading JSON that anyone may have written: design files, batch lines, `--args`.

`json.loads` alone lets a hostile text through in ways that later turn into
tracebacks or blow-ups far from the door: nesting deep enough to exhaust the
recursion limit, integers past Python's 4,300-digit conversion limit,
`NaN`/`Infinity` (and `1e999`, which reads as infinity) that make NaN cost
quotes, and lone UTF-16 surrogates (`"\\ud800"`) that no UTF-8 store or
terminal can encode. `loads` refuses each of them at the door, accepts a
UTF-8 byte-order mark, and raises `json.JSONDecodeError` for all of them,
so a caller's one handler gives one line with a line and column.

The checks cost a few regular-expression passes over the text (C speed);
the precise position of a fault is only looked for once a fault is known.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
from functools import cache

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the start-up of verify --json)
if TYPE_CHECKING:
    from typing import Any

MAX_DEPTH = 100  # arrays/objects inside each other; a design needs about 6
MAX_DIGITS = 40  # digits in one number; 2**128 has 39, no size or count of a design needs more
BOM = "\ufeff"
MAX_FILE_BYTES = 64 << 20  # one design file (the largest reference design is 190 KB)

_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


@cache
def _error_patterns() -> tuple[re.Pattern, re.Pattern, re.Pattern, re.Pattern]:
    """(token, long digits, big exponent, surrogate): what the walk that locates a refusal reads, compiled
    when a text is refused (compiling them for every `verify --json` start-up was most of this module's)."""
    # the tokens a precise scan walks: a string, a bracket, a number, a bare word
    return (re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]|-?\d[\d.eE+-]*|[A-Za-z]+', re.S),
            re.compile(f"[0-9]{{{MAX_DIGITS + 1},}}"), re.compile(r"[eE][+-]?[0-9]{3,}"),
            re.compile("[\ud800-\udfff]"))


class JSONTextError(json.JSONDecodeError):
    """A JSON text refused at the door: too deep, too long a number, not finite, not encodable."""


class FileRefused(ValueError):
    """A file that is not read at all: not a regular file, or too large (the message is one line)."""


def open_regular(path, flags: int = os.O_RDONLY) -> int:
    """A descriptor of `path` when it is a regular file; FileRefused otherwise (OSError as raised).
    Opened without blocking and checked after opening, so a FIFO (which would block the open, or
    the read, for ever), a device such as /dev/zero (endless) or a socket is never read, even one
    swapped in between a check and the open."""
    fd = os.open(path, flags | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = ("a folder" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode) else
                    "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "a socket" if stat.S_ISSOCK(mode)
                    else "not a regular file")
            raise FileRefused(f"is {kind}, not a file to read")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return fd
    except BaseException:
        os.close(fd)
        raise


def read_problem(exc: BaseException) -> str:
    """The words for a file that could not be read, the same from every command (verify, run,
    import, the folder walk): `no such file`, `is a folder, not a file to read`, `cannot read:
    permission denied`, `cannot read: not UTF-8 text (byte N)`."""
    if isinstance(exc, FileRefused):
        return str(exc)
    if isinstance(exc, UnicodeDecodeError):
        return f"cannot read: not UTF-8 text (byte {max(exc.start, 0)})"
    if isinstance(exc, FileNotFoundError):
        return "no such file"
    if isinstance(exc, IsADirectoryError):
        return "is a folder, not a file to read"
    if isinstance(exc, OSError):
        why = exc.strerror or type(exc).__name__
        return f"cannot read: {why[:1].lower() + why[1:]}"
    return f"cannot read: {exc}"


def read_file(path, limit: int = MAX_FILE_BYTES) -> str:
    """The UTF-8 text of a regular file of at most `limit` bytes (a leading BOM dropped).
    Raises FileRefused, OSError or UnicodeDecodeError."""
    fd = open_regular(path)
    with os.fdopen(fd, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        if size > limit:
            raise FileRefused(f"is too large to be a design ({size:,} bytes; at most {limit:,})")
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise FileRefused(f"is too large to be a design (more than {limit:,} bytes)")
    return strip_bom(data.decode("utf-8"))


def read_stream(stream, limit: int = MAX_FILE_BYTES) -> str:
    """The UTF-8 text of a byte stream (standard input) of at most `limit` bytes, as `read_file` reads a
    file: read in bounded memory, however much is sent. Raises FileRefused, OSError or UnicodeDecodeError."""
    data = stream.read(limit + 1)
    if len(data) > limit:
        raise FileRefused(f"is too large to be a design (more than {limit:,} bytes)")
    return strip_bom(data.decode("utf-8"))


def loads(text: str) -> Any:
    """`json.loads` with the door's limits (module doc); raises `json.JSONDecodeError`."""
    text = strip_bom(text)
    decoder = guard(text)
    try:
        return decoder.decode(text)
    except RecursionError:  # the guard counted brackets; a text it misread still ends here, not in a traceback
        raise JSONTextError(f"nested deeper than {MAX_DEPTH} levels", text, 0) from None
    except _Refused as exc:
        raise _locate(text, exc.kind) from None


def strip_bom(text: str) -> str:
    return text[1:] if text.startswith(BOM) else text


def guard(text: str) -> json.JSONDecoder:
    """Check `text` (BOM already stripped) against the limits and return the decoder to read it
    with; raises JSONTextError. For callers that scan with `decoder.scan_once` themselves."""
    try:
        raw = text.encode("utf-8")
    except UnicodeEncodeError:  # a raw surrogate (from argv, say); a text read as UTF-8 has none
        raise _locate(text, "surrogate") from None
    if b"\\" in raw:
        # escapes: blank the strings exactly (slower, and rare in designs)
        outside = _STRING.sub('""', text).encode("utf-8")
        brackets = outside.translate(None, _ALL_BUT_BRACKETS)
    else:
        # no escapes, so no quote inside a string: keep quotes and brackets and drop the strings
        # left empty (`""`); a quote left over means some string holds a bracket (the first such
        # string's opening quote always ends an odd run of quotes), and then strings are blanked exactly
        brackets = raw.translate(None, _ALL_BUT_QUOTES_AND_BRACKETS).replace(b'""', b"")
        outside = None
        if b'"' in brackets:
            outside = _STRING.sub('""', text).encode("utf-8")
            brackets = outside.translate(None, _ALL_BUT_BRACKETS)
    if len(brackets) > MAX_DEPTH and _depth_over(brackets):
        raise _locate(text, "depth")
    if _LONG_ZEROS in raw.translate(_DIGITS_AS_ZEROS):
        if outside is None:
            outside = _STRING.sub('""', text).encode("utf-8")
        if _LONG_ZEROS in outside.translate(_DIGITS_AS_ZEROS):
            raise _locate(text, "digits")
    if b"\\u" in raw and _SURROGATE_ESCAPE.search(text) and _lone_surrogate_escape(text):
        raise _locate(text, "surrogate")
    return _DECODER


_ALL_BUT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_ALL_BUT_QUOTES_AND_BRACKETS = bytes(b for b in range(256) if b not in b'[]{}"')
_DIGITS_AS_ZEROS = bytes(48 if 48 <= b <= 57 else 32 for b in range(256))
_LONG_ZEROS = b"0" * (MAX_DIGITS + 1)


class _Refused(ValueError):
    def __init__(self, kind: str):
        super().__init__(kind)
        self.kind = kind


def _refuse_constant(name: str):
    raise _Refused("constant")


def _finite_float(s: str) -> float:
    v = float(s)
    if not math.isfinite(v):
        raise _Refused("overflow")
    return v


# floats are few in a design (rates, eps): checking each one costs less than finding the
# exponents that could overflow
_DECODER = json.JSONDecoder(parse_constant=_refuse_constant, parse_float=_finite_float)


def _depth_over(brackets: bytes) -> bool:
    """Whether the brackets outside strings nest deeper than MAX_DEPTH: each pass removes the
    innermost pairs, so brackets MAX_DEPTH deep are gone after MAX_DEPTH passes."""
    s = brackets
    for _ in range(MAX_DEPTH):
        if not s:
            return False
        t = s.replace(b"[]", b"").replace(b"{}", b"")
        if t == s:  # unbalanced (the decoder will say where): count the running depth instead
            return _running_depth(s) > MAX_DEPTH
        s = t
    return bool(s)


def _running_depth(brackets: bytes) -> int:
    depth = top = 0
    for c in brackets:
        if c in b"[{":
            depth += 1
            top = max(top, depth)
        else:
            depth -= 1
    return top


def _lone_surrogate_escape(text: str) -> bool:
    """Whether a decoded string would hold a surrogate that is not half of a pair."""
    for m in _STRING.finditer(text):
        s = m.group()
        if "\\u" not in s:
            continue
        try:
            value = json.loads(s)
        except ValueError:
            return False  # malformed: the decoder reports it
        if _error_patterns()[3].search(value):
            return True
    return False


_WHAT = {
    "depth": f"nested deeper than {MAX_DEPTH} levels",
    "digits": f"a number with more than {MAX_DIGITS} digits",
    "constant": "NaN and Infinity are not JSON numbers; use a finite number",
    "overflow": "a number too large for a float (it would read as infinity)",
    "surrogate": "a string holds a lone UTF-16 surrogate (\\ud800-\\udfff), which no UTF-8 text can hold",
}


def _locate(text: str, kind: str) -> JSONTextError:
    """The error for `kind`, at the first place in `text` where it happens (a slow walk, run once)."""
    token, long_digits, big_exponent, surrogate = _error_patterns()
    pos = 0
    depth = 0
    for m in token.finditer(text):
        tok = m.group()
        c = tok[0]
        if kind == "depth" and c in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                pos = m.start()
                break
        elif kind == "depth" and c in "]}":
            depth -= 1
        elif kind == "digits" and (c.isdigit() or c == "-") and long_digits.search(tok):
            pos = m.start()
            break
        elif kind == "constant" and tok in ("NaN", "Infinity"):
            pos = m.start() - (1 if text[m.start() - 1:m.start()] == "-" else 0)
            break
        elif kind == "overflow" and (c.isdigit() or c == "-") and big_exponent.search(tok):
            try:
                if not math.isfinite(float(tok)):
                    pos = m.start()
                    break
            except ValueError:
                continue
        elif kind == "surrogate" and c == '"':
            if surrogate.search(tok):
                pos = m.start()
                break
            if "\\u" in tok:
                try:
                    if surrogate.search(json.loads(tok)):
                        pos = m.start()
                        break
                except ValueError:
                    continue
    return JSONTextError(_WHAT[kind], text, pos)

"""The one form of a command's error line: `archcurator COMMAND: FILE: problem`, on stderr.

A file that cannot be read is worded by `read_problem` (no such file, is a folder,
cannot read: permission denied / not UTF-8 text), the same in every command.

FILE is what the problem is about: the input file (with `:LINE` where one
line is at fault), the store, or the flag whose value is wrong. A command
that cannot do its work prints one such line and exits 2. The line is made
visible by the one sanitiser (`tui.sanitise`): a file name or an id holding
an escape sequence is shown, never sent to the terminal.
"""

from __future__ import annotations

import os
import sys

from archcurator.core.jsontext import read_problem

from ..sanitise import one_line as _visible_line

__all__ = ["EXIT_INPUT", "error_line", "fail", "no_store", "one_line", "read_problem"]

EXIT_INPUT = 2


def one_line(text: object) -> str:
    """One line, whitespace folded, every control character shown visibly."""
    return _visible_line(text)


def error_line(command: str, where: str | os.PathLike | None, problem: object) -> str:
    """`archcurator COMMAND: WHERE: problem`; a problem that already begins with WHERE keeps it once."""
    text = one_line(problem)
    if where is not None:
        w = one_line(where)
        if not w:  # an empty name given on the command line: shown as given, and once
            w = "''"
            text = text[2:] if text.startswith(": ") else text
        if not (text == w or text.startswith(w + ":")):
            text = f"{w}: {text}"
    command = one_line(command)
    return f"archcurator {command}: {text}" if command else f"archcurator: {text}"


def fail(command: str, where: str | os.PathLike | None, problem: object, code: int = EXIT_INPUT) -> int:
    print(error_line(command, where, problem), file=sys.stderr)
    return code


def no_store(command: str, path) -> int:
    return fail(command, path, "no such store (import designs first, or pass --db)")

"""The one form of a command's error line: `archcurator COMMAND: FILE: problem`, on stderr.

FILE is what the problem is about: the input file (with `:LINE` where one
line is at fault), the store, or the flag whose value is wrong. A command
that cannot do its work prints one such line and exits 2.
"""

from __future__ import annotations

import os
import sys

EXIT_INPUT = 2


def one_line(text: object) -> str:
    return " ".join(str(text).split())


def error_line(command: str, where: str | os.PathLike | None, problem: object) -> str:
    """`archcurator COMMAND: WHERE: problem`; a problem that already begins with WHERE keeps it once."""
    text = one_line(problem)
    if where is not None:
        w = str(where)
        if not (text == w or text.startswith(w + ":")):
            text = f"{w}: {text}"
    return f"archcurator {command}: {text}" if command else f"archcurator: {text}"


def fail(command: str, where: str | os.PathLike | None, problem: object, code: int = EXIT_INPUT) -> int:
    print(error_line(command, where, problem), file=sys.stderr)
    return code


def no_store(command: str, path) -> int:
    return fail(command, path, "no such store (import designs first, or pass --db)")

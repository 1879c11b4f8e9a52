"""Reading a bundle's files without trusting them: inside the bundle, regular, capped.

An ArchitectureIQ bundle is a folder someone else wrote. Every file we read
from one goes through here:

- ``inside(root, relative)`` resolves a path the bundle names (a
  ``candidate_path``, a ``dataset_path``) against the bundle's root and
  refuses an absolute path, ``..`` segments, and anything that resolves
  outside the root (a symlinked folder pointing elsewhere);
- ``read_capped(path, cap)`` opens with ``O_NOFOLLOW | O_NONBLOCK`` and
  checks the *opened* file (``fstat``): a symbolic link, a FIFO, a device
  (``/dev/zero``), a socket or a folder is refused before a byte is read and
  nothing blocks; a file larger than CAP is refused by its size, and at most
  CAP + 1 bytes are ever read (a file growing under us is caught too).

Errors are ``UnsafeFile`` (a ValueError), one line naming the file.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

MAX_JSON_BYTES = 4 * 1024 * 1024          # a spec, a question, a summary
MAX_JSONL_BYTES = 256 * 1024 * 1024       # one of our question files
MAX_TENSOR_BYTES = 256 * 1024 * 1024      # train.pt / test.pt
MAX_LINE_BYTES = 4 * 1024 * 1024          # one line of a question file


class UnsafeFile(ValueError):
    """A file a bundle names that we will not read; one line."""


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISDIR, "a folder"), (stat.S_ISLNK, "a symbolic link")):
        if test(mode):
            return name
    return "not a regular file"


def inside(root: Path, relative: str | os.PathLike) -> Path:
    """ROOT / RELATIVE, refused unless it stays inside ROOT (resolved)."""
    text = os.fspath(relative)
    if not isinstance(text, str) or not text.strip():
        raise UnsafeFile("an empty path")
    if "\x00" in text:
        raise UnsafeFile(f"{text!r}: a NUL byte in the path")
    rel = Path(text)
    if rel.is_absolute() or text.startswith(("/", "\\")) or (len(text) > 1 and text[1] == ":"):
        raise UnsafeFile(f"{text}: an absolute path (paths in a bundle are relative to it)")
    if ".." in rel.parts:
        raise UnsafeFile(f"{text}: a path that climbs out with '..'")
    base = root.resolve()
    try:
        target = (base / rel).resolve()
    except (OSError, RuntimeError) as e:
        raise UnsafeFile(f"{text}: cannot resolve ({e.__class__.__name__})") from None
    if target != base and base not in target.parents:
        raise UnsafeFile(f"{text}: resolves outside the bundle ({target})")
    return target


def within(root: Path, path: Path) -> bool:
    """Whether PATH (resolved) is ROOT or below it."""
    try:
        base, target = root.resolve(), path.resolve()
    except (OSError, RuntimeError):
        return False
    return target == base or base in target.parents


def is_regular(path: Path) -> bool:
    """A regular file that is not a symbolic link (lstat: never follows, never opens)."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except (OSError, ValueError):
        return False


def read_capped(path: str | os.PathLike, cap: int) -> bytes:
    """The bytes of a regular file of at most CAP bytes; UnsafeFile otherwise."""
    p = os.fspath(path)
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(p, flags)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise UnsafeFile(f"{p}: a symbolic link (not followed)") from None
        raise UnsafeFile(f"{p}: cannot open ({e.strerror or e.__class__.__name__})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UnsafeFile(f"{p}: {_kind(st.st_mode)}, not a regular file")
        if st.st_size > cap:
            raise UnsafeFile(f"{p}: {st.st_size} bytes, over the {cap}-byte limit")
        chunks, total = [], 0
        while total <= cap:
            chunk = os.read(fd, min(1 << 20, cap + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if total > cap:
            raise UnsafeFile(f"{p}: grew past the {cap}-byte limit while read")
        return b"".join(chunks)
    except OSError as e:
        raise UnsafeFile(f"{p}: cannot read ({e.strerror or e.__class__.__name__})") from None
    finally:
        os.close(fd)


def read_text_capped(path: str | os.PathLike, cap: int = MAX_JSON_BYTES) -> str:
    data = read_capped(path, cap)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise UnsafeFile(f"{os.fspath(path)}: not UTF-8 text") from None


def first_line(path: str | os.PathLike, cap: int = MAX_LINE_BYTES) -> str:
    """The first non-blank line of a regular file, reading at most CAP bytes; '' when unsure."""
    p = os.fspath(path)
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(p, flags)
    except OSError:
        return ""
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return ""
        data = os.read(fd, cap)
    except OSError:
        return ""
    finally:
        os.close(fd)
    text = data.decode("utf-8-sig", errors="replace")
    for line in text.splitlines():
        if line.strip():
            return line
    return ""

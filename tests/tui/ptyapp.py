"""The real app in a child process on a pseudo-terminal: keys typed as a terminal sends them, the screen read
back as the terminal got it, and `kill -9` when a test says so. No tmux needed (a plain `pty`)."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import signal
import struct
import sys
import termios
import threading
import time
from pathlib import Path

_ESCAPES = re.compile(rb"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][0-9A-Za-z]|\x1b[=>78]")
_NOTICE = re.compile(r"failed|not applied|is gone|no longer on|no finding here|Error|Traceback|busy")
KEYS = {"enter": "\r", "escape": "\x1b", "down": "\x1b[B", "up": "\x1b[A", "colon": ":", "tab": "\t"}


class PtyApp:
    """`archcurator --db DB` as curator `curator`, on a terminal of cols x rows."""

    def __init__(self, db: Path, curator: str, home: Path, cols: int = 120, rows: int = 36) -> None:
        home.mkdir(parents=True, exist_ok=True)
        config = home / f"{curator}.toml"
        config.write_text(f'curator = "{curator}"\ncursor_blink = false\n')
        env = dict(os.environ, ARCHCURATOR_CONFIG=str(config), TERM="xterm-256color", COLUMNS=str(cols),
                   LINES=str(rows), TEXTUAL_ANIMATIONS="none")
        env.pop("TEXTUAL", None)
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # the child: the app, on the pty's other end
            fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
            os.execvpe(sys.executable, [sys.executable, "-m", "archcurator", "--db", str(db)], env)
        fcntl.ioctl(self.fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        self.out = bytearray()
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while True:
            try:
                chunk = os.read(self.fd, 65536)
            except OSError:
                return
            if not chunk:
                return
            with self._lock:
                self.out += chunk

    def text(self, since: int = 0) -> str:
        """What the terminal was sent (from byte `since`), escape sequences taken out."""
        with self._lock:
            raw = bytes(self.out[since:])
        return _ESCAPES.sub(b"", raw).decode("utf-8", "replace")

    @property
    def mark(self) -> int:
        with self._lock:
            return len(self.out)

    def wait_for(self, pattern: str, timeout: float = 60.0, since: int = 0) -> re.Match:
        rx = re.compile(pattern)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            m = rx.search(self.text(since))
            if m:
                return m
            if not self.alive():
                break
            time.sleep(0.1)
        raise AssertionError(f"{pattern!r} never shown; notices shown on the way: {self.notices()!r}; the screen's "
                             f"last text: {self.text()[-1500:]!r}")

    def notices(self) -> list[str]:
        """Every distinct line the app drew that tells of a failure or a key not applied: what a failed wait
        needs to say why, since a toast is gone from the last screen by the time the wait gives up."""
        seen: dict[str, None] = {}
        for line in re.split(r"[\r\n]+", self.text()):
            text = " ".join(line.replace("│", " ").replace("▌", " ").split())
            if _NOTICE.search(text):
                seen.setdefault(text[:200], None)
        return list(seen)[:40]

    def last(self, pattern: str) -> re.Match | None:
        matches = list(re.finditer(pattern, self.text()))
        return matches[-1] if matches else None

    def send(self, key: str) -> None:
        os.write(self.fd, KEYS.get(key, key).encode())

    def alive(self) -> bool:
        try:
            pid, _status = os.waitpid(self.pid, os.WNOHANG)
        except ChildProcessError:
            return False
        return pid == 0

    def kill9(self) -> None:
        os.kill(self.pid, signal.SIGKILL)
        self.reap()

    def reap(self, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                pid, _ = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:
                break
            if pid:
                break
            time.sleep(0.05)
        try:
            os.close(self.fd)
        except OSError:
            pass

    def close(self) -> None:
        if self.alive():
            self.kill9()
        else:
            self.reap()

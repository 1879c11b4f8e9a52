"""`archcurator` with no command: open the curator's app on a store.

A new store (never seeded, no designs) gets the shipped demo first
(`store.demo.ensure_demo`), so a new machine opens on something to judge.
Textual is imported here, not by the command line's other commands.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path


def open_app(db_path: str | os.PathLike | None = None, *, config_path: str | os.PathLike | None = None) -> int:
    """Seed the demo on first start, then run the app until the curator quits; the exit code."""
    from archcurator.store.connection import StoreError
    from archcurator.store.paths import resolve_db_path

    from .commands.output import say

    path = resolve_db_path(db_path)
    try:
        from archcurator.store.demo import ensure_demo, is_seeded, needs_demo

        # "first start" only when there is a demo to seed: a store of imported designs was said to be
        # seeded again on every start while nothing was added
        seeded = path.exists() and is_seeded(path)
        new = not path.exists() or needs_demo(path)
        if new:
            # the first start imports and verifies the demo (seconds): say so at once, and how far it is
            show = SeedProgress(path)
            result = ensure_demo(path, progress=show)
            show.done()
            if result is not None and result.imported:
                say(f"archcurator: first start: loaded {len(result.imported)} demo designs into {path}",
                      file=sys.stderr)
            say("archcurator: first start: seeding the demo knowledge base…", file=sys.stderr)
        from archcurator.store.kb import ensure_kb

        if not seeded and ensure_kb(path):
            say("archcurator: seeded the demo knowledge base", file=sys.stderr)
    except StoreError as exc:
        from .commands.errors import fail

        return fail("", None, exc)
    from .config import load_config

    config = load_config(config_path)
    from .app import CuratorApp

    app = CuratorApp(Path(path), config)
    code = app.run()
    return int(code or 0) if app.return_code is None else int(app.return_code)


class SeedProgress:
    """The first start's seeding on stderr: a line at once, then designs done / total (one line rewritten
    on a terminal, a line a tenth otherwise)."""

    def __init__(self, path) -> None:
        from .commands.output import say

        self.say = say
        self.tty = sys.stderr.isatty()
        self.shown = -1
        self.started = False
        say(f"archcurator: first start: loading the demo designs into {path} (verified as they are read)…",
            file=sys.stderr)

    def __call__(self, done: int, total: int) -> None:
        self.started = True
        step = max(total // 10, 1)
        if self.tty:
            sys.stderr.write(f"\rarchcurator: first start: {done:,}/{total:,} demo designs verified and stored")
            sys.stderr.flush()
        elif done // step != self.shown or done == total:
            self.shown = done // step
            self.say(f"archcurator: first start: {done:,}/{total:,} demo designs verified and stored",
                     file=sys.stderr)

    def done(self) -> None:
        if self.tty and self.started:
            sys.stderr.write("\n")
            sys.stderr.flush()

"""KeyGate: the app takes keys one at a time, each after the last one's effects are on screen.

A terminal delivers keys typed fast in one burst. Textual forwards each key to the widget focused at that
instant, and runs a screen's binding only when the key has bubbled up to the app, through one message
queue per widget. So a key that moves focus (`n` to the note field, enter from one dialog field to the
next, a dialog opening) had not moved it yet when the next keys were forwarded: text meant for a field
went to the list below it and became commands (`r` judged, `z` undid, `e` started a run), and keys
typed into the missed-defect dialog were lost or reordered.

Here each key from the terminal is held until what the previous one set off has run (the queues it
travels through drained, a hop a round, as Pilot's own wait drains a screen's; a screen it opened
mounted), and a
dialog that opens later (after a worker: the run dialog, the bulk counts) is waited for (`expect`).
Keys typed for a dialog that does not open (`refused`) are dropped, with a notice, never run as
commands. Waits are bounded: a key is never held longer than a few seconds.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque

CHAIN_ROUNDS = 7  # one hop a round: focused widget -> its containers -> screen -> app, and back (Submitted)
WAIT_CAP_S = 2.0  # at most this long for one key's effects (a dialog awaited aside)
DIALOG_WAIT_S = 6.0  # at most this long for a dialog a worker opens
DROP_WINDOW_S = 0.35  # keys arriving this soon after a refused dialog were typed for it


class KeyGate:
    def __init__(self, app) -> None:
        self.app = app
        self.held: deque = deque()
        self.busy = False
        self._task: asyncio.Task | None = None
        self._expecting: tuple[str, float] | None = None  # (what, deadline): a dialog on its way
        self._drop_until = 0.0
        self._drop_screen = None  # the screen the refused dialog was asked from: the window is its only
        self._dropped = 0
        self._dropped_for = ""
        self._typed_for = "a dialog that did not open"

    @property
    def pending(self) -> int:
        """Keys held, plus the one in flight."""
        return len(self.held) + (1 if self.busy else 0)

    # ---- the app's key path ---------------------------------------------------------------------------
    def admit(self, event) -> bool:
        """True: the app handles `event` now; False: it is held (or dropped) here."""
        if getattr(event, "_gate_released", False):
            return True
        if time.monotonic() < self._drop_until and self._screen_now() is self._drop_screen:
            self._drop(1)
            return False
        if self.busy or self.held:
            self.held.append(event)
            return False
        self.busy = True
        return True

    def handled(self) -> None:
        """The app forwarded the key it admitted: wait for its effects, then let the next one through."""
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._after_key())

    async def _after_key(self) -> None:
        try:
            await self._quiet()
        finally:
            self._next()

    def _next(self) -> None:
        if self.held:
            held = self.held.popleft()
            event = type(held)(held.key, held.character)
            event._gate_released = True
            event.set_sender(self.app)
            self.app.post_message(event)  # busy stays set: the next key keeps its place
        else:
            self.busy = False

    async def _quiet(self) -> None:
        """Wait for the key's effects: its trip up from the focused widget to the app (one queue a hop),
        what its handlers posted on the way (a Submitted, a deferred focus), a screen it opened (until
        mounted), and a dialog it asked for (`expect`)."""
        app = self.app
        start = time.monotonic()
        rounds = 0
        while rounds < CHAIN_ROUNDS:
            await _drain(self._chain())
            rounds += 1
            if not self._screen_ready():
                rounds = min(rounds, CHAIN_ROUNDS - 2)  # a screen is opening: on until it is mounted
            if self._expecting is not None:
                what, deadline = self._expecting
                if time.monotonic() > deadline:
                    self.refused(f"{what} did not open in time")
                else:
                    rounds = min(rounds, CHAIN_ROUNDS - 2)
                    await asyncio.sleep(0.01)
                    continue
            if time.monotonic() - start > WAIT_CAP_S and self._expecting is None:
                return
        del app

    def _chain(self) -> list:
        """The app, its screen, and the focused widget with its ancestors: where a key and what it posts go."""
        app = self.app
        nodes = [app]
        try:
            screen = app.screen
        except Exception:  # noqa: BLE001 - no screen yet (starting) or closing
            return nodes
        nodes.append(screen)
        node = screen.focused
        while node is not None and node is not screen:
            nodes.append(node)
            node = node.parent
        return nodes

    def _screen_now(self):
        try:
            return self.app.screen
        except Exception:  # noqa: BLE001
            return None

    def _screen_ready(self) -> bool:
        try:
            return self.app.screen.is_mounted
        except Exception:  # noqa: BLE001
            return True

    # ---- what screens say -----------------------------------------------------------------------------
    def expect(self, what: str, seconds: float = DIALOG_WAIT_S) -> None:
        """A dialog is on its way (a worker reads what it shows): keys typed meanwhile wait for it."""
        self._expecting = (what, time.monotonic() + seconds)

    def arrived(self) -> None:
        """A dialog is open and focused: the keys held for it go to it."""
        self._expecting = None

    def refused(self, what: str, typed_for: str = "a dialog that did not open") -> None:
        """The dialog a key asked for does not open (or the screen the keys were typed on is changing): what
        was typed for it is dropped, never a command."""
        self._expecting = None
        self._dropped_for = what
        self._typed_for = typed_for
        self._drop(len(self.held))
        self.held.clear()
        self._drop_until = time.monotonic() + DROP_WINDOW_S
        self._drop_screen = self._screen_now()

    def _drop(self, n: int) -> None:
        if n <= 0:
            return
        first = self._dropped == 0
        self._dropped += n
        if first:
            self.app.set_timer(DROP_WINDOW_S + 0.05, self._say_dropped)

    def _say_dropped(self) -> None:
        n, self._dropped = self._dropped, 0
        if n:
            why = f" ({self._dropped_for})" if self._dropped_for else ""
            self.app.notify(f"{n} key{'s' if n != 1 else ''} typed for {self._typed_for}{why} "
                            f"{'were' if n != 1 else 'was'} dropped, not run as commands", severity="warning",
                            timeout=5)


async def _drain(nodes) -> None:
    """Wait until each node has handled every message queued to it before now."""
    pending = 0
    done = asyncio.Event()

    def one_done() -> None:
        nonlocal pending
        pending -= 1
        if pending == 0:
            done.set()

    for node in nodes:
        try:
            if node.call_later(one_done):
                pending += 1
        except Exception:  # noqa: BLE001 - a node closing takes no more callbacks
            pass
    if pending:
        try:
            await asyncio.wait_for(done.wait(), timeout=WAIT_CAP_S)
        except asyncio.TimeoutError:
            pass

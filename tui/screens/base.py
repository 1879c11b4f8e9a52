"""What every full screen of the curator's app shares: a typed `self.app`, and its own workers.

A screen's blocking reads run in thread workers defined on the screen that shows them (Textual ends
them when the screen closes); the app keeps only what outlives a screen (the write queue, the run
bridge, the queue and design readers several screens share). A worker's `Worker.StateChanged` goes
to the node that runs it and does not bubble, so each screen hands it to the app, which reports a
failure in one way for all of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar

from textual.message import Message
from textual.screen import Screen
from textual.worker import Worker, get_current_worker

if TYPE_CHECKING:
    from textual import getters

    from ..app import CuratorApp

ResultT = TypeVar("ResultT")


class CuratorScreen(Screen[ResultT]):
    if TYPE_CHECKING:  # at run time Textual's own `app` (the same object, untyped)
        app = getters.app(CuratorApp)

    def post_from_worker(self, message: Message) -> None:
        """(In one of this screen's workers.) Send its result, unless the worker was cancelled or the
        screen closed meanwhile."""
        if get_current_worker().is_cancelled or self not in self.app.screen_stack:
            return
        self.post_message(message)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        self.app.report_worker(event)

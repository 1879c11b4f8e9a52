"""AppHeader: Textual's Header, safe when its screen closes at once.

Textual's Header updates its title from watchers it registers on mount; when
a screen is opened and closed in quick succession (Enter then Escape on a
slow machine), a watcher can run after the header's children are gone and
the app exits with `NoMatches` (reproduced with a bare Textual app, 8.2.8).
Here that update is skipped: there is nothing left to draw on. The title it
shows is `App.format_title`, plain `Content` (never markup).
"""

from __future__ import annotations

from textual.css.query import NoMatches
from textual.dom import NoScreen
from textual.events import Mount
from textual.widget import Widget
from textual.widgets import Header
from textual.widgets._header import HeaderTitle


class AppHeader(Header):
    def _on_mount(self, event: Mount) -> None:
        Widget._on_mount(self, event)  # what every widget does when mounted

        def set_title() -> None:  # at once, in the same frame as the screen's change (Textual's is async)
            try:
                # one line, full width (nowrap, ellipsis): a new title never changes the layout
                self.query_one(HeaderTitle).update(self.format_title(), layout=False)
            except (NoScreen, NoMatches):
                pass  # the screen is closing

        self.watch(self.app, "title", set_title)
        self.watch(self.app, "sub_title", set_title)
        self.watch(self.screen, "title", set_title)
        self.watch(self.screen, "sub_title", set_title)
        event.prevent_default()  # not Header's own watchers (above)

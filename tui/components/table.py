"""Table: Textual's DataTable with a header that always follows the measured column widths."""

from __future__ import annotations

from textual.widgets import DataTable


class Table(DataTable):
    """Textual 8's DataTable measures new rows' widths when it next idles, but neither drops the
    lines it drew before that nor counts the change in the update number its render caches are
    keyed by. A header drawn between `add_row` and that idle (a refresh on a loaded machine) was
    kept from the old widths: a narrow header over wide rows until the cursor moved, seen on the
    runs screen and once in the knowledge base's list. After each measure the drawn lines go."""

    def _update_dimensions(self, new_rows) -> None:
        super()._update_dimensions(new_rows)
        self._clear_caches()
        self.refresh()

"""Stepping to the next design redraws the panes that changed, without a layout or a repaint of
the whole screen (bench/bench_app.py times it; this checks the mechanism, never a duration).

Counted through Textual's own screen layout (`Screen._refresh_layout`) and whole-screen update
(`Compositor.render_full_update`), with the Textual version pinned in pyproject's dev extras.
Before this was fixed every ] did both: the screen's sub-title repainted the whole screen, and the
findings list's refill and the finding detail's new height each laid it out.
"""

from __future__ import annotations

from collections import Counter

import pytest
from apphelp import make_app, settle
from textual._compositor import Compositor
from textual.screen import Screen
from textual.widgets._header import HeaderTitle


def _count(monkeypatch, counts: Counter) -> None:
    layout, full = Screen._refresh_layout, Compositor.render_full_update

    def counted_layout(self, *args, **kwargs):
        counts["layout"] += 1
        return layout(self, *args, **kwargs)

    def counted_full(self, *args, **kwargs):
        counts["full"] += 1
        return full(self, *args, **kwargs)

    monkeypatch.setattr(Screen, "_refresh_layout", counted_layout)
    monkeypatch.setattr(Compositor, "render_full_update", counted_full)


@pytest.mark.slow
async def test_next_design_of_the_same_shape_is_drawn_without_layout_or_full_repaint(store_path, monkeypatch):
    counts: Counter = Counter()
    _count(monkeypatch, counts)
    app = make_app(store_path, prefetch=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        app.screen.jump_to("d-003")
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        screen = app.screen
        assert screen.view.id == "d-003"
        for expected in ("d-004", "d-005"):  # tiny CNNs without findings, as d-003: the same scrollbars
            counts.clear()
            await pilot.press("right_square_bracket")
            await settle(pilot)
            assert screen.view.id == expected
            assert counts["layout"] == 0, f"stepping to {expected} laid out the screen {counts['layout']} times"
            assert counts["full"] == 0, f"stepping to {expected} repainted the whole screen"
            # what changed is on screen: the header's position and id, the summary
            assert expected in str(screen.query_one(HeaderTitle).render())
            assert expected in str(screen.query_one("#design-summary").render())


async def test_text_pane_wraps_to_its_width_and_keeps_its_scroll_within_a_shorter_text():
    from rich.text import Text
    from textual.app import App

    from archcurator.tui.widgets.text_pane import TextPane

    class One(App):
        def compose(self):
            yield TextPane(id="pane")

    app = One()
    async with app.run_test(size=(40, 10)) as pilot:
        pane = app.query_one(TextPane)
        long = Text("\n".join(f"line {i}" for i in range(48)) + "\n" + "word " * 30)
        pane.update(long)
        await pilot.pause()
        width = pane.scrollable_content_region.width
        assert pane.show_vertical_scrollbar and width < 40  # 48+ lines in 10 rows: the scrollbar takes a column
        drawn = [pane.render_line(y).text.rstrip() for y in range(10)]
        assert drawn[0] == "line 0"
        assert pane.virtual_size.height > 49  # the 150-character line wrapped
        assert all(len(line) <= width for line in drawn)
        pane.scroll_to(y=pane.max_scroll_y, animate=False)
        await pilot.pause()
        assert pane.render_line(9).text.strip().startswith("word")

        pane.update(Text("\n".join(f"short {i}" for i in range(12))))  # shorter than where it was scrolled
        await pilot.pause()
        assert pane.virtual_size.height == 12
        assert pane.scroll_y == pane.max_scroll_y
        assert pane.render_line(9).text.strip() == "short 11"
        assert str(pane.render()).startswith("short 0")

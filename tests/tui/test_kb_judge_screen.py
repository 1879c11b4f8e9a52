"""The KB screen shows what a curator judges a proposition by, and runs a cycle of the loop in a worker:
evidence rows with recipes, means ± std and pool; the uses; the held-out record beside the training one."""

from __future__ import annotations

import shutil

import pytest
from apphelp import make_app, settle
from storefix import make_store


@pytest.fixture(scope="module")
def kb_template(tmp_path_factory):
    from storefix import make_kb

    return make_kb(make_store(tmp_path_factory.mktemp("kbj") / "template.duckdb"))


@pytest.fixture
def kb_store(kb_template, tmp_path):
    path = tmp_path / "store.duckdb"
    shutil.copy(kb_template, path)
    return path


def _cells(table) -> list[str]:
    return [str(getattr(c, "plain", c)) for r in range(table.row_count) for c in table.get_row_at(r)]


@pytest.mark.slow
async def test_cycle_from_the_screen_then_evidence_uses_and_records(kb_store):
    from archcurator.store import kb_loop
    from archcurator.tui.screens.kb import KnowledgeBaseScreen

    app = make_app(kb_store)
    async with app.run_test(size=(160, 44)) as pilot:
        await settle(pilot)
        await pilot.press("K")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, KnowledgeBaseScreen)
        left = len(kb_loop.stream(kb_store))
        assert left > 0
        await pilot.press("C")
        await settle(pilot)
        prompt = app.screen.query_one("#prompt")
        prompt.value = "5"
        await pilot.press("enter")
        await settle(pilot)
        assert app.screen is screen
        assert len(kb_loop.stream(kb_store)) == left - min(5, left)   # the worker ran the cycle
        counts = kb_loop.use_counts(kb_store)
        assert counts, "the cycle recorded no use"
        pid = max(counts, key=lambda p: sum(counts[p].values()))
        table = screen.query_one("#kb-props")
        table.move_cursor(row=screen.order.index(pid))
        await settle(pilot)
        ev = screen.query_one("#kb-evidence")
        cells = _cells(ev)
        assert ev.row_count > 0
        assert any("±" in c for c in cells) and any(c.startswith("pool_") for c in cells)
        assert any("lr=" in c or "width=" in c or "optimizer=" in c for c in cells)   # recipes, fields that differ
        uses = screen.query_one("#kb-uses")
        assert uses.row_count == sum(counts[pid].values())
        assert {c for c in _cells(uses)} & {"helpful", "harmful", "neutral"}
        records = str(screen.query_one("#kb-records").render())
        assert "heldout" in records and "train" in records and "units (pool × dataset)" in records
        assert "helpful" in records

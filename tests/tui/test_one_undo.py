"""One undo model (issue #25, Deliver 4): z takes back the curator's newest step, whichever history it
is in (a verdict, a KB operation), on every screen. Before, the app's z knew only curation steps and
the KB screen's z only the KB audit log: a pin followed by z on the design screen said "nothing of
yours left to undo", and z on the KB screen after a verdict took back an older KB step."""

from __future__ import annotations

import shutil

import pytest
from apphelp import current_verdicts, make_app, settle
from storefix import make_kb, make_store


@pytest.fixture(scope="module")
def kb_template(tmp_path_factory):
    return make_kb(make_store(tmp_path_factory.mktemp("undo") / "template.duckdb"))


@pytest.fixture
def kb_store(kb_template, tmp_path):
    path = tmp_path / "store.duckdb"
    shutil.copy(kb_template, path)
    return path


def _a_finding(path):
    from archcurator.store.connection import connect

    with connect(path) as con:
        return con.execute("SELECT design_id, key FROM findings ORDER BY design_id, key"
                           " LIMIT 1").fetchone()


def test_the_newest_step_of_either_history_is_taken_back_first(kb_store):
    from archcurator.store import kb as K
    from archcurator.store.app_queries import AppStore

    store = AppStore(kb_store, "ada")
    design, key = _a_finding(kb_store)
    pid = K.list_propositions(kb_store)[0].id
    store.judge(design, key, "real")
    K.pin(kb_store, pid, actor="ada")
    K.add(kb_store, "Someone else's.", [], "higher depth wins", actor="bo")  # never ada's to undo

    first = store.undo_last()
    assert first is not None and first["room"] == "kb" and not K.get_proposition(kb_store, pid).pinned
    second = store.undo_last()
    assert second is not None and second["room"] == "curation" and second["designs"] == [design]
    assert store.undo_last() is None
    assert any(p.text == "Someone else's." for p in K.list_propositions(kb_store))


@pytest.mark.slow
async def test_z_on_the_queue_takes_back_a_pin_made_on_the_kb_screen(kb_store):
    from archcurator.store import kb as K
    from archcurator.tui.screens.kb import KnowledgeBaseScreen

    app = make_app(kb_store)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        await pilot.press("K")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, KnowledgeBaseScreen)
        table = screen.query_one("#kb-props")
        table.focus()
        table.move_cursor(row=0)
        await settle(pilot)
        pid = screen.order[0]
        await pilot.press("p")
        await settle(pilot)
        assert K.get_proposition(kb_store, pid).pinned
        await pilot.press("escape")
        await settle(pilot)
        assert not isinstance(app.screen, KnowledgeBaseScreen)
        await pilot.press("z")
        await settle(pilot)
        assert not K.get_proposition(kb_store, pid).pinned


@pytest.mark.slow
async def test_z_on_the_kb_screen_takes_back_a_verdict_newer_than_every_kb_step(kb_store):
    from archcurator.store import kb as K
    from archcurator.store.app_queries import AppStore
    from archcurator.tui.screens.kb import KnowledgeBaseScreen

    pid = K.list_propositions(kb_store)[0].id
    K.pin(kb_store, pid, actor="ada")
    design, key = _a_finding(kb_store)
    AppStore(kb_store, "ada").judge(design, key, "false_alarm")
    app = make_app(kb_store)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        await pilot.press("K")
        await settle(pilot)
        assert isinstance(app.screen, KnowledgeBaseScreen)
        await pilot.press("z")
        await settle(pilot)
        # the verdict was the newest step: it goes, the older pin stays
        assert (design, key) not in current_verdicts(kb_store)
        assert K.get_proposition(kb_store, pid).pinned
        await pilot.press("z")
        await settle(pilot)
        assert not K.get_proposition(kb_store, pid).pinned

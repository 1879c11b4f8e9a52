"""The app's knowledge-base screen on a real store (a small fixed KB): merge two, narrow one, undo."""

from __future__ import annotations

import shutil

import pytest
from apphelp import make_app, settle
from storefix import make_store


@pytest.fixture(scope="module")
def kb_template(tmp_path_factory):
    from storefix import make_kb

    return make_kb(make_store(tmp_path_factory.mktemp("kb") / "template.duckdb"))


@pytest.fixture
def kb_store(kb_template, tmp_path):
    path = tmp_path / "store.duckdb"
    shutil.copy(kb_template, path)
    return path


async def test_merge_two_and_narrow_one(kb_store):
    from archcurator.store import kb as K
    from archcurator.tui.screens.kb import KnowledgeBaseScreen

    app = make_app(kb_store)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        await pilot.press("K")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, KnowledgeBaseScreen)
        assert len(screen.order) == 6 and screen.suggestions is not None and screen.suggestions.duplicates
        dup = screen.suggestions.duplicates[0]
        # merge through the suggestion list (Enter applies the highlighted suggestion)
        screen.query_one("#kb-tabs").active = "kb-tab-suggestions"
        await settle(pilot)
        ol = screen.query_one("#kb-suggestions")
        ol.focus()
        ol.highlighted = 0
        await pilot.press("enter")
        await settle(pilot)
        merged = {K.get_proposition(kb_store, dup.a).status, K.get_proposition(kb_store, dup.b).status}
        assert "merged" in merged

        # narrow the highlighted proposition by a key and a typed condition
        table = screen.query_one("#kb-props")
        table.focus()
        pid = screen.order[0]
        table.move_cursor(row=0)
        await settle(pilot)
        await pilot.press("w")
        await settle(pilot)
        prompt = app.screen.query_one("#prompt")
        prompt.value = "budget < 4096"
        await pilot.press("enter")
        await settle(pilot)
        children = [p for p in K.list_propositions(kb_store, "all") if p.parent_id == pid]
        assert children and [str(c) for c in children[0].structure.scope][-1] == "budget < 4096"
        assert K.get_proposition(kb_store, pid).status == "narrowed"
        log = [a["op"] for a in K.audit_log(kb_store, 5)]
        assert log[:2] == ["narrow", "merge"]
        assert K.audit_log(kb_store, 1)[0]["actor"] == "ada"

        # undo the narrowing from the screen
        await pilot.press("ctrl+z")
        await settle(pilot)
        assert K.get_proposition(kb_store, pid).status != "narrowed"

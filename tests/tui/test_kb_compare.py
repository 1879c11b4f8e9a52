"""The KB screen's pack comparison (`c`): the current pack beside the previous version (the latest
JSON export) and the raw miner's top 20, computed in a worker, shown in the Compare tab; the key is
in the footer and in `?` help."""

from __future__ import annotations

import pytest
from apphelp import make_app, settle
from storefix import make_kb, make_store


@pytest.mark.slow
async def test_c_compares_the_current_pack_with_the_previous_version_and_the_miner(tmp_path):
    from archcurator.store import kb as K
    from archcurator.tui.screens.kb import KnowledgeBaseScreen

    store = make_kb(make_store(tmp_path / "store.duckdb"))
    K.write_pack(store, tmp_path / "before.json")            # the previous pack version
    before = [e.prop.id for e in K.current_pack(store)]
    app = make_app(store)
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(pilot)
        await pilot.press("K")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, KnowledgeBaseScreen)
        footer = " ".join(str(k.render()) for k in screen.query("FooterKey, FooterLabel"))
        assert "Compare packs" in footer, footer
        gone = before[0]
        screen.query_one("#kb-props").move_cursor(row=screen.order.index(gone))
        await pilot.press("x")                                 # retire the highlighted proposition
        await settle(pilot)
        assert K.get_proposition(store, gone).status == "retired"
        await pilot.press("c")
        await settle(pilot)
        r = screen.compared
        assert r is not None, "no comparison came back"
        names = [p["pack"] for p in r["packs"]]
        assert names[0] == "current" and names[1].startswith("previous (export #") and names[2] == "miner"
        ids = {p["pack"]: p["ids"] for p in r["packs"]}
        assert ids[names[1]] == before and gone not in ids["current"]     # the retired one answers no more
        assert [d["b"] for d in r["difference"]] == names[1:]
        assert screen.query_one("#kb-tabs").active == "kb-tab-compare"
        shown = str(screen.query_one("#kb-compare").render())
        assert "current minus miner" in shown and "pool bootstrap 95% CI" in shown and "disagree on" in shown
        await pilot.press("question_mark")
        await settle(pilot)
        help_text = str(app.screen.query_one("#help-text").render())
        assert "Compare packs" in help_text and "kb_compare" in help_text

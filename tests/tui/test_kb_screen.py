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


async def _open_kb(pilot, app):
    from archcurator.tui.screens.kb import KnowledgeBaseScreen

    await settle(pilot)
    await pilot.press("K")
    await settle(pilot)
    assert isinstance(app.screen, KnowledgeBaseScreen)
    return app.screen


@pytest.mark.slow
async def test_a_suggestion_asks_before_merging_and_merge_keeps_the_target_id(kb_store):
    from archcurator.store import kb as K
    from archcurator.tui.screens.modals import ChoiceScreen

    app = make_app(kb_store)
    async with app.run_test(size=(140, 40)) as pilot:
        screen = await _open_kb(pilot, app)
        assert len(screen.order) == 6 and screen.suggestions is not None and screen.suggestions.duplicates
        ids = [p.id for p in K.list_propositions(kb_store, "all")]
        screen.query_one("#kb-tabs").active = "kb-tab-suggestions"
        await settle(pilot)
        ol = screen.query_one("#kb-suggestions")
        ol.focus()
        ol.highlighted = 0
        await pilot.press("enter")
        await settle(pilot)
        # Enter only asks; nothing is merged yet
        assert isinstance(app.screen, ChoiceScreen)
        assert all(p.status == "active" for p in K.list_propositions(kb_store, "all"))
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is screen and all(p.status == "active" for p in K.list_propositions(kb_store, "all"))
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, ChoiceScreen)
        await pilot.press("enter")  # "Apply it"
        await settle(pilot)
        after = K.list_propositions(kb_store, "all")
        assert [p.id for p in after] == ids  # no new id
        kept = [p for p in after if p.merged_from]
        gone = [p for p in after if p.status == "merged"]
        assert len(kept) == 1 and len(gone) == 1 and gone[0].merged_into == kept[0].id
        assert kept[0].status == "active" and kept[0].merged_from == [gone[0].id]

        # merge by key: "merge which proposition into P1?" keeps P1
        table = screen.query_one("#kb-props")
        table.focus()
        live = [p.id for p in K.list_propositions(kb_store)]
        target, other = live[0], live[-1]
        table.move_cursor(row=screen.order.index(target))
        await settle(pilot)
        await pilot.press("m")
        await settle(pilot)
        app.screen.query_one("#prompt").value = f"P{other}"
        await pilot.press("enter")
        await settle(pilot)
        assert K.get_proposition(kb_store, target).status == "active"
        assert K.get_proposition(kb_store, other).merged_into == target
        assert [p.id for p in K.list_propositions(kb_store, "all")] == ids


@pytest.mark.slow
async def test_a_pinned_proposition_is_in_the_pack_and_each_row_says_why_not(kb_store):
    from archcurator.store import kb as K

    app = make_app(kb_store)
    async with app.run_test(size=(140, 40)) as pilot:
        screen = await _open_kb(pilot, app)
        # "Adam beats every other optimizer." duplicates "Adam wins.": only one of them fits the pack
        dup = [p.id for p in K.list_propositions(kb_store) if p.structure.claim.key == "optimizer == adam wins"]
        out = [pid for pid in dup if pid not in screen.pack_ids]
        assert len(out) == 1 and "duplicate of P" in screen.pack_status[out[0]][1]
        table = screen.query_one("#kb-props")
        table.focus()
        table.move_cursor(row=screen.order.index(out[0]))
        await settle(pilot)
        assert "not in the pack: a duplicate of P" in str(screen.query_one("#kb-detail").render())
        await pilot.press("p")
        await settle(pilot)
        assert K.get_proposition(kb_store, out[0]).pinned
        assert out[0] in screen.pack_ids and screen.pack_status[out[0]][1] == "pinned"
        assert out[0] in {e.prop.id for e in K.current_pack(kb_store)}
        pack_table = screen.query_one("#kb-pack")
        assert str(out[0]) in [str(k.value) for k in pack_table.rows]


@pytest.mark.slow
async def test_narrow_in_place_undo_of_ones_own_step_and_export_to_a_path(kb_store, tmp_path):
    from archcurator.store import kb as K

    K.add(kb_store, "Someone else's.", [], "higher depth wins", actor="bo")
    app = make_app(kb_store)
    async with app.run_test(size=(140, 40)) as pilot:
        screen = await _open_kb(pilot, app)
        table = screen.query_one("#kb-props")
        table.focus()
        pid = screen.order[0]
        table.move_cursor(row=0)
        await settle(pilot)
        await pilot.press("w")
        await settle(pilot)
        app.screen.query_one("#prompt").value = "budget < 4096"
        await pilot.press("enter")
        await settle(pilot)
        p = K.get_proposition(kb_store, pid)
        assert p.status == "active" and [str(c) for c in p.structure.scope][-1] == "budget < 4096"
        log = K.audit_log(kb_store, 5)
        assert log[0]["op"] == "narrow" and log[0]["actor"] == "ada"

        # undo reverts ada's narrowing, not bo's later add
        await pilot.press("ctrl+z")
        await settle(pilot)
        assert K.get_proposition(kb_store, pid).structure.scope == ()
        assert any(p.text == "Someone else's." and p.status == "active" for p in K.list_propositions(kb_store))

        # export: asks for a path, writes there, says where
        target = tmp_path / "pack.json"
        await pilot.press("E")
        await settle(pilot)
        app.screen.query_one("#prompt").value = str(target)
        await pilot.press("enter")
        await settle(pilot)
        assert target.is_file() and K.pack_exports(kb_store)[0]["destination"] == str(target)
        assert screen.last_export == str(target)


async def test_a_refused_operation_in_the_screens_own_worker_is_said_and_the_next_one_runs(kb_store):
    """The KB screen's store work runs in its own workers: a refusal there reaches the app's one failure
    report (a line naming the worker's group) and frees the screen, so the operation queued behind it runs."""
    from archcurator.store import kb as K
    from archcurator.store import kb_ops

    app = make_app(kb_store)
    async with app.run_test(size=(140, 40)) as pilot:
        screen = await _open_kb(pilot, app)
        pid, other = screen.order[0], screen.order[1]
        assert not K.get_proposition(kb_store, other).pinned
        screen._run(kb_ops.MarkDistinct(pid, pid))  # refused by the store: not distinct from itself
        screen._run(kb_ops.Pin(other))  # queued behind it
        await settle(pilot)
        failed = [n for n in app._notifications if n.severity == "error"]
        assert [n.title for n in failed] == ["kb-write failed"]
        assert "not distinct from itself" in failed[0].message
        assert not screen.busy
        assert K.get_proposition(kb_store, other).pinned


@pytest.mark.slow
async def test_retiring_keeps_the_cursor_on_the_row_that_takes_its_place(kb_store):
    # a retire sent the highlight back to P1: the next key acted on a proposition the curator never chose
    from archcurator.store import kb as K

    app = make_app(kb_store)
    async with app.run_test(size=(140, 40)) as pilot:
        screen = await _open_kb(pilot, app)
        table = screen.query_one("#kb-props")
        table.focus()
        table.move_cursor(row=2)
        await settle(pilot)
        gone, after = screen.order[2], screen.order[3]
        await pilot.press("x")
        await settle(pilot)
        assert K.get_proposition(kb_store, gone).status == "retired"
        assert gone not in screen.order and screen.current_id() == after


@pytest.mark.slow
async def test_an_edit_keeps_the_text_it_offers_and_types_after_it(kb_store):
    # the offered text was selected: `e`, a space and two letters replaced the proposition's whole text
    from archcurator.store import kb as K

    app = make_app(kb_store)
    async with app.run_test(size=(140, 40)) as pilot:
        screen = await _open_kb(pilot, app)
        table = screen.query_one("#kb-props")
        table.focus()
        table.move_cursor(row=0)
        await settle(pilot)
        pid = screen.order[0]
        before = K.get_proposition(kb_store, pid).text
        await pilot.press("e")
        await settle(pilot)
        await pilot.press("space", "Z", "Q", "enter")
        await settle(pilot)
        assert K.get_proposition(kb_store, pid).text == before + " ZQ"

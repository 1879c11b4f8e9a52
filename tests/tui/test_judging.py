"""Judging that a curator can't misfile (issue 15): each test failed on the app before its fix.

The note belongs to the highlighted finding; re-judging stays on the design; flags for later; bulk
verdicts with one undo that survives a restart; missed defects on the nodes picked, shown, retractable;
the answer key of a generated design never shown; the palette opens on the first screen."""

from __future__ import annotations

import pytest
from apphelp import current_verdicts, make_app, open_design, settle

BLOCK = "shape.flatten-linear-width@fc"
DEAD = "connectivity.dead-node@aux_head"


@pytest.mark.slow
async def test_note_stays_with_its_finding(store_path):
    app = make_app(store_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await open_design(pilot, "d-001")
        screen = app.screen
        assert screen.findings.current_finding()["key"] == BLOCK
        await pilot.press("n", *"about the width", "enter")  # a note for the width finding…
        await pilot.press("down")  # …left behind: it is not the dead node's
        await settle(pilot)
        assert screen.findings.current_finding()["key"] == DEAD
        assert screen.judge_bar.note_field.value == ""
        await pilot.press("f")
        await settle(pilot)
        assert current_verdicts(store_path)[("d-001", DEAD)] == ("false_alarm", None)
        # the original bug: a note typed on one design, `]`, a verdict on the next
        await pilot.press("n", *"meant for d-001", "enter", "right_square_bracket")
        await settle(pilot)
        assert screen.view.id == "d-002"
        await pilot.press("r")
        await settle(pilot)
        assert current_verdicts(store_path)[("d-002", "connectivity.dead-node@probe")] == ("real", None)
        assert screen.view.id == "d-003"  # d-002 done: on to the next design to judge
        # a note added to a finding already judged, without judging it again
        await pilot.press("left_square_bracket", "left_square_bracket")
        await settle(pilot)
        assert screen.view.id == "d-001"
        screen.findings.highlight_finding(DEAD)
        await settle(pilot)
        await pilot.press("n", *"dead on purpose: a probe", "enter")
        await settle(pilot)
        assert current_verdicts(store_path)[("d-001", DEAD)] == ("false_alarm", "dead on purpose: a probe")
        assert ("d-001", BLOCK) not in current_verdicts(store_path)
        assert screen.view.id == "d-001"


@pytest.mark.slow
async def test_rejudging_a_finished_design_stays_on_it(store_path):
    app = make_app(store_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await open_design(pilot, "d-001")
        await pilot.press("r", "r")  # both findings: the design is done, the next one to judge opens
        await settle(pilot)
        assert app.screen.view.id == "d-002"
        await pilot.press("left_square_bracket")
        await settle(pilot)
        screen = app.screen
        screen.findings.highlight_finding(DEAD)
        await settle(pilot)
        await pilot.press("f")  # changing one verdict of a finished design
        await settle(pilot)
        assert screen.view.id == "d-001"
        assert screen.findings.current_finding()["key"] == DEAD
        assert current_verdicts(store_path)[("d-001", DEAD)][0] == "false_alarm"


@pytest.mark.slow
async def test_flag_for_later_is_passed_by_and_shown_in_the_queue(store_path):
    app = make_app(store_path)
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await settle(pilot)
        await open_design(pilot, "d-001")
        await pilot.press("l")  # the width finding: later; on to the dead node
        await settle(pilot)
        screen = app.screen
        assert screen.findings.current_finding()["key"] == DEAD
        await pilot.press("r")  # the only one left to judge now: on to the next design
        await settle(pilot)
        assert screen.view.id == "d-002"
        rows = app.store.rows_for(["d-001"])
        assert rows["d-001"]["n_flagged"] == 1 and rows["d-001"]["judged"] == "partly"
        await pilot.press("escape", "F")  # the queue: only designs with something flagged
        await settle(pilot)
        assert app.main_queue.ids == ["d-001"]
        # and the progress line counts that filter (before: "progress failed: unknown design filter 'flagged'")
        await settle(pilot)
        assert not [n.message for n in app._notifications if n.severity == "error"]
        assert app.progress["designs"] == 1


@pytest.mark.slow
async def test_bulk_verdict_in_a_filter_and_its_undo_after_a_restart(store_path):
    app = make_app(store_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("L")
        await settle(pilot)
        await pilot.press(*"dead-node", "enter")  # the queue: designs on which dead-node fires
        await settle(pilot)
        assert app.main_queue.ids == ["d-001", "d-002", "d-008"]
        await pilot.press("enter")
        await settle(pilot)
        screen = app.screen
        screen.findings.highlight_finding(DEAD)
        await pilot.press("b")
        await settle(pilot)
        dialog = app.screen
        labels = [label.plain for _v, label in dialog.choices]
        assert any("3 findings of connectivity.dead-node in the queue" in t and "on 3 designs" in t for t in labels)
        index = next(i for i, (v, _l) in enumerate(dialog.choices) if v == ("filter", "false_alarm"))
        dialog.query_one("#choices").highlighted = index
        await pilot.press("enter")
        await settle(pilot)
        judged = current_verdicts(store_path)
        assert {k for k, (v, _n) in judged.items() if v == "false_alarm"} == {
            ("d-001", DEAD), ("d-002", "connectivity.dead-node@probe"),
            ("d-008", "connectivity.dead-node@probe_a,probe_b")}
        assert ("d-001", BLOCK) not in judged  # other rules untouched
        await pilot.press("q")
        await settle(pilot)
    assert app.return_code == 0

    app2 = make_app(store_path)
    async with app2.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("z")  # one undo takes the whole bulk verdict back, after the restart
        await settle(pilot)
        assert current_verdicts(store_path) == {}
        assert any("undone: false alarm on 3 findings of connectivity.dead-node (3 designs)" in n.message
                   for n in app2._notifications)


@pytest.mark.slow
async def test_undo_after_a_restart_reopens_what_it_undid(store_path):
    app = make_app(store_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await open_design(pilot, "d-006")
        await pilot.press("u")
        await settle(pilot)
    app2 = make_app(store_path)
    async with app2.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("enter")  # d-001
        await settle(pilot)
        await pilot.press("z")
        await settle(pilot)
        assert app2.screen.view.id == "d-006"
        assert current_verdicts(store_path) == {}


@pytest.mark.slow
async def test_missed_defect_goes_on_the_nodes_picked_and_is_shown_and_retractable(store_path):
    from archcurator.store.missed import list_missed_defects

    app = make_app(store_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await open_design(pilot, "d-001")  # the width finding (on fc) is highlighted
        await pilot.press("m")
        await settle(pilot)
        # the node typed is the one saved, not the highlighted finding's
        await pilot.press(*"features.0", "enter", "enter", *"other: the stem is too narrow", "down")
        await settle(pilot)
        options = app.screen.query_one("#missed-rules")
        assert options.get_option_at_index(options.highlighted).id == "rule:other"
        await pilot.press("enter", *"16 channels for 10 classes", "enter")
        await settle(pilot)
        saved = list_missed_defects(store_path, "d-001")
        assert [(m["node_list"], m["rule"], m["description"]) for m in saved] == [
            (["features.0"], "other: the stem is too narrow", "16 channels for 10 classes")]
        # shown with the findings
        screen = app.screen
        kinds = [k for k, _ in screen.findings.items]
        assert kinds.count("missed") == 1
        screen.findings.highlighted = kinds.index("missed")
        await settle(pilot)
        assert "missed" in str(screen.query_one("#finding-detail").render()).lower()
        await pilot.press("x")  # retract it
        await settle(pilot)
        assert list_missed_defects(store_path, "d-001") == []
        await pilot.press("z")  # and bring it back
        await settle(pilot)
        assert len(list_missed_defects(store_path, "d-001")) == 1


async def test_the_answer_key_of_a_generated_design_is_not_shown(tmp_path):
    import copy
    import json

    from storefix import ROOT

    from archcurator.store.importers import import_records

    graph = json.loads((ROOT / "tests" / "fixtures" / "tiny_cnn.json").read_text())
    graph = copy.deepcopy(graph)
    graph.setdefault("meta", {})["corruption"] = {"kind": "width", "expect": "block", "rules": ["shape.x"]}
    graph["meta"]["derived"] = "tiny_cnn: width"
    path = tmp_path / "s.duckdb"
    import_records(path, [{"id": "g-1", "author": "agent", "model": "m", "task_set": "t", "run": "r",
                           "graph": graph, "expect": "block"}], label="t")
    app = make_app(path)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        app.screen.query_one("#tabs").active = "tab-source"
        await settle(pilot)
        source = str(app.screen.query_one("#meta").render())
        shown, _, hidden = source.partition("not shown while judging")
        assert "block" not in source and "expect" not in shown and "corruption" not in shown
        assert "meta.corruption" in hidden and "batch field expect" in hidden


@pytest.mark.slow
async def test_palette_opens_on_the_queue_and_the_pick_screen(store_path):
    """Before: ctrl+p on the queue exited the app with MarkupError (the Search key hint `[/]`)."""
    from archcurator.tui.screens.queue import QueueScreen

    app = make_app(store_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+p")
        await settle(pilot)
        await pilot.press(*"sear")
        await settle(pilot)
        assert app.is_running and app._exception is None
        await pilot.press("escape", "escape")
        await settle(pilot)
        await open_design(pilot, "d-001")
        await pilot.press("D")
        await settle(pilot)
        dialog = app.screen
        dialog.query_one("#choices").highlighted = next(i for i, (v, _l) in enumerate(dialog.choices)
                                                        if v == ("pick", None))
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, QueueScreen) and app.screen.pick
        await pilot.press("ctrl+p")
        await settle(pilot)
        assert app.is_running and app._exception is None

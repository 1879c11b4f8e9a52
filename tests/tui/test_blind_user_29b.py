"""What a second blind new-user pass found in the curator app after issue 29 (each test failed before its fix).

Keys typed fast are sent as a terminal sends them, in one burst (`burst`, as in test_modes)."""

from __future__ import annotations

import pytest
from apphelp import current_verdicts, make_app, open_design, settle, wait_until
from test_modes import burst

# ---- 1: keys typed while the next design opens never land on another design ---------------------------

@pytest.mark.slow
async def test_r_bracket_f_typed_fast_after_the_verdict_that_finishes_a_design_never_misfiles(store_path):
    """`r` finishes d-002 (its one finding) and the next design to judge opens; `[` and `f` typed in the
    same burst must act on the design on screen when each was typed, or be dropped with a notice."""
    app = make_app(store_path)
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await settle(pilot)
        await open_design(pilot, "d-002")
        await burst(pilot, "r", "left_square_bracket", "f")
        await settle(pilot)
        shown = app.screen.view.id
        notes = [n.message for n in app._notifications]
    verdicts = current_verdicts(store_path)
    assert verdicts.pop(("d-002", "connectivity.dead-node@probe"), (None,))[0] in ("real", "false_alarm")
    # either the next design was drawn before `[` (then `[` went back to d-002 and `f` re-judged it, on
    # screen) or `[` came while it was opening: then it and the `f` after it were dropped, said so
    assert verdicts == {}, (shown, verdicts)
    if shown != "d-002":
        assert any("not applied" in n for n in notes), notes


# ---- 2: a missed defect is never saved without the rule that should have fired -------------------------

@pytest.mark.slow
async def test_enter_on_an_empty_rule_filter_never_saves_a_missed_defect_without_a_rule(store_path):
    from archcurator.store.missed import list_missed_defects

    app = make_app(store_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await open_design(pilot, "d-001")
        await pilot.press("m")
        await settle(pilot)
        # a node, enter on the empty node filter, enter on the empty rule filter
        await pilot.press(*"features.0", "enter", "enter", "enter")
        await settle(pilot)
        dialog = app.screen
        assert type(dialog).__name__ == "MissedDefectScreen"
        assert "rule" in str(dialog.query_one("#missed-error").render())
        assert dialog.focused.id == "missed-rule", "enter on the empty rule filter went on without a rule"
        # a description typed and saved (enter twice, then the Save button) never stores it without a rule
        dialog.set_focus(dialog.query_one("#missed-description"))
        await pilot.press(*"rank wrong", "enter", "enter")
        await settle(pilot)
        if type(app.screen).__name__ == "MissedDefectScreen":
            app.screen.query_one("#missed-save").press()
            await settle(pilot)
        assert [m["rule"] for m in list_missed_defects(store_path, "d-001")] == [], "saved without a rule"
        assert type(app.screen).__name__ == "MissedDefectScreen"
        assert app.screen.focused.id == "missed-rule"
    assert current_verdicts(store_path) == {}, "what was typed ran as judging keys"


# ---- 3: esc then a letter, which the terminal reads as alt+letter ----------------------------------------

async def _send_as_terminal(pilot, key: str, character: str | None) -> None:
    """What the terminal parser makes of a sequence: esc and a letter typed within its escape delay
    arrive as one Key, alt+letter, whose character is the letter."""
    from textual import events

    event = events.Key(key, character)
    event.set_sender(pilot.app)
    pilot.app._driver.send_message(event)
    await settle(pilot)


@pytest.mark.slow
async def test_esc_then_a_letter_read_as_alt_letter_is_esc_then_the_letter(store_path):
    app = make_app(store_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await open_design(pilot, "d-002")
        screen = app.screen
        await pilot.press("n", *"dead probe")
        await _send_as_terminal(pilot, "alt+u", "u")  # esc (leave the note field), then u (unsure)
        assert screen.judge_bar.note_field.value in ("", "dead probe"), "the u went into the note"
        await settle(pilot)
        assert app.screen.view.id == "d-003"  # u finished d-002: the next design to judge opened
        # esc (back to the queue, its cursor on d-003), then N (shifted: the queue's next design to judge)
        await _send_as_terminal(pilot, "alt+shift+n", "N")
        shown = app.screen.view.id if type(app.screen).__name__ == "DesignScreen" else type(app.screen).__name__
    assert current_verdicts(store_path) == {("d-002", "connectivity.dead-node@probe"): ("unsure", "dead probe")}
    assert shown == "d-003", "esc then N did not open the next design to judge"


# ---- 4: up / down stop at the ends of a list ------------------------------------------------------------

@pytest.mark.slow
async def test_up_and_down_stop_at_the_ends_of_the_findings_and_a_dialogs_choices(store_path):
    app = make_app(store_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await open_design(pilot, "d-008")  # three findings
        findings = app.screen.findings
        assert findings.option_count >= 2
        findings.highlighted = 0
        await pilot.press("up")
        await settle(pilot)
        assert findings.highlighted == 0, "up on the first finding jumped to the last"
        findings.highlighted = findings.option_count - 1
        await pilot.press("down")
        await settle(pilot)
        assert findings.highlighted == findings.option_count - 1, "down on the last finding jumped to the first"
        # a dialog's choices: the diff picker (d-008 has no parent), up from its first choice stays
        await pilot.press("D")
        await settle(pilot)
        choices = app.screen.query_one("#choices")
        first = choices.highlighted
        await pilot.press("up")
        await settle(pilot)
        assert choices.highlighted == first, "up on a dialog's first choice jumped to its last"


# ---- 5: the saved counter says what is true after an undo -------------------------------------------------

@pytest.mark.slow
async def test_the_saved_counter_never_goes_down_an_undo_is_one_more_saved_write(store_path):
    app = make_app(store_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await open_design(pilot, "d-008")
        await pilot.press("u")
        await settle(pilot)
        assert app.writes_status() == "1 saved"
        await pilot.press("z")
        await settle(pilot)
        assert current_verdicts(store_path) == {}, "the undo was not written"
        assert app.writes_status() == "2 saved", "the counter went down after z: it read as saved work lost"


# ---- 6: a degenerate calibration basis is said as what it is -----------------------------------------------

@pytest.mark.slow
async def test_run_estimates_from_start_up_bound_runs_show_the_assumed_basis_not_zero_gflops(store_path):
    from archcurator.store.runs import record_run

    # the only run stored here: a forward pass of the tiny CNN (kFLOPs) that took 12 s, all of it start-up
    record_run(store_path, kind="forward", design_id="d-003", backend="local", device="cpu", status="ok",
               seconds=12.0, spec={"kind": "forward"})
    app = make_app(store_path, prefetch=False)
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(pilot)
        await open_design(pilot, "d-006")  # resnet18: GFLOPs a sample
        await pilot.press("e")
        assert await wait_until(pilot, lambda: type(app.screen).__name__ == "ChoiceScreen")
        ol = app.screen.query_one("#choices")
        cpu = next(str(ol.get_option_at_index(i).prompt) for i in range(ol.option_count)
                   if str(ol.get_option_at_index(i).prompt).startswith("cpu"))
        await pilot.press("escape")
        await settle(pilot)
    assert "0.00 GFLOP/s" not in cpu, cpu
    assert "assumed" in cpu and "start-up bound" in cpu and "1 run stored" in cpu, cpu


# ---- 7: d on a design with no parent says why --------------------------------------------------------------

@pytest.mark.slow
async def test_d_on_a_design_without_parent_or_reference_says_why(store_path):
    app = make_app(store_path)
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await settle(pilot)
        await open_design(pilot, "d-003")
        await pilot.press("d")
        await settle(pilot)
        said = [n.message for n in app._notifications]
        dialog = app.screen
        assert any("d-003 has no parent and no reference" in m for m in said), said
        assert type(dialog).__name__ == "ChoiceScreen" and "no parent" in dialog.title_text


# ---- 8, 9: the reports' tabs on number keys; the false-alarm columns on screen at 100 columns ---------------

@pytest.mark.slow
async def test_the_reports_tabs_are_on_number_keys_as_the_design_screens_are(store_path):
    app = make_app(store_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("R")
        await settle(pilot)
        tabs = app.screen.query_one("#report-tabs")
        seen = []
        for key in ("2", "3", "1"):
            await pilot.press(key)
            await settle(pilot)
            seen.append(tabs.active)
        assert seen == ["tab-rules", "tab-agreement", "tab-refusals"]
        await pilot.press("2")
        await settle(pilot)
        assert app.screen.focused.id == "rules-table", "the rules tab's table does not take the keys"
        assert "2" in app.key_for("reports_tab_rules")


@pytest.mark.slow
async def test_the_false_alarm_columns_of_the_rules_report_are_on_screen_at_100_columns(store_path):
    app = make_app(store_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("R")
        await settle(pilot)
        app.screen.query_one("#report-tabs").active = "tab-rules"
        await settle(pilot)
        table = app.screen.query_one("#rules-table")
        assert table.row_count >= 3
        x = 0
        right_edge = {}
        for col in table.ordered_columns:
            x += col.get_render_width(table)
            right_edge[str(col.label)] = x
        visible_width = table.scrollable_content_region.width
        for name in ("false-alarm rate (95%)", "false alarm", "precision"):
            assert right_edge[name] <= visible_width, (name, right_edge[name], visible_width)


# ---- 10: the same curator name in two instances of the app -------------------------------------------------

@pytest.mark.slow
async def test_a_verdict_the_same_curator_changed_in_another_instance_since_it_was_shown_says_so(store_path):
    from archcurator.store.judgments import record_judgment

    app = make_app(store_path, prefetch=False)
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await settle(pilot)
        await open_design(pilot, "d-008")
        key = app.screen.findings.current_finding()["key"]
        await pilot.press("u")  # judged here: the app knows its own verdict
        await settle(pilot)
        app.screen.findings.highlighted = 0
        await settle(pilot)
        assert app.screen.findings.current_finding()["key"] == key
        quiet = [n.message for n in app._notifications if "another instance" in n.message]
        record_judgment(store_path, "d-008", key, "ada", "real", "from the other window")  # ada's other app
        await pilot.press("f")  # re-judged here, on what this app showed (unsure)
        await settle(pilot)
        said = [n.message for n in app._notifications]
        # and a re-judge of a verdict this app itself wrote says nothing
        await pilot.press("r")
        await settle(pilot)
        after = [n.message for n in app._notifications]
    assert quiet == []
    assert any("you (ada) judged it real in another instance" in m for m in said), said
    assert sum("another instance" in m for m in after) == 1, after
    assert current_verdicts(store_path)[("d-008", key)][0] == "real"

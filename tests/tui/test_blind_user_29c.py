"""What a third blind new-user pass found in the curator app (issue 29; each test failed before its fix)."""

from __future__ import annotations

import pytest
from apphelp import current_verdicts, make_app, open_design, settle
from test_modes import burst


@pytest.mark.slow
async def test_a_note_typed_fast_after_the_flag_that_finishes_a_design_never_reaches_the_next(store_path):
    """`l` flags d-002's one finding and opens the next design; `n a b c` typed in the same burst went into
    the note of the design on its way out and then of the next one, and was stored there with its verdict."""
    app = make_app(store_path)
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await settle(pilot)
        await open_design(pilot, "d-002")
        await burst(pilot, "l", "n", "a", "b", "c")
        await settle(pilot)
        shown = app.screen.view.id
        field = app.screen.judge_bar.note_field.value
        notes = [n.message for n in app._notifications]
        if shown != "d-002":
            assert field == "", (shown, field)
            assert any("not applied" in n for n in notes), notes
        await pilot.press("escape", "r")
        await settle(pilot)
    assert all(note in (None, "") for _, note in current_verdicts(store_path).values())


@pytest.mark.slow
async def test_an_adjudication_in_review_is_saved_and_the_app_goes_on(store_path):
    """`r` on a disagreement in Review stored the final verdict, then the app died on its result (an
    event id, read as a dict): the adjudication never showed as saved and the next key was lost."""
    from archcurator.store import judgments as J
    from archcurator.store.connection import connect

    J.record_judgment(store_path, "d-001", "shape.flatten-linear-width@fc", "ada", "real", "64 wide")
    J.record_judgment(store_path, "d-001", "shape.flatten-linear-width@fc", "grace", "false_alarm")
    app = make_app(store_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("V")
        await settle(pilot)
        assert type(app.screen).__name__ == "ReviewScreen"
        await pilot.press("r")
        await settle(pilot)
        assert app.is_running and type(app.screen).__name__ == "ReviewScreen"
        assert app.writes.pending_ops() == []
    with connect(store_path) as con:
        rows = con.execute("SELECT design_id, finding_key, verdict FROM adjudications").fetchall()
    assert rows == [("d-001", "shape.flatten-linear-width@fc", "real")]


@pytest.mark.parametrize("seq,letter", [("\x1bf", "f"), ("\x1bb", "b"), ("\x1b2", "2"), ("\x1b5", "5")])
def test_esc_then_f_b_or_a_digit_from_the_terminal_is_esc_then_that_key(seq, letter):
    """The terminal table read esc-then-f as ctrl+right (a word move in the note, which kept focus there),
    esc-then-b as ctrl+left and esc-then-2 as '™' typed into the note; the app reads them as typed."""
    from textual._xterm_parser import XTermParser

    from archcurator.tui.app import _esc_then_key, read_esc_then_key_as_typed

    read_esc_then_key_as_typed()
    def read(data: str) -> list:
        parser = XTermParser()
        return [e for e in [*parser.feed(data), *parser.feed("")] if hasattr(e, "key")]

    keys = [k for e in read(seq) for k in _esc_then_key(e)]
    assert [k.key for k in keys][:1] == ["escape"] and [k.character for k in keys[1:]] == [letter]
    assert [e.key for e in read("\x1b[1;5C")] == ["ctrl+right"]  # a real ctrl+arrow is still one


async def test_saving_is_not_shown_once_the_step_is_committed(store_path):
    """"4 saved · saving 1…" stayed on screen with the store holding all 4: the count of pending writes was
    read while the committed step was still the running write, and not again after."""
    app = make_app(store_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await open_design(pilot, "d-001")
        await pilot.press("r")
        await settle(pilot)
        shown = app.screen.judge_bar._shown
        assert app.writes.pending == 0
        assert shown is not None and "1 saved" in shown[2] and "saving" not in shown[2], shown

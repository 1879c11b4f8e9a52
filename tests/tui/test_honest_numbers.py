"""Honest numbers (issue 29, bug 8): the header's latest run, run estimates measured on this machine, a
warning before training a design that cannot train, the first start's progress, refusals ranked by the
rules that blocked, `report agreement` naming curators, and the queue's filter kept across restarts."""

from __future__ import annotations

import pytest
from apphelp import make_app, open_design, settle, wait_until


def _record(path, design_id: str, kind: str, status: str = "ok", seconds: float = 3.0, **outcome) -> int:
    from archcurator.store.runs import record_run

    return record_run(path, kind=kind, design_id=design_id, backend="local", device="cpu", status=status,
                      seconds=seconds, spec={"kind": kind, "steps": 200 if kind == "train" else None}, **outcome)


@pytest.mark.slow
async def test_the_header_names_the_latest_run_when_only_a_training_is_stored(store_path):
    _record(store_path, "d-003", "train")
    app = make_app(store_path, prefetch=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await open_design(pilot, "d-003")
        text = str(app.screen.query_one("DesignSummary").render())
    assert "no run yet" not in text and "last run: train" in text, text


def test_run_estimates_are_calibrated_on_the_runs_stored_here(store_path):
    from archcurator.store.app_queries import AppStore
    from archcurator.tui.run_bridge import calibrate, estimate

    data = AppStore(store_path, "ada").design("d-006")
    assumed = estimate(data, "forward", "cpu", 200)
    assert "assumed" in assumed.basis
    # two forward runs measured here, each far slower than the assumed throughput would say
    for _ in range(2):
        _record(store_path, "d-006", "forward", seconds=40.0)
    cal = calibrate(AppStore(store_path, "ada").run_timings(), 200)
    measured = estimate(data, "forward", "cpu", 200, cal)
    assert cal["cpu"].n == 2 and "measured: 2 runs stored on this machine" in measured.basis
    assert measured.seconds >= 40.0 > assumed.seconds
    train = estimate(data, "train", "cpu", 200, cal)
    assert train.seconds > measured.seconds  # more work, at the same measured rate


async def _dialog_text(pilot, key: str) -> str:
    app = pilot.app
    await pilot.press(key)
    assert await wait_until(pilot, lambda: type(app.screen).__name__ == "ChoiceScreen")
    ol = app.screen.query_one("OptionList")
    options = [str(ol.get_option_at_index(i).prompt) for i in range(ol.option_count)]
    text = " ".join([str(w.render()) for w in app.screen.query("Static, Label")] + options)
    await pilot.press("escape")
    await settle(pilot)
    return text


@pytest.mark.slow
async def test_training_a_blocked_design_or_one_whose_forward_failed_warns_first(store_path):
    _record(store_path, "d-002", "forward", status="failed", exception="RuntimeError", message="boom")
    _record(store_path, "d-003", "forward", seconds=12.0)
    app = make_app(store_path, prefetch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await open_design(pilot, "d-001")
        blocked = await _dialog_text(pilot, "E")
        await pilot.press("escape")
        await settle(pilot)
        await open_design(pilot, "d-002")
        failed = await _dialog_text(pilot, "E")
        await pilot.press("escape")
        await settle(pilot)
        await open_design(pilot, "d-003")
        fine = await _dialog_text(pilot, "E")
    assert "d-001 is blocked" in blocked and "shape.flatten-linear-width" in blocked, blocked
    assert "forward run" in failed and "RuntimeError" in failed, failed
    assert "⚠" not in fine, fine
    assert "measured: 1 run stored on this machine" in fine, fine


def test_refusals_are_ranked_by_the_rules_that_blocked(store_path):
    from archcurator.store.reports import refusal_report

    rows = refusal_report(store_path)["rows"]
    row = next(r for r in rows if r["author"] == "agent" and r["model"] == "model-a"
               and r["taskSet"]["label"] == "plain-sentence")
    assert "connectivity.dead-node" in row["ruleIds"]  # SPEC's ruleIds: every rule firing on a refused design
    assert row["blockingRuleIds"] == {"shape.flatten-linear-width": 1}, row


def test_report_agreement_lists_curators_and_refuses_an_unknown_name(store_path, capsys):
    from archcurator.store.judgments import record_judgment
    from archcurator.tui.cli import main

    record_judgment(store_path, "d-003", None, "ada", "clean")
    record_judgment(store_path, "d-003", None, "bob", "clean")
    assert main(["report", "agreement", "--db", str(store_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("archcurator report agreement: --a: ") and "ada, bob" in err and "\n" not in err, err
    assert main(["report", "agreement", "--db", str(store_path), "--a", "ada", "--b", "zed"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("archcurator report agreement: --b: no curator 'zed'") and "ada, bob" in err, err
    assert main(["report", "agreement", "--db", str(store_path), "--a", "ada", "--b", "bob", "--json"]) == 0


@pytest.mark.slow
async def test_the_queue_filter_and_sort_are_kept_across_a_restart(store_path):
    app = make_app(store_path, prefetch=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("v", "s")  # verdict: block; sorted by verdict
        await settle(pilot)
        left = (dict(app.main_queue.filters), app.main_queue.sort)
        await pilot.press("q")
    assert left == ({"verdict": "block"}, "-verdict")
    again = make_app(store_path, prefetch=False)
    async with again.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        assert (dict(again.main_queue.filters), again.main_queue.sort) == left
        assert again.main_queue.ids == ["d-001", "d-006", "d-008"]
        assert "verdict: block" in str(again.screen.query_one("#queue-filters").render())
    other = make_app(store_path, curator="bob", prefetch=False)  # another curator's queue is their own
    async with other.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        assert other.main_queue.filters == {}


@pytest.mark.slow
def test_the_first_start_shows_its_seeding_progress(tmp_path):
    from ptyapp import PtyApp

    app = PtyApp(tmp_path / "new.duckdb", "ada", tmp_path / "home")
    try:
        app.wait_for(r"first start: loading the demo designs", timeout=30)
        app.wait_for(r"\d+/\d+ demo designs verified and stored", timeout=240)
        app.wait_for(r"judged by ada", timeout=240)  # then the queue
    finally:
        app.close()

"""Issue 12, one sanitiser for everything shown: markup and escape sequences in every field of every record
kind reach the terminal as visible plain text, through every screen and dialog of the app and every
command, never parsed as markup and never as raw ESC / C0 / C1 bytes."""

from __future__ import annotations

import asyncio
import json
import re

import pytest
from apphelp import make_app
from crashproof import Scenario, alive, drive, jump, reach, settle, unsafe_lines
from hostile import CLEAN, CURATOR, DESIGN, EVIL, NODE_IDS, OTHER, UNGEN, _graph, make_hostile_store

from archcurator.tui.sanitise import has_unsafe, markup_escape, one_line, plain, visible, visible_lines

RAW = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")  # a newline may end a line


def test_visible_shows_every_control_character():
    assert visible("a\x1b]0;t\x07b") == "a␛]0;t␇b"
    assert visible("\x9b2J") == "\\x9b2J" and visible("\r\n\t") == "␍␊␉"
    assert visible("x\u202ey") == "x\\u202ey" and visible("\ud800") == "\\ud800"
    assert visible("[/bold] plain") == "[/bold] plain"  # markup is left as text: it is never parsed
    assert visible_lines("one\ntwo\tthree\x1b") == "one\ntwo    three␛"
    assert not has_unsafe(visible(EVIL)) and not RAW.search(visible_lines(EVIL + "\n" + EVIL))
    assert plain(EVIL).plain == visible(EVIL)
    assert one_line("a\n b\x1bc", limit=4) == "a b…" and one_line("a\n b\x1b") == "a b␛"


def test_markup_escape_survives_textual_markup():
    from textual.content import Content

    for s in ("[/]", "[/bold]", "x \\[/] y", "[@click=app.quit]q[/]", EVIL):
        assert Content.from_markup(markup_escape(s)).plain == visible(s)


@pytest.fixture
def hostile_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("RAY_API_SERVER_ADDRESS", raising=False)
    return make_hostile_store(tmp_path / "hostile.duckdb")


def _scenarios() -> list[Scenario]:
    runs = {"enter"}
    return [
        Scenario("queue"),
        Scenario("queue search", ["slash", *"d-"]),
        Scenario("author picker", ["a"]),
        Scenario("model picker", ["M"]),
        Scenario("task set picker", ["T"]),
        Scenario("rule picker", ["L"]),
        Scenario("jump prompt", ["colon"]),
        Scenario("design", [jump(DESIGN), "enter"]),
        Scenario("design, second finding", [jump(DESIGN), "enter", "down"]),
        Scenario("design, missed defect", [jump(DESIGN), "enter", "down", "down"]),
        Scenario("design, cost", [jump(DESIGN), "enter", lambda app: _tab(app, "tab-cost")]),
        Scenario("design, source", [jump(DESIGN), "enter", lambda app: _tab(app, "tab-source")]),
        Scenario("design, runs", [jump(DESIGN), "enter", lambda app: _tab(app, "tab-runs")]),
        Scenario("design, recent", [jump(DESIGN), "enter", lambda app: _tab(app, "tab-recent")]),
        Scenario("design, graph", [jump(DESIGN), "enter", "tab", "g"]),
        Scenario("clean design", [jump(CLEAN), "enter"]),
        Scenario("ungenerated design", [jump(UNGEN), "enter"]),
        Scenario("missed defect dialog", [jump(DESIGN), "enter", "m", *"x"]),
        Scenario("bulk dialog", [jump(DESIGN), "enter", "b"]),
        Scenario("run confirmation", [jump(DESIGN), "enter", "e"], skip=runs),
        Scenario("diff pick", [jump(DESIGN), "enter", "D"]),
        Scenario("diff with the parent", [jump(DESIGN), "enter", "d"]),
        Scenario("reports", ["R"]),
        Scenario("reports, rules", ["R", lambda app: _tab(app, "tab-rules", "#report-tabs")]),
        Scenario("reports, agreement", ["R", lambda app: _tab(app, "tab-agreement", "#report-tabs")]),
        Scenario("runs", ["X"]),
        Scenario("runs, second", ["X", "down"]),
        Scenario("review", ["V"]),
        Scenario("knowledge base", ["K"]),
        Scenario("help", ["question_mark"]),
    ]


async def _tab(app, pane: str, tabs: str = "#tabs") -> None:
    # the screen's tabs are mounted with the design; on a loaded machine that can land after the key's settle
    for _ in range(200):
        found = app.screen.query(tabs)
        if found:
            found.first().active = pane
            return
        await asyncio.sleep(0.05)
    app.screen.query_one(tabs).active = pane  # still missing: fail naming the query


@pytest.mark.slow
async def test_hostile_fields_through_every_screen_dialog_key_and_command(hostile_path):
    app = make_app(hostile_path, curator=CURATOR, prefetch=False)
    async with app.run_test(size=(140, 40), notifications=True) as pilot:
        await settle(pilot)
        scenarios = _scenarios()
        # each scenario reached shows nothing raw
        for sc in scenarios:
            await reach(pilot, sc)
            assert not unsafe_lines(app), (sc.name, unsafe_lines(app)[:3])
        counts = await drive(pilot, scenarios, check_output=True, commands_once=True, keys_once=True)
        assert not counts["unsafe"], counts["unsafe"][:5]
        # the hostile text is there, shown: the design's id (made visible) is in the queue and its screen
        await reach(pilot, Scenario("design", [jump(DESIGN), "enter"]))
        for _ in range(100):  # its worker reads the design from the store: wait until it is drawn
            drawn = "\n".join("".join(seg.text for seg in strip) for strip in app.screen._compositor.render_strips())
            if visible(DESIGN)[:30] in drawn:
                break
            await pilot.pause(0.2)
        assert visible(DESIGN)[:30] in drawn
        alive(app, "after every screen")
    # one key per binding (keys_once, commands_once): 238 keys and 162 commands over the 30 scenarios
    assert counts["scenarios"] == 30 and counts["keys"] >= 200 and counts["commands"] >= 150, counts


def _run_cli(capsys, *argv) -> tuple[int, str, str]:
    from archcurator.tui.cli import main

    capsys.readouterr()
    try:
        code = main([str(a) for a in argv])
    except SystemExit as exc:  # argparse
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def _clean_output(what, code, out, err) -> None:
    assert code in (0, 1, 2), (what, code, err[-500:])
    assert "Traceback" not in out + err and "MarkupError" not in out + err, (what, err[-800:])
    for stream, text in (("stdout", out), ("stderr", err)):
        raw = RAW.search(text)
        where = "" if raw is None else text[max(raw.start() - 60, 0):raw.end() + 20]
        assert raw is None, f"{what}: raw {raw.group()!r} on {stream}: {where!r}"


@pytest.mark.slow
def test_every_command_prints_hostile_fields_visibly(hostile_path, tmp_path, capsys):
    db = hostile_path
    design_file = tmp_path / "evil.json"
    design_file.write_text(json.dumps(_graph(NODE_IDS)))
    batch = tmp_path / "evil.jsonl"
    batch.write_text("\n".join(json.dumps(r) for r in (
        {"id": DESIGN + "9", "author": "agent", "model": EVIL, "task_set": EVIL, "run": EVIL,
         "graph": _graph(NODE_IDS)},
        {"id": EVIL, "author": EVIL, "graph": {"format": "archgraph/1", "nodes": EVIL}},
        {"id": EVIL + "u", "author": "agent", "error": EVIL},
    )) + "\n" + EVIL + "\n")
    evil_name = tmp_path / ("evil" + EVIL.replace("/", "_") + ".json")
    evil_name.write_text(EVIL)
    proposals = tmp_path / "props.jsonl"
    proposals.write_text(json.dumps({"text": EVIL, "claim": EVIL}) + "\n" + EVIL + "\n")
    commands = [
        ("verify", design_file),
        ("verify", design_file, "--json"),
        ("verify", evil_name),
        ("parse", evil_name, "--entry", EVIL),
        ("import", batch, "--db", tmp_path / "imported.duckdb"),
        ("import", batch, "--db", tmp_path / "imported.duckdb", "--json"),
        ("report", "refusals", "--db", db),
        ("report", "rules", "--db", db),
        ("report", "rules", "--json", "--db", db),
        ("report", "agreement", "--a", CURATOR, "--b", OTHER, "--db", db),
        ("report", "refusals", "--json", "--db", db),
        ("archive", DESIGN, EVIL, "--db", db),
        ("archive", DESIGN, "--restore", "--db", db),
        ("export", "--format", "csv", "--out", tmp_path / ("out" + EVIL.replace("/", "_")), "--db", db),
        ("kb", "list", "--db", db),
        ("kb", "show", "P1", "--db", db),
        ("kb", "show", EVIL, "--db", db),
        ("kb", "log", "--db", db),
        ("kb", "suggest", "--db", db),
        ("kb", "pack", "--db", db),
        ("kb", "add", "--claim", EVIL, "--db", db),
        ("kb", "import-proposals", proposals, "--db", db),
        ("checks",),
        ("report", EVIL),
        ("nonsense-" + EVIL,),
    ]
    for argv in commands:
        code, out, err = _run_cli(capsys, *argv)
        _clean_output(" ".join(map(str, argv))[:80], code, out, err)


@pytest.mark.slow
def test_a_run_of_a_hostile_design_prints_visibly(hostile_path, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("RAY_API_SERVER_ADDRESS", raising=False)
    design_file = tmp_path / "evil.json"
    # ids must be plain names to be run at all (core.graph refuses others); the name and meta are hostile
    design_file.write_text(json.dumps(_graph({k: k for k in NODE_IDS})))
    code, out, err = _run_cli(capsys, "run", design_file, "--check", "forward", "--device", "cpu", "--no-record")
    _clean_output("run", code, out, err)
    assert code == 0

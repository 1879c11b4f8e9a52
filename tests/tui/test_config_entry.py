"""The config file (curator name, keymap) and `archcurator` with no command (demo on first start)."""

from __future__ import annotations

import pytest
from apphelp import make_app, settle


def test_config_defaults_and_problems(tmp_path, monkeypatch):
    from archcurator.tui.config import config_path, load_config, login_name

    monkeypatch.setenv("ARCHCURATOR_CONFIG", str(tmp_path / "missing.toml"))
    cfg = load_config()
    assert cfg.curator == login_name() and cfg.keymap == {} and not cfg.problems
    assert config_path() == tmp_path / "missing.toml"

    bad = tmp_path / "bad.toml"
    bad.write_text("curator = [\n")
    cfg = load_config(bad)
    assert cfg.problems and str(bad) in cfg.problems[0] and cfg.curator == login_name()

    odd = tmp_path / "odd.toml"
    odd.write_text('curator = ""\n[keys]\njudge_real = ["x", "ctrl+r"]\nundo = 3\n')
    cfg = load_config(odd)
    assert cfg.keymap == {"judge_real": "x,ctrl+r"}
    assert len(cfg.problems) == 2


def test_config_folder_follows_xdg(tmp_path, monkeypatch):
    from archcurator.tui.config import config_path

    monkeypatch.delenv("ARCHCURATOR_CONFIG", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert config_path() == tmp_path / "xdg" / "archcurator" / "config.toml"


@pytest.mark.slow
def test_open_app_seeds_the_demo_on_first_start(tmp_path, monkeypatch):
    import archcurator.tui.app
    from archcurator.store.demo import is_seeded
    from archcurator.tui.app_entry import open_app

    seen = {}

    def fake_run(self, *a, **kw):
        seen["db"] = self.db_path
        seen["curator"] = self.curator
        return 0

    monkeypatch.setattr(archcurator.tui.app.CuratorApp, "run", fake_run)
    monkeypatch.setattr("archcurator.store.kb.ensure_kb", lambda db: None)  # the KB seeding is store.kb's own test
    cfg = tmp_path / "config.toml"
    cfg.write_text('curator = "ada"\n')
    db = tmp_path / "new.duckdb"
    assert open_app(db, config_path=cfg) == 0
    assert seen == {"db": db, "curator": "ada"}
    assert is_seeded(db)


def test_a_store_of_imported_designs_is_not_announced_as_a_first_start(store_path, monkeypatch, capsys):
    # a blind user saw "first start: loading the demo designs" on every start of such a store
    import archcurator.tui.app
    from archcurator.tui.app_entry import open_app

    monkeypatch.setattr(archcurator.tui.app.CuratorApp, "run", lambda self, *a, **kw: 0)
    monkeypatch.setattr("archcurator.store.kb.ensure_kb", lambda db: None)
    assert open_app(store_path, config_path=store_path.parent / "none.toml") == 0
    assert "first start" not in capsys.readouterr().err


def test_open_app_reports_an_unusable_store(tmp_path, capsys):
    from archcurator.tui.app_entry import open_app

    folder = tmp_path / "a-folder.duckdb"
    folder.mkdir()
    assert open_app(folder) == 2
    assert str(folder) in capsys.readouterr().err


@pytest.mark.slow
async def test_store_busy_is_one_line_not_a_crash(store_path, monkeypatch):
    """Another process holds the store while a verdict is written: the screen says the step is waiting
    (one line naming the holder) and the write is tried again until it is stored (issue 29: a key press
    shown as judged is never dropped for want of the writer lock)."""
    import asyncio

    from apphelp import current_verdicts

    from archcurator.store.connection import StoreBusy

    app = make_app(store_path)
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        real = app.store.judge_seen
        tries = []
        release = asyncio.Event()

        def busy(*a, **kw):
            tries.append(1)
            if not release.is_set():
                raise StoreBusy(store_path, 4242, "python -m archcurator.tui.cli import big.jsonl", 5.0)
            return real(*a, **kw)

        monkeypatch.setattr(app.store, "judge_seen", busy)
        key = app.screen.findings.current_finding()["key"]
        await pilot.press("r")
        for _ in range(100):
            await asyncio.sleep(0.05)
            if len(tries) >= 3:
                break
        await pilot.pause()
        label = str(app.screen.query_one("#judge-label").render())
        assert app.is_running and "saving 1…" in label and "PID 4242" in label, label
        assert ("d-001", key) not in current_verdicts(store_path)
        release.set()
        await settle(pilot)
        assert current_verdicts(store_path)[("d-001", key)][0] == "real"
        assert "1 saved" in str(app.screen.query_one("#judge-label").render())


def test_an_unknown_setting_is_named_not_silently_ignored(tmp_path):
    # `name = "alice"` (the key is `curator`) was dropped without a word and the curator judged as the login
    from archcurator.tui.config import load_config, login_name

    f = tmp_path / "config.toml"
    f.write_text('name = "alice"\ncursor_blink = false\n')
    cfg = load_config(f)
    assert cfg.curator == login_name() and cfg.cursor_blink is False
    assert len(cfg.problems) == 1 and str(f) in cfg.problems[0] and "'name'" in cfg.problems[0]
    assert "curator" in cfg.problems[0]

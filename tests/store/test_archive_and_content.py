"""Re-imported content is reported as already present; archived designs leave the queue and keep their judgments."""

from __future__ import annotations

import json

import pytest
from fake_verifier import graph, record
from storetest import cli, write_jsonl

from archcurator import store
from archcurator.store.app_queries import facets, queue_ids
from archcurator.store.importers import import_paths


def _write(path, g):
    path.write_text(json.dumps(g, indent=1))
    return path


def test_the_same_graph_under_another_file_name_is_already_present(db, tmp_path, fake):
    g = graph(["Linear", "Bad"])
    g.pop("name", None)
    a = _write(tmp_path / "a.json", g)
    r = import_paths(db, [a], verifier=fake)
    assert r.imported == ["a"]
    # another file name (so another derived id), other whitespace, same graph
    b = tmp_path / "copy-of-a.json"
    b.write_text(json.dumps(g))
    r = import_paths(db, [b], verifier=fake)
    assert r.imported == [] and r.skipped == ["copy-of-a"] and r.present == {"copy-of-a": "a"}
    assert store.count_designs(db, {"archived": "all"}) == 1
    # two equal files in one import: the first is stored, the second is present as it
    c, d = _write(tmp_path / "c.json", graph(["Meh"])), _write(tmp_path / "d.json", graph(["Meh"]))
    for x in (c, d):
        g2 = json.loads(x.read_text())
        g2.pop("name", None)
        _write(x, g2)
    r = import_paths(db, [c, d], verifier=fake)
    assert r.imported == ["c"] and r.present == {"d": "c"}


def test_content_dedupe_respects_provenance_and_batch_ids(db, tmp_path, fake):
    g = graph(["Linear"])
    g.pop("name", None)
    a = _write(tmp_path / "a.json", g)
    import_paths(db, [a], verifier=fake)
    # the same graph proposed by an agent is a different design (it counts in the refusal report)
    b = _write(tmp_path / "b.json", g)
    from archcurator.store.importers import Defaults

    r = import_paths(db, [b], verifier=fake, defaults=Defaults(author="agent", model="m"))
    assert r.imported == ["b"]
    # batch lines are identified by their ids (SPEC §2): equal graphs under two ids are two designs
    batch = write_jsonl(tmp_path / "x.jsonl", [record("x-1", ["Linear"]), record("x-2", ["Linear"])])
    r = import_paths(db, [batch], verifier=fake)
    assert r.imported == ["x-1", "x-2"] and not r.present


@pytest.mark.slow
def test_cli_reports_already_present(db, tmp_path):
    g = graph(["Linear"])
    g.pop("name", None)
    a = _write(tmp_path / "one.json", g)
    b = _write(tmp_path / "two.json", g)
    assert cli("import", a, db=db).returncode == 0
    p = cli("import", b, db=db)
    assert p.returncode == 0, p.stderr
    assert "imported 0" in p.stdout and "two: already present as one (same graph)" in p.stdout
    p = cli("import", b, "--json", db=db)
    assert json.loads(p.stdout)["already_present"] == [{"id": "two", "as": "one"}]


def test_archive_hides_from_the_queue_and_keeps_judgments(db, tmp_path, fake):
    import_paths(db, [write_jsonl(tmp_path / "b.jsonl", [record("k-1", ["Bad"]), record("k-2", ["Bad"]),
                                                          record("k-3")])], verifier=fake)
    store.record_judgment(db, "k-1", "fake.block@n0", "ann", "real", note="kept")
    assert queue_ids(db) == ["k-1", "k-2", "k-3"]
    assert store.archive_designs(db, ["k-1", "k-3"], "ann") == ["k-1", "k-3"]
    assert queue_ids(db) == ["k-2"]
    assert queue_ids(db, {"archived": "only"}) == ["k-1", "k-3"]
    assert store.count_designs(db) == 1 and store.count_designs(db, {"archived": "all"}) == 3
    assert dict(facets(db)["rule"]) == {"fake.block": 1}
    # the judgment is still there, and comes back with the design
    assert store.current_verdicts(db, "k-1")
    assert store.archive_designs(db, ["k-1"], "ann", restore=True) == ["k-1"]
    assert queue_ids(db) == ["k-1", "k-2"]
    assert store.current_verdicts(db, "k-1") == {"fake.block@n0": {"ann": "real"}}
    assert [e["note"] for e in store.judgment_events(db, "k-1")] == ["kept"]


@pytest.mark.slow
def test_archive_cli(db, tmp_path, fake):
    import_paths(db, [write_jsonl(tmp_path / "b.jsonl", [record("k-1"), record("k-2")])], verifier=fake)
    p = cli("archive", "k-1", db=db)
    assert p.returncode == 0 and p.stdout.strip() == "archived 1", p.stderr
    p = cli("archive", "k-1", "k-2", "--json", db=db)
    assert json.loads(p.stdout) == {"changed": ["k-2"], "unchanged": ["k-1"]}
    p = cli("archive", "k-1", "nope", "--restore", db=db)
    assert p.returncode == 2
    assert p.stderr.strip() == f"archcurator archive: {db}: no design 'nope'; nothing was changed"
    assert queue_ids(db) == []
    p = cli("archive", "k-1", "k-2", "--restore", db=db)
    assert p.returncode == 0 and p.stdout.strip() == "restored 2"

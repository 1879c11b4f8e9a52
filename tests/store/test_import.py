import json

import pytest
from fake_verifier import graph, record
from storetest import cli, write_jsonl

from archcurator import store
from archcurator.store.importers import Defaults, ImportInputError, import_paths


def _count(db, table="designs"):
    with store.connect(db) as con:
        return con.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


def test_batch_import_stores_designs_findings_and_ungenerated(db, tmp_path, fake):
    batch = write_jsonl(tmp_path / "b.jsonl", [
        record("t-1", ["Linear", "Bad", "Meh"]),
        record("t-2", ["Linear"]),
        record("t-3", error="could not generate: op 'Mamba' unknown"),
        record("t-4", ["Bad"], task_set="repair", parent="t-1", reference="resnet18"),
    ])
    r = import_paths(db, [batch], verifier=fake)
    assert r.imported == ["t-1", "t-2", "t-3", "t-4"] and not r.rejected and r.exit_code == 0
    assert r.ungenerated == ["t-3"]
    d = store.get_design(db, "t-1")
    assert d["verdict"] == "block" and d["n_block"] == 1 and d["n_warn"] == 1 and d["n_nodes"] == 3
    assert d["graph"] == graph(["Linear", "Bad", "Meh"], name="t-1")
    assert d["content_hash"] and d["source"] == f"{batch}:1"
    assert {f["key"] for f in d["findings"]} == {"fake.block@n1", "fake.warn@n2"}
    assert d["params"] == 3000 and d["quoted_cost_usd"] == 3.0 and d["cost_a10g_usd"] == 3.0
    u = store.get_design(db, "t-3")
    assert u["graph"] is None and u["verdict"] is None and u["error"].startswith("could not generate")
    c = store.get_design(db, "t-4")
    assert (c["parent"], c["reference"], c["task_set"]) == ("t-1", "resnet18", "repair")


def test_a_stored_id_adds_nothing(db, tmp_path, fake):
    write_jsonl(tmp_path / "a.jsonl", [record("x-1", ["Bad"]), record("x-2")])
    import_paths(db, [tmp_path / "a.jsonl"], verifier=fake)
    # same ids, different content: still nothing added, nothing changed
    write_jsonl(tmp_path / "b.jsonl", [record("x-1", ["Linear"]), record("x-3"), record("x-3", ["Bad"])])
    r = import_paths(db, [tmp_path / "b.jsonl"], verifier=fake)
    assert r.imported == ["x-3"] and sorted(r.skipped) == ["x-1", "x-3"]
    assert store.get_design(db, "x-1")["verdict"] == "block"
    assert store.get_design(db, "x-3")["verdict"] == "pass"  # first line with the id wins
    assert _count(db) == 3


def test_bad_lines_are_rejected_by_line_number_while_the_rest_import(db, tmp_path, fake):
    batch = write_jsonl(tmp_path / "b.jsonl", [
        record("ok-1"),
        "{not json",
        json.dumps({"author": "agent", "graph": graph()}),           # no id
        json.dumps(record("bad-author", author="robot")),
        json.dumps({"id": "nothing", "author": "agent"}),           # neither graph nor error
        json.dumps({"id": "bad-graph", "author": "agent", "graph": {"format": "archgraph/1", "nodes": []}}),
        "",                                                          # blank lines are fine
        json.dumps(["a", "list"]),
        record("ok-2"),
    ])
    r = import_paths(db, [batch], verifier=fake)
    assert r.imported == ["ok-1", "ok-2"] and r.exit_code == 1
    assert [x.line for x in r.rejected] == [2, 3, 4, 5, 6, 8]
    for x in r.rejected:
        line = str(x)
        assert line.startswith(f"{batch}:{x.line}: rejected: ") and "\n" not in line
    assert "missing field 'inputs'" in r.rejected[4].message


def test_batch_lines_must_name_their_author_unless_given(db, tmp_path, fake):
    rec = record("a-1")
    del rec["author"]
    write_jsonl(tmp_path / "b.jsonl", [rec])
    r = import_paths(db, [tmp_path / "b.jsonl"], verifier=fake)
    assert not r.imported and "author" in r.rejected[0].message
    r = import_paths(db, [tmp_path / "b.jsonl"], verifier=fake, defaults=Defaults(author="agent"))
    assert r.imported == ["a-1"] and store.get_design(db, "a-1")["author"] == "agent"


def test_design_files_and_folders(db, tmp_path, fake):
    folder = tmp_path / "designs"
    (folder / "sub").mkdir(parents=True)
    (folder / "one.json").write_text(json.dumps(graph(["Bad"], name="named-one")))
    nameless = graph()
    nameless["name"] = ""
    (folder / "sub" / "two.json").write_text(json.dumps(nameless))
    (folder / "broken.json").write_text("{oops")
    (folder / "notes.txt").write_text("ignored")
    write_jsonl(folder / "batch.jsonl", [record("from-batch")])
    r = import_paths(db, [folder], verifier=fake)
    assert sorted(r.imported) == ["from-batch", "named-one", "two"]
    assert len(r.rejected) == 1 and r.rejected[0].file.endswith("broken.json") and r.rejected[0].line is None
    one = store.get_design(db, "named-one")
    assert one["author"] == "human" and one["verdict"] == "block" and one["model"] is None
    r = import_paths(db, [tmp_path / "designs" / "one.json"], verifier=fake,
                     defaults=Defaults(author="reference"))
    assert r.skipped == ["named-one"]


def test_plain_file_flags(db, tmp_path, fake):
    p = tmp_path / "resnet-ish.json"
    p.write_text(json.dumps(graph(name="")))
    import_paths(db, [p], verifier=fake,
                 defaults=Defaults(author="reference", model=None, task_set="zoo", run="2026-01"))
    d = store.get_design(db, "resnet-ish")
    assert (d["author"], d["task_set"], d["run"]) == ("reference", "zoo", "2026-01")


@pytest.mark.parametrize("name,content,expect", [
    ("missing.json", None, "no such file or folder"),
    ("bad.json", "{not json", "malformed JSON"),
    ("notdesign.json", json.dumps({"format": "archgraph/1", "nodes": []}), "missing field"),
    ("latin1.jsonl", b"\xff\xfe{}\n", "not UTF-8"),
    ("design.yaml", "a: 1", "not something import reads"),
])
def test_unreadable_input_writes_nothing(db, tmp_path, fake, name, content, expect):
    good = write_jsonl(tmp_path / "good.jsonl", [record("g-1")])
    bad = tmp_path / name
    if isinstance(content, bytes):
        bad.write_bytes(content)
    elif content is not None:
        bad.write_text(content)
    with pytest.raises(ImportInputError) as e:
        import_paths(db, [good, bad], verifier=fake)
    msg = str(e.value)
    assert msg.startswith(str(bad)) and expect in msg and "\n" not in msg
    assert _count(db) == 0


def test_py_without_the_parser_or_entry_is_one_clear_line(db, tmp_path, fake):
    src = tmp_path / "model.py"
    src.write_text("import torch\n")
    with pytest.raises(ImportInputError) as e:
        import_paths(db, [src], verifier=fake)
    assert str(e.value).startswith(str(src)) and "\n" not in str(e.value)


def test_pool_of_two_gives_the_same_result(db, tmp_path, fake):
    import fake_verifier

    recs = [record(f"p-{i:04d}", ["Linear", "Bad"] if i % 3 == 0 else ["Linear"]) for i in range(450)]
    recs.insert(100, "{broken")
    write_jsonl(tmp_path / "big.jsonl", recs)
    r = import_paths(db, [tmp_path / "big.jsonl"], verifier=fake_verifier.verify, workers=2)
    assert len(r.imported) == 450 and [x.line for x in r.rejected] == [101]
    assert store.count_designs(db, {"verdict": "block"}) == 150


def test_real_verifier_on_the_reference_architectures(db):
    from pathlib import Path

    from archcurator.core.graph import Design
    from archcurator.core.verify import verify_graph

    files = sorted(Path(__file__).resolve().parents[2].glob("assets/architectures/*.json"))[:8]
    assert len(files) == 8
    r = import_paths(db, files, defaults=Defaults(author="reference"))
    assert not r.rejected and len(r.imported) == len(files)
    for f in files:
        design = Design.load(f)
        rep = verify_graph(design)
        d = store.get_design(db, design.name or f.stem)
        assert d["verdict"] == rep.verdict
        assert {x["key"] for x in d["findings"]} == {x.key for x in rep.findings}
        assert d["params"] == rep.cost["params"]


# ---- the command ------------------------------------------------------------------

@pytest.mark.slow
def test_cli_exit_codes_and_output(db, tmp_path):
    good = write_jsonl(tmp_path / "good.jsonl", [record("c-1", ["Bad"]), record("c-2", error="no")])
    p = cli("import", good, db=db)
    assert p.returncode == 0, p.stderr
    assert "imported 2 (1 ungenerated), skipped 0 (already stored), rejected 0" in p.stdout
    p = cli("import", good, db=db)
    assert p.returncode == 0 and "imported 0" in p.stdout and "skipped 2" in p.stdout
    mixed = write_jsonl(tmp_path / "mixed.jsonl", [record("c-3"), "nope"])
    p = cli("import", mixed, db=db)
    assert p.returncode == 1
    assert p.stderr.strip() == f"archcurator import: {mixed}:2: rejected: malformed JSON at column 1: Expecting value"
    p = cli("import", mixed, tmp_path / "absent.jsonl", db=db)
    assert p.returncode == 2
    assert p.stderr.strip() == f"archcurator import: {tmp_path / 'absent.jsonl'}: no such file or folder"
    p = cli("import", "--json", write_jsonl(tmp_path / "j.jsonl", [record("c-9")]), db=db)
    assert p.returncode == 0 and json.loads(p.stdout)["imported"] == ["c-9"]
    assert _count(db) == 4


def test_cli_author_flag_for_files(db, tmp_path):
    f = tmp_path / "mine.json"
    f.write_text(json.dumps(graph(name="mine")))
    p = cli("import", "--author", "reference", f, db=db)
    assert p.returncode == 0, p.stderr
    assert store.get_design(db, "mine")["author"] == "reference"


@pytest.mark.parametrize("text", [
    '{"id": "a", "graph": {"x": [1, 2, {"y": "é\\u00e9"}]}, "z": null}',
    '  {"graph":{"a":1},"graph":{"b":2}}  ',
    '{}',
    '{"id": "a"}',
])
def test_loads_with_span_matches_json_loads(text):
    from archcurator.core.imports import loads_with_span

    obj, span = loads_with_span(text)
    assert obj == json.loads(text)
    if span:
        assert json.loads(text[span[0]:span[1]]) == json.loads(text)["graph"]


@pytest.mark.parametrize("text", ['{"id": "a",}', '{"id" "a"}', '[1]', '{"a": 1} x', '{"a": tru}'])
def test_loads_with_span_errors_are_json_loads_errors(text):
    from archcurator.core.imports import loads_with_span

    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        with pytest.raises(json.JSONDecodeError) as mine:
            loads_with_span(text)
        assert str(mine.value) == str(exc)
    else:
        assert loads_with_span(text)[0] == json.loads(text)


def test_graph_stored_minified_with_its_hash(db, tmp_path, fake):
    import hashlib

    line = '{"id": "w-1", "author": "agent",   "graph": ' + json.dumps(graph(["Bad"]), indent=3) \
        .replace("\n", " ") + '}'
    write_jsonl(tmp_path / "w.jsonl", [line])
    import_paths(db, [tmp_path / "w.jsonl"], verifier=fake)
    with store.connect(db) as con:
        text, h = con.execute("SELECT graph, content_hash FROM designs").fetchone()
    assert text == json.dumps(graph(["Bad"]), separators=(",", ":"))
    assert h == hashlib.sha256(text.encode()).hexdigest()


PY_MODEL = '''
import torch.nn as nn


class Tiny(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(32, classes)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))
'''


@pytest.mark.slow
def test_py_sources_through_the_parser(db, tmp_path):
    src = tmp_path / "tiny.py"
    src.write_text(PY_MODEL)
    p = cli("import", src, "--entry", "Tiny", "--args", '{"classes": 5}', "--input", "2,16", db=db, fake=False)
    assert p.returncode == 0, p.stderr
    rows = store.list_designs(db)
    assert len(rows) == 1 and rows[0]["author"] == "human"
    d = store.get_design(db, rows[0]["id"])
    assert d["params"] == 16 * 32 + 32 + 32 * 5 + 5
    # without --entry: every module whose constructor needs no argument, with symbolic inputs
    p = cli("import", src, db=db, fake=False)
    assert p.returncode == 0, p.stderr
    assert store.get_design(db, "tiny.Tiny")["author"] == "human"
    p = cli("import", src, "--entry", "Nope", "--input", "2,16", db=db, fake=False)
    assert p.returncode == 2 and p.stderr.startswith(f"archcurator import: {src}: ")
    assert len(p.stderr.strip().splitlines()) == 1


def test_canonical_hash_is_the_stored_content_hash(db, fake):
    from archcurator.store.designs import canonical_hash

    g = graph(["Bad"], name="h")
    g["train"] = {"budget_usd": 1e-05, "lr": 0.1, "big": 1e20, "note": "é/\"x\""}
    store.import_records(db, [{"id": "h", "author": "agent", "graph": g}], verifier=fake)
    assert store.get_design(db, "h")["content_hash"] == canonical_hash(g)
    assert store.get_design(db, "h")["graph"] == g

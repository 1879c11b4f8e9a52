"""ArchitectureIQ bundles are read inside themselves only: hostile paths, links, FIFOs,
devices, oversize and malformed files are one line each, and the rest still imports."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import aiq_bundle
import pytest

from archcurator.core.aiq import bundle as bundle_mod
from archcurator.core.aiq import safefiles

DS = "datasets/univariate_regression/sym_suite01"
CSET = f"{DS}/candidates/set_2048_fix_var_fix_suite"


@pytest.fixture
def bundle(tmp_path) -> Path:
    return aiq_bundle.write(tmp_path / "bundle", tmp_path / "generated_code_ran")


def _question(root: Path) -> Path:
    return root / DS / "questions" / "run_1q_3c_suite" / "q_suite01" / "question.json"


def _edit_question(root: Path, fn) -> None:
    f = _question(root)
    q = json.loads(f.read_text())
    fn(q)
    f.write_text(json.dumps(q))


def _second_question(root: Path) -> Path:
    """A copy of the question under another id: the one that must still import."""
    src = _question(root).parent
    dst = src.parent / "q_suite02"
    shutil.copytree(src, dst)
    q = json.loads((dst / "question.json").read_text())
    q["question_id"] = "q_suite02"
    (dst / "question.json").write_text(json.dumps(q))
    return dst / "question.json"


def _hide_candidate(root: Path, cid: str, to: Path) -> None:
    """Move candidate CID out of the set so only its candidate_path can find it."""
    shutil.move(str(root / CSET / cid), str(to))


def _read(root: Path) -> bundle_mod.Bundle:
    """read_bundle in a thread with a deadline: a FIFO must never block it."""
    out: dict = {}

    def go():
        try:
            out["b"] = bundle_mod.read_bundle(root)
        except Exception as e:  # noqa: BLE001 - the test reports it
            out["e"] = e

    t = threading.Thread(target=go, daemon=True)
    t.start()
    t.join(60)
    assert not t.is_alive(), "read_bundle hung"
    if "e" in out:
        raise out["e"]
    return out["b"]


def test_candidate_path_climbing_out_or_absolute_is_refused(bundle, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    _second_question(bundle)
    _hide_candidate(bundle, "c_s01aaa", outside / "c_s01aaa")
    for bad in ("../../../outside/c_s01aaa", str(outside / "c_s01aaa")):
        def point(q, bad=bad):
            q["choices"][0]["candidate_path"] = bad
            q["choices"][0]["candidate_id"] = "c_elsewhere"
        _edit_question(bundle, point)
        b = _read(bundle)
        bad_rows = [(w, m) for w, m in b.rejected if "q_suite01" in w]
        assert len(bad_rows) == 1, b.rejected
        msg = bad_rows[0][1]
        assert ("absolute" in msg or ".." in msg or "outside" in msg), msg
        assert "\n" not in msg


def test_symlinked_candidate_folder_pointing_outside_is_refused(bundle, tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    _hide_candidate(bundle, "c_s01aaa", outside / "c_s01aaa")
    (bundle / CSET / "link").symlink_to(outside / "c_s01aaa", target_is_directory=True)

    def point(q):
        q["choices"][0]["candidate_path"] = f"{CSET}/link"
        q["choices"][0]["candidate_id"] = "c_elsewhere"
    _edit_question(bundle, point)
    b = _read(bundle)
    assert not b.questions and len(b.rejected) == 1
    assert "outside the bundle" in b.rejected[0][1] or "leaves the bundle" in b.rejected[0][1]


@pytest.mark.parametrize("what", ["dev_zero_link", "fifo", "oversize", "pickle", "shape"])
def test_hostile_tensor_files_are_refused_without_reading(bundle, what):
    import torch

    f = bundle / DS / "train.pt"
    f.unlink()
    if what == "dev_zero_link":
        f.symlink_to("/dev/zero")
    elif what == "fifo":
        os.mkfifo(f)
    elif what == "oversize":
        with open(f, "wb") as fh:  # sparse: no disk is used
            fh.truncate(safefiles.MAX_TENSOR_BYTES + 1)
    elif what == "pickle":
        torch.save({"x": os.system, "y": torch.zeros(3)}, f)  # a reference weights-only refuses
    elif what == "shape":
        torch.save({"x": torch.zeros(100, 3), "y": torch.zeros(100, 1)}, f)
    b = _read(bundle)
    assert not b.questions and len(b.rejected) == 1
    msg = b.rejected[0][1]
    expect = {"dev_zero_link": "symbolic link", "fifo": "FIFO", "oversize": "limit",
              "pickle": "weights-only", "shape": "declares"}[what]
    assert expect in msg and "\n" not in msg, msg


def test_a_fifo_or_device_named_like_a_question_never_blocks_is_bundle(tmp_path):
    fifo = tmp_path / "q.jsonl"
    os.mkfifo(fifo)
    qfifo = tmp_path / "d" / "question.json"
    qfifo.parent.mkdir()
    os.mkfifo(qfifo)
    link = tmp_path / "zero.jsonl"
    link.symlink_to("/dev/zero")
    broken = tmp_path / "broken.jsonl"
    broken.symlink_to(tmp_path / "nowhere")
    for p in (fifo, qfifo, link, broken, tmp_path / "missing", tmp_path / "d", "\x00bad"):
        result = {}
        t = threading.Thread(target=lambda p=p, result=result: result.setdefault("v", bundle_mod.is_bundle(p)),
                             daemon=True)
        t.start()
        t.join(20)
        assert not t.is_alive(), f"is_bundle hung on {p}"
        assert result["v"] is False, p
    for p in (fifo, link):
        with pytest.raises(bundle_mod.BundleError):
            bundle_mod.read_bundle(p)


def test_question_file_dataset_path_stays_beside_the_file(tmp_path, shipped):
    q = dict(next(q for q in shipped if q["family"] == "univariate_regression"))
    lines = []
    for i, dp in enumerate(["/etc", "../../elsewhere", None]):
        one = dict(q, question_id=f"q_conf{i}")
        if dp is not None:
            one["dataset_path"] = dp
        lines.append(json.dumps(one))
    f = tmp_path / "qs.jsonl"
    f.write_text("\n".join(lines) + "\n")
    b = bundle_mod.read_bundle(f)
    assert [x["question_id"] for x in b.questions] == ["q_conf2"]
    assert len(b.rejected) == 2
    assert "absolute" in b.rejected[0][1] and ".." in b.rejected[1][1]


def test_malformed_bundles_are_one_line_each_and_the_rest_import(tmp_path, bundle):
    """Twelve kinds of broken question / spec / summary, each beside a good question."""
    import torch

    good = _second_question(bundle)
    cases = {
        "not json": lambda f: f.write_text("{nope"),
        "deep": lambda f: f.write_text("[" * 5000 + "]" * 5000),
        "big int": lambda f: f.write_text('{"choices": [], "x": ' + "9" * 6000 + "}"),
        "list": lambda f: f.write_text("[1, 2]"),
        "choices not list": lambda f: f.write_text('{"choices": 3}'),
        "choice not object": lambda f: f.write_text('{"choices": [1, 2, 3], "correct_letter": "A"}'),
        "no winner": lambda f: f.write_text(json.dumps({**json.loads(good.read_text()), "correct_letter": "Z",
                                                         "question_id": "qz"})),
        "path not string": lambda f: f.write_text(json.dumps({"choices": [{"letter": "A", "candidate_id": "c_x",
                                                                          "candidate_path": 7}]})),
        "nul path": lambda f: f.write_text(json.dumps({"choices": [{"letter": "A", "candidate_id": "c_x",
                                                                   "candidate_path": "a\u0000b"}]})),
        "binary": lambda f: f.write_bytes(b"\xff\xfe\x00\x01" * 10),
        "empty": lambda f: f.write_text(""),
        "fifo": lambda f: (f.unlink(), os.mkfifo(f)),
    }
    base = _question(bundle).parent.parent
    for i, make in enumerate(cases.values()):
        d = base / f"q_bad{i:02d}"
        d.mkdir()
        f = d / "question.json"
        f.write_text("{}")
        make(f)
    b = _read(bundle)
    ids = sorted(q["question_id"] for q in b.questions)
    assert ids == ["q_suite01", "q_suite02"]
    bad = [w for w, _ in b.rejected]
    # the FIFO is not a regular file: it is skipped, not read; every other case is one line
    assert len(bad) == len(cases) - 1, b.rejected
    for where, msg in b.rejected:
        assert where.endswith("question.json") and msg and "\n" not in msg and len(msg) < 400
    assert torch is not None


def test_broken_dataset_spec_and_summary(bundle):
    _second_question(bundle)
    (bundle / CSET / "c_s01aaa" / "results" / "summary.json").write_text('{"seed_results": "x", "mean_test_mse": [1]}')
    b = _read(bundle)
    assert len(b.questions) == 2  # an unreadable summary only loses the recorded outcome
    assert "result" in b.questions[0]["choices"][1]
    (bundle / DS / "dataset_spec.json").write_text("[]")
    b = _read(bundle)
    assert not b.questions and len(b.rejected) == 2 and all("not a JSON object" in m for _, m in b.rejected)


def test_device_is_recorded_as_the_bundle_says(bundle):
    def cuda(q):
        q["evaluation"]["device"] = "cuda"
    _edit_question(bundle, cuda)
    q = _read(bundle).questions[0]
    assert q["evaluation"]["device"] == "cuda"

    def none(q):
        del q["evaluation"]["device"]
    _edit_question(bundle, none)
    q = _read(bundle).questions[0]
    assert q["evaluation"]["device"] == "cpu"  # the candidates' execution.device


@pytest.mark.slow
def test_import_cli_reports_each_bad_bundle_and_imports_the_rest(tmp_path, bundle):
    fifo_file = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo_file)
    bad_dir = tmp_path / "bad"
    (bad_dir / "q").mkdir(parents=True)
    (bad_dir / "q" / "question.json").write_text("{broken")
    db = tmp_path / "store.duckdb"
    env = {**os.environ, "RAY_AUTH_MODE": "disabled"}
    r = subprocess.run([sys.executable, "-m", "archcurator", "import", str(bad_dir), str(bundle), "--db", str(db)],
                       capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 1, r.stderr
    assert "questions imported 1" in r.stdout
    err = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(err) == 1 and "question.json" in err[0] and "rejected" in err[0]
    assert not (tmp_path / "generated_code_ran").exists()

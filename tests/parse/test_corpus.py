"""The parser against the real-world corpus (bench/corpus): public model files kept as they
are, with the truth recorded from real torch runs (bench/corpus_make.py).  Nothing of
the corpus is imported here: the parser reads the files, the verifier checks the designs,
and both are compared with the recorded parameter counts and output shapes."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

import parse_real  # noqa: E402

MANIFEST = parse_real.load_manifest()
ENTRIES = [e for e in MANIFEST["entries"] if e.get("truth") and "error" not in e["truth"]]


def _fetched(pin):
    """The unpacked wheel of a packaged entry (timm, transformers), or None where it cannot be fetched."""
    try:
        return parse_real.package_dir(pin)
    except parse_real.PackageUnavailable:
        return None


@pytest.mark.slow
def test_manifest_records_source_commit_and_licence():
    assert len(ENTRIES) >= 60
    for repo, src in MANIFEST["sources"].items():
        assert src["licence"] in ("MIT", "MIT-0", "BSD-3-Clause", "Apache-2.0"), repo
        if src.get("package"):  # fetched by pinned version at bench time, never stored here
            name, _, version = src["package"].partition("==")
            assert version and src["version"] == version, repo
            root = _fetched(src["package"])
            if root is not None:
                assert (Path(root) / src["licence_file"]).is_file(), repo
            continue
        assert len(src["commit"]) == 40, repo
        assert src["licence_file"] and (ROOT / "bench" / "corpus" / repo.replace("/", "__") / src["licence_file"]
                                        ).is_file(), repo
    for e in ENTRIES:
        if e.get("package"):
            assert e["package"] == MANIFEST["sources"][e["repo"]]["package"], e["id"]
            continue
        assert (ROOT / "bench" / "corpus" / e["path"]).is_file(), e["id"]
        assert e["commit"] == MANIFEST["sources"][e["repo"]]["commit"]


@pytest.fixture(scope="module")
def results():
    return {e["id"]: parse_real.measure(e) for e in ENTRIES
            if not e.get("package") or all(_fetched(p) for p in [e["package"], *e.get("package_with", [])])}


@pytest.mark.slow
def test_no_entry_crashes_and_refusals_are_one_line(results):
    for r in results.values():
        cause = r.get("cause", "")
        assert "\n" not in cause
        assert not cause.startswith("design not loadable"), (r["id"], cause)
        if cause.startswith("refused"):
            assert ".py" in cause, (r["id"], cause)  # the line names the file


@pytest.mark.slow
def test_exact_rate_on_the_corpus(results):
    exact = [i for i, r in results.items() if "cause" not in r]
    missed = {i: r["cause"][:160] for i, r in results.items() if "cause" in r}
    assert len(exact) >= 0.8 * len(results), json.dumps(missed, indent=1)


@pytest.mark.slow
def test_exact_entries_agree_with_real_torch(results):
    """An exact entry's parameter count and output shapes are those real torch gave."""
    for e in ENTRIES:
        r = results.get(e["id"])
        if r is not None and "cause" not in r:
            assert r["params"] == e["truth"]["params"]
            assert r["outputs"] == e["truth"]["outputs"]

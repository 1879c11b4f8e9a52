"""Knowledge-base tests: real DuckDB store files in tmp_path, the shipped question set."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

QUESTIONS = ROOT / "assets" / "aiq" / "questions.jsonl"


@pytest.fixture(scope="session")
def shipped() -> list[dict]:
    return [json.loads(line) for line in QUESTIONS.read_text(encoding="utf-8").splitlines() if line.strip()]


def small_set(shipped: list[dict], n_pairs: int = 6, n_single: int = 40) -> list[dict]:
    """A deterministic slice of the shipped questions: some pairs (both members) and singles, both splits."""
    by_id = {q["question_id"]: q for q in shipped}
    out, seen = [], set()
    pairs = sorted({q["pair"]["pair_id"] for q in shipped if q.get("pair")})
    for pid in pairs[:n_pairs]:
        for q in shipped:
            if q.get("pair") and q["pair"]["pair_id"] == pid and q["question_id"] not in seen:
                out.append(q)
                seen.add(q["question_id"])
    for q in sorted((q for q in shipped if not q.get("pair")), key=lambda q: q["question_id"])[:n_single]:
        out.append(q)
        seen.add(q["question_id"])
    assert all(by_id[q["question_id"]] is q for q in out)
    return out


@pytest.fixture(scope="session")
def _small_template(tmp_path_factory, shipped) -> Path:
    from archcurator.store import kb

    path = tmp_path_factory.mktemp("kb") / "small.duckdb"
    kb.import_questions(path, small_set(shipped))
    return path


@pytest.fixture
def small_db(_small_template, tmp_path) -> Path:
    """A store holding a slice of the shipped questions and no propositions."""
    p = tmp_path / "store.duckdb"
    shutil.copy(_small_template, p)
    return p


@pytest.fixture(scope="session")
def _seeded_template(tmp_path_factory) -> Path:
    from archcurator.store import kb

    path = tmp_path_factory.mktemp("kbseed") / "seeded.duckdb"
    kb.seed_kb(path)
    return path


@pytest.fixture
def seeded_db(_seeded_template, tmp_path) -> Path:
    """The demo knowledge base (seed_kb on the shipped questions), a fresh copy per test."""
    p = tmp_path / "seeded.duckdb"
    shutil.copy(_seeded_template, p)
    return p

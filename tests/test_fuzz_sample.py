"""A fixed-seed sample of the adversary (bench/fuzz_designs.py): the designs it writes, mutated zoo
designs, random ones, huge and damaged ones, as design files and as batch lines, each answered with
a verdict or one line, never a traceback, a hang or a blow-up.

The full run (>= 5,000 designs, CPU time and memory per design against the budgets) is
`python bench/fuzz_designs.py`; this sample keeps the fuzzer and the project honest in every run.
"""

from __future__ import annotations

import importlib.util
import sys
from collections import Counter
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench" / "fuzz_designs.py"
SEED = 12
N = 150


@pytest.fixture(scope="module")
def fuzz():
    spec = importlib.util.spec_from_file_location("fuzz_designs", BENCH)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["fuzz_designs"] = mod  # its dataclasses look their module up there
    spec.loader.exec_module(mod)
    return mod


def test_the_sample_is_the_same_for_the_same_seed(fuzz):
    a = [(c.kind, c.text) for c in fuzz.generate(40, SEED)]
    b = [(c.kind, c.text) for c in fuzz.generate(40, SEED)]
    assert a == b
    assert a != [(c.kind, c.text) for c in fuzz.generate(40, SEED + 1)]


@pytest.mark.slow
def test_a_fixed_seed_sample_gives_no_traceback_hang_or_blow_up(fuzz):
    outcomes = [fuzz.run_case(case, hang_s=30.0) for case in fuzz.generate(N, SEED)]
    status = Counter(o.status for o in outcomes)
    bad = [(o.index, o.kind, o.status, o.site, o.error) for o in outcomes
           if o.status in ("traceback", "hang", "memory")]
    assert not bad, bad
    # the sample reaches both ends: designs answered and designs refused at the door
    assert status["answered"] > N // 3 and status["refused"] > N // 10, status
    assert {o.kind.split(":")[0] for o in outcomes} == {"zoo", "random", "huge", "damaged"}
    assert any(o.record for o in outcomes) and not all(o.record for o in outcomes)
    heavy = [(o.index, o.kind, round(o.peak_mb)) for o in outcomes if o.peak_mb is not None and o.peak_mb > 500]
    assert not heavy, heavy

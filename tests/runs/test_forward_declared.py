"""The forward check runs a design where the verifier judges it: at its declared train.batch_size and
seq_len, in its declared train.mode (training by default). Designs from an independent tester
(tests/fixtures/blind13) that crash only there, or run only there."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from archcurator.core.runs import RunSpec

BLIND = Path(__file__).parent.parent / "fixtures" / "blind13"


def _forward(runner, name: str, **kw):
    spec = RunSpec(kind="forward", design=json.loads((BLIND / f"{name}.json").read_text()), device="cpu", **kw)
    h = runner.submit(spec)
    res = h.wait(180)
    assert res is not None, name
    return res


@pytest.mark.parametrize("name, message", [
    ("mlp__bug-bn-batch1-train", "more than 1 value"),       # batch_size 1, training mode
    ("norm__bug-dropout-on-ids-train", "can't be cast"),     # dropout on int64 ids, training mode only
])
@pytest.mark.slow
def test_a_design_that_crashes_at_its_declared_settings_fails_the_check(runner, name, message):
    res = _forward(runner, name)
    assert res.status == "failed" and message in res.message, res


@pytest.mark.slow
def test_a_design_that_runs_at_its_declared_batch_passes_and_says_where_it_ran(runner):
    res = _forward(runner, "audio__ok-unbatched-batch1")  # Conv1d over [B, 16000]: runs at B = 1 only
    assert res.status == "ok", res
    assert res.metrics["batch_size"] == 1 and res.metrics["mode"] == "eval"
    # a batch the caller chooses wins over the declared one
    res = _forward(runner, "audio__ok-unbatched-batch1", batch_size=2)
    assert res.status == "failed" and res.exception == "RuntimeError", res

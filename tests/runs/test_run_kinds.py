"""Run kinds come from a registry: core.runs knows forward and train, core.aiq registers aiq, and a child
learns of a registered kind from its launcher (a real candidate executed in a real child)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from archcurator.core.aiq.datasets import sample_dataset_spec
from archcurator.core.aiq.execute import runs_runner
from archcurator.core.aiq.spec import make_candidate


def test_core_runs_alone_knows_only_its_own_kinds():
    code = (
        "from archcurator.core.runs import RunSpec, SpecError\n"
        "try:\n"
        "    RunSpec(kind='aiq', payload={})\n"
        "except SpecError as exc:\n"
        "    print(exc)\n"
        "import archcurator.core.aiq.run_kind\n"
        "print(RunSpec(kind='aiq', payload={}).kind)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines == ["run kind must be one of forward, train, got 'aiq'", "aiq"]


CORE = Path(__file__).resolve().parents[2] / "core"


def _payload(seeds: list[int]) -> dict:
    ds = sample_dataset_spec("univariate_regression", 11)
    model = {"type": "mlp", "depth": 1, "width": 8, "residual": False, "layer_norm": [False],
             "activations": ["relu"], "input_dim": 1}
    c = make_candidate(dataset_id=ds["dataset_id"], family=ds["family"], model=model,
                       optimizer={"type": "SGD", "lr": 1e-2, "momentum": 0.9, "weight_decay": 0.0},
                       loss={"loss_id": "mse"}, batch_size=32, total_samples_seen=256)
    return {"candidate": c, "dataset": ds, "seeds": seeds}


@pytest.mark.slow
def test_a_registered_kind_runs_in_the_child():
    seen = []
    call = runs_runner(device="cpu", time_limit_s=240, on_result=lambda spec, res: seen.append((spec, res)))
    metrics = call(_payload([0, 1]))
    (spec, res), = seen
    assert spec.kind == "aiq" and res.status == "ok" and res.kind == "aiq", res
    assert len(metrics["finals"]) == 2 and metrics["failed_seeds"] == 0


@pytest.mark.slow
def test_a_child_of_core_shipped_alone_finds_the_kind_its_launcher_names(tmp_path):
    """The Ray backend ships `core` by itself (importable as `core`, not `archcurator.core`): the kind's
    module is named relative to core, so the child resolves it there too; unnamed, the kind is unknown."""
    import archcurator.core.aiq.run_kind  # noqa: F401
    from archcurator.core.runs import RunSpec, registry

    shutil.copytree(CORE, tmp_path / "core", ignore=shutil.ignore_patterns("__pycache__"))
    spec = RunSpec(kind="aiq", payload=_payload([0]), device="cpu").to_json()

    def result(env: dict) -> dict:
        out = subprocess.run([sys.executable, "-m", "core.runs.child", "-"], input=spec, capture_output=True,
                             text=True, cwd=tmp_path, env={**env, "PYTHONPATH": ""}, timeout=240)
        line = [x for x in out.stdout.splitlines() if '"type":"result"' in x][-1]
        return json.loads(line.split(" ", 1)[1])["result"]

    base = {k: v for k, v in os.environ.items() if k != registry.KIND_MODULE_ENV}
    named = result({**base, **registry.env_for("aiq")})
    assert named["status"] == "ok" and named["metrics"]["failed_seeds"] == 0, named
    unnamed = result(base)
    assert unnamed["status"] == "failed" and unnamed["exception"] == "SpecError"
    assert "got 'aiq'" in unnamed["message"]

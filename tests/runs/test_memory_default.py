"""Every run has a memory limit: the spec's, else a share of the memory free
where it runs. A design that asks for more than the default is `killed`
with that reason, from the runner and from the command line."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from archcurator.core.runs import RunSpec
from archcurator.core.runs import memory as M

GIB = 1 << 30


def _meminfo_available() -> int:
    with open("/proc/meminfo") as fh:
        for line in fh:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no MemAvailable in /proc/meminfo")


def _linear_design(weight_bytes: int) -> dict:
    """One Linear whose float32 weight [out, 8] takes at least `weight_bytes`."""
    out_features = -(-weight_bytes // (8 * 4))
    return {
        "format": "archgraph/1", "name": "beyond-the-default",
        "inputs": [{"id": "x", "shape": ["B", 8], "dtype": "float32"}],
        "nodes": [{"id": "fc", "op": "Linear", "args": {"in_features": 8, "out_features": out_features},
                   "in": ["x"]}],
        "outputs": ["fc"],
    }


def _beyond_the_default() -> tuple[dict, M.MemoryLimit]:
    """A design asking for the default limit plus 6 GiB: past the child's own
    guard and past the launcher's backstop (default + 4 GiB of address space),
    so no single layer's fault would let it allocate."""
    default = M.default_host_limit()
    return _linear_design(default.mb * M.MB + 6 * GIB), default


def test_the_default_is_half_of_what_is_free_on_this_machine():
    free = _meminfo_available()
    limit = M.resolve(None, "host")
    assert limit.default and limit.where == "host"
    # free memory moves between the two readings; 10% of it is plenty
    assert abs(limit.mb * M.MB - M.HOST_SHARE * free) < 0.1 * free, (limit, free)
    assert limit.rule.startswith("50% of the ") and limit.rule.endswith(" MB free on this machine")
    assert "(the default: 50% of the" in limit.phrase()


def test_a_limit_in_the_spec_is_kept_as_asked():
    limit = M.resolve(300, "host")
    assert (limit.mb, limit.default) == (300, False)
    assert limit.phrase() == "memory limit of 300 MB"
    assert limit.to_answer()["set_by"] == "spec"


def test_the_gpu_default_is_a_share_of_the_gpus_free_memory():
    free = 139 * GIB
    limit = M.resolve(None, "gpu", free, "NVIDIA H200")
    assert limit.where == "gpu" and limit.default
    assert limit.mb == int(free * M.GPU_SHARE) // M.MB
    assert limit.phrase().startswith("GPU memory limit of ")
    assert "90% of the 142336 MB free on NVIDIA H200" in limit.phrase()
    with pytest.raises(ValueError):
        M.resolve(None, "gpu")  # a GPU's default cannot be guessed without its free memory
    assert M.resolve(None, "host", free_bytes=0).mb == M.FLOOR_MB  # a floor, never a zero limit


@pytest.mark.slow
def test_a_run_without_a_limit_runs_under_the_default_and_says_so(runner, design):
    res = runner.submit(RunSpec(kind="forward", design=design("mlp"))).wait(180)
    assert res.status == "ok", res
    answer = res.to_answer()
    assert answer["memory_limit"]["set_by"] == "default" and answer["memory_limit"]["where"] == "host"
    free = _meminfo_available()
    assert abs(answer["memory_limit"]["mb"] * M.MB - M.HOST_SHARE * free) < 0.1 * free


@pytest.mark.slow
def test_a_design_beyond_the_default_is_killed_with_that_reason(runner):
    graph, default = _beyond_the_default()
    res = runner.submit(RunSpec(kind="forward", design=graph)).wait(180)
    assert res.status == "killed", res
    assert "memory limit of " in res.message and "(the default: 50% of the " in res.message
    assert "exceeded" in res.message
    assert res.memory_limit["set_by"] == "default"
    # measured in the child a moment later than here: the same within what moved meanwhile
    assert abs(res.memory_limit["mb"] - default.mb) < 0.1 * default.mb + 512


@pytest.mark.slow
def test_the_command_line_without_memory_limit_kills_it_too(tmp_path):
    graph, _ = _beyond_the_default()
    path = tmp_path / "beyond.json"
    path.write_text(json.dumps(graph))
    out = subprocess.run([sys.executable, "-m", "archcurator", "run", str(path), "--check", "forward",
                          "--device", "cpu", "--no-record", "--json"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    answer = json.loads(out.stdout)
    assert answer["status"] == "killed", answer
    assert "(the default: 50% of the " in answer["message"]
    assert answer["memory_limit"]["set_by"] == "default"


def test_the_help_names_the_default():
    out = subprocess.run([sys.executable, "-m", "archcurator", "run", "--help"],
                         capture_output=True, text=True, timeout=120)
    text = " ".join(out.stdout.split())
    assert "default: half the machine's free memory on the CPU" in text
    assert "90% of the GPU's free memory" in text

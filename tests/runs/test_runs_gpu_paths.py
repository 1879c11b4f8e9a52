"""The CUDA-specific parts of runs, exercised on a machine without a GPU
through their real code paths: the per-GPU queue (real children, each seeing
only its GPU through CUDA_VISIBLE_DEVICES), the GPU memory guard's
arithmetic and its reasons, device placement of inputs, created tensors and
tied weights (on torch's meta device, which no CPU tensor may leak into),
and the ArchitectureIQ executor's CUDA determinism switches.

`bench/gpu_check.sh` runs the same paths on a real GPU."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import archcurator.core.aiq.run_kind  # noqa: F401 - registers the aiq run kind these tests launch
from archcurator.core.runs import MetricEvent, ResultEvent, RunSpec
from archcurator.core.runs import memory as M
from archcurator.core.runs.local import LocalRunner, detect_gpus

ROOT = Path(__file__).resolve().parents[2]
FOREVER = 10**8
GIB = 1 << 30


def _environ(pid: int) -> dict:
    with open(f"/proc/{pid}/environ", "rb") as fh:
        items = fh.read().split(b"\0")
    return dict(i.decode("utf-8", "replace").split("=", 1) for i in items if b"=" in i)


def _wait_training(handle, timeout=120.0) -> None:
    for ev in handle.events(timeout=timeout):
        if isinstance(ev, MetricEvent):
            return
        if isinstance(ev, ResultEvent):
            pytest.fail(f"run ended before training started: {ev.result.to_dict()}")
    pytest.fail("no metric event in time")


# ---- the queue: one run per GPU ------------------------------------------------------------


@pytest.mark.parametrize("visible, ids", [
    ("0,1", ["0", "1"]), ("3", ["3"]), ("", []), ("-1", []), (" 2 , 5 ", ["2", "5"]),
    ("GPU-6b1f3c2e-0000-4a5b-9c8d-0123456789ab", ["GPU-6b1f3c2e-0000-4a5b-9c8d-0123456789ab"]),
])
def test_the_gpus_offered_follow_cuda_visible_devices(monkeypatch, visible, ids):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", visible)
    assert detect_gpus() == ids


@pytest.mark.slow
def test_one_run_per_gpu_each_child_sees_only_its_gpu(design):
    """Two GPUs: two GPU runs at once, each child with its own
    CUDA_VISIBLE_DEVICES; the third waits for a GPU and takes the one freed;
    a CPU run meanwhile takes the CPU slot and sees no GPU. (Without CUDA
    here each child falls back to the CPU and says so.)"""
    r = LocalRunner(gpu_ids=["0", "1"], cpu_slots=1)
    try:
        first = r.submit(RunSpec(kind="train", design=design("mlp"), steps=FOREVER, device="cuda"))
        second = r.submit(RunSpec(kind="train", design=design("mlp"), steps=FOREVER, device="cuda"))
        third = r.submit(RunSpec(kind="forward", design=design("mlp"), device="cuda"))
        on_cpu = r.submit(RunSpec(kind="forward", design=design("mlp"), device="cpu"))
        _wait_training(first)
        _wait_training(second)
        assert {first.slot, second.slot} == {"0", "1"}
        assert _environ(first.pid)["CUDA_VISIBLE_DEVICES"] == first.slot
        assert _environ(second.pid)["CUDA_VISIBLE_DEVICES"] == second.slot
        res_cpu = on_cpu.wait(180)  # not behind the GPU queue
        assert res_cpu.status == "ok" and on_cpu.slot == "cpu", res_cpu
        assert third.status() == "queued" and third.pid is None
        freed = first.slot
        first.cancel()
        assert first.wait(10).status == "cancelled"
        res3 = third.wait(180)
        assert res3.status == "ok", res3
        assert third.slot == freed and third.started_at >= first.ended_at
        assert "CUDA was asked for but is not available" in res3.log_tail
        assert second.status() == "running"  # the other GPU's run went on all along
    finally:
        r.cancel_all()
        for h in r.handles():
            h.wait(10)


@pytest.mark.slow
def test_a_cpu_run_on_a_gpu_machine_cannot_reach_the_gpu(design):
    r = LocalRunner(gpu_ids=["0"], cpu_slots=1)
    try:
        h = r.submit(RunSpec(kind="train", design=design("mlp"), steps=FOREVER, device="cpu"))
        _wait_training(h)
        assert h.slot == "cpu" and _environ(h.pid)["CUDA_VISIBLE_DEVICES"] == ""
    finally:
        r.cancel_all()
        for h in r.handles():
            h.wait(10)


# ---- the GPU memory guard ---------------------------------------------------------------------


def test_the_allocator_cap_counts_what_it_already_holds():
    total = 80 * GIB
    # 2 GiB on top of the 64 MiB the warm-up's cuBLAS workspace holds
    assert M.cuda_fraction(2 * GIB, total, 64 << 20) == pytest.approx((2 * GIB + (64 << 20)) / total)
    assert M.cuda_fraction(2 * GIB, total) == pytest.approx(2 / 80)
    assert M.cuda_fraction(200 * GIB, total) == 1.0  # a limit past the device: the device's own OOM
    assert isinstance(M.cuda_fraction(1, total), float)  # set_per_process_memory_fraction wants a float
    with pytest.raises(ValueError):
        M.cuda_fraction(GIB, 0)


def test_the_cpu_guard_and_watchdog_arithmetic():
    assert M.address_space_limit(700 * M.MB, 256 * M.MB, None) == 956 * M.MB
    assert M.address_space_limit(700 * M.MB, 256 * M.MB, 900 * M.MB) == 900 * M.MB  # never above the hard limit
    assert M.rss_ceiling(150 * M.MB, 4 * GIB) == 150 * M.MB + 4 * GIB
    assert M.host_backstop_bytes(256, 4096) == (256 + 4096) * M.MB


@pytest.mark.slow
def test_running_out_names_the_side_that_ran_out():
    import torch

    from archcurator.core.runs.child import classify

    gpu = M.resolve(None, "gpu", 100 * GIB, "NVIDIA H200")
    host = M.resolve(None, "host", 16 * GIB)
    try:
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 256.00 GiB. GPU 0 has a total "
                                     "capacity of 139.72 GiB")
    except torch.OutOfMemoryError as exc:
        status, name, msg = classify(exc, gpu, host)
    assert (status, name) == ("killed", "OutOfMemoryError")
    assert msg.startswith("GPU memory limit of 92160 MB (the default: 90% of the 102400 MB free on NVIDIA H200)")
    status, name, msg = classify(MemoryError(), gpu, host)
    assert (status, name) == ("killed", "MemoryError")
    assert msg.startswith("memory limit of 8192 MB (the default: 50% of the 16384 MB free on this machine)")
    assert classify(RuntimeError("mat1 and mat2 shapes cannot be multiplied"), gpu, host)[0] == "failed"


# ---- device placement -----------------------------------------------------------------------


def _zoo(name: str) -> dict:
    return json.loads((ROOT / "assets" / "architectures" / f"{name}.json").read_text())


@pytest.mark.parametrize("name", [
    "gpt2",           # tied LM head (shares), Arange, Constant, Expand, Embedding
    "transformer",    # shares, TransformerEncoderLayer
    "vit_b_32",       # Parameter, Expand, MultiheadAttention
    "lstm_lm",        # LSTM, Embedding
    "seq2seq_gru",    # GRU
    "resnet18",       # conv, batch norm buffers
])
def test_every_tensor_of_a_forward_lives_on_the_run_device(name):
    """Built for a device other than the CPU (meta), every parameter, buffer,
    input and every tensor any op makes during the forward pass is on it, and
    tied weights stay one tensor: what a CUDA run needs."""
    import torch
    from torch.overrides import TorchFunctionMode

    from archcurator.core.build import build_module, example_inputs
    from archcurator.core.graph import Design

    design = Design.from_dict(_zoo(name), source=name)
    model = build_module(design, device="meta")
    inputs = example_inputs(design, batch=2, device="meta")
    assert {t.device.type for t in inputs} == {"meta"}
    assert {p.device.type for p in model.parameters()} == {"meta"}
    assert {b.device.type for b in model.buffers()} <= {"meta"}
    module_of = {node_id: model.layers[key] for node_id, key, _ in model.plan}
    for node in (n for n in design.nodes if n.shares is not None):
        mine, theirs = module_of[node.id], module_of[node.shares]
        assert mine is theirs or mine.weight is theirs.weight, f"{node.id}'s weight is not {node.shares}'s"

    made_elsewhere: list[str] = []

    class Devices(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            for t in (out if isinstance(out, (tuple, list)) else (out,)):
                if isinstance(t, torch.Tensor) and t.device.type != "meta":
                    made_elsewhere.append(f"{getattr(func, '__name__', func)} -> {t.device}")
            return out

    with torch.no_grad(), Devices():
        model(*inputs)
    assert not made_elsewhere, made_elsewhere[:5]


# ---- ArchitectureIQ on CUDA: determinism switches ---------------------------------------------


def _switches(torch) -> tuple:
    from archcurator.core.aiq.execute import _fp32_flags

    b = torch.backends
    return (b.cudnn.deterministic, b.cudnn.benchmark, tuple(getattr(o, a) for o, a in _fp32_flags(torch)),
            b.cuda.flash_sdp_enabled(), b.cuda.mem_efficient_sdp_enabled(), b.cuda.math_sdp_enabled())


def test_the_aiq_executor_sets_cudas_determinism_switches_and_puts_them_back(monkeypatch):
    import torch

    from archcurator.core.aiq.execute import _cuda_determinism

    monkeypatch.delenv("CUBLAS_WORKSPACE_CONFIG", raising=False)
    before = _switches(torch)
    with _cuda_determinism(torch, "cpu"):
        assert _switches(torch) == before  # the CPU's runs (and the shipped questions) are untouched
    assert "CUBLAS_WORKSPACE_CONFIG" not in os.environ
    with pytest.raises(KeyError):
        with _cuda_determinism(torch, "cuda"):
            det, bench, fp32, flash, mem_eff, math_ = _switches(torch)
            assert det is True and bench is False
            assert all(v in ("ieee", False) for v in fp32), fp32  # no TF32 in matmuls, convs, RNNs
            assert (flash, mem_eff, math_) == (False, False, True)
            assert os.environ["CUBLAS_WORKSPACE_CONFIG"] == ":4096:8"
            raise KeyError("a failing candidate")
    assert _switches(torch) == before


def test_the_child_gives_aiq_runs_cublas_deterministic_workspace(monkeypatch):
    from archcurator.core.runs.child import _prepare_environment

    monkeypatch.delenv("CUBLAS_WORKSPACE_CONFIG", raising=False)
    _prepare_environment(RunSpec(kind="forward", design={"format": "archgraph/1"}))
    assert "CUBLAS_WORKSPACE_CONFIG" not in os.environ
    _prepare_environment(RunSpec(kind="aiq", payload={}))
    assert os.environ["CUBLAS_WORKSPACE_CONFIG"] == ":4096:8"


@pytest.mark.slow
def test_a_run_says_which_limit_it_ran_under(design):
    """The answer carries the limit, and the child's log says it before it builds the design."""
    r = LocalRunner(gpu_ids=[], cpu_slots=1)
    res = r.submit(RunSpec(kind="forward", design=design("mlp"), memory_limit_mb=512)).wait(180)
    assert res.status == "ok", res
    assert res.memory_limit == {"mb": 512, "where": "host", "set_by": "spec", "rule": "asked for in the run's spec"}
    lines = res.log_tail.splitlines()
    assert "memory limit of 512 MB" in lines

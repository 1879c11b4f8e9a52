"""The GPU path end to end: `bench/gpu_check.sh` starts this with a Python it
found on the machine (see the script for how; nothing is downloaded).

Steps, one line each with its time and the GPU memory in use before and
after it (all GPUs, from NVML or nvidia-smi; "n/a" on the CPU path):

1. environment   torch sees the device and the runs' queue sees its GPUs
2-4. forward     ``archcurator run FILE --check forward --device D --json`` on
                 three zoo designs: resnet18 and gpt2 (tied LM head) run, a
                 corrupted lstm_lm (an Embedding smaller than its vocabulary:
                 on CUDA a device-side assert) fails in its forward pass
5. train         ``--check train`` on lenet5: the loss falls
6. aiq           two ArchitectureIQ questions re-executed on D and on the CPU
                 (at once: the queue has a CPU slot beside each GPU's); the
                 winners must be equal (on the CPU path: equal to the
                 recorded winners, themselves executed on a CPU)
7. app           the curator's app, headless (Textual's Pilot): open a stored
                 design, press the design screen's forward-check key, wait for
                 the run the app stores, read it back from the store
8. memory guard  a design whose weight is twice the device's memory, run
                 without --memory-limit: ``killed`` by the default limit

After each step nothing may be left behind: no process carrying this
check's token in its environment, and the GPU's memory back to where it
was (64 MiB of slack). Exit 0 only when every step passed (and, on a GPU,
within the time budget).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path

TOKEN_ENV = "ARCHCURATOR_GPU_CHECK"
LEAK_SLACK_MIB = 64
#: How long GPU memory and processes get to go back after a step.
SETTLE_S = 15.0
CLI_TIMEOUT_S = 420
APP_TIMEOUT_S = 420
AIQ_FAMILIES = ("bigram_lm", "synthetic_tabular_classification")  # a transformer (attention) and an MLP
AIQ_MIN_MARGIN = 0.1  # only questions whose recorded winner leads every seed by 10%
TRAIN_STEPS = 60


class StepFailed(Exception):
    """A step's check did not hold; the message is its one-line reason."""


def _one_line(text: str, limit: int = 220) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


# ---- what is in use ------------------------------------------------------------------------


class GpuMemory:
    """MiB in use on every GPU, from NVML (no CUDA context made) or nvidia-smi."""

    def __init__(self, enabled: bool) -> None:
        self.how = "n/a"
        self._nvml = None
        if not enabled:
            return
        try:
            import pynvml  # noqa: PLC0415 - on GPU machines only

            pynvml.nvmlInit()
            self._nvml = pynvml
            self._handles = [pynvml.nvmlDeviceGetHandleByIndex(i) for i in range(pynvml.nvmlDeviceGetCount())]
            self.how = "nvml"
            return
        except Exception:  # noqa: BLE001 - absent or no driver: try the command
            self._nvml = None
        if shutil.which("nvidia-smi"):
            self.how = "nvidia-smi"

    def used_mib(self) -> int | None:
        if self._nvml is not None:
            return sum(self._nvml.nvmlDeviceGetMemoryInfo(h).used for h in self._handles) >> 20
        if self.how == "nvidia-smi":
            try:
                out = subprocess.run(["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,nounits"],
                                     capture_output=True, text=True, timeout=20).stdout
                return sum(int(x) for x in out.split())
            except (OSError, subprocess.SubprocessError, ValueError):
                return None
        return None


def leftover_processes(token: str) -> list[str]:
    """Processes (other than this one) whose environment carries the check's token."""
    needle = f"{TOKEN_ENV}={token}".encode()
    found = []
    for d in os.listdir("/proc"):
        if not d.isdigit() or int(d) == os.getpid():
            continue
        try:
            with open(f"/proc/{d}/environ", "rb") as fh:
                if needle not in fh.read().split(b"\0"):
                    continue
            with open(f"/proc/{d}/cmdline", "rb") as fh:
                cmd = fh.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()
            with open(f"/proc/{d}/stat") as fh:
                if fh.read().rsplit(")", 1)[1].split()[0] in ("Z", "X"):
                    continue
        except OSError:
            continue
        found.append(f"{d} {cmd[:80]}")
    return found


# ---- the check -------------------------------------------------------------------------------


class GpuCheck:
    def __init__(self, args) -> None:
        self.args = args
        self.device = args.device
        self.work = Path(args.workdir or tempfile.mkdtemp(prefix="archcurator-gpu-check-"))
        self.work.mkdir(parents=True, exist_ok=True)
        self.db = self.work / "cli.duckdb"
        self.token = uuid.uuid4().hex[:12]
        os.environ[TOKEN_ENV] = self.token
        os.environ.pop("RAY_API_SERVER_ADDRESS", None)  # runs on this machine, through the local queue
        if self.device == "cpu":
            os.environ["CUDA_VISIBLE_DEVICES"] = ""  # the CPU path must not touch a GPU, here or in children
        self.mem = GpuMemory(self.device == "cuda")
        self.expected_device = "cpu"
        self.device_bytes = 0
        self.rows: list[dict] = []
        self.first_mib: int | None = None
        self.last_mib: int | None = None
        self.t0 = time.monotonic()

    # ---- plumbing ----------------------------------------------------------------------------
    def _settled(self, before: int | None) -> tuple[int | None, list[str]]:
        deadline = time.monotonic() + SETTLE_S
        while True:
            after = self.mem.used_mib()
            left = leftover_processes(self.token)
            back = before is None or after is None or after <= before + LEAK_SLACK_MIB
            if (back and not left) or time.monotonic() > deadline:
                return after, left
            time.sleep(0.5)

    def step(self, name: str, fn: Callable[[], str]) -> bool:
        before = self.mem.used_mib()
        if self.first_mib is None:
            self.first_mib = before
        t = time.monotonic()
        try:
            detail, ok = fn(), True
        except StepFailed as exc:
            detail, ok = str(exc), False
        except Exception as exc:  # noqa: BLE001 - a crash in a step is that step's failure
            detail, ok = f"{type(exc).__name__}: {exc}", False
        secs = time.monotonic() - t
        after, left = self._settled(before)
        self.last_mib = after
        leaks = []
        if before is not None and after is not None and after > before + LEAK_SLACK_MIB:
            leaks.append(f"GPU memory not given back: {after - before} MiB more than before")
        if left:
            leaks.append(f"left running: {'; '.join(left[:3])}")
        if leaks:
            ok = False
            detail = f"{detail}; LEAK: {'; '.join(leaks)}"
        mem = "n/a" if before is None or after is None else f"{before} -> {after} MiB"
        n = len(self.rows) + 1
        print(f"{n:>2}  {'OK  ' if ok else 'FAIL'}  {name:<39} {secs:6.1f} s  gpu mem {mem:<17} "
              f"{_one_line(detail, 400)}", flush=True)
        self.rows.append({"name": name, "ok": ok, "seconds": secs, "before": before, "after": after,
                          "detail": detail})
        return ok

    def cli(self, *argv: str, timeout: float = CLI_TIMEOUT_S) -> dict:
        cmd = [sys.executable, "-m", "archcurator", *argv, "--db", str(self.db)]
        try:
            out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=self.work)
        except subprocess.TimeoutExpired:
            raise StepFailed(f"`archcurator {' '.join(argv)}` did not answer in {timeout:g} s") from None
        if out.returncode != 0:
            tail = (out.stderr.strip().splitlines() or [""])[-1]
            raise StepFailed(f"`archcurator {argv[0]}` exited {out.returncode}: {tail}")
        try:
            return json.loads(out.stdout)
        except json.JSONDecodeError:
            raise StepFailed(f"`archcurator {argv[0]}` did not print JSON: {out.stdout[:200]!r}") from None

    def run_design(self, label: str, graph: dict, check: str = "forward", *extra: str) -> dict:
        path = self.work / f"{label.replace('/', '_')}.json"
        path.write_text(json.dumps(graph))
        return self.cli("run", str(path), "--check", check, "--device", self.device, "--json", *extra)

    def _on_device(self, answer: dict) -> None:
        if answer.get("device") != self.expected_device:
            raise StepFailed(f"ran on {answer.get('device')!r}, not on {self.expected_device!r}: "
                             f"{answer.get('status')} {answer.get('message', '')}")

    @staticmethod
    def _limit(answer: dict) -> str:
        lim = answer.get("memory_limit") or {}
        return f"limit {lim.get('mb')} MB ({lim.get('set_by')})" if lim else "no limit reported"

    # ---- steps -------------------------------------------------------------------------------
    def environment(self) -> str:
        from archcurator.core.runs.local import detect_gpus

        probe = "\n".join([
            "import json, torch",
            "d = {'torch': torch.__version__, 'cuda': torch.cuda.is_available(),",
            "     'cuda_version': torch.version.cuda}",
            f"if d['cuda'] and {self.device!r} == 'cuda':",
            "    p = torch.cuda.get_device_properties(0)",
            "    d.update(name=torch.cuda.get_device_name(0), total=p.total_memory,",
            "             count=torch.cuda.device_count())",
            "print(json.dumps(d))",
        ])
        out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=180)
        if out.returncode != 0:
            raise StepFailed(f"torch does not start: {(out.stderr.strip().splitlines() or [''])[-1]}")
        info = json.loads(out.stdout.strip().splitlines()[-1])
        gpus = detect_gpus()
        head = (f"python {platform.python_version()}, torch {info['torch']}, "
                f"CUDA {info['cuda_version'] or 'none'}")
        if self.device == "cpu":
            self.device_bytes = _host_total_bytes()
            self.expected_device = "cpu"
            return f"{head}; the CPU path ({self.device_bytes >> 20} MiB of memory), GPUs hidden"
        if not info["cuda"]:
            raise StepFailed(f"{head}: torch sees no CUDA device (use --device cpu for the CPU path)")
        if not gpus:
            raise StepFailed(f"{head}: the runs' queue finds no GPU (CUDA_VISIBLE_DEVICES, "
                             "/proc/driver/nvidia/gpus, nvidia-smi): runs would not be queued per GPU")
        self.expected_device = info["name"]
        self.device_bytes = info["total"]
        return (f"{head}; {info['name']}, {info['total'] >> 20} MiB; queue GPUs {gpus}; "
                f"memory read by {self.mem.how}")

    def forward_runs(self, name: str) -> Callable[[], str]:
        def go() -> str:
            from archcurator.core.zoo import build

            answer = self.run_design(name, build(name))
            self._on_device(answer)
            if answer["status"] != "ok":
                raise StepFailed(f"{answer['status']} ({answer['exception']}): {answer['message']}")
            m = answer["metrics"]
            return (f"ok on {answer['device']}: outputs {m['output_shapes']}, {m['params']:,} params, "
                    f"{m['forward_ms']} ms, peak {m['peak_memory_mb']} MB, {self._limit(answer)}")
        return go

    def forward_fails(self) -> str:
        import random

        from archcurator.core.ground.kinds import corrupt
        from archcurator.core.zoo import build

        graph = corrupt(build("lstm_lm"), "index-range", random.Random(0))
        if graph is None:
            raise StepFailed("the index-range corruption found no site in lstm_lm")
        answer = self.run_design("lstm_lm-index-range", graph)
        self._on_device(answer)
        if answer["status"] != "failed" or not answer["exception"] or answer["exception"] == "BuildError":
            raise StepFailed(f"expected a crash in the forward pass, got {answer['status']} "
                             f"({answer['exception']}): {answer['message']}")
        return f"failed as it must, on {answer['device']}: {answer['exception']}: {answer['message']}"

    def train(self) -> str:
        from archcurator.core.zoo import build

        answer = self.run_design("lenet5", build("lenet5"), "train", "--steps", str(TRAIN_STEPS))
        self._on_device(answer)
        if answer["status"] != "ok":
            raise StepFailed(f"{answer['status']} ({answer['exception']}): {answer['message']}")
        m = answer["metrics"]
        curve = m["loss_curve"]
        head, tail = statistics.mean(curve[:5]), statistics.mean(curve[-5:])
        if not tail < 0.8 * head:
            raise StepFailed(f"the loss did not fall: first five {head:.4f}, last five {tail:.4f}")
        return (f"ok on {answer['device']}: {m['loss']} {m['loss_first']:.4f} -> {m['loss_last']:.4f} "
                f"over {m['steps']} steps (mean of first/last five {head:.4f} -> {tail:.4f}), "
                f"{m['steps_per_s']} steps/s")

    def aiq(self) -> str:
        """On a GPU: the winners found on CUDA against those found on the CPU
        here, both executed now (at once: the queue has a CPU slot beside
        each GPU's). On the CPU path: against the recorded winners (executed
        on a CPU when the questions were made)."""
        from archcurator.core.aiq.execute import execute_question, runs_runner

        questions = pick_questions(self.args.questions)
        devices = ("cuda", "cpu") if self.device == "cuda" else ("cpu",)
        found: dict = {}

        def on(dev: str) -> None:
            found[dev] = [execute_question(q, device=dev, runner=runs_runner(device=dev, time_limit_s=600))
                          for q in questions]

        threads = [threading.Thread(target=_keep_error, args=(found, d, on), name=f"aiq-{d}") for d in devices]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for dev in devices:
            if isinstance(found.get(dev), BaseException):
                exc = found[dev]
                raise StepFailed(f"on {dev}: {type(exc).__name__}: {exc}")
        parts, same = [], True
        for i, q in enumerate(questions):
            run = found[devices[0]][i]
            ran_on = {r.get("device") for r in run["results"]}
            if ran_on != {devices[0]}:
                raise StepFailed(f"{q['question_id']}: candidates ran on {sorted(ran_on)}, not {devices[0]}")
            reference = found["cpu"][i]["winner_letter"] if self.device == "cuda" else q.get("correct_letter")
            same &= run["winner_letter"] == reference
            parts.append(f"{q['question_id']} ({q['family']}): {devices[0]} {run['winner_letter']}"
                         + (f", cpu {reference}" if self.device == "cuda" else "")
                         + f", recorded {q.get('correct_letter')}, margin {run['significance']['min_margin']:.3f}")
        what = "the CPU's here" if self.device == "cuda" else "the recorded CPU winners"
        if not same:
            raise StepFailed(f"winners differ from {what}: " + "; ".join(parts))
        return f"same winners as {what}: " + "; ".join(parts)

    def app(self) -> str:
        return asyncio.run(self._drive_app())

    async def _drive_app(self) -> str:
        from archcurator.core.zoo import build
        from archcurator.store.importers import import_records
        from archcurator.store.runs import list_runs
        from archcurator.tui.app import CuratorApp
        from archcurator.tui.config import Config

        store = self.work / "app.duckdb"
        design_id = "gpu-check-resnet18"
        res = import_records(store, [{"id": design_id, "author": "human", "model": "gpu-check",
                                      "task_set": "gpu-check", "run": "gpu-check", "graph": build("resnet18")}],
                             label="gpu-check")
        if res.rejected:
            raise StepFailed(f"the design was not stored: {res.rejected}")
        app = CuratorApp(store, Config(curator="gpu-check", path=self.work / "config.toml", cursor_blink=False))
        notes = []
        async with app.run_test(size=(120, 36)) as pilot:
            await _settle(pilot)
            await _open(pilot, app, design_id)

            def stored() -> list:
                return list_runs(store, design_id=design_id)

            await pilot.press("e")
            started = await _wait(pilot, lambda: stored() or _launched(app), 5.0)
            for key in ("enter", "y"):  # a confirmation, if the design screen asks for one
                if started:
                    break
                from textual.screen import ModalScreen

                if isinstance(app.screen, ModalScreen):
                    notes.append(f"confirmed with {key!r}")
                    await pilot.press(key)
                    started = await _wait(pilot, lambda: stored() or _launched(app), 5.0)
            if not started:
                raise StepFailed("the design screen's forward-check key (e) launched no run")
            if not await _wait(pilot, stored, APP_TIMEOUT_S):
                raise StepFailed(f"the app stored no run in {APP_TIMEOUT_S} s")
            await _settle(pilot)
            handles = list(getattr(app, "run_handles", []) or [])
        run = stored()[0]
        limit = ""
        if handles and handles[-1].result is not None and handles[-1].result.memory_limit:
            lim = handles[-1].result.memory_limit
            limit = f", limit {lim['mb']} MB ({lim['set_by']})"
        if run["status"] != "ok":
            raise StepFailed(f"the stored run is {run['status']} ({run['exception']}): {run['message']}")
        if run["device"] != self.expected_device:
            raise StepFailed(f"the stored run ran on {run['device']!r}, not {self.expected_device!r}")
        shapes = (run.get("metrics") or {}).get("output_shapes")
        extra = f" ({'; '.join(notes)})" if notes else ""
        return (f"stored run #{run['id']}: {run['kind']} {run['status']} on {run['device']} in "
                f"{run['seconds']:.2f} s, outputs {shapes}{limit}{extra}")

    def memory_guard(self) -> str:
        weight = 2 * self.device_bytes
        width = 1 << 16  # keeps both sizes ordinary numbers: 2x an H200 is 1.1M x 65536 floats
        out_features = -(-weight // (width * 4))
        graph = {"format": "archgraph/1", "name": "far-larger-than-the-device",
                 "inputs": [{"id": "x", "shape": ["B", width], "dtype": "float32"}],
                 "nodes": [{"id": "fc", "op": "Linear", "in": ["x"],
                            "args": {"in_features": width, "out_features": out_features}}],
                 "outputs": ["fc"]}
        answer = self.run_design("far-larger", graph)
        self._on_device(answer)
        lim = answer.get("memory_limit") or {}
        if answer["status"] != "killed" or "exceeded" not in answer["message"]:
            raise StepFailed(f"expected killed by the memory limit, got {answer['status']} "
                             f"({answer['exception']}): {answer['message']}")
        where = "gpu" if self.device == "cuda" else "host"
        if lim.get("set_by") != "default" or lim.get("where") != where or "(the default:" not in answer["message"]:
            raise StepFailed(f"not the {where}'s default limit: {lim} / {answer['message']}")
        return (f"killed in {answer['seconds']:.1f} s asking for {weight >> 30} GiB: {answer['exception']}: "
                f"{answer['message']}")

    # ---- all -----------------------------------------------------------------------------------
    def plan(self) -> list[tuple[str, str, Callable[[], str]]]:
        return [
            ("forward", "forward resnet18 (zoo): runs", self.forward_runs("resnet18")),
            ("forward", "forward gpt2 (zoo, tied head): runs", self.forward_runs("gpt2")),
            ("fails", "forward lstm_lm/index-range: fails", self.forward_fails),
            ("train", f"train lenet5 ({TRAIN_STEPS} steps): loss falls", self.train),
            ("aiq", "aiq: 2 questions, winners as the CPU's", self.aiq),
            ("app", "app: forward check from the design", self.app),
            ("guard", "memory guard: 2x the device's memory", self.memory_guard),
        ]

    def run(self) -> int:
        print(f"gpu_check: device {self.device}, workdir {self.work}, token {self.token}", flush=True)
        if not self.step("environment", self.environment):
            return self.summary()
        only = set(self.args.only.split(",")) if self.args.only else None
        for key, name, fn in self.plan():
            if only is None or key in only:
                self.step(name, fn)
        return self.summary()

    def summary(self) -> int:
        total = time.monotonic() - self.t0
        failed = [r for r in self.rows if not r["ok"]]
        budget_ok = self.device != "cuda" or total <= self.args.budget
        mem = ("n/a" if self.first_mib is None or self.last_mib is None
               else f"{self.first_mib} MiB before the first step, {self.last_mib} MiB after the last")
        left = leftover_processes(self.token)
        partial = " (only " + self.args.only + ")" if self.args.only else ""
        verdict = "PASS" if not failed and budget_ok and not left else "FAIL"
        if partial and verdict == "PASS":
            verdict = "PARTIAL PASS"  # the steps asked for passed; the check as a whole was not run
        budget = (f"budget {self.args.budget:g} s" if self.device == "cuda"
                  else "the CPU path has no GPU-time budget")
        passed = len(self.rows) - len(failed)
        print(f"gpu_check: {verdict}: {passed}/{len(self.rows)} steps OK{partial} in {total:.1f} s "
              f"({budget}) on {self.expected_device}; GPU memory {mem}; "
              f"{'no process left behind' if not left else 'LEFT RUNNING: ' + '; '.join(left[:3])}", flush=True)
        for r in failed:
            print(f"gpu_check: failed: {r['name']}: {_one_line(r['detail'], 400)}", flush=True)
        if not budget_ok:
            print(f"gpu_check: failed: over the budget ({total:.1f} s > {self.args.budget:g} s)", flush=True)
        if not self.args.keep and not self.args.workdir:
            shutil.rmtree(self.work, ignore_errors=True)
        return 1 if verdict == "FAIL" else 0


# ---- helpers -----------------------------------------------------------------------------------


def _keep_error(found: dict, key: str, fn) -> None:
    try:
        fn(key)
    except BaseException as exc:  # noqa: BLE001 - reported by the step
        found[key] = exc


def _host_total_bytes() -> int:
    with open("/proc/meminfo") as fh:
        for line in fh:
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) * 1024
    return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")


def pick_questions(wanted: str | None) -> list[dict]:
    """The shipped questions to re-execute: those named, else for each of
    AIQ_FAMILIES the cheapest (recorded seconds) whose winner led every seed
    by AIQ_MIN_MARGIN."""
    from archcurator.core.assets import asset_path

    lines = asset_path("aiq", "questions.jsonl").read_text().splitlines()
    questions = [json.loads(line) for line in lines if line.strip()]
    if wanted:
        ids = [w.strip() for w in wanted.split(",") if w.strip()]
        by_id = {q["question_id"]: q for q in questions}
        missing = [i for i in ids if i not in by_id]
        if missing:
            raise StepFailed(f"no such question: {', '.join(missing)}")
        return [by_id[i] for i in ids]
    picked = []
    for family in AIQ_FAMILIES:
        pool = [q for q in questions if q["family"] == family
                and (q.get("significance") or {}).get("min_margin", 0) >= AIQ_MIN_MARGIN]
        if not pool:
            raise StepFailed(f"no shipped {family} question with a margin of {AIQ_MIN_MARGIN}")
        picked.append(min(pool, key=lambda q: sum(c["result"]["seconds"] for c in q["choices"])))
    return picked


def _launched(app) -> bool:
    return bool(getattr(app, "run_handles", None))


async def _settle(pilot, rounds: int = 60) -> None:
    app = pilot.app
    for _ in range(rounds):
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        if not any(w.is_running for w in app.workers) and not getattr(app, "writes_pending", False):
            return
    raise StepFailed("the app did not settle")


async def _wait(pilot, predicate, timeout: float) -> bool:
    t0 = time.monotonic()
    while True:
        try:
            if predicate():
                return True
        except Exception:  # noqa: BLE001 - a store busy for a moment: ask again
            pass
        if time.monotonic() - t0 > timeout:
            return False
        await pilot.pause(0.2)


async def _open(pilot, app, design_id: str) -> None:
    """Open a design by jumping to its id from the queue (`:`), as a curator would."""
    await pilot.press(":")
    await _settle(pilot)
    for ch in design_id:
        await pilot.press(ch)
    await pilot.press("enter")
    await _settle(pilot)
    if getattr(getattr(app.screen, "view", None), "id", None) != design_id:
        await pilot.press("enter")
        await _settle(pilot)
    shown = getattr(getattr(app.screen, "view", None), "id", None)
    if shown != design_id:
        raise StepFailed(f"the design screen did not open {design_id} (showing {shown!r})")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench/gpu_check.sh", description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", choices=("cuda", "cpu"), default="cuda",
                    help="cuda (default): the GPU path; cpu: the same steps anywhere, GPUs hidden")
    ap.add_argument("--budget", type=float, default=300.0, metavar="S",
                    help="wall time the GPU path may take (default 300 s)")
    ap.add_argument("--questions", default=None, metavar="ID,ID",
                    help="ArchitectureIQ questions to re-execute (default: chosen by a fixed rule)")
    ap.add_argument("--only", default=None, metavar="STEP,STEP",
                    help="run only these steps after the environment's: forward, fails, train, aiq, app, guard")
    ap.add_argument("--workdir", default=None, help="where the stores and design files go (kept)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary working folder")
    args = ap.parse_args(argv)
    return GpuCheck(args).run()


if __name__ == "__main__":
    sys.exit(main())

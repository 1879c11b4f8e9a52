"""The run bridge: runs launched from the app, from the launch to the stored outcome.

`RunBridge.launch` submits a forward check or a short training of a stored
design through `core.runs` (the local runner for `cpu` / `cuda`, a Ray
runner for `cluster`) in a thread worker; a listener on the handle posts a
`RunUpdate` when the run ends, and the bridge stores the outcome
(`store.runs.persist_result`, in a worker), then tells the screens.
The runs screen reads the handles it keeps and the runs stored before
(`AppStore.runs`), so runs survive a restart. Quitting while runs are active
asks first (`CuratorApp.action_quit`): wait for them or cancel them, and
either way their outcome is stored before the app exits.

What a launch will cost is estimated here (`estimate`), from the design's
stored cost (FLOPs per sample, the quoted device's price and throughput), so
the confirmation can name it before anything starts. Where runs already
finished on this machine, their measured throughput replaces the assumed one
(`calibrate`: the median work per second of the stored runs of that device,
never less than the shortest of them), and the dialog says which basis it used.
"""

from __future__ import annotations

import math
import os
import threading
from dataclasses import dataclass
from functools import partial

from .widgets.messages import RunUpdate

DEVICES = ("cpu", "cuda", "cluster")
RAY_ADDRESS_ENV = "RAY_API_SERVER_ADDRESS"  # core.runs.runner's
CPU_FLOPS = 5e10  # what one CPU socket sustains on small torch models, order of magnitude
START_S = {"cpu": 4.0, "cuda": 8.0, "cluster": 20.0}  # a child importing torch (and a Ray job's start)
MIN_MEASURED_RATE = 1e8  # FLOP/s: stored runs slower than this timed their start-up, not their throughput
FORWARD_BATCH = 2  # RunSpec's default batch


@dataclass
class Estimate:
    device: str
    seconds: float
    usd: float | None  # None: priced by whoever runs the cluster
    basis: str

    def describe(self) -> str:
        secs = f"about {self.seconds:,.0f} s" if self.seconds < 120 else f"about {self.seconds / 60:,.0f} min"
        money = "free (this machine)" if self.usd == 0 else ("priced by the cluster" if self.usd is None
                                                            else f"about ${self.usd:,.4f}")
        return f"{secs}, {money}"


def run_work(kind: str, flops: float, batch: int | None = None, steps: int | None = None,
             train_steps: int = 200) -> float:
    """FLOPs one run does: a forward pass of a batch, or a short training (forward and backward, 3x)."""
    b = batch or FORWARD_BATCH
    return b * float(flops) * (3 * (steps or train_steps) if kind == "train" else 1)


@dataclass
class Calibration:
    rate: float  # FLOP/s a stored run of this device achieved, start-up included (the median)
    floor: float  # the shortest stored run's seconds: no run here took less
    n: int


def calibrate(timings: list[dict], train_steps: int = 200) -> dict[str, Calibration]:
    """Per device (cpu, cuda), what the runs stored on this machine measured (`AppStore.run_timings`)."""
    by_device: dict[str, list[tuple[float, float]]] = {}
    for t in timings:
        device = "cuda" if str(t.get("device") or "").startswith("cuda") else str(t.get("device") or "cpu")
        work = run_work(t["kind"], t["flops"], t.get("batch"), t.get("steps"), train_steps)
        if work > 0 and t["seconds"] > 0:
            by_device.setdefault(device, []).append((work / t["seconds"], t["seconds"]))
    out = {}
    for device, pairs in by_device.items():
        rates = sorted(r for r, _ in pairs)
        out[device] = Calibration(rates[len(rates) // 2], min(sec for _, sec in pairs), len(pairs))
    return out


def estimate(data: dict, kind: str, device: str, train_steps: int,
             calibration: dict[str, Calibration] | None = None) -> Estimate:
    """Time and money a run of the design (`data`: the store's design bundle) will take on `device`."""
    cost = data.get("cost") or {}
    flops = cost.get("flops_per_sample") or data.get("flops") or 0.0
    quote = cost.get("quote") or {}
    work = run_work(kind, flops, train_steps=train_steps)
    cal = (calibration or {}).get(device)
    if cal is not None and device in ("cpu", "cuda") and not _measures_throughput(cal):
        # the runs stored here were all tiny: their seconds are the child's start-up, and a median of
        # "0.00 GFLOP/s" would stretch any real design's estimate to hours. The assumed throughput, said
        # so, with no estimate shorter than the shortest run stored here
        fallback = estimate(data, kind, device, train_steps, None)
        seconds = max(fallback.seconds, cal.floor)
        usd = fallback.usd if fallback.usd is None or seconds == fallback.seconds else \
            fallback.usd * seconds / fallback.seconds
        basis = (f"measured: {cal.n} run{'s' if cal.n != 1 else ''} stored on this machine, too small to measure "
                 f"its throughput (start-up bound, shortest {cal.floor:,.1f} s): {fallback.basis.split(': ')[-1]}")
        return Estimate(device, seconds, usd, basis)
    if cal is not None and device in ("cpu", "cuda"):
        seconds = max(work / cal.rate, cal.floor)
        basis = (f"measured: {cal.n} run{'s' if cal.n != 1 else ''} stored on this machine, "
                 f"median {_gflops(cal.rate)} GFLOP/s with start-up, shortest {cal.floor:,.1f} s")
        price = quote.get("price_per_hour")
        usd = 0.0 if device == "cpu" else (None if price is None else seconds / 3600 * float(price))
        return Estimate(device, seconds, usd, basis)
    if device == "cpu":
        return Estimate("cpu", START_S["cpu"] + work / CPU_FLOPS, 0.0,
                        f"no run stored here yet: {CPU_FLOPS / 1e9:.0f} GFLOP/s assumed")
    peak = float(quote.get("peak_tflops") or 70.0) * 1e12 * float(quote.get("utilisation") or 0.35)
    price = quote.get("price_per_hour")
    seconds = START_S[device] + work / peak
    gpu = quote.get("device") or "A10G"
    if device == "cluster":
        return Estimate("cluster", seconds, None, f"{gpu} throughput assumed")
    usd = None if price is None else seconds / 3600 * float(price)
    return Estimate("cuda", seconds, usd, f"{gpu} at ${price}/h" if price is not None else gpu)


def _measures_throughput(cal: Calibration) -> bool:
    return cal.n > 0 and math.isfinite(cal.rate) and cal.rate >= MIN_MEASURED_RATE and math.isfinite(cal.floor)


def _gflops(rate: float) -> str:
    g = rate / 1e9
    return f"{g:,.0f}" if g >= 100 else f"{g:.3g}"


def duplicate_of(design_id: str, kind: str, data: dict, live_handles) -> str | None:
    """Why launching this run again may be a waste: one like it running now, or already stored."""
    for h in live_handles:
        if (h.spec.tags or {}).get("design_id") == design_id and h.spec.kind == kind and h.result is None:
            return f"a {kind} run of {design_id} is running now"
    same = [r for r in (data.get("runs") or []) if r.get("kind") == kind]
    if same:
        r = same[0]
        outcome = r.get("exception") or r.get("status")
        when = r.get("ended_at") or r.get("created_at")
        return (f"{design_id} already has {len(same)} stored {kind} run{'s' if len(same) != 1 else ''}; the last: "
                f"{outcome} on {r.get('device') or '?'}" + (f", {str(when)[:16]}" if when else ""))
    return None


class RunBridge:
    """The app's runs: launch, follow, store."""

    def __init__(self, app) -> None:
        self.app = app
        self.handles: list = []  # runs launched in this session, oldest first
        self.stored: dict = {}  # handle run id -> the store's run id
        self._persisting: set = set()
        self._when_settled: list = []
        self._gpus: list[str] | None = None
        self._lock = threading.Lock()

    # ---- what can be offered ------------------------------------------------------------
    def cluster_address(self) -> str | None:
        return os.environ.get(RAY_ADDRESS_ENV) or getattr(self.app.config, "cluster", None) or None

    def gpus(self) -> list[str]:
        """GPU ids this machine offers (asked once; nvidia-smi may be slow: call from a worker)."""
        with self._lock:
            if self._gpus is None:
                from archcurator.core.runs.local import detect_gpus

                self._gpus = detect_gpus()
            return self._gpus

    def active(self) -> list:
        """Handles whose outcome is not stored yet (running, queued, or ended and being stored)."""
        return [h for h in self.handles if h.run_id not in self.stored]

    # ---- launching ----------------------------------------------------------------------------
    def launch(self, design_id: str, kind: str = "forward", device: str = "cpu") -> None:
        if device not in DEVICES:
            raise ValueError(f"device must be one of {', '.join(DEVICES)}, not {device!r}")
        self.app.run_worker(partial(self._submit, design_id, kind, device), thread=True, group="run-launch",
                            exclusive=False, exit_on_error=False, name=f"launch {kind}")

    def _submit(self, design_id: str, kind: str, device: str) -> None:
        from archcurator.core.runs import RunSpec, get_runner, local_runner

        graph = self.app.store.graph(design_id)
        if graph is None:
            raise LookupError(f"{design_id} has no graph to run (it was not generated)")
        if device == "cluster":
            address = self.cluster_address()
            if not address:
                raise LookupError(f"no cluster: set {RAY_ADDRESS_ENV} to a Ray dashboard address")
            runner, spec_device = get_runner(address), "auto"
        else:
            runner, spec_device = local_runner(), device
        spec = RunSpec(kind=kind, design=graph, device=spec_device,
                       steps=self.app.TRAIN_STEPS if kind == "train" else None,
                       tags={"design_id": design_id, "device_choice": device})
        handle = runner.submit(spec)
        self.app.call_from_thread(self._submitted, handle)
        handle.add_listener(lambda ev, h=handle: self._event(h, ev))  # replays what already happened

    def _submitted(self, handle) -> None:
        self.handles.append(handle)
        what = "forward check" if handle.spec.kind == "forward" else handle.spec.kind
        choice = (handle.spec.tags or {}).get("device_choice", handle.spec.device)
        self.app.notify(f"{what} of {handle.spec.tags.get('design_id')} started on {choice} — X shows the runs",
                        timeout=4)

    def _event(self, handle, event) -> None:
        # on the runner's thread: only the end matters here (the runs screen polls the rest)
        if getattr(event, "type", "") == "result":
            self.app.post_message(RunUpdate(handle))

    # ---- storing --------------------------------------------------------------------------------
    def update(self, message: RunUpdate) -> None:
        handle = message.handle
        if message.stored_id is not None:
            self.stored[handle.run_id] = message.stored_id
            self.app.run_stored(handle, message.stored_id)
            self._settle()
            return
        if handle.run_id not in self._persisting:
            self._persisting.add(handle.run_id)
            self.app.run_worker(partial(self._persist, handle), thread=True, group="run-store", exclusive=False,
                                exit_on_error=False, name="store run")

    def _persist(self, handle) -> None:
        from archcurator.store.runs import persist_result

        stored = persist_result(self.app.store.db, handle.spec, handle.result)
        self.app.post_message(RunUpdate(handle, stored))

    def persist_failed(self) -> None:
        """A run's outcome could not be stored (the error was shown): do not wait for it forever."""
        for h in list(self.active()):
            if h.result is not None and h.run_id in self._persisting:
                self.stored.setdefault(h.run_id, None)
        self._settle()

    # ---- quitting ---------------------------------------------------------------------------------
    def cancel_all(self) -> int:
        n = 0
        for h in self.active():
            if h.result is None:
                h.cancel()
                n += 1
        return n

    def when_settled(self, callback) -> None:
        """Call `callback` once every run launched here has ended and its outcome is stored."""
        self._when_settled.append(callback)
        self._settle()

    def forget_waiters(self) -> None:
        """The curator stayed after all: nothing waits for the runs to end any more."""
        self._when_settled = []

    def _settle(self) -> None:
        if self.active():
            return
        callbacks, self._when_settled = self._when_settled, []
        for cb in callbacks:
            cb()

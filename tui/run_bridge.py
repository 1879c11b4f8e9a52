"""The run bridge: runs launched from the app, from the launch to the stored outcome.

`RunBridge.launch` submits a forward check or a short training of a stored
design through `core.runs` (the local runner for `cpu` / `cuda`, a Ray
runner for `cluster`) in a thread worker; a listener on the handle posts a
`RunUpdate` when the run ends, and the bridge stores the outcome
(`tui.commands.run_cmd.persist_result`, in a worker), then tells the screens.
The runs screen reads the handles it keeps and the runs stored before
(`AppStore.runs`), so runs survive a restart. Quitting while runs are active
asks first (`CuratorApp.action_quit`): wait for them or cancel them, and
either way their outcome is stored before the app exits.

What a launch will cost is estimated here (`estimate`), from the design's
stored cost (FLOPs per sample, the quoted device's price and throughput), so
the confirmation can name it before anything starts.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from functools import partial

from .widgets.messages import RunUpdate

DEVICES = ("cpu", "cuda", "cluster")
RAY_ADDRESS_ENV = "RAY_API_SERVER_ADDRESS"  # core.runs.runner's
CPU_FLOPS = 5e10  # what one CPU socket sustains on small torch models, order of magnitude
START_S = {"cpu": 4.0, "cuda": 8.0, "cluster": 20.0}  # a child importing torch (and a Ray job's start)
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


def estimate(data: dict, kind: str, device: str, train_steps: int) -> Estimate:
    """Time and money a run of the design (`data`: the store's design bundle) will take on `device`."""
    cost = data.get("cost") or {}
    flops = cost.get("flops_per_sample") or data.get("flops") or 0.0
    quote = cost.get("quote") or {}
    work = FORWARD_BATCH * float(flops) * (3 * train_steps if kind == "train" else 1)
    if device == "cpu":
        return Estimate("cpu", START_S["cpu"] + work / CPU_FLOPS, 0.0, f"{CPU_FLOPS / 1e9:.0f} GFLOP/s assumed")
    peak = float(quote.get("peak_tflops") or 70.0) * 1e12 * float(quote.get("utilisation") or 0.35)
    price = quote.get("price_per_hour")
    seconds = START_S[device] + work / peak
    gpu = quote.get("device") or "A10G"
    if device == "cluster":
        return Estimate("cluster", seconds, None, f"{gpu} throughput assumed")
    usd = None if price is None else seconds / 3600 * float(price)
    return Estimate("cuda", seconds, usd, f"{gpu} at ${price}/h" if price is not None else gpu)


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
        from .commands.run_cmd import persist_result

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

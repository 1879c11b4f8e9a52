"""`archcurator run FILE.json --check forward|train [--json]`: run a design for
real, in a child process (locally, or as a Ray job with --cluster), through
the same runner the app uses, and record the outcome in the store.

The answer (SPEC §4): {"status", "exception", "message", "device",
"seconds"} plus kind, backend, run_id, metrics and the store's run id.
Exit 0 when the answer was produced (whatever the status), 2 when the file
cannot be read, 1 when no run could be made (e.g. Ray missing).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from .argtypes import positive_float, positive_int
from .errors import error_line, fail, read_problem
from .output import say

PROG = "archcurator run"


def register(sub) -> None:
    p = sub.add_parser(
        "run", help="run a design for real: a forward check or a short training",
        description="Builds the design as a torch module and runs it in a child process "
                    "(CUDA when available, else CPU; or as a job on a Ray cluster).")
    p.add_argument("file", help="an archgraph/1 JSON file (or one JSONL batch record with a graph)")
    p.add_argument("--check", choices=("forward", "train"), default="forward",
                   help="forward: one forward pass; train: a short training on a synthetic task")
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto",
                   help="auto (default): CUDA when available, else CPU")
    p.add_argument("--batch", type=positive_int, default=None,
                   help="batch size (default: for forward the design's train.batch_size, else 2; 16 for train)")
    p.add_argument("--steps", type=positive_int, default=None, help="training steps (default 50)")
    p.add_argument("--time-limit", type=positive_float, default=300.0, metavar="S",
                   help="wall-time limit of the child in seconds (default 300)")
    p.add_argument("--memory-limit", type=positive_int, default=None, metavar="MB",
                   help="memory the run may take on top of python and torch (default: half the "
                        "machine's free memory on the CPU, 90%% of the GPU's free memory on a GPU, "
                        "measured where the run starts); past it the run is killed with that reason")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--cluster", default=None, metavar="URL",
                   help="Ray dashboard address, e.g. http://HEAD:8265 "
                        "(default: $RAY_API_SERVER_ADDRESS; unset: run on this machine)")
    p.add_argument("--design-id", default=None,
                   help="the store's id of this design (default: found by content, else file:PATH)")
    p.add_argument("--no-record", action="store_true", help="do not write the outcome to the store")
    p.add_argument("--json", action="store_true", help="print the SPEC §4 JSON answer")
    p.set_defaults(func=run)


def _fail_input(path, problem: str) -> int:
    return fail("run", path, problem)


def read_design(path: str) -> tuple[dict, str | None]:
    """(archgraph dict, record id) of FILE; raises ValueError with a one-line reason."""
    from archcurator.core import jsontext
    from archcurator.core.graph import Design, DesignError

    try:
        text = jsontext.read_file(path)
    except (OSError, UnicodeDecodeError, jsontext.FileRefused) as exc:
        raise ValueError(read_problem(exc)) from None
    try:
        data = jsontext.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"malformed JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    record_id = None
    if isinstance(data, dict) and "format" not in data and isinstance(data.get("graph"), dict):
        record_id = data.get("id") if isinstance(data.get("id"), str) else None
        data = data["graph"]
    try:
        Design.from_dict(data, source=str(path))
    except DesignError as exc:
        msg = str(exc)
        prefix = f"{path}: "
        raise ValueError(msg[len(prefix):] if msg.startswith(prefix) else msg) from None
    return data, record_id


def run(args) -> int:
    from archcurator.core.runs import RunSpec, SpecError, get_runner

    path = args.file
    try:
        design, record_id = read_design(path)
    except ValueError as exc:
        return _fail_input(path, str(exc))
    batch = args.batch or (16 if args.check == "train" else None)  # None: the design's declared batch
    design_id = args.design_id or record_id
    try:
        spec = RunSpec(kind=args.check, design=design, batch_size=batch, device=args.device,
                       steps=args.steps, time_limit_s=args.time_limit,
                       memory_limit_mb=args.memory_limit, seed=args.seed,
                       tags={"source": str(Path(path).resolve()),
                             **({"design_id": design_id} if design_id else {})})
    except SpecError as exc:
        return fail("run", path, exc)
    try:
        runner = get_runner(args.cluster)
    except Exception as exc:  # noqa: BLE001 - RayUnavailable and friends: no run was made
        return fail("run", "--cluster", exc)
    handle = runner.submit(spec)
    try:
        for ev in handle.events():
            if not args.json:
                _print_live(ev)
        result = handle.wait()
    except KeyboardInterrupt:
        handle.cancel()
        result = handle.wait(30)
        if result is None:
            say(f"{PROG}: interrupted", file=sys.stderr)
            return 130
    answer = result.to_answer()
    if args.device == "cuda" and answer.get("device") == "cpu":
        # the child falls back to the CPU rather than report a design failure that is the machine's
        why = "CUDA was asked for but torch sees no CUDA device here; the run took the CPU"
        answer["message"] = f"{why}. {answer['message']}".strip() if answer.get("message") else why
        print(error_line("run", "--device", why), file=sys.stderr)
    if not args.no_record:
        try:
            from archcurator.store.runs import persist_result

            answer["store_run_id"] = persist_result(getattr(args, "db", None), spec, result)
        except Exception as exc:  # noqa: BLE001 - the answer stands even if the store is busy
            say(error_line("run", None, f"the outcome was not recorded in the store: {exc}"), file=sys.stderr)
    if args.json:
        say(json.dumps(answer, indent=2, default=str))
    else:
        _print_summary(result)
    return 0


# ---- human output ------------------------------------------------------------------


def _print_live(ev) -> None:
    if ev.type == "metric" and ev.name == "loss" and ev.step is not None:
        if ev.step == 1 or ev.step % 10 == 0:
            say(f"  step {ev.step:>5}  loss {ev.value:.4f}", file=sys.stderr, flush=True)
    elif ev.type == "status" and ev.status == "queued":
        say(f"{ev.run_id}: queued", file=sys.stderr, flush=True)


def _print_summary(result) -> None:
    head = f"{result.kind}: {result.status}"
    if result.exception:
        head += f" ({result.exception})"
    say(f"{head} on {result.device} in {result.seconds:.2f} s")
    if result.message:
        say(f"  {result.message}")
    m = result.metrics or {}
    if result.kind == "train" and "loss_first" in m:
        say(f"  loss {m['loss_first']:.4f} -> {m['loss_last']:.4f} over {m['steps']} steps ({m['loss']})")
    elif result.kind == "forward" and "output_shapes" in m:
        say(f"  outputs {m['output_shapes']}, {m.get('params', 0):,} params, {m.get('forward_ms')} ms")

"""The adversary: a fuzzer of archgraph/1 designs that knows nothing of the checks.

    python bench/fuzz_designs.py [--designs 5000] [--seed 0] [--workers 2] [--json OUT]

It writes designs the way a careless or hostile agent would: the reference
architectures of `assets/architectures/` mutated (hostile argument values and
types, arguments added and dropped, ops swapped, operands rewired into
self-loops, cycles and dangling references, hostile input shapes and train
blocks), random chains of ops built from torch's own constructor signatures
(`inspect.signature`, not the project's op table), designs made huge (long
chains, wide joins, thousands of self-loops, long shapes), and damaged texts
(deep nesting, 5,000-digit numbers, NaN, surrogates, a BOM, truncation). A
share of them is wrapped as JSONL batch lines with hostile record fields.

Each design goes the way `archcurator verify --json` takes it (the JSON door,
`Design`, `verify_graph`, the answer as strict JSON) or, for a batch line, the
way `archcurator import` takes it (the record's fields, then the design). Per
design it measures:

- the outcome: refused at the door with one line, answered, or a **traceback**
  (any other exception), grouped by the code site that raised it;
- CPU time (`time.process_time`: the machine is shared, and wall time there
  measures the neighbours);
- peak memory (`tracemalloc`, a second run of the same design) of designs
  under 1 MB.

A worker that runs past `--hang` CPU seconds on one design, or out of its
address-space limit, counts that design as a hang or a blow-up and goes on.

The acceptance (issue 12): 0 tracebacks, no design over 2 s, none over 500 MB
for a design under 1 MB. Exit 1 when one of them fails.
"""

from __future__ import annotations

import argparse
import copy
import inspect
import json
import multiprocessing as mp
import random
import resource
import signal
import sys
import time
import traceback
import tracemalloc
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ARCH = ROOT / "assets" / "architectures"
BUDGET_S = 2.0
BUDGET_MB = 500.0
SMALL_BYTES = 1 << 20

# ---- what an author may write: SPEC §1's ops, torch's constructor arguments ---------------

TENSOR_OPS = {  # SPEC §1's tensor operations and their arguments
    "Add": [], "Sub": [], "Mul": [], "Div": [], "MatMul": [], "Concat": ["dim"], "Stack": ["dim"],
    "Split": ["split_size_or_sections", "dim"], "Reshape": ["shape"], "Permute": ["dims"],
    "Transpose": ["dim0", "dim1"], "Mean": ["dim", "keepdim"], "Sum": ["dim", "keepdim"],
    "Select": ["dim", "index"], "Slice": ["dim", "start", "end", "step"], "Expand": ["shape"],
    "Scale": ["value"], "Constant": ["shape", "value"], "Arange": ["end"], "Parameter": ["shape"],
    "Squeeze": ["dim"], "Unsqueeze": ["dim"],
}
NN_OPS = ["Linear", "Bilinear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "BatchNorm1d",
          "BatchNorm2d", "LayerNorm", "GroupNorm", "RMSNorm", "Embedding", "MultiheadAttention",
          "TransformerEncoderLayer", "TransformerDecoderLayer", "LSTM", "GRU", "RNN", "Dropout", "ReLU", "ReLU6",
          "GELU", "SiLU", "Tanh", "Sigmoid", "Softmax", "LogSoftmax", "MaxPool1d", "MaxPool2d", "AvgPool1d",
          "AvgPool2d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "Flatten", "Unflatten", "Upsample", "Identity",
          "PReLU", "LeakyReLU", "Hardtanh", "ZeroPad2d", "InstanceNorm2d"]
UNKNOWN_OPS = ["Mamba", "", "linear", "Conv4d", "__class__", "os.system", "[/bold]", "\x1b[2J", "Linear\n"]


def torch_signatures() -> dict[str, list[str]]:
    """Constructor argument names of the nn ops, read off torch itself."""
    try:
        import torch.nn as nn
    except ImportError:  # pragma: no cover - the fuzzer still runs on the zoo's own arguments
        return {}
    out = {}
    for name in NN_OPS:
        cls = getattr(nn, name, None)
        if cls is None:
            continue
        try:
            params = inspect.signature(cls.__init__).parameters
        except (TypeError, ValueError):
            continue
        out[name] = [p for p in params if p not in ("self", "device", "dtype", "args", "kwargs")]
    return out


def hostile_values(rng: random.Random) -> object:
    """One argument value an author should not write (or might, by mistake)."""
    pick = rng.randrange(30)
    if pick == 0:
        return None
    if pick == 1:
        return rng.choice([True, False])
    if pick == 2:
        return rng.choice([0, -1, -2, 1, 2, 3, 7])
    if pick == 3:
        return rng.choice([2 ** 31, 2 ** 40, 2 ** 62, 2 ** 63, 2 ** 64, 10 ** 18, 10 ** 30, 10 ** 39, -(10 ** 39)])
    if pick == 4:
        return rng.choice([0.5, -0.5, 1e-300, 1e300, 3.0, 2.5, 1e308])
    if pick == 5:
        return rng.choice(["x", "", "B", "T", "relu", "gelu", "same", "valid", "nearest", "cross_entropy"])
    if pick == 6:
        return rng.choice(["a" * 10_000, "\x1b]0;pwned\x07", "[/bold]", "[red]x[/]", "B*T", "(B+1)", "9**9**9",
                           "\x00", "__import__('os').system('true')", "\u202egnp.exe"])
    if pick == 7:
        return []
    if pick == 8:
        return [rng.choice([1, 2, 3, -1, 0]) for _ in range(rng.randint(1, 4))]
    if pick == 9:
        return [rng.choice([1, "B", None, -1, 2 ** 62, "x", [], 1.5]) for _ in range(rng.randint(1, 6))]
    if pick == 10:
        return [1] * rng.choice([100, 5_000, 50_000])
    if pick == 11:
        return ["B"] * rng.choice([100, 2_000, 20_000])
    if pick == 12:
        return rng.choice([{}, {"a": 1}, {"__class__": "x"}, {"dim": 1}])
    if pick == 13:
        v: object = 1
        for _ in range(rng.choice([5, 50, 90])):
            v = [v]
        return v
    if pick == 14:
        return [[1, 2], [3, 4]]
    if pick == 15:
        return rng.choice([10 ** 9, 10 ** 10, 10 ** 12])
    if pick == 16:
        return rng.choice([64, 128, 256, 512, 768, 1024, 4096])
    if pick == 17:
        return rng.choice([-(2 ** 63), -(10 ** 18), -100])
    if pick == 18:
        return rng.choice([1.0, 0.0, -0.0, 0.999, 100.0])
    if pick == 19:
        return rng.choice([[2 ** 62, 2 ** 62], [10 ** 18] * 8, [2 ** 31] * 4])
    # the rest: ordinary values, so that mutants stay near sound designs and reach deep code
    return rng.choice([1, 2, 3, 4, 8, 16, 32, 64, 0, -1, True, False, 0.1, 1e-5, None, [3, 3], [1, 1], "B"])


def hostile_dim(rng: random.Random) -> object:
    return rng.choice([0, 1, 2, 3, 8, 64, 2 ** 31, 2 ** 62, 2 ** 63 - 1, None, "B", "T", "H", "W", "N",
                       "batch_size", 10 ** 12])


def hostile_train(rng: random.Random) -> dict:
    train = {"loss": rng.choice(["cross_entropy", "mse", "bce_with_logits", "nll", "x", 3]),
             "steps": rng.choice([1, 1000, 10 ** 9, 2 ** 63 - 1, 0, -1, "x", 2.5, None]),
             "batch_size": rng.choice([1, 32, 2 ** 40, 2 ** 63 - 1, 0, "x", [64], None]),
             "device": rng.choice(["A10G", "H100", "TPU9000", "", None, ["A10G"], {"a": 1}])}
    for k in rng.sample(["budget_usd", "seq_len", "vocab_size", "baseline", "utilisation", "optimizer"],
                        rng.randint(0, 4)):
        train[k] = rng.choice([1, 0, -1, 1e-320, 1e300, 2 ** 62, "x", None, {"params": "x"},
                               {"params": 10, "flops": 1e300}, 0.5, [1]])
    return train


# ---- generators ------------------------------------------------------------------------------

@dataclass
class Case:
    kind: str
    text: str
    record: bool = False  # a JSONL batch line (import's path) rather than a design file (verify's)
    index: int = 0


def _zoo(max_bytes: int = 200_000) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted(ARCH.glob("*.json")) if p.stat().st_size <= max_bytes]


def _mutate(g: dict, rng: random.Random, sigs: dict) -> str:
    """Mutate a sound design in place; returns what was done."""
    nodes = g["nodes"]
    ids = [n["id"] for n in nodes] + [i["id"] for i in g["inputs"]]
    done = []
    for _ in range(rng.randint(1, 4)):
        node = rng.choice(nodes)
        r = rng.random()
        if r < 0.35:
            args = node.setdefault("args", {})
            names = list(args) or sigs.get(node["op"], []) or TENSOR_OPS.get(node["op"], []) or ["dim"]
            args[rng.choice(names)] = hostile_values(rng)
            done.append("arg")
        elif r < 0.45:
            args = node.setdefault("args", {})
            pool = sigs.get(node["op"], []) + TENSOR_OPS.get(node["op"], []) + ["bogus", "kernel_size", "dim"]
            args[rng.choice(pool)] = hostile_values(rng)
            done.append("arg-added")
        elif r < 0.5 and node.get("args"):
            del node["args"][rng.choice(list(node["args"]))]
            done.append("arg-dropped")
        elif r < 0.6:
            node["in"] = [rng.choice([node["id"], rng.choice(ids)]) + rng.choice(["", "", ":1", ":2", ":99",
                                                                                    ":-1", ":" + "9" * 30])
                          for _ in range(rng.choice([1, 1, 2, 3]))]
            done.append("rewired")
        elif r < 0.7:
            node["op"] = rng.choice(list(sigs) + list(TENSOR_OPS) + UNKNOWN_OPS[:3])
            done.append("op-swapped")
        elif r < 0.75:
            node["shares"] = rng.choice([node["id"], rng.choice(ids), "nobody"])
            done.append("shares")
        elif r < 0.83:
            spec = rng.choice(g["inputs"])
            shape = list(spec["shape"])
            if shape and rng.random() < 0.7:
                shape[rng.randrange(len(shape))] = hostile_dim(rng)
            else:
                shape = [hostile_dim(rng) for _ in range(rng.choice([0, 1, 2, 5, 50]))]
            spec["shape"] = shape
            if rng.random() < 0.2:
                spec["dtype"] = rng.choice(["int64", "bool", "float16", "int8"])
            done.append("input")
        elif r < 0.9:
            g["train"] = hostile_train(rng)
            done.append("train")
        elif r < 0.93:
            g["outputs"] = rng.choice([[], [node["id"]] * 3, [node["id"] + ":5"], ["nowhere"], g["outputs"] + ids[:3]])
            done.append("outputs")
        elif r < 0.95:
            g["meta"] = {"parser_warnings": rng.choice([7, "not a list", ["w"] * 1000, [{"line": [1] * 50}],
                                                        [{"line": "m.py:3", "message": hostile_values(rng)}],
                                                        {"a": 1}, [None, 3, [], {}]]),
                         "source": hostile_values(rng)}
            done.append("meta")
        else:
            # a loop: this node reads a node after it
            later = nodes[nodes.index(node):]
            node["in"] = list(node.get("in", [])) + [rng.choice(later)["id"]]
            done.append("loop")
    return "+".join(sorted(set(done)))


def _random_design(rng: random.Random, sigs: dict) -> dict:
    """A chain (with some branches and joins) of random ops with random arguments."""
    rank = rng.choice([1, 2, 3, 4, 5])
    inputs = [{"id": "x", "shape": [rng.choice(["B", 1, 2, 4, 8, 16, 32, None]) for _ in range(rank)],
               "dtype": rng.choice(["float32", "float32", "int64", "bool"])}]
    nodes = []
    prev = ["x"]
    ops = list(sigs) + list(TENSOR_OPS)
    for i in range(rng.randint(1, 40)):
        op = rng.choice(ops)
        names = sigs.get(op) or TENSOR_OPS.get(op) or []
        args = {n: hostile_values(rng) for n in rng.sample(names, rng.randint(0, len(names)))}
        ins = [rng.choice(prev) for _ in range(rng.choice([1, 1, 1, 2, 3]))]
        nodes.append({"id": f"n{i}", "op": op, "args": args, "in": ins})
        prev.append(f"n{i}")
    d = {"format": "archgraph/1", "name": "random", "inputs": inputs, "nodes": nodes, "outputs": [prev[-1]]}
    if rng.random() < 0.4:
        d["train"] = hostile_train(rng)
    return d


def _huge_design(rng: random.Random) -> dict:
    """Small argument values, large structures: what makes a quadratic step show."""
    pick = rng.randrange(9)
    n = rng.choice([2_000, 6_000, 12_000])  # the longest stay under 1 MB of text
    x = [{"id": "x", "shape": ["B", 8]}]
    if pick == 0:  # many self-loops
        nodes = [{"id": f"n{i}", "op": "ReLU", "in": [f"n{i}"]} for i in range(n)]
    elif pick == 1:  # one long cycle
        nodes = [{"id": f"n{i}", "op": "Add", "in": ["x", f"n{(i + 1) % n}"]} for i in range(n)]
    elif pick == 2:  # softmaxes hanging off one long chain of adds
        nodes = [{"id": "c0", "op": "Add", "in": ["x", "x"]}]
        nodes += [{"id": f"c{i}", "op": "Add", "in": [f"c{i - 1}", "x"]} for i in range(1, n // 2)]
        nodes += [{"id": f"s{i}", "op": "Softmax", "args": {"dim": -1}, "in": [f"c{n // 2 - 1}"]}
                  for i in range(n // 2)]
    elif pick == 3:  # a wide join
        nodes = [{"id": f"r{i}", "op": "ReLU", "in": ["x"]} for i in range(n)]
        nodes.append({"id": "cat", "op": "Concat", "args": {"dim": 1}, "in": [f"r{i}" for i in range(n)]})
    elif pick == 4:  # a long chain whose size is unknown
        x = [{"id": "x", "shape": ["B", None]}]
        nodes = [{"id": "l0", "op": "Linear", "args": {"in_features": 8, "out_features": 8}, "in": ["x"]}]
        nodes += [{"id": f"l{i}", "op": "Linear", "args": {"in_features": 8, "out_features": 8}, "in": [f"l{i - 1}"]}
                  for i in range(1, n)]
    elif pick == 5:  # a long shape through a few ops
        r = rng.choice([100, 1_000, 1_024, 20_000])
        x = [{"id": "x", "shape": [rng.choice([1, "B", "H"]) for _ in range(r)]}]
        nodes = [{"id": "a", "op": "ReLU", "in": ["x"]}, {"id": "f", "op": "Flatten", "args": {"start_dim": 0},
                                                          "in": ["a"]},
                 {"id": "m", "op": "Mean", "args": {"dim": list(range(min(r, 1000)))}, "in": ["a"]}]
    elif pick == 6:  # a long shape through many ops
        x = [{"id": "x", "shape": ["B"] + [1] * 2_000}]
        nodes = [{"id": "a0", "op": "ReLU", "in": ["x"]}]
        nodes += [{"id": f"a{i}", "op": "ReLU", "in": [f"a{i - 1}"]} for i in range(1, 200)]
    elif pick == 7:  # a deep chain of Linear (the verifier's own benchmark shape, longer)
        nodes = [{"id": f"l{i}", "op": "Linear", "args": {"in_features": 8, "out_features": 8},
                  "in": [f"l{i - 1}" if i else "x"]} for i in range(n)]
    else:  # long symbolic reshapes
        r = rng.choice([100, 2_000, 10_000])
        nodes = [{"id": "r", "op": "Reshape", "args": {"shape": ["B"] + ["T"] * r}, "in": ["x"]},
                 {"id": "s", "op": "Reshape", "args": {"shape": [-1]}, "in": ["r"]}]
    return {"format": "archgraph/1", "name": f"huge-{pick}", "inputs": x, "nodes": nodes, "outputs": [nodes[-1]["id"]]}


def _damaged_text(rng: random.Random, g: dict) -> str:
    text = json.dumps(g)
    pick = rng.randrange(10)
    if pick == 0:
        return '{"format": "archgraph/1", "meta": ' + "[" * rng.choice([200, 5_000, 100_000]) + "}"
    if pick == 1:
        return text.replace('"outputs"', '"big": ' + "9" * rng.choice([50, 4_301, 5_000]) + ', "outputs"', 1)
    if pick == 2:
        return text.replace('"outputs"', '"x": ' + rng.choice(["NaN", "Infinity", "-Infinity", "1e999"])
                            + ', "outputs"', 1)
    if pick == 3:
        return text.replace('"name": "', '"name": "\\ud800', 1)
    if pick == 4:
        return "\ufeff" + text
    if pick == 5:
        return text[: rng.randrange(len(text))]
    if pick == 6:
        i = rng.randrange(len(text))
        return text[:i] + rng.choice(['"', "{", "]", "\\", "\x00", "\n"]) + text[i + 1:]
    if pick == 7:
        return text.replace('"id": "', '"id": "\\n', 1)
    if pick == 8:
        return json.dumps([g])
    return text.replace('"format": "archgraph/1"', '"format": "archgraph/2"')


def _as_record(rng: random.Random, text: str, i: int) -> str:
    """The design as a JSONL batch line, its record fields sometimes hostile."""
    fields = {"id": f"fz-{i}", "author": "agent", "model": "model-a", "task_set": "fuzz", "run": "r1"}
    r = rng.random()
    if r < 0.4:
        key = rng.choice(["id", "author", "model", "task_set", "run", "parent", "reference", "error"])
        fields[key] = rng.choice([None, 3, "", " ", "\x1b[2J", "[/]", "x" * 5_000, "a\nb", "\u202e", ["x"],
                                  {"a": 1}, True, "human", "\ud800"])
    rec = json.dumps(fields, ensure_ascii=rng.random() < 0.5)
    if rng.random() < 0.1 and "error" not in fields:
        return rec[:-1] + ', "error": "could not generate"}'
    return rec[:-1] + ', "graph": ' + text + "}"


def generate(n: int, seed: int = 0):
    """`n` cases, the same for the same seed."""
    rng = random.Random(seed)
    sigs = torch_signatures()
    zoo = _zoo()
    small_zoo = [g for g in zoo if len(g["nodes"]) <= 120]
    for i in range(n):
        r = rng.random()
        if r < 0.55:
            g = copy.deepcopy(rng.choice(small_zoo if rng.random() < 0.7 else zoo))
            kind = "zoo:" + _mutate(g, rng, sigs)
            text = json.dumps(g)
        elif r < 0.8:
            g = _random_design(rng, sigs)
            kind = "random"
            text = json.dumps(g)
        elif r < 0.87:
            g = _huge_design(rng)
            kind = "huge:" + g["name"]
            text = json.dumps(g)
        else:
            g = copy.deepcopy(rng.choice(small_zoo))
            kind = "damaged"
            text = _damaged_text(rng, g)
        if rng.random() < 0.25:
            yield Case(kind, _as_record(rng, text, i), record=True, index=i)
        else:
            yield Case(kind, text, index=i)


# ---- running one case --------------------------------------------------------------------------

@dataclass
class Outcome:
    index: int
    kind: str
    record: bool
    status: str  # answered | refused | traceback | hang | memory
    cpu_s: float
    peak_mb: float | None
    size: int
    site: str = ""
    error: str = ""


class _Hang(BaseException):
    pass


def _site(exc: BaseException) -> str:
    """The innermost frame in the project's code that the exception passed through."""
    tb = traceback.extract_tb(exc.__traceback__)
    ours = [f for f in tb if "archcurator" in f.filename or "/core/" in f.filename or "/store/" in f.filename]
    f = (ours or tb or [None])[-1]
    if f is None:
        return "?"
    name = f.filename.split("archcurator/")[-1] if "archcurator/" in f.filename else Path(f.filename).name
    return f"{name}:{f.lineno} ({f.name})"


def process(case: Case) -> str:
    """What `verify --json` (a design file) or `import` (a batch line) does with the text; returns
    "answered" or "refused", raises anything else."""
    from archcurator.core.graph import Design, DesignError
    from archcurator.core.verify import verify_graph

    if case.record:
        from archcurator.core.imports import Defaults, Item, Refused
        from archcurator.core.imports.records import record
        from archcurator.core.imports.rows import build_rows

        try:
            rec = record(Item("fuzz.jsonl", 1, case.text), Defaults())
            build_rows(rec, "fuzz.jsonl:1", None)
        except Refused:
            return "refused"
        return "answered"
    try:
        design = Design.from_json(case.text, source="fuzz.json")
    except DesignError:
        return "refused"
    report = verify_graph(design)
    json.dumps(report.to_dict(), allow_nan=False)
    return "answered"


def run_case(case: Case, hang_s: float, measure_memory: bool = True) -> Outcome:
    size = len(case.text.encode("utf-8", "surrogatepass"))

    def on_prof(signum, frame):
        raise _Hang()

    old = signal.signal(signal.SIGPROF, on_prof)
    signal.setitimer(signal.ITIMER_PROF, hang_s)
    start = time.process_time()
    try:
        status = process(case)
        site = error = ""
    except _Hang:
        return Outcome(case.index, case.kind, case.record, "hang", time.process_time() - start, None, size)
    except MemoryError:
        return Outcome(case.index, case.kind, case.record, "memory", time.process_time() - start, None, size)
    except Exception as exc:  # noqa: BLE001 - the point: every one of these is a finding of the fuzzer
        status, site, error = "traceback", _site(exc), f"{type(exc).__name__}: {str(exc)[:200]}"
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, old)
    cpu = time.process_time() - start
    peak = None
    if measure_memory and size < SMALL_BYTES and status != "traceback":
        tracemalloc.start()
        signal.signal(signal.SIGPROF, on_prof)
        signal.setitimer(signal.ITIMER_PROF, hang_s * 5)  # tracemalloc slows the walk several times
        try:
            process(case)
        except (_Hang, Exception):  # noqa: BLE001 - the first run said what happens; this one only weighs it
            pass
        finally:
            signal.setitimer(signal.ITIMER_PROF, 0)
            signal.signal(signal.SIGPROF, old)
            peak = tracemalloc.get_traced_memory()[1] / 2 ** 20
            tracemalloc.stop()
    return Outcome(case.index, case.kind, case.record, status, cpu, peak, size, site, error)


# ---- the run ------------------------------------------------------------------------------------

_HANG = 20.0


def _init(hang_s: float, limit_mb: int) -> None:
    global _HANG
    _HANG = hang_s
    if limit_mb:
        resource.setrlimit(resource.RLIMIT_AS, (limit_mb << 20, limit_mb << 20))
    # warm the imports, so that the first design does not pay for them
    import archcurator.core.imports.rows  # noqa: F401
    import archcurator.core.verify  # noqa: F401


def _work(case: Case) -> Outcome:
    return run_case(case, _HANG)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="fuzz_designs", description=__doc__.splitlines()[0])
    ap.add_argument("--designs", type=int, default=5000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--hang", type=float, default=20.0, help="CPU seconds after which a design counts as a hang")
    ap.add_argument("--memory-limit", type=int, default=4096, help="address space of a worker, MB")
    ap.add_argument("--json", help="write every outcome to this file")
    ap.add_argument("--case", type=int, action="append", help="only write case N's text to case-N.json(l), and run it")
    args = ap.parse_args(argv)
    if args.case:
        for case in generate(max(args.case) + 1, args.seed):
            if case.index in args.case:
                out = Path(f"case-{case.index}.{'jsonl' if case.record else 'json'}")
                out.write_text(case.text, encoding="utf-8", errors="surrogatepass")
                print(out, case.kind, run_case(case, args.hang))
        return 0

    t0 = time.time()
    cases = generate(args.designs, args.seed)
    with mp.get_context("spawn").Pool(args.workers, initializer=_init, initargs=(args.hang, args.memory_limit),
                                      maxtasksperchild=200) as pool:
        outcomes = list(pool.imap(_work, cases, chunksize=4))
    wall = time.time() - t0

    status = Counter(o.status for o in outcomes)
    print(f"fuzzed {len(outcomes):,} designs (seed {args.seed}) in {wall:.0f} s wall: "
          + ", ".join(f"{k} {v:,}" for k, v in sorted(status.items())))
    lines = sum(o.record for o in outcomes)
    print(f"  as design files {len(outcomes) - lines:,}, as batch lines {lines:,}; kinds: "
          + ", ".join(f"{k} {v}" for k, v in Counter(o.kind.split(':')[0] for o in outcomes).items()))
    sites = defaultdict(list)
    for o in outcomes:
        if o.status == "traceback":
            sites[o.site].append(o)
    for site, os_ in sorted(sites.items(), key=lambda kv: -len(kv[1])):
        print(f"  TRACEBACK x{len(os_)} at {site}: {os_[0].error}  (e.g. case {os_[0].index}, {os_[0].kind})")
    for o in outcomes:
        if o.status in ("hang", "memory"):
            print(f"  {o.status.upper()}: case {o.index}, {o.kind} ({o.size:,} bytes)")
    cpu = sorted(outcomes, key=lambda o: -o.cpu_s)
    print("  slowest (CPU s): " + ", ".join(f"{o.cpu_s:.2f} #{o.index} {o.kind} ({o.size:,} B)" for o in cpu[:5]))
    weighed = [o for o in outcomes if o.peak_mb is not None]
    heavy = sorted(weighed, key=lambda o: -o.peak_mb)
    print("  heaviest (peak MB): " + ", ".join(f"{o.peak_mb:.1f} #{o.index} {o.kind} ({o.size:,} B)"
                                              for o in heavy[:5]))
    small = [o for o in outcomes if o.size < SMALL_BYTES]
    over_time = [o for o in small if o.cpu_s > BUDGET_S or o.status == "hang"]
    over_mem = [o for o in weighed if o.peak_mb > BUDGET_MB] + [o for o in small if o.status == "memory"]
    large = [o for o in outcomes if o.size >= SMALL_BYTES]
    if large:
        print(f"  {len(large)} design(s) of 1 MB or more (outside the budgets): slowest "
              f"{max(o.cpu_s for o in large):.2f} s CPU; " + ", ".join(
                  f"{o.status} #{o.index}" for o in large if o.status in ("hang", "memory", "traceback")))
    n_tb = status.get("traceback", 0)
    median_cpu = sorted(o.cpu_s for o in outcomes)[len(outcomes) // 2]
    print(f"acceptance: tracebacks {n_tb} (goal 0) [{'OK' if not n_tb else 'FAIL'}]; "
          f"of {len(small):,} designs under 1 MB: over {BUDGET_S:g} s CPU {len(over_time)} (goal 0) "
          f"[{'OK' if not over_time else 'FAIL'}], over {BUDGET_MB:g} MB {len(over_mem)} (goal 0) "
          f"[{'OK' if not over_mem else 'FAIL'}]; slowest {max(o.cpu_s for o in small):.2f} s, heaviest "
          f"{max((o.peak_mb for o in weighed), default=0):.0f} MB; median CPU {median_cpu:.4f} s")
    if args.json:
        Path(args.json).write_text(json.dumps([asdict(o) for o in outcomes], indent=1))
    return 1 if n_tb or over_time or over_mem else 0


if __name__ == "__main__":
    sys.exit(main())

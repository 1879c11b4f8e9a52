"""Pathological and hostile inputs through the real command line: design files, JSONL batches,
stores, Python sources and ArchitectureIQ bundles.

    python bench/hostile_inputs.py [--only KIND] [--timeout 60] [--memory-limit 6144] [--json OUT]

Each input is written into a fresh folder and given to `archcurator` (verify,
import, parse, report, archive, kb) in a child process with a wall-time limit
and an address-space limit, as a hostile batch would meet it. For each run it
records the exit code, the wall time, the child's peak resident memory
(`wait4`), and judges the answer:

- **traceback**: Python's traceback on stderr;
- **hang**: killed at the time limit; **memory**: died at the memory limit;
- **not one line**: exit 2 without exactly one `archcurator COMMAND: …` line;
- **escape**: a control character (ESC, BEL, …) from the input reached stdout or
  stderr raw, where a terminal would obey it;
- **executed**: a marker file that the hostile sources and bundles write if
  anything runs them exists afterwards;
- **lost**: a store lost committed designs.

It prints one line per input and a summary by owner (the room of the code that
must change: each failing row names the command and the input, so the fix can
be found). Exit 1 when any row fails.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import resource
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TINY = json.loads((ROOT / "tests" / "fixtures" / "tiny_cnn.json").read_text())
CONTROL = set(range(0, 32)) - {9, 10, 13} | {127} | set(range(0x80, 0xA0))


@dataclass
class Case:
    kind: str  # design | batch | store | source | bundle
    name: str
    args: list  # the command line after `archcurator`, {dir} replaced by the case's folder
    owner: str  # whose room the fix belongs to when this row fails
    expect: tuple = (0, 1, 2)  # acceptable exit codes
    setup: object = None  # fn(folder) -> None, writes the inputs
    check: object = None  # fn(folder) -> str | None: a problem found after the run
    limit_fsize: int | None = None


@dataclass
class Row:
    kind: str
    name: str
    owner: str
    rc: int | None
    seconds: float
    peak_mb: float
    problems: list = field(default_factory=list)
    stderr_tail: str = ""


# ---- the inputs -----------------------------------------------------------------------------

def design(nodes, inputs=None, outputs=None, **top) -> dict:
    d = {"format": "archgraph/1", "name": "hostile", "inputs": inputs or [{"id": "x", "shape": ["B", 8]}],
         "nodes": nodes, "outputs": outputs or [nodes[-1]["id"]]}
    d.update(top)
    return d


def write(path: Path, text: str | bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8", errors="surrogatepass")


LINEAR = {"id": "fc", "op": "Linear", "args": {"in_features": 8, "out_features": 4}, "in": ["x"]}
DESIGN_TEXTS = {
    "deep-nesting": '{"format": "archgraph/1", "meta": ' + "[" * 200_000 + "]" * 200_000 + "}",
    "5000-digit-int": json.dumps(design([LINEAR])).replace('"out_features": 4', '"out_features": ' + "9" * 5000),
    "nan": json.dumps(design([LINEAR], train={"budget_usd": 1})).replace("1}", "NaN}"),
    "infinity": json.dumps(design([LINEAR], train={"utilisation": 1})).replace("1}", "Infinity}"),
    "1e999": json.dumps(design([LINEAR], train={"budget_usd": 1})).replace("1}", "1e999}"),
    "tiny-utilisation": json.dumps(design([LINEAR], train={"utilisation": 1e-320, "steps": 10 ** 18})),
    "lone-surrogate": json.dumps(design([LINEAR])).replace('"hostile"', '"\\ud800"'),
    "bom": "\ufeff" + json.dumps(design([LINEAR])),
    "id-newline": json.dumps(design([dict(LINEAR, id="fc\n")])),
    "escape-name": json.dumps(design([LINEAR], name="\x1b]0;pwned\x07\x1b[2J")),
    "markup-name": json.dumps(design([LINEAR], name="[/bold][red]x[/]")),
    "markup-op": json.dumps(design([dict(LINEAR, op="[/]")])),
    "escape-op": json.dumps(design([dict(LINEAR, op="\x1b]52;c;cHduZWQ=\x07")])),
    "batch-size-string": json.dumps(design([LINEAR], train={"batch_size": "x", "steps": 10 ** 6})),
    "selfloop-add-softmax": json.dumps(design([{"id": "a", "op": "Add", "in": ["x", "a"]},
                                               {"id": "s", "op": "Softmax", "args": {"dim": -1}, "in": ["a"]}])),
    "mha-embed-1e10": json.dumps(design([{"id": "m", "op": "MultiheadAttention",
                                          "args": {"embed_dim": 10 ** 10, "num_heads": 3}, "in": ["x"]}],
                                        inputs=[{"id": "x", "shape": ["T", "B", 8]}])),
    "lstm-1e9-layers": json.dumps(design([{"id": "l", "op": "LSTM", "args": {"input_size": 8, "hidden_size": 8,
                                                                             "num_layers": 10 ** 9}, "in": ["x"]}],
                                         inputs=[{"id": "x", "shape": ["T", "B", 8]}], outputs=["l:0"])),
    "16k-self-loops": json.dumps(design([{"id": f"n{i}", "op": "ReLU", "in": [f"n{i}"]} for i in range(16_000)],
                                        outputs=["n0"])),
    "list-where-int": json.dumps(design([{"id": "r", "op": "GRU", "args": {"input_size": ["B"] * 20_000,
                                                                           "hidden_size": 650}, "in": ["x"]}])),
    "rank-20000": json.dumps(design([{"id": "f", "op": "Flatten", "args": {"start_dim": 0}, "in": ["x"]}],
                                    inputs=[{"id": "x", "shape": ["H"] * 20_000}])),
    "truncated": json.dumps(design([LINEAR]))[:-7],
    "not-utf8": b'{"format": "archgraph/1", "name": "\xff\xfe"}',
    "empty": "",
    "array": "[1, 2, 3]",
}


def _design_cases() -> list[Case]:
    cases = []
    for name, text in DESIGN_TEXTS.items():
        def setup(d, text=text):
            write(d / "d.json", text)
        cases.append(Case("design", name, ["verify", "{dir}/d.json", "--json"], "i12 (core door/verify)",
                          setup=setup))
        if name in ("escape-name", "markup-name", "markup-op", "escape-op"):  # the text table shows the names
            cases.append(Case("design", name + " (table)", ["verify", "{dir}/d.json"], "i15 (sanitiser)",
                              setup=setup))
    specials = {
        "fifo": lambda d: os.mkfifo(d / "d.json"),
        "link-to-dev-zero": lambda d: (d / "d.json").symlink_to("/dev/zero"),
        "folder-named-json": lambda d: (d / "d.json").mkdir(),
        "10GB-sparse": lambda d: os.truncate(_touch(d / "d.json"), 10 << 30),
        "escape-in-file-name": lambda d: write(d / "\x1b[2Jd.json", "{"),
    }
    for name, setup in specials.items():
        target = "{dir}/\x1b[2Jd.json" if name == "escape-in-file-name" else "{dir}/d.json"
        owner = "i15 (sanitiser)" if name == "escape-in-file-name" else "i12 (core door)"
        cases.append(Case("design", name, ["verify", target, "--json"], owner, expect=(2,), setup=setup))
        cases.append(Case("design", name + " (run)", ["run", target, "--no-record", "--json"], owner,
                          expect=(2,), setup=setup))
    return cases


def _touch(p: Path) -> Path:
    p.touch()
    return p


def rec(i, **kw) -> str:
    r = {"id": f"d{i}", "author": "agent", "model": "m", "task_set": "t", "run": "r1", "graph": TINY}
    r.update(kw)
    return json.dumps(r)


BATCH_LINES = {
    "deep-line": "[" * 200_000,
    "digits-line": rec(2).replace('"r1"', "9" * 5000),
    "nan-line": rec(2).replace('"r1"', "NaN"),
    "surrogate-model": rec(2, model="\ud800"),
    "escape-model": rec(2, model="\x1b]0;pwned\x07"),
    "markup-model": rec(2, model="[/bold]"),
    "markup-id": rec(2, id="[/]"),
    "newline-id": rec(2, id="d2\n"),
    "bidi-task-set": rec(2, task_set="a\u202eb"),
    "nul-run": rec(2, run="\x00"),
    "list-author": rec(2, author=["agent"]),
    "huge-model": rec(2, model="m" * 1_000_000),
    "error-and-graph": rec(2, error="x"),
    "graph-array": rec(2, graph=[1, 2]),
    "graph-5000-digit": rec(2).replace('"in_channels": 3', '"in_channels": ' + "7" * 5000),
    "batch-size-x": rec(2, graph=dict(TINY, train={"batch_size": "x"})),
    "selfloop": rec(2, graph=json.loads(DESIGN_TEXTS["selfloop-add-softmax"])),
    "16k-self-loops": rec(2, graph=json.loads(DESIGN_TEXTS["16k-self-loops"])),
}


def _batch_cases() -> list[Case]:
    cases = []
    for name, line in BATCH_LINES.items():
        def setup(d, line=line):
            write(d / "b.jsonl", rec(1) + "\n" + line + "\n" + rec(3) + "\n")

        def check(d):
            return _stored_ids_problem(d / "s.duckdb", {"d1", "d3"})

        owner = "i15 (sanitiser)" if name.startswith(("markup", "escape")) else "i12 (import door)"
        cases.append(Case("batch", name, ["import", "{dir}/b.jsonl", "--db", "{dir}/s.duckdb"], owner,
                          expect=(0, 1), setup=setup, check=check))
    cases.append(Case("batch", "bom-line-1", ["import", "{dir}/b.jsonl", "--db", "{dir}/s.duckdb"],
                      "i12 (import door)", expect=(0,),
                      setup=lambda d: write(d / "b.jsonl", b"\xef\xbb\xbf" + (rec(1) + "\n").encode())))
    cases.append(Case("batch", "deep-first-line", ["import", "{dir}/b.jsonl", "--db", "{dir}/s.duckdb"],
                      "i12 (import door)", expect=(1,),
                      setup=lambda d: write(d / "b.jsonl", "[" * 200_000 + "\n" + rec(1) + "\n")))
    cases.append(Case("batch", "fifo-batch", ["import", "{dir}/b.jsonl", "--db", "{dir}/s.duckdb"],
                      "i12 (import door)", expect=(2,), setup=lambda d: os.mkfifo(d / "b.jsonl")))
    return cases


def _stored_ids_problem(db: Path, want: set) -> str | None:
    if not db.exists():
        return "no store was written"
    try:
        import duckdb

        con = duckdb.connect(str(db), read_only=True)
        got = {r[0] for r in con.execute("SELECT id FROM designs").fetchall()}
        con.close()
    except Exception as exc:  # noqa: BLE001 - what the bench reports
        return f"store unreadable: {type(exc).__name__}: {exc}"
    if not want <= got:
        return f"lost: stored {sorted(got)}, expected at least {sorted(want)}"
    return None


def _good_store(d: Path) -> Path:
    db = d / "s.duckdb"
    write(d / "good.jsonl", "".join(rec(i) + "\n" for i in range(20)))
    subprocess.run([sys.executable, "-m", "archcurator", "import", str(d / "good.jsonl"), "--db", str(db), "-q"],
                   check=True, capture_output=True)
    return db


def _store_cases() -> list[Case]:
    def truncated(keep):
        def setup(d):
            db = _good_store(d)
            os.truncate(db, int(db.stat().st_size * keep))
        return setup

    def newer(d):
        import duckdb

        db = _good_store(d)
        con = duckdb.connect(str(db))
        con.execute("INSERT INTO schema_version VALUES (9999, 'future', now())")
        con.close()

    def sqlite(d):
        con = sqlite3.connect(d / "s.duckdb")
        con.execute("CREATE TABLE t (a)")
        con.commit()
        con.close()

    def unwritable(d):
        db = _good_store(d)
        if os.geteuid() == 0:
            subprocess.run(["chattr", "+i", str(db)], capture_output=True)
        else:
            db.chmod(0o444)
            d.chmod(0o555)

    def full(d):
        _good_store(d)
        big = json.loads((ROOT / "assets" / "architectures" / "resnet50.json").read_text())
        write(d / "big.jsonl", "".join(rec(100 + i, graph=big) + "\n" for i in range(300)))

    setups = {
        "truncated-60%": truncated(0.6), "truncated-5%": truncated(0.05), "newer-schema": newer,
        "text-11-bytes": lambda d: write(d / "s.duckdb", "hello world"), "empty": lambda d: write(d / "s.duckdb", ""),
        "random-bytes": lambda d: write(d / "s.duckdb", os.urandom(100_000)), "sqlite": sqlite,
        "folder": lambda d: (d / "s.duckdb").mkdir(), "under-a-file": lambda d: write(d / "f", "x"),
        "unwritable": unwritable,
    }
    cases = []
    for name, setup in setups.items():
        db = "{dir}/f/s.duckdb" if name == "under-a-file" else "{dir}/s.duckdb"
        for args in (["report", "refusals", "--json"], ["archive", "d1"], ["import", "{dir}/b.jsonl"]):
            def full_setup(d, setup=setup):
                write(d / "b.jsonl", rec(50) + "\n")
                setup(d)
            # a store that may only be read still serves reports; writing to it is one line
            expect = (0,) if name == "unwritable" and args[0] == "report" else (2,)
            cases.append(Case("store", f"{name} ({args[0]})", args + ["--db", db], "i12 (store faults)",
                              expect=expect, setup=full_setup))
    # names DuckDB reads as data files (into a throwaway in-memory database) or would make one of
    for name, setup in {"s.json": lambda d: write(d / "s.json", '{"a": 1}\n'),
                        "s.csv": lambda d: write(d / "s.csv", "a,b\n1,2\n"), "new.parquet": lambda d: None}.items():
        def data_setup(d, setup=setup):
            write(d / "b.jsonl", rec(50) + "\n")
            setup(d)
        cases.append(Case("store", f"data file {name} (import)", ["import", "{dir}/b.jsonl", "--db", "{dir}/" + name],
                          "i12 (store faults)", expect=(2,), setup=data_setup))
    cases.append(Case("store", "full-disk (import)", ["import", "{dir}/big.jsonl", "--db", "{dir}/s.duckdb", "-q"],
                      "i12 (store faults)", expect=(2,), setup=full,
                      check=lambda d: _stored_ids_problem(d / "s.duckdb", {f"d{i}" for i in range(20)}),
                      limit_fsize=1_600_000))
    return cases


MARKER = "EXECUTED-MARKER"
def module(init: str, prelude: str = "", forward: str = "return self.fc(x)") -> str:
    """A one-class model file: PRELUDE at module level, INIT lines in __init__."""
    body = "".join(f"        {line}\n" for line in init.splitlines())
    return (f"import torch.nn as nn\n{prelude}class M(nn.Module):\n    def __init__(self):\n"
            f"        super().__init__()\n{body}    def forward(self, x):\n        {forward}\n")


FC = "self.fc = nn.Linear(4, 2)"
SOURCES = {
    "runs-at-import": module(FC, "import os\nopen({marker!r}, 'w').write('x')\nos.system('touch ' + {marker!r})\n"),
    "exec-in-init": module("exec(\"open({marker!r}, 'w').write('x')\")\n" + FC),
    "string-doubling": module("s = 'a'\nfor _ in range(64):\n    s = s + s\n" + FC),
    "list-doubling": module("s = [1]\nfor _ in range(64):\n    s = s + s\n" + FC),
    "nested-comprehensions": module("n = [[[[i * j * k * m for i in range(300)] for j in range(300)] for k in "
                                    "range(300)] for m in range(300)]\n" + FC),
    "endless-loop": module("i = 0\nwhile True:\n    i += 1\n" + FC),
    "huge-layer-loop": module("self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(10 ** 7)])",
                              forward="return self.layers[0](x)"),
    "deep-recursion": module("f(0)\n" + FC, "def f(n):\n    return f(n + 1)\n"),
    "deep-expression": module("self.fc = nn.Linear(" + "(" * 5000 + "4" + ")" * 5000 + ", 2)"),
    "escape-in-docstring": module('"""\x1b]0;pwned\x07"""\n' + FC),
    "not-utf8": b"import torch.nn as nn\nx = '\xff\xfe'\n",
    "syntax-error": "class M(:\n",
}


def _source_cases() -> list[Case]:
    cases = []
    for name, text in SOURCES.items():
        def setup(d, text=text):
            body = text if isinstance(text, bytes) else text.format(marker=str(d / MARKER))
            write(d / "m.py", body)

        def check(d):
            return "the source was executed (marker written)" if (d / MARKER).exists() else None

        cases.append(Case("source", name, ["parse", "{dir}/m.py", "--entry", "M", "--input", "2,4", "--json"],
                          "i14 (parser budget)", setup=setup, check=check, expect=(0, 2)))
        cases.append(Case("source", name + " (import)", ["import", "{dir}/m.py", "--entry", "M", "--input", "2,4",
                                                         "--db", "{dir}/s.duckdb"],
                          "i14 (parser budget)", setup=setup, check=check))
    cases.append(Case("source", "fifo-source", ["parse", "{dir}/m.py", "--entry", "M", "--json"],
                      "i14 (parser)", expect=(2,), setup=lambda d: os.mkfifo(d / "m.py")))
    return cases


def _bundle_helper():
    spec = importlib.util.spec_from_file_location("aiq_bundle", ROOT / "tests" / "kb" / "aiq_bundle.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _bundle_cases() -> list[Case]:
    def make(mutate):
        def setup(d):
            helper = _bundle_helper()
            root = helper.write(d / "bundle", d / MARKER)
            mutate(root)
        return setup

    def qfile(root: Path) -> Path:
        return next(root.rglob("question.json"))

    def set_choice(key, value):
        def mutate(root):
            q = qfile(root)
            body = json.loads(q.read_text())
            body["choices"][0][key] = value
            body["choices"][0]["candidate_id"] = "nowhere"
            q.write_text(json.dumps(body))
        return mutate

    def replace_spec(how):
        def mutate(root):
            spec = next(root.rglob("candidate_spec.json"))
            spec.unlink()
            how(spec)
        return mutate

    def outside(root: Path):
        o = root.parent / "outside" / "cand"
        o.mkdir(parents=True)
        (o / "candidate_spec.json").write_text(next(root.rglob("candidate_spec.json")).read_text())

    mutations = {
        "sound": lambda root: None,
        "candidate-path-dotdot": lambda root: (outside(root), set_choice("candidate_path", "../outside/cand")(root)),
        "candidate-path-absolute": lambda root: (outside(root), set_choice("candidate_path",
                                                                            str(root.parent / "outside/cand"))(root)),
        "spec-link-to-dev-zero": replace_spec(lambda p: p.symlink_to("/dev/zero")),
        "spec-fifo": replace_spec(lambda p: os.mkfifo(p)),
        "spec-deep-json": replace_spec(lambda p: p.write_text("[" * 200_000)),
        "question-deep-json": lambda root: qfile(root).write_text("[" * 200_000),
        "question-not-object": lambda root: qfile(root).write_text("[1, 2]"),
        "question-choices-not-list": lambda root: qfile(root).write_text(json.dumps({"choices": 5})),
        "dataset-spec-array": lambda root: next(root.rglob("dataset_spec.json")).write_text("[]"),
        "train-pt-fifo": lambda root: (next(root.rglob("train.pt")).unlink(), os.mkfifo(next(
            root.rglob("dataset_spec.json")).parent / "train.pt")),
        "train-pt-garbage": lambda root: next(root.rglob("train.pt")).write_bytes(os.urandom(5000)),
        "escape-question-id": lambda root: _edit_question(qfile(root), question_id="\x1b]0;pwned\x07"),
    }
    # a candidate outside the bundle must not be read: the question is rejected (exit 1)
    outside_reads = {"candidate-path-dotdot", "candidate-path-absolute"}
    cases = []
    for name, mutate in mutations.items():
        def check(d):
            return "bundle code was executed (marker written)" if (d / MARKER).exists() else None
        cases.append(Case("bundle", name, ["import", "{dir}/bundle", "--db", "{dir}/s.duckdb"],
                          "i16 (bundle confinement)", setup=make(mutate), check=check,
                          expect=(1,) if name in outside_reads else (0, 1, 2)))
    return cases


def _edit_question(q: Path, **fields) -> None:
    body = json.loads(q.read_text())
    body.update(fields)
    q.write_text(json.dumps(body))


def all_cases() -> list[Case]:
    return _design_cases() + _batch_cases() + _store_cases() + _source_cases() + _bundle_cases()


# ---- running ----------------------------------------------------------------------------------

def run_case(case: Case, workdir: Path, timeout: float, memory_mb: int, heavy_mb: float = 1024) -> Row:
    d = workdir
    d.mkdir(parents=True, exist_ok=True)
    try:
        if case.setup:
            case.setup(d)
    except Exception as exc:  # noqa: BLE001 - a case that cannot be set up here is reported, not run
        return Row(case.kind, case.name, case.owner, None, 0.0, 0.0, [f"setup failed: {exc}"])
    args = [a.replace("{dir}", str(d)) if isinstance(a, str) else a for a in case.args]

    def limits():
        os.setsid()
        if memory_mb:
            resource.setrlimit(resource.RLIMIT_AS, (memory_mb << 20, memory_mb << 20))
        if case.limit_fsize:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (case.limit_fsize, case.limit_fsize))

    out, err = d / ".stdout", d / ".stderr"
    start = time.monotonic()
    with open(out, "wb") as fo, open(err, "wb") as fe:
        proc = subprocess.Popen([sys.executable, "-m", "archcurator", *args], stdout=fo, stderr=fe,
                                stdin=subprocess.DEVNULL, preexec_fn=limits, cwd=d,
                                env={**os.environ, "ARCHCURATOR_DB_TIMEOUT": "2"})
        hung = False
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() - start > timeout:
                hung = True
                os.killpg(proc.pid, signal.SIGKILL)
                pid, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.05)
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # anything it left behind
        except ProcessLookupError:
            pass
    seconds = time.monotonic() - start
    rc = os.waitstatus_to_exitcode(status)
    stdout, stderr = out.read_bytes(), err.read_bytes()
    row = Row(case.kind, case.name, case.owner, rc, round(seconds, 2), round(usage.ru_maxrss / 1024, 1),
              stderr_tail=stderr.decode("utf-8", "replace")[-300:])
    text_err = stderr.decode("utf-8", "replace")
    if hung:
        row.problems.append(f"hang (killed after {timeout:g} s)")
    elif "MemoryError" in text_err or rc in (-9, 137) and not hung:
        row.problems.append("memory (died at the address-space limit)")
    if not hung and row.peak_mb > heavy_mb:
        row.problems.append(f"memory: peak {row.peak_mb:.0f} MB (over {heavy_mb:g} MB)")
    if "Traceback (most recent call last)" in text_err:
        row.problems.append("traceback: " + text_err.strip().splitlines()[-1][:160])
    elif not hung and rc not in case.expect:
        row.problems.append(f"exit {rc}, expected {'/'.join(map(str, case.expect))}")
    if rc == 2 and "Traceback" not in text_err:
        lines = [line for line in text_err.splitlines() if line.strip()]
        if len(lines) != 1 or not lines[0].startswith("archcurator "):
            row.problems.append(f"not one line ({len(lines)} lines on stderr)")
    raw = [c for c in (stdout + stderr).decode("utf-8", "replace") if ord(c) in CONTROL]
    if raw:
        row.problems.append(f"escape: {len(raw)} control character(s) reached the terminal "
                            f"(e.g. U+{ord(raw[0]):04X})")
    if case.check:
        try:
            problem = case.check(d)
        except Exception as exc:  # noqa: BLE001
            problem = f"check failed: {exc}"
        if problem:
            row.problems.append(problem)
    return row


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="hostile_inputs", description=__doc__.splitlines()[0])
    ap.add_argument("--only", choices=("design", "batch", "store", "source", "bundle"), action="append")
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--memory-limit", type=int, default=6144, help="address space of each command, MB")
    ap.add_argument("--heavy", type=float, default=1024, help="peak resident MB past which a run fails")
    ap.add_argument("--json", help="write every row to this file")
    args = ap.parse_args(argv)
    cases = [c for c in all_cases() if not args.only or c.kind in args.only]
    rows = []
    base = Path(tempfile.mkdtemp(prefix="archcurator-hostile-"))
    try:
        for i, case in enumerate(cases):
            row = run_case(case, base / f"{i:03d}", args.timeout, args.memory_limit, args.heavy)
            rows.append(row)
            flag = "ok" if not row.problems else "FAIL: " + "; ".join(row.problems)
            print(f"{case.kind:7} {case.name[:40]:40} {' '.join(map(str, case.args[:2]))[:22]:22} rc={row.rc!s:>4} "
                  f"{row.seconds:7.2f} s {row.peak_mb:8.1f} MB  {flag}", flush=True)
    finally:
        if os.geteuid() == 0:  # the unwritable stores were made immutable
            for p in base.glob("*/s.duckdb"):
                subprocess.run(["chattr", "-i", str(p)], capture_output=True)
        for p in base.glob("*"):
            p.chmod(0o755)
        shutil.rmtree(base, ignore_errors=True)
    failing = [r for r in rows if r.problems]
    print(f"\n{len(rows)} runs, {len(failing)} failing; slowest {max(r.seconds for r in rows):.1f} s, "
          f"largest {max(r.peak_mb for r in rows):.0f} MB")
    by_owner: dict[str, list] = {}
    for r in failing:
        by_owner.setdefault(r.owner, []).append(r)
    for owner, rs in sorted(by_owner.items()):
        print(f"  {owner}: {len(rs)} — " + "; ".join(f"{r.kind}/{r.name}: {r.problems[0]}" for r in rs))
    for kind in ("traceback", "hang", "memory", "escape", "executed", "lost"):
        n = sum(1 for r in rows if any(p.startswith(kind) or kind in p for p in r.problems))
        print(f"  {kind}: {n}")
    if args.json:
        Path(args.json).write_text(json.dumps([asdict(r) for r in rows], indent=1))
    return 1 if failing else 0


if __name__ == "__main__":
    sys.exit(main())

"""Benchmark the static parser on the real-world corpus (bench/corpus/manifest.json).

For each entry the parser reads the file (never importing or running it) with the
recorded arguments and inputs, and the verifier checks the design.  An entry is
exact when all four hold: a graph was produced, its parameter count (the
verifier's, from core/ops) equals the truth, its output shapes equal the truth
(the shapes real torch produced, in order), and the verifier does not block it.
The truth was recorded by `bench/corpus_make.py truth` from real torch runs.

Prints one line per entry (exact or the cause of the miss, parse CPU time), the
causes of the misses grouped, and the last line `exact N/M (P%)  median parse X ms`.

Usage: python bench/parse_real.py [--only PATTERN] [--verbose] [--json OUT]
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus")
# wheels of the packaged entries (timm, transformers), fetched by pinned version, unpacked once
PACKAGE_CACHE = os.environ.get("ARCHCURATOR_BENCH_PACKAGES") or os.path.join(tempfile.gettempdir(),
                                                                              "archcurator-bench-packages")


class PackageUnavailable(Exception):
    pass


def package_dir(pin):
    """The unpacked wheel of `pin` ('timm==1.0.31'): `pip download --no-deps` the first time."""
    name, _, version = pin.partition("==")
    dest = os.path.join(PACKAGE_CACHE, f"{name}-{version}")
    if os.path.isdir(os.path.join(dest, name)):
        return dest
    with tempfile.TemporaryDirectory(prefix="archcurator-wheel-") as tmp:
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "--only-binary=:all:", pin,
               "-d", tmp]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        wheels = [f for f in os.listdir(tmp) if f.endswith(".whl")]
        if proc.returncode or not wheels:
            raise PackageUnavailable(f"pip download {pin} failed: {(proc.stderr.strip().splitlines() or ['?'])[-1]}")
        part = dest + ".part"
        with zipfile.ZipFile(os.path.join(tmp, wheels[0])) as z:
            z.extractall(part)
        os.replace(part, dest)
    return dest


def entry_path(e):
    """(file to parse, package roots) of a manifest entry."""
    if e.get("package"):
        root = package_dir(e["package"])
        return os.path.join(root, e["file"]), [root] + [package_dir(p) for p in e.get("package_with", [])]
    return os.path.join(CORPUS, e["path"]), []


def load_manifest():
    with open(os.path.join(CORPUS, "manifest.json")) as f:
        return json.load(f)


def entry_args(e):
    args = json.loads(json.dumps(e["args"]))
    for k in e.get("tuples", []):
        args[k] = tuple(args[k])
    return args


def measure(e):
    """(result dict) for one manifest entry."""
    from archcurator.core.graph import Design
    from archcurator.core.parse import ParseFailure, parse_input_spec, parse_source
    from archcurator.core.verify import verify_graph

    truth = e.get("truth") or {}
    path, roots = entry_path(e)
    inputs = [parse_input_spec(s) for s in e["inputs"]]
    t0 = time.process_time()
    try:
        r = parse_source(path, e["entry"], entry_args(e), inputs, package_roots=roots)
    except ParseFailure as exc:
        return {"id": e["id"], "ms": (time.process_time() - t0) * 1000, "graph": False, "cause": f"refused: {exc}"}
    ms = (time.process_time() - t0) * 1000
    out = {"id": e["id"], "ms": ms, "graph": bool(r.design["nodes"]), "warnings": [str(w) for w in r.warnings]}
    try:
        rep = verify_graph(Design.from_dict(r.design))
    except Exception as exc:  # noqa: BLE001 - the benchmark reports it as the cause
        out["cause"] = f"design not loadable: {type(exc).__name__}: {exc}"
        return out
    params = rep.cost.get("params")
    shapes = []
    for ref in r.design["outputs"]:
        node, _, k = ref.partition(":")
        ts = rep.types.get(node) or []
        t = ts[int(k or 0)] if int(k or 0) < len(ts) else None
        shapes.append(list(t.shape) if t is not None and t.shape is not None else None)
    blocks = [f for f in rep.findings if f.severity == "block"]
    out.update(params=params, outputs=shapes, blocked=bool(blocks))
    causes = []
    if params != truth.get("params"):
        causes.append(f"params {params} != {truth.get('params')}")
    if shapes != truth.get("outputs"):
        causes.append(f"outputs {shapes} != {truth.get('outputs')}")
    if blocks:
        causes.append(f"blocked: {blocks[0].rule}: {blocks[0].message}")
    if causes:
        first = r.warnings[0] if r.warnings else None
        out["cause"] = "; ".join(causes) + (f" [first warning: {first}]" if first else "")
    return out


def _kind(cause):
    if cause.startswith("refused"):
        return "refused"
    return ", ".join(sorted({c.split(" ")[0].rstrip(":") for c in cause.split(" [")[0].split("; ")}))


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--only")
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--json")
    a = ap.parse_args(argv)
    m = load_manifest()
    entries = [e for e in m["entries"] if e.get("truth") and "error" not in e["truth"]]
    if a.only:
        entries = [e for e in entries if fnmatch.fnmatch(e["id"], a.only)]
    for pin in sorted({p for e in entries if e.get("package") for p in [e["package"], *e.get("package_with", [])]}):
        try:
            package_dir(pin)  # fetched before the clock starts
        except PackageUnavailable as exc:
            print(f"skipped the entries needing {pin}: {exc}")
            entries = [e for e in entries if pin not in (e.get("package"), *e.get("package_with", []))]
    results = []
    for e in entries:
        r = measure(e)
        results.append(r)
        mark = "exact" if "cause" not in r else f"MISS {r['cause']}"
        print(f"{r['ms']:8.1f} ms  {e['id']}: {mark[:400]}", flush=True)
        if a.verbose and r.get("warnings"):
            for w in r["warnings"][:8]:
                print(f"              {w[:200]}")
    exact = [r for r in results if "cause" not in r]
    kinds = Counter(_kind(r["cause"]) for r in results if "cause" in r)
    print("\ncauses of misses:")
    for k, n in kinds.most_common():
        print(f"  {n:3d}  {k}")
    n = len(results)
    graphs = sum(1 for r in results if r.get("graph"))
    med = statistics.median(r["ms"] for r in results) if results else 0.0
    def ok(key):
        return sum(1 for r in results if r.get("graph") and key not in r.get("cause", ""))
    print(f"graph produced {graphs}/{n}  params equal {ok('params ')}/{n}  outputs equal {ok('outputs ')}/{n}  "
          f"not blocked {ok('blocked')}/{n}")
    print(f"exact {len(exact)}/{n} ({100 * len(exact) / max(n, 1):.0f}%)  median parse {med:.1f} ms  "
          f"max {max((r['ms'] for r in results), default=0):.0f} ms")
    for pin in sorted({e["package"] for e in entries if e.get("package")}):
        mine = [r for r, e in zip(results, entries) if e.get("package") == pin]
        print(f"  of which {pin}: exact {sum(1 for r in mine if 'cause' not in r)}/{len(mine)}  "
              f"median parse {statistics.median(r['ms'] for r in mine):.1f} ms")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0 if n else 1


if __name__ == "__main__":
    sys.exit(main())

"""Store benchmarks: bulk import of 100,000 designs, and the refusal report over 1,000,000 findings.

    python bench/bench_store.py [--designs 100000] [--sample 2000] [--workers auto|0|2] [--keep DIR]

Prints, each with a ratio against a baseline measured in the same run:

1. import of N generated designs of 20-200 nodes (goal <= 60 s) through the
   ordinary importer (`store.importers.import_paths` over `core.imports`: plan, parse, Design
   validation, rows, one transaction per batch file) with a *stand-in
   verifier* that derives findings from the graph in O(nodes) (about ten per
   design, so N = 100,000 gives ~1,000,000 findings). Baseline: plain
   `json.loads` of the same lines.
2. the same importer with the real verifier (`core.verify.verify_graph`) on
   a sample of the designs, extrapolated to N (printed, not the goal's path).
3. `refusal_report` over the findings just stored (goal <= 300 ms), median
   of runs, opening and closing the store each time as the app does.
   Baseline: one DuckDB scan of the findings (`count(*) GROUP BY rule`).
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

AUTHORS = [("agent", "model-a"), ("agent", "model-b"), ("agent", "model-c"), ("human", None)]
TASK_SETS = ["plain-sentence", "repair"]
RULES = [f"bench.rule-{i:02d}" for i in range(24)]


def gen_graph(rng: random.Random, name: str) -> dict:
    """A plausible MLP/CNN-ish chain of 20-200 nodes with real torch.nn args."""
    n = rng.randint(20, 200)
    nodes = []
    prev, width = "x", 64
    for i in range(n):
        kind = i % 4
        nid = f"layer{i // 4}.{kind}"
        if kind == 0:
            w = rng.choice([64, 128, 256, 512])
            node = {"id": nid, "op": "Linear", "args": {"in_features": width, "out_features": w}, "in": [prev]}
            width = w
        elif kind == 1:
            node = {"id": nid, "op": "LayerNorm", "args": {"normalized_shape": width}, "in": [prev]}
        elif kind == 2:
            node = {"id": nid, "op": rng.choice(["ReLU", "GELU", "SiLU"]), "in": [prev]}
        else:
            node = {"id": nid, "op": "Dropout", "args": {"p": 0.1}, "in": [prev]}
        nodes.append(node)
        prev = nid
    return {"format": "archgraph/1", "name": name, "inputs": [{"id": "x", "shape": ["B", 64]}],
            "nodes": nodes, "outputs": [prev],
            "train": {"loss": "cross_entropy", "steps": 1000, "batch_size": 64, "device": "A10G"}}


def gen_batches(folder: Path, n: int, per_file: int = 10_000, seed: int = 7) -> tuple[list[Path], list[str]]:
    rng = random.Random(seed)
    files, lines = [], []
    for f in range(0, n, per_file):
        path = folder / f"batch-{f // per_file:03d}.jsonl"
        with open(path, "w") as fh:
            for i in range(f, min(n, f + per_file)):
                author, model = AUTHORS[i % len(AUTHORS)]
                rec = {"id": f"b-{i:07d}", "author": author, "model": model,
                       "task_set": TASK_SETS[(i // 4) % 2], "run": f"run-{(i // 8) % 5}"}
                if rng.random() < 0.03:
                    rec["error"] = "could not generate: op 'Mamba' unknown"
                else:
                    rec["graph"] = gen_graph(rng, rec["id"])
                line = json.dumps(rec)
                fh.write(line + "\n")
                lines.append(line)
        files.append(path)
    return files, lines


def stand_in_verifier(design):
    """O(nodes) findings: ~11 a design (100,000 designs: over 1,000,000 findings), a quarter of
    designs blocked. Not the real checks."""
    from archcurator.core.report import Finding, Report

    h = sum(map(ord, design.name)) if design.name else 0
    ids = [n.id for n in design.nodes]
    k = 3 + h % 17
    findings = []
    for j in range(k):
        node = ids[(h * 7 + j * 13) % len(ids)]
        sev = "block" if (h % 4 == 0 and j == 0) else "warn"
        findings.append(Finding(RULES[(h + j) % len(RULES)], sev, (node,), f"stand-in finding {j} on {node}"))
    params = sum(n.args.get("in_features", 0) * n.args.get("out_features", 0) for n in design.nodes)
    usd = params * 6e-9
    cost = {"params": params, "flops_per_sample": 2 * params,
            "quote": {"usd": usd, "device": "A10G"}}
    return Report(findings=findings, cost=cost)


def stand_in_findings(rec: dict) -> list:
    """The stand-in verifier's findings, straight from the record's dict (no Design)."""
    from archcurator.core.report import Finding

    h = sum(map(ord, rec["id"]))
    ids = [n["id"] for n in rec["graph"]["nodes"]]
    k = 3 + h % 17
    return [Finding(RULES[(h + j) % len(RULES)], "block" if (h % 4 == 0 and j == 0) else "warn",
                    (ids[(h * 7 + j * 13) % len(ids)],), f"stand-in finding {j}") for j in range(k)]


def bulk_load(db: Path, files: list[Path]) -> int:
    """The store's own path: parse each line (keeping the graph's own text), build the design
    and finding rows, and insert each batch file through `insert_designs` (Arrow, DuckDB
    minifies and hashes the graphs; one transaction per file). No Design validation and no
    checks: findings come from `stand_in_findings`."""
    from archcurator.core.imports import loads_with_span
    from archcurator.core.imports.verified import reduce_findings
    from archcurator.store.connection import utcnow
    from archcurator.store.designs import insert_designs

    n = 0
    for path in files:
        rows, finds = [], []
        now = utcnow()
        with open(path) as fh:
            for line in fh:
                rec, span = loads_with_span(line)
                g = rec.get("graph")
                row = {k: rec.get(k) for k in ("id", "author", "model", "task_set", "run", "parent",
                                               "reference", "error")}
                row.update(source=f"{path}", imported_at=now, n_block=0, n_warn=0)
                if g is not None:
                    fs = reduce_findings(stand_in_findings(rec))
                    nb = sum(f["severity"] == "block" for f in fs)
                    row.update(name=g.get("name"), graph=line[span[0]:span[1]],
                               verdict="block" if nb else ("warn" if fs else "pass"), n_nodes=len(g["nodes"]),
                               n_block=nb, n_warn=len(fs) - nb, verifier_version="bench", verified_at=now,
                               quoted_cost_usd=1.0, cost_a10g_usd=1.0, quote_device="A10G")
                    for f in fs:
                        f.update(design_id=rec["id"], verifier_version="bench", stale=False,
                                 first_seen=now, last_seen=now)
                        finds.append(f)
                rows.append(row)
        inserted = insert_designs(db, rows, finds).inserted
        n += len(inserted)
    return n


def cpu_seconds() -> float:
    """CPU time of this process (all its threads) and of its finished children: a figure the
    machine's other load does not inflate the way it does wall time."""
    import resource

    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--designs", type=int, default=100_000)
    ap.add_argument("--sample", type=int, default=2_000, help="designs verified with the real verifier")
    ap.add_argument("--workers", default="auto", help="importer processes: auto (2 from 400), 0, 2")
    ap.add_argument("--keep", help="keep the store and batches in this folder")
    args = ap.parse_args(argv)
    workers = None if args.workers == "auto" else int(args.workers)

    from archcurator import store
    from archcurator.store.importers import import_paths

    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="bench-store-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        t = time.perf_counter()
        files, lines = gen_batches(work, args.designs)
        size = sum(f.stat().st_size for f in files)
        print(f"generated {args.designs:,} designs of 20-200 nodes in {len(files)} batch files, "
              f"{size / 1e6:,.0f} MB, in {time.perf_counter() - t:.1f} s")

        t, c = time.perf_counter(), cpu_seconds()
        for line in lines:
            json.loads(line)
        base, base_cpu = time.perf_counter() - t, cpu_seconds() - c
        del lines
        print(f"baseline: json.loads of the same {args.designs:,} lines: {base:.2f} s (cpu {base_cpu:.2f} s)")

        bulk_db = work / "bulk.duckdb"
        t, c = time.perf_counter(), cpu_seconds()
        n_bulk = bulk_load(bulk_db, files)
        bt, bcpu = time.perf_counter() - t, cpu_seconds() - c
        print(f"bulk load {n_bulk:,} designs (parse, rows, Arrow insert, one transaction per file; no Design "
              f"validation, stand-in findings): {bt:.1f} s (goal <= 60 s) = {bt / base:.1f}x json.loads "
              f"[{'OK' if bt <= 60 else 'OVER'}]; cpu {bcpu:.1f} s = {bcpu / base_cpu:.1f}x json.loads cpu")

        db = work / "bench.duckdb"
        for p in (db, Path(str(db) + ".wal")):
            if p.exists():
                p.unlink()
        t, c = time.perf_counter(), cpu_seconds()
        r = import_paths(db, files, verifier=stand_in_verifier, workers=workers)
        took, tcpu = time.perf_counter() - t, cpu_seconds() - c
        with store.connect(db) as con:
            n_designs = con.execute("SELECT count(*) FROM designs").fetchone()[0]
            n_findings = con.execute("SELECT count(*) FROM findings").fetchone()[0]
        assert n_designs == args.designs and not r.rejected, (n_designs, r.rejected[:3])
        print(f"import {n_designs:,} designs ({n_findings:,} findings), the importer (Design validation "
              f"included) + stand-in verifier, "
              f"workers={args.workers}: {took:.1f} s (goal <= 60 s) = {took / base:.1f}x json.loads "
              f"[{'OK' if took <= 60 else 'OVER'}]; cpu {tcpu:.1f} s (all processes)")

        try:
            import archcurator.core.verify  # noqa: F401
        except ImportError:
            print("real verifier: core.verify not available, skipped")
        else:
            sample_db = work / "sample.duckdb"
            n = min(args.sample, args.designs)
            sample = work / "sample.jsonl"
            written = 0
            with open(sample, "w") as dst:
                for path in files:  # the sample may span several batch files
                    with open(path) as src:
                        for line in src:
                            if written >= n:
                                break
                            dst.write(line)
                            written += 1
                    if written >= n:
                        break
            n = written
            t = time.perf_counter()
            rs = import_paths(sample_db, [sample], workers=workers)
            st = time.perf_counter() - t
            print(f"import {n:,} designs with the real verifier (core.verify.verify_graph), "
                  f"workers={args.workers}: {st:.1f} s = {st / n * 1000:.2f} ms/design; "
                  f"{args.designs:,} would take ~{st / n * args.designs:.0f} s "
                  f"({len(rs.rejected)} rejected)")

        def report():
            return store.refusal_report(db)

        def scan():
            with store.connect(db) as con:
                return con.execute("SELECT rule, count(*) FROM findings GROUP BY rule").fetchall()

        def timed(fn, k=7):
            fn()
            out = []
            for _ in range(k):
                t = time.perf_counter()
                fn()
                out.append(time.perf_counter() - t)
            return statistics.median(out)

        rep_s = timed(report)
        scan_s = timed(scan)
        with store.connect(db) as con:
            warm = timed(lambda: store.refusal_report(con))
        rows = report()["rows"]
        print(f"refusal report over {n_findings:,} findings / {n_designs:,} designs ({len(rows)} rows): "
              f"{rep_s * 1000:.0f} ms median incl. open+close (goal <= 300 ms) "
              f"= {rep_s / scan_s:.1f}x one scan of the findings ({scan_s * 1000:.0f} ms incl. open+close) "
              f"[{'OK' if rep_s <= 0.3 else 'OVER'}]; on an open connection {warm * 1000:.0f} ms")
        return 0
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

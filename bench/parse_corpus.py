"""Benchmark the static parser on torchvision's classification builders.

Fetches torchvision's published wheel with ``pip download --no-deps`` into a
temporary folder (nothing third-party is committed, nothing is installed or
imported), unzips its Python sources and parses every classification builder
at 224x224 (299x299 for inception_v3).  Per builder it prints: recognised or
the reason, our parameter count against the ``num_params`` published in the
same source's weights enum (read statically), and the time taken.  The last
line is ``parsed N/M exact (P%)``.  Times are CPU time of the parse
(``time.process_time``), so that a busy machine does not inflate them; files are
parsed once per process (later builders of the same file reuse the syntax tree).

A builder counts as exact when our count equals the ``num_params`` of one of
its weights entries (vit_h_14, for instance, publishes one entry per image
size); the entry shown is the matching one, or the first.

Usage: python bench/parse_corpus.py [--src DIR] [--only PATTERN] [--verbose] [--jsonl OUT]
  --src DIR    use an already unpacked torchvision source tree (DIR/torchvision)
  --jsonl OUT  also write the parsed designs as a SPEC section 2 batch (author human, task set
               open-source), each with attribution in meta: the demo's human row
"""

from __future__ import annotations

import argparse
import ast
import fnmatch
import glob
import json
import os
import subprocess
import sys
import tempfile
import time
import zipfile

from archcurator.core.parse import ParseFailure, design_params, parse_source  # noqa: E402

PATTERNS = ["alexnet", "vgg*", "resnet*", "resnext*", "wide_resnet*", "mobilenet_v2", "mobilenet_v3*",
            "densenet*", "squeezenet*", "shufflenet*", "mnasnet*", "efficientnet*", "regnet*", "convnext*",
            "vit_*", "swin_*", "maxvit_t", "googlenet", "inception_v3"]


# The weights a builder's enum publishes were trained (or exported) with these arguments: googlenet's
# published count is without its auxiliary classifiers (torchvision drops them when loading weights),
# while weights=None builds them by default.  Parsed with the same arguments, so that ours can equal it.
PUBLISHED_WITH = {"googlenet": {"aux_logits": False}}


def fetch(dest):
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "torchvision", "-d", dest]
    subprocess.run(cmd, check=True)
    wheels = glob.glob(os.path.join(dest, "torchvision-*.whl"))
    if not wheels:
        raise SystemExit("pip download produced no torchvision wheel")
    with zipfile.ZipFile(wheels[0]) as z:
        for n in z.namelist():
            if n.startswith("torchvision/") and n.endswith(".py"):
                z.extract(n, dest)
    return dest, os.path.basename(wheels[0])


def builders(models_dir):
    """(file, builder name, [(weights entry, num_params)]) for the classification builders."""
    out = []
    for path in sorted(glob.glob(os.path.join(models_dir, "*.py"))):
        tree = ast.parse(open(path, "rb").read())
        classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
        module_dicts = {}
        for n in tree.body:
            if isinstance(n, (ast.Assign, ast.AnnAssign)) and isinstance(getattr(n, "value", None), ast.Dict):
                t = n.targets[0] if isinstance(n, ast.Assign) else n.target
                if isinstance(t, ast.Name):
                    module_dicts[t.id] = n.value
        for fn in tree.body:
            if not isinstance(fn, ast.FunctionDef) or fn.name.startswith("_"):
                continue
            if not any(fnmatch.fnmatch(fn.name, p) for p in PATTERNS):
                continue
            wcls = None
            for a in fn.args.kwonlyargs + fn.args.args:
                if a.arg == "weights" and a.annotation is not None:
                    for n in ast.walk(a.annotation):
                        if isinstance(n, ast.Name) and n.id.endswith("_Weights"):
                            wcls = n.id
            if wcls is None:
                continue
            published = []
            c = classes.get(wcls)
            if c is not None:
                for st in c.body:
                    if isinstance(st, ast.Assign) and isinstance(st.targets[0], ast.Name):
                        n = _num_params(st.value, module_dicts)
                        if n is not None:
                            published.append((st.targets[0].id, n))
            out.append((path, fn.name, published))
    return out


def _num_params(node, module_dicts, depth=0):
    """The "num_params" in a weights entry, following **SPREAD of module-level dicts."""
    for d in ast.walk(node):
        if isinstance(d, ast.Dict):
            found = None
            for k, v in zip(d.keys, d.values):
                if k is None and isinstance(v, ast.Name) and v.id in module_dicts and depth < 4:
                    inner = _num_params(module_dicts[v.id], module_dicts, depth + 1)
                    found = inner if inner is not None else found
                elif isinstance(k, ast.Constant) and k.value == "num_params" and isinstance(v, ast.Constant):
                    found = v.value
            if found is not None:
                return found
    return None


def count_params(design):
    try:  # the project's cost model, once it exists
        from archcurator.core.graph import Design
        from archcurator.core.verify import verify_graph
        return verify_graph(Design.from_dict(design)).cost["params"]
    except Exception:  # noqa: BLE001 - fall back to the parser's own table
        return design_params(design)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--src", help="unpacked torchvision source root (contains torchvision/)")
    ap.add_argument("--only", help="glob of builder names to run")
    ap.add_argument("--verbose", action="store_true", help="print the parser warnings")
    ap.add_argument("--jsonl", help="write the parsed designs as a batch (author human, task set open-source)")
    ns = ap.parse_args(argv)
    tmp = None
    if ns.src:
        root, label = ns.src, ns.src
    else:
        tmp = tempfile.TemporaryDirectory(prefix="archcurator-tv-")
        root, label = fetch(tmp.name)
    root = os.path.abspath(root)
    models_dir = os.path.join(root, "torchvision", "models")
    items = builders(models_dir)
    os.chdir(root)  # designs name their source as torchvision/models/FILE.py:LINE
    version = _version(root, label)
    records = []
    if ns.only:
        items = [b for b in items if fnmatch.fnmatch(b[1], ns.only)]
    print(f"torchvision source: {label}; {len(items)} classification builders")
    print(f"{'builder':<22} {'result':<10} {'ours':>12} {'published':>12} {'cpu ms':>8}  note")
    exact = 0
    times = []
    for path, name, published in items:
        size = 299 if name == "inception_v3" else 224
        t0 = time.process_time()
        note = ""
        ours = None
        try:
            r = parse_source(os.path.relpath(path, root), name, PUBLISHED_WITH.get(name),
                             inputs=[([1, 3, size, size], "float32")])
            ms = (time.process_time() - t0) * 1000
            if ns.jsonl:
                records.append(_record(name, r.design, version))
            ours = count_params(r.design)
            note = f"{len(r.design['nodes'])} nodes, {len(r.warnings)} warnings"
            if name in PUBLISHED_WITH:
                note += f", args {json.dumps(PUBLISHED_WITH[name])}"
            if ns.verbose:
                for w in r.warnings[:20]:
                    note += f"\n      {w}"
        except ParseFailure as e:
            ms = (time.process_time() - t0) * 1000
            note = f"not recognised: {e}"
        times.append(ms)
        pub_vals = [n for _, n in published]
        if ours is not None and ours in pub_vals:
            status = "exact"
            pub = ours
            exact += 1
        else:
            status = "differs" if ours is not None else "failed"
            pub = pub_vals[0] if pub_vals else None
        print(f"{name:<22} {status:<10} {ours if ours is not None else '-':>12} "
              f"{pub if pub is not None else '-':>12} {ms:8.1f}  {note}")
    m = len(items)
    slow = sum(1 for t in times if t > 50)
    if times:
        srt = sorted(times)
        print(f"time per builder: median {srt[len(srt) // 2]:.1f} ms, max {srt[-1]:.1f} ms, "
              f"{slow} over 50 ms")
    print(f"parsed {exact}/{m} exact ({100.0 * exact / m if m else 0:.1f}%)")
    if ns.jsonl:
        with open(ns.jsonl, "w") as f:
            for rec in records:
                f.write(json.dumps(rec) + "\n")
        print(f"wrote {len(records)} designs to {ns.jsonl}")
    if tmp is not None:
        tmp.cleanup()
    return 0


def _version(root, label):
    for n in os.listdir(root):
        if n.startswith("torchvision-") and n.endswith(".dist-info"):
            return n[len("torchvision-"):-len(".dist-info")]
    if label.startswith("torchvision-"):
        return label.split("-")[1]
    return "unknown"


def _record(name, design, version):
    design = dict(design)
    meta = dict(design.get("meta", {}))
    meta["attribution"] = (f"parsed from torchvision {version} (BSD-3-Clause, Copyright (c) Soumith Chintala 2016, "
                           "the torchvision authors); the source is not shipped, only the parsed graph")
    design["meta"] = meta
    return {"id": f"torchvision-{name}", "author": "human", "model": None, "task_set": "open-source",
            "run": f"torchvision-{version}", "reference": name, "graph": design}


if __name__ == "__main__":
    sys.exit(main())

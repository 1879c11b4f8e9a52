"""Make the real-world parser corpus: copy the files, then record the truth.

    python bench/corpus_make.py copy --mirrors DIR   # files from public snapshots (DIR/owner+name/repo)
    python bench/corpus_make.py truth [--only PATTERN] [--package-site DIR]

`copy` keeps each file as it is in its repository, with the sibling files it
imports and the repository's licence, under `bench/corpus/<owner>__<name>/`, and
records the repository, commit and licence of each.  `truth` builds and runs
every entry of `bench/corpus_spec.py` in real torch, each in its own process
(the files are ours to run only here, never in the parser), and records the
parameter count (unique parameters, as `model.parameters()` gives them) and the
output shapes in `bench/corpus/manifest.json`.  The truth runs need the
packages the files import (einops ...): they are bench-only, never dependencies
of archcurator.

The packaged entries (timm, transformers: `PACKAGE_ENTRIES`) are not copied: their wheels are
fetched by pinned version at bench time (`parse_real.package_dir`), as the licence record in
the manifest says.  Their truth runs import the real package from `--package-site DIR`, a
throwaway folder made with `pip install --target DIR transformers==V` and
`pip install --target DIR --no-deps timm==V` (the project's own torch is used; the version
installed there must be the pinned one, which the run checks).
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus")
MANIFEST = os.path.join(CORPUS, "manifest.json")
sys.path.insert(0, HERE)

from corpus_spec import ENTRIES, PACKAGE_ENTRIES, PACKAGES, SOURCES  # noqa: E402


def source_dir(repo):
    return repo.replace("/", "__")


def _git(repo_dir, *args):
    return subprocess.run(["git", "-C", repo_dir, *args], check=True, capture_output=True).stdout


def copy(mirrors, only=None):
    manifest = _load()
    sources = dict(manifest.get("sources", {})) if only else {}
    for repo, (licence, paths, *licence_file) in SOURCES.items():
        if only and repo != only:
            continue
        d = os.path.join(mirrors, repo.replace("/", "+"), "repo")
        if os.path.isdir(os.path.join(d, ".git")):
            d = os.path.join(d, ".git")
        commit = _git(d, "rev-parse", "HEAD").decode().strip()
        names = _git(d, "ls-tree", "-r", "--name-only", "HEAD").decode().splitlines()
        lic = licence_file[0] if licence_file else \
            next((n for n in names if n.upper().startswith(("LICENSE", "LICENCE", "COPYING")) and "/" not in n), None)
        dest = os.path.join(CORPUS, source_dir(repo))
        shutil.rmtree(dest, ignore_errors=True)
        wanted = []
        for p in paths:
            wanted += [n for n in names if n.startswith(p) and n.endswith(".py")] if p.endswith("/") else [p]
        for n in wanted + ([lic] if lic else []):
            out = os.path.join(dest, n)
            os.makedirs(os.path.dirname(out), exist_ok=True)
            with open(out, "wb") as f:
                f.write(_git(d, "show", f"HEAD:{n}"))
        sources[repo] = {"commit": commit, "licence": licence, "licence_file": lic, "files": wanted}
        print(f"{repo}: {len(wanted)} files at {commit[:10]}")
    manifest["sources"] = sources
    _save(manifest)


def _load():
    if os.path.exists(MANIFEST):
        with open(MANIFEST) as f:
            return json.load(f)
    return {"sources": {}, "entries": []}


def _save(m):
    with open(MANIFEST, "w") as f:
        json.dump(m, f, indent=1, sort_keys=False)
        f.write("\n")


def entry_id(e):
    base = f"{source_dir(e['repo'])}/{e['file']}:{e['entry']}"
    return base + (f"[{e['note']}]" if e.get("note") else "")


def _package_sources(manifest):
    for repo, (licence, pin, *where) in PACKAGES.items():
        name, _, version = pin.partition("==")
        manifest["sources"][repo] = {"package": pin, "version": version, "licence": licence,
                                     "licence_file": where[0] if where else
                                     f"{name}-{version}.dist-info/licenses/LICENSE",
                                     "fetched": "pip download --no-deps at bench time (bench/parse_real.py)"}


def truth(only=None, timeout=600, package_site=None):
    manifest = _load()
    _package_sources(manifest)
    old = {e["id"]: e for e in manifest.get("entries", [])}
    out = []
    every = ENTRIES + PACKAGE_ENTRIES
    for e in every:
        if e.get("package"):
            rec = dict(e, id=entry_id(e), path=e["file"], site=package_site)
        else:
            rec = dict(e, id=entry_id(e), path=f"{source_dir(e['repo'])}/{e['file']}")
        src = manifest["sources"].get(e["repo"], {})
        rec["commit"], rec["licence"] = src.get("commit"), src.get("licence")
        if e.get("package") and (only != "missing" or rec["id"] not in old) and not package_site:
            rec.pop("site", None)
            if rec["id"] in old:
                out.append(dict(rec, truth=old[rec["id"]].get("truth")))
            continue
        done = old.get(rec["id"], {}).get("truth")
        if (only == "missing" and done and "error" not in done) or \
                (only and only != "missing" and not fnmatch.fnmatch(rec["id"], only) and rec["id"] in old):
            rec.pop("site", None)
            out.append(dict(rec, truth=old[rec["id"]].get("truth")))
            continue
        proc = subprocess.run([sys.executable, __file__, "child", json.dumps(rec)], capture_output=True, text=True,
                              timeout=timeout)
        line = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""
        try:
            t = json.loads(line)
        except json.JSONDecodeError:
            t = {"error": (proc.stderr.strip().splitlines() or ["no output"])[-1][:300]}
        rec["truth"] = t
        rec.pop("site", None)
        print(f"{rec['id']}: {t}", flush=True)
        out.append(rec)
        manifest["entries"] = out + [dict(x, id=entry_id(x)) for x in every[len(out):]]
        _save(manifest)
    manifest["entries"] = out  # the entries kept after the last one run, with their truth
    _save(manifest)


def child(rec):
    """In a fresh process: import the file as part of its folder tree, build, run once."""
    import importlib
    import importlib.abc
    import importlib.util
    import types

    import torch

    class _Anything:
        def __call__(self, *a, **k):
            return self

        def __getattr__(self, name):  # a name of its own per attribute: used as dict keys (timm's)
            if name.startswith("__"):
                raise AttributeError(name)
            v = self.__dict__.get(name)
            if v is None:
                v = self.__dict__[name] = _Anything()
            return v

        def __mro_entries__(self, bases):  # subclassed (timm's `class MaybeToTensor(transforms.ToTensor)`)
            return (object,)

    class _Unused(importlib.abc.MetaPathFinder, importlib.abc.Loader):
        """torchvision, matplotlib and the like stand in empty: the corpus files import them for data,
        losses or plots, never for the model they define (a run that needed them would fail, not be
        wrong). d2l's one file imports all of these."""

        def find_spec(self, name, path, target=None):
            if name.split(".")[0] in ("torchvision", "matplotlib", "matplotlib_inline", "PIL", "pandas", "requests",
                                      "IPython", "scipy"):
                return importlib.util.spec_from_loader(name, self, is_package=True)
            return None

        def create_module(self, spec):
            m = types.ModuleType(spec.name)
            m.__path__ = []
            stand_in = _Anything()
            m.__getattr__ = lambda attr: getattr(stand_in, attr)
            return m

        def exec_module(self, module):
            pass

    for name in rec.get("stubs", []):  # parts of a package no model here runs (see corpus_spec)
        sys.modules[name] = types.ModuleType(name)
    if not rec.get("package", "").startswith("transformers") and not rec.get("package_with"):
        sys.meta_path.insert(0, _Unused())  # transformers imports neither (and checks torchvision's version)
    file = rec["file"]
    if rec.get("package"):
        import importlib.metadata
        sys.path.insert(0, rec["site"])
        name, _, version = rec["package"].partition("==")
        if importlib.metadata.version(name) != version:
            raise SystemExit(f"{name} {importlib.metadata.version(name)} installed, {version} pinned")
    else:
        root = os.path.join(CORPUS, source_dir(rec["repo"]))
        sys.path[:0] = [root, os.path.dirname(os.path.join(root, file))]
    modname = file[:-3].replace("/", ".")
    mod = importlib.import_module(modname)
    torch.manual_seed(0)
    target = mod
    for part in rec["entry"].split("."):
        target = getattr(target, part)
    args = dict(rec["args"])
    for k in rec.get("tuples", []):
        args[k] = tuple(args[k])
    for k in rec.get("namespace", []):
        args[k] = types.SimpleNamespace(**args[k])
    config_class = getattr(target, "config_class", None)
    if rec.get("package") and isinstance(target, type) and config_class is not None:
        model = target(config_class(**args))  # Hugging Face: --args are the config's fields
    else:
        model = target(**args)
    inputs = []
    for spec in rec["inputs"]:
        shape, _, dtype = spec.partition(":")
        shape = [int(s) for s in shape.split(",")]
        if dtype == "int64":
            inputs.append(torch.randint(0, 50, shape))
        elif dtype == "bool":
            inputs.append(torch.zeros(shape, dtype=torch.bool))
        else:
            inputs.append(torch.randn(shape))
    with torch.no_grad():
        y = model(*inputs)
    params = sum(p.numel() for p in model.parameters())  # after the call: a lazy layer has none before it
    shapes = []

    def walk(v):
        if isinstance(v, torch.Tensor):
            shapes.append(list(v.shape))
        elif isinstance(v, (list, tuple)):
            for x in v:
                walk(x)
        elif isinstance(v, dict):
            for x in v.values():
                walk(x)

    walk(y)
    print(json.dumps({"params": params, "outputs": shapes}))


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("copy")
    c.add_argument("--mirrors", required=True)
    c.add_argument("--repo", help="copy only this owner/name again, keeping the others as they are")
    t = sub.add_parser("truth")
    t.add_argument("--only", help="PATTERN of entry ids to run again, or 'missing'")
    t.add_argument("--package-site", help="folder where the pinned packages are importable (truth of PACKAGE_ENTRIES)")
    ch = sub.add_parser("child")
    ch.add_argument("rec")
    a = ap.parse_args()
    if a.cmd == "copy":
        copy(a.mirrors, a.repo)
    elif a.cmd == "truth":
        truth(a.only, package_site=a.package_site)
    else:
        child(json.loads(a.rec))


if __name__ == "__main__":
    main()

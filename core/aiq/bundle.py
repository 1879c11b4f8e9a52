"""Reading ArchitectureIQ question bundles (and our own question files).

ArchitectureIQ lays its artifacts out as::

    datasets/{family}/{dataset_id}/
        dataset_spec.json          train.pt  test.pt      ({"x": tensor, "y": tensor})
        candidates/{set}/{candidate_id}/
            candidate_spec.json    results/summary.json   (+ generated model.py, train.py, ...)
        questions/{run}/{question_id}/question.json

``read_bundle`` reads the JSON specs and the tensors (``torch.load(...,
weights_only=True)``), and never imports or runs the generated Python:
our executor rebuilds each candidate from ``candidate_spec.json``. Our own
questions travel as JSONL (``"format": "archcurator-aiq/1"``, one question a
line, candidates embedded); ``read_bundle`` reads those too.

``is_bundle(path)`` says whether ``archcurator import`` should hand PATH here.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import jsontext
from .safefiles import (
    MAX_JSON_BYTES,
    MAX_JSONL_BYTES,
    UnsafeFile,
    first_line,
    inside,
    is_regular,
    read_text_capped,
    within,
)
from .spec import (
    QUESTION_FORMAT,
    SpecError,
    infer_question_type,
    recipe_id,
    validate_candidate,
    validate_question,
)

MAX_WALK = 20000  # files looked at when searching a folder
MAX_JSON_DEPTH = 64


class BundleError(ValueError):
    """A bundle that cannot be read at all; one line naming the file."""


@dataclass
class Bundle:
    questions: list[dict] = field(default_factory=list)
    rejected: list[tuple[str, str]] = field(default_factory=list)  # (file[:line], message)
    source: str = ""


def _depth(obj: Any, limit: int = MAX_JSON_DEPTH) -> int:
    """Nesting depth of a parsed JSON value (iterative: a deep document cannot blow the stack)."""
    deepest, stack = 0, [(obj, 1)]
    while stack:
        o, d = stack.pop()
        if d > deepest:
            deepest = d
            if deepest > limit:
                return deepest
        if isinstance(o, dict):
            stack.extend((v, d + 1) for v in o.values())
        elif isinstance(o, list):
            stack.extend((v, d + 1) for v in o)
    return deepest


def _loads(text: str, where: str) -> Any:
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as e:
        raise BundleError(f"{where}: not JSON ({e.msg}, line {e.lineno})") from None
    except (RecursionError, ValueError) as e:  # nesting past the parser's stack, a 5,000-digit integer
        raise BundleError(f"{where}: not usable JSON ({e.__class__.__name__})") from None
    if _depth(obj) > MAX_JSON_DEPTH:
        raise BundleError(f"{where}: JSON nested deeper than {MAX_JSON_DEPTH}")
    return obj


def _read_json(path: Path, cap: int = MAX_JSON_BYTES) -> Any:
    try:
        text = read_text_capped(path, cap)
    except UnsafeFile as e:
        raise BundleError(str(e)) from None
    return _loads(text, str(path))


def is_question_file(path: str | os.PathLike) -> bool:
    p = Path(path)
    try:
        if not is_regular(p) or p.suffix.lower() not in (".jsonl", ".ndjson"):
            return False
        # the first line of any batch given to `archcurator import` is read here: through the door,
        # so a hostile line (nested past the recursion limit, say) is just not a question file
        obj = jsontext.loads(first_line(p) or "null")
    except (ValueError, RecursionError, OSError):
        return False
    return isinstance(obj, dict) and obj.get("format") == QUESTION_FORMAT


def _walk(root: Path, name: str, limit: int = MAX_WALK):
    """Regular files called NAME under ROOT; links are neither followed nor returned."""
    n = 0
    for dirpath, dirnames, filenames in os.walk(root, onerror=lambda e: None):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d != "__pycache__")
        n += len(filenames)
        if name in filenames and is_regular(Path(dirpath) / name):
            yield Path(dirpath) / name
        if n > limit:
            return


def is_bundle(path: str | os.PathLike) -> bool:
    """True for an ArchitectureIQ bundle (a folder holding question.json files, or one
    question.json) or one of our question JSONL files. Never raises, never blocks."""
    try:
        p = Path(path)
        if is_regular(p):
            return p.name == "question.json" or is_question_file(p)
        if not p.is_dir() or p.is_symlink():
            return False
        if is_regular(p / "question.json"):
            return True
        return next(_walk(p, "question.json"), None) is not None
    except (OSError, ValueError, RuntimeError):
        return False


def _dataset_dir(start: Path, root: Path) -> Path | None:
    """The nearest folder at or above START, and not above ROOT, holding dataset_spec.json."""
    for d in [start, *start.parents]:
        if not within(root, d):
            return None
        if is_regular(d / "dataset_spec.json"):
            return d
    return None


def _candidate_index(ds_dir: Path) -> dict[str, Path]:
    idx: dict[str, Path] = {}
    for f in _walk(ds_dir, "candidate_spec.json"):
        try:
            cid = _read_json(f).get("candidate_id")
        except (BundleError, AttributeError):
            continue
        if isinstance(cid, str) and cid:
            idx.setdefault(cid, f.parent)
    return idx


def _summary_result(cand_dir: Path, metric: str) -> dict | None:
    f = cand_dir / "results" / "summary.json"
    if not is_regular(f):
        return None
    try:
        s = _read_json(f)
    except BundleError:
        return None
    if not isinstance(s, dict):
        return None
    key = f"final_{metric}"
    finals = []
    for r in s.get("seed_results", []) if isinstance(s.get("seed_results"), list) else []:
        v = r.get(key) if isinstance(r, dict) else None
        ok = isinstance(v, (int, float)) and not isinstance(v, bool) and v == v and abs(v) != float("inf")
        finals.append(float(v) if ok and not r.get("failed") else None)
    out = {"finals": finals, "failed_seeds": s.get("failed_seeds", sum(1 for v in finals if v is None))}
    for k, src in (("mean", f"mean_{metric}"), ("std", f"std_{metric}")):
        v = s.get(src)
        out[k] = float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and abs(v) != float("inf") \
            and v == v else None
    return out


def _device(raw: dict, cands: list[dict]) -> str | None:
    """Where the bundle says its ground truth ran: the question's evaluation, else its candidates'."""
    ev = raw.get("evaluation") if isinstance(raw.get("evaluation"), dict) else {}
    if isinstance(ev.get("device"), str):
        return ev["device"]
    devs = {str((c.get("execution") or {}).get("device")) for c in cands if isinstance(c.get("execution"), dict)}
    return devs.pop() if len(devs) == 1 else None


def _read_aiq_question(qfile: Path, root: Path, cache: dict) -> dict:
    raw = _read_json(qfile)
    if not isinstance(raw, dict) or not isinstance(raw.get("choices"), list):
        raise SpecError("not an ArchitectureIQ question (no 'choices')")
    ds_dir = _dataset_dir(qfile.parent, root)
    if ds_dir is None:
        raise SpecError("no dataset_spec.json above the question inside the bundle")
    if ds_dir not in cache:
        spec = _read_json(ds_dir / "dataset_spec.json")
        if not isinstance(spec, dict):
            raise SpecError(f"{ds_dir / 'dataset_spec.json'}: not a JSON object")
        cache[ds_dir] = [spec, _candidate_index(ds_dir), None]
    ds_spec, index, checked = cache[ds_dir]
    if checked is None:
        # the tensors are loaded once per dataset: weights-only, regular files, capped, shapes as declared
        from .datasets import load_tensors

        try:
            load_tensors(ds_dir, ds_spec)
            cache[ds_dir][2] = checked = ""
        except SpecError as e:
            cache[ds_dir][2] = checked = str(e)
    if checked:
        raise SpecError(checked)
    metric = ds_spec.get("selection_metric") or (raw.get("evaluation") or {}).get("selection_metric", "test_mse")
    choices = []
    for ch in raw["choices"]:
        if not isinstance(ch, dict):
            raise SpecError("a choice is not an object")
        cid = str(ch.get("candidate_id"))
        cdir = index.get(cid)
        if cdir is None and ch.get("candidate_path"):
            # candidate_path is relative to the data root (the parent of datasets/), which is the
            # bundle's root or below it; never above it, never absolute
            cpath = ch["candidate_path"]
            if not isinstance(cpath, str):
                raise SpecError(f"choice {ch.get('letter')}: candidate_path is not a string")
            for base in [d for d in ds_dir.parents if within(root, d)]:
                try:
                    target = inside(base, cpath)
                except UnsafeFile as e:
                    raise SpecError(f"choice {ch.get('letter')}: candidate_path {e}") from None
                if not within(root, target):
                    raise SpecError(f"choice {ch.get('letter')}: candidate_path {cpath} leaves the bundle")
                if is_regular(target / "candidate_spec.json"):
                    cdir = target
                    break
        if cdir is None:
            raise SpecError(f"choice {ch.get('letter')}: candidate {cid} not found in the bundle")
        spec = _read_json(cdir / "candidate_spec.json")
        if not isinstance(spec, dict):
            raise SpecError(f"choice {ch.get('letter')}: candidate_spec.json is not an object")
        validate_candidate(spec)
        choice = {"letter": str(ch.get("letter")), "candidate_id": cid, "recipe_id": recipe_id(spec),
                  "candidate": spec}
        res = _summary_result(cdir, metric)
        if res is not None:
            choice["result"] = res
        choices.append(choice)
    cands = [c["candidate"] for c in choices]
    ev = dict(raw.get("evaluation") or {}) if isinstance(raw.get("evaluation"), dict) else {}
    ev.setdefault("selection_metric", metric)
    device = _device(raw, cands)
    if device is not None:
        ev["device"] = device
    q = {
        "question_id": str(raw.get("question_id") or qfile.parent.name),
        "format": QUESTION_FORMAT,
        "schema_version": raw.get("schema_version"),
        "synthetic": True,
        "family": raw.get("family") or ds_spec.get("family"),
        "dataset_id": raw.get("dataset_id") or ds_spec.get("dataset_id"),
        "budget": raw.get("budget"),
        "type": raw.get("type") or infer_question_type(cands),
        "invariant_axes": raw.get("invariant_axes"),
        "varying_axes": raw.get("varying_axes"),
        "num_choices": len(choices),
        "choices": choices,
        "correct_letter": raw.get("correct_letter"),
        "significance": raw.get("significance"),
        "evaluation": ev,
        "dataset": dict(ds_spec),
        "dataset_path": str(ds_dir.resolve()),
        "split": raw.get("split") if raw.get("split") in ("train", "test") else "test",
        "pair": raw.get("pair") if isinstance(raw.get("pair"), dict) else None,
        "source": f"ArchitectureIQ bundle: {qfile}",
    }
    validate_question(q)
    return q


def _confine_line_paths(q: dict, folder: Path) -> None:
    """A question line naming a dataset_path: relative to the file's folder, and inside it."""
    dp = q.get("dataset_path")
    if dp is None:
        return
    if not isinstance(dp, str):
        raise SpecError("dataset_path is not a string")
    try:
        q["dataset_path"] = str(inside(folder, dp))
    except UnsafeFile as e:
        raise SpecError(f"dataset_path {e}") from None


def _read_question_file(p: Path, out: Bundle) -> None:
    try:
        text = read_text_capped(p, MAX_JSONL_BYTES)
    except UnsafeFile as e:
        raise BundleError(str(e)) from None
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            q = _loads(line, f"{p}:{lineno}")
            validate_question(q)
            for ch in q["choices"]:
                validate_candidate(ch["candidate"])
            _confine_line_paths(q, p.parent)
        except BundleError as e:
            out.rejected.append((f"{p}:{lineno}", str(e).split(": ", 1)[-1]))
            continue
        except (SpecError, KeyError, TypeError, ValueError, AttributeError) as e:
            msg = f"missing field {e}" if isinstance(e, KeyError) else str(e)
            out.rejected.append((f"{p}:{lineno}", msg or e.__class__.__name__))
            continue
        out.questions.append(q)


def _file_root(qfile: Path) -> Path:
    """The bundle a lone question.json belongs to: the folder holding its ``datasets/`` tree
    (ArchitectureIQ's data root), else the question's own folder."""
    for d in list(qfile.parents)[:8]:
        if d.name == "datasets":
            return d.parent
    return qfile.parent


def read_bundle(path: str | os.PathLike) -> Bundle:
    """Every question under PATH. Raises BundleError when nothing there can be read at all;
    questions that cannot be used are listed in ``rejected`` with their file."""
    p = Path(path)
    out = Bundle(source=str(p))
    if not p.exists() and not p.is_symlink():
        raise BundleError(f"{p}: no such file or folder")
    if p.is_symlink():
        raise BundleError(f"{p}: a symbolic link (give the bundle's own folder or file)")
    if p.is_file() and p.name != "question.json":
        if not is_question_file(p):
            raise BundleError(f"{p}: not an ArchitectureIQ bundle or an {QUESTION_FORMAT} question file")
        _read_question_file(p, out)
        return out
    if not p.is_file() and not p.is_dir():
        raise BundleError(f"{p}: not a regular file or a folder")
    root = _file_root(p) if p.is_file() else p
    files = [p] if p.is_file() else sorted(_walk(p, "question.json"))
    if not files:
        raise BundleError(f"{p}: no question.json in this folder")
    cache: dict = {}
    for f in files:
        try:
            out.questions.append(_read_aiq_question(f, root, cache))
        except (SpecError, BundleError, UnsafeFile, KeyError, TypeError, ValueError, AttributeError,
                RecursionError) as e:
            msg = f"missing field {e}" if isinstance(e, KeyError) else str(e)
            out.rejected.append((str(f), msg or e.__class__.__name__))
    return out


# --------------------------------------------------------------------------- writing

def write_bundle(questions: list[dict], root: str | os.PathLike) -> Path:
    """Write QUESTIONS in ArchitectureIQ's layout under ROOT/datasets (specs, tensors,
    candidate specs with results/summary.json, question.json). Returns ROOT."""
    from . import datasets as ds_mod

    root = Path(root)
    for q in questions:
        ds = q["dataset"]
        ddir = root / "datasets" / q["family"] / q["dataset_id"]
        ddir.mkdir(parents=True, exist_ok=True)
        (ddir / "dataset_spec.json").write_text(json.dumps(ds, indent=2, sort_keys=True), encoding="utf-8")
        if not (ddir / "train.pt").is_file():
            ds_mod.save_tensors(ds, ddir)
        metric = q.get("evaluation", {}).get("selection_metric", "test_mse")
        set_dir = ddir / "candidates" / f"set_{q.get('pool_id', 'x')}"
        choices = []
        for ch in q["choices"]:
            cdir = set_dir / ch["candidate_id"]
            (cdir / "results").mkdir(parents=True, exist_ok=True)
            (cdir / "candidate_spec.json").write_text(json.dumps(ch["candidate"], indent=2, sort_keys=True),
                                                      encoding="utf-8")
            r = ch.get("result")
            if r:
                summary = {"candidate_id": ch["candidate_id"], "selection_metric": metric,
                           "n_seeds": len(r["finals"]), "failed_seeds": r.get("failed_seeds", 0),
                           f"mean_{metric}": r.get("mean"), f"std_{metric}": r.get("std"),
                           "seed_results": [{"seed": i, "failed": v is None, f"final_{metric}": v}
                                            for i, v in enumerate(r["finals"])]}
                (cdir / "results" / "summary.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
            choices.append({"letter": ch["letter"], "candidate_id": ch["candidate_id"],
                            "candidate_path": str(cdir.relative_to(root)),
                            "candidate_set_path": str(set_dir.relative_to(root))})
        qdir = ddir / "questions" / "run_archcurator" / q["question_id"]
        qdir.mkdir(parents=True, exist_ok=True)
        body = {k: q.get(k) for k in ("schema_version", "family", "dataset_id", "budget", "type", "invariant_axes",
                                      "varying_axes", "num_choices", "correct_letter", "significance", "evaluation",
                                      "question_id")}
        body["choices"] = choices
        (qdir / "question.json").write_text(json.dumps(body, indent=2, sort_keys=True), encoding="utf-8")
    return root

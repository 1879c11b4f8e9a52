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
from .spec import (
    QUESTION_FORMAT,
    SpecError,
    infer_question_type,
    recipe_id,
    validate_candidate,
    validate_question,
)

MAX_WALK = 20000  # files looked at when searching a folder


class BundleError(ValueError):
    """A bundle that cannot be read at all; one line naming the file."""


@dataclass
class Bundle:
    questions: list[dict] = field(default_factory=list)
    rejected: list[tuple[str, str]] = field(default_factory=list)  # (file[:line], message)
    source: str = ""


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as e:
        raise BundleError(f"{path}: cannot read ({e.__class__.__name__}: {e})") from None
    except json.JSONDecodeError as e:
        raise BundleError(f"{path}: not JSON ({e.msg}, line {e.lineno})") from None


def _first_line(path: Path) -> str:
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    return line
    except (OSError, UnicodeDecodeError):
        return ""
    return ""


def is_question_file(path: str | os.PathLike) -> bool:
    p = Path(path)
    if not p.is_file() or p.suffix.lower() not in (".jsonl", ".ndjson"):
        return False
    try:
        # the first line of any batch given to `archcurator import` is read here: through the door,
        # so a hostile line (nested past the recursion limit, say) is just not a question file
        obj = jsontext.loads(_first_line(p) or "null")
    except ValueError:
        return False
    return isinstance(obj, dict) and obj.get("format") == QUESTION_FORMAT


def _walk(root: Path, name: str, limit: int = MAX_WALK):
    n = 0
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d != "__pycache__")
        n += len(filenames)
        if name in filenames:
            yield Path(dirpath) / name
        if n > limit:
            return


def is_bundle(path: str | os.PathLike) -> bool:
    """True for an ArchitectureIQ bundle (a folder holding question.json files, or one
    question.json) or one of our question JSONL files."""
    p = Path(path)
    if p.is_file():
        return p.name == "question.json" or is_question_file(p)
    if not p.is_dir():
        return False
    if (p / "question.json").is_file():
        return True
    return next(_walk(p, "question.json"), None) is not None


def _dataset_dir(start: Path) -> Path | None:
    for d in [start, *start.parents]:
        if (d / "dataset_spec.json").is_file():
            return d
    return None


def _candidate_index(ds_dir: Path) -> dict[str, Path]:
    idx: dict[str, Path] = {}
    for f in _walk(ds_dir, "candidate_spec.json"):
        try:
            cid = json.loads(f.read_text(encoding="utf-8")).get("candidate_id")
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            continue
        if cid:
            idx.setdefault(str(cid), f.parent)
    return idx


def _summary_result(cand_dir: Path, metric: str) -> dict | None:
    f = cand_dir / "results" / "summary.json"
    if not f.is_file():
        return None
    try:
        s = json.loads(f.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    key = f"final_{metric}"
    finals = []
    for r in s.get("seed_results", []):
        v = r.get(key)
        finals.append(None if r.get("failed") or v is None else float(v))
    return {"finals": finals, "mean": s.get(f"mean_{metric}"), "std": s.get(f"std_{metric}"),
            "failed_seeds": s.get("failed_seeds", sum(1 for v in finals if v is None))}


def _read_aiq_question(qfile: Path, cache: dict) -> dict:
    raw = _read_json(qfile)
    if not isinstance(raw, dict) or "choices" not in raw:
        raise SpecError("not an ArchitectureIQ question (no 'choices')")
    ds_dir = _dataset_dir(qfile.parent)
    if ds_dir is None:
        raise SpecError("no dataset_spec.json above the question")
    if ds_dir not in cache:
        cache[ds_dir] = (_read_json(ds_dir / "dataset_spec.json"), _candidate_index(ds_dir))
    ds_spec, index = cache[ds_dir]
    for t in ("train.pt", "test.pt"):
        if not (ds_dir / t).is_file():
            raise SpecError(f"dataset {ds_dir} has no {t}")
    metric = ds_spec.get("selection_metric") or raw.get("evaluation", {}).get("selection_metric", "test_mse")
    choices = []
    for ch in raw["choices"]:
        cid = str(ch.get("candidate_id"))
        cdir = index.get(cid)
        if cdir is None and ch.get("candidate_path"):
            # candidate_path is relative to the data root (the parent of datasets/)
            for base in ds_dir.parents:
                if (base / ch["candidate_path"] / "candidate_spec.json").is_file():
                    cdir = base / ch["candidate_path"]
                    break
        if cdir is None:
            raise SpecError(f"choice {ch.get('letter')}: candidate {cid} not found in the bundle")
        spec = _read_json(cdir / "candidate_spec.json")
        validate_candidate(spec)
        choice = {"letter": ch["letter"], "candidate_id": cid, "recipe_id": recipe_id(spec), "candidate": spec}
        res = _summary_result(cdir, metric)
        if res is not None:
            choice["result"] = res
        choices.append(choice)
    cands = [c["candidate"] for c in choices]
    ev = dict(raw.get("evaluation") or {})
    ev.setdefault("selection_metric", metric)
    dataset = dict(ds_spec)
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
        "dataset": dataset,
        "dataset_path": str(ds_dir.resolve()),
        "split": raw.get("split", "test"),
        "pair": raw.get("pair"),
        "source": f"ArchitectureIQ bundle: {qfile}",
    }
    validate_question(q)
    return q


def read_bundle(path: str | os.PathLike) -> Bundle:
    """Every question under PATH. Raises BundleError when nothing there can be read at all;
    questions that cannot be used are listed in ``rejected`` with their file."""
    p = Path(path)
    out = Bundle(source=str(p))
    if not p.exists():
        raise BundleError(f"{p}: no such file or folder")
    if p.is_file() and p.name != "question.json":
        if not is_question_file(p):
            raise BundleError(f"{p}: not an ArchitectureIQ bundle or an {QUESTION_FORMAT} question file")
        try:
            text = p.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            raise BundleError(f"{p}: cannot read ({e.__class__.__name__})") from None
        for lineno, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                q = json.loads(line)
                validate_question(q)
                for ch in q["choices"]:
                    validate_candidate(ch["candidate"])
            except json.JSONDecodeError as e:
                out.rejected.append((f"{p}:{lineno}", f"not JSON ({e.msg})"))
                continue
            except SpecError as e:
                out.rejected.append((f"{p}:{lineno}", str(e)))
                continue
            out.questions.append(q)
        return out
    files = [p] if p.is_file() else sorted(_walk(p, "question.json"))
    if not files:
        raise BundleError(f"{p}: no question.json in this folder")
    cache: dict = {}
    for f in files:
        try:
            out.questions.append(_read_aiq_question(f, cache))
        except (SpecError, BundleError, KeyError, TypeError, ValueError) as e:
            msg = str(e)
            if isinstance(e, KeyError):
                msg = f"missing field {e}"
            out.rejected.append((str(f), msg))
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

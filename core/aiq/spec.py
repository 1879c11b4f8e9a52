"""The ArchitectureIQ question model, in the shape its public code publishes.

A *candidate* is a training recipe: ``model`` + ``optimizer`` + ``loss`` +
``budget`` (``budget.total_samples_seen = training_steps * batch_size``), with
the same field names as ArchitectureIQ's ``candidate_spec.json``. A *dataset*
spec mirrors its ``dataset_spec.json`` (``family``, ``dataset_id``,
``params``, ``selection_metric``). A *question* mirrors its ``question.json``
(``type``, ``choices`` with letters, ``correct_letter``, ``significance``,
``evaluation``) and, because our questions travel as single JSONL lines,
embeds each choice's candidate spec and executed result.

Everything here is plain dicts and pure Python: no torch, no store.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

QUESTION_FORMAT = "archcurator-aiq/1"
SCHEMA_VERSION = "2.0"
EXECUTOR_VERSION = "core.aiq.execute/1"

FAMILIES = (
    "univariate_regression",
    "multivariate_regression",
    "bigram_lm",
    "xor_classification",
    "spiral_classification",
    "synthetic_tabular_classification",
)

CATEGORIES = ("optimizer_only", "architecture_only", "mixed")

OPTIMIZERS = ("SGD", "Adam", "AdamW", "RMSprop", "Adagrad")
ACTIVATIONS = ("relu", "leaky_relu", "gelu", "silu", "tanh")
#: the study's generated model.py uses this slope when a spec names none (specs before it was recorded)
LEGACY_LEAKY_RELU_SLOPE = 0.1
KAN_BASE_ACTIVATIONS = ("silu", "relu", "gelu", "tanh")
LOSSES = ("mse", "mse_l2", "mse_l1", "cross_entropy", "cross_entropy_l2", "cross_entropy_l1")

METRIC_BY_FAMILY = {
    "univariate_regression": "test_mse",
    "multivariate_regression": "test_mse",
    "bigram_lm": "test_ce",
    "synthetic_tabular_classification": "test_ce",
    "xor_classification": "test_ce",
    "spiral_classification": "test_ce",
}
TASK_BY_FAMILY = {
    "univariate_regression": "regression",
    "multivariate_regression": "regression",
    "bigram_lm": "language_model",
    "synthetic_tabular_classification": "classification",
    "xor_classification": "classification",
    "spiral_classification": "classification",
}


class SpecError(ValueError):
    """A question, candidate or dataset spec that does not hold together."""


def short_hash(obj: Any, n: int = 6) -> str:
    text = json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:n]


def letters(n: int) -> list[str]:
    return [chr(ord("A") + i) for i in range(n)]


# --------------------------------------------------------------------------- candidates

def recipe_of(candidate: dict) -> dict:
    """The part of a candidate that is the same across datasets (pairs share it)."""
    return {k: candidate[k] for k in ("model", "optimizer", "loss", "budget") if k in candidate}


def recipe_id(candidate: dict) -> str:
    model = dict(candidate.get("model", {}))
    # input/output sizes follow the dataset; the recipe is the rest.
    for k in ("input_dim", "output_dim", "vocab_size", "context_length"):
        model.pop(k, None)
    body = {**recipe_of(candidate), "model": model}
    return "r_" + short_hash(body, 8)


def parameter_count(model: dict, input_dim: int | None = None, output_dim: int | None = None) -> int:
    """Trainable parameters of a model spec, as ``sum(p.numel() for p in module.parameters())``
    counts them on the module the study builds (pure arithmetic: no torch)."""
    t = model.get("type")
    if t == "mlp":
        w, depth = int(model["width"]), int(model["depth"])
        din = int(model.get("input_dim") or input_dim or 1)
        dout = int(model.get("output_dim") or output_dim or 1)
        n = din * w + w + w * dout + dout
        for ln in model.get("layer_norm", [False] * depth):
            n += w * w + w + (2 * w if ln else 0)
        return n
    if t == "transformer_lm":
        d = int(model.get("d_model", model.get("embed_dim", 0)))
        ff = int(model.get("d_ff", model.get("ff_dim", 0)))
        v, ctx, layers = int(model.get("vocab_size", 0)), int(model.get("context_length", 0)), int(model["num_layers"])
        per_layer = 3 * d * d + 3 * d + d * d + d + d * ff + ff + ff * d + d + 4 * d
        return v * d + ctx * d + layers * per_layer + d * v + v
    if t == "kan":
        din = int(model.get("input_dim") or input_dim or 1)
        dout = int(model.get("output_dim") or output_dim or 1)
        dims = [din] + [int(model["width"])] * (int(model["depth"]) + 1) + [dout]
        basis = int(model["grid_size"]) + int(model["spline_order"])
        return sum(a * b * (1 + basis) for a, b in zip(dims, dims[1:]))
    return 0


def make_candidate(*, dataset_id: str, family: str, model: dict, optimizer: dict,
                   loss: dict, batch_size: int, total_samples_seen: int,
                   device: str = "cpu") -> dict:
    if total_samples_seen % batch_size:
        raise SpecError(f"batch size {batch_size} does not divide budget {total_samples_seen}")
    body = {
        "schema_version": SCHEMA_VERSION,
        "dataset_id": dataset_id,
        "family": family,
        "budget": {
            "training_steps": total_samples_seen // batch_size,
            "batch_size": batch_size,
            "total_samples_seen": total_samples_seen,
        },
        "model": model,
        "trainable_parameter_count": parameter_count(model),
        "optimizer": optimizer,
        "loss": loss,
    }
    body["candidate_id"] = "c_" + short_hash(body)
    body["execution"] = {"device": device}
    return body


def validate_candidate(c: dict) -> None:
    """Raise SpecError naming the first problem; the executor relies on these."""
    for key in ("budget", "model", "optimizer", "loss"):
        if not isinstance(c.get(key), dict):
            raise SpecError(f"candidate {c.get('candidate_id', '?')}: missing '{key}'")
    b = c["budget"]
    try:
        steps, bs, total = int(b["training_steps"]), int(b["batch_size"]), int(b["total_samples_seen"])
    except (KeyError, TypeError, ValueError) as e:
        raise SpecError(f"candidate {c.get('candidate_id', '?')}: bad budget ({e})") from None
    if steps * bs != total:
        raise SpecError(f"candidate {c.get('candidate_id', '?')}: budget {bs} x {steps} != {total}")
    m = c["model"]
    mt = m.get("type")
    if mt == "mlp":
        depth = int(m["depth"])
        if len(m.get("activations", [])) != depth or len(m.get("layer_norm", [])) != depth:
            raise SpecError(f"candidate {c.get('candidate_id', '?')}: MLP depth does not match activations/layer_norm")
        for a in m["activations"]:
            if a not in ACTIVATIONS:
                raise SpecError(f"candidate {c.get('candidate_id', '?')}: unknown activation {a!r}")
    elif mt == "transformer_lm":
        d = int(m.get("d_model", m.get("embed_dim", 0)))
        if not d or d % int(m["num_heads"]):
            raise SpecError(f"candidate {c.get('candidate_id', '?')}: d_model must be divisible by num_heads")
    elif mt == "kan":
        try:
            sizes = [int(m[k]) for k in ("depth", "width", "grid_size", "spline_order")]
            lo, hi = (float(v) for v in m.get("grid_range", [-1.0, 1.0]))
        except (KeyError, TypeError, ValueError) as e:
            raise SpecError(f"candidate {c.get('candidate_id', '?')}: bad KAN spec ({e})") from None
        if min(sizes) <= 0 or not lo < hi:
            raise SpecError(f"candidate {c.get('candidate_id', '?')}: KAN sizes must be positive, grid low < high")
        if m.get("variant", "efficient_spline_v1") != "efficient_spline_v1":
            raise SpecError(f"candidate {c.get('candidate_id', '?')}: KAN variant {m.get('variant')!r} unknown")
        if m.get("base_activation", "silu") not in KAN_BASE_ACTIVATIONS:
            raise SpecError(f"candidate {c.get('candidate_id', '?')}: KAN base activation "
                            f"{m.get('base_activation')!r} unknown")
    else:
        raise SpecError(f"candidate {c.get('candidate_id', '?')}: model type {mt!r} is not supported by our executor")
    if c["optimizer"].get("type") not in OPTIMIZERS:
        raise SpecError(f"candidate {c.get('candidate_id', '?')}: optimizer {c['optimizer'].get('type')!r} unknown")
    if c["loss"].get("loss_id") not in LOSSES:
        raise SpecError(f"candidate {c.get('candidate_id', '?')}: loss {c['loss'].get('loss_id')!r} unknown")


def infer_axes(candidates: list[dict]) -> tuple[list[str], list[str]]:
    """(invariant, varying) among model / optimizer / loss / batch_size, the study's axes."""
    invariant, varying = [], []
    for axis in ("model", "optimizer", "loss", "batch_size"):
        if axis == "batch_size":
            vals = {json.dumps((c.get("budget") or {}).get("batch_size")) for c in candidates}
        else:
            vals = {json.dumps(c.get(axis), sort_keys=True) for c in candidates}
        (invariant if len(vals) == 1 else varying).append(axis)
    return invariant, varying


def infer_question_type(candidates: list[dict]) -> str:
    _, varying = infer_axes(candidates)
    v = set(varying) - {"batch_size"}
    if v == {"optimizer"}:
        return "optimizer_only"
    if v == {"model"}:
        return "architecture_only"
    if v == {"loss"}:
        return "loss_only"
    return "mixed"


# --------------------------------------------------------------------------- questions

def question_id_for(body: dict) -> str:
    return "q_" + short_hash(body, 8)


def question_candidates(q: dict) -> list[dict]:
    return [ch["candidate"] for ch in q["choices"]]


def winner_choice(q: dict) -> dict:
    for ch in q["choices"]:
        if ch["letter"] == q["correct_letter"]:
            return ch
    raise SpecError(f"question {q.get('question_id')}: correct_letter {q.get('correct_letter')!r} not among choices")


MAX_NAME = 200  # characters of a question id, a family, a letter
_NOT_PLAIN = re.compile("[\x00-\x1f\x7f-\x9f\u00ad\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")


def _name(q: dict, key: str, value: Any) -> str:
    """A name a question carries (its id, family, a letter): a short plain string, or SpecError."""
    qid = q.get("question_id") if isinstance(q.get("question_id"), str) and len(q["question_id"]) <= MAX_NAME \
        else "?"
    if not isinstance(value, str) or not value:
        raise SpecError(f"question {_NOT_PLAIN.sub('?', qid)}: '{key}' is a non-empty string, not "
                        f"{type(value).__name__}")
    if len(value) > MAX_NAME:
        raise SpecError(f"question {_NOT_PLAIN.sub('?', qid)}: '{key}' is {len(value):,} characters long "
                        f"(at most {MAX_NAME})")
    m = _NOT_PLAIN.search(value)
    if m:
        raise SpecError(f"question {_NOT_PLAIN.sub('?', qid)}: '{key}' holds the control character "
                        f"U+{ord(m.group()):04X} (plain text only)")
    return value


def validate_question(q: dict) -> None:
    if not isinstance(q, dict):
        raise SpecError("question is not an object")
    for key in ("question_id", "family", "choices", "correct_letter"):
        if key not in q:
            raise SpecError(f"question {q.get('question_id', '?')}: missing '{key}'")
    for key in ("question_id", "family", "correct_letter"):
        _name(q, key, q[key])
    if not isinstance(q["choices"], list) or len(q["choices"]) < 2:
        raise SpecError(f"question {q['question_id']}: 'choices' is a list of at least two choices")
    for ch in q["choices"]:
        if not isinstance(ch, dict):
            raise SpecError(f"question {q['question_id']}: a choice is an object, not {type(ch).__name__}")
        _name(q, "letter", ch.get("letter"))
        if not isinstance(ch.get("candidate"), dict):
            raise SpecError(f"question {q['question_id']}: choice {ch.get('letter')} has no candidate spec")
    winner_choice(q)


def category_of(q: dict) -> str:
    return q.get("type") or q.get("category") or infer_question_type(question_candidates(q))



"""Features of a question and of each of its candidates, the vocabulary of propositions.

A proposition's conditions and claims name these features. Question-level
features (the dataset's, the category) are copied into every candidate's
row, so one condition grammar covers both: a condition on a question-level
feature keeps all of a question's candidates or none.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..aiq.datasets import dataset_features
from ..aiq.spec import category_of, recipe_id

# name -> (level, kind, description). kind: cat (categorical), num, bool.
FEATURES: dict[str, tuple[str, str, str]] = {
    "family": ("question", "cat", "dataset family"),
    "task": ("question", "cat", "regression, classification or language_model"),
    "category": ("question", "cat", "optimizer_only, architecture_only or mixed"),
    "input_dim": ("question", "num", "input dimension"),
    "noise_std": ("question", "num", "label noise on the training targets"),
    "target_freq": ("question", "num", "highest frequency in a symbolic target (roughness)"),
    "alpha": ("question", "num", "bigram table sharpness (higher: more peaked, lower entropy)"),
    "rule_family": ("question", "cat", "tabular decision rule"),
    "train_size": ("question", "num", "training examples"),
    "optimizer": ("candidate", "cat", "sgd, adam, adamw, rmsprop, adagrad"),
    "adaptive": ("candidate", "bool", "an adaptive optimizer (not SGD)"),
    "lr": ("candidate", "num", "learning rate"),
    "weight_decay": ("candidate", "num", "weight decay"),
    "momentum": ("candidate", "num", "SGD momentum (absent for other optimizers)"),
    "model": ("candidate", "cat", "mlp or transformer_lm"),
    "depth": ("candidate", "num", "hidden blocks (MLP) or layers (transformer)"),
    "width": ("candidate", "num", "hidden width (MLP) or d_model (transformer)"),
    "residual": ("candidate", "bool", "residual connections"),
    "layer_norm": ("candidate", "bool", "LayerNorm in the blocks"),
    "activation": ("candidate", "cat", "activation function"),
    "params": ("candidate", "num", "trainable parameters"),
    "loss": ("candidate", "cat", "loss id"),
    "regularized": ("candidate", "bool", "an L1/L2 penalty in the loss"),
    "batch_size": ("candidate", "num", "batch size"),
    "steps": ("candidate", "num", "training steps"),
    "budget": ("candidate", "num", "samples seen = steps x batch size"),
}


def param_count(model: dict, input_dim: int | None = None, output_dim: int | None = None) -> int:
    if model.get("type") == "mlp":
        w, depth = int(model["width"]), int(model["depth"])
        din = int(model.get("input_dim") or input_dim or 1)
        dout = int(model.get("output_dim") or output_dim or 1)
        n = din * w + w + w * dout + dout
        for ln in model.get("layer_norm", [False] * depth):
            n += w * w + w + (2 * w if ln else 0)
        return n
    if model.get("type") == "transformer_lm":
        d = int(model.get("d_model", model.get("embed_dim", 0)))
        ff = int(model.get("d_ff", model.get("ff_dim", 0)))
        v, t, L = int(model.get("vocab_size", 0)), int(model.get("context_length", 0)), int(model["num_layers"])
        per = 3 * d * d + 3 * d + d * d + d + 2 * d + d * ff + ff + ff * d + d + 2 * d
        return v * d + t * d + L * per + d * v + v
    return 0


def candidate_features(c: dict) -> dict[str, Any]:
    opt, m, loss, b = c.get("optimizer", {}), c.get("model", {}), c.get("loss", {}), c.get("budget", {})
    otype = str(opt.get("type", "")).lower()
    f: dict[str, Any] = {
        "optimizer": otype,
        "adaptive": otype != "sgd",
        "lr": float(opt.get("lr", 0.0)),
        "weight_decay": float(opt.get("weight_decay", 0.0) or 0.0),
        "model": m.get("type"),
        "loss": loss.get("loss_id"),
        "regularized": str(loss.get("loss_id", "")).endswith(("_l1", "_l2")),
        "batch_size": int(b.get("batch_size", 0)),
        "steps": int(b.get("training_steps", 0)),
        "budget": int(b.get("total_samples_seen", 0)),
        "params": param_count(m),
    }
    if otype == "sgd":
        f["momentum"] = float(opt.get("momentum", 0.0) or 0.0)
    if m.get("type") == "mlp":
        f["depth"] = int(m["depth"])
        f["width"] = int(m["width"])
        f["residual"] = bool(m.get("residual", False))
        f["layer_norm"] = any(bool(v) for v in m.get("layer_norm", []))
        acts = set(m.get("activations", []))
        f["activation"] = acts.pop() if len(acts) == 1 else "mixed"
    elif m.get("type") == "transformer_lm":
        f["depth"] = int(m["num_layers"])
        f["width"] = int(m.get("d_model", m.get("embed_dim", 0)))
        f["residual"] = True
        f["layer_norm"] = True
        f["activation"] = "gelu"
    return f


@dataclass(frozen=True)
class QuestionView:
    """What the knowledge base sees of a question: features, the answer and where it stands."""

    question_id: str
    category: str
    split: str
    pair_id: str | None
    partner: str | None
    letters: tuple[str, ...]
    cands: tuple[dict, ...]          # per choice: question + candidate features
    winner: int                      # index into cands / letters
    family: str
    recipes: tuple[str, ...] = ()    # per choice: recipe id (the same candidate across a pair)

    @property
    def correct_letter(self) -> str:
        return self.letters[self.winner]


def view(q: dict) -> QuestionView:
    qf = dataset_features(q.get("dataset") or {"family": q.get("family")})
    qf["category"] = category_of(q)
    cands, lets, winner = [], [], -1
    for i, ch in enumerate(q["choices"]):
        cf = candidate_features(ch["candidate"])
        cands.append({**qf, **cf})
        lets.append(ch["letter"])
        if ch["letter"] == q["correct_letter"]:
            winner = i
    pair = q.get("pair") or {}
    return QuestionView(
        question_id=q["question_id"], category=qf["category"], split=q.get("split", "train"),
        pair_id=pair.get("pair_id"), partner=pair.get("partner"), letters=tuple(lets),
        cands=tuple(cands), winner=winner, family=q.get("family", qf.get("family")),
        recipes=tuple(ch.get("recipe_id") or recipe_id(ch["candidate"]) for ch in q["choices"]),
    )

"""Features of a question and of each of its candidates, the vocabulary of propositions.

A proposition's conditions and claims name these features. Question-level
features (the dataset's, the category) are copied into every candidate's
row, so one condition grammar covers both: a condition on a question-level
feature keeps all of a question's candidates or none.

Every feature is computed from what any question carries, ours or an
imported bundle's: the dataset spec (its expression is read back, never
run) and the candidates' recipes. **Relative** features compare the
candidates inside one question (``most_params`` is true for the candidate
with the most parameters among the choices, when they are not all equal).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..aiq.datasets import dataset_features
from ..aiq.spec import category_of, parameter_count, recipe_id

# name -> (level, kind, description). kind: cat (categorical), num, bool.
FEATURES: dict[str, tuple[str, str, str]] = {
    "family": ("question", "cat", "dataset family"),
    "task": ("question", "cat", "regression, classification or language_model"),
    "category": ("question", "cat", "optimizer_only, architecture_only or mixed (how the question was assembled)"),
    "input_dim": ("question", "num", "input dimension (1 for univariate regression)"),
    "noise_std": ("question", "num", "noise on the training targets or labels"),
    "target_freq": ("question", "num", "periods per unit input of the target's fastest sine / cosine (0: none)"),
    "target_degree": ("question", "num", "polynomial degree of the target expression"),
    "target_periodic": ("question", "num", "sines and cosines of the input in the target expression"),
    "alpha": ("question", "num", "bigram table sharpness (higher: more peaked, lower entropy)"),
    "turns": ("question", "num", "turns of the spiral's arms (spiral classification)"),
    "vocab_size": ("question", "num", "language-model vocabulary"),
    "context_length": ("question", "num", "language-model window"),
    "rule_family": ("question", "cat", "tabular decision rule"),
    "train_size": ("question", "num", "training examples"),
    "transition_entropy": ("question", "num", "bigram table's entropy, nats per token (measured from its parameters)"),
    "transition_sparsity": ("question", "num", "share of bigram transitions the training windows never show"),
    "tokens_per_transition": ("question", "num", "training tokens per bigram transition (V x V)"),
    "target_std": ("question", "num", "std of the regression training targets (measured)"),
    "target_offset": ("question", "num", "absolute mean of the regression training targets (measured)"),
    "margin": ("question", "num", "median distance from a training point to the nearest of the other class"),
    "neighbour_agreement": ("question", "num", "share of training points whose nearest neighbour has their label"),
    "optimizer": ("candidate", "cat", "sgd, adam, adamw, rmsprop, adagrad"),
    "adaptive": ("candidate", "bool", "an adaptive optimizer (not SGD)"),
    "lr": ("candidate", "num", "learning rate"),
    "weight_decay": ("candidate", "num", "weight decay"),
    "momentum": ("candidate", "num", "SGD momentum (absent for other optimizers)"),
    "model": ("candidate", "cat", "mlp, kan or transformer_lm"),
    "depth": ("candidate", "num", "hidden blocks (MLP, KAN) or layers (transformer)"),
    "width": ("candidate", "num", "hidden width (MLP, KAN) or d_model (transformer)"),
    "residual": ("candidate", "bool", "residual connections"),
    "layer_norm": ("candidate", "bool", "LayerNorm in at least one block"),
    "layer_norm_share": ("candidate", "num", "share of the blocks with a LayerNorm"),
    "activation": ("candidate", "cat", "activation of every block (mixed when they differ)"),
    "d_ff": ("candidate", "num", "transformer feed-forward width"),
    "num_heads": ("candidate", "num", "transformer attention heads"),
    "grid_size": ("candidate", "num", "KAN spline grid intervals"),
    "params": ("candidate", "num", "trainable parameters"),
    "loss": ("candidate", "cat", "loss id"),
    "regularized": ("candidate", "bool", "an L1/L2 penalty in the loss"),
    "lambda": ("candidate", "num", "weight of the L1/L2 penalty (0 without one)"),
    "batch_size": ("candidate", "num", "batch size"),
    "steps": ("candidate", "num", "training steps"),
    "budget": ("candidate", "num", "samples seen = steps x batch size"),
    "epochs": ("candidate", "num", "passes over the training set = budget / train_size"),
    "most_params": ("relative", "bool", "the most parameters among the choices"),
    "fewest_params": ("relative", "bool", "the fewest parameters among the choices"),
    "highest_lr": ("relative", "bool", "the highest learning rate among the choices"),
    "lowest_lr": ("relative", "bool", "the lowest learning rate among the choices"),
    "deepest": ("relative", "bool", "the most blocks / layers among the choices"),
    "shallowest": ("relative", "bool", "the fewest blocks / layers among the choices"),
}

#: relative feature -> (the candidate feature it compares, most or fewest)
RELATIVE = {"most_params": ("params", max), "fewest_params": ("params", min), "highest_lr": ("lr", max),
            "lowest_lr": ("lr", min), "deepest": ("depth", max), "shallowest": ("depth", min)}


def param_count(model: dict, input_dim: int | None = None, output_dim: int | None = None) -> int:
    return parameter_count(model, input_dim, output_dim)


def candidate_features(c: dict) -> dict[str, Any]:
    opt, m, loss, b = (c.get(k) if isinstance(c.get(k), dict) else {} for k in ("optimizer", "model", "loss", "budget"))
    otype = str(opt.get("type", "")).lower()

    def num(v, default=0.0):
        try:
            return float(v)
        except (TypeError, ValueError):
            return default

    loss_id = str(loss.get("loss_id", ""))
    f: dict[str, Any] = {
        "optimizer": otype,
        "adaptive": otype != "sgd",
        "lr": num(opt.get("lr")),
        "weight_decay": num(opt.get("weight_decay") or 0.0),
        "model": m.get("type"),
        "loss": loss_id or None,
        "regularized": loss_id.endswith(("_l1", "_l2")),
        "lambda": num(loss.get("lambda") or 0.0) if loss_id.endswith(("_l1", "_l2")) else 0.0,
        "batch_size": int(num(b.get("batch_size"), 0)),
        "steps": int(num(b.get("training_steps"), 0)),
        "budget": int(num(b.get("total_samples_seen"), 0)),
    }
    try:
        f["params"] = parameter_count(m)
    except (KeyError, TypeError, ValueError):
        f["params"] = None
    if otype == "sgd":
        f["momentum"] = num(opt.get("momentum") or 0.0)
    try:
        if m.get("type") == "mlp":
            f["depth"], f["width"] = int(m["depth"]), int(m["width"])
            f["residual"] = bool(m.get("residual", False))
            norms = [bool(v) for v in m.get("layer_norm", [])]
            f["layer_norm"] = any(norms)
            f["layer_norm_share"] = round(sum(norms) / len(norms), 3) if norms else 0.0
            acts = set(m.get("activations", []))
            f["activation"] = acts.pop() if len(acts) == 1 else "mixed"
        elif m.get("type") == "kan":
            f["depth"], f["width"] = int(m["depth"]), int(m["width"])
            f["residual"], f["layer_norm"], f["layer_norm_share"] = False, False, 0.0
            f["activation"] = str(m.get("base_activation", "silu"))
            f["grid_size"] = int(m.get("grid_size", 0))
        elif m.get("type") == "transformer_lm":
            f["depth"] = int(m["num_layers"])
            f["width"] = int(m.get("d_model", m.get("embed_dim", 0)))
            f["residual"], f["layer_norm"], f["layer_norm_share"] = True, True, 1.0
            f["activation"] = "gelu"
            f["d_ff"] = int(m.get("d_ff", m.get("ff_dim", 0)))
            f["num_heads"] = int(m.get("num_heads", 0))
    except (KeyError, TypeError, ValueError):
        pass
    return f


def relative_features(rows: list[dict]) -> None:
    """Add the relative features to each row of one question, in place."""
    for name, (feat, pick) in RELATIVE.items():
        vals = [r.get(feat) for r in rows]
        if any(v is None for v in vals) or len(set(vals)) < 2:
            for r in rows:
                r[name] = False if all(v is not None for v in vals) else None
            continue
        best = pick(vals)
        for r, v in zip(rows, vals):
            r[name] = v == best


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
    origin: str = "shipped"          # shipped (our generated set) | imported (from a bundle or file)
    pool: str = ""                   # the candidate pool: 3-subsets of one pool share their runs
    task: str = ""                   # the task group held out as a unit: regression | classification | ...

    @property
    def correct_letter(self) -> str:
        return self.letters[self.winner]


def view(q: dict, origin: str | None = None) -> QuestionView:
    ds = q.get("dataset") if isinstance(q.get("dataset"), dict) else {"family": q.get("family")}
    qf = dataset_features({**ds, "family": ds.get("family") or q.get("family")})
    qf["category"] = category_of(q)
    cands, lets, winner = [], [], -1
    for i, ch in enumerate(q["choices"]):
        cf = candidate_features(ch["candidate"])
        if qf.get("train_size") and cf.get("budget"):
            # the recipe's budget against this data: the one number that says fit or overfit
            cf["epochs"] = round(cf["budget"] / qf["train_size"], 3)
        cands.append({**qf, **cf})
        lets.append(ch["letter"])
        if ch["letter"] == q["correct_letter"]:
            winner = i
    relative_features(cands)
    pair = q.get("pair") or {}
    return QuestionView(
        question_id=q["question_id"], category=qf["category"], split=q.get("split", "train"),
        pair_id=pair.get("pair_id"), partner=pair.get("partner"), letters=tuple(lets),
        cands=tuple(cands), winner=winner, family=q.get("family", qf.get("family")),
        recipes=tuple(ch.get("recipe_id") or recipe_id(ch["candidate"]) for ch in q["choices"]),
        origin=origin or q.get("origin") or "shipped",
        pool=str(q.get("pool_id") or q.get("group") or q.get("dataset_id") or q["question_id"]),
        task=str(qf.get("task") or "unknown"),
    )

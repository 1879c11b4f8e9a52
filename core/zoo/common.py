"""Shared settings of the zoo: the training set-ups declared in `train` and the meta block."""

from __future__ import annotations

IMAGENET = {"loss": "cross_entropy", "batch_size": 256, "steps": 450_000}
CIFAR = {"loss": "cross_entropy", "batch_size": 128, "steps": 40_000}
MNIST = {"loss": "cross_entropy", "batch_size": 64, "steps": 10_000}
RECON = {"loss": "mse", "batch_size": 128, "steps": 20_000}
SEGMENT = {"loss": "cross_entropy", "batch_size": 16, "steps": 20_000}


def lm_train(seq_len: int, vocab: int, batch: int = 32, steps: int = 100_000) -> dict:
    return {"loss": "cross_entropy", "batch_size": batch, "steps": steps,
            "seq_len": seq_len, "vocab_size": vocab}


def meta(family: str, origin: str, *, params: int | None = None, gmacs: float | None = None,
         note: str | None = None, module: str = "") -> dict:
    """`origin` names the reference implementation the graph follows;
    `published` holds the counts that implementation publishes (params
    exact, forward multiply-adds in G at the declared input size)."""
    m: dict = {"source": f"core/zoo/{module}.py" if module else "core/zoo", "family": family,
               "origin": origin, "author": "reference"}
    pub = {}
    if params is not None:
        pub["params"] = params
    if gmacs is not None:
        pub["gmacs"] = gmacs
    if pub:
        m["published"] = pub
    if note:
        m["note"] = note
    return m

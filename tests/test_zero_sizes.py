"""A size argument of 0: torch decides whether the layer can be built, and verify agrees (a false pass was
MultiheadAttention's embed_dim 0 and the Transformer layers' d_model 0 over a width-0 input: torch refuses
to construct them, "embed_dim and num_heads must be greater than 0")."""

from __future__ import annotations

import json

import pytest
import torch

from archcurator.core.graph import Design
from archcurator.core.verify import verify_graph

# (op, args, operands, the argument set to 0); the input is [B, 4, width] with width the zeroed size's
CASES = [
    ("MultiheadAttention", {"embed_dim": 0, "num_heads": 1, "batch_first": True}, 3, "embed_dim"),
    ("MultiheadAttention", {"embed_dim": 8, "num_heads": 1, "batch_first": True, "kdim": 0, "vdim": 0}, 3, "kdim"),
    ("TransformerEncoderLayer", {"d_model": 0, "nhead": 1, "batch_first": True}, 1, "d_model"),
    ("TransformerEncoderLayer", {"d_model": 8, "nhead": 1, "batch_first": True, "dim_feedforward": 0}, 1,
     "dim_feedforward"),
    ("TransformerDecoderLayer", {"d_model": 0, "nhead": 1, "batch_first": True}, 2, "d_model"),
    ("Transformer", {"d_model": 0, "nhead": 1, "batch_first": True, "num_encoder_layers": 1,
                     "num_decoder_layers": 1}, 2, "d_model"),
    ("Linear", {"in_features": 8, "out_features": 0}, 1, "out_features"),
]


def _torch_builds(op: str, args: dict) -> bool:
    try:
        getattr(torch.nn, op)(**args)
    except (ValueError, RuntimeError, ZeroDivisionError):
        return False
    return True


@pytest.mark.parametrize("op,args,n_in,zeroed", CASES, ids=[f"{c[0]}-{c[3]}" for c in CASES])
def test_a_zero_size_blocks_exactly_when_torch_refuses_the_layer(op, args, n_in, zeroed):
    width = args.get("embed_dim", args.get("d_model", args.get("in_features")))
    design = Design.from_json(json.dumps({
        "format": "archgraph/1", "name": "zero",
        "inputs": [{"id": "x", "shape": ["B", 4, width], "dtype": "float32"}],
        "nodes": [{"id": "a", "op": op, "args": args, "in": ["x"] * n_in}], "outputs": ["a"]}))
    report = verify_graph(design)
    refused_for_it = [f for f in report.findings
                      if f.severity == "block" and f.rule == "connectivity.bad-arg" and zeroed in f.message]
    assert bool(refused_for_it) == (not _torch_builds(op, args)), [f.message for f in report.findings]

"""A layer given torch's factory kwargs (dtype, device) is refused with words that are true: torch's layers
take them (archgraph/1 does not), a parameterless module does not take them at all (torch says so)."""

from __future__ import annotations

import pytest
import torch

from archcurator.core.graph import Design
from archcurator.core.verify import verify_graph

CASES = [  # op, its args, the input shape
    ("Linear", {"in_features": 16, "out_features": 8}, [4, 16]),
    ("Conv2d", {"in_channels": 3, "out_channels": 4, "kernel_size": 3}, [2, 3, 8, 8]),
    ("LayerNorm", {"normalized_shape": 16}, [4, 16]),
    ("Embedding", {"num_embeddings": 10, "embedding_dim": 4}, [4, 3]),
    ("ReLU", {}, [4, 16]),
    ("GELU", {}, [4, 16]),
    ("Dropout", {"p": 0.1}, [4, 16]),
]


def _torch_takes(op: str, args: dict, extra: dict) -> bool:
    kw = {k: (getattr(torch, v) if k == "dtype" else v) for k, v in extra.items()}
    try:
        getattr(torch.nn, op)(**args, **kw)
    except TypeError:
        return False
    return True


@pytest.mark.parametrize("extra", [{"dtype": "float16"}, {"device": "cpu"}, {"dtype": "float32", "device": "cpu"}],
                         ids=["dtype", "device", "both"])
@pytest.mark.parametrize("op,args,shape", CASES, ids=[c[0] for c in CASES])
def test_the_refusal_of_a_factory_kwarg_says_what_torch_says(op, args, shape, extra):
    dtype = "int64" if op == "Embedding" else "float32"
    design = Design.from_dict({
        "format": "archgraph/1", "name": "f", "inputs": [{"id": "x", "shape": shape, "dtype": dtype}],
        "nodes": [{"id": "n", "op": op, "args": {**args, **extra}, "in": ["x"]}], "outputs": ["n"]})
    report = verify_graph(design)
    assert report.verdict == "block"
    (msg,) = [f.message for f in report.findings if f.severity == "block"]
    if _torch_takes(op, args, extra):
        assert "does not take" not in msg and "archgraph/1 builds every layer" in msg
    else:
        assert f"that torch.nn.{op} does not take" in msg

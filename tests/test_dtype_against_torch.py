"""Dtype verdicts and counts that an outside tester questioned, each built here and asked of real torch (the
design built by our builder, whose modules hold float32 weights as torch's constructors make them; eval runs
without autograd, as the ground child runs it; training runs forward and backward)."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import warnings

import pytest
import torch

from archcurator.core.build import build_module, example_inputs
from archcurator.core.graph import Design
from archcurator.core.verify import verify_graph

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")  # torch's notes on its nested-tensor path


def _doc(op: str, args: dict, inputs: list, mode: str = "train", outputs=("n",)) -> dict:
    return {"format": "archgraph/1", "name": f"{op}-dtype",
            "inputs": [{"id": i, "shape": list(s), "dtype": dt} for i, s, dt in inputs],
            "nodes": [{"id": "n", "op": op, "args": args, "in": [i for i, _, _ in inputs]}],
            "outputs": list(outputs), "train": {"mode": mode}}


def _design(*a, **k) -> Design:
    return Design.from_dict(_doc(*a, **k))


def _torch_error(design: Design, mode: str) -> str | None:
    """What torch raises running the design (None: it ran), forward and, in training, backward."""
    try:
        torch.manual_seed(0)
        module = build_module(design).train(mode == "train")
        with warnings.catch_warnings(), torch.set_grad_enabled(mode == "train"):
            warnings.simplefilter("ignore")
            out = module(*example_inputs(design))
            if mode == "train":
                outs = out if isinstance(out, (tuple, list)) else [out]
                sum(o.float().sum() for o in outs if torch.is_tensor(o) and o.requires_grad).backward()
    except RuntimeError as exc:
        return str(exc)
    return None


def _agrees(design: Design, mode: str) -> None:
    report = verify_graph(design)
    error = _torch_error(design, mode)
    assert (report.verdict == "block") == (error is not None), (error, [f.message for f in report.findings])


# 1. float16 data into a module of float32 weights: torch refuses it in both modes ('All tensors must have the
# same dtype'); a module cast with .half() runs, but archgraph/1 has no way to say that, so the block stands
HALF_MODULES = [
    ("Bilinear", {"in1_features": 5, "in2_features": 6, "out_features": 3}, [("a", (4, 5)), ("b", (4, 6))]),
    ("Linear", {"in_features": 5, "out_features": 3}, [("a", (4, 5))]),
    ("MultiheadAttention", {"embed_dim": 8, "num_heads": 2, "batch_first": True},
     [("q", (2, 5, 8)), ("k", (2, 5, 8)), ("v", (2, 5, 8))]),
    ("TransformerEncoderLayer", {"d_model": 8, "nhead": 2, "dim_feedforward": 16, "batch_first": True},
     [("x", (2, 5, 8))]),
]


@pytest.mark.parametrize("mode", ["train", "eval"])
@pytest.mark.parametrize("op,args,operands", HALF_MODULES, ids=[c[0] for c in HALF_MODULES])
def test_float16_data_into_float32_weights_is_judged_as_torch_judges_it(op, args, operands, mode):
    outputs = ("n:0",) if op == "MultiheadAttention" else ("n",)
    _agrees(_design(op, args, [(i, s, "float16") for i, s in operands], mode, outputs), mode)


# 2. the parameter count does not depend on the dtype the data has: a node refused for its dtype had counted 0
@pytest.mark.parametrize("op,args,operands", HALF_MODULES, ids=[c[0] for c in HALF_MODULES])
def test_the_parameter_count_of_a_node_refused_for_its_dtype_is_the_modules(op, args, operands, tmp_path):
    outputs = ("n:0",) if op == "MultiheadAttention" else ("n",)
    counts = []
    for dtype in ("float16", "float32"):
        doc = _doc(op, args, [(i, s, dtype) for i, s in operands], outputs=outputs)
        path = tmp_path / f"{dtype}.json"
        path.write_text(json.dumps(doc))
        done = subprocess.run([sys.executable, "-m", "archcurator", "verify", str(path), "--json"],
                              capture_output=True, text=True, timeout=120)
        answer = json.loads(done.stdout)
        counts.append((answer["verdict"], answer["cost"]["params"]))
    torch_count = sum(p.numel() for p in build_module(Design.from_dict(doc)).parameters())
    assert counts == [("block", torch_count), ("pass", torch_count)]


# 3. a float mask in another float dtype than the data's (float32 here): torch's Python attention path refuses
# it ('Expected attn_mask dtype to be bool or float or to match query dtype'), after adding a key padding mask
# to it (the sum promotes: float16 with float32 is float32 and runs); the encoder's eval fast path takes any,
# and is_causal without a key padding mask drops the mask unread
MASKS = ("float16", "bfloat16", "float64", "float32", "bool")


def _encoder_layer_cases():
    # an odd head count only matters on the fast path, which needs batch_first
    for mode, (bf, heads), mask, padding, causal in itertools.product(
            ("train", "eval"), ((True, 2), (True, 1), (False, 2)), MASKS, (None, "bool", "float32", "float16"),
            (False, True)):
        x = (2, 5, 8) if bf else (5, 2, 8)
        inputs = [("x", x, "float32"), ("m", (5, 5), mask)] + ([("p", (2, 5), padding)] if padding else [])
        args = {"d_model": 8, "nhead": heads, "dim_feedforward": 16, "batch_first": bf, "dropout": 0.0,
                "is_causal": causal}
        yield pytest.param(mode, inputs, args,
                           id=f"{mode}-{'bf' if bf else 'sf'}-h{heads}-{mask}-{padding}-{'causal' if causal else ''}")


@pytest.mark.parametrize("mode,inputs,args", _encoder_layer_cases())
def test_an_encoder_layer_mask_is_refused_exactly_where_torch_refuses_it(mode, inputs, args):
    _agrees(_design("TransformerEncoderLayer", args, inputs, mode), mode)


def _family_cases():
    layer = {"d_model": 8, "nhead": 2, "dim_feedforward": 16, "dropout": 0.0}
    for mode, bf, mask in itertools.product(("train", "eval"), (True, False), ("float16", "float64", "bool")):
        x, mem = ((2, 5, 8), (2, 6, 8)) if bf else ((5, 2, 8), (6, 2, 8))
        tag = f"{mode}-{'bf' if bf else 'sf'}-{mask}"
        lay = dict(layer, batch_first=bf)
        yield pytest.param("TransformerEncoder", {"encoder_layer": lay, "num_layers": 2},
                           [("x", x, "float32"), ("m", (5, 5), mask), ("p", (2, 5), "float16")], mode,
                           id=f"encoder-{tag}")
        yield pytest.param("TransformerEncoder", {"encoder_layer": lay, "num_layers": 2, "is_causal": True},
                           [("x", x, "float32"), ("m", (5, 5), mask)], mode, id=f"encoder-causal-{tag}")
        stack = {"decoder_layer": lay, "num_layers": 2}
        for op, a in (("TransformerDecoderLayer", lay), ("TransformerDecoder", stack)):
            inputs = [("x", x, "float32"), ("mem", mem, "float32"), ("t", (5, 5), mask)]
            yield pytest.param(op, a, inputs, mode, id=f"{op}-tgt-{tag}")
            yield pytest.param(op, a, [("x", x, "float32"), ("mem", mem, "float32"), ("t", (5, 5), "bool"),
                                       ("m", (5, 6), mask)], mode, id=f"{op}-memory-{tag}")
        for heads, j in itertools.product((2, 1), range(3)):
            shapes = ((6, 6), (5, 5), (5, 6))
            inputs = [("s", (2, 6, 8) if bf else (6, 2, 8), "float32"), ("x", x, "float32")]
            inputs += [(f"m{k}", shapes[k], mask if k == j else "bool") for k in range(j + 1)]
            yield pytest.param("Transformer", dict(layer, nhead=heads, batch_first=bf, num_encoder_layers=1,
                                                   num_decoder_layers=1), inputs, mode,
                               id=f"Transformer-h{heads}-{('src', 'tgt', 'memory')[j]}-{tag}")
        for causal, weights in ((True, False), (True, True), (False, False)):
            for padding in (None, "bool", "float16"):
                inputs = [("q", x, "float32"), ("k", x, "float32"), ("v", x, "float32"), ("m", (5, 5), mask)]
                inputs += [("p", (2, 5), padding)] if padding else []
                yield pytest.param("MultiheadAttention", {"embed_dim": 8, "num_heads": 2, "batch_first": bf,
                                                          "is_causal": causal, "need_weights": weights},
                                   inputs, mode, id=f"mha-causal{causal}-weights{weights}-{padding}-{tag}")


@pytest.mark.parametrize("op,args,inputs,mode", _family_cases())
def test_a_transformer_family_mask_is_refused_exactly_where_torch_refuses_it(op, args, inputs, mode):
    _agrees(_design(op, args, inputs, mode, ("n:0",) if op == "MultiheadAttention" else ("n",)), mode)


def test_the_mask_finding_names_the_node_the_masks_and_the_fix():
    design = _design("TransformerEncoderLayer", {"d_model": 8, "nhead": 2, "dim_feedforward": 16},
                     [("x", (5, 2, 8), "float32"), ("m", (5, 5), "float16"), ("p", (2, 5), "float16")])
    found = [f for f in verify_graph(design).findings if f.rule == "dtype.mask"]
    assert [f.nodes for f in found] == [("n",)]
    message = found[0].message
    assert "\n" not in message and "'n'" in message and "src_mask (float16)" in message
    assert "src_key_padding_mask (float16)" in message and "cast them to float32" in message

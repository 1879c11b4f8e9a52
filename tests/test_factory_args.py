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


# layers whose torch constructor takes dtype/device though they hold no weights with these args (a parameter
# count said "does not take" for them, which torch contradicts)
WEIGHTLESS = [
    ("LayerNorm", {"normalized_shape": 16, "elementwise_affine": False}, [4, 16]),
    ("RMSNorm", {"normalized_shape": 16, "elementwise_affine": False}, [4, 16]),
    ("InstanceNorm1d", {"num_features": 16}, [2, 16, 5]),
    ("BatchNorm1d", {"num_features": 16, "affine": False}, [4, 16]),
    ("GroupNorm", {"num_groups": 2, "num_channels": 16, "affine": False}, [4, 16]),
    ("Linear", {"in_features": 16, "out_features": 0}, [4, 16]),
]


@pytest.mark.parametrize("extra", [{"dtype": "float16"}, {"device": "cpu"}], ids=["dtype", "device"])
@pytest.mark.parametrize("op,args,shape", WEIGHTLESS, ids=[f"{c[0]}-{i}" for i, c in enumerate(WEIGHTLESS)])
def test_a_layer_without_weights_still_takes_factory_kwargs(op, args, shape, extra):
    assert _torch_takes(op, args, extra)  # torch's own answer
    test_the_refusal_of_a_factory_kwarg_says_what_torch_says(op, args, shape, extra)


def _torch_constructor_takes_factory_kwargs(cls) -> bool:
    import inspect

    for c in cls.__mro__:
        if c is torch.nn.Module:
            return False
        if "__init__" not in vars(c):
            continue
        params = inspect.signature(c.__init__).parameters
        if any(p.kind is p.VAR_POSITIONAL for p in params.values()):
            continue  # passes its args on (RNN to RNNBase)
        return "dtype" in params and "device" in params
    return False


def test_the_factory_kwargs_trait_is_torchs_signature():
    from archcurator.core.ops import OP_TABLE

    for op, spec in OP_TABLE.items():
        cls = getattr(torch.nn, op, None) if "functional" not in spec.traits else None
        want = cls is not None and _torch_constructor_takes_factory_kwargs(cls)
        assert ("factory-kwargs" in spec.traits) == want, op


def _one(op, args, shape, dtype="float32"):
    return Design.from_dict({
        "format": "archgraph/1", "name": "f", "inputs": [{"id": "x", "shape": shape, "dtype": dtype}],
        "nodes": [{"id": "n", "op": op, "args": args, "in": ["x"]}], "outputs": ["n"]})


def test_the_builder_says_what_verify_says_of_factory_kwargs():
    from archcurator.core.build import BuildError, build_module

    with pytest.raises(BuildError) as got:
        build_module(_one("Linear", {"in_features": 4, "out_features": 3, "dtype": "float16"}, [2, 4]))
    msg = str(got.value)
    assert "does not take" not in msg and "archgraph/1 builds every layer with float32 weights" in msg
    with pytest.raises(BuildError) as got:  # ReLU's constructor takes neither: that stays true
        build_module(_one("ReLU", {"dtype": "float16"}, [2, 4]))
    assert "does not take dtype" in str(got.value)


@pytest.mark.parametrize("op,args,shape", CASES[:4] + WEIGHTLESS, ids=lambda v: v if isinstance(v, str) else "")
def test_factory_kwargs_at_torchs_default_are_taken(op, args, shape):
    from archcurator.core.build import build_module
    from archcurator.core.repair import repair_design

    extra = {"dtype": None, "device": None}
    assert _torch_takes(op, args, {}) and getattr(torch.nn, op)(**args, **extra) is not None
    dtype = "int64" if op == "Embedding" else "float32"
    design = _one(op, {**args, **extra}, shape, dtype)
    report = verify_graph(design)
    assert report.verdict != "block" and not [f for f in report.findings if f.rule == "connectivity.bad-arg"]
    bare = verify_graph(_one(op, args, shape, dtype))
    assert [f.message for f in report.findings] == [f.message for f in bare.findings]
    assert build_module(design) is not None
    rep = repair_design(design.to_dict())
    assert not rep.edits  # nothing to repair: the layer stays


def test_a_factory_kwarg_at_none_on_a_layer_torch_gives_none_is_still_refused():
    with pytest.raises(TypeError):
        torch.nn.ReLU(dtype=None)
    (msg,) = [f.message for f in verify_graph(_one("ReLU", {"dtype": None}, [2, 4])).findings]
    assert "that torch.nn.ReLU does not take" in msg


ENC = {"d_model": 8, "nhead": 2, "dim_feedforward": 16}


@pytest.mark.parametrize("args,layer", [
    ({"encoder_layer": {**ENC, "dtype": "float16"}, "num_layers": 2}, "encoder_layer"),
    ({"encoder_layer": ENC, "num_layers": 2, "norm": {"normalized_shape": 8, "device": "cpu"}}, "norm"),
], ids=["encoder_layer", "norm"])
def test_a_nested_factory_kwarg_gets_the_whole_reason(args, layer):
    (msg,) = [f.message for f in verify_graph(_one("TransformerEncoder", args, [3, 2, 8])).findings
              if f.severity == "block"]
    assert msg.startswith(f"TransformerEncoder 'n': {layer} has argument(s) ") and "\n" not in msg
    assert msg.endswith("archgraph/1 builds every layer with float32 weights on the run's device, so a design "
                        "gives neither; drop them (declare an input's dtype for the data)")
    assert "..." not in msg and "got {" not in msg


def test_a_nested_factory_kwarg_at_none_is_taken():
    args = {"encoder_layer": {**ENC, "dtype": None}, "num_layers": 2, "norm": {"normalized_shape": 8, "device": None}}
    torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(**ENC, dtype=None), 2,
                                torch.nn.LayerNorm(8, device=None))
    design = _one("TransformerEncoder", args, [3, 2, 8])
    assert verify_graph(design).verdict != "block"
    from archcurator.core.build import build_module

    assert build_module(design) is not None


def test_a_nested_misspelt_arg_names_the_layer():
    args = {"encoder_layer": {**ENC, "n_head": 2}, "num_layers": 2}
    (msg,) = [f.message for f in verify_graph(_one("TransformerEncoder", args, [3, 2, 8])).findings
              if f.severity == "block"]
    assert msg == ("TransformerEncoder 'n': encoder_layer has argument(s) 'n_head' that "
                   "torch.nn.TransformerEncoderLayer does not take")


@pytest.mark.parametrize("dtype", ["float16", "float64"])
def test_a_layer_fed_another_float_dtype_is_refused_for_the_mix_not_for_the_dtype(dtype):
    """torch's Linear built in float16 takes float16 data; archgraph/1 builds it in float32, and that mix
    is what torch refuses: the words say so ("which torch's Linear does not take float16" was false)."""
    import json

    import torch

    from archcurator.core.graph import Design
    from archcurator.core.verify import verify_graph

    x = torch.zeros(2, 4, dtype=getattr(torch, dtype))
    torch.nn.Linear(4, 8, dtype=getattr(torch, dtype))(x)        # torch takes the dtype itself
    with pytest.raises(RuntimeError):
        torch.nn.Linear(4, 8)(x)                                  # and refuses it beside float32 weights
    design = Design.from_json(json.dumps({
        "format": "archgraph/1", "name": "mix", "inputs": [{"id": "x", "shape": ["B", 4], "dtype": dtype}],
        "nodes": [{"id": "a", "op": "Linear", "args": {"in_features": 4, "out_features": 8}, "in": ["x"]}],
        "outputs": ["a"]}))
    (f,) = [f for f in verify_graph(design).findings if f.severity == "block"]
    assert f.rule == "dtype.unsupported"
    assert "builds its weights in float32" in f.message and "refuses the mix" in f.message
    assert "does not take" not in f.message

"""The op table as a model of torch.nn, held to real torch: each op's named learned tensors
(`OpSpec.param_shapes`, and the count `params` made from them) against `named_parameters()` of the
module torch builds, and every torch.nn constructor the table knows (`core.ops.nn_classes`) against
torch's own signature."""

from __future__ import annotations

import inspect

import pytest
from torch import nn
from torch.nn.utils import parametrizations

from archcurator.core import dims as D
from archcurator.core.ops import OP_TABLE
from archcurator.core.ops.examples import EXAMPLES
from archcurator.core.ops.nn_classes import (
    AT_CALL,
    FROM_PRETRAINED,
    NOT_NN,
    NOT_OPS,
    constructor_args,
    is_nn_class,
    parametrized,
    positional_args,
    takes_factory_kwargs,
)

# further args per op, to reach the branches of its tensors that the example does not (no bias, projected
# keys, a bias for keys and values, a projected LSTM, layers without bias, a final norm)
VARIANTS = [
    ("Linear", {"in_features": 5, "out_features": 3, "bias": False}),
    ("Bilinear", {"in1_features": 2, "in2_features": 3, "out_features": 4, "bias": False}),
    ("Conv1d", {"in_channels": 4, "out_channels": 6, "kernel_size": 3, "groups": 2, "bias": False}),
    ("ConvTranspose2d", {"in_channels": 4, "out_channels": 6, "kernel_size": [2, 3], "groups": 2}),
    ("ConvTranspose3d", {"in_channels": 2, "out_channels": 2, "kernel_size": 2, "bias": False}),
    ("BatchNorm2d", {"num_features": 6}),
    ("InstanceNorm1d", {"num_features": 3, "affine": True}),
    ("LayerNorm", {"normalized_shape": 8, "bias": False}),
    ("LayerNorm", {"normalized_shape": [2, 3], "elementwise_affine": False}),
    ("RMSNorm", {"normalized_shape": [4, 5], "elementwise_affine": False}),
    ("GroupNorm", {"num_groups": 2, "num_channels": 4, "affine": False}),
    ("PReLU", {"num_parameters": 7}),
    ("MultiheadAttention", {"embed_dim": 8, "num_heads": 2}),
    ("MultiheadAttention", {"embed_dim": 8, "num_heads": 2, "bias": False, "add_bias_kv": True}),
    ("MultiheadAttention", {"embed_dim": 8, "num_heads": 2, "add_bias_kv": True, "kdim": 3, "vdim": 5}),
    ("TransformerEncoderLayer", {"d_model": 8, "nhead": 2, "dim_feedforward": 12, "bias": False}),
    ("TransformerDecoderLayer", {"d_model": 8, "nhead": 2, "dim_feedforward": 12, "bias": False}),
    ("TransformerEncoder", {"encoder_layer": {"d_model": 8, "nhead": 2, "dim_feedforward": 12}, "num_layers": 2,
                            "norm": {"normalized_shape": 8}}),
    ("TransformerDecoder", {"decoder_layer": {"d_model": 8, "nhead": 2, "dim_feedforward": 12, "bias": False},
                            "num_layers": 3, "norm": {"normalized_shape": 8, "bias": False}}),
    ("Transformer", {"d_model": 8, "nhead": 2, "num_encoder_layers": 1, "num_decoder_layers": 2,
                     "dim_feedforward": 12}),
    ("LSTM", {"input_size": 3, "hidden_size": 4, "num_layers": 3, "bias": False}),
    ("GRU", {"input_size": 3, "hidden_size": 4, "num_layers": 2, "bidirectional": True}),
    ("RNN", {"input_size": 3, "hidden_size": 4, "bias": False, "bidirectional": True}),
    ("LSTMCell", {"input_size": 3, "hidden_size": 4, "bias": False}),
    ("GRUCell", {"input_size": 3, "hidden_size": 4}),
    ("RNNCell", {"input_size": 3, "hidden_size": 4}),
    ("EmbeddingBag", {"num_embeddings": 10, "embedding_dim": 3}),
    ("Parameter", {"shape": [2, 3, 4]}),
]
CASES = [(op, EXAMPLES[op][1]) for op in sorted(OP_TABLE)] + VARIANTS


def _torch_module(op, args):
    """The module torch builds for a node with these args: torch.nn's own class where the op is one
    and its args are literals, else the op's builder (thin subclasses of torch.nn's classes taking
    nested layer arguments, and our own modules for tensor ops)."""
    spec = OP_TABLE[op]
    full, missing, unknown = spec.resolve_args(args)
    assert not missing and not unknown
    literal = not any(isinstance(v, dict) for v in full.values()) and op not in ("Transformer",
                                                                                  "TransformerEncoderLayer",
                                                                                  "TransformerDecoderLayer")
    if op not in NOT_NN and literal:
        names = {a.name for a in constructor_args(op)}
        return getattr(nn, op)(**{k: v for k, v in full.items() if k in names}), full
    return spec.build(full), full


@pytest.mark.parametrize("op,args", CASES, ids=[f"{op}-{i}" for i, (op, _) in enumerate(CASES)])
def test_learned_tensors_are_torchs(op, args):
    module, full = _torch_module(op, args)
    want = [(name, tuple(p.shape)) for name, p in module.named_parameters()]
    got = [(name, tuple(shape)) for name, shape in OP_TABLE[op].param_shapes(full)]
    assert got == want
    assert OP_TABLE[op].params(full) == sum(p.numel() for p in module.parameters())


def test_learned_tensors_keep_symbolic_sizes():
    # what the parser asks with sizes it knows only as symbols of its inputs
    shapes = OP_TABLE["Conv2d"].param_shapes(OP_TABLE["Conv2d"].resolve_args(
        {"in_channels": "4*C", "out_channels": "C", "kernel_size": 3, "groups": 2})[0])
    assert shapes == [("weight", ("C", "2*C", 3, 3)), ("bias", ("C",))]
    lstm = OP_TABLE["LSTM"]
    a = lstm.resolve_args({"input_size": "E", "hidden_size": "H"})[0]
    assert lstm.param_shapes(a)[:2] == [("weight_ih_l0", ("4*H", "E")), ("weight_hh_l0", ("4*H", "H"))]
    linear = OP_TABLE["Linear"].params({"in_features": "E", "out_features": 2, "bias": True})
    assert D.same(linear, D.add(D.mul(2, "E"), 2))


@pytest.mark.parametrize("op,args", [
    ("Linear", {"in_features": 5, "out_features": 3}),
    ("Conv2d", {"in_channels": 4, "out_channels": 6, "kernel_size": 3, "bias": False}),
    ("ConvTranspose1d", {"in_channels": 4, "out_channels": 6, "kernel_size": 3}),
    ("Embedding", {"num_embeddings": 9, "embedding_dim": 3}),
])
@pytest.mark.parametrize("par", ["weight_norm", "spectral_norm"])
def test_parametrized_tensors_are_torchs(op, args, par):
    module, full = _torch_module(op, args)
    module = getattr(parametrizations, par)(module)
    want = [(name, tuple(p.shape)) for name, p in module.named_parameters()]
    got = [(name, tuple(s)) for name, s in parametrized(OP_TABLE[op].param_shapes(full), par)]
    assert got == want


def _torch_signature(cls):
    """[(name, default or None, required)] of cls's constructor, device and dtype aside. A class whose
    __init__ passes *args on takes what the class it passes them to takes (Identity and Tanh: Module's,
    nothing; NLLLoss2d: NLLLoss's; LSTM: RNNBase's)."""
    for c in cls.__mro__:
        if c is nn.Module:
            return []
        if "__init__" not in vars(c):
            continue
        params = [p for p in inspect.signature(c.__init__).parameters.values()
                  if p.name not in ("self", "device", "dtype") and p.kind is not p.VAR_KEYWORD]
        if any(p.kind is p.VAR_POSITIONAL for p in params):
            continue
        out = []
        for p in params:
            default = None if p.default is p.empty else p.default
            out.append((p.name, getattr(default, "__name__", default) if callable(default) else default,
                        p.default is p.empty))
        return out
    raise AssertionError(cls)


TORCH_NN = sorted(name for name in dir(nn) if inspect.isclass(getattr(nn, name))
                  and issubclass(getattr(nn, name), nn.Module))


@pytest.mark.parametrize("name", [n for n in TORCH_NN if is_nn_class(n)])
def test_constructors_are_torchs(name):
    want = _torch_signature(getattr(nn, name))
    ours = [(a.name, None if a.required else a.default, a.required) for a in constructor_args(name)]
    if want[:1] == [("mode", None, True)]:  # RNNBase's: RNN takes `nonlinearity` too, only LSTM `proj_size`
        ours = [a for a in ours if a[0] != "nonlinearity"]
        want = want[1:len(ours) + 1]
    assert ours == want


def test_the_table_names_torch_nn_classes_as_torch_does():
    for op in OP_TABLE:
        cls = getattr(nn, op, None)
        is_module = inspect.isclass(cls) and issubclass(cls, nn.Module)
        assert is_module == (op not in NOT_NN), op
        assert is_nn_class(op) == is_module
    for name in NOT_OPS:
        assert name in TORCH_NN and name not in OP_TABLE
    assert set(AT_CALL) <= set(OP_TABLE)
    for op, names in AT_CALL.items():
        assert all(n in OP_TABLE[op].arg_names for n in names)
        assert not set(names) & set(inspect.signature(getattr(nn, op)).parameters)
    # what torch.nn has and the table knows neither as an op nor as another class: tests/test_ops.py's NOT_OPS
    # gives each a reason
    assert constructor_args("Add") is None and not is_nn_class("Add")


def _torch_positional(cls) -> list:
    """The names cls's constructor takes by position, as a call sees them (RNN, GRU and LSTM pass theirs on to
    RNNBase after its `mode`; RNN takes `nonlinearity` fourth)."""
    for c in cls.__mro__:
        if c is nn.Module:
            return []
        if "__init__" not in vars(c):
            continue
        params = list(inspect.signature(c.__init__).parameters.values())[1:]
        if any(p.kind is p.VAR_POSITIONAL for p in params):
            continue
        names = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        if names[:1] == ["mode"]:
            names = names[1:]
            if cls is nn.RNN:
                names.insert(3, "nonlinearity")
        return names
    raise AssertionError(cls)


@pytest.mark.parametrize("name", [n for n in TORCH_NN if is_nn_class(n)])
def test_positional_args_are_torchs(name):
    # what the parser reads a call's positional args as: factory kwargs and keyword-only args included
    assert list(positional_args(name)) == _torch_positional(getattr(nn, name))


@pytest.mark.parametrize("name", [n for n in TORCH_NN if is_nn_class(n)])
def test_taking_factory_kwargs_is_torchs(name):
    cls = getattr(nn, name)
    for c in cls.__mro__:
        params = inspect.signature(c.__init__).parameters if "__init__" in vars(c) else {}
        if c is nn.Module or (params and not any(p.kind is p.VAR_POSITIONAL for p in params.values())):
            break
    want = c is not nn.Module and "dtype" in params and "device" in params
    assert takes_factory_kwargs(name) == want


@pytest.mark.parametrize("name", sorted(FROM_PRETRAINED))
def test_from_pretrained_args_are_torchs(name):
    """The parser binds `nn.<name>.from_pretrained(...)` by these names in this order."""
    params = list(inspect.signature(getattr(nn, name).from_pretrained).parameters)
    assert list(FROM_PRETRAINED[name]) == params


def test_every_from_pretrained_of_torch_nn_is_in_the_table():
    have = {n for n in dir(nn) if inspect.isclass(getattr(nn, n)) and "from_pretrained" in vars(getattr(nn, n))}
    assert have == set(FROM_PRETRAINED)

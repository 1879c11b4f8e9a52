"""A layer built with torch's factory kwargs: `device` changes nothing the design holds; a dtype other
than float32 is said (archgraph/1 builds float32 layers), never dropped in silence. What the source asked
for is said as torch takes it (each case checked against torch 2.13): by keyword or by position where torch's
signature has them positionally, and a TypeError where torch's constructor takes neither (nn.ReLU)."""

from __future__ import annotations

import pytest

from archcurator.core.parse import parse_source

SOURCE = """import torch
import torch.nn as nn


class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = {layer}

    def forward(self, x):
        return self.fc(x)
"""


def _parse(tmp_path, layer: str, shape=(2, 4)):
    src = tmp_path / "m.py"
    src.write_text(SOURCE.format(layer=layer))
    return parse_source(src, "M", {}, [(list(shape), "float32")])


def _warnings(tmp_path, kw: str) -> list[str]:
    r = _parse(tmp_path, f"nn.Linear(4, 8{kw})")
    assert [n["op"] for n in r.design["nodes"]] == ["Linear"]
    return [w.message for w in r.warnings]


@pytest.mark.parametrize("kw", [", dtype=torch.float16", ", dtype=torch.bfloat16",
                                ", device='cpu', dtype=torch.double"])
def test_a_layer_built_in_another_dtype_is_said(tmp_path, kw):
    said = [m for m in _warnings(tmp_path, kw) if "dtype=" in m]
    assert len(said) == 1 and "nn.Linear" in said[0] and "float32" in said[0]


@pytest.mark.parametrize("kw", ["", ", dtype=torch.float32", ", device='cuda'", ", dtype=None, device=None",
                                ", True, 'cpu'", ", True, None, None", ", True, None, torch.float32"])
def test_the_default_placement_and_dtype_say_nothing(tmp_path, kw):
    assert _warnings(tmp_path, kw) == []


# torch: ReLU.__init__() / _DropoutNd.__init__() / GELU.__init__() / Tanh.__init__() got an unexpected keyword
# argument 'dtype' (or 'device'), None included
@pytest.mark.parametrize("layer,kw", [("nn.ReLU(dtype=torch.float16)", "dtype=torch.float16"),
                                      ("nn.Dropout(0.1, device='cpu')", "device='cpu'"),
                                      ("nn.GELU(device=None)", "device=None"),
                                      ("nn.Tanh(dtype=torch.float16)", "dtype=torch.float16"),
                                      ("nn.Softmax(dim=-1, dtype=torch.float32)", "dtype=torch.float32")])
def test_a_layer_whose_constructor_takes_no_factory_kwargs_is_said_not_to_build(tmp_path, layer, kw):
    r = _parse(tmp_path, layer)
    op = layer[3:layer.index("(")]
    assert [n["op"] for n in r.design["nodes"]] == [op]
    assert len(r.warnings) == 1
    w = r.warnings[0]
    assert w.file.endswith("m.py") and w.line == 8
    assert w.message.startswith(f"nn.{op} 'fc' is given {kw}, but torch.nn.{op}'s constructor takes neither dtype nor "
                                "device: torch raises TypeError")
    assert "cannot build" in w.message and "weights" not in w.message
    assert r.design["meta"]["parser_warnings"] == [{"line": f"{w.file}:8", "message": w.message}]


def test_identity_takes_any_args(tmp_path):
    assert _parse(tmp_path, "nn.Identity(54, dtype=torch.float16)").warnings == []


# what is said where a float16 layer of these sources meets float32 values (tests/parse/test_module_casts.py)
MIX = "weights and is called on"


@pytest.mark.parametrize("layer,op,shape", [
    ("nn.Linear(4, 8, True, None, torch.float16)", "Linear", (2, 4)),
    ("nn.Linear(4, 8, True, 'cpu', torch.float16)", "Linear", (2, 4)),
    ("nn.BatchNorm1d(4, 1e-5, 0.1, True, True, None, torch.float16)", "BatchNorm1d", (2, 4)),
    ("nn.Conv1d(4, 8, 3, 1, 0, 1, 1, True, 'zeros', None, torch.float16)", "Conv1d", (2, 4, 9)),
    ("nn.LayerNorm(4, 1e-5, True, True, None, torch.float16)", "LayerNorm", (2, 4)),
    ("nn.Embedding(10, 4, None, None, 2.0, False, False, None, False, None, torch.float16)", "Embedding", (2, 3)),
])
def test_factory_kwargs_by_position_are_read_as_torch_reads_them(tmp_path, layer, op, shape):
    r = _parse(tmp_path, layer, shape)
    assert [n["op"] for n in r.design["nodes"]] == [op]
    said = [w.message for w in r.warnings]
    assert said[0].startswith(f"nn.{op} 'fc' is built with dtype=float16: archgraph/1 builds every layer with float32 "
                              "weights")
    # fed float32 values, a float16 layer is where torch raises (an Embedding looks up integer ids)
    mix = [f"nn.{op} 'fc' has float16 weights and is called on float32 values: torch raises"]
    assert [w[:len(mix[0])] for w in said[1:]] == ([] if op == "Embedding" else mix)


def test_a_recurrent_layers_positional_proj_size_slot_is_torchs(tmp_path):
    # GRU and RNN pass their args to RNNBase, whose eighth (ninth for RNN) is proj_size, then device and dtype
    r = _parse(tmp_path, "nn.GRU(4, 8, 1, True, True, 0.0, False, 0, None, torch.float16)", (2, 3, 4))
    assert [n["op"] for n in r.design["nodes"]] == ["GRU"]
    assert r.design["nodes"][0]["args"] == {"input_size": 4, "hidden_size": 8, "batch_first": True}
    assert [w.message[:31] for w in r.warnings] == ["nn.GRU 'fc' is built with dtype=float16"[:31],
                                                    "nn.GRU 'fc' has float16 weights and is called"[:31]]


def test_a_recurrent_layers_positional_proj_size_is_said(tmp_path):
    # torch 2.13 builds GRU(4, 8, 1, True, True, 0.0, False, 2) with weight_hr_l0; its forward raises RuntimeError
    r = _parse(tmp_path, "nn.GRU(4, 8, 1, True, True, 0.0, False, 2)", (2, 3, 4))
    assert r.design["nodes"][0]["args"] == {"input_size": 4, "hidden_size": 8, "batch_first": True}
    assert [w.message for w in r.warnings] == [
        "nn.GRU 'fc' is given proj_size=2 by position (RNNBase's slot, LSTM's only): torch builds its projection "
        "weights, but torch.nn.GRU's forward then raises RuntimeError (expected hidden size), so the source cannot "
        "run as written; the design leaves it out"]


def test_too_many_positional_arguments_count_the_factory_kwargs(tmp_path):
    said = _warnings(tmp_path, ", True, None, torch.float16, 3")
    assert said[0] == ("nn.Linear 'fc' is given too many positional arguments: torch.nn.Linear takes at most 5 "
                       "(in_features, out_features, bias, device, dtype), got 6")


def test_a_keyword_only_bias_is_not_read_by_position(tmp_path):
    # torch >= 2.10: BatchNorm's bias is keyword-only; its sixth positional arg is device
    r = _parse(tmp_path, "nn.BatchNorm1d(4, 1e-5, 0.1, True, True, None)")
    assert r.design["nodes"][0]["args"] == {"num_features": 4} and r.warnings == []


@pytest.mark.parametrize("dtype,said", [
    # torch: empty(): argument 'dtype' must be torch.dtype, not str
    ("'float16'", "nn.Linear 'fc' is given dtype='float16', a string: torch raises TypeError (a dtype must be a "
                  "torch.dtype such as torch.float16, not a str), so the source cannot build as written; "
                  "archgraph/1 builds the layer with float32 weights"),
    # torch builds complex64 weights
    ("torch.complex64", "nn.Linear 'fc' is built with dtype=complex64: archgraph/1 builds every layer with float32 "
                        "weights, so the design verifies float32 weights where the source has complex64 ones"),
    # torch: "check_uniform_bounds" not implemented for 'Float8_e4m3fn'
    ("torch.float8_e4m3fn", "nn.Linear 'fc' is built with dtype=float8_e4m3fn: archgraph/1 builds every layer with "
                            "float32 weights, so the design verifies float32 weights where the source has "
                            "float8_e4m3fn ones (torch's random initialisation of float8_e4m3fn weights raises "
                            "NotImplementedError for most layers)"),
    # torch: Only Tensors of floating point and complex dtype can require gradients
    ("torch.int64", "nn.Linear 'fc' is built with dtype=int64: torch raises RuntimeError (only floating point "
                    "and complex tensors can require gradients), so the source cannot build as written; archgraph/1 "
                    "builds the layer with float32 weights"),
    ("torch.long", "nn.Linear 'fc' is built with dtype=int64: torch raises RuntimeError"),
    ("torch.bool", "nn.Linear 'fc' is built with dtype=bool: torch raises RuntimeError"),
    ("torch.uint16", "nn.Linear 'fc' is built with dtype=uint16: torch raises RuntimeError"),
])
def test_each_kind_of_dtype_is_said_as_torch_takes_it(tmp_path, dtype, said):
    got = _warnings(tmp_path, f", dtype={dtype}")
    assert len(got) == 1 and got[0].startswith(said)


@pytest.mark.parametrize("layer", ["nn.LayerNorm(4, elementwise_affine=False, dtype=torch.float16)",
                                   "nn.LayerNorm(4, elementwise_affine=False, dtype=torch.int64)"])
def test_a_layer_without_learned_tensors_has_no_weights_to_type(tmp_path, layer):
    # torch builds these (no parameters): nothing of the design differs
    assert _parse(tmp_path, layer).warnings == []


def test_a_stack_given_a_dtype_is_said_not_to_build(tmp_path):
    # torch: TransformerEncoder.__init__() got an unexpected keyword argument 'dtype'
    r = _parse(tmp_path, "nn.TransformerEncoder(nn.TransformerEncoderLayer(4, 2, 8), 1, dtype=torch.float16)",
               (3, 2, 4))
    assert [w.message[:60] for w in r.warnings] == [
        "nn.TransformerEncoder 'fc' is given dtype=torch.float16, but torch.nn.TransformerEncoder's"[:60]]


def test_a_transformer_built_in_float16_is_said(tmp_path):
    src = tmp_path / "m.py"
    src.write_text(SOURCE.format(layer="nn.Transformer(8, 2, 1, 1, 16, dtype=torch.float16)").replace(
        "return self.fc(x)", "return self.fc(x, x)"))
    r = parse_source(src, "M", {}, [([3, 2, 8], "float32")])
    assert [w.message for w in r.warnings if "dtype" in w.message] == [
        "nn.Transformer 'fc' is built with dtype=float16: archgraph/1 builds every layer with float32 weights, so the "
        "design verifies float32 weights where the source has float16 ones"]


NESTED = """import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4, dtype=torch.float16)
        self.act = nn.ReLU(dtype=torch.float16)

    def forward(self, x):
        return self.act(self.proj(x))


class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.Sequential(Block(), nn.GELU(device="cpu"))
        self.heads = nn.ModuleDict({"out": nn.Linear(4, 2, foo=1)})

    def forward(self, x):
        return self.heads["out"](self.blocks(x))
"""


def test_a_layers_message_names_it_by_its_attribute_path(tmp_path):
    src = tmp_path / "m.py"
    src.write_text(NESTED)
    r = parse_source(src, "M", {}, [([2, 4], "float32")])
    assert [n["op"] for n in r.design["nodes"]] == ["Linear", "ReLU", "GELU", "Linear"]
    got = [(w.line, w.message.split(" is ")[0].split(" has ")[0]) for w in r.warnings if MIX not in w.message]
    assert got == [(8, "nn.Linear 'blocks.0.proj'"), (9, "nn.ReLU 'blocks.0.act'"), (18, "nn.GELU 'blocks.1'"),
                   (19, "nn.Linear 'heads.out'")]
    assert [w.message for w in r.warnings if "heads.out" in w.message] == [
        "nn.Linear 'heads.out' has no argument 'foo'; ignored"]


def test_a_layer_never_named_is_said_by_its_class(tmp_path):
    src = tmp_path / "m.py"
    src.write_text(SOURCE.format(layer="nn.Linear(4, 4)").replace(
        "return self.fc(x)", "return nn.ReLU(dtype=torch.float16)(self.fc(x))"))
    r = parse_source(src, "M", {}, [([2, 4], "float32")])
    said = [w for w in r.warnings if "dtype" in w.message]
    assert [(w.line, w.message.split(" is ")[0]) for w in said] == [(11, "nn.ReLU")]


def test_the_layers_of_a_loop_are_said_once(tmp_path):
    src = tmp_path / "m.py"
    src.write_text(SOURCE.format(layer="nn.ModuleList([nn.Linear(4, 4, dtype=torch.half) for _ in range(3)])")
                   .replace("return self.fc(x)", "for f in self.fc:\n            x = f(x)\n        return x"))
    r = parse_source(src, "M", {}, [([2, 4], "float32")])
    assert [n["op"] for n in r.design["nodes"]] == ["Linear"] * 3
    assert [w.message.split(" is built")[0] for w in r.warnings if MIX not in w.message] == [
        "nn.Linear 'fc.0' (and 2 more built by this line)"]


def test_a_stacks_layer_is_named_by_its_first_copy(tmp_path):
    r = _parse(tmp_path, "nn.TransformerEncoder(nn.TransformerEncoderLayer(4, 2, 8, dtype=torch.float16), 2, "
                         "nn.LayerNorm(4, foo=1))", (3, 2, 4))
    assert [w.message.split(" is built")[0].split(" has ")[0] for w in r.warnings if MIX not in w.message] == [
        "nn.TransformerEncoderLayer 'fc.layers.0'", "nn.LayerNorm 'fc.norm'"]


def test_a_layer_built_by_forward_is_said_once_when_forward_is_read_again(tmp_path):
    # the parser reads forward a second time once it knows y's shape: the first reading's layers are not counted
    src = tmp_path / "m.py"
    src.write_text(SOURCE.format(layer="nn.Linear(4, 4)").replace("def forward(self, x):", "def forward(self, x, y):")
                   .replace("return self.fc(x)", "return nn.ReLU(dtype=torch.float16)(self.fc(x)) + self.fc(y)"))
    r = parse_source(src, "M", {}, [([2, 4], "float32")])
    assert [w.message.split(" is given")[0] for w in r.warnings if "dtype" in w.message] == ["nn.ReLU"]

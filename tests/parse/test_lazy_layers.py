"""torch's lazy layers (nn.LazyLinear, LazyConv*d, LazyConvTranspose*d, LazyBatchNorm*d, LazyInstanceNorm*d) read
as the op each becomes at its first call, with the size torch reads off that call's input; and the idioms of
Dive into Deep Learning's package around them (`d2l = sys.modules[__name__]`, `save_hyperparameters` reading
its caller's frame). Each source is run in torch by the test (never by the parser): the same parameters and
output shapes, no block."""

from __future__ import annotations

import importlib.util
import sys

import pytest
import torch
from parsehelp import output_shapes

from archcurator.core.graph import Design
from archcurator.core.parse import parse_source
from archcurator.core.verify import verify_graph

HEAD = "import inspect\nimport sys\nimport torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n"

MODELS = {
    "cnn": ("""
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.LazyConv2d(6, kernel_size=5, padding=2), nn.LazyBatchNorm2d(), nn.ReLU(),
                                 nn.Flatten(), nn.LazyLinear(10, bias=False))

    def forward(self, x):
        return self.net(x)
""", [2, 3, 8, 8]),
    "positional": ("""
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.LazyConv1d(8, 3, 2, 1, 1, 2, False)
        self.up = nn.LazyConvTranspose1d(4, 2, 2)
        self.norm = nn.LazyInstanceNorm1d(1e-3)

    def forward(self, x):
        return self.norm(self.up(self.conv(x)))
""", [2, 6, 16]),
    "instance_norm_defaults": ("""
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.LazyInstanceNorm2d()
        self.b = nn.LazyInstanceNorm2d(affine=False, track_running_stats=False)

    def forward(self, x):
        return self.b(self.a(x))
""", [2, 5, 4, 4]),
    "unbatched_conv": ("""
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.LazyConv2d(4, 3)

    def forward(self, x):
        return self.conv(x)
""", [3, 8, 8]),
    "shared_and_read_after_call": ("""
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.LazyLinear(7)
        self.out = nn.LazyLinear(3)

    def forward(self, x):
        y = self.fc(x)
        y = self.out(y + self.fc(x))
        return y * self.fc.in_features
""", [2, 5]),
    "d2l_module": ("""
d2l = sys.modules[__name__]
nn_Module = nn.Module


class HyperParameters:
    def save_hyperparameters(self, ignore=()):
        caller = inspect.currentframe().f_back
        names, _, _, values = inspect.getargvalues(caller)
        for name in names[1:]:
            if name not in ignore:
                setattr(self, name, values[name])


class Module(d2l.nn_Module, d2l.HyperParameters):
    def __init__(self):
        super().__init__()

    def forward(self, X):
        return self.net(X)


class M(d2l.Module):
    def __init__(self, num_hiddens=12, num_outputs=3, lr=0.1):
        super().__init__()
        self.save_hyperparameters(ignore=['lr'])
        setattr(sys.modules[__name__], 'WIDTH', self.num_hiddens)  # as timm's registry writes into a model's module
        assert d2l.WIDTH == 12
        self.net = nn.Sequential(nn.LazyLinear(self.num_hiddens), nn.ReLU(), nn.LazyLinear(self.num_outputs))
""", [2, 5]),
}


def _torch(src, name, shape):
    loader = importlib.util.spec_from_file_location(f"lazy_{name}", src)
    mod = importlib.util.module_from_spec(loader)
    sys.modules[mod.__name__] = mod  # as an import does: the module reads itself there
    try:
        loader.loader.exec_module(mod)
        torch.manual_seed(0)
        model = mod.M().eval()
        with torch.no_grad():
            y = model(torch.randn(shape))
    finally:
        del sys.modules[mod.__name__]
    return sum(p.numel() for p in model.parameters()), [list(y.shape)], model


@pytest.mark.parametrize("name", sorted(MODELS))
def test_lazy_layers_count_and_shape_as_torch(tmp_path, name):
    text, shape = MODELS[name]
    src = tmp_path / f"{name}.py"
    src.write_text(HEAD + text)
    real_params, real_shapes, _ = _torch(src, name, shape)
    r = parse_source(src, "M", {}, [(shape, "float32")])
    rep = verify_graph(Design.from_dict(r.design))
    assert not [f for f in rep.findings if f.severity == "block"], [f.message for f in rep.findings]
    assert (rep.cost["params"], output_shapes(r.design, rep)) == (real_params, real_shapes)
    assert r.warnings == [], [w.message for w in r.warnings]
    assert not [n for n in r.design["nodes"] if n["op"].startswith("Lazy")]


def test_a_lazy_layer_becomes_the_op_torch_makes_of_it(tmp_path):
    text, shape = MODELS["positional"]
    src = tmp_path / "m.py"
    src.write_text(HEAD + text)
    _, _, model = _torch(src, "positional_ops", shape)
    r = parse_source(src, "M", {}, [(shape, "float32")])
    nodes = {n["id"]: n for n in r.design["nodes"]}
    for name in ("conv", "up", "norm"):
        layer = getattr(model, name)
        assert nodes[name]["op"] == type(layer).__name__  # torch's cls_to_become, after the first call
    assert nodes["conv"]["args"]["in_channels"] == model.conv.in_channels == 6
    assert nodes["up"]["args"]["in_channels"] == model.up.in_channels == 8
    assert nodes["norm"]["args"]["num_features"] == model.norm.num_features == 4
    # LazyInstanceNorm's own defaults (affine, tracked statistics), not InstanceNorm's
    assert nodes["norm"]["args"].get("affine") is model.norm.affine is True
    assert nodes["norm"]["args"].get("track_running_stats") is model.norm.track_running_stats is True
    assert nodes["conv"]["args"].get("bias") is False and nodes["norm"]["args"].get("eps") == 1e-3


def test_a_lazy_layer_given_an_input_torch_refuses_is_refused(tmp_path):
    src = tmp_path / "m.py"
    src.write_text(HEAD + MODELS["unbatched_conv"][0])
    with pytest.raises(RuntimeError):
        _torch(src, "rank_5", [1, 2, 3, 8, 8])
    r = parse_source(src, "M", {}, [([1, 2, 3, 8, 8], "float32")])
    blocks = [f for f in verify_graph(Design.from_dict(r.design)).findings if f.severity == "block"]
    assert [f.rule for f in blocks] == ["shape.rank"] and "5-D" in blocks[0].message

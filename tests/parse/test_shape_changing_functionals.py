"""Functionals that change a shape, which the parser had passed through unchanged (so an op downstream was
refused for a model that runs). F.pad naming outer dims it pads by nothing (MONAI's ChannelPad pads the channels
of [N, C, H, W] with 4 pairs, the batch's 0, 0): the pad of the dims it does pad. F.conv1d / F.conv2d with a
weight no nn.Conv owns: a fixed filter buffer (timm's BlurPool, the anti-aliased
downsampling of TResNet and NFNet) or a learned nn.Parameter of the module's own. The tensor was passed through
unchanged, so the residual add after a strided blur was refused for models that run; now written as Unfold
and a MatMul, with torch's shapes and parameters (a buffer is no parameter), and the design builds and runs in
torch through our builder. Each source is run in torch by the test."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys

import pytest
import torch
from parsehelp import output_shapes

from archcurator.core.graph import Design
from archcurator.core.parse import parse_source
from archcurator.core.verify import verify_graph

HEAD = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n"

MODELS = {
    "blur_pool": ("""
class M(nn.Module):
    def __init__(self, channels=4):
        super().__init__()
        coeffs = torch.tensor([1.0, 2.0, 1.0]) / 4
        self.register_buffer('filt', (coeffs[:, None] * coeffs[None, :])[None, None, :, :].repeat(channels, 1, 1, 1))
        self.channels = channels

    def forward(self, x):
        x = F.pad(x, [1, 1, 1, 1], mode='reflect')
        return F.conv2d(x, self.filt, stride=2, groups=self.channels) + x[:, :, ::2, ::2][:, :, :5, :5]
""", [2, 4, 10, 10]),
    "own_weight": ("""
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(6, 2, 3, 3))
        self.bias = nn.Parameter(torch.zeros(6))

    def forward(self, x):
        w = self.weight - self.weight.mean(dim=(1, 2, 3), keepdim=True)
        return F.conv2d(x, w, self.bias, (2, 1), 2, 2, 2)
""", [2, 4, 9, 11]),
    "conv1d": ("""
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(5, 3, 4))

    def forward(self, x):
        return F.conv1d(x, self.weight, stride=2, padding=1)
""", [2, 3, 17]),
    "channel_pad": ("""
class M(nn.Module):
    def forward(self, x):
        return F.pad(x, [0, 0, 0, 0, 2, 3, 0, 0]) + F.pad(x, (1, 1, 0, 0, 2, 3, 0, 0), value=0.0)[..., 1:5]
""", [2, 3, 4, 4]),
    "same_padding": ("""
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(3, 3, 5, 3))

    def forward(self, x):
        return F.conv2d(x, self.weight, padding='same', dilation=(1, 2)) + F.conv2d(x, self.weight[:, :, 1:4], None,
                                                                                    1, 'valid')[:, :, :, 2:-2].sum()
""", [2, 3, 8, 8]),
}


def _torch(src, name, shape):
    loader = importlib.util.spec_from_file_location(f"fconv_{name}", src)
    mod = importlib.util.module_from_spec(loader)
    loader.loader.exec_module(mod)
    model = mod.M()
    with torch.no_grad():
        y = model(torch.randn(shape))
    return sum(p.numel() for p in model.parameters()), [list(y.shape)]


@pytest.mark.parametrize("name", sorted(MODELS))
def test_a_conv_of_a_weight_no_layer_owns_counts_and_shapes_as_torch(tmp_path, name):
    text, shape = MODELS[name]
    src = tmp_path / f"{name}.py"
    src.write_text(HEAD + text)
    real = _torch(src, name, shape)
    r = parse_source(src, "M", {}, [(shape, "float32")])
    rep = verify_graph(Design.from_dict(r.design))
    assert not [f for f in rep.findings if f.severity == "block"], [f.message for f in rep.findings]
    assert (rep.cost["params"], output_shapes(r.design, rep)) == real
    assert not [w for w in r.warnings if "passed through" in w.message], [w.message for w in r.warnings]
    assert name == "channel_pad" or "Unfold" in [n["op"] for n in r.design["nodes"]]


@pytest.mark.slow
def test_the_design_runs_in_torch(tmp_path):
    text, shape = MODELS["own_weight"]
    src = tmp_path / "m.py"
    src.write_text(HEAD + text)
    design = tmp_path / "m.json"
    design.write_text(json.dumps(parse_source(src, "M", {}, [(shape, "float32")]).design))
    out = subprocess.run([sys.executable, "-m", "archcurator", "run", str(design), "--check", "forward", "--json"],
                         capture_output=True, text=True, timeout=300)
    assert json.loads(out.stdout)["status"] == "ok", out.stdout + out.stderr


def test_a_weight_whose_channels_do_not_divide_is_still_passed_on(tmp_path):
    src = tmp_path / "m.py"
    src.write_text(HEAD + MODELS["conv1d"][0])
    r = parse_source(src, "M", {}, [([2, 4, 17], "float32")])  # 4 channels, the weight takes 3: torch raises
    assert [w for w in r.warnings if "F.conv1d" in w.message]

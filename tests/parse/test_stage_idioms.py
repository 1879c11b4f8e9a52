"""Two idioms of timm's RegNet that the parser got wrong, each source run in torch here for the truth:
a stage whose forward is `for block in self.children(): x = block(x)` (read as an initialisation loop and
skipped, so every stage was "never reached" and the head was refused), and stage depths read with
`torch.unique(widths, return_counts=True)` (passed through, so the depths came out as one int and the source's own
check raised)."""

from __future__ import annotations

import importlib.util

import pytest
import torch
from parsehelp import output_shapes

from archcurator.core.graph import Design
from archcurator.core.parse import parse_source
from archcurator.core.verify import verify_graph

STAGES = """import torch
from torch import nn


def stage_depths(widths):
    w, d = torch.unique(torch.tensor(widths), {flags})
    w, d = w.tolist(), d.tolist()
    if isinstance(d, int):
        raise ValueError("the depths must be a list")
    return list(zip(w, d))


class Stage(nn.Module):
    def __init__(self, depth, c_in, c_out):
        super().__init__()
        for i in range(depth):
            self.add_module("b{{}}".format(i + 1), nn.Conv2d(c_in if i == 0 else c_out, c_out, 3, padding=1))

    def forward(self, x):
        for block in self.children():
            x = torch.relu(block(x))
        return x


class M(nn.Module):
    def __init__(self, widths=(8, 8, 16, 16, 16, 24)):
        super().__init__()
        prev = 3
        for i, (w, d) in enumerate(stage_depths(list(widths))):
            self.add_module("s{{}}".format(i + 1), Stage(d, prev, w))
            prev = w
        self.head = nn.Linear(prev, 5)

    def forward(self, x):
        x = self.s1(x)
        x = self.s2(x)
        x = self.s3(x)
        return self.head(x.mean((2, 3)))
"""


def _torch(src, name):
    """The same file run in torch (by this test only; the parser reads it)."""
    loader = importlib.util.spec_from_file_location(f"stage_idioms_{name}", src)
    mod = importlib.util.module_from_spec(loader)
    loader.loader.exec_module(mod)
    model = mod.M().eval()
    with torch.no_grad():
        y = model(torch.randn(2, 3, 8, 8))
    return sum(p.numel() for p in model.parameters()), [list(y.shape)]


@pytest.mark.parametrize("flags", ["return_counts=True", "sorted=True, return_counts=True",
                                   "True, False, True"])
def test_stages_read_off_unique_counts_and_run_by_children_are_torchs(tmp_path, flags):
    src = tmp_path / "m.py"
    src.write_text(STAGES.format(flags=flags))
    params, shapes = _torch(src, flags.replace(", ", "_").replace("=", ""))
    r = parse_source(src, "M", {}, [([2, 3, 8, 8], "float32")])
    rep = verify_graph(Design.from_dict(r.design))
    assert rep.verdict != "block", [f.message for f in rep.findings]
    assert (rep.cost["params"], output_shapes(r.design, rep)) == (params, shapes)
    assert [n["op"] for n in r.design["nodes"]].count("Conv2d") == 6
    assert not r.warnings, [w.message for w in r.warnings]


def test_unique_of_a_constant_gives_torchs_values_inverse_and_counts(tmp_path):
    src = tmp_path / "m.py"
    src.write_text("""import torch
from torch import nn


class M(nn.Module):
    def __init__(self):
        super().__init__()
        v, inv, cnt = torch.tensor([3, 1, 3, 2, 3]).unique(return_inverse=True, return_counts=True)
        c, ccnt = torch.unique_consecutive(torch.tensor([4, 4, 1, 4]), return_counts=True)
        sizes = v.tolist() + inv.tolist() + cnt.tolist() + c.tolist() + ccnt.tolist()
        self.fc = nn.Linear(4, sum(sizes))

    def forward(self, x):
        return self.fc(x)
""")
    width = _load(src).M().fc.out_features  # 3 + 5 + 3 + 3 + 3 sizes, summed as torch gives them
    r = parse_source(src, "M", {}, [([2, 4], "float32")])
    assert r.design["nodes"][0]["args"]["out_features"] == width


def _load(src):
    loader = importlib.util.spec_from_file_location("stage_idioms_unique", src)
    mod = importlib.util.module_from_spec(loader)
    loader.loader.exec_module(mod)
    return mod

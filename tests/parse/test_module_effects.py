"""Module-level effects (registries filled at import), the unknowns issue 28 names (numpy/scipy shapes,
text config files, Enum/`inspect` helpers), `parse --mode`, files parsed in place beside torch, and
the cost quoted per sample: each against real torch, and never executed."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import torch
from parsehelp import output_shapes

from archcurator.core.graph import Design
from archcurator.core.parse import parse_source
from archcurator.core.verify import verify_graph

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _write(root, files):
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


def _real(root, module, entry, kwargs, shape):
    """Params and output shape of the same code in real torch, in a child process (the file is run
    only here, by the test, never by the parser)."""
    code = (f"import sys, json, torch; sys.path.insert(0, {str(root)!r}); import importlib; "
            f"m = getattr(importlib.import_module({module!r}), {entry!r})(**{kwargs!r}); "
            f"y = m(torch.randn(*{shape!r})); "
            "print(json.dumps([sum(p.numel() for p in m.parameters()), list(y.shape)]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def _parsed(path, entry, kwargs, shape, **kw):
    r = parse_source(str(path), entry, kwargs, [",".join(map(str, shape))], **kw)
    rep = verify_graph(Design.from_dict(r.design))
    return r, rep, [rep.cost["params"], output_shapes(r.design, rep)[0]]


REGISTRY_PKG = {
    "reg/__init__.py": "",
    "reg/factories.py": (
        "import torch.nn as nn\n"
        "class Factory:\n"
        "    '''layers by name'''\n"
        "    def __init__(self):\n"
        "        self.table = {}\n"
        "    def register(self, name):\n"
        "        def deco(fn):\n"
        "            self.table[name.upper()] = fn\n"
        "            return fn\n"
        "        return deco\n"
        "    def add(self, name, cls):\n"
        "        self.table[name.upper()] = lambda: cls\n"
        "    def __getitem__(self, name):\n"
        "        return self.table[name.upper()]()\n"
        "    def __getattr__(self, key):\n"
        "        if key in self.table:\n"
        "            return key\n"
        "        return super().__getattribute__(key)\n"
        "    def __contains__(self, key):\n"
        "        return key.upper() in self.table\n"
        "Act = Factory()\n"
        "Act.add('relu', nn.ReLU)\n"
        "@Act.register('gelu')\n"
        "def _gelu():\n"
        "    return nn.GELU\n"
        "_NORMS = {}\n"
        "def register_norm(name):\n"
        "    def deco(cls):\n"
        "        _NORMS[name] = cls\n"
        "        return cls\n"
        "    return deco\n"
        "@register_norm('ln')\n"
        "class MyNorm(nn.LayerNorm):\n"
        "    pass\n"
        "_NORMS['bn'] = nn.BatchNorm1d\n"
        "ENCODERS = {}\n"
        "ENCODERS.update({'small': 16})\n"
        "ENCODERS.update(big=32)\n"),
    "reg/model.py": (
        "import torch.nn as nn\n"
        "from .factories import Act, _NORMS, ENCODERS\n"
        "class Net(nn.Module):\n"
        "    def __init__(self, act='gelu', norm='ln', enc='big'):\n"
        "        super().__init__()\n"
        "        assert act in Act and Act.GELU == 'GELU'\n"
        "        width = ENCODERS[enc]\n"
        "        self.fc = nn.Linear(8, width)\n"
        "        self.act = Act[act]()\n"
        "        self.norm = _NORMS[norm](width)\n"
        "    def forward(self, x):\n"
        "        return self.norm(self.act(self.fc(x)))\n"),
}


@pytest.mark.slow
@pytest.mark.parametrize("kwargs", [{}, {"act": "relu", "norm": "bn", "enc": "small"}])
def test_registries_filled_at_module_level_are_followed(tmp_path, kwargs):
    """A registry filled after its definition by a method call, a decorator on the registry, a module
    function that writes into it, item assignment and dict.update, read through __getitem__,
    __getattr__ and __contains__: the design torch builds."""
    _write(tmp_path, REGISTRY_PKG)
    _, rep, got = _parsed(tmp_path / "reg" / "model.py", "Net", kwargs, (2, 8))
    assert got == _real(tmp_path, "reg.model", "Net", kwargs, (2, 8))
    assert not [f for f in rep.findings if f.severity == "block"]


def test_module_bodies_are_followed_never_executed(tmp_path):
    """A package whose module bodies (and registered functions) would write a marker file: parsed
    through the command line, the registry is filled and no file is ever written."""
    marker = tmp_path / "ran"
    _write(tmp_path, {
        "evil/__init__.py": f"import os\nos.system('touch {marker}')\n",
        "evil/table.py": (
            "import os, importlib\n"
            "import torch.nn as nn\n"
            "TABLE = {}\n"
            f"open('{marker}', 'w').write('x')\n"
            f"TABLE.update({{'w': 12, 'side': os.system('touch {marker}')}})\n"
            f"importlib.import_module('os').system('touch {marker}')\n"
            f"__import__('subprocess').run(['touch', '{marker}'])\n"
            "def register(name):\n"
            "    def deco(fn):\n"
            f"        os.system('touch {marker}')\n"
            "        TABLE[name] = fn\n"
            "        return fn\n"
            "    return deco\n"
            "@register('lin')\n"
            "def lin(n):\n"
            f"    open('{marker}', 'w')\n"
            "    return nn.Linear(4, n)\n"),
        "evil/model.py": (
            "import torch.nn as nn\n"
            "from .table import TABLE\n"
            "class M(nn.Module):\n"
            "    def __init__(self):\n"
            "        super().__init__()\n"
            "        self.fc = TABLE['lin'](TABLE['w'])\n"
            "    def forward(self, x):\n"
            "        return self.fc(x)\n"),
    })
    proc = subprocess.run([sys.executable, "-m", "archcurator.tui.cli", "parse", str(tmp_path / "evil" / "model.py"),
                           "--entry", "M", "--input", "2,4", "--json"], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert not marker.exists()
    d = json.loads(proc.stdout)
    assert [n["args"].get("out_features") for n in d["nodes"] if n["op"] == "Linear"] == [12]


UNKNOWNS = {
    "unk/__init__.py": "",
    "unk/arch.json": json.dumps({"width": 16}),
    "unk/m.py": (
        "import enum, inspect, json, os\n"
        "from dataclasses import dataclass\n"
        "from typing import Union\n"
        "import numpy as np\n"
        "import scipy.linalg\n"
        "import torch\n"
        "import torch.nn as nn\n"
        "ACTS = {'relu': nn.ReLU, 'gelu': nn.GELU}\n"
        "class Mode(str, enum.Enum):\n"
        "    A = 'a'\n"
        "    B = 'b'\n"
        "@dataclass\n"
        "class Cfg:\n"
        "    dim: int = 8\n"
        "    act: str = 'gelu'\n"
        "def pad(k):\n"
        "    kn = np.atleast_1d(k)\n"
        "    if np.any((kn - 1) % 2 == 1):\n"
        "        raise NotImplementedError\n"
        "    p = tuple(int(v) for v in (kn - 1) // 2)\n"
        "    return p if len(p) > 1 else p[0]\n"
        "class M(nn.Module):\n"
        "    def __init__(self, cfg: Union[Cfg, dict] = None, res=(4, 6), window=(7, 7), mode='b'):\n"
        "        super().__init__()\n"
        "        cfg = Cfg(**(cfg or {})) if not isinstance(cfg, Cfg) else cfg\n"
        "        assert mode in {m.value for m in Mode} and not isinstance(res, np.ndarray)\n"
        "        if min(res) <= min(window):\n"
        "            window = (min(res), min(res))\n"
        "        self.table = nn.Parameter(torch.zeros((2 * window[0] - 1) * (2 * window[1] - 1), 2))\n"
        "        self.act = ACTS[cfg.act]()\n"
        "        q, _ = np.linalg.qr(np.random.randn(cfg.dim, cfg.dim))\n"
        "        p, l, u = scipy.linalg.lu(q)\n"
        "        self.w = nn.Parameter(torch.from_numpy(u.astype(np.float32)))\n"
        "        with open(os.path.join(os.path.dirname(__file__), 'arch.json')) as f:\n"
        "            arch = json.load(f)\n"
        "        kw = {'normalized_shape': arch['width']} if 'normalized_shape' in "
        "inspect.signature(nn.LayerNorm).parameters else {}\n"
        "        self.conv = nn.Conv1d(cfg.dim, cfg.dim, 5, padding=pad(5))\n"
        "        self.fc = nn.Linear(cfg.dim, arch['width'])\n"
        "        self.norm = nn.LayerNorm(**kw)\n"
        "    def forward(self, x):\n"
        "        x = self.conv(x).mean(-1) + self.table.sum()\n"
        "        return self.norm(self.fc(self.act(x) @ self.w))\n"),
}


@pytest.mark.slow
def test_unknowns_followed_as_torch_builds_them(tmp_path):
    """min() over tuples in an `if`, a dict of classes, a Union-annotated config, numpy's QR and
    scipy's LU (shapes only), a JSON file beside the source, numpy helpers on kernel sizes, an Enum's
    values and inspect.signature: exact against torch."""
    _write(tmp_path, UNKNOWNS)
    r, rep, got = _parsed(tmp_path / "unk" / "m.py", "M", {}, (2, 8, 10))
    assert got == _real(tmp_path, "unk.m", "M", {}, (2, 8, 10))
    assert not [w for w in r.warnings if "never used" not in w.message], r.warnings


def test_files_outside_the_package_or_for_writing_are_never_opened(tmp_path):
    outside = tmp_path / "secret.json"
    outside.write_text(json.dumps({"width": 4}))
    _write(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/m.py": (
            "import json\n"
            "import torch.nn as nn\n"
            "class M(nn.Module):\n"
            "    def __init__(self):\n"
            "        super().__init__()\n"
            f"        open({str(tmp_path / 'pkg' / 'new.txt')!r}, 'w')\n"
            f"        self.width = json.load(open({str(outside)!r}))['width']\n"
            "        self.fc = nn.Linear(4, 4)\n"
            "    def forward(self, x):\n"
            "        return self.fc(x)\n"),
    })
    r = parse_source(str(tmp_path / "pkg" / "m.py"), "M", {}, ["2,4"])
    text = " ".join(w.message for w in r.warnings)
    assert "only text files are read" in text and "only files inside the package are read" in text
    assert not (tmp_path / "pkg" / "new.txt").exists()


def test_a_file_in_place_beside_torch_reads_torch_from_the_model(tmp_path):
    """Parsed in a site-packages-like folder that also holds a `torch` package, torch is still the
    parser's model (its source beside the file is never read): the same design as a copy elsewhere; a
    modelled package's own files (torchvision's models importing torchvision.ops) still read each other."""
    marker = tmp_path / "ran"
    _write(tmp_path, {
        "site/torch/__init__.py": f"open({str(marker)!r}, 'w')\n",
        "site/torch/nn/__init__.py": "class Module:\n    def __setattr__(self, k, v):\n        raise AttributeError\n",
        "site/torchvision/__init__.py": "",
        "site/torchvision/ops.py": "import torch.nn as nn\ndef make():\n    return nn.Linear(4, 3)\n",
        "site/torchvision/net.py": ("import torch\nimport torch.nn as nn\nfrom torchvision.ops import make\n"
                                    "class Net(nn.Module):\n"
                                    "    def __init__(self):\n"
                                    "        super().__init__()\n"
                                    "        self.fc = make()\n"
                                    "    def forward(self, x):\n"
                                    "        return torch.relu(self.fc(x))\n"),
    })
    _, _, got = _parsed(tmp_path / "site" / "torchvision" / "net.py", "Net", {}, (2, 4))
    assert got == [15, [2, 3]]
    assert not marker.exists()


BN_HEAD = ("import torch.nn as nn\n"
           "class Head(nn.Module):\n"
           "    def __init__(self):\n"
           "        super().__init__()\n"
           "        self.pool = nn.AdaptiveAvgPool2d(1)\n"
           "        self.conv = nn.Conv2d(8, 4, 1)\n"
           "        self.bn = nn.BatchNorm2d(4)\n"
           "        self.drop = nn.Dropout(0.5)\n"
           "    def forward(self, x):\n"
           "        y = self.bn(self.conv(self.pool(x)))\n"
           "        if self.training:\n"
           "            y = self.drop(y)\n"
           "        return y\n")


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "archcurator.tui.cli", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)


@pytest.mark.slow
def test_parse_mode_is_written_and_verify_honours_it(tmp_path):
    """BatchNorm after global pooling at batch 1 (an ASPP pooling branch): refused in train mode, as
    torch refuses it, fine in eval mode; --mode lands in train.mode and forward's self.training."""
    src = tmp_path / "head.py"
    src.write_text(BN_HEAD)
    verdicts = {}
    for mode in ("train", "eval"):
        p = _cli("parse", str(src), "--entry", "Head", "--input", "1,8,16,16", "--mode", mode, "--json")
        assert p.returncode == 0, p.stderr
        d = json.loads(p.stdout)
        assert d["train"] == {"mode": mode}
        assert ("Dropout" in [n["op"] for n in d["nodes"]]) == (mode == "train")
        out = tmp_path / f"{mode}.json"
        out.write_text(p.stdout)
        v = _cli("verify", str(out), "--json")
        verdicts[mode] = json.loads(v.stdout)["verdict"]
    assert verdicts["train"] == "block" and verdicts["eval"] != "block"
    bad = _cli("parse", str(src), "--entry", "Head", "--mode", "test")
    assert bad.returncode == 2 and "--mode" in bad.stderr


def test_the_cost_is_quoted_per_sample_at_the_given_batch(tmp_path):
    src = tmp_path / "head.py"
    src.write_text(BN_HEAD)
    flops = []
    for b in (1, 2, 5):
        r = parse_source(str(src), "Head", {}, [f"{b},8,16,16"], mode="eval")
        assert r.design["meta"]["input_batch"] == b
        flops.append(verify_graph(Design.from_dict(r.design)).cost["flops_per_sample"])
    assert flops[0] == flops[1] == flops[2] > 0
    assert torch.__version__  # the real torch of the truth runs is the one installed


CROSS_MODULE = {
    "mmx/__init__.py": "",
    "mmx/registry.py": (
        "class Registry:\n"
        "    def __init__(self, name):\n"
        "        self.name = name\n"
        "        self._modules = {}\n"
        "    def register_module(self, name=None):\n"
        "        def deco(cls):\n"
        "            self._modules[name or cls.__name__] = cls\n"
        "            return cls\n"
        "        return deco\n"
        "    def build(self, cfg):\n"
        "        cfg = dict(cfg)\n"
        "        return self._modules[cfg.pop('type')](**cfg)\n"
        "MODELS = Registry('models')\n"),
    "mmx/models/__init__.py": "",
    "mmx/models/backbones.py": (
        "import os\n"
        "import torch.nn as nn\n"
        "from ..registry import MODELS\n"
        "@MODELS.register_module()\n"
        "class TinyNet(nn.Module):\n"
        "    def __init__(self, width=8):\n"
        "        super().__init__()\n"
        "        self.conv = nn.Conv2d(3, width, 3)\n"
        "    def forward(self, x):\n"
        "        return self.conv(x)\n"
        "os.system('touch MARKER')\n"),
    "mmx/models/heads.py": (
        "import torch.nn as nn\n"
        "from ..registry import MODELS\n"
        "@MODELS.register_module(name='Head')\n"
        "class LinearHead(nn.Module):\n"
        "    def __init__(self, cin, n):\n"
        "        super().__init__()\n"
        "        self.fc = nn.Linear(cin, n)\n"
        "    def forward(self, x):\n"
        "        return self.fc(x.mean((2, 3)))\n"),
    "mmx/models/classifier.py": (
        "import torch.nn as nn\n"
        "from ..registry import MODELS\n"
        "from . import backbones, heads  # noqa: F401  (registers them)\n"
        "class Classifier(nn.Module):\n"
        "    def __init__(self, width=8):\n"
        "        super().__init__()\n"
        "        self.backbone = MODELS.build(dict(type='TinyNet', width=width))\n"
        "        self.head = MODELS.build(dict(type='Head', cin=width, n=5))\n"
        "    def forward(self, x):\n"
        "        return self.head(self.backbone(x))\n"),
}


@pytest.mark.slow
def test_registrations_in_other_modules_follow_their_imports(tmp_path):
    """A registry of one module filled by `@MODELS.register_module()` in the modules another imports
    only for that (`from . import backbones, heads`): their registrations run, in import order, as the
    import would run them; nothing else of their bodies does (the os.system call writes no file)."""
    marker = tmp_path / "MARKER"
    files = {k: v.replace("MARKER", str(marker)) for k, v in CROSS_MODULE.items()}
    _write(tmp_path, files)
    _, rep, got = _parsed(tmp_path / "mmx" / "models" / "classifier.py", "Classifier", {"width": 6},
                          (2, 3, 16, 16))
    assert not marker.exists()
    marker.unlink(missing_ok=True)
    assert got == _real(tmp_path, "mmx.models.classifier", "Classifier", {"width": 6}, (2, 3, 16, 16))


@pytest.mark.parametrize("annotation", ["Union[Cfg, dict]", "Optional['Cfg']", "'Cfg | None'", "Cfg"])
def test_a_config_annotated_as_a_union_is_built_from_args(tmp_path, annotation):
    """--args {"cfg": {...}} for a parameter annotated `Union[Cfg, dict]` (or Optional, or `Cfg | None`)
    builds Cfg, so its defaults hold (the field not given comes from the class)."""
    src = tmp_path / "u.py"
    src.write_text(
        "from dataclasses import dataclass\n"
        "from typing import Optional, Union\n"
        "import torch.nn as nn\n"
        "@dataclass\n"
        "class Cfg:\n"
        "    dim: int = 4\n"
        "    hidden: int = 12\n"
        "class M(nn.Module):\n"
        f"    def __init__(self, cfg: {annotation} = None):\n"
        "        super().__init__()\n"
        "        self.fc = nn.Linear(cfg.dim, cfg.hidden)\n"
        "    def forward(self, x):\n"
        "        return self.fc(x)\n")
    _, _, got = _parsed(src, "M", {"cfg": {"dim": 8}}, (2, 8))
    assert got == [8 * 12 + 12, [2, 12]]

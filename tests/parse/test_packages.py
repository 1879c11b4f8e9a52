"""Installed packages read from their source files, never imported: a package found in a
given root (an unpacked wheel) or site-packages, and timm's shape of model registry (builders
registered by a decorator through `sys.modules`, pretrained configurations grouped by
`generate_default_cfgs`, `build_model_with_cfg` taking defaults from them).  The packages here
are written for this suite; each is parsed through the CLI with a marker that any execution
would create, then imported and run for real to compare."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

from archcurator.core.parse import ParseFailure, parse_source
from archcurator.core.parse.stdlib import _re_safe

ROOT = Path(__file__).resolve().parents[2]

_MARK = "import os\nif os.environ.get('PARSE_MARKER'):\n    open(os.environ['PARSE_MARKER'] + '-{tag}', 'w').close()\n"


def _write(root: Path, files: dict):
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        tag = rel.replace("/", "_").replace(".", "_")
        p.write_text(_MARK.format(tag=tag) + textwrap.dedent(text))


def _cli(src, entry, roots, inputs, marker, args=None):
    cmd = [sys.executable, "-m", "archcurator.tui.cli", "parse", str(src), "--entry", entry, "--json"]
    for r in roots:
        cmd += ["--package-root", str(r)]
    for i in inputs:
        cmd += ["--input", i]
    if args is not None:
        cmd += ["--args", json.dumps(args)]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PARSE_MARKER": str(marker)})
    return proc


def _real(roots, module, entry, args, shape):
    """Import the package for real (it is ours) and build and run the entry."""
    import importlib
    saved = list(sys.path), dict(sys.modules)
    sys.path[:0] = [str(r) for r in roots]
    try:
        mod = importlib.import_module(module)
        torch.manual_seed(0)
        model = getattr(mod, entry)(**args)
        y = model(torch.randn(*shape))
        return sum(p.numel() for p in model.parameters()), list(y.shape)
    finally:
        sys.path[:] = saved[0]
        for k in list(sys.modules):
            if k not in saved[1]:
                del sys.modules[k]


PKG = {
    "fancylib/__init__.py": """
        from .layers import Block
        from . import heads
        """,
    "fancylib/layers.py": """
        import torch.nn as nn
        class Block(nn.Module):
            def __init__(self, dim, hidden):
                super().__init__()
                import os
                if os.environ.get('PARSE_MARKER'):
                    open(os.environ['PARSE_MARKER'] + '-init', 'w').close()
                self.fc1 = nn.Linear(dim, hidden)
                self.fc2 = nn.Linear(hidden, dim)
            def forward(self, x):
                return x + self.fc2(self.fc1(x).relu())
        """,
    "fancylib/heads.py": """
        import torch.nn as nn
        def head(dim, n):
            return nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, n))
        """,
}

USER = """
    import torch.nn as nn
    import fancylib
    from fancylib.layers import Block
    import fancylib.heads as H
    class Net(nn.Module):
        def __init__(self, dim=16):
            super().__init__()
            self.a = Block(dim, 32)
            self.b = fancylib.Block(dim, 8)
            self.out = H.head(dim, 5)
        def forward(self, x):
            return self.out(self.b(self.a(x)))
    """


def test_an_installed_package_is_read_from_its_source_never_imported(tmp_path):
    site = tmp_path / "site"
    _write(site, PKG)
    user = tmp_path / "user"
    _write(user, {"net.py": USER})
    marker = tmp_path / "ran"
    proc = _cli(user / "net.py", "Net", [site], ["2,16"], marker)
    assert proc.returncode == 0, proc.stderr
    assert not list(tmp_path.glob("ran*")), "the parser executed a file it should only read"
    design = json.loads(proc.stdout)
    ops = [n["op"] for n in design["nodes"]]
    assert ops.count("Linear") == 5 and "LayerNorm" in ops
    r = parse_source(user / "net.py", "Net", inputs=["2,16"], package_roots=[site])
    from archcurator.core.parse import design_params
    params, shape = _real([site, user], "net", "Net", {}, (2, 16))
    assert design_params(r.design) == params
    assert shape == [2, 5]


def test_a_package_that_cannot_be_found_is_named_in_one_line(tmp_path):
    user = tmp_path / "user"
    _write(user, {"net.py": USER})
    with pytest.raises(ParseFailure) as e:
        parse_source(user / "net.py", "Net", inputs=["2,16"], package_roots=[tmp_path / "nothing"])
    assert "\n" not in str(e.value) and "net.py" in str(e.value)


TIMM = {
    "timm/__init__.py": """
        from .models import create_model
        """,
    "timm/models/__init__.py": """
        from ._factory import create_model
        from ._registry import register_model
        from .tiny import *
        from .blocks import *
        """,
    "timm/models/byobnet.py": """
        from typing import Callable
        import torch.nn as nn
        class Basic(nn.Module):
            def __init__(self, c, groups=1):
                super().__init__()
                self.conv = nn.Conv2d(c, c, 3, padding=1, groups=groups)
            def forward(self, x):
                return self.conv(x)
        _block_registry = dict(basic=Basic)
        def register_block(block_type, block_fn):
            _block_registry[block_type] = block_fn
        def create_block(block, c, group_size=None):
            groups = group_size(c) if isinstance(group_size, Callable) else (c // group_size if group_size else 1)
            assert block in _block_registry, f'Unknown block type ({block}'
            return _block_registry[block](c, groups=groups)
        """,
    "timm/models/blocks.py": """
        import torch.nn as nn
        from ._builder import build_model_with_cfg
        from ._registry import register_model
        from .byobnet import create_block, register_block
        class Special(nn.Module):
            def __init__(self, c, groups=1):
                super().__init__()
                self.a = nn.Conv2d(c, c, 1, groups=groups)
                self.b = nn.Conv2d(c, c, 1)
            def forward(self, x):
                return self.b(self.a(x)) + x
        class BlockNet(nn.Module):
            def __init__(self, num_classes=1000, in_chans=3):
                super().__init__()
                self.stem = nn.Conv2d(in_chans, 8, 3, stride=2)
                self.blocks = nn.Sequential(create_block('basic', 8, group_size=4),
                                            create_block('special', 8, group_size=lambda c: c // 2))
                self.fc = nn.Linear(8, num_classes)
            def forward(self, x):
                return self.fc(self.blocks(self.stem(x)).mean((2, 3)))
        @register_model
        def blocknet(pretrained=False, **kwargs):
            return build_model_with_cfg(BlockNet, 'blocknet', pretrained, **kwargs)
        register_block('special', Special)
        """,
    "timm/models/_pretrained.py": """
        from collections import deque
        from dataclasses import dataclass, field
        from typing import Deque, Dict, Optional
        @dataclass
        class PretrainedCfg:
            url: Optional[str] = None
            architecture: Optional[str] = None
            tag: Optional[str] = None
            num_classes: int = 1000
            input_size: tuple = (3, 224, 224)
            @property
            def has_weights(self):
                return self.url
        @dataclass
        class DefaultCfg:
            tags: Deque[str] = field(default_factory=deque)
            cfgs: Dict[str, PretrainedCfg] = field(default_factory=dict)
            is_pretrained: bool = False
        """,
    "timm/models/_registry.py": """
        import sys
        from collections import defaultdict, deque
        from dataclasses import replace
        from ._pretrained import PretrainedCfg, DefaultCfg
        _model_entrypoints = {}
        _model_pretrained_cfgs = {}
        def generate_default_cfgs(cfgs):
            out = defaultdict(DefaultCfg)
            for k, v in cfgs.items():
                if isinstance(v, dict):
                    v = PretrainedCfg(**v)
                model, _, tag = k.partition('.')
                d = out[model]
                if v.has_weights and not d.is_pretrained:
                    d.tags.appendleft(tag)
                    d.is_pretrained = True
                else:
                    d.tags.append(tag)
                d.cfgs[tag] = v
            return out
        def register_model(fn):
            mod = sys.modules[fn.__module__]
            _model_entrypoints[fn.__name__] = fn
            if hasattr(mod, 'default_cfgs') and fn.__name__ in mod.default_cfgs:
                d = mod.default_cfgs[fn.__name__]
                tag = d.tags[0]
                _model_pretrained_cfgs[fn.__name__] = replace(d.cfgs[tag], architecture=fn.__name__,
                                                              tag=tag or None)
            return fn
        def is_model(name):
            return name.split('.')[0] in _model_entrypoints
        def model_entrypoint(name):
            return _model_entrypoints[name.split('.')[0]]
        def get_pretrained_cfg(name, allow_unregistered=True):
            if name in _model_pretrained_cfgs:
                return _model_pretrained_cfgs[name]
            return None
        """,
    "timm/models/_builder.py": """
        from dataclasses import asdict
        from ._pretrained import PretrainedCfg
        from ._registry import get_pretrained_cfg
        def build_model_with_cfg(model_cls, variant, pretrained, **kwargs):
            cfg = get_pretrained_cfg(variant) or PretrainedCfg()
            cfg = asdict(cfg)
            kwargs.setdefault('num_classes', cfg['num_classes'])
            kwargs.setdefault('in_chans', cfg['input_size'][0])
            return model_cls(**kwargs)
        """,
    "timm/models/_factory.py": """
        from ._registry import is_model, model_entrypoint
        def create_model(model_name, pretrained=False, **kwargs):
            if not is_model(model_name):
                raise RuntimeError('Unknown model (%s)' % model_name)
            return model_entrypoint(model_name)(pretrained=pretrained, **kwargs)
        """,
    "timm/models/tiny.py": """
        import re
        import torch.nn as nn
        from ._builder import build_model_with_cfg
        from ._registry import generate_default_cfgs, register_model
        class TinyNet(nn.Module):
            def __init__(self, arch='c8_c16', num_classes=1000, in_chans=3):
                super().__init__()
                layers, c = [], in_chans
                for op in arch.split('_'):
                    kind, width = re.split(r'(\\d.*)', op)[:2]
                    layers += [nn.Conv2d(c, int(width), 3, stride=2), nn.ReLU()]
                    c = int(width)
                self.features = nn.Sequential(*layers)
                self.pool = nn.AdaptiveAvgPool2d(1)
                self.fc = nn.Linear(c, num_classes)
            def forward(self, x):
                return self.fc(self.pool(self.features(x)).flatten(1))
        default_cfgs = generate_default_cfgs({
            'tinynet.untrained': {},
            'tinynet.in21k': {'url': 'https://example.invalid/w.pth', 'num_classes': 21843},
            'tinynet_gray.a1': {'url': 'https://example.invalid/g.pth', 'num_classes': 7,
                                'input_size': (1, 64, 64)},
        })
        @register_model
        def tinynet(pretrained=False, **kwargs):
            return build_model_with_cfg(TinyNet, 'tinynet', pretrained, **kwargs)
        @register_model
        def tinynet_gray(pretrained=False, **kwargs):
            return build_model_with_cfg(TinyNet, 'tinynet_gray', pretrained, arch='c4_c8_c12', **kwargs)
        """,
}


@pytest.mark.parametrize("name,args,shape,classes", [
    ("tinynet", {}, (2, 3, 32, 32), 21843),  # the default tag is the first with weights
    ("tinynet_gray", {}, (2, 1, 32, 32), 7),
    ("tinynet_gray", {"num_classes": 3}, (2, 1, 32, 32), 3),
    ("blocknet", {}, (2, 3, 32, 32), 1000),  # a block type registered by another file's module-level call
])
def test_timm_shaped_registry_builds_what_create_model_builds(tmp_path, name, args, shape, classes):
    site = tmp_path / "site"
    _write(site, TIMM)
    user = tmp_path / "user"
    _write(user, {"net.py": f"""
        import timm
        def build(**kwargs):
            return timm.create_model({name!r}, **kwargs)
        """})
    marker = tmp_path / "ran"
    proc = _cli(user / "net.py", "build", [site], [",".join(map(str, shape))], marker, args)
    assert proc.returncode == 0, proc.stderr
    assert not list(tmp_path.glob("ran*")), "the parser executed a file it should only read"
    r = parse_source(user / "net.py", "build", args, [",".join(map(str, shape))], package_roots=[site])
    from archcurator.core.parse import design_params
    params, out = _real([site, user], "net", "build", args, shape)
    assert out == [2, classes]
    assert design_params(r.design) == params
    # the builder read directly, as the corpus reads timm's own builders
    direct = parse_source(site / "timm/models" / ("blocks.py" if name == "blocknet" else "tiny.py"), name, args,
                          [",".join(map(str, shape))], package_roots=[site])
    assert design_params(direct.design) == params


def test_an_unknown_timm_model_name_refuses_in_one_line(tmp_path):
    site = tmp_path / "site"
    _write(site, TIMM)
    user = tmp_path / "user"
    _write(user, {"net.py": "import timm\ndef build():\n    return timm.create_model('nonesuch')\n"})
    with pytest.raises(ParseFailure) as e:
        parse_source(user / "net.py", "build", inputs=["2,3,32,32"], package_roots=[site])
    assert "\n" not in str(e.value) and "nonesuch" in str(e.value)


def test_re_is_followed_only_where_matching_is_bounded():
    assert _re_safe(r"(\d.*)") is not None
    assert _re_safe(r"^[a-z]+_(\d+)$") is not None
    for evil in (r"(a+)+$", r"(a|aa)*b", r"(x*)*y", r"(\w)\1", r"(?=a)a"):
        assert _re_safe(evil) is None, evil


def test_a_batchnorm_subclass_reading_its_running_stats(tmp_path):
    """timm's BatchNormAct2d: nn.BatchNorm2d's forward written out with F.batch_norm over the layer's
    own running statistics, then an activation."""
    src = tmp_path / "bnact.py"
    src.write_text(textwrap.dedent("""
        import torch.nn as nn
        import torch.nn.functional as F
        class BNAct(nn.BatchNorm2d):
            def __init__(self, c):
                super().__init__(c)
                self.act = nn.ReLU()
            def forward(self, x):
                if self.training and self.track_running_stats:
                    if self.num_batches_tracked is not None:
                        self.num_batches_tracked.add_(1)
                x = F.batch_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                                 self.training, self.momentum, self.eps)
                return self.act(x)
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 8, 3)
                self.bn = BNAct(8)
            def forward(self, x):
                return self.bn(self.conv(x))
        """))
    from archcurator.core.parse import design_params
    r = parse_source(src, "Net", inputs=["2,3,10,10"])
    ops = [n["op"] for n in r.design["nodes"]]
    assert "BatchNorm2d" in ops and any("relu" in o.lower() for o in ops), ops
    params, shape = _real([tmp_path], "bnact", "Net", {}, (2, 3, 10, 10))
    assert design_params(r.design) == params
    assert not [w for w in r.warnings if "running_mean" in w.message or "num_batches" in w.message]


HF = {
    "transformers/__init__.py": "",
    "transformers/utils/__init__.py": """
        from .generic import can_return_tuple
        """,
    "transformers/utils/generic.py": """
        from collections import OrderedDict
        from dataclasses import fields
        from functools import wraps
        class ModelOutput(OrderedDict):
            def __post_init__(self):
                for f in fields(self):
                    v = getattr(self, f.name)
                    if v is not None:
                        self[f.name] = v
            def __getitem__(self, k):
                if isinstance(k, str):
                    return dict(self.items())[k]
                return self.to_tuple()[k]
            def __setattr__(self, name, value):
                if name in self.keys() and value is not None:
                    super().__setitem__(name, value)
                super().__setattr__(name, value)
            def __setitem__(self, key, value):
                super().__setitem__(key, value)
                super().__setattr__(key, value)
            def to_tuple(self):
                return tuple(self[k] for k in self.keys())
        def can_return_tuple(func):
            @wraps(func)
            def wrapper(self, *args, **kwargs):
                out = func(self, *args, **kwargs)
                if not self.config.return_dict:
                    out = out.to_tuple()
                return out
            return wrapper
        """,
    "transformers/configuration_utils.py": """
        from dataclasses import dataclass
        from typing import ClassVar
        @dataclass(repr=False)
        class PreTrainedConfig:
            attribute_map: ClassVar[dict] = {}
            model_type: ClassVar[str] = ""
            return_dict: bool = True
            def __init_subclass__(cls, **kwargs):
                super().__init_subclass__(**kwargs)
                dataclass(cls, repr=False, kw_only=True)
                init, names = cls.__init__, set(cls.__dataclass_fields__)
                def __init__(self, **kw):
                    init(self, **{k: v for k, v in kw.items() if k in names})
                    for k, v in kw.items():
                        if k not in names:
                            setattr(self, k, v)
                cls.__init__ = __init__
            def __post_init__(self, **kwargs):
                self._attn_implementation_internal = kwargs.get("attn_implementation")
            @property
            def _attn_implementation(self):
                return self._attn_implementation_internal
            @_attn_implementation.setter
            def _attn_implementation(self, value):
                self._attn_implementation_internal = value
            def __setattr__(self, key, value):
                if key in super().__getattribute__("attribute_map"):
                    key = super().__getattribute__("attribute_map")[key]
                super().__setattr__(key, value)
            def __getattribute__(self, key):
                if key != "attribute_map" and key in super().__getattribute__("attribute_map"):
                    key = super().__getattribute__("attribute_map")[key]
                return super().__getattribute__(key)
        """,
    "transformers/activations.py": """
        from collections import OrderedDict
        import torch.nn as nn
        class ClassInstantier(OrderedDict):
            def __getitem__(self, key):
                content = super().__getitem__(key)
                cls, kwargs = content if isinstance(content, tuple) else (content, {})
                return cls(**kwargs)
        ACT2CLS = {"gelu": nn.GELU, "gelu_tanh": (nn.GELU, {"approximate": "tanh"}), "relu": nn.ReLU}
        ACT2FN = ClassInstantier(ACT2CLS)
        """,
    "transformers/modeling_utils.py": """
        import os
        from collections.abc import MutableMapping
        import torch
        import torch.nn as nn
        from .configuration_utils import PreTrainedConfig
        def sdpa_attention_forward(module, q, k, v, scaling=None, **kwargs):
            out = nn.functional.scaled_dot_product_attention(q, k, v, scale=scaling)
            return out.transpose(1, 2), None
        class AttentionInterface(MutableMapping):
            _global_mapping = {"sdpa": sdpa_attention_forward}
            def __init__(self):
                self._local_mapping = {}
            def __getitem__(self, key):
                return self._local_mapping.get(key, self._global_mapping[key])
            def __setitem__(self, key, value):
                self._local_mapping[key] = value
            def __delitem__(self, key):
                del self._local_mapping[key]
            def __iter__(self):
                return iter({**self._global_mapping, **self._local_mapping})
            def __len__(self):
                return len(self._global_mapping)
            def get_interface(self, attn_implementation, default):
                return super().get(attn_implementation, default)
        ALL_ATTENTION_FUNCTIONS = AttentionInterface()
        class PreTrainedModel(nn.Module):
            def __init__(self, config, *inputs, **kwargs):
                super().__init__()
                if not isinstance(config, PreTrainedConfig):
                    raise TypeError("config should be a PreTrainedConfig")
                self.config = config
                self.config._attn_implementation_internal = self._check_and_adjust_attn_implementation(
                    self.config._attn_implementation, is_init_check=True)
            def _check_and_adjust_attn_implementation(self, attn_implementation, is_init_check=False):
                if os.environ.get('PARSE_MARKER'):
                    open(os.environ['PARSE_MARKER'] + '-probe', 'w').close()
                return attn_implementation or ("sdpa" if hasattr(torch.nn.functional,
                                                                 "scaled_dot_product_attention") else "eager")
            _tied_weights_keys = None
            def post_init(self):
                if getattr(self.config, "tie_word_embeddings", False) and self._tied_weights_keys:
                    for target, source in self._tied_weights_keys.items():
                        parent, _, last = target.rpartition(".")
                        setattr(self.get_submodule(parent), last, self.get_parameter(source))
        """,
    "transformers/models/__init__.py": "",
    "transformers/models/tiny/__init__.py": "",
    "transformers/models/tiny/configuration_tiny.py": """
        from ...configuration_utils import PreTrainedConfig
        class TinyConfig(PreTrainedConfig):
            model_type = "tiny"
            attribute_map = {"hidden_size": "n_embd"}
            vocab_size: int = 100
            n_embd: int = 32
            num_heads: int = 4
            num_layers: int = 2
            hidden_act: str = "gelu_tanh"
            tie_word_embeddings: bool = True
        """,
    "transformers/models/tiny/modeling_tiny.py": """
        from dataclasses import dataclass
        import torch
        import torch.nn as nn
        from ...activations import ACT2FN
        from ...modeling_utils import ALL_ATTENTION_FUNCTIONS, PreTrainedModel
        from ...utils import can_return_tuple
        from .configuration_tiny import TinyConfig
        def eager_attention_forward(module, q, k, v, scaling=None, **kwargs):
            w = torch.matmul(q, k.transpose(2, 3)) * scaling
            w = nn.functional.softmax(w, dim=-1)
            return torch.matmul(w, v).transpose(1, 2), w
        from ...utils.generic import ModelOutput
        @dataclass
        class TinyOutput(ModelOutput):
            last_hidden_state: torch.Tensor = None
            attentions: tuple = None
            pooled: torch.Tensor = None
        class TinyAttention(nn.Module):
            def __init__(self, config):
                super().__init__()
                self.config = config
                self.head_dim = config.hidden_size // config.num_heads
                self.scaling = self.head_dim ** -0.5
                self.qkv = nn.Linear(config.hidden_size, 3 * config.hidden_size)
                self.o = nn.Linear(config.hidden_size, config.hidden_size)
            def forward(self, x):
                shape = (*x.shape[:-1], -1, self.head_dim)
                q, k, v = self.qkv(x).split(self.config.hidden_size, dim=-1)
                q, k, v = (t.view(shape).transpose(1, 2) for t in (q, k, v))
                attention_interface = ALL_ATTENTION_FUNCTIONS.get_interface(
                    self.config._attn_implementation, eager_attention_forward)
                out, _ = attention_interface(self, q, k, v, scaling=self.scaling)
                return self.o(out.reshape(*x.shape[:-1], -1))
        class TinyLayer(nn.Module):
            def __init__(self, config):
                super().__init__()
                self.attn = TinyAttention(config)
                self.ln = nn.LayerNorm(config.hidden_size)
                self.act = ACT2FN[config.hidden_act]
                self.mlp = nn.Linear(config.hidden_size, config.hidden_size)
            def forward(self, x):
                x = x + self.attn(self.ln(x))
                return x + self.mlp(self.act(x))
        class TinyPreTrainedModel(PreTrainedModel):
            config: TinyConfig
        class TinyModel(TinyPreTrainedModel):
            def __init__(self, config):
                super().__init__(config)
                self.emb = nn.Embedding(config.vocab_size, config.hidden_size)
                self.layers = nn.ModuleList([TinyLayer(config) for _ in range(config.num_layers)])
                self.post_init()
            @can_return_tuple
            def forward(self, input_ids):
                x = self.emb(input_ids)
                for layer in self.layers:
                    x = layer(x)
                return TinyOutput(last_hidden_state=x, pooled=x[:, 0])
        class TinySeq(TinyPreTrainedModel):
            _tied_weights_keys = {"enc.weight": "shared.weight", "dec.weight": "shared.weight"}
            def __init__(self, config):
                super().__init__(config)
                self.shared = nn.Embedding(config.vocab_size, config.hidden_size)
                self.enc = nn.Embedding(config.vocab_size, config.hidden_size)
                self.dec = nn.Embedding(config.vocab_size, config.hidden_size)
                self.post_init()
            def forward(self, input_ids):
                return (self.enc(input_ids) + self.dec(input_ids),)
        class TinyForClassification(TinyPreTrainedModel):
            def __init__(self, config):
                super().__init__(config)
                self.model = TinyModel(config)
                self.head = nn.Linear(config.hidden_size, 3)
            def forward(self, input_ids):
                out = self.model(input_ids)
                return self.head(out[1]), out["last_hidden_state"]
        """,
}


@pytest.mark.parametrize("entry,args", [("TinyModel", {}),
                                        ("TinyModel", {"hidden_size": 48, "num_layers": 3, "hidden_act": "relu"}),
                                        ("TinyForClassification", {"num_layers": 1}),
                                        ("TinySeq", {}),  # two embeddings tied to a third by post_init
                                        ("TinySeq", {"tie_word_embeddings": False})])
def test_hugging_face_shaped_model_built_from_its_config_fields(tmp_path, entry, args):
    """--args are the config's fields (an attribute_map alias too): the source's own config class is
    built, so `isinstance(config, PreTrainedConfig)` holds; the machine-probing attention choice is read
    as eager, whose function the parser follows; a dataclass of outputs gives its tensor fields."""
    site = tmp_path / "site"
    _write(site, HF)
    path = site / "transformers/models/tiny/modeling_tiny.py"
    marker = tmp_path / "ran"
    proc = _cli(path, entry, [site], ["2,7:int64"], marker, args)
    assert proc.returncode == 0, proc.stderr
    assert not list(tmp_path.glob("ran*")), "the parser executed a file it should only read"
    r = parse_source(path, entry, args, ["2,7:int64"], package_roots=[site])
    ops = [n["op"] for n in r.design["nodes"]]
    if entry != "TinySeq":
        assert "Softmax" in ops and "MatMul" in ops, ops  # the eager path
    from archcurator.core.graph import Design
    from archcurator.core.parse import design_params
    from archcurator.core.verify import verify_graph
    rep = verify_graph(Design.from_dict(r.design))
    shapes = [list(rep.types[o.split(":")[0]][0].shape) for o in r.design["outputs"]]

    import importlib
    saved = list(sys.path), dict(sys.modules)
    sys.path.insert(0, str(site))
    try:
        mt = importlib.import_module("transformers.models.tiny.modeling_tiny")
        torch.manual_seed(0)
        model = getattr(mt, entry)(mt.TinyConfig(**args))
        assert model.config._attn_implementation == "sdpa"  # what the real probe chose here
        y = model(torch.randint(0, 100, (2, 7)))
        real_params = sum(p.numel() for p in model.parameters())
        real_shapes = [list(t.shape) for t in (y.to_tuple() if isinstance(y, mt.ModelOutput) else y)]
    finally:
        sys.path[:] = saved[0]
        for k in list(sys.modules):
            if k not in saved[1]:
                del sys.modules[k]
    assert design_params(r.design) == real_params
    assert shapes == real_shapes


def test_a_str_enum_given_by_value_is_its_member(tmp_path):
    """timm's `Format(output_fmt)` (a `str, Enum`) deciding the layout of a patch embedding; an invalid
    value raises as Python does."""
    _write(tmp_path, {"fmt.py": """
        from enum import Enum
        import torch.nn as nn
        class Format(str, Enum):
            NCHW = 'NCHW'
            NHWC = 'NHWC'
        class Embed(nn.Module):
            def __init__(self, output_fmt='NCHW'):
                super().__init__()
                self.proj = nn.Conv2d(3, 8, 4, stride=4)
                self.fmt = Format(output_fmt)
                self.norm = nn.LayerNorm(8) if self.fmt == Format.NHWC else nn.BatchNorm2d(8)
            def forward(self, x):
                x = self.proj(x)
                if self.fmt != Format.NCHW:
                    x = x.permute(0, 2, 3, 1)
                return self.norm(x)
        """})
    from archcurator.core.graph import Design
    from archcurator.core.parse import design_params
    from archcurator.core.verify import verify_graph
    for fmt in ("NCHW", "NHWC"):
        marker = tmp_path / "ran"
        proc = _cli(tmp_path / "fmt.py", "Embed", [], ["2,3,16,16"], marker, {"output_fmt": fmt})
        assert proc.returncode == 0, proc.stderr
        assert not list(tmp_path.glob("ran*"))
        r = parse_source(tmp_path / "fmt.py", "Embed", {"output_fmt": fmt}, ["2,3,16,16"])
        rep = verify_graph(Design.from_dict(r.design))
        out = r.design["outputs"][0].split(":")[0]
        params, shape = _real([tmp_path], "fmt", "Embed", {"output_fmt": fmt}, (2, 3, 16, 16))
        assert (design_params(r.design), list(rep.types[out][0].shape)) == (params, shape)
    with pytest.raises(ParseFailure) as e:
        parse_source(tmp_path / "fmt.py", "Embed", {"output_fmt": "NLC"}, ["2,3,16,16"])
    assert "ValueError" in str(e.value) and "\n" not in str(e.value)


def test_a_dataclass_config_runs_its_post_init_and_asdict_recurses(tmp_path):
    """timm's CspStagesCfg: `__post_init__` pads per-stage tuples, and `asdict` of the model config
    turns the nested stage config into a dict the builder zips over."""
    _write(tmp_path, {"stages.py": """
        from dataclasses import asdict, dataclass, field
        import torch.nn as nn
        def _pad(x, n):
            x = x if isinstance(x, tuple) else (x,)
            return x + (x[-1],) * (n - len(x))
        @dataclass
        class StagesCfg:
            depth: tuple = (1, 2)
            out_chs: tuple = (8, 16)
            stride: object = 2
            def __post_init__(self):
                self.stride = _pad(self.stride, len(self.depth))
        @dataclass
        class ModelCfg:
            stages: StagesCfg = field(default_factory=StagesCfg)
        class Net(nn.Module):
            def __init__(self, cfg=None):
                super().__init__()
                cfg = cfg or ModelCfg()
                d = asdict(cfg)['stages']
                layers, c = [], 3
                for depth, out, stride in zip(d['depth'], d['out_chs'], d['stride']):
                    for i in range(depth):
                        layers.append(nn.Conv2d(c, out, 3, stride=stride if i == 0 else 1, padding=1))
                        c = out
                self.body = nn.Sequential(*layers)
            def forward(self, x):
                return self.body(x)
        """})
    from archcurator.core.parse import design_params
    r = parse_source(tmp_path / "stages.py", "Net", inputs=["2,3,16,16"])
    params, shape = _real([tmp_path], "stages", "Net", {}, (2, 3, 16, 16))
    assert design_params(r.design) == params and shape == [2, 16, 4, 4]
    from archcurator.core.graph import Design
    from archcurator.core.verify import verify_graph
    rep = verify_graph(Design.from_dict(r.design))
    assert list(rep.types[r.design["outputs"][0].split(":")[0]][0].shape) == shape


def test_a_bias_table_indexed_by_columns_with_a_constant_index(tmp_path):
    """LeViT's and EfficientFormer's `attention_biases[:, attention_bias_idxs]`: a [heads, offsets] table
    picked by an [N, N] index buffer gives [heads, N, N], added to the attention logits."""
    _write(tmp_path, {"bias.py": """
        import itertools
        import torch
        import torch.nn as nn
        class Attn(nn.Module):
            def __init__(self, heads=2, res=3, dim=4):
                super().__init__()
                pts = list(itertools.product(range(res), range(res)))
                offsets, idxs = {}, []
                for p1 in pts:
                    for p2 in pts:
                        off = (abs(p1[0] - p2[0]), abs(p1[1] - p2[1]))
                        if off not in offsets:
                            offsets[off] = len(offsets)
                        idxs.append(offsets[off])
                n = len(pts)
                self.heads, self.dim = heads, dim
                self.biases = nn.Parameter(torch.zeros(heads, len(offsets)))
                self.register_buffer('idx', torch.tensor(idxs, dtype=torch.long).view(n, n), persistent=False)
                self.q = nn.Linear(dim, dim * heads)
            def forward(self, x):
                b, n, _ = x.shape
                q = self.q(x).view(b, n, self.heads, self.dim).permute(0, 2, 1, 3)
                attn = q @ q.transpose(-2, -1) + self.biases[:, self.idx]
                return attn.softmax(dim=-1)
        """})
    from archcurator.core.graph import Design
    from archcurator.core.parse import design_params
    from archcurator.core.verify import verify_graph
    r = parse_source(tmp_path / "bias.py", "Attn", inputs=["2,9,4"])
    rep = verify_graph(Design.from_dict(r.design))
    assert not [f for f in rep.findings if f.severity == "block"]
    params, shape = _real([tmp_path], "bias", "Attn", {}, (2, 9, 4))
    assert design_params(r.design) == params
    assert list(rep.types[r.design["outputs"][0].split(":")[0]][0].shape) == shape == [2, 2, 9, 9]


def test_an_installed_package_is_read_under_the_parse_budget(tmp_path):
    """A package's code is followed under the same budget as the user's file: past it, one line
    naming the package file and line where the reading stopped."""
    site = tmp_path / "site"
    _write(site, {"slowlib/__init__.py": """
        def width():
            n = 0
            for i in range(1000000):
                for j in range(1000000):
                    n += 1
            return n
        """})
    user = tmp_path / "user"
    _write(user, {"net.py": """
        import torch.nn as nn
        from slowlib import width
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, width())
            def forward(self, x):
                return self.fc(x)
        """})
    with pytest.raises(ParseFailure) as e:
        parse_source(user / "net.py", "Net", inputs=["2,4"], package_roots=[site], time_limit=1.0)
    msg = str(e.value)
    assert "\n" not in msg and "too costly to follow" in msg and "slowlib" in msg, msg


def test_property_setter_list_index_after_ellipsis_and_baddbmm(tmp_path):
    """Falcon's and BLOOM's attention: a config property whose setter stores the value elsewhere,
    `fused[..., [-2], :]` picking one head, and `alibi.baddbmm(q, k, alpha=s)` as alibi + s * (q @ k)."""
    _write(tmp_path, {"falconish.py": """
        import torch
        import torch.nn as nn
        class Cfg:
            def __init__(self):
                self._impl = None
                self.impl = "EAGER"
            @property
            def impl(self):
                return self._impl
            @impl.setter
            def impl(self, value):
                self._impl = value.lower()
        CLASSES = {"eager": nn.Linear}
        class Attn(nn.Module):
            def __init__(self, heads=3, dim=4):
                super().__init__()
                self.heads, self.dim = heads, dim
                self.qkv = CLASSES[Cfg().impl](8, (heads + 2) * dim)
                self.bias = nn.Parameter(torch.zeros(heads, 1, 5))
            def forward(self, x):
                b, t, _ = x.shape
                fused = self.qkv(x).view(b, t, self.heads + 2, self.dim)
                q, k = fused[..., :-2, :], fused[..., [-2], :]
                q = q.transpose(1, 2).reshape(b * self.heads, t, self.dim)
                k = k.expand(b, t, self.heads, self.dim).transpose(1, 2).reshape(b * self.heads, t, self.dim)
                bias = self.bias.repeat(b, 1, 1)
                return bias.baddbmm(q, k.transpose(1, 2), beta=1.0, alpha=0.5).softmax(-1)
        """})
    from archcurator.core.graph import Design
    from archcurator.core.parse import design_params
    from archcurator.core.verify import verify_graph
    r = parse_source(tmp_path / "falconish.py", "Attn", inputs=["2,5,8"])
    rep = verify_graph(Design.from_dict(r.design))
    assert not [f for f in rep.findings if f.severity == "block"], [f.message for f in rep.findings]
    params, shape = _real([tmp_path], "falconish", "Attn", {}, (2, 5, 8))
    assert design_params(r.design) == params
    assert list(rep.types[r.design["outputs"][0].split(":")[0]][0].shape) == shape == [6, 5, 5]

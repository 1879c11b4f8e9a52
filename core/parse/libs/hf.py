"""Hugging Face transformers' `PreTrainedModel`, with the few methods that look at the machine
modelled: everything else (the config classes, the modeling files, `eager_attention_forward`,
`ALL_ATTENTION_FUNCTIONS`) is transformers' own source.

`PreTrainedModel.__init__` resolves `config._attn_implementation` by probing what is installed
(flash-attention builds, the `kernels` hub, sdpa support of this torch, the accelerator).  A
design is the model as written, not as dispatched on one machine, so the resolution is
answered `"eager"`: the attention modules then take their `eager_attention_forward` path, whose
matmuls, softmax and dropout the parser follows (sdpa computes the same function).  An
implementation the `--args` name (`attn_implementation`) is kept when it is "eager"; any other is
read as eager with a warning.  The experts implementation is kept as configured.
"""

from __future__ import annotations

import ast
import re

from ..registry import handles
from ..source import _MISSING
from ..values import BoundMethod, BuiltinFn, ClassVal, FuncVal, InstanceVal, InterpError
from . import replaces

MODELLED_METHODS = '''
def _check_and_adjust_attn_implementation(self, attn_implementation, is_init_check=False,
                                          allow_all_kernels=False):
    return "eager"

def _check_and_adjust_experts_implementation(self, experts_implementation=None):
    return experts_implementation

def post_init(self):
    self.all_tied_weights_keys = _tied_weights(self)
    for name, module in self.named_children():
        tied = getattr(module, "all_tied_weights_keys", None)
        if tied:
            self.all_tied_weights_keys.update({name + "." + k: name + "." + v for k, v in tied.items()})
    for target, source in self.all_tied_weights_keys.items():
        _tie(self, target, source)
'''

_TREE = ast.parse(MODELLED_METHODS)


ATTENTION_METHODS = '''
def get_interface(self, attn_implementation, default):
    return default
'''


def _patch(it, cls, tree):
    for node in tree.body:
        f = it.make_function(node, cls.closure)
        f.owner_class = cls
        cls.lazy.pop(node.name, None)
        cls.ns[node.name] = f
    return cls


_PLAIN_KEY = re.compile(r"^[A-Za-z0-9_.]+\.(weight|bias)$")


def _tied_weights(it, model):
    """`get_expanded_tied_weights_keys(all_submodels=False)`: the class's `_tied_weights_keys` when the
    config ties word embeddings; the common case (plain parameter names) only — a regex mapping is
    warned about and not tied."""
    cfg = it.getattr(model, "config")
    tie = it.getattr(cfg, "tie_word_embeddings") if isinstance(cfg, InstanceVal) and \
        "tie_word_embeddings" in cfg.attrs else False
    mapping = it.getattr(model, "_tied_weights_keys")
    if tie is not True or not isinstance(mapping, dict) or not mapping:
        return {}
    plain = {k: v for k, v in mapping.items() if isinstance(k, str) and isinstance(v, str)
             and _PLAIN_KEY.match(k) and _PLAIN_KEY.match(v)}
    if len(plain) != len(mapping):
        it.warn(f"{model.cls.name}._tied_weights_keys with patterns: those weights are not tied")
    return plain


def _tie(it, model, target, source):
    """`tie_weights`: the target parameter becomes the source one (torch then counts it once)."""
    def walk(path):
        obj = model
        for part in path:
            obj = it.getattr(obj, part)
        return obj
    try:
        src = walk(source.split("."))
        *parent, last = target.split(".")
        it.setattr(walk(parent), last, src)
    except InterpError as e:
        it.warn(f"tied weight {target} -> {source} not followed: {e}")
    return None


@replaces("transformers.modeling_utils", "PreTrainedModel")
def _pretrained_model(it, mod, read):
    from ..interp import Frame
    cls = read()
    if not isinstance(cls, ClassVal):
        return cls if cls is not None else _MISSING
    env = Frame({"_tied_weights": BuiltinFn("_tied_weights", lambda a, k: _tied_weights(it, a[0])),
                 "_tie": BuiltinFn("_tie", lambda a, k: _tie(it, a[0], a[1], a[2]))}, cls.closure, cls.module)
    for node in _TREE.body:
        f = it.make_function(node, env)
        f.owner_class = cls
        cls.lazy.pop(node.name, None)
        cls.ns[node.name] = f
    return cls


@replaces("transformers.modeling_utils", "AttentionInterface")
def _attention_interface(it, mod, read):
    """`ALL_ATTENTION_FUNCTIONS.get_interface(impl, eager_attention_forward)`: with 'eager' (never a key
    of the mapping) the source returns its default, the model's own eager function."""
    cls = read()
    if not isinstance(cls, ClassVal):
        return cls if cls is not None else _MISSING
    return _patch(it, cls, ast.parse(ATTENTION_METHODS))


# ---- decorators that only document or validate: the class or function as written
def _identity_decorator(name):
    def deco(a, k):
        if a and not k and len(a) == 1:
            return a[0]
        return BuiltinFn(name, lambda a2, k2: a2[0] if a2 else None)
    return deco


def _identity_or_factory(name):
    """A decorator used bare (`@dec`) or as a factory (`@dec("RMSNorm")`, `@dec(checkpoint=...)`)."""
    def deco(a, k):
        if len(a) == 1 and not k and isinstance(a[0], (FuncVal, ClassVal, BoundMethod)):
            return a[0]
        return BuiltinFn(name, lambda a2, k2: a2[0] if a2 else None)
    return deco


# decorators that write docstrings, record or reshape outputs (hooks for `output_attentions`, a tuple
# when `return_dict=False`), fill call defaults from the config, or swap in hub kernels: the defaults
# (dict outputs, no recording, no cache, no kernels) are what the undecorated source computes
_PASS_THROUGH = {
    "transformers.utils.auto_docstring": ("auto_docstring",),
    "transformers.utils.generic": ("can_return_tuple", "merge_with_config_defaults", "check_model_inputs"),
    "transformers.utils.output_capturing": ("capture_outputs",),
    "transformers.integrations.hub_kernels": ("use_kernel_forward_from_hub", "use_kernelized_func",
                                              "use_kernel_func_from_hub"),
    "transformers.modeling_rope_utils": ("dynamic_rope_update",),
}


def _pass_through(it, mod, read):
    return BuiltinFn("decorator", _identity_or_factory("decorator"))


for _module, _names in _PASS_THROUGH.items():
    replaces(_module, *_names)(_pass_through)


@replaces("huggingface_hub.dataclasses", "strict")
def _strict_source(it, mod, read):
    """Type validation of a config's fields on assignment: the values given are kept as given."""
    return BuiltinFn("strict", _identity_decorator("strict"))


@handles("huggingface_hub.dataclasses.strict")
def _strict(it, a, k):
    return _identity_decorator("strict")(a, k)


# ---- configuration objects
CONFIG_INIT = '''
def __init__(self, **kwargs):
    _config_init(self, kwargs)
'''

_CONFIG_TREE = ast.parse(CONFIG_INIT)


def _is_classvar(ann):
    text = ast.unparse(ann) if ann is not None else ""
    return text.startswith(("ClassVar", "typing.ClassVar"))


def config_fields(it, cls):
    """[(name, default node, class)] of a config class and its bases, base first, as the dataclass
    that PreTrainedConfig.__init_subclass__ makes of every subclass has them (ClassVar excluded)."""
    out = {}
    for c in reversed(it.mro(cls)):
        if not isinstance(c, ClassVal) or c.node is None:
            continue
        for st in c.node.body:
            if isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name) and not _is_classvar(st.annotation):
                out.pop(st.target.id, None)
                out[st.target.id] = (st.value, c)
    return [(n, v, c) for n, (v, c) in out.items()]


def _config_init(it, inst, kwargs):
    """The config's dataclass __init__ (each field its default, or the keyword given), the keywords
    that are not fields kept as attributes (wrap_init_to_accept_kwargs), `attribute_map` aliases
    (GPT-2's `hidden_size` for `n_embd`) read through, then the class's own `__post_init__`."""
    from ..interp import Frame
    amap = it.getattr(inst.cls, "attribute_map")
    amap = amap if isinstance(amap, dict) else {}
    names = set()
    for name, default, owner in config_fields(it, inst.cls):
        names.add(name)
        if name in kwargs:
            inst.attrs[name] = kwargs[name]
        elif default is not None:
            inst.attrs[name] = it.eval(default, Frame({}, owner.closure, owner.module, None, owner))
        else:
            inst.attrs[name] = None
    extra = {}
    for k, v in kwargs.items():
        if k in names:
            continue
        real = amap.get(k, k)
        if real in names:
            inst.attrs[real] = v
        else:
            extra[k] = v
    attn = extra.pop("attn_implementation", None)
    if attn not in (None, "eager"):
        it.warn(f"attn_implementation {attn!r} read as 'eager' (the same function)")
    inst.attrs["_attn_implementation_internal"] = "eager"
    inst.attrs["_experts_implementation_internal"] = extra.pop("experts_implementation", None)
    for k, v in extra.items():
        inst.attrs[k] = v
    post, _ = it.class_attr(inst.cls, "__post_init__")
    if post is not _MISSING and post is not None:
        try:
            it.call(post, [inst], dict(extra))
        except InterpError as e:
            it.warn(f"{inst.cls.name}.__post_init__ not followed: {e}")
    for alias, real in amap.items():
        if isinstance(alias, str) and isinstance(real, str) and real in inst.attrs:
            inst.attrs[alias] = inst.attrs[real]
    return None


@replaces("transformers.configuration_utils", "PreTrainedConfig")
def _pretrained_config(it, mod, read):
    from ..interp import Frame
    cls = read()
    if not isinstance(cls, ClassVal):
        return cls if cls is not None else _MISSING
    env = Frame({"_config_init": BuiltinFn("_config_init", lambda a, k: _config_init(it, a[0], a[1]))},
                cls.closure, cls.module)
    f = it.make_function(_CONFIG_TREE.body[0], env)
    f.owner_class = cls
    cls.lazy.pop("__init__", None)
    cls.ns["__init__"] = f
    cls.dataclass_fields = None  # built by the __init__ above, not by the interpreter's dataclass model
    return cls


def config_class_of(it, cls):
    """The config class a PreTrainedModel subclass declares: `config: BertConfig` (transformers 5)
    or `config_class = BertConfig`; None if neither."""
    for c in it.mro(cls):
        if not isinstance(c, ClassVal) or c.node is None:
            continue
        for st in c.node.body:
            if isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name) and st.target.id == "config" \
                    and st.value is None:
                from ..interp import Frame
                try:
                    v = it.eval(st.annotation, Frame({}, c.closure, c.module, None, c))
                except InterpError:
                    return None
                return v if isinstance(v, ClassVal) else None
    return None


class _Instantiating(dict):
    """transformers' `ACT2FN` (a ClassInstantier: an OrderedDict whose indexing builds the class
    registered for the name, with its keyword arguments): over the source's own `ACT2CLS`."""

    __slots__ = ("interp",)

    def __getitem__(self, key):
        content = dict.__getitem__(self, key)
        cls, kwargs = content if isinstance(content, tuple) and len(content) == 2 else (content, {})
        return self.interp.call(cls, [], dict(kwargs) if isinstance(kwargs, dict) else {})


@replaces("transformers.activations", "ACT2FN")
def _act2fn(it, mod, read):
    table = it.mod_lookup(mod, "ACT2CLS")
    if not isinstance(table, dict):
        return read()
    out = _Instantiating(table)
    out.interp = it
    return out


# ---- outputs: ModelOutput is an OrderedDict whose keys are the dataclass fields that are not None
MODEL_OUTPUT_METHODS = '''
def keys(self):
    return _output_keys(self)

def values(self):
    return [getattr(self, k) for k in _output_keys(self)]

def items(self):
    return [(k, getattr(self, k)) for k in _output_keys(self)]

def to_tuple(self):
    return tuple(getattr(self, k) for k in _output_keys(self))

def __getitem__(self, k):
    if isinstance(k, str):
        return getattr(self, k)
    return self.to_tuple()[k]

def __iter__(self):
    return iter(_output_keys(self))

def __len__(self):
    return len(_output_keys(self))

def __contains__(self, k):
    return k in _output_keys(self)

def get(self, k, default=None):
    return getattr(self, k) if k in _output_keys(self) else default

def __setitem__(self, k, v):
    setattr(self, k, v)
'''


def _output_keys(it, inst):
    for c in it.mro(inst.cls):
        if isinstance(c, ClassVal) and c.dataclass_fields is not None:
            return [n for n, _ in c.dataclass_fields if inst.attrs.get(n) is not None]
    return [k for k, v in inst.attrs.items() if v is not None]


@replaces("transformers.utils.generic", "ModelOutput")
def _model_output(it, mod, read):
    """The OrderedDict side of ModelOutput (its keys are the fields not None, kept by __post_init__ and
    __setattr__ through `super().__setitem__`), written over the dataclass fields the interpreter keeps."""
    from ..interp import Frame
    cls = read()
    if not isinstance(cls, ClassVal):
        return cls if cls is not None else _MISSING
    env = Frame({"_output_keys": BuiltinFn("_output_keys", lambda a, k: _output_keys(it, a[0]))},
                cls.closure, cls.module)
    for node in ast.parse(MODEL_OUTPUT_METHODS).body:
        f = it.make_function(node, env)
        f.owner_class = cls
        cls.lazy.pop(node.name, None)
        cls.ns[node.name] = f
    cls.lazy.pop("__post_init__", None)
    cls.ns["__post_init__"] = it.make_function(ast.parse("def __post_init__(self):\n    pass\n").body[0], env)
    cls.lazy.pop("__setattr__", None)
    return cls

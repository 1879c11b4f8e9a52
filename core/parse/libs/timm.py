"""timm's model registry, modelled: everything else of timm is read from its own source.

timm fills its registry as a side effect of import: `import timm` imports every model file,
and each `@register_model` builder puts itself and its module's `default_cfgs` (pretrained
configurations, made by `generate_default_cfgs`) into dicts of `timm.models._registry`, found
through `sys.modules[fn.__module__]`.  A parser that reads only the files it reaches sees those
dicts empty.  So the registry's lookups are answered here instead:

- `register_model(fn)` returns `fn` (what it does besides registering);
- `is_model(name)` and `model_entrypoint(name)` find the file of the models folder that defines
  `@register_model def name(...)` (a text search, no parse), read it, and give its builder;
- `get_pretrained_cfg(name)` reads that module's own `default_cfgs` (timm's source builds it)
  and returns the architecture's default-tag `PretrainedCfg` (or the tag named), with
  `architecture` and `tag` set as `register_model` sets them.

`build_model_with_cfg`, `resolve_pretrained_cfg`, `create_model`, the layers and the models
themselves are timm's source as it is.
"""

from __future__ import annotations

import ast
import os
import re

from ..values import BuiltinFn, InstanceVal, InterpError, Unknown
from . import replaces

REGISTRY = "timm.models._registry"

_DEF = re.compile(rb"@register_model\s*(?:\n\s*@[^\n]*)*\n\s*def\s+([A-Za-z_]\w*)\s*\(")
_INDEX: dict[str, tuple] = {}  # models folder -> (stamp, {model name: file})


def _stamp(folder):
    try:
        names = sorted(n for n in os.listdir(folder) if n.endswith(".py"))
    except OSError:
        return None, []
    stamp = []
    for n in names:
        try:
            st = os.stat(os.path.join(folder, n))
        except OSError:
            continue
        stamp.append((n, st.st_size, st.st_mtime_ns))
    return tuple(stamp), names


def _scan(folder, cache, needle, collect):
    """{key: value} that `collect(path, data)` yields over the folder's files holding `needle`, cached
    while the folder's files are unchanged (timm's registries are filled by every model file at import)."""
    stamp, names = _stamp(folder)
    hit = cache.get(folder)
    if hit is not None and hit[0] == stamp:
        return hit[1]
    found = {}
    for n in names:
        p = os.path.join(folder, n)
        try:
            with open(p, "rb") as f:
                data = f.read()
        except OSError:
            continue
        if needle in data:
            for key, value in collect(p, data):
                found.setdefault(key, value)
    cache[folder] = (stamp, found)
    return found


def model_files(folder):
    """{registered model name: file} for the models folder."""
    return _scan(folder, _INDEX, b"register_model",
                 lambda p, data: ((m.group(1).decode(), p) for m in _DEF.finditer(data)))


def _name(v, what):
    if not isinstance(v, str):
        raise InterpError(f"timm {what}: model name not known when reading the source")
    arch, _, tag = v.partition(".")
    return arch, tag


def _models_folder(registry_module):
    return os.path.dirname(registry_module.path)


def _builder(it, registry_module, arch):
    p = model_files(_models_folder(registry_module)).get(arch)
    if p is None:
        return None, None
    mod = it._safe_load(p)
    return mod, it.mod_lookup(mod, arch)


def _arch_default_cfgs(it, model_mod, arch):
    """`default_cfgs = generate_default_cfgs({'arch.tag': _cfg(...), ...})` evaluated for `arch`'s keys
    only (hundreds of configurations in a model file; generate_default_cfgs groups each architecture
    on its own, so its entries are the same).  None when the module's default_cfgs is not that literal."""
    stmts = model_mod.defs.get("default_cfgs") or []
    if len(stmts) != 1 or not isinstance(stmts[0], ast.Assign) or len(stmts[0].targets) != 1:
        return None
    call = stmts[0].value
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "generate_default_cfgs"
            and len(call.args) == 1 and not call.keywords and isinstance(call.args[0], ast.Dict)):
        return None
    d = call.args[0]
    keys, values = [], []
    for k, v in zip(d.keys, d.values):
        if not (isinstance(k, ast.Constant) and isinstance(k.value, str)):
            return None  # a ** entry or a computed key: evaluate the whole of it
        if k.value.partition(".")[0] == arch:
            keys.append(k)
            values.append(v)
    if not keys:
        return {}
    sub = ast.Call(func=call.func, args=[ast.Dict(keys=keys, values=values)], keywords=[])
    ast.copy_location(sub, call)
    ast.fix_missing_locations(sub)
    saved = it.loc
    try:
        it.loc = (model_mod, stmts[0].lineno)
        return it.eval(sub, it.module_frame(model_mod))
    except InterpError:
        return None
    finally:
        it.loc = saved


@replaces(REGISTRY, "register_model")
def _register_model(it, mod, read):
    return BuiltinFn("timm.register_model", lambda a, k: a[0] if a else None)


@replaces(REGISTRY, "is_model")
def _is_model(it, mod, read):
    def is_model(a, k):
        arch, _ = _name(a[0] if a else k.get("model_name"), "is_model")
        return arch in model_files(_models_folder(mod))
    return BuiltinFn("timm.is_model", is_model)


@replaces(REGISTRY, "model_entrypoint")
def _model_entrypoint(it, mod, read):
    def model_entrypoint(a, k):
        arch, _ = _name(a[0] if a else k.get("model_name"), "model_entrypoint")
        _, fn = _builder(it, mod, arch)
        if fn is None:
            raise InterpError(f"timm model '{arch}' is not registered in {it.display(_models_folder(mod))}")
        return fn
    return BuiltinFn("timm.model_entrypoint", model_entrypoint)


@replaces(REGISTRY, "get_pretrained_cfg")
def _get_pretrained_cfg(it, mod, read):
    def get_pretrained_cfg(a, k):
        arch, tag = _name(a[0] if a else k.get("model_name"), "get_pretrained_cfg")
        p = model_files(_models_folder(mod)).get(arch)
        if p is None:
            return None  # unregistered: build_model_with_cfg makes a default PretrainedCfg
        model_mod = it._safe_load(p)
        cfgs = _arch_default_cfgs(it, model_mod, arch)
        if cfgs is None:
            cfgs = it.mod_lookup(model_mod, "default_cfgs")
        if not isinstance(cfgs, dict) or arch not in cfgs:
            return None
        default = cfgs[arch]
        if isinstance(default, dict):  # an old-style cfg dict per architecture
            pc_cls = it.mod_lookup(it._safe_load(os.path.join(_models_folder(mod), "_pretrained.py")),
                                   "PretrainedCfg")
            return it.call(pc_cls, [], dict(default, architecture=arch))
        if not isinstance(default, InstanceVal):
            return Unknown("pretrained cfg")
        tags, by_tag = default.attrs.get("tags"), default.attrs.get("cfgs")
        if not isinstance(tags, list) or not isinstance(by_tag, dict) or not tags:
            return Unknown("pretrained cfg")
        tag = tag or tags[0]
        if tag not in by_tag:
            raise InterpError(f"invalid pretrained tag ({tag}) for {arch}")
        from ..registry import handler_for
        replace, _ = handler_for("dataclasses.replace")
        return replace(it, [by_tag[tag]], {"architecture": arch, "tag": tag or None})
    return BuiltinFn("timm.get_pretrained_cfg", get_pretrained_cfg)

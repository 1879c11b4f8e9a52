"""The parser's model of ``torch``, ``torch.nn``, ``torch.nn.functional`` and
of tensors, plus the few standard-library helpers model code leans on
(``math``, ``functools.partial``, ``collections``, ``copy``, ``numpy``).

Nothing here imports torch: constructor signatures come from
:mod:`core.parse.nn_sigs`, parameter and output shapes from
:mod:`core.parse.nnops`.
"""

from __future__ import annotations

import ast
import math
import struct

from . import nnops
from .nn_sigs import SIGS
from .values import (
    BuiltinFn,
    ClassVal,
    ExtVal,
    FuncVal,
    InstanceVal,
    InterpError,
    NTupleClass,
    ParamInfo,
    PartialVal,
    Sym,
    TensorMethod,
    TensorVal,
    TooCostly,
    TorchClass,
    Unknown,
    dim_add,
    dim_eq,
    dim_floordiv,
    dim_mul,
    is_int,
    prod,
)

MAX_VALUES = 1 << 16
CONTAINER_KINDS = ("Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict")
IDENTITY_CLASSES = {"StochasticDepth", "DropPath", "DropBlock2d", "DropBlock3d"}

_DTYPES = {
    "float32": "float32", "float": "float32", "float16": "float16", "half": "float16", "bfloat16": "bfloat16",
    "float64": "float64", "double": "float64", "int64": "int64", "long": "int64", "int32": "int32",
    "int": "int32", "int16": "int16", "int8": "int8", "uint8": "uint8", "bool": "bool",
}


def _f32(x):
    try:
        return struct.unpack("f", struct.pack("f", x))[0]
    except (OverflowError, struct.error):
        return x


# =============================================================== external names
_CANON_PREFIX = [
    ("torch.nn.modules.", None),
    ("torch.nn.parameter.Parameter", "torch.nn.Parameter"),
    ("torch.functional.", "torch."),
    ("torch.nn.functional.", "torch.nn.functional."),
]


def canon(path):
    if path.startswith("torch.nn.modules."):
        last = path.rsplit(".", 1)[-1]
        return "torch.nn." + last
    if path == "torch.nn.parameter.Parameter" or path == "torch.nn.parameter":
        return "torch.nn.Parameter" if path.endswith("Parameter") else path
    if path.startswith("torch.functional."):
        return "torch." + path[len("torch.functional."):]
    if path.startswith("torch.autograd.Variable"):
        return "torch.autograd.Variable"
    return path


_EXT_CACHE = {}


def ext(path):
    v = _EXT_CACHE.get(path)
    if v is None:
        v = _EXT_CACHE[path] = _ext(path)
    return v


def _ext(path):
    path = canon(path)
    if path.startswith("torch.nn.") and path.count(".") == 2:
        name = path.rsplit(".", 1)[-1]
        if name in SIGS or name in ("Module", "Sequential", "ModuleList", "ModuleDict", "ParameterList",
                                    "ParameterDict"):
            return TorchClass(name)
    return ExtVal(path)


def ext_getattr(it, e, name):
    p = e.path
    if p in ("math", "numpy", "torch") and name in ("pi", "e", "inf", "nan", "tau"):
        return getattr(math, name)
    if p == "torch" and name in _DTYPES:
        return "dtype:" + _DTYPES[name]
    if p == "sys" and name == "version_info":
        return (3, 11, 0)
    return ext(p + "." + name)


def torch_class_attr(it, cls, name):
    if name == "__name__":
        return cls.name
    if name in ("__init__", "forward"):
        return BuiltinFn(f"nn.{cls.name}.{name}", lambda a, k: torch_super_method(it, a[0], cls.name, name)(a[1:], k))
    if name == "__setattr__":  # nn.Module.__setattr__(self, name, value)
        return BuiltinFn(f"nn.{cls.name}.__setattr__", lambda a, k: it.setattr(a[0], a[1], a[2]))
    if name == "__getattr__":
        return BuiltinFn(f"nn.{cls.name}.__getattr__", lambda a, k: it.getattr(a[0], a[1]))
    return Unknown(f"nn.{cls.name}.{name}")


# =============================================================== module state
def init_module_state(it, inst):
    inst.kind = "module"


def make_torch_module(it, name, args, kwargs):
    if name == "Module":
        inst = InstanceVal(TorchClass("Module"), "module", "Module")
        return inst
    cls = TorchClass(name)
    inst = InstanceVal(cls, "module", name)
    inst.line = it.loc[1]
    inst.file = it.loc[0]
    torch_init(it, inst, name, args, kwargs)
    return inst


def _is_module(v):
    return isinstance(v, InstanceVal) and v.kind == "module"


def torch_init(it, inst, name, args, kwargs):
    inst.torch_base = inst.torch_base or name
    if name == "Module":
        return
    if name == "Sequential":
        if len(args) == 1 and isinstance(args[0], dict):
            items = list(args[0].items())
        else:
            items = [(str(i), m) for i, m in enumerate(args)]
        for k, m in items:
            _add_child(it, inst, str(k), m)
        return
    if name == "ModuleList":
        if args:
            for i, m in enumerate(it.iterate(args[0])):
                _add_child(it, inst, str(i), m)
        return
    if name == "ModuleDict":
        if args:
            d = args[0]
            items = list(d.items()) if isinstance(d, dict) else [tuple(p) for p in it.iterate(d)]
            for k, m in items:
                _add_child(it, inst, str(k), m)
        return
    if name in ("ParameterList", "ParameterDict"):
        if args:
            d = args[0]
            items = list(d.items()) if isinstance(d, dict) else list(enumerate(it.iterate(d)))
            for k, p in items:
                module_setattr(it, inst, str(k), p)
        return
    if name in ("TransformerEncoder", "TransformerDecoder"):
        layer = args[0] if args else kwargs.get("encoder_layer", kwargs.get("decoder_layer"))
        n = args[1] if len(args) > 1 else kwargs.get("num_layers")
        norm = args[2] if len(args) > 2 else kwargs.get("norm")
        if not is_int(n) or not _is_module(layer):
            raise InterpError(f"nn.{name} with unknown layer or num_layers")
        ml = InstanceVal(TorchClass("ModuleList"), "module", "ModuleList")
        for i in range(n):
            _add_child(it, ml, str(i), clone_module(layer))
        inst.modules["layers"] = ml
        inst.modules["norm"] = norm if _is_module(norm) else None
        inst.attrs["num_layers"] = n
        return
    if name == "Transformer":
        _transformer_init(it, inst, args, kwargs)
        return
    sig = SIGS.get(name)
    if sig is None:
        raise InterpError(f"nn.{name} is not known to the parser")
    given = {}
    names = _SIG_NAMES.get(name)
    if names is None:
        names = _SIG_NAMES[name] = [s[0] for s in sig]
    for i, v in enumerate(args):
        if i < len(names):
            given[names[i]] = v
        elif name != "Identity":
            it.warn(f"nn.{name} given too many positional arguments")
    for k, v in kwargs.items():
        if k in ("device", "dtype"):
            continue
        if k in names:
            given[k] = v
        elif name != "Identity":
            it.warn(f"nn.{name} has no argument '{k}'; ignored")
    for n_, _default, req in sig:
        if req and n_ not in given and name != "Identity":
            it.warn(f"nn.{name} is missing its argument '{n_}'")
            given[n_] = Unknown(f"missing {n_}")
    if name == "Identity":
        given = {}
    # functions and module classes given as arguments (TransformerEncoderLayer activation)
    for k, v in list(given.items()):
        given[k] = _arg_value(v)
    inst.op = name
    inst.args = given
    full = nnops.full_args(name, given)
    # parameters of the leaf
    for pname, shape in nnops.param_shapes(name, given):
        if "." in pname:
            continue
        inst.params[pname] = TensorVal(None, [_dimv(d) for d in shape], "float32",
                                       param=ParamInfo(inst, pname, leaf=True))
    if "bias" in full and "bias" not in inst.params and full.get("bias") is False:
        inst.params["bias"] = None
    if name in ("LayerNorm", "RMSNorm", "GroupNorm") or name.startswith("BatchNorm") or name.startswith("InstanceNorm"):
        for pn in ("weight", "bias"):
            inst.params.setdefault(pn, None)
    for k, v in full.items():
        if k not in inst.params:
            inst.attrs[k] = _attr_view(name, k, v)


_SIG_NAMES = {}


def _transformer_init(it, inst, args, kwargs):
    """nn.Transformer as torch builds it: an encoder and a decoder of layers, each with a final norm
    (so that subclasses reach self.encoder / self.decoder, and the op table sees known layers)."""
    names = [s[0] for s in SIGS["Transformer"]]
    a = {n: d for n, d, _ in SIGS["Transformer"]}
    a.update(zip(names, args))
    a.update({k: v for k, v in kwargs.items() if k in a})
    layer_kw = {k: a[k] for k in ("dim_feedforward", "dropout", "activation", "layer_norm_eps", "batch_first",
                                  "norm_first", "bias")}
    parts = (("encoder", "TransformerEncoder", "TransformerEncoderLayer", "num_encoder_layers"),
             ("decoder", "TransformerDecoder", "TransformerDecoderLayer", "num_decoder_layers"))
    for attr, stack, layer, count in parts:
        custom = a.get(f"custom_{attr}")
        if _is_module(custom):
            inst.modules[attr] = custom
            continue
        lyr = make_torch_module(it, layer, [a["d_model"], a["nhead"]], dict(layer_kw))
        norm = make_torch_module(it, "LayerNorm", [a["d_model"]], {"eps": a["layer_norm_eps"], "bias": a["bias"]})
        inst.modules[attr] = make_torch_module(it, stack, [lyr, a[count], norm], {})
    for k in ("d_model", "nhead", "batch_first"):
        inst.attrs[k] = a[k]


def _dimv(d):
    return d if (is_int(d) or isinstance(d, Sym)) else None


def _arg_value(v):
    if isinstance(v, ExtVal):
        return v.path.rsplit(".", 1)[-1]
    if isinstance(v, str) and v.startswith("dtype:"):
        return v[6:]
    return v


def _attr_view(op, k, v):
    if op.startswith(("Conv", "ConvTranspose", "MaxPool", "AvgPool")) and k in (
            "kernel_size", "stride", "padding", "dilation", "output_padding"):
        n = nnops._conv_dims(op)
        if v is None:
            return None
        if isinstance(v, (list, tuple)):
            return tuple(v)
        if isinstance(v, str):
            return v
        return (v,) * n
    if k == "normalized_shape":
        return tuple(v) if isinstance(v, (list, tuple)) else (v,)
    return v


def _add_child(it, inst, name, m):
    if m is None:
        inst.modules[name] = None
        return
    if not _is_module(m):
        if isinstance(m, Unknown):
            it.warn(f"submodule '{name}' is not known when reading the source")
            return
        raise InterpError(f"{it.describe(m)} given where a module is expected")
    inst.modules[name] = m


def clone_module(m, memo=None):
    """A deep copy of a module tree (new parameters); plain containers in attributes
    are copied too, so no two clones share a submodule."""
    if memo is None:
        memo = {}
    if id(m) in memo:
        return memo[id(m)]
    c = InstanceVal(m.cls, m.kind, m.torch_base)
    memo[id(m)] = c
    c.op, c.args, c.line, c.file = m.op, dict(m.args) if m.args else m.args, m.line, m.file
    for k, v in m.modules.items():
        c.modules[k] = clone_module(v, memo) if v is not None else None
    for k, v in m.attrs.items():
        c.attrs[k] = _clone_value(v, memo)
    for k, p in m.params.items():
        if p is None:
            c.params[k] = None
        elif p.param is not None and p.param.owner is not None and p.param.owner is not m and \
                id(p.param.owner) not in memo:
            c.params[k] = p  # a tensor owned outside this tree (tied weight): still that one
        else:
            c.params[k] = TensorVal(None, list(p.shape) if p.shape is not None else None, p.dtype,
                                    param=ParamInfo(c, k, leaf=p.param.leaf if p.param else False))
    for k, b in m.buffers.items():
        c.buffers[k] = b
    return c


def _clone_value(v, memo):
    t = type(v)
    if t is InstanceVal:
        return memo.get(id(v), v)  # a module of the copied tree, else the same outside object
    if t is list or t is dict or t is tuple:
        # each container once: what was shared stays shared, and a shared structure costs its size
        done = memo.get(id(v))
        if done is not None:
            return done
        if t is list:
            out = memo[id(v)] = []
            out.extend(_clone_value(x, memo) for x in v)
        elif t is dict:
            out = memo[id(v)] = {}
            out.update((k, _clone_value(x, memo)) for k, x in v.items())
        else:
            out = memo[id(v)] = tuple(_clone_value(x, memo) for x in v)
        memo.setdefault("__keep__", []).append(v)  # ids stay unique while the copy runs
        return out
    return v


def make_parameter(it, args, kwargs):
    t = args[0] if args else kwargs.get("data")
    if t is None:
        return TensorVal(None, [], "float32", param=ParamInfo())
    if isinstance(t, TensorVal):
        return TensorVal(None, list(t.shape) if t.shape is not None else None, t.dtype, param=ParamInfo())
    raise InterpError("nn.Parameter of a value that is not a tensor")


def module_setattr(it, inst, name, value):
    if name == "training":
        return
    for _d in (inst.attrs, inst.params, inst.buffers, inst.modules):
        pass
    if _is_module(value):
        inst.attrs.pop(name, None)
        inst.params.pop(name, None)
        inst.buffers.pop(name, None)
        inst.modules[name] = value
        return
    if isinstance(value, TensorVal) and value.param is not None:
        if value.param.owner is None:
            value.param.owner = inst
            value.param.name = name
        elif value.param.owner is not inst and inst.op and name in ("weight",):
            inst.attrs["__tie__"] = value.param.owner
        inst.attrs.pop(name, None)
        inst.modules.pop(name, None)
        inst.params[name] = value
        return
    if value is None:
        if name in inst.modules:
            inst.modules[name] = None
            return
        if name in inst.params:
            inst.params[name] = None
            return
        if name in inst.buffers:
            inst.buffers[name] = None
            return
    if name in inst.buffers and isinstance(value, TensorVal):
        inst.buffers[name] = value
        return
    if name in inst.modules:
        del inst.modules[name]
    if name in inst.params and isinstance(value, TensorVal):
        inst.params[name] = value
        return
    inst.attrs[name] = value


def named_modules(inst, prefix="", seen=None):
    if seen is None:
        seen = set()
    out = []
    if id(inst) in seen:
        return out
    seen.add(id(inst))
    out.append((prefix, inst))
    for k, m in inst.modules.items():
        if m is not None:
            out += named_modules(m, (prefix + "." if prefix else "") + k, seen)
    return out


def all_params(inst):
    out = []
    seen = set()
    for q, m in named_modules(inst):
        for k, p in m.params.items():
            if p is not None and id(p) not in seen:
                seen.add(id(p))
                out.append(((q + "." if q else "") + k, p))
    return out


def module_builtin_attr(it, inst, name):
    def fn(f):
        return BuiltinFn(f"{inst.cls.name}.{name}", f)

    if name == "training":
        return Unknown("self.training")
    if name == "__setattr__":  # self.__setattr__('level_%d' % i, sub): registers like an assignment
        return fn(lambda a, k: it.setattr(inst, a[0], a[1]) if a and isinstance(a[0], str) else None)
    if name == "__getattr__":
        return fn(lambda a, k: it.getattr(inst, a[0]) if a and isinstance(a[0], str) else Unknown("__getattr__"))
    if name in ("modules",):
        return fn(lambda a, k: [m for _, m in named_modules(inst)])
    if name == "named_modules":
        return fn(lambda a, k: [(q, m) for q, m in named_modules(inst)])
    if name == "children":
        return fn(lambda a, k: [m for m in inst.modules.values() if m is not None])
    if name == "named_children":
        return fn(lambda a, k: [(q, m) for q, m in inst.modules.items() if m is not None])
    if name == "parameters":
        return fn(lambda a, k: [p for _, p in all_params(inst)])
    if name == "named_parameters":
        return fn(lambda a, k: all_params(inst))
    if name in ("buffers", "named_buffers"):
        return fn(lambda a, k: list(inst.buffers.values()) if name == "buffers" else list(inst.buffers.items()))
    if name in ("add_module", "register_module"):
        def add(a, k):
            nm = a[0] if a else k.get("name")
            m = a[1] if len(a) > 1 else k.get("module")
            if not isinstance(nm, str):
                raise InterpError("add_module with an unknown name")
            if m is None:
                inst.modules[nm] = None
            else:
                _add_child(it, inst, nm, m)
            return None
        return fn(add)
    if name == "register_buffer":
        def reg(a, k):
            nm = a[0] if a else k.get("name")
            t = a[1] if len(a) > 1 else k.get("tensor")
            if isinstance(nm, str):
                inst.buffers[nm] = t
            return None
        return fn(reg)
    if name == "register_parameter":
        def regp(a, k):
            nm = a[0] if a else k.get("name")
            p = a[1] if len(a) > 1 else k.get("param")
            if isinstance(nm, str):
                module_setattr(it, inst, nm, p)
            return None
        return fn(regp)
    if name in ("apply",):
        return fn(lambda a, k: inst)
    if name in ("train", "eval", "to", "cuda", "cpu", "float", "double", "half", "type", "requires_grad_",
                "bfloat16", "share_memory", "to_empty"):
        return fn(lambda a, k: inst)
    if name in ("zero_grad", "register_forward_hook", "register_forward_pre_hook", "register_full_backward_hook",
                "register_backward_hook", "load_state_dict", "state_dict", "extra_repr", "_init_weights",
                "reset_parameters", "register_load_state_dict_post_hook", "_register_load_state_dict_pre_hook",
                "_load_from_state_dict", "flatten_parameters"):
        return fn(lambda a, k: None)
    if name == "forward":
        return fn(lambda a, k: builtin_forward(it, inst, list(a), dict(k)))
    if name == "get_submodule":
        def gs(a, k):
            cur = inst
            for part in a[0].split(".") if a and isinstance(a[0], str) and a[0] else []:
                cur = cur.modules[part]
            return cur
        return fn(gs)
    if name in ("_modules",):
        return dict(inst.modules)
    if name == "_parameters":
        return dict(inst.params)
    if name == "_buffers":
        return dict(inst.buffers)
    tb = inst.torch_base
    if tb in CONTAINER_KINDS:
        if name == "append":
            return fn(lambda a, k: (_add_child(it, inst, _next_key(inst), a[0]), inst)[1])
        if name == "extend":
            def ext_(a, k):
                for m in it.iterate(a[0]):
                    _add_child(it, inst, _next_key(inst), m)
                return inst
            return fn(ext_)
        if name == "insert":
            def ins(a, k):
                idx, m = a[0], a[1]
                items = [v for v in inst.modules.values()]
                items.insert(idx, m)
                inst.modules.clear()
                for i, v in enumerate(items):
                    inst.modules[str(i)] = v
                return None
            return fn(ins)
        if name in ("items", "keys", "values"):
            return fn(lambda a, k: list(getattr(inst.modules, name)()))
        if name == "update":
            def upd(a, k):
                d = a[0] if a else k
                items = d.items() if isinstance(d, dict) else it.iterate(d)
                for kk, m in items:
                    _add_child(it, inst, str(kk), m)
                return None
            return fn(upd)
        if name == "pop":
            return fn(lambda a, k: inst.modules.pop(a[0] if isinstance(a[0], str) else list(inst.modules)[a[0]]))
        if name == "__len__":
            return fn(lambda a, k: len(inst.modules))
    if inst.op:
        if name in ("weight", "bias"):
            return None
    raise InterpError(f"'{inst.cls.name}' object has no attribute '{name}'")


def _next_key(inst):
    return str(len(inst.modules))


def torch_super_method(it, obj, tname, name):
    if name == "__init__":
        def init(a, k):
            torch_init(it, obj, tname, list(a), dict(k))
            return None
        return BuiltinFn(f"nn.{tname}.__init__", init)
    if name == "forward":
        def fwd(a, k):
            return builtin_forward(it, obj, list(a), dict(k), tname)
        return BuiltinFn(f"nn.{tname}.forward", fwd)
    if name == "__getitem__":
        return BuiltinFn("getitem", lambda a, k: module_getitem(it, obj, a[0]))
    try:
        return module_builtin_attr(it, obj, name)
    except InterpError:
        return Unknown(f"nn.{tname}.{name}")


def module_getitem(it, inst, idx):
    if inst.kind == "module" and inst.torch_base in CONTAINER_KINDS and not _user_method(it, inst, "__getitem__"):
        items = list(inst.modules.items())
        if isinstance(idx, str):
            if idx in inst.modules:
                return inst.modules[idx]
            if idx in inst.params:
                return inst.params[idx]
            raise InterpError(f"no submodule '{idx}'")
        if isinstance(idx, slice):
            if any(isinstance(x, (Unknown, Sym)) for x in (idx.start, idx.stop, idx.step)):
                raise InterpError("slice of a container with unknown bounds")
            sub = InstanceVal(inst.cls, "module", inst.torch_base)
            for k, m in items[idx]:
                sub.modules[k] = m
            sub.qname = inst.qname
            return sub
        if is_int(idx):
            if inst.torch_base in ("ParameterList",):
                return list(inst.params.values())[idx]
            try:
                return items[idx][1]
            except IndexError:
                raise InterpError(f"index {idx} out of range of {inst.cls.name}") from None
        raise InterpError("container index not known")
    f = _user_method(it, inst, "__getitem__")
    if f:
        return it.call_func(f, [inst, idx], {})
    raise InterpError(f"indexing {inst.cls.name} not followed")


def _user_method(it, inst, name):
    if isinstance(inst.cls, ClassVal):
        f, _ = it.class_attr(inst.cls, name)
        if isinstance(f, FuncVal):
            return f
    return None


def module_setitem(it, inst, idx, value):
    if inst.torch_base in CONTAINER_KINDS:
        if is_int(idx):
            keys = list(inst.modules)
            inst.modules[keys[idx]] = value
            return
        if isinstance(idx, str):
            _add_child(it, inst, idx, value)
            return
    raise InterpError(f"item assignment on {inst.cls.name} not followed")


def module_iter(it, inst):
    if inst.kind == "module" and inst.torch_base in CONTAINER_KINDS and not _user_method(it, inst, "__iter__"):
        if inst.torch_base == "ModuleDict":
            return list(inst.modules.keys())
        if inst.torch_base == "ParameterList":
            return list(inst.params.values())
        return [m for m in inst.modules.values() if m is not None]
    f = _user_method(it, inst, "__iter__")
    if f:
        return it.iterate(it.call_func(f, [inst], {}))
    raise InterpError(f"iteration over {inst.cls.name} not followed")


def module_add(it, a, b, inplace):
    if a.torch_base in ("ModuleList", "Sequential"):
        target = a if inplace else clone_container(a)
        for m in it.iterate(b):
            _add_child(it, target, _next_key(target), m)
        return target
    raise InterpError(f"+ on {a.cls.name} not followed")


def clone_container(a):
    c = InstanceVal(a.cls, "module", a.torch_base)
    c.modules = dict(a.modules)
    return c


# =============================================================== forward: module calls
def call_module(it, inst, args, kwargs):
    cname = inst.cls.name
    if isinstance(inst.cls, ClassVal) and cname in IDENTITY_CLASSES:
        x = args[0] if args else kwargs.get("input", kwargs.get("x"))
        return emit_module(it, inst, [x], {}, op_override="Identity")
    f = _user_method(it, inst, "forward")
    if f is not None:
        g = it.graph
        if g is not None:
            g.scope.append(inst.qname or "")
        try:
            return it.call_func(f, [inst] + list(args), kwargs)
        finally:
            if g is not None:
                g.scope.pop()
    return builtin_forward(it, inst, args, kwargs)


def builtin_forward(it, inst, args, kwargs, tname=None):
    tb = tname or inst.torch_base
    if tb == "__einops__":
        from . import einops_lib
        return einops_lib.call_layer(it, inst, args, kwargs)
    if inst.op and tb not in CONTAINER_KINDS:
        return emit_module(it, inst, args, kwargs)
    if tb == "Sequential":
        x = args[0] if args else kwargs.get("input")
        g = it.graph
        if g is not None:
            g.scope.append(inst.qname or "")
        try:
            for m in inst.modules.values():
                if m is not None:
                    x = it.call(m, [x], {})
        finally:
            if g is not None:
                g.scope.pop()
        return x
    if tb in ("TransformerEncoder", "TransformerDecoder"):
        x = args[0] if args else kwargs.get("src", kwargs.get("tgt"))
        rest = list(args[1:2]) if tb == "TransformerDecoder" else []
        if tb == "TransformerDecoder" and not rest and "memory" in kwargs:
            rest = [kwargs["memory"]]
        for k in kwargs:
            if k.endswith("mask") and isinstance(kwargs[k], TensorVal):
                it.warn(f"{k} of nn.{tb} is not part of the design")
        for m in inst.modules["layers"].modules.values():
            x = it.call(m, [x] + rest, {})
        norm = inst.modules.get("norm")
        if norm is not None:
            x = it.call(norm, [x], {})
        return x
    if tb == "Transformer":
        src = args[0] if args else kwargs.get("src")
        tgt = args[1] if len(args) > 1 else kwargs.get("tgt")
        for k in kwargs:
            if k.endswith("mask") and isinstance(kwargs[k], TensorVal):
                it.warn(f"{k} of nn.Transformer is not part of the design")
        for a in args[2:]:
            if isinstance(a, TensorVal):
                it.warn("a mask of nn.Transformer is not part of the design")
        memory = it.call(inst.modules["encoder"], [src], {})
        return it.call(inst.modules["decoder"], [tgt, memory], {})
    if tb in ("ModuleList", "ModuleDict"):
        raise InterpError(f"nn.{tb} is not callable")
    raise InterpError(f"{inst.cls.name} has no forward")


def _tensor_inputs(it, inst, op, args, kwargs):
    """(inputs, extra) for a leaf module call."""
    if op == "MultiheadAttention":
        q = args[0] if len(args) > 0 else kwargs.get("query")
        k = args[1] if len(args) > 1 else kwargs.get("key")
        v = args[2] if len(args) > 2 else kwargs.get("value")
        for name in ("key_padding_mask", "attn_mask"):
            if isinstance(kwargs.get(name), TensorVal):
                it.warn(f"{name} of nn.MultiheadAttention is not part of the design")
        nw = kwargs.get("need_weights", args[4] if len(args) > 4 else True)
        return [q, k, v], {"need_weights": nw}
    if op in ("LSTM", "GRU", "RNN"):
        from ..ops import OP_TABLE
        x = args[0] if args else kwargs.get("input")
        hx = args[1] if len(args) > 1 else kwargs.get("hx")
        ins = [x]
        states = [hx] if isinstance(hx, TensorVal) else [h for h in hx if isinstance(h, TensorVal)] \
            if isinstance(hx, (tuple, list)) else []
        most = OP_TABLE[op].arity[1]
        if states and (most is None or most > 1):
            ins += states
        elif states:
            # the op table takes no initial state: it changes values, never shapes or parameters
            it.warn(f"initial state of nn.{op} is not part of the design")
        return ins, {}
    if op in ("TransformerDecoderLayer", "Bilinear"):
        return [a for a in args[:2]], {}
    if op == "Transformer":
        return [a for a in args[:2]], {}
    x = args[0] if args else (kwargs.get("input", kwargs.get("x", kwargs.get("src"))))
    for a in list(args[1:]) + list(kwargs.values()):
        if isinstance(a, TensorVal):
            it.warn(f"extra tensor argument of nn.{op} is not part of the design")
    return [x], {}


def emit_module(it, inst, args, kwargs, op_override=None):
    op = op_override or inst.op
    ins, extra = _tensor_inputs(it, inst, op, args, kwargs)
    for t in ins:
        if not isinstance(t, TensorVal):
            raise InterpError(f"nn.{op} called on {it.describe(t)}")
    g = it.graph
    cache = inst.cache
    if cache is None or cache[0] != op:
        margs = {} if op_override else dict(inst.args or {})
        cache = inst.cache = (op, margs, nnops.full_args(op, margs), None)
    _, margs, full, jd = cache
    for t in ins:
        if t.pending:
            settle_pending(it, t, op, full)
    shapes = nnops.infer(op, full, [t.shape for t in ins])
    if g is None:
        return _const_results(op, shapes, extra)
    refs = [ref_of(it, t) for t in ins]
    key = id(inst)
    first = g.calls.get(key)
    shares = None
    if inst.qname is None:
        if not inst.unregistered:
            inst.unregistered = True
            it.warn(f"nn.{op} built at {it.display(inst.file.path) if inst.file else '?'}:{inst.line} is not a "
                    f"registered submodule (torch would not count its parameters)")
        nid = g.fresh(op)
        if first is not None:
            shares = first
    elif first is None:
        nid = g.claim(inst.qname or nnops_snake(op))
    else:
        nid = g.claim(inst.qname)
        shares = first
    g.keep.append(inst)
    tie = inst.attrs.get("__tie__")
    if tie is not None and shares is None:
        if id(tie) in g.calls:
            shares = g.calls[id(tie)]
        else:
            # the module that owns the tied weight comes later: it will share this node's
            g.set_call(("tie", id(tie)), nid)
            g.keep.append(tie)
    if shares is None and first is None and ("tie", key) in g.calls:
        shares = g.calls[("tie", key)]
    if first is None:
        g.set_call(key, nid)
    g.mark_called(key)
    if jd is None:
        jd = jargs(it, op, margs)
        inst.cache = (op, margs, full, jd)
    g.add(nid, op, dict(jd), refs, shares)
    return _results(op, nid, shapes, extra, ins)


def nnops_snake(op):
    from .graph import snake
    return snake(op)


def _results(op, nid, shapes, extra, ins):
    dt = ins[0].dtype if ins else "float32"
    if op in ("LSTM", "GRU", "RNN"):
        shapes = shapes or [None, None, None]
        out = TensorVal(nid, shapes[0], dt)
        h = TensorVal(nid + ":1", shapes[1], dt)
        if op == "LSTM":
            return (out, (h, TensorVal(nid + ":2", shapes[2], dt)))
        return (out, h)
    if op == "MultiheadAttention":
        shapes = shapes or [None, None]
        w = TensorVal(nid + ":1", shapes[1], dt) if extra.get("need_weights", True) is not False else None
        return (TensorVal(nid, shapes[0], dt), w)
    if op == "Embedding" or op == "EmbeddingBag":
        dt = "float32"
    return TensorVal(nid, shapes, dt)


def _const_results(op, shapes, extra):
    if op in ("LSTM", "GRU", "RNN"):
        shapes = shapes or [None, None, None]
        if op == "LSTM":
            return (TensorVal(None, shapes[0]), (TensorVal(None, shapes[1]), TensorVal(None, shapes[2])))
        return (TensorVal(None, shapes[0]), TensorVal(None, shapes[1]))
    if op == "MultiheadAttention":
        shapes = shapes or [None, None]
        return (TensorVal(None, shapes[0]), TensorVal(None, shapes[1]))
    return TensorVal(None, shapes)


def settle_pending(it, t, op, a):
    """Give a symbolic input the shape its first consumer expects."""
    t.pending = False
    B = Sym.named("B")
    shape = None
    if op in ("Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"):
        n = nnops._conv_dims(op)
        sp = {1: ["L"], 2: ["H", "W"], 3: ["D", "H", "W"]}[n]
        shape = [B, a.get("in_channels")] + [Sym.named(s) for s in sp]
    elif op in ("BatchNorm2d", "InstanceNorm2d", "GroupNorm"):
        c = a.get("num_features", a.get("num_channels"))
        shape = [B, c, Sym.named("H"), Sym.named("W")]
    elif op in ("BatchNorm1d",):
        shape = [B, a.get("num_features")]
    elif op in ("Linear",):
        shape = [B, a.get("in_features")]
    elif op in ("Embedding",):
        shape = [B, Sym.named("T")]
        t.dtype = "int64"
    elif op in ("LSTM", "GRU", "RNN"):
        T = Sym.named("T")
        shape = [B, T, a.get("input_size")] if a.get("batch_first") else [T, B, a.get("input_size")]
    elif op in ("MultiheadAttention",):
        T = Sym.named("T")
        e = a.get("embed_dim")
        shape = [B, T, e] if a.get("batch_first") else [T, B, e]
    elif op in ("TransformerEncoderLayer", "TransformerDecoderLayer"):
        T = Sym.named("T")
        e = a.get("d_model")
        shape = [B, T, e] if a.get("batch_first") else [T, B, e]
    elif op == "LayerNorm":
        ns = a.get("normalized_shape")
        ns = list(ns) if isinstance(ns, (list, tuple)) else [ns]
        shape = [B, Sym.named("T")] + ns
    if shape is not None and all(is_int(d) or isinstance(d, Sym) for d in shape):
        t.shape = shape
        it.settled.append(t)


# =============================================================== graph references
def ref_of(it, t):
    if t.ref is not None:
        return t.ref
    g = it.graph
    if t.param is not None:
        key = id(t.param)
        r = g.param_refs.get(key)
        if r:
            return r[1]
        qn = t.param.qname
        if qn is None:
            it.warn("a learned tensor that is not registered on a module is used")
            nid = g.fresh("Parameter")
        else:
            nid = g.claim(qn)
        if t.param.leaf:
            it.warn(f"weight {qn} of a torch.nn module is used directly; it is counted as its own Parameter")
        g.add(nid, "Parameter", {"shape": shape_arg(it, t.shape, "Parameter")}, [])
        g.set_param_ref(key, (t.param, nid))  # the object is kept alive so that its id stays unique
        owner = t.param.owner
        if owner is not None:
            g.mark_called(("param", id(t.param)))
        return nid
    key = id(t)
    r = g.param_refs.get(key)
    if r:
        return r[1]
    if t.values is not None and len(t.values) > 1 and t.shape is not None and len(t.shape) == 1 and \
            t.values == list(range(len(t.values))):
        nid = g.fresh("Arange")
        g.add(nid, "Arange", {"end": len(t.values)}, [])
    else:
        val = None
        if t.values is not None and t.values and all(v == t.values[0] for v in t.values):
            val = t.values[0]
        elif t.shape == [] and t.values:
            val = t.values[0]
        elif t.origin != "onehot":
            it.warn("a constant tensor built in forward enters the graph; its values are not recorded")
        nid = g.fresh("Constant")
        cargs = {"shape": shape_arg(it, t.shape or [], "Constant"), "value": val}
        if t.dtype != "float32" and not (t.dtype == "int64" and is_int(val)):
            cargs["dtype"] = t.dtype  # index tables stay integers (an Embedding looks them up)
        g.add(nid, "Constant", cargs, [])
    g.set_param_ref(key, (t, nid))
    return nid


def jval(it, v, what):
    """A constructor argument as JSON."""
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, float):
        if math.isfinite(v):
            return v
        return str(v)
    if isinstance(v, (list, tuple)):
        return [jval(it, x, what) for x in v]
    if isinstance(v, Sym):
        if it.symbolic:
            s = v.single_symbol()
            if s is not None:
                return s
        else:
            r = v.substitute(it.batch_env)
            if r is not None:
                return r
        it.warn(f"{what} depends on an input size; left unknown (null)")
        return None
    if isinstance(v, InstanceVal) and v.kind == "module" and v.op:
        return v.op.lower()
    if isinstance(v, dict):
        return {str(k): jval(it, x, what) for k, x in v.items()}
    it.warn(f"{what} is not known when reading the source; left unknown (null)")
    return None


def jargs(it, op, given):
    from .interp import MAX_WALK, _small
    d = nnops.defaults(op)
    out = {}
    for k, v in given.items():
        if isinstance(v, (list, tuple, dict)) and not _small(v, MAX_WALK):
            raise TooCostly(f"argument {k} of {op} is too large to follow")
        if k in d and _plain_eq(d[k], v):
            continue
        out[k] = jval(it, v, f"argument {k} of {op}")
    return out


def _plain_eq(a, b):
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float, str, type(None))) and isinstance(b, (int, float, str, type(None))):
        return type(a) is type(b) and a == b or (isinstance(a, (int, float)) and isinstance(b, (int, float))
                                                and not isinstance(a, bool) and a == b)
    return False


def shape_arg(it, dims, op, minus1=False, src=None):
    """Sizes for a Reshape / Expand / Parameter / Constant arg."""
    if dims is None:
        it.warn(f"shape of {op} is not known; left unknown (null)")
        return None
    out = []
    used_m1 = False
    pending = []
    for i, d in enumerate(dims):
        if is_int(d):
            out.append(d)
            continue
        if isinstance(d, Sym) and it.symbolic and d.single_symbol() is not None:
            out.append(d.single_symbol())
            continue
        pending.append(i)
        out.append(d)
    for _n, i in enumerate(pending):
        d = out[i]
        if minus1 and not used_m1:
            out[i] = -1
            used_m1 = True
            continue
        if isinstance(d, Sym) and not it.symbolic:
            r = d.substitute(it.batch_env)
            if r is not None:
                out[i] = r
                continue
        it.warn(f"a size of {op} depends on values not known when reading the source; left unknown (null)")
        out[i] = None
    return out


# =============================================================== tensor ops
def _is_graph(t):
    return isinstance(t, TensorVal) and not t.is_const


def emit_op(it, op, args, ins, full=None, nres=None):
    """A tensor op on TensorVal inputs; args are design args (already JSON-ready
    except for internal sizes given separately as full)."""
    full = full if full is not None else args
    shapes = nnops.infer(op, full, [t.shape for t in ins])
    g = it.graph
    dt = next((t.dtype for t in ins if t.dtype not in ("int64", "bool")), ins[0].dtype if ins else "float32")
    if op in ("Reshape", "Permute", "Transpose", "Select", "Slice", "Expand", "Concat", "Stack", "Split", "Flatten"):
        dt = ins[0].dtype if ins else dt
    if g is None or not any(_is_graph(t) for t in ins):
        # constant computation: shapes only
        if op == "Split":
            return tuple(TensorVal(None, s, dt) for s in (shapes or [None] * (nres or 1)))
        return TensorVal(None, shapes, dt)
    refs = [ref_of(it, t) for t in ins]
    nid = g.fresh(op)
    g.add(nid, op, args, refs)
    if op == "Split":
        n = len(shapes) if shapes else (nres or 1)
        return tuple(TensorVal(f"{nid}:{i}", shapes[i] if shapes else None, dt) for i in range(n))
    return TensorVal(nid, shapes, dt)


def passthrough(it, what, t, keep_shape=True):
    """An op the design cannot express: warn and carry the tensor on."""
    if not isinstance(t, TensorVal):
        return Unknown(what)
    if t.is_const or it.graph is None:
        return TensorVal(None, t.shape if keep_shape else None, t.dtype)
    it.warn(f"{what} has no archgraph op; the tensor is passed through unchanged")
    return TensorVal(t.ref if t.ref is not None else ref_of(it, t), t.shape if keep_shape else None, t.dtype)


def _graph_tensors(vals, out, depth=0):
    for a in vals:
        if _is_graph(a):
            out.append(a)
        elif isinstance(a, (list, tuple)) and depth < 3:
            _graph_tensors(a, out, depth + 1)
    return out


def unknown_call(it, why, args, kwargs):
    ts = _graph_tensors(list(args) + list(kwargs.values()), [])
    if ts and it.graph is not None:
        return passthrough(it, f"call of {why}", ts[0], keep_shape=False)
    return Unknown(f"result of {why}")


def _norm_dim(d, t):
    if not is_int(d):
        raise InterpError("dimension not known")
    if d < 0 and t.shape is not None:
        return d + len(t.shape)
    return d


def reshape(it, t, shape):
    shape = list(shape)
    if len(shape) == 1 and isinstance(shape[0], (list, tuple)):
        shape = list(shape[0])
    full = {"shape": [(-1 if (is_int(d) and d == -1) else d) for d in shape]}
    for d in shape:
        if isinstance(d, Unknown) or d is None:
            full["shape"] = [(-1 if (is_int(x) and x == -1) else (None if isinstance(x, Unknown) else x))
                             for x in shape]
    outshape = nnops.infer("Reshape", _reshape_full(full["shape"]), [t.shape])
    if t.is_const or it.graph is None:
        vals = t.values if (t.values is not None and outshape and all(is_int(d) for d in outshape)) else None
        return TensorVal(None, outshape, t.dtype, values=vals)
    # design shape: from the output shape so that batch-derived sizes become symbols or -1
    dims = outshape if outshape is not None else full["shape"]
    explicit_m1 = [i for i, d in enumerate(full["shape"]) if is_int(d) and d == -1]
    design = shape_arg(it, [d if not (is_int(d) and d == -1) else None for d in dims], "Reshape", minus1=True)
    if design is not None and explicit_m1 and -1 not in design:
        pass
    return emit_op(it, "Reshape", {"shape": design}, [t], {"shape": full["shape"]} if outshape is None else
                   {"shape": outshape})


def _reshape_full(shape):
    return {"shape": [(-1 if d is None else d) for d in shape]}


def permute(it, t, dims):
    dims = list(dims)
    if len(dims) == 1 and isinstance(dims[0], (list, tuple)):
        dims = list(dims[0])
    if not all(is_int(d) for d in dims):
        raise InterpError("permute with unknown dims")
    return emit_op(it, "Permute", {"dims": dims}, [t])


def transpose(it, t, d0, d1):
    if not (is_int(d0) and is_int(d1)):
        raise InterpError("transpose with unknown dims")
    return emit_op(it, "Transpose", {"dim0": d0, "dim1": d1}, [t])


def flatten(it, t, start_dim=0, end_dim=-1):
    return emit_op(it, "Flatten", {"start_dim": start_dim, "end_dim": end_dim}, [t])


def unsqueeze(it, t, d):
    if t.shape is None:
        return passthrough(it, "unsqueeze of a tensor of unknown rank", t, keep_shape=False)
    r = len(t.shape) + 1
    if not is_int(d):
        raise InterpError("unsqueeze dim not known")
    if d < 0:
        d += r
    new = list(t.shape[:d]) + [1] + list(t.shape[d:])
    if t.is_const or it.graph is None:
        return TensorVal(None, new, t.dtype, values=t.values)
    r = emit_op(it, "Unsqueeze", {"dim": d}, [t])
    r.shape = new
    return r


def squeeze(it, t, d=None):
    if t.shape is None:
        return passthrough(it, "squeeze of a tensor of unknown rank", t, keep_shape=False)
    if d is None:
        new = [x for x in t.shape if not (is_int(x) and x == 1)]
    else:
        dd = d if d >= 0 else d + len(t.shape)
        new = list(t.shape)
        if 0 <= dd < len(new) and is_int(new[dd]) and new[dd] == 1:
            new.pop(dd)
        else:
            return t
    if t.is_const or it.graph is None:
        return TensorVal(None, new, t.dtype, values=t.values)
    r = emit_op(it, "Squeeze", {"dim": d} if d is not None else {}, [t])
    r.shape = new
    return r


def expand(it, t, sizes):
    sizes = list(sizes)
    if len(sizes) == 1 and isinstance(sizes[0], (list, tuple)):
        sizes = list(sizes[0])
    out = []
    for _i, s in enumerate(sizes):
        if is_int(s) and s == -1:
            out.append(-1)
        elif is_int(s):
            out.append(s)
        elif isinstance(s, Sym):
            if it.symbolic and s.single_symbol():
                out.append(s.single_symbol())
            else:
                r = s.substitute(it.batch_env)
                if r is None:
                    it.warn("a size of Expand depends on values not known; left unknown (null)")
                out.append(r)
        else:
            it.warn("a size of Expand is not known; left unknown (null)")
            out.append(None)
    internal = [(-1 if (is_int(s) and s == -1) else s) for s in sizes]
    return emit_op(it, "Expand", {"shape": out}, [t], {"shape": internal})


def repeat(it, t, reps):
    """x.repeat(r0, r1, ...): Unsqueeze + Expand + Reshape per repeated dim (exact)."""
    if t.shape is None or not all(is_int(r) for r in reps) or len(reps) < len(t.shape):
        return passthrough(it, ".repeat()", t, keep_shape=False)
    cur = t
    lead = len(reps) - len(t.shape)
    for _ in range(lead):
        cur = unsqueeze(it, cur, 0)
    for d, r in enumerate(reps):
        if r == 1:
            continue
        shape = list(cur.shape)
        cur = unsqueeze(it, cur, d)
        cur = expand(it, cur, [-1] * d + [r] + [-1] * (len(shape) - d))
        cur = reshape(it, cur, shape[:d] + [dim_mul(r, shape[d])] + shape[d + 1:])
    return cur


def repeat_interleave(it, t, r, dim):
    if t.shape is None or not is_int(r) or dim is None or not is_int(dim):
        return passthrough(it, "repeat_interleave", t, keep_shape=False)
    d = _norm_dim(dim, t)
    shape = list(t.shape)
    cur = unsqueeze(it, t, d + 1)
    cur = expand(it, cur, [-1] * (d + 1) + [r] + [-1] * (len(shape) - d - 1))
    return reshape(it, cur, shape[:d] + [dim_mul(shape[d], r)] + shape[d + 1:])


def tensor_split(it, t, spec, dim=0):
    if t.shape is None:
        return passthrough(it, "tensor_split", t, keep_shape=False)
    d = _norm_dim(dim, t)
    L = t.shape[d]
    if isinstance(spec, (list, tuple)) and all(is_int(i) for i in spec):
        bounds = [0] + list(spec) + [L]
        sizes = []
        for a, b in zip(bounds, bounds[1:]):
            sizes.append(dim_add(b, a, -1) if b is not None else None)
    elif is_int(spec) and is_int(L):
        q, r = divmod(L, spec)
        sizes = [q + 1] * r + [q] * (spec - r)
    else:
        return passthrough(it, "tensor_split", t, keep_shape=False)
    if not all(is_int(x) for x in sizes):
        if not it.symbolic or not all(is_int(x) or (isinstance(x, Sym) and x.single_symbol()) for x in sizes):
            return passthrough(it, "tensor_split with sizes not known", t, keep_shape=False)
        arg = [x if is_int(x) else x.single_symbol() for x in sizes]
        return emit_op(it, "Split", {"split_size_or_sections": arg, "dim": dim}, [t],
                       {"split_size_or_sections": sizes, "dim": dim})
    return emit_op(it, "Split", {"split_size_or_sections": sizes, "dim": dim}, [t])


def split(it, t, size, dim=0):
    if isinstance(size, (list, tuple)):
        arg = list(size)
    elif is_int(size):
        arg = size
    else:
        raise InterpError("split size not known")
    return emit_op(it, "Split", {"split_size_or_sections": arg, "dim": dim}, [t])


def chunk(it, t, n, dim=0):
    if not is_int(n):
        raise InterpError("chunk count not known")
    if t.shape is None:
        raise InterpError("chunk of a tensor of unknown shape")
    d = _norm_dim(dim, t)
    L = t.shape[d]
    if not is_int(L):
        q = dim_floordiv(L, n)
        if q is None:
            raise InterpError("chunk of a dimension of unknown size")
        if it.symbolic and isinstance(q, Sym) and q.single_symbol():
            arg = q.single_symbol()
        elif not it.symbolic and isinstance(q, Sym) and q.substitute(it.batch_env) is not None:
            arg = q.substitute(it.batch_env)  # derived from the given input sizes
        else:
            raise InterpError("chunk of a dimension of unknown size")
        return emit_op(it, "Split", {"split_size_or_sections": arg, "dim": dim}, [t],
                       {"split_size_or_sections": [q] * n, "dim": dim})
    size = -(-L // n)
    return emit_op(it, "Split", {"split_size_or_sections": size, "dim": dim}, [t])


def reduce_op(it, op, t, dim=None, keepdim=False):
    if isinstance(dim, tuple):
        dim = list(dim)
    if dim is not None and not (is_int(dim) or (isinstance(dim, list) and all(is_int(d) for d in dim))):
        raise InterpError(f"{op.lower()} over unknown dims")
    args = {"dim": dim, "keepdim": bool(keepdim)}
    if t.is_const and t.values is not None and dim is None and op == "Sum":
        return TensorVal(None, [], t.dtype, values=[sum(t.values)])
    return emit_op(it, op, args, [t])


def select(it, t, dim, index):
    return emit_op(it, "Select", {"dim": dim, "index": index}, [t])


def slice_op(it, t, dim, start, end, step):
    args = {"dim": dim, "start": start}
    if end is not None:
        args["end"] = end
    if step != 1:
        args["step"] = step
    full = {"dim": dim, "start": start, "end": end, "step": step}
    return emit_op(it, "Slice", args, [t], full)


def concat(it, ts, dim=0, op="Concat"):
    ts = list(ts)
    if not all(isinstance(t, TensorVal) for t in ts):
        if any(isinstance(t, Unknown) for t in ts):
            raise InterpError(f"{op.lower()} of values not known")
        raise InterpError(f"{op.lower()} of non-tensors")
    if not is_int(dim):
        raise InterpError("concat dim not known")
    if all(t.is_const for t in ts) and all(t.values is not None for t in ts) and op == "Concat":
        vals = [v for t in ts for v in t.values]
        return TensorVal(None, [len(vals)], ts[0].dtype, values=vals) if all(
            t.shape is not None and len(t.shape) == 1 for t in ts) else TensorVal(None, None)
    return emit_op(it, op, {"dim": dim}, ts)


def activation(it, op, t, args=None):
    if not isinstance(t, TensorVal):
        raise InterpError(f"{op} of {it.describe(t)}")
    if t.is_const and t.values is not None and op in _ACT_VALUES:
        f = _ACT_VALUES[op]
        return TensorVal(None, t.shape, t.dtype, values=[f(v) for v in t.values])
    return emit_op(it, op, args or {}, [t])


_ACT_VALUES = {
    "ReLU": lambda v: max(v, 0),
    "Sigmoid": lambda v: 1 / (1 + math.exp(-v)) if v > -700 else 0.0,
    "Tanh": math.tanh,
}


def scale(it, t, value):
    if isinstance(value, Sym):
        value = value.substitute(it.batch_env) if not it.symbolic else None
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        if isinstance(value, bool):
            value = int(value)
        else:
            it.warn("scale factor not known when reading the source; left unknown (null)")
            value = None
    return emit_op(it, "Scale", {"value": value}, [t])


def _scalar_const(it, v, like):
    if isinstance(v, Sym):
        v = v.substitute(it.batch_env) if not it.symbolic else None
    if not isinstance(v, (int, float)):
        it.warn("a constant in a tensor expression is not known; left unknown (null)")
        v = None
    return TensorVal(None, [], like.dtype if like is not None else "float32", values=[v] if v is not None else None)


def _elementwise_values(op, a, b, dtype):
    fa = a.values if isinstance(a, TensorVal) else None
    fb = b.values if isinstance(b, TensorVal) else None
    if isinstance(a, TensorVal) and fa is None:
        return None
    if isinstance(b, TensorVal) and fb is None:
        return None
    la = fa if fa is not None else [a]
    lb = fb if fb is not None else [b]
    n = max(len(la), len(lb))
    if len(la) not in (1, n) or len(lb) not in (1, n):
        return None
    f = {ast.Add: lambda x, y: x + y, ast.Sub: lambda x, y: x - y, ast.Mult: lambda x, y: x * y,
         ast.Div: lambda x, y: x / y, ast.FloorDiv: lambda x, y: x // y, ast.Pow: lambda x, y: x ** y,
         ast.Mod: lambda x, y: x % y}.get(op)
    if f is None:
        return None
    try:
        out = [f(la[i if len(la) > 1 else 0], lb[i if len(lb) > 1 else 0]) for i in range(n)]
    except (ZeroDivisionError, OverflowError, TypeError, ValueError):
        return None
    if dtype in ("float32",):
        out = [_f32(float(v)) for v in out]
    elif dtype == "int64":
        out = [int(v) for v in out]
    return out


def _result_dtype(op, a, b):
    da = a.dtype if isinstance(a, TensorVal) else ("float32" if isinstance(a, float) else "int64")
    db = b.dtype if isinstance(b, TensorVal) else ("float32" if isinstance(b, float) else "int64")
    ta, tb = isinstance(a, TensorVal), isinstance(b, TensorVal)
    if op is ast.Div:
        return "float32" if "float64" not in (da, db) else "float64"
    floats = [d for d, t in ((da, ta), (db, tb)) if d.startswith("float") or d == "bfloat16"]
    if floats:
        tensor_floats = [d for d, t in ((da, ta), (db, tb)) if t and (d.startswith("float") or d == "bfloat16")]
        return tensor_floats[0] if tensor_floats else "float32"
    if ta and tb:
        return da
    return da if ta else db


def tensor_binop(it, op, a, b, inplace=False):
    ta, tb = isinstance(a, TensorVal), isinstance(b, TensorVal)
    if (ta and a.is_const or not ta) and (tb and b.is_const or not tb) or it.graph is None:
        # constant arithmetic: shapes (and small values)
        if isinstance(a, Unknown) or isinstance(b, Unknown):
            return TensorVal(None, (a if ta else b).shape, (a if ta else b).dtype)
        dt = _result_dtype(op, a, b)
        if op is ast.MatMult:
            sh = nnops.infer("MatMul", {}, [a.shape if ta else None, b.shape if tb else None])
            return TensorVal(None, sh, dt)
        sh = nnops.broadcast(a.shape if ta else [], b.shape if tb else [])
        vals = _elementwise_values(op, a, b, dt)
        return TensorVal(None, sh, dt, values=vals)
    if isinstance(a, Unknown) or isinstance(b, Unknown):
        t = a if ta else b
        it.warn("arithmetic with a value not known when reading the source; the tensor is passed through")
        return TensorVal(ref_of(it, t), t.shape, t.dtype)
    if op is ast.MatMult:
        return emit_op(it, "MatMul", {}, [a, b])
    if ta and tb:
        name = {ast.Add: "Add", ast.Sub: "Sub", ast.Mult: "Mul", ast.Div: "Div"}.get(op)
        if name:
            return emit_op(it, name, {}, [a, b])
        if op is ast.Pow:
            return passthrough(it, "tensor ** tensor", a)
        return passthrough(it, f"tensor operator {op.__name__}", a)
    t, s = (a, b) if ta else (b, a)
    if isinstance(s, (list, tuple)):
        raise InterpError("tensor arithmetic with a list")
    if op is ast.Mult:
        return scale(it, t, s)
    if op is ast.Div and ta:
        if isinstance(s, (int, float)) and s != 0 and not isinstance(s, bool):
            return scale(it, t, 1.0 / s)
        if isinstance(s, Sym):
            return scale(it, t, Unknown("size"))
    if op is ast.Pow and ta and is_int(s) and s == 2:
        return emit_op(it, "Mul", {}, [t, t])
    if op is ast.Pow and ta and isinstance(s, (int, float)) and s == 1:
        return t
    if op in (ast.Add, ast.Sub):
        if isinstance(s, (int, float)) and s == 0:
            return t
        c = _scalar_const(it, s, t)
        name = "Add" if op is ast.Add else "Sub"
        return emit_op(it, name, {}, [a if ta else c, c if ta else b])
    if op is ast.Div and tb:
        c = _scalar_const(it, s, t)
        return emit_op(it, "Div", {}, [c, t])
    return passthrough(it, f"tensor operator {op.__name__} with a number", t)


def tensor_unary(it, op, t):
    if op is ast.USub:
        if t.is_const:
            return TensorVal(None, t.shape, t.dtype, values=[-v for v in t.values] if t.values else None)
        return scale(it, t, -1)
    if op is ast.UAdd:
        return t
    return passthrough(it, "~ on a tensor", t)


def tensor_compare(it, op, a, b):
    t = a if isinstance(a, TensorVal) else b
    other = b if t is a else a
    if t.is_const and (not isinstance(other, TensorVal) or other.is_const):
        sh = nnops.broadcast(t.shape, other.shape if isinstance(other, TensorVal) else [])
        return TensorVal(None, sh, "bool")
    return TensorVal(None, t.shape, "bool")  # a run-time value: any `if` on it warns


# ---------------------------------------------------------------- indexing
def tensor_getitem(it, t, idx):
    items = list(idx) if isinstance(idx, tuple) else [idx]
    if isinstance(idx, TensorVal) and idx.is_const and idx.dtype.startswith("int") and idx.shape is not None \
            and t.shape and not t.is_const and it.graph is not None:
        return _gather_rows(it, t, idx)
    lists = [i for i, x in enumerate(items) if isinstance(x, list)]
    if len(lists) == 1 and Ellipsis not in items and all(is_int(v) for v in items[lists[0]]) and \
            items[lists[0]] and not any(isinstance(x, TensorVal) for x in items):
        return _index_with_list(it, t, items, lists[0])
    if any(isinstance(x, (TensorVal, list)) for x in items):
        return passthrough(it, "indexing with a tensor or list", t, keep_shape=False)
    if any(isinstance(x, Unknown) for x in items):
        return passthrough(it, "indexing with an unknown value", t, keep_shape=False)
    rank = len(t.shape) if t.shape is not None else None
    n_real = sum(1 for x in items if x is not None and x is not Ellipsis)
    if Ellipsis in items:
        k = items.index(Ellipsis)
        if rank is not None:
            fill = rank - n_real
            items = items[:k] + [slice(None)] * fill + items[k + 1:]
    elif rank is not None and n_real < rank:
        items = items + [slice(None)] * (rank - n_real)
    if Ellipsis in items:
        # unknown rank with an ellipsis: negative dims for what follows it
        k = items.index(Ellipsis)
        cur = t
        for j, x in enumerate(items[:k]):
            cur = _index_one(it, cur, j, x)
        after = items[k + 1:]
        dim = -len([x for x in after if x is not None])
        for x in after:
            if x is None:
                raise InterpError("None index after ... on a tensor of unknown rank")
            cur = _index_one(it, cur, dim, x)
            if not is_int(x):
                dim += 1
            else:
                pass
        return cur
    cur = t
    d = 0
    for x in items:
        if x is None:
            cur = unsqueeze(it, cur, d)
            d += 1
            continue
        if is_int(x) or isinstance(x, bool):
            cur = _index_one(it, cur, d, x)
            continue
        cur = _index_one(it, cur, d, x)
        d += 1
    return cur


def _index_with_list(it, t, items, k):
    """t[..., [i, j, ...], ...]: a list of ints picks rows of one dim and keeps that dim.  A run of
    consecutive indices is a Slice; anything else a Concat of one-row Slices, in the list's order."""
    idx = items[k]
    d_out = sum(1 for x in items[:k] if not is_int(x))  # where that dim is once the others are applied
    size = None
    if t.shape is not None:
        d_in = sum(1 for x in items[:k] if x is not None)
        size = t.shape[d_in] if d_in < len(t.shape) else None
    if is_int(size):
        if any(not -size <= v < size for v in idx):
            raise InterpError(f"index {idx} out of range for a dim of size {size}")
        idx = [v % size for v in idx]
    elif any(v < 0 for v in idx) and not all(v < 0 for v in idx):
        return passthrough(it, "indexing with a list of mixed signs", t, keep_shape=False)

    def one(lo, hi):
        sub = list(items)
        sub[k] = slice(lo, hi if hi != 0 else None)
        return tensor_getitem(it, t, tuple(sub))

    if all(b == a + 1 for a, b in zip(idx, idx[1:])):
        return one(idx[0], idx[-1] + 1)
    return concat(it, [one(v, v + 1) for v in idx], d_out)


def _gather_rows(it, t, idx):
    """t[idx] for a constant integer index tensor: a one-hot matrix times t (exact
    in shape, parameters and result; the index values themselves are not kept)."""
    n = prod(idx.shape)
    rows = t.shape[0]
    if not (is_int(n) and is_int(rows)):
        return passthrough(it, "indexing with a tensor", t, keep_shape=False)
    it.warn("indexing by a constant index tensor is written as a one-hot MatMul; the index values are not "
            "recorded")
    onehot = TensorVal(None, [n, rows], "float32")
    onehot.origin = "onehot"  # already explained above
    flat = t
    rest = list(t.shape[1:])
    if len(t.shape) > 2:
        flat = reshape(it, t, [rows, -1])
    y = tensor_binop(it, ast.MatMult, onehot, flat)
    if len(idx.shape) != 1 or len(t.shape) > 2:
        y = reshape(it, y, list(idx.shape) + rest)
    return y


def _index_one(it, t, d, x):
    if isinstance(x, Sym):
        raise InterpError("index depends on an input size")
    if is_int(x):
        if t.is_const and t.values is not None and t.shape and len(t.shape) == 1 and d == 0:
            try:
                return TensorVal(None, [], t.dtype, values=[t.values[x]])
            except IndexError:
                raise InterpError("index out of range") from None
        return select(it, t, d, x)
    if isinstance(x, slice):
        st, en, sp = x.start, x.stop, x.step
        if any(isinstance(v, Unknown) for v in (st, en, sp)):
            return passthrough(it, "slicing with unknown bounds", t, keep_shape=False)
        L = t.shape[d] if (t.shape is not None and -len(t.shape) <= d < len(t.shape)) else None
        if isinstance(st, Sym) or isinstance(en, Sym):
            st = _sym_bound(it, st)
            en = _sym_bound(it, en)
        sp = 1 if sp is None else sp
        st0 = 0 if st is None else st
        if (st0 == 0 and sp == 1 and (en is None or (is_int(L) and is_int(en) and en >= L) or
                                      (L is not None and not is_int(en) and dim_eq(en, L)))):
            return t
        if t.is_const and t.values is not None and t.shape and len(t.shape) == 1 and d == 0:
            vals = t.values[slice(st0, en, sp)]
            return TensorVal(None, [len(vals)], t.dtype, values=vals)
        return slice_op(it, t, d, st0, en, sp)
    raise InterpError(f"index {type(x).__name__} not followed")


def _sym_bound(it, v):
    if isinstance(v, Sym):
        r = v.substitute(it.batch_env) if not it.symbolic else None
        if r is None:
            raise InterpError("slice bound depends on an input size")
        return r
    return v


def tensor_setitem(it, t, idx, value):
    if t.is_const:
        t.values = None
        return
    it.warn("assignment into part of a tensor has no archgraph op; ignored")


def tensor_iter(it, t):
    if t.shape and is_int(t.shape[0]):
        if t.is_const and t.values is not None and len(t.shape) == 1:
            return [TensorVal(None, [], t.dtype, values=[v]) for v in t.values]
        if t.shape[0] > 4096:
            raise InterpError("iteration over a long tensor")
        return [select(it, t, 0, i) for i in range(t.shape[0])]
    raise InterpError("iteration over a tensor of unknown length")


def tensor_unpack(it, t, n):
    if t.shape is not None and t.shape and is_int(t.shape[0]) and t.shape[0] != n:
        raise InterpError(f"cannot unpack a tensor of {t.shape[0]} rows into {n} names")
    return [select(it, t, 0, i) for i in range(n)]


# ---------------------------------------------------------------- attributes & methods
def tensor_shape_tuple(t):
    if t.shape is None:
        return Unknown("shape of a tensor whose rank is unknown")
    return tuple(d if (is_int(d) or isinstance(d, Sym)) else Unknown("size") for d in t.shape)


def tensor_getattr(it, t, name):
    if name == "shape":
        return tensor_shape_tuple(t)
    if name == "dtype":
        return "dtype:" + t.dtype
    if name == "ndim":
        return len(t.shape) if t.shape is not None else Unknown("ndim")
    if name in ("data", "mT"):
        return t
    if name == "T":
        if t.shape is not None and len(t.shape) == 2:
            return transpose(it, t, 0, 1)
        return passthrough(it, ".T", t, keep_shape=False)
    if name in ("requires_grad", "is_cuda", "is_sparse", "is_quantized"):
        return False if name != "requires_grad" else (t.param is not None)
    if name == "device":
        return Unknown("device")
    if name == "grad":
        return None
    return TensorMethod(t, name)


_IDENTITY_METHODS = {"contiguous", "clone", "detach", "float", "cpu", "cuda", "to", "type_as", "requires_grad_",
                     "half", "double", "bfloat16", "pin_memory", "coalesce", "view_as_real_copy",
                     "retain_grad", "share_memory_"}
_SHAPE_KEEP_FUNCS = {"exp", "log", "abs", "sqrt", "rsqrt", "sign", "neg", "reciprocal", "erf", "floor", "ceil",
                     "round", "clamp", "clamp_min", "clamp_max", "clip", "roll", "flip", "masked_fill", "normalize",
                     "sin", "cos", "log2", "log1p", "expm1", "cumsum", "nan_to_num", "square", "pow", "lerp",
                     "trunc", "frac", "logit", "tril", "triu", "where", "fill_", "zero_", "masked_fill_",
                     "dropout_", "bernoulli", "bernoulli_", "erfinv", "sigmoid_", "tanh_", "relu_", "floor_divide",
                     "remainder", "fmod", "addcmul", "addcdiv", "lerp_", "hardtanh", "threshold", "celu"}
_INPLACE_CONST = {"normal_", "uniform_", "zero_", "fill_", "copy_", "bernoulli_", "div_", "mul_", "add_", "sub_",
                  "clamp_", "exponential_", "random_", "fill_diagonal_", "masked_fill_", "requires_grad_",
                  "trunc_normal_", "log_normal_", "geometric_", "cauchy_", "index_fill_", "scatter_"}


def _dims_arg(args, kwargs, key="dim"):
    if args:
        return args[0]
    return kwargs.get(key)


def _f32vals(vals, fn):
    try:
        return [_f32(fn(v)) for v in vals]
    except (ValueError, OverflowError, ZeroDivisionError, TypeError):
        return None


_INPLACE_GRAPH = {"add_", "sub_", "mul_", "div_", "relu_", "sigmoid_", "tanh_", "clamp_", "unsqueeze_",
                  "squeeze_", "transpose_", "t_", "masked_fill_", "pow_", "exp_", "neg_", "abs_", "sqrt_",
                  "hardtanh_", "fill_", "zero_", "copy_", "normal_", "uniform_", "bernoulli_"}


def tensor_method(it, t, name, args, kwargs):
    if name in _INPLACE_GRAPH and not t.is_const and t.param is None and it.graph is not None:
        if name in ("fill_", "zero_", "copy_", "normal_", "uniform_", "bernoulli_"):
            it.warn(f"in-place .{name}() on a tensor in forward is not followed")
            return t
        r = tensor_method(it, t, name[:-1], args, kwargs)
        if isinstance(r, TensorVal) and r.ref is not None:
            t.ref, t.shape, t.dtype = r.ref, r.shape, r.dtype
        return t
    if name in _IDENTITY_METHODS:
        if name in ("float", "half", "double", "bfloat16"):
            dt = {"float": "float32", "half": "float16", "double": "float64", "bfloat16": "bfloat16"}[name]
            return TensorVal(t.ref, t.shape, dt, values=t.values, param=t.param) if t.is_const else _retype(t, dt)
        if name == "to":
            for a in list(args) + list(kwargs.values()):
                if isinstance(a, str) and a.startswith("dtype:"):
                    return _retype(t, a[6:])
        return t
    if name in ("long", "int", "bool", "short", "byte"):
        dt = {"long": "int64", "int": "int32", "bool": "bool", "short": "int16", "byte": "uint8"}[name]
        vals = None
        if t.values is not None:
            vals = [bool(v) for v in t.values] if dt == "bool" else [int(v) for v in t.values]
        if t.is_const:
            return TensorVal(None, t.shape, dt, values=vals)
        return _retype(t, dt)
    if name == "type":
        if args and isinstance(args[0], str) and args[0].startswith("dtype:"):
            return _retype(t, args[0][6:])
        return t
    if name in ("tolist",):
        if t.values is not None and t.shape is not None and len(t.shape) <= 1:
            return list(t.values) if t.shape else t.values[0]
        return Unknown("tensor values")
    if name == "item":
        if t.values is not None and len(t.values) == 1:
            return t.values[0]
        return Unknown("tensor value")
    if name == "numpy":
        return t
    if name == "size":
        d = _dims_arg(args, kwargs)
        if d is None:
            return tensor_shape_tuple(t)
        if t.shape is None:
            return Unknown("size of a tensor whose rank is unknown")
        try:
            v = t.shape[d]
        except (IndexError, TypeError):
            raise InterpError("size() dimension out of range") from None
        return v if (is_int(v) or isinstance(v, Sym)) else Unknown("size")
    if name in ("dim", "ndimension"):
        return len(t.shape) if t.shape is not None else Unknown("dim")
    if name in ("numel", "nelement"):
        n = prod(t.shape) if t.shape is not None else None
        return n if n is not None else Unknown("numel")
    if name == "element_size":
        return 4
    if name in ("view", "reshape"):
        if args and isinstance(args[0], str) and args[0].startswith("dtype:"):
            return t
        return reshape(it, t, args if args else kwargs.get("shape", ()))
    if name in ("view_as", "reshape_as"):
        o = args[0]
        return reshape(it, t, o.shape if o.shape is not None else [Unknown("shape")])
    if name == "permute":
        return permute(it, t, args if args else kwargs.get("dims", ()))
    if name in ("transpose", "swapaxes", "swapdims"):
        a0 = args[0] if args else kwargs.get("dim0")
        a1 = args[1] if len(args) > 1 else kwargs.get("dim1")
        return transpose(it, t, a0, a1)
    if name == "t":
        return transpose(it, t, 0, 1)
    if name == "flatten":
        s = args[0] if args else kwargs.get("start_dim", 0)
        e = args[1] if len(args) > 1 else kwargs.get("end_dim", -1)
        return flatten(it, t, s, e)
    if name == "unflatten":
        d = args[0] if args else kwargs.get("dim")
        sizes = args[1] if len(args) > 1 else kwargs.get("sizes")
        if t.shape is None:
            raise InterpError("unflatten of a tensor of unknown rank")
        dd = _norm_dim(d, t)
        new = list(t.shape[:dd]) + list(sizes) + list(t.shape[dd + 1:])
        return reshape(it, t, new)
    if name in ("mean", "sum", "amax", "amin", "max", "min", "prod", "std", "var", "norm", "logsumexp", "all",
                "any", "argmax", "argmin"):
        d = _dims_arg(args, kwargs)
        keep = args[1] if len(args) > 1 else kwargs.get("keepdim", False)
        if name in ("var", "std"):  # x.var(dim, unbiased, keepdim)
            keep = kwargs.get("keepdim", args[2] if len(args) > 2 else False)
        elif name == "norm":  # x.norm(p, dim, keepdim)
            d = kwargs.get("dim", args[1] if len(args) > 1 else None)
            keep = kwargs.get("keepdim", args[2] if len(args) > 2 else False)
        if name == "mean":
            return reduce_op(it, "Mean", t, d, keep)
        if name == "sum":
            return reduce_op(it, "Sum", t, d, keep)
        if t.is_const:
            if name in ("max", "min") and t.values and d is None:
                return TensorVal(None, [], t.dtype, values=[max(t.values) if name == "max" else min(t.values)])
            return TensorVal(None, None, t.dtype)
        if name in ("max", "min", "amax", "amin"):
            r = reduce_op(it, "Amax" if name in ("max", "amax") else "Amin", t, d, keep)
            if name in ("max", "min") and d is not None:
                return (r, TensorVal(None, list(r.shape) if r.shape is not None else None, "int64"))
            return r
        if name in ("var", "std", "norm", "logsumexp", "prod"):
            it.warn(f".{name}() has no archgraph op; written as Mean over the same dims (the same shape)")
            return reduce_op(it, "Mean", t, d, keep)
        r = passthrough(it, f".{name}()", t, keep_shape=False)
        return r
    if name in ("unsqueeze",):
        return unsqueeze(it, t, _dims_arg(args, kwargs))
    if name == "squeeze":
        return squeeze(it, t, _dims_arg(args, kwargs))
    if name == "chunk":
        n = args[0] if args else kwargs.get("chunks")
        d = args[1] if len(args) > 1 else kwargs.get("dim", 0)
        return chunk(it, t, n, d)
    if name == "split":
        s = args[0] if args else kwargs.get("split_size", kwargs.get("split_size_or_sections"))
        d = args[1] if len(args) > 1 else kwargs.get("dim", 0)
        return split(it, t, s, d)
    if name == "unbind":
        d = _dims_arg(args, kwargs) or 0
        if t.shape is None or not is_int(t.shape[_norm_dim(d, t)]):
            raise InterpError("unbind of a dimension of unknown size")
        return tuple(select(it, t, d, i) for i in range(t.shape[_norm_dim(d, t)]))
    if name == "expand":
        return expand(it, t, args if args else kwargs.get("size", ()))
    if name == "expand_as":
        o = args[0]
        return expand(it, t, o.shape if o.shape is not None else [Unknown("shape")])
    if name in ("repeat", "tile"):
        reps = list(args) if args else list(kwargs.get("repeats", kwargs.get("dims", ())))
        if len(reps) == 1 and isinstance(reps[0], (list, tuple)):
            reps = list(reps[0])
        return repeat(it, t, reps)
    if name == "repeat_interleave":
        return repeat_interleave(it, t, _arg(args, kwargs, 0, "repeats"), _arg(args, kwargs, 1, "dim"))
    if name == "tensor_split":
        return tensor_split(it, t, _arg(args, kwargs, 0, "indices_or_sections",
                                        kwargs.get("indices", kwargs.get("sections"))), _arg(args, kwargs, 1, "dim", 0))
    if name in ("softmax", "log_softmax"):
        d = _dims_arg(args, kwargs)
        return activation(it, "Softmax" if name == "softmax" else "LogSoftmax", t, {"dim": d})
    if name in _METHOD_ACT:
        return activation(it, _METHOD_ACT[name], t)
    if name in ("matmul", "bmm", "mm", "__matmul__"):
        return tensor_binop(it, ast.MatMult, t, args[0])
    if name in ("add", "sub", "mul", "div", "add_", "sub_", "mul_", "div_", "true_divide", "multiply", "subtract",
                "divide"):
        if t.is_const and name.endswith("_"):
            return t
        op = {"add": ast.Add, "sub": ast.Sub, "subtract": ast.Sub, "mul": ast.Mult, "multiply": ast.Mult,
              "div": ast.Div, "divide": ast.Div, "true_divide": ast.Div}[name.rstrip("_")]
        other = args[0] if args else kwargs.get("other")
        alpha = kwargs.get("alpha")
        if alpha is not None and alpha != 1:
            other = tensor_binop(it, ast.Mult, other, alpha) if isinstance(other, TensorVal) else other * alpha
        return tensor_binop(it, op, t, other)
    if name in ("new_zeros", "new_ones", "new_empty", "new_full", "new_tensor"):
        if name == "new_tensor":
            return make_tensor(it, args[0] if args else kwargs.get("data"), t.dtype)
        size = args[0] if args else kwargs.get("size")
        vals_fill = {"new_zeros": 0.0, "new_ones": 1.0}.get(name)
        if name == "new_full":
            vals_fill = args[1] if len(args) > 1 else kwargs.get("fill_value")
        return const_tensor(it, _size_list(size if isinstance(size, (list, tuple)) else [size]), t.dtype, vals_fill)
    if name in _INPLACE_CONST and (t.is_const or t.param is not None):
        if t.is_const and name not in ("requires_grad_",):
            t.values = None if name not in ("zero_", "fill_") else t.values
        return t
    if name in ("pow",) and args and is_int(args[0]) and args[0] == 2 and not t.is_const:
        return emit_op(it, "Mul", {}, [t, t])
    if t.is_const:
        # constant math: keep the shape, compute small value lists where cheap
        fn = _CONST_FUNCS.get(name)
        vals = _f32vals(t.values, fn) if (fn is not None and t.values is not None) else None
        if name == "diff" and t.values is not None:
            vals = [b - a for a, b in zip(t.values, t.values[1:])]
            return TensorVal(None, [len(vals)], t.dtype, values=vals)
        if name in ("flatten",):
            return TensorVal(None, [prod(t.shape)] if t.shape is not None else None, t.dtype, values=t.values)
        return TensorVal(None, t.shape if name in _SHAPE_KEEP_FUNCS or fn is not None else None, t.dtype,
                         values=vals)
    if name in _SHAPE_KEEP_FUNCS:
        return passthrough(it, f".{name}()", t)
    if name in ("masked_fill", "index_select", "gather", "scatter", "narrow", "topk", "sort", "cumsum", "roll",
                "repeat_interleave", "tile", "flip", "einsum"):
        return passthrough(it, f".{name}()", t, keep_shape=name in _SHAPE_KEEP_FUNCS)
    return passthrough(it, f"tensor method .{name}()", t, keep_shape=False)


_METHOD_ACT = {"relu": "ReLU", "sigmoid": "Sigmoid", "tanh": "Tanh", "relu_": "ReLU", "sigmoid_": "Sigmoid",
               "tanh_": "Tanh"}
_CONST_FUNCS = {"exp": math.exp, "log": math.log, "abs": abs, "sqrt": math.sqrt, "round": round,
                "floor": math.floor, "ceil": math.ceil, "log2": math.log2, "neg": lambda v: -v,
                "sign": lambda v: (v > 0) - (v < 0)}


def _retype(t, dt):
    if t.is_const:
        return TensorVal(None, t.shape, dt, values=t.values)
    return TensorVal(t.ref if t.ref is not None else None, t.shape, dt, param=t.param) if t.ref is None else \
        TensorVal(t.ref, t.shape, dt)


# =============================================================== constant tensors
def _size_list(args):
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        args = list(args[0])
    out = []
    for a in args:
        if is_int(a) or isinstance(a, Sym):
            out.append(a)
        elif isinstance(a, TensorVal) and a.values is not None and len(a.values) == 1:
            out.append(int(a.values[0]))
        else:
            out.append(None)
    return out


def const_tensor(it, shape, dtype="float32", fill=None):
    vals = None
    n = prod(shape) if shape is not None and None not in shape else None
    if fill is not None and is_int(n) and n <= MAX_VALUES and isinstance(fill, (int, float)):
        v = _f32(float(fill)) if dtype == "float32" else fill
        vals = [v] * n
    t = TensorVal(None, shape, dtype, values=vals)
    t.origin = it.loc
    return t


def _nested_shape(data):
    if isinstance(data, (list, tuple)):
        if not data:
            return [0], []
        subs = [_nested_shape(x) for x in data]
        if any(s is None for s in subs):
            return None
        sh = subs[0][0]
        if any(s[0] != sh for s in subs):
            return None
        return [len(data)] + sh, [v for s in subs for v in s[1]]
    if isinstance(data, (int, float, bool)):
        return [], [data]
    if isinstance(data, TensorVal) and data.values is not None and data.shape == []:
        return [], list(data.values)
    return None


def make_tensor(it, data, dtype=None):
    if isinstance(data, TensorVal):
        return data
    if isinstance(data, (list, tuple)):
        from .interp import _small
        if not _small(data, MAX_VALUES * 4):
            raise TooCostly("a tensor literal too large to follow")
    r = _nested_shape(data)
    if r is None:
        return TensorVal(None, None, dtype or "float32")
    shape, vals = r
    if dtype is None:
        if any(isinstance(v, float) for v in vals):
            dtype = "float32"
        elif all(isinstance(v, bool) for v in vals) and vals:
            dtype = "bool"
        else:
            dtype = "int64"
    if dtype == "float32":
        vals = [_f32(float(v)) for v in vals]
    return TensorVal(None, shape, dtype, values=vals if len(vals) <= MAX_VALUES else None)


def _dtype_kw(kwargs, default="float32"):
    d = kwargs.get("dtype")
    if isinstance(d, str) and d.startswith("dtype:"):
        return d[6:]
    return default


def _arange(it, args, kwargs):
    a = list(args)
    if not a and "end" in kwargs:
        a = [kwargs.get("start", 0), kwargs["end"]]
    if "step" in kwargs:
        a = a + [kwargs["step"]] if len(a) >= 2 else a
    if len(a) == 1:
        start, end, step = 0, a[0], 1
    elif len(a) == 2:
        start, end, step = a[0], a[1], 1
    else:
        start, end, step = a[0], a[1], a[2]
    if all(is_int(v) for v in (start, end, step)):
        vals = list(range(start, end, step))
        dt = _dtype_kw(kwargs, "int64")
        if dt.startswith("float"):
            vals = [_f32(float(v)) for v in vals]
        return TensorVal(None, [len(vals)], dt, values=vals if len(vals) <= MAX_VALUES else None)
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (start, end, step)):
        n = max(0, math.ceil((end - start) / step))
        vals = [_f32(start + i * step) for i in range(n)] if n <= MAX_VALUES else None
        return TensorVal(None, [n], _dtype_kw(kwargs, "float32"), values=vals)
    if is_int(start) and start == 0 and isinstance(end, Sym) and step == 1:
        return TensorVal(None, [end], _dtype_kw(kwargs, "int64"))
    return TensorVal(None, [None], _dtype_kw(kwargs, "int64"))


def _linspace(start, end, steps):
    if steps == 1:
        return [float(start)]
    step = (end - start) / (steps - 1)
    return [start + i * step for i in range(steps)]


# =============================================================== call dispatch
def _first_tensor(args, kwargs, key="input"):
    if args:
        return args[0]
    return kwargs.get(key, kwargs.get("x", kwargs.get("input")))


def _arg(args, kwargs, i, name, default=None):
    if len(args) > i:
        return args[i]
    return kwargs.get(name, default)


_F_ACT = {
    "relu": ("ReLU", []), "relu_": ("ReLU", []), "relu6": ("ReLU6", []), "gelu": ("GELU", ["approximate"]),
    "silu": ("SiLU", []), "sigmoid": ("Sigmoid", []), "tanh": ("Tanh", []), "hardswish": ("Hardswish", []),
    "hardsigmoid": ("Hardsigmoid", []), "mish": ("Mish", []), "elu": ("ELU", ["alpha"]), "selu": ("SELU", []),
    "leaky_relu": ("LeakyReLU", ["negative_slope"]), "softplus": ("Softplus", ["beta", "threshold"]),
    "softmax": ("Softmax", ["dim"]), "log_softmax": ("LogSoftmax", ["dim"]), "softmin": ("Softmin", ["dim"]),
    "logsigmoid": ("LogSigmoid", []), "hardtanh": ("Hardtanh", ["min_val", "max_val"]), "celu": ("CELU", ["alpha"]),
    "softsign": ("Softsign", []), "tanhshrink": ("Tanhshrink", []), "glu": ("GLU", ["dim"]), "prelu": None,
}

_POOL = {
    "max_pool1d": "MaxPool1d", "max_pool2d": "MaxPool2d", "max_pool3d": "MaxPool3d",
    "avg_pool1d": "AvgPool1d", "avg_pool2d": "AvgPool2d", "avg_pool3d": "AvgPool3d",
    "adaptive_avg_pool1d": "AdaptiveAvgPool1d", "adaptive_avg_pool2d": "AdaptiveAvgPool2d",
    "adaptive_avg_pool3d": "AdaptiveAvgPool3d", "adaptive_max_pool1d": "AdaptiveMaxPool1d",
    "adaptive_max_pool2d": "AdaptiveMaxPool2d", "adaptive_max_pool3d": "AdaptiveMaxPool3d",
    "dropout": "Dropout", "dropout1d": "Dropout1d", "dropout2d": "Dropout2d", "dropout3d": "Dropout3d",
    "alpha_dropout": "AlphaDropout", "pixel_shuffle": "PixelShuffle", "pixel_unshuffle": "PixelUnshuffle",
    "local_response_norm": "LocalResponseNorm", "max_pool2d_with_indices": "MaxPool2d", "unfold": "Unfold",
}


def functional_as_module(it, op, args, kwargs, skip_kw=("training", "inplace", "return_indices", "_stacklevel",
                                                         "dtype")):
    """F.xxx(x, *a, **k) whose arguments line up with nn.Op's constructor."""
    x = args[0] if args else kwargs.get("input")
    if not isinstance(x, TensorVal):
        raise InterpError(f"{op} of {it.describe(x)}")
    sig = SIGS.get(op, [])
    names = [s[0] for s in sig]
    given = {}
    for i, v in enumerate(args[1:]):
        if i < len(names):
            given[names[i]] = v
    for k, v in kwargs.items():
        if k in ("input",) or k in skip_kw:
            continue
        if k in names:
            given[k] = v
    if op.startswith("Dropout") or op == "AlphaDropout":
        given = {"p": _arg(args, kwargs, 1, "p", 0.5)}
    if op in ("Softmax", "LogSoftmax", "Softmin") and given.get("dim") is None:
        it.warn(f"{op} without dim")
    for t in [x]:
        if t.pending:
            settle_pending(it, t, op, nnops.full_args(op, given))
    full = nnops.full_args(op, given)
    jd = jargs(it, op, given)
    if x.is_const or it.graph is None:
        return TensorVal(None, nnops.infer(op, full, [x.shape]), x.dtype)
    return emit_op(it, op, jd, [x], full)


def _owner_leaf(t, ops):
    if isinstance(t, TensorVal) and t.param is not None and t.param.leaf and t.param.owner is not None:
        o = t.param.owner
        if o.op in ops:
            return o
    return None


def f_linear(it, args, kwargs):
    x = _arg(args, kwargs, 0, "input")
    w = _arg(args, kwargs, 1, "weight")
    b = _arg(args, kwargs, 2, "bias")
    owner = _owner_leaf(w, ("Linear",))
    if owner is not None:
        return emit_module(it, owner, [x], {})
    if not isinstance(w, TensorVal):
        raise InterpError("F.linear with an unknown weight")
    y = tensor_binop(it, ast.MatMult, x, transpose(it, w, 0, 1) if (w.shape and len(w.shape) == 2) else w)
    if isinstance(b, TensorVal):
        y = tensor_binop(it, ast.Add, y, b)
    return y


def f_layer_norm(it, args, kwargs):
    x = _arg(args, kwargs, 0, "input")
    ns = _arg(args, kwargs, 1, "normalized_shape")
    w = _arg(args, kwargs, 2, "weight")
    b = _arg(args, kwargs, 3, "bias")
    eps = _arg(args, kwargs, 4, "eps", 1e-5)
    owner = _owner_leaf(w, ("LayerNorm",))
    if owner is not None:
        return emit_module(it, owner, [x], {})
    ns = list(ns) if isinstance(ns, (list, tuple)) else [ns]
    given = {"normalized_shape": ns, "eps": eps, "elementwise_affine": False}
    y = emit_op(it, "LayerNorm", jargs(it, "LayerNorm", given), [x], nnops.full_args("LayerNorm", given))
    if isinstance(w, TensorVal):
        y = tensor_binop(it, ast.Mult, y, w)
    if isinstance(b, TensorVal):
        y = tensor_binop(it, ast.Add, y, b)
    return y


def f_group_norm(it, args, kwargs):
    x = _arg(args, kwargs, 0, "input")
    w = _arg(args, kwargs, 2, "weight")
    owner = _owner_leaf(w, ("GroupNorm",))
    if owner is not None:
        return emit_module(it, owner, [x], {})
    return passthrough(it, "F.group_norm with weights not owned by nn.GroupNorm", x)


def f_batch_norm(it, args, kwargs):
    x = _arg(args, kwargs, 0, "input")
    w = _arg(args, kwargs, 3, "weight")
    owner = _owner_leaf(w, ("BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm"))
    if owner is not None:
        return emit_module(it, owner, [x], {})
    return passthrough(it, "F.batch_norm with weights not owned by nn.BatchNorm", x)


def f_conv(it, args, kwargs, n):
    x = _arg(args, kwargs, 0, "input")
    w = _arg(args, kwargs, 1, "weight")
    owner = _owner_leaf(w, (f"Conv{n}d",))
    if owner is not None:
        return emit_module(it, owner, [x], {})
    return passthrough(it, f"F.conv{n}d with weights not owned by nn.Conv{n}d", x, keep_shape=False)


def f_embedding(it, args, kwargs):
    x = _arg(args, kwargs, 0, "input")
    w = _arg(args, kwargs, 1, "weight")
    owner = _owner_leaf(w, ("Embedding",))
    if owner is not None:
        return emit_module(it, owner, [x], {})
    return passthrough(it, "F.embedding with weights not owned by nn.Embedding", x, keep_shape=False)


def f_interpolate(it, args, kwargs):
    x = _arg(args, kwargs, 0, "input")
    given = {}
    for i, k in enumerate(("size", "scale_factor", "mode", "align_corners")):
        v = _arg(args, kwargs, i + 1, k)
        if v is not None:
            given[k] = v
    full = nnops.full_args("Upsample", given)
    if x.is_const or it.graph is None:
        return TensorVal(None, nnops.infer("Upsample", full, [x.shape]), x.dtype)
    return emit_op(it, "Upsample", jargs(it, "Upsample", given), [x], full)


def f_pad(it, args, kwargs):
    x = _arg(args, kwargs, 0, "input")
    pad = _arg(args, kwargs, 1, "pad")
    mode = _arg(args, kwargs, 2, "mode", "constant")
    value = _arg(args, kwargs, 3, "value", None)
    if not isinstance(pad, (list, tuple)) or not all(is_int(p) for p in pad):
        return passthrough(it, "F.pad with sizes not known", x, keep_shape=False)
    if all(p == 0 for p in pad):
        return x
    n = len(pad) // 2
    if n not in (1, 2, 3):
        return passthrough(it, "F.pad of more than 3 dims", x, keep_shape=False)
    if mode == "constant":
        if value in (None, 0, 0.0):
            op, given = f"ZeroPad{n}d", {"padding": list(pad)}
        else:
            op, given = f"ConstantPad{n}d", {"padding": list(pad), "value": value}
    else:
        op = {"reflect": "ReflectionPad", "replicate": "ReplicationPad", "circular": "CircularPad"}.get(mode)
        if op is None:
            return passthrough(it, f"F.pad mode {mode}", x, keep_shape=False)
        op, given = f"{op}{n}d", {"padding": list(pad)}
    full = nnops.full_args(op, given)
    if x.is_const or it.graph is None:
        return TensorVal(None, nnops.infer(op, full, [x.shape]), x.dtype)
    return emit_op(it, op, jargs(it, op, given), [x], full)


def f_sdpa(it, args, kwargs):
    q, k, v = (_arg(args, kwargs, i, n) for i, n in enumerate(("query", "key", "value")))
    if kwargs.get("attn_mask") is not None or kwargs.get("is_causal"):
        it.warn("attention mask of scaled_dot_product_attention is not part of the design")
    sc = kwargs.get("scale")
    if sc is None:
        d = q.shape[-1] if q.shape else None
        sc = (1.0 / math.sqrt(d)) if is_int(d) else Unknown("scale")
    kt = transpose(it, k, -2, -1)
    att = tensor_binop(it, ast.MatMult, q, kt)
    att = scale(it, att, sc)
    att = activation(it, "Softmax", att, {"dim": -1})
    p = kwargs.get("dropout_p", 0.0)
    if isinstance(p, (int, float)) and p > 0:
        att = emit_op(it, "Dropout", {"p": p}, [att])
    return tensor_binop(it, ast.MatMult, att, v)


def f_einsum(it, args, kwargs):
    """torch.einsum of one or two operands, written as Permute / Sum / Reshape / MatMul (exact in
    shapes and results); repeated letters within one operand (diagonals) are not followed."""
    eq = args[0] if args else None
    ops = list(args[1:])
    if len(ops) == 1 and isinstance(ops[0], (list, tuple)):
        ops = list(ops[0])
    t0 = next((o for o in ops if isinstance(o, TensorVal)), None)
    if not isinstance(eq, str) or not ops or not all(isinstance(o, TensorVal) for o in ops):
        return passthrough(it, "torch.einsum", t0, keep_shape=False) if t0 else Unknown("einsum")
    try:
        return _einsum(it, eq.replace(" ", ""), ops)
    except _EinsumUnfollowed as e:
        return passthrough(it, f"torch.einsum('{eq}') ({e})", ops[0], keep_shape=False)


class _EinsumUnfollowed(Exception):
    pass


def _einsum(it, spec, ops):
    lhs, arrow, out = spec.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(ops) or len(ops) > 2:
        raise _EinsumUnfollowed("more than two operands")
    names = []
    for term, t in zip(terms, ops):
        if t.shape is None:
            raise _EinsumUnfollowed("operand of unknown rank")
        if "..." in term:
            n = len(t.shape) - (len(term) - 3)
            term = term.replace("...", "".join(chr(0x3b1 + i) for i in range(n)))  # greek letters
        if len(term) != len(t.shape) or len(set(term)) != len(term):
            raise _EinsumUnfollowed("repeated or missing letters")
        names.append(term)
    if not arrow:
        counts = {}
        for term in names:
            for c in term:
                counts[c] = counts.get(c, 0) + 1
        out = "".join(sorted(c for c, k in counts.items() if k == 1))
    elif "..." in out:
        ell = [c for c in names[0] if "\u03b1" <= c <= "\u03c9"]
        out = out.replace("...", "".join(ell))
    size = {}
    for term, t in zip(names, ops):
        for c, d in zip(term, t.shape):
            if c not in size or (is_int(size[c]) and size[c] == 1):
                size[c] = d
    # sum away letters only one operand has and the output does not keep
    cur = []
    for i, (term, t) in enumerate(zip(names, ops)):
        others = "".join(n for j, n in enumerate(names) if j != i)
        gone = [k for k, c in enumerate(term) if c not in out and c not in others]
        if gone:
            t = reduce_op(it, "Sum", t, gone, False)
            term = "".join(c for k, c in enumerate(term) if k not in gone)
        cur.append((term, t))
    if len(cur) == 1:
        term, t = cur[0]
        perm = [term.index(c) for c in out]
        return permute(it, t, perm) if perm != list(range(len(perm))) else t
    (a, A), (b, B) = cur
    batch = [c for c in a if c in b and c in out]
    contract = [c for c in a if c in b and c not in out]
    a_keep = [c for c in a if c not in b]
    b_keep = [c for c in b if c not in a]
    pa = [a.index(c) for c in batch + a_keep + contract]
    pb = [b.index(c) for c in batch + contract + b_keep]
    if pa != list(range(len(pa))):
        A = permute(it, A, pa)
    if pb != list(range(len(pb))):
        B = permute(it, B, pb)
    bsz = [size[c] for c in batch]
    simple = len(a_keep) <= 1 and len(b_keep) <= 1 and len(contract) == 1
    if not simple:
        A = reshape(it, A, [A.shape[i] for i in range(len(batch))] + [prod([size[c] for c in a_keep]),
                                                                       prod([size[c] for c in contract])])
        B = reshape(it, B, [B.shape[i] for i in range(len(batch))] + [prod([size[c] for c in contract]),
                                                                       prod([size[c] for c in b_keep])])
    elif not a_keep:
        A = unsqueeze(it, A, len(batch))
    if simple and not b_keep:
        B = unsqueeze(it, B, len(batch) + 1)
    y = tensor_binop(it, ast.MatMult, A, B)
    have = batch + a_keep + b_keep
    if not simple or not a_keep or not b_keep:
        lead = list(y.shape[:len(batch)]) if y.shape is not None else bsz
        y = reshape(it, y, lead + [size[c] for c in a_keep + b_keep])
    perm = [have.index(c) for c in out]
    if perm != list(range(len(perm))):
        y = permute(it, y, perm)
    return y


def _meshgrid(it, args, kwargs):
    ts = list(args)
    if len(ts) == 1 and isinstance(ts[0], (list, tuple)):
        ts = list(ts[0])
    sizes = [t.shape[0] if (isinstance(t, TensorVal) and t.shape) else None for t in ts]
    ij = kwargs.get("indexing", "ij") == "ij"
    shape = sizes if ij or len(sizes) < 2 else [sizes[1], sizes[0]] + sizes[2:]
    return tuple(TensorVal(None, list(shape), ts[i].dtype if isinstance(ts[i], TensorVal) else "int64")
                 for i in range(len(ts)))


def _const_call(it, name, args, kwargs):
    dt = _dtype_kw(kwargs)
    if name in ("zeros", "ones", "empty", "randn", "rand", "full", "randint"):
        if name == "full":
            size = args[0] if args else kwargs.get("size")
            fill = args[1] if len(args) > 1 else kwargs.get("fill_value")
            if "dtype" not in kwargs and isinstance(fill, int) and not isinstance(fill, bool):
                dt = "int64"
            return const_tensor(it, _size_list(size if isinstance(size, (list, tuple)) else [size]), dt, fill)
        if name == "randint":
            size = args[-1] if args else kwargs.get("size")
            return const_tensor(it, _size_list(size if isinstance(size, (list, tuple)) else [size]), "int64")
        size = list(args) if args else [kwargs.get("size")]
        fill = {"zeros": 0.0, "ones": 1.0}.get(name)
        return const_tensor(it, _size_list(size), dt, fill)
    if name in ("zeros_like", "ones_like", "empty_like", "randn_like", "rand_like", "full_like"):
        t = args[0]
        fill = {"zeros_like": 0.0, "ones_like": 1.0}.get(name)
        if name == "full_like":
            fill = args[1] if len(args) > 1 else kwargs.get("fill_value")
        if isinstance(t, TensorVal) and t.shape is not None:
            c = const_tensor(it, list(t.shape), _dtype_kw(kwargs, t.dtype), fill)
            return c
        return TensorVal(None, None)
    if name == "arange":
        return _arange(it, args, kwargs)
    if name == "linspace":
        s, e, n = _arg(args, kwargs, 0, "start"), _arg(args, kwargs, 1, "end"), _arg(args, kwargs, 2, "steps")
        if all(isinstance(v, (int, float)) for v in (s, e)) and is_int(n):
            return TensorVal(None, [n], dt, values=[_f32(v) for v in _linspace(s, e, n)])
        return TensorVal(None, [n if is_int(n) else None], dt)
    if name in ("tensor", "as_tensor", "Tensor", "FloatTensor", "LongTensor"):
        data = args[0] if args else kwargs.get("data")
        d = kwargs.get("dtype")
        d = d[6:] if isinstance(d, str) and d.startswith("dtype:") else None
        if name == "LongTensor":
            d = "int64"
        if name in ("Tensor", "FloatTensor"):
            d = "float32"
            if args and all(is_int(a) for a in args):
                return const_tensor(it, list(args), "float32")
        return make_tensor(it, data, d)
    if name == "eye":
        n = args[0]
        m = args[1] if len(args) > 1 else n
        return TensorVal(None, [n, m], dt)
    return None


def _float_functional(it, name, args, kwargs):
    """torch.ao.nn.quantized.FloatFunctional: float-level tensor ops of quantizable models."""
    if name == "cat":
        return concat(it, it.iterate(args[0]), _arg(args, kwargs, 1, "dim", 0))
    ops = {"add": ast.Add, "mul": ast.Mult, "add_scalar": ast.Add, "mul_scalar": ast.Mult}
    if name in ops:
        return tensor_binop(it, ops[name], args[0], args[1])
    if name == "add_relu":
        return activation(it, "ReLU", tensor_binop(it, ast.Add, args[0], args[1]))
    return unknown_call(it, f"FloatFunctional.{name}", args, kwargs)


def call_ext(it, path, args, kwargs):
    p = canon(path)
    h = _EXT.get(p)
    if h is not None:
        return h(it, args, kwargs)
    if p.startswith("__floatfunctional__."):
        return _float_functional(it, p.rsplit(".", 1)[-1], args, kwargs)
    if p == "__identity__":
        return args[0] if args else None
    mod, _, name = p.rpartition(".")
    if "quantiz" in mod and name in ("QuantStub", "DeQuantStub", "QuantWrapper"):
        return ExtVal("__identity__")  # identity at float precision
    if "quantized" in mod and name == "FloatFunctional":
        return ExtVal("__floatfunctional__")
    if mod in ("torch.nn.functional",):
        return call_functional(it, name, args, kwargs)
    if mod == "torch":
        return call_torch(it, name, args, kwargs)
    if p.startswith("torch.nn.init.") or p.startswith("torch.nn.utils.") and "init" in p:
        return None
    if mod == "math":
        return call_math(it, name, args, kwargs)
    if mod in ("numpy", "np"):
        return call_numpy(it, name, args, kwargs)
    if mod in ("typing", "typing_extensions", "warnings", "logging", "abc", "enum") or p.startswith("logging."):
        return args[-1] if (name == "cast" and args) else None if mod in ("warnings", "logging") else \
            Unknown(p)
    if p.startswith("torch.jit.") or p.startswith("torch.fx.") or p.startswith("torch._dynamo") or \
            p.startswith("torch.compiler"):
        if name in ("is_scripting", "is_tracing", "is_compiling"):
            return False
        if name == "annotate":
            return args[1] if len(args) > 1 else None
        if name in ("wrap", "unused", "ignore", "export", "script_if_tracing"):
            return args[0] if args and not isinstance(args[0], str) else None
        return Unknown(p)
    return unknown_call(it, p, args, kwargs)


def call_functional(it, name, args, kwargs):
    if name in _F_ACT and _F_ACT[name] is not None:
        op, extra = _F_ACT[name]
        x = args[0] if args else kwargs.get("input")
        if not isinstance(x, TensorVal):
            raise InterpError(f"F.{name} of {it.describe(x)}")
        given = {}
        for i, k in enumerate(extra):
            v = _arg(args, kwargs, i + 1, k)
            if v is not None:
                given[k] = v
        if op in ("Softmax", "LogSoftmax", "Softmin") and "dim" not in given:
            it.warn(f"F.{name} without dim")
        if x.pending:
            settle_pending(it, x, op, nnops.full_args(op, given))
        return activation(it, op, x, jargs(it, op, given))
    if name in _POOL:
        return functional_as_module(it, _POOL[name], args, kwargs)
    if name == "linear":
        return f_linear(it, args, kwargs)
    if name == "layer_norm":
        return f_layer_norm(it, args, kwargs)
    if name == "group_norm":
        return f_group_norm(it, args, kwargs)
    if name == "batch_norm":
        return f_batch_norm(it, args, kwargs)
    if name in ("conv1d", "conv2d", "conv3d"):
        return f_conv(it, args, kwargs, int(name[4]))
    if name == "embedding":
        return f_embedding(it, args, kwargs)
    if name in ("interpolate", "upsample", "upsample_nearest", "upsample_bilinear"):
        return f_interpolate(it, args, kwargs)
    if name == "pad":
        return f_pad(it, args, kwargs)
    if name == "scaled_dot_product_attention":
        return f_sdpa(it, args, kwargs)
    if name in ("normalize",):
        return passthrough(it, "F.normalize", _first_tensor(args, kwargs))
    if name in ("cross_entropy", "mse_loss", "nll_loss", "l1_loss", "binary_cross_entropy",
                "binary_cross_entropy_with_logits", "kl_div", "smooth_l1_loss"):
        return unknown_call(it, f"F.{name} (a loss)", args, kwargs)
    if name == "one_hot":
        return unknown_call(it, "F.one_hot", args, kwargs)
    return unknown_call(it, f"F.{name}", args, kwargs)


_TORCH_ACT = {"relu": "ReLU", "sigmoid": "Sigmoid", "tanh": "Tanh", "relu_": "ReLU", "selu": "SELU",
              "celu": "CELU"}


def call_torch(it, name, args, kwargs):
    c = _const_call(it, name, args, kwargs)
    if c is not None:
        return c
    x = _first_tensor(args, kwargs)
    if name in ("cat", "concat", "concatenate"):
        ts = args[0] if args else kwargs.get("tensors")
        return concat(it, it.iterate(ts), _arg(args, kwargs, 1, "dim", 0))
    if name == "stack":
        ts = args[0] if args else kwargs.get("tensors")
        return concat(it, it.iterate(ts), _arg(args, kwargs, 1, "dim", 0), op="Stack")
    if name == "meshgrid":
        return _meshgrid(it, args, kwargs)
    if not isinstance(x, TensorVal):
        if name in ("is_tensor",):
            return isinstance(x, TensorVal)
        if name in ("_assert", "manual_seed", "set_grad_enabled", "no_grad", "enable_grad", "inference_mode",
                    "autocast", "is_grad_enabled", "set_default_dtype", "_C", "set_printoptions"):
            return None if name != "is_grad_enabled" else False
        if name in ("Size",):
            return tuple(args[0]) if args else ()
        if name in ("pow",) and len(args) == 2 and isinstance(args[1], TensorVal):
            base, e = args
            vals = _f32vals(e.values, lambda v: base ** v) if e.values is not None else None
            return TensorVal(None, e.shape, "float32", values=vals)
        if name in ("einsum",):
            return f_einsum(it, args, kwargs)
        if name in ("diff", "round", "log", "exp", "sqrt", "abs", "sign", "log2") and x is None:
            return Unknown(f"torch.{name}")
        return unknown_call(it, f"torch.{name}", args, kwargs)
    if name == "flatten":
        return flatten(it, x, _arg(args, kwargs, 1, "start_dim", 0), _arg(args, kwargs, 2, "end_dim", -1))
    if name == "reshape":
        return reshape(it, x, _arg(args, kwargs, 1, "shape", ()))
    if name == "permute":
        return permute(it, x, _arg(args, kwargs, 1, "dims", ()))
    if name in ("transpose", "swapaxes", "swapdims"):
        return transpose(it, x, _arg(args, kwargs, 1, "dim0"), _arg(args, kwargs, 2, "dim1"))
    if name in ("matmul", "bmm", "mm"):
        return tensor_binop(it, ast.MatMult, x, _arg(args, kwargs, 1, "other", _arg(args, kwargs, 1, "mat2")))
    if name in ("add", "sub", "mul", "div", "true_divide", "multiply", "subtract", "divide"):
        return tensor_method(it, x, name, list(args[1:]), {k: v for k, v in kwargs.items() if k != "input"})
    if name in ("mean", "sum"):
        return reduce_op(it, "Mean" if name == "mean" else "Sum", x, _arg(args, kwargs, 1, "dim"),
                         _arg(args, kwargs, 2, "keepdim", False))
    if name in _TORCH_ACT:
        return activation(it, _TORCH_ACT[name], x)
    if name in ("softmax", "log_softmax"):
        return activation(it, "Softmax" if name == "softmax" else "LogSoftmax", x,
                          {"dim": _arg(args, kwargs, 1, "dim")})
    if name == "unsqueeze":
        return unsqueeze(it, x, _arg(args, kwargs, 1, "dim"))
    if name == "squeeze":
        return squeeze(it, x, _arg(args, kwargs, 1, "dim"))
    if name == "chunk":
        return chunk(it, x, _arg(args, kwargs, 1, "chunks"), _arg(args, kwargs, 2, "dim", 0))
    if name == "split":
        return split(it, x, _arg(args, kwargs, 1, "split_size_or_sections"), _arg(args, kwargs, 2, "dim", 0))
    if name == "unbind":
        return tensor_method(it, x, "unbind", list(args[1:]), kwargs)
    if name == "einsum":
        return f_einsum(it, args, kwargs)
    if name in ("repeat_interleave", "tensor_split", "tile"):
        return tensor_method(it, x, name, list(args[1:]), {k: v for k, v in kwargs.items() if k != "input"})
    if name in ("clone", "detach", "contiguous"):
        return x
    if name in ("diff", "round", "log", "exp", "sqrt", "abs", "sign", "log2", "floor", "ceil", "neg", "roll",
                "clamp", "where", "masked_fill", "flip", "cumsum", "erf", "rsqrt", "sin", "cos", "max", "min",
                "argmax", "topk", "sort", "gather", "index_select", "norm", "amax", "all", "any", "tril", "triu",
                "repeat_interleave", "tile", "narrow", "nan_to_num", "clip", "pow", "square", "prod", "var", "std",
                "logsumexp", "outer", "diag", "numel", "divide", "remainder", "floor_divide"):
        if name == "pow" and len(args) > 1 and is_int(args[1]) and args[1] == 2 and not x.is_const:
            return emit_op(it, "Mul", {}, [x, x])
        if name == "numel":
            return tensor_method(it, x, "numel", [], {})
        if x.is_const and name in ("divide", "floor_divide", "remainder", "pow") and len(args) > 1:
            op = {"divide": ast.Div, "floor_divide": ast.FloorDiv, "remainder": ast.Mod, "pow": ast.Pow}[name]
            return tensor_binop(it, op, x, args[1])
        return tensor_method(it, x, name, list(args[1:]), {k: v for k, v in kwargs.items() if k != "input"})
    return tensor_method(it, x, name, list(args[1:]), {k: v for k, v in kwargs.items() if k != "input"})


_MATH_OK = frozenset(("ceil", "floor", "sqrt", "log", "log2", "log10", "log1p", "exp", "expm1", "pow", "fabs",
                      "gcd", "isclose", "isfinite", "isinf", "isnan", "prod", "trunc", "sin", "cos", "tan", "atan",
                      "atan2", "asin", "acos", "tanh", "sinh", "cosh", "erf", "erfc", "copysign", "fmod", "hypot",
                      "radians", "degrees", "modf", "frexp", "ldexp", "fsum", "isqrt", "lcm", "dist", "floor",
                      "factorial", "comb", "perm"))


def call_math(it, name, args, kwargs):
    f = getattr(math, name, None)
    if f is None or name not in _MATH_OK:
        return Unknown(f"math.{name}")
    if name in ("factorial", "comb", "perm", "lcm", "ldexp", "pow", "isqrt") and any(
            isinstance(a, int) and abs(a) > 10000 for a in args):
        return Unknown(f"math.{name} of a huge number")
    if any(isinstance(a, (Unknown, Sym)) for a in args):
        if name in ("ceil", "floor", "prod") and len(args) == 1 and isinstance(args[0], Sym):
            return args[0]
        return Unknown(f"math.{name} of unknown")
    if not all(isinstance(a, (int, float)) or (name in ("prod", "fsum") and isinstance(a, (list, tuple)))
               for a in args):
        if name in ("prod",) and args and isinstance(args[0], (list, tuple)):
            pass
        else:
            return Unknown(f"math.{name}")
    try:
        return f(*args, **kwargs)
    except (ValueError, TypeError, OverflowError) as e:
        raise InterpError(f"math.{name}: {e}") from None


def call_numpy(it, name, args, kwargs):
    if name == "linspace":
        s, e, n = _arg(args, kwargs, 0, "start"), _arg(args, kwargs, 1, "stop"), _arg(args, kwargs, 2, "num", 50)
        if all(isinstance(v, (int, float)) for v in (s, e)) and is_int(n):
            vals = _linspace(float(s), float(e), n)
            return TensorVal(None, [n], "float64", values=vals)
    if name == "arange":
        return _arange(it, args, kwargs)
    if name in ("array", "asarray"):
        return make_tensor(it, args[0] if args else None)
    if name in ("sqrt", "log", "exp", "ceil", "floor", "log2", "prod", "pi", "round"):
        if args and isinstance(args[0], (int, float)):
            return call_math(it, name if name != "round" else "floor", args, {}) if name != "round" else round(
                args[0])
        if name == "prod" and args and isinstance(args[0], (list, tuple)) and all(is_int(v) for v in args[0]):
            return math.prod(args[0])
    if name in ("cumsum",) and args and isinstance(args[0], (list, tuple)):
        out, tot = [], 0
        for v in args[0]:
            tot += v
            out.append(tot)
        return TensorVal(None, [len(out)], "int64", values=out)
    return Unknown(f"numpy.{name}")


# ---------------------------------------------------------------- standard library
def _partial(it, args, kwargs):
    if not args:
        raise InterpError("partial() without a function")
    return PartialVal(args[0], args[1:], kwargs)


def _ordered_dict(it, args, kwargs):
    out = {}
    if args:
        d = args[0]
        if isinstance(d, dict):
            out.update(d)
        else:
            for pair in it.iterate(d):
                k, v = pair
                out[k] = v
    out.update(kwargs)
    return out


def _namedtuple(it, args, kwargs):
    name = args[0] if args else kwargs.get("typename")
    fields = args[1] if len(args) > 1 else kwargs.get("field_names")
    if isinstance(fields, str):
        fields = fields.replace(",", " ").split()
    if not isinstance(name, str) or not isinstance(fields, (list, tuple)):
        raise InterpError("namedtuple with unknown fields")
    defaults = kwargs.get("defaults")
    d = {}
    if isinstance(defaults, (list, tuple)):
        for f, v in zip(list(fields)[len(fields) - len(defaults):], defaults):
            d[f] = v
    return NTupleClass(name, list(fields), d)


def _copy(it, args, kwargs, deep=False):
    v = args[0]
    if isinstance(v, InstanceVal):
        if v.kind == "module":
            return clone_module(v) if deep else _shallow_inst(v)
        return _shallow_inst(v)
    if deep and isinstance(v, (list, dict, tuple)):
        return _deepcopy_value(it, v, {})
    if isinstance(v, list):
        return list(v)
    if isinstance(v, dict):
        return dict(v)
    return v


def _deepcopy_value(it, v, memo):
    """copy.deepcopy of plain containers and modules in them: each container once (its memo),
    as Python's own deepcopy does, so that shared parts stay shared and cost their size."""
    t = type(v)
    if t is InstanceVal:
        return clone_module(v) if v.kind == "module" else _shallow_inst(v)
    if t is not list and t is not dict and t is not tuple:
        return v
    done = memo.get(id(v))
    if done is not None:
        return done[0]
    it.charge(len(v))
    if t is list:
        out = []
        memo[id(v)] = (out, v)
        out.extend(_deepcopy_value(it, x, memo) for x in v)
    elif t is dict:
        out = {}
        memo[id(v)] = (out, v)
        out.update((k, _deepcopy_value(it, x, memo)) for k, x in v.items())
    else:
        out = tuple(_deepcopy_value(it, x, memo) for x in v)
        memo[id(v)] = (out, v)
    return out


def _shallow_inst(v):
    c = InstanceVal(v.cls, v.kind, v.torch_base)
    c.attrs = dict(v.attrs)
    c.modules = dict(v.modules)
    c.params = dict(v.params)
    c.buffers = dict(v.buffers)
    c.op, c.args, c.line, c.file = v.op, v.args, v.line, v.file
    return c


def _reduce(it, args, kwargs):
    f, seq = args[0], it.iterate(args[1])
    if len(args) > 2:
        acc = args[2]
    else:
        if not seq:
            raise InterpError("reduce of empty sequence")
        acc, seq = seq[0], seq[1:]
    for x in seq:
        acc = it.call(f, [acc, x], {})
    return acc


def _parameter(it, args, kwargs):
    return make_parameter(it, args, kwargs)


def _checkpoint(it, args, kwargs):
    f = args[0]
    return it.call(f, list(args[1:]), {k: v for k, v in kwargs.items() if k not in (
        "use_reentrant", "preserve_rng_state", "determinism_check", "debug", "context_fn")})


def _reparam(it, what, args, kwargs):
    """weight_norm / spectral_norm of a layer: the same layer, whose parameters torch counts anew.
    weight_norm splits the weight into a direction and one magnitude per slice of dim 0 (the layer's
    `weight_norm` argument in the op table); spectral_norm keeps as many parameters (its vectors are
    buffers)."""
    m = args[0] if args else kwargs.get("module")
    if not _is_module(m):
        return Unknown(what)
    if what == "spectral_norm":
        return m
    name = args[1] if len(args) > 1 else kwargs.get("name", "weight")
    dim = args[2] if len(args) > 2 else kwargs.get("dim", 0)
    if m.op in ("Linear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d") \
            and name == "weight" and dim == 0:
        m.args = dict(m.args or {}, weight_norm=True)
        m.cache = None
        return m
    it.warn(f"{what} of {it.describe(m)} (name={name!r}, dim={dim!r}) is not followed; the design keeps the plain "
            "module and misses its magnitudes")
    return m


def _noop(it, args, kwargs):
    return None


def _identity_decorator(it, args, kwargs):
    if args and not kwargs:
        return args[0]
    return BuiltinFn("decorator", lambda a, k: a[0] if a else None)


def _field(it, args, kwargs):
    if "default" in kwargs:
        return kwargs["default"]
    if "default_factory" in kwargs:
        return it.call(kwargs["default_factory"], [], {})
    return Unknown("field")


_EXT = {
    "functools.partial": _partial,
    "functools.reduce": _reduce,
    "functools.wraps": _identity_decorator,
    "functools.lru_cache": _identity_decorator,
    "functools.cache": _identity_decorator,
    "collections.OrderedDict": _ordered_dict,
    "typing.OrderedDict": _ordered_dict,
    "collections.namedtuple": _namedtuple,
    "collections.defaultdict": lambda it, a, k: {},
    "copy.copy": lambda it, a, k: _copy(it, a, k, False),
    "copy.deepcopy": lambda it, a, k: _copy(it, a, k, True),
    "torch.nn.Parameter": _parameter,
    "torch.nn.parameter.Parameter": _parameter,
    "torch.autograd.Variable": lambda it, a, k: a[0] if a else None,
    "torch.utils.checkpoint.checkpoint": _checkpoint,
    "torch.utils.checkpoint.checkpoint_sequential": lambda it, a, k: it.call(a[0], [a[-1]], {}),
    "torch.nn.utils.remove_weight_norm": lambda it, a, k: a[0] if a else None,
    "torch.nn.utils.weight_norm": lambda it, a, k: _reparam(it, "weight_norm", a, k),
    "torch.nn.utils.parametrizations.weight_norm": lambda it, a, k: _reparam(it, "weight_norm", a, k),
    "torch.nn.utils.spectral_norm": lambda it, a, k: _reparam(it, "spectral_norm", a, k),
    "torch.nn.utils.parametrizations.spectral_norm": lambda it, a, k: _reparam(it, "spectral_norm", a, k),
    "torch._assert": _noop,
    "torch._C._log_api_usage_once": _noop,
    "warnings.warn": _noop,
    "dataclasses.field": _field,
    "dataclasses.dataclass": _identity_decorator,
    "typing.cast": lambda it, a, k: a[1] if len(a) > 1 else None,
    "torch.nn.functional.linear": f_linear,
    "operator.mul": lambda it, a, k: it.binop(ast.Mult, a[0], a[1]),
    "operator.add": lambda it, a, k: it.binop(ast.Add, a[0], a[1]),
    "itertools.chain": lambda it, a, k: [x for s in a for x in it.iterate(s)],
    "itertools.repeat": lambda it, a, k: [a[0]] * a[1] if len(a) > 1 and is_int(a[1]) else Unknown("repeat"),
    "itertools.product": lambda it, a, k: _product(it, a, k),
}


def _product(it, a, k):
    import itertools
    seqs = [it.iterate(s) for s in a]
    r = k.get("repeat", 1)
    out = list(itertools.islice(itertools.product(*seqs, repeat=r), 100000))
    return out


from . import einops_lib as _einops  # noqa: E402 - it builds on the helpers above

_EXT.update(_einops.EXT)

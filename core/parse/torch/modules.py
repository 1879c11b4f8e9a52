"""nn.Module state: construction of torch.nn modules and containers, attributes, cloning, parameters."""

from __future__ import annotations

import itertools

from ...ops import OP_TABLE, ops_of, ops_with
from ...ops.base import FACTORY_ARGS, FLOAT_DTYPES, dtype_named
from ...ops.nn_classes import CONSTRUCTOR_ONLY, LAZY, lazy_defaults, lazy_size
from ..values import (
    BuiltinFn,
    ClassVal,
    ExtVal,
    FuncVal,
    InstanceVal,
    InterpError,
    ParamInfo,
    Sym,
    TensorVal,
    TorchClass,
    Unknown,
    is_int,
)
from . import optable


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


# where a message of a layer names it: nn.Linear 'encoder.fc' once the layer has a name (an attribute of the model,
# a key of a container), else nn.Linear
LAYER = "\x00layer\x00"


class LayerNote:
    """A message about a torch.nn layer, said once the model is built, naming the layer by its attribute path."""

    __slots__ = ("op", "path", "loc", "words", "seq")
    _count = itertools.count()

    def __init__(self, op, loc, words):
        self.op, self.loc, self.words, self.path = op, loc, words, []
        self.seq = next(LayerNote._count)  # said in the order they were found

    def message(self, more=0):
        name = f"nn.{self.op}" + (f" '{'.'.join(self.path)}'" if self.path else "")
        if more:  # the same words of the layers one line builds (a loop): said once
            name += f" (and {more} more built by this line)"
        return self.words.replace(LAYER, name)


def say(it, inst, words):
    """Say `words` of the layer inst (LAYER in them becomes its name) at the line building it."""
    held = it.layer_notes.setdefault(id(inst), (inst, []))
    held[1].append(LayerNote(inst.torch_base or inst.op, it.loc, words))


def _named(it, parent, name, m):
    """m is parent's `name`: what is held of m is held of parent, under that name."""
    held = it.layer_notes.pop(id(m), None)
    if held is None or parent is m:
        if held is not None:
            it.layer_notes[id(m)] = held
        return
    for note in held[1]:
        note.path.insert(0, name)
    it.layer_notes.setdefault(id(parent), (parent, []))[1].extend(held[1])


def say_layer_notes(it):
    """Say what is held of the layers built (once the model is: a layer is named by where it sits); the same words
    of the layers one line builds are said once, naming the first."""
    groups: dict = {}
    for note in sorted((n for _, ns in it.layer_notes.values() for n in ns), key=lambda n: n.seq):
        groups.setdefault((id(note.loc[0]), note.loc[1], note.op, note.words), []).append(note)
    it.layer_notes.clear()
    for notes in groups.values():
        it.warn(notes[0].message(len(notes) - 1), notes[0].loc)


def _is_module(v):
    return isinstance(v, InstanceVal) and v.kind == "module"


def torch_init(it, inst, name, args, kwargs):
    inst.torch_base = inst.torch_base or name
    if name == "Module":
        return
    if name in LAZY:
        name, args, kwargs = _lazy_as_op(inst, name, args, kwargs)
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
    if name in STACKS:
        layer = args[0] if args else kwargs.get("encoder_layer", kwargs.get("decoder_layer"))
        n = args[1] if len(args) > 1 else kwargs.get("num_layers")
        norm = args[2] if len(args) > 2 else kwargs.get("norm")
        if not is_int(n) or not _is_module(layer):
            raise InterpError(f"nn.{name} with unknown layer or num_layers")
        _factory_kwargs(it, inst, name, {k: v for k, v in kwargs.items() if k in FACTORY_ARGS}, {})
        ml = InstanceVal(TorchClass("ModuleList"), "module", "ModuleList")
        for i in range(n):
            _add_child(it, ml, str(i), clone_module(layer))
        inst.modules["layers"] = ml
        inst.modules["norm"] = norm if _is_module(norm) else None
        _named(it, inst, "layers.0", layer)  # what is said of the layer torch copies is said of its first copy
        if _is_module(norm):
            _named(it, inst, "norm", norm)
        inst.attrs["num_layers"] = n
        return
    if name == "Transformer":
        _transformer_init(it, inst, args, kwargs)
        return
    names = optable.arg_names(name)
    if names is None:  # a torch.nn class the op table does not hold: called, it passes its input on
        it.warn(f"nn.{name} is not in the op table; its arguments and parameters are not followed")
        inst.op, inst.args = name, {}
        return
    given, factory = {}, {}
    pos = optable.positional_names(name)
    for i, v in enumerate(args):
        k = pos[i] if i < len(pos) else None
        if k in FACTORY_ARGS:
            factory[k] = v  # by position, where torch's signature has them there (Linear(4, 8, True, None, dtype))
        elif k in names:
            given[k] = v
        elif k is not None:  # a slot of torch's that a node does not carry (RNN's proj_size, LSTM's only)
            if v != 0:
                say(it, inst, f"{LAYER} is given {k}={v!r} by position (RNNBase's slot, LSTM's only): torch builds "
                        f"its projection weights, but torch.nn.{name}'s forward then raises RuntimeError (expected "
                        "hidden size), so the source cannot run as written; the design leaves it out")
        elif name != "Identity":
            say(it, inst, f"{LAYER} is given too many positional arguments: torch.nn.{name} takes at most {len(pos)} "
                    f"({', '.join(pos)}), got {len(args)}")
            break
    for k, v in kwargs.items():
        if k in FACTORY_ARGS:
            factory[k] = v
            continue
        if k in names:
            given[k] = v
        elif name != "Identity":
            say(it, inst, f"{LAYER} has no argument '{k}'; ignored")
    for n_ in optable.required_args(name):
        if n_ not in given and name != "Identity":
            say(it, inst, f"{LAYER} is missing its argument '{n_}'")
            given[n_] = Unknown(f"missing {n_}")
    if name == "Identity":
        given = {}
    _constructor_only(it, inst, name, given)
    # functions and module classes given as arguments (TransformerEncoderLayer activation)
    for k, v in list(given.items()):
        given[k] = _arg_value(v)
    inst.op = name
    inst.args = given
    full = optable.full_args(name, given)
    # parameters of the leaf
    for pname, shape in optable.param_shapes(name, given):
        if "." in pname:
            continue
        inst.params[pname] = TensorVal(None, [_dimv(d) for d in shape], "float32",
                                       param=ParamInfo(inst, pname, leaf=True))
    if "bias" in full and "bias" not in inst.params and full.get("bias") is False:
        inst.params["bias"] = None
    if name in AFFINE_NORMS:
        for pn in ("weight", "bias"):
            inst.params.setdefault(pn, None)
    for k, v in full.items():
        if k not in inst.params:
            inst.attrs[k] = _attr_view(name, k, v)
    _factory_kwargs(it, inst, name, factory, given)


def _lazy_as_op(inst, name, args, kwargs):
    """`nn.LazyLinear(10)` read as the Linear it becomes at its first call, which sets the op's first argument
    (read_lazy_size); the rest are the op's, in its order, with the lazy class's own defaults."""
    op = LAZY[name]
    first, *rest = optable.positional_names(op)
    inst.attrs["__lazy__"] = first
    by_position = set(rest[:len(args)])
    own = {k: v for k, v in lazy_defaults(name).items() if k not in kwargs and k not in by_position}
    return op, [Unknown(f"{first} of nn.{name} before its first call")] + list(args), {**own, **kwargs}


def read_lazy_size(inst, x):
    """A lazy layer's first call: torch reads the op's first argument off the input and builds its learned
    tensors with it, once."""
    first = inst.attrs.pop("__lazy__")
    size = lazy_size(inst.torch_base, x.shape) if x.shape is not None else None
    if size is not None and not isinstance(size, Unknown):
        _set_leaf_arg(inst, first, size)
        inst.attrs[first] = size


def _constructor_only(it, inst, name, given):
    """Take off the layer's arguments those torch's constructor reads that a node does not carry
    (nn_classes.CONSTRUCTOR_ONLY), as torch reads them: a design holding one is refused for an argument its op
    lacks, a false block of a source that runs. Said only where the design then differs in what it counts or
    the source cannot run as written; initial weights, a frozen table and fixed random samples change no size."""
    for a in CONSTRUCTOR_ONLY.get(name, ()):
        if a.name not in given:
            continue
        v = given.pop(a.name)
        if name == "Hardtanh":
            if v is not None:  # torch's deprecated spellings win over min_val / max_val (a FutureWarning)
                given[a.name.replace("_value", "_val")] = v
        elif a.name == "bias":
            if v is False and optable.full_args(name, given).get("affine") is not False:
                n = next((s for k, s in optable.param_shapes(name, given) if k == "bias"), None)
                count = f"{n[0]} " if n and is_int(n[0]) else ""
                say(it, inst, f"{LAYER} is built with bias=False: torch gives it a weight and no bias, but "
                        f"archgraph/1's {name} has both, so the design counts {count}more parameters than the source")
        elif a.name == "_weight" and isinstance(v, TensorVal) and v.shape is not None:
            want = [given.get("num_embeddings"), given.get("embedding_dim")]
            if all(is_int(d) for d in want + list(v.shape)) and list(v.shape) != want:
                say(it, inst, f"{LAYER} is given _weight of shape {list(v.shape)}, not [num_embeddings, "
                        f"embedding_dim] = {want}: torch raises AssertionError (Shape of weight does not match), so "
                        "the source cannot build as written")
        elif a.name == "recompute_scale_factor" and v and given.get("size") is not None:
            say(it, inst, f"{LAYER} is given recompute_scale_factor=True with a size: its forward raises ValueError "
                    "(not meaningful with an explicit size), so the source cannot run as written; the design leaves "
                    "it out")


def from_pretrained(it, name, args, kwargs):
    """`nn.Embedding.from_pretrained(embeddings, freeze, ...)` (and EmbeddingBag's): torch's classmethod builds
    the layer with num_embeddings, embedding_dim = embeddings.shape, the tensor its initial weights."""
    names = optable.pretrained_args(name)
    given = {}
    for i, v in enumerate(args[:len(names)]):
        given[names[i]] = v
    for k, v in kwargs.items():
        if k in names:
            given[k] = v
    table = given.pop("embeddings", None)
    given.pop("freeze", None)  # a frozen table is counted as torch's parameters() count it: the same
    shape = table.shape if isinstance(table, TensorVal) else None
    if shape is not None and len(shape) != 2:
        raise InterpError(f"nn.{name}.from_pretrained of a {len(shape)}-D tensor: torch raises AssertionError "
                          "(Embeddings parameter is expected to be 2-dimensional)")
    rows, cols = shape if shape is not None else (Unknown("the pretrained table's rows"),
                                                   Unknown("the pretrained table's width"))
    return make_torch_module(it, name, [], {"num_embeddings": rows, "embedding_dim": cols, **given})


def _factory_kwargs(it, inst, name, factory, given):
    """Say what torch does with a layer's factory kwargs that the design does not hold: archgraph/1 builds every
    layer with float32 weights on the run's device, so a device says nothing, and a dtype of the source is said
    where it changes the layer or keeps the source from building (torch.nn.ReLU takes neither: TypeError)."""
    if not factory or name == "Identity":  # Identity takes any args and ignores them
        return
    if not optable.takes_factory(name):
        shown = ", ".join(f"{k}={_shown(v)}" for k, v in factory.items())
        say(it, inst, f"{LAYER} is given {shown}, but torch.nn.{name}'s constructor takes neither dtype nor device: "
                f"torch raises TypeError (unexpected keyword argument '{next(iter(factory))}'), so the source "
                "cannot build as written; the design leaves it out")
        return
    if "dtype" not in factory:
        return  # where the weights sit: no size or type of the design
    kind, d = _dtype_kind(factory["dtype"])
    weights = any(p is not None for p in optable.param_shapes(name, given)) or optable.param_count(name, given) is None
    if kind is None or not weights:
        return  # float32, None, a dtype not read (a library's **factory_kwargs), or no learned tensors to type
    if kind == "float":
        inst.attrs[WEIGHTS_DTYPE] = d
    if kind == "str":
        torch_name = dtype_named(d)
        such = f" such as torch.{torch_name}" if torch_name else ""
        say(it, inst, f"{LAYER} is given dtype={d!r}, a string: torch raises TypeError (a dtype must be a torch.dtype"
                f"{such}, not a str), so the source cannot build as written; archgraph/1 builds the layer with "
                "float32 weights")
    elif kind == "int":
        say(it, inst, f"{LAYER} is built with dtype={d}: torch raises RuntimeError (only floating point and complex "
                f"tensors can require gradients), so the source cannot build as written; archgraph/1 builds the "
                "layer with float32 weights")
    else:
        extra = (f" (torch's random initialisation of {d} weights raises NotImplementedError for most layers)"
                 if kind == "float8" else "")
        say(it, inst, f"{LAYER} is built with dtype={d}: archgraph/1 builds every layer with float32 weights, so the "
                f"design verifies float32 weights where the source has {d} ones{extra}")


# a module's methods that cast every floating-point parameter and buffer to one dtype (torch's Module.half etc.)
CASTS = {"half": "float16", "float": "float32", "double": "float64", "bfloat16": "bfloat16"}
WEIGHTS_DTYPE = "__weights_dtype__"  # a layer's attr: the floating dtype its weights are in, where not float32
WEIGHTS_ANY_FLOAT = ops_with("weights-any-float")
LOOKUPS = ops_with("lookup")  # they read integer ids, not values (float ones are refused by the verifier)


def _has_weights(m) -> bool:
    if m.op is None or m.args is None:
        return any(v is not None for v in m.params.values())
    return any(s is not None for _, s in optable.param_shapes(m.op, m.args)) or \
        optable.param_count(m.op, m.args) is None


def cast_module(it, inst, method, args, kwargs):
    """`module.half()` / `.double()` / `.bfloat16()` / `.float()` / `.to(dtype)` / `.type(dtype)`: torch casts
    the floating-point weights of every layer under the module. archgraph/1 builds every layer in float32, so a
    cast to another dtype is said (the design verifies float32 weights where the source has others) and kept on
    each layer, which says at its call when it meets values of another dtype (torch raises there)."""
    if method in CASTS:
        d = CASTS[method]
    else:
        given = [*args, *(v for key, v in kwargs.items() if key in ("dtype", "dst_type", "tensor"))]
        d = None
        for v in given:
            if isinstance(v, TensorVal):
                d = v.dtype  # .to(other_tensor): its dtype (and device)
            kind, name = _dtype_kind(v)
            if kind == "float":
                d = name
            elif isinstance(v, str) and v == "dtype:float32":
                d = "float32"
        if d is None or d not in FLOAT_DTYPES:
            return inst  # a device, or a dtype not read: where the weights sit is no size or type of the design
    cast = [(q, m) for q, m in named_modules(inst) if _has_weights(m)]
    for _, m in cast:
        if d == "float32":
            m.attrs.pop(WEIGHTS_DTYPE, None)
        else:
            m.attrs[WEIGHTS_DTYPE] = d
    if d != "float32" and cast:
        names = [q for q, _ in cast if q][:3]
        shown = (f"{len(cast)} layer(s) with weights" + (f" ({', '.join(names)}" +
                 (f" and {len(cast) - len(names)} more" if len(cast) > len(names) else "") + ")" if names else ""))
        how = f".{method}()" if method in CASTS else f".{method}(torch.{d})"
        it.warn(f"{how} casts {shown} to {d}: archgraph/1 builds every layer with float32 weights, so the design "
                f"verifies float32 weights where the source has {d} ones", it.loc)
    return inst


def weights_dtype_meets(it, inst, op, ins):
    """Say, once per layer, that the first layer whose weights the source made another floating dtype that is called on
    values of a dtype other than theirs: torch raises there (its kernels take one dtype; the op table's
    weights-any-float layers cast instead)."""
    d = inst.attrs.get(WEIGHTS_DTYPE)
    if d is None or not ins or it.graph is None or it.graph.dtype_mix_said or op in WEIGHTS_ANY_FLOAT or op in LOOKUPS:
        return
    fed = ins[0].dtype
    if fed in FLOAT_DTYPES and fed != d:
        it.graph.dtype_mix_said = True  # torch stops at the first such layer: the ones after it follow from it
        it.warn(f"nn.{op} {inst.qname or op!r} has {d} weights and is called on {fed} values: torch raises "
                "(a layer's weights and its input must share a dtype), so the source does not run as written; the "
                "design, whose layers are float32, does not say so", it.loc)


def _dtype_kind(v):
    """(kind, name) of a dtype a source gives a layer: kind "float" (float16, bfloat16, float64), "complex",
    "float8" (and the narrower floats), "int" (integers and bool: no weights torch can train), "str" (a string,
    not a torch.dtype); (None, None) for float32, None and what is not read."""
    if isinstance(v, str) and v.startswith("dtype:"):
        d = v[6:]
        if d == "float32":
            return None, None
        return ("float" if d in FLOAT_DTYPES else "int"), d
    if isinstance(v, str):
        return "str", v
    if isinstance(v, ExtVal) and v.path.startswith("torch.") and v.path.count(".") == 1:
        d = v.path[6:]  # a dtype of torch the design does not model (torch.complex64, torch.float8_e4m3fn)
        if d.startswith("complex") or d in ("cfloat", "cdouble", "chalf"):
            return "complex", d
        if d.startswith(("float8", "float4")):
            return "float8", d
        if d.startswith(("uint", "int", "qint", "quint", "bits")):
            return "int", d
    return None, None


def _shown(v):
    if isinstance(v, str) and v.startswith("dtype:"):
        return "torch." + v[6:]
    if isinstance(v, ExtVal):
        return v.path
    if v is None or isinstance(v, (str, int, float)):
        return repr(v)
    return "a value"


def _transformer_init(it, inst, args, kwargs):
    """nn.Transformer as torch builds it: an encoder and a decoder of layers, each with a final norm
    (so that subclasses reach self.encoder / self.decoder, and the op table sees known layers)."""
    names = optable.arg_names("Transformer")
    a = dict(optable.defaults("Transformer"))
    a.update(zip(names, args))
    a.update({k: v for k, v in kwargs.items() if k in a})
    factory = {k: v for k, v in zip(optable.positional_names("Transformer"), args) if k in FACTORY_ARGS}
    factory.update((k, v) for k, v in kwargs.items() if k in FACTORY_ARGS)
    layer_kw = {k: a[k] for k in ("dim_feedforward", "dropout", "activation", "layer_norm_eps", "batch_first",
                                  "norm_first", "bias")}
    for attr, stack, count in OP_TABLE["Transformer"].parts:
        layer = OP_TABLE[stack].layer_op
        custom = a.get(f"custom_{attr}")
        if _is_module(custom):
            inst.modules[attr] = custom
            continue
        lyr = make_torch_module(it, layer, [a["d_model"], a["nhead"]], dict(layer_kw))
        norm = make_torch_module(it, "LayerNorm", [a["d_model"]], {"eps": a["layer_norm_eps"], "bias": a["bias"]})
        inst.modules[attr] = make_torch_module(it, stack, [lyr, a[count], norm], {})
    for k in ("d_model", "nhead", "batch_first"):
        inst.attrs[k] = a[k]
    _factory_kwargs(it, inst, "Transformer", factory, {k: _arg_value(v) for k, v in a.items()})


def _dimv(d):
    return d if (is_int(d) or isinstance(d, Sym)) else None


def _arg_value(v):
    if isinstance(v, ExtVal):
        return v.path.rsplit(".", 1)[-1]
    if isinstance(v, str) and v.startswith("dtype:"):
        return v[6:]
    return v


def _attr_view(op, k, v):
    if op in WINDOWED and k in (
            "kernel_size", "stride", "padding", "dilation", "output_padding"):
        n = optable.spatial_dims(op)
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
    _named(it, inst, name, m)


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


# (arg of dim 0, arg of dim 1) of the layers whose weight alone fixes what they compute
_WEIGHT_SIZES = {name: spec.weight_dims for name, spec in OP_TABLE.items() if spec.weight_dims}
AFFINE_NORMS = ops_with("affine")
STACKS = ops_with("stack")
# the layers whose kernel, stride and padding read as tuples (the convolutions, the max and average pools)
WINDOWED = ops_of("conv") | frozenset(p for p in ops_with("pools")
                                      if {"kernel_size", "padding"} <= OP_TABLE[p].arg_names)
RUNNING_STATS = frozenset(name for name, spec in OP_TABLE.items() if spec.running_stats)


def _sized_by_weight(inst, weight):
    """A layer given another layer's weight computes with that weight: an Embedding(100, 32) whose
    weight is set to a (90, 32) table looks up 90 rows and torch counts 90*32 parameters, whatever
    its num_embeddings still says."""
    names = _WEIGHT_SIZES.get(inst.op)
    shape = weight.shape
    if names is None or not isinstance(inst.args, dict) or shape is None or len(shape) != 2:
        return
    if not all(is_int(d) for d in shape):
        return
    if all(inst.args.get(n) == d for n, d in zip(names, shape)):
        return
    inst.args = {**inst.args, **dict(zip(names, shape))}
    inst.cache = None


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
        _named(it, inst, name, value)
        return
    if isinstance(value, TensorVal) and value.param is not None:
        if value.param.owner is None:
            value.param.owner = inst
            value.param.name = name
        elif value.param.owner is not inst and inst.op and name in ("weight",):
            inst.attrs["__tie__"] = value.param.owner
            _sized_by_weight(inst, value)
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
    if inst.op and isinstance(inst.args, dict) and not isinstance(value, (TensorVal, Unknown)) and \
            name in (optable.arg_names(inst.op) or ()):
        _set_leaf_arg(inst, name, value)
    inst.attrs[name] = value


def _set_leaf_arg(inst, name, value):
    """`conv.stride = (1, 1)`, `conv.dilation = (2, 2)`, `conv.in_channels = 1` set on a built layer
    (a backbone made dilated, a first conv patched for other inputs): its forward computes with them,
    so the op's arguments change, and its own learned tensors take the shapes they give."""
    value = _arg_value(value)
    if inst.args.get(name) == value:
        return
    inst.args = {**inst.args, name: value}
    inst.cache = None
    for pname, shape in optable.param_shapes(inst.op, inst.args):
        p = inst.params.get(pname)
        if isinstance(p, TensorVal) and p.param is not None and p.param.owner is inst and p.param.leaf:
            p.shape = [_dimv(d) for d in shape]


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
        if it.graph is not None and getattr(it, "training", None) is not None:
            return it.training  # parsed with a mode: forward runs in it (modules are built in train mode)
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
    if name in CASTS or name in ("to", "type"):
        return fn(lambda a, k: cast_module(it, inst, name, a, k))
    if name in ("train", "eval", "cuda", "cpu", "requires_grad_", "share_memory", "to_empty"):
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
    if name in _NORM_BUFFERS and inst.op in RUNNING_STATS:
        return _norm_buffer(inst, name)
    if inst.op:
        if name in ("weight", "bias"):
            return None
    raise InterpError(f"'{inst.cls.name}' object has no attribute '{name}'")


_NORM_BUFFERS = ("running_mean", "running_var", "num_batches_tracked")


def _norm_buffer(inst, name):
    """A batch/instance norm's running statistics, as torch makes them (read by a subclass's own forward:
    timm's BatchNormAct2d); None where the layer does not track them."""
    if inst.attrs.get("track_running_stats") is not True:
        return None
    if name == "num_batches_tracked":
        return TensorVal(None, [], "int64", values=[0])
    c = inst.attrs.get("num_features")
    return TensorVal(None, [c if is_int(c) else Unknown("num_features")], "float32",
                     values=[0.0 if name == "running_mean" else 1.0] * c if is_int(c) and c <= 4096 else None)


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


# siblings, imported last: the modules of this model call one another
from .calls import builtin_forward  # noqa: E402
from .names import CONTAINER_KINDS  # noqa: E402

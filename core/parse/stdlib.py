"""The parser's model of the standard library (functools, collections, copy, itertools, operator,
dataclasses, typing, math) and of numpy's few size helpers: pure functions of known values only."""

from __future__ import annotations

import ast
import math

from .registry import handles, handles_module
from .values import (
    BuiltinFn,
    DefaultDict,
    Deque,
    InstanceVal,
    InterpError,
    NTupleClass,
    PartialVal,
    Sym,
    TensorVal,
    TextFile,
    Unknown,
    is_int,
)

_MATH_OK = frozenset(("ceil", "floor", "sqrt", "log", "log2", "log10", "log1p", "exp", "expm1", "pow", "fabs",
                      "gcd", "isclose", "isfinite", "isinf", "isnan", "prod", "trunc", "sin", "cos", "tan", "atan",
                      "atan2", "asin", "acos", "tanh", "sinh", "cosh", "erf", "erfc", "copysign", "fmod", "hypot",
                      "radians", "degrees", "modf", "frexp", "ldexp", "fsum", "isqrt", "lcm", "dist", "floor",
                      "factorial", "comb", "perm"))


@handles_module("math")
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


@handles_module("numpy", "np")
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
    shaped = numpy_shaped(name, args, kwargs)
    if shaped is not None:
        return shaped
    if name in ("prod", "sum") and len(args) == 1 and not kwargs:
        v = args[0]
        vals = v.values if isinstance(v, TensorVal) else (list(v) if isinstance(v, (list, tuple)) else [v])
        if vals is not None and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in vals):
            return math.prod(vals) if name == "prod" else sum(vals)
    if name in ("atleast_1d",) and len(args) == 1:
        v = args[0]
        if isinstance(v, TensorVal):
            return v if v.shape is None or len(v.shape) >= 1 else TensorVal(None, [1], v.dtype, values=v.values)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return make_tensor(it, [v], "int64" if isinstance(v, int) else "float64")
        if isinstance(v, (list, tuple)) and v and all(isinstance(x, (int, float)) for x in v):
            return make_tensor(it, list(v), "int64" if all(isinstance(x, int) for x in v) else "float64")
    if name in ("any", "all") and len(args) == 1 and not kwargs:
        v = args[0]
        vals = v.values if isinstance(v, TensorVal) else (list(v) if isinstance(v, (list, tuple)) else None)
        if vals is not None and all(isinstance(x, (int, float, bool)) for x in vals):
            return any(vals) if name == "any" else all(vals)
        if isinstance(v, bool):
            return v
    if name in ("sqrt", "log", "exp", "ceil", "floor", "log2", "prod", "pi", "round"):
        if args and isinstance(args[0], (int, float)):
            return call_math(it, name if name != "round" else "floor", args, {}) if name != "round" else round(
                args[0])
        if name == "prod" and args and isinstance(args[0], (list, tuple)) and all(is_int(v) for v in args[0]):
            return math.prod(args[0])
    if name in _NP_ELEMENTWISE:
        return _numpy_elementwise(it, name, args)
    if name in ("cumsum",) and args and isinstance(args[0], (list, tuple)):
        out, tot = [], 0
        for v in args[0]:
            tot += v
            out.append(tot)
        return TensorVal(None, [len(out)], "int64", values=out)
    return Unknown(f"numpy.{name}")


@handles("functools.partial")
def _partial(it, args, kwargs):
    if not args:
        raise InterpError("partial() without a function")
    return PartialVal(args[0], args[1:], kwargs)


@handles("collections.OrderedDict")
@handles("typing.OrderedDict")
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


@handles("collections.namedtuple")
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


@handles("functools.reduce")
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


@handles("torch._assert")
@handles("torch._C._log_api_usage_once")
@handles("warnings.warn")
def _noop(it, args, kwargs):
    return None


@handles("functools.wraps")
@handles("functools.lru_cache")
@handles("functools.cache")
@handles("dataclasses.dataclass")
def _identity_decorator(it, args, kwargs):
    if args and not kwargs:
        return args[0]
    return BuiltinFn("decorator", lambda a, k: a[0] if a else None)


@handles("dataclasses.field")
def _field(it, args, kwargs):
    if "default" in kwargs:
        return kwargs["default"]
    if "default_factory" in kwargs:
        return it.call(kwargs["default_factory"], [], {})
    return Unknown("field")


def _product(it, a, k):
    import itertools
    seqs = [it.iterate(s) for s in a]
    r = k.get("repeat", 1)
    out = list(itertools.islice(itertools.product(*seqs, repeat=r), 100000))
    return out


@handles("collections.defaultdict")
def _h_collections_defaultdict(it, a, k):
    factory = a[0] if a else k.get("default_factory")
    init = a[1] if len(a) > 1 and isinstance(a[1], dict) else {}
    return DefaultDict(it, factory, init)


@handles("collections.deque")
def _h_collections_deque(it, a, k):
    return Deque(it.iterate(a[0]) if a else [])


def _dataclass_fields(it, inst):
    for c in it.mro(inst.cls):
        if getattr(c, "dataclass_fields", None) is not None:
            return [name for name, _ in c.dataclass_fields]
    raise InterpError(f"{it.describe(inst)} is not a dataclass instance")


@handles("dataclasses.replace")
def _h_dataclasses_replace(it, a, k):
    """A new instance of the same dataclass with the fields given changed (no __init__ is rerun:
    the fields are what __init__ would have stored)."""
    if not a or not isinstance(a[0], InstanceVal):
        return Unknown("replace of an unknown object")
    old = a[0]
    names = _dataclass_fields(it, old)
    bad = [n for n in k if n not in names]
    if bad:
        raise InterpError(f"dataclasses.replace: no field {bad[0]}")
    new = InstanceVal(old.cls, old.kind, old.torch_base)
    new.attrs = dict(old.attrs)
    new.attrs.update(k)
    new.line, new.file = old.line, old.file
    return new


@handles("dataclasses.asdict")
def _h_dataclasses_asdict(it, a, k):
    if not a or not isinstance(a[0], InstanceVal):
        return Unknown("asdict of an unknown object")

    def conv(v, depth=0):
        if depth > 50:
            raise InterpError("asdict of a structure nested too deep")
        if isinstance(v, InstanceVal) and v.kind == "object" and _is_dataclass_instance(it, v):
            return {n: conv(v.attrs.get(n, Unknown(n)), depth + 1) for n in _dataclass_fields(it, v)}
        if type(v) is list or type(v) is tuple:
            it.charge(len(v))
            return type(v)(conv(x, depth + 1) for x in v)
        if type(v) is dict:
            it.charge(len(v))
            return {k: conv(x, depth + 1) for k, x in v.items()}
        return v
    return conv(a[0])


def _is_dataclass_instance(it, inst):
    return any(getattr(c, "dataclass_fields", None) is not None for c in it.mro(inst.cls))


@handles("copy.copy")
def _h_copy_copy(it, a, k):
    return _copy(it, a, k, False)


@handles("copy.deepcopy")
def _h_copy_deepcopy(it, a, k):
    return _copy(it, a, k, True)


@handles("typing.cast")
def _h_typing_cast(it, a, k):
    return a[1] if len(a) > 1 else None


@handles("operator.mul")
def _h_operator_mul(it, a, k):
    return it.binop(ast.Mult, a[0], a[1])


@handles("operator.add")
def _h_operator_add(it, a, k):
    return it.binop(ast.Add, a[0], a[1])


@handles("itertools.chain")
def _h_itertools_chain(it, a, k):
    return [x for s in a for x in it.iterate(s)]


@handles("itertools.repeat")
def _h_itertools_repeat(it, a, k):
    return [a[0]] * a[1] if len(a) > 1 and is_int(a[1]) else Unknown('repeat')


@handles("itertools.product")
def _h_itertools_product(it, a, k):
    return _product(it, a, k)


# numpy's elementwise math used on sizes and on constant tables (`int(image_size / np.power(2, n))`,
# a sinusoid table built from np.power / np.sin): numbers give numbers, a constant array keeps its shape
_NP_ELEMENTWISE = {"power": 2, "float_power": 2, "maximum": 2, "minimum": 2, "sin": 1, "cos": 1, "tan": 1,
                   "tanh": 1, "abs": 1, "absolute": 1, "square": 1, "log10": 1, "log1p": 1, "expm1": 1}


def _numpy_elementwise(it, name, args):
    nargs = _NP_ELEMENTWISE[name]
    if len(args) != nargs:
        return Unknown(f"numpy.{name}")
    if all(isinstance(a, (int, float)) and not isinstance(a, bool) for a in args):
        if name in ("power", "float_power"):
            b, e = args
            if abs(e) > 64 or (isinstance(b, int) and abs(b) > 10000 and e > 4):
                return Unknown(f"numpy.{name} of a huge number")
            if name == "power" and isinstance(b, int) and isinstance(e, int):
                return b ** e if e >= 0 else Unknown("numpy.power: integers to negative integer powers")
            try:
                return float(b) ** e
            except (OverflowError, ZeroDivisionError) as exc:
                raise InterpError(f"numpy.{name}: {exc}") from None
        if name in ("maximum", "minimum"):
            return max(args) if name == "maximum" else min(args)
        if name in ("abs", "absolute"):
            return abs(args[0])
        if name == "square":
            return args[0] * args[0]
        return call_math(it, name, list(args), {})
    consts = [a for a in args if isinstance(a, TensorVal)]
    if consts and all(t.is_const for t in consts) and all(
            isinstance(a, (int, float, TensorVal)) for a in args):
        shape = consts[0].shape if len(consts) == 1 or all(t.shape == consts[0].shape for t in consts) else None
        return TensorVal(None, shape, "float64" if name not in ("maximum", "minimum", "abs", "absolute")
                         else consts[0].dtype)
    return Unknown(f"numpy.{name}")


# ---- the environment: read as empty (the design is the model as built with no variable set;
# this process's own environment is never consulted)
@handles("os.environ.get")
@handles("os.getenv")
def _h_os_getenv(it, a, k):
    name = a[0] if a else k.get("key")
    default = a[1] if len(a) > 1 else k.get("default")
    it.warn(f"environment variable {name!r} read as unset" if isinstance(name, str)
            else "an environment variable read as unset")
    return default


# ---- re: patterns that cannot backtrack exponentially, on short strings
_RE_MAX_PATTERN = 200
_RE_MAX_TEXT = 256
_RE_MAX_REPEATS = 3


def _re_safe(pattern):
    """A compiled pattern when matching it is bounded (no quantifier inside a quantifier, no
    alternation under one, no backreference or lookaround, at most a few quantifiers); else None."""
    import re
    try:
        from re import _parser as sre_parse
    except ImportError:  # Python < 3.11
        import sre_parse
    if not isinstance(pattern, str) or len(pattern) > _RE_MAX_PATTERN:
        return None
    try:
        tree = sre_parse.parse(pattern)
    except (re.error, RecursionError, OverflowError):
        return None
    repeats = 0

    def walk(items, in_repeat):
        nonlocal repeats
        for op, av in items:
            name = str(op)
            if name in ("GROUPREF", "GROUPREF_EXISTS", "ASSERT", "ASSERT_NOT", "ATOMIC_GROUP"):
                return False
            if name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
                repeats += 1
                if in_repeat or repeats > _RE_MAX_REPEATS or not walk(av[2], True):
                    return False
            elif name == "SUBPATTERN":
                if not walk(av[-1], in_repeat):
                    return False
            elif name == "BRANCH":
                if in_repeat or not all(walk(b, in_repeat) for b in av[1]):
                    return False
        return True

    if not walk(tree, False):
        return None
    return re.compile(pattern)


def _re_args(name, a, k, n_text=1):
    pattern, texts = a[0] if a else k.get("pattern"), list(a[1:1 + n_text])
    rx = _re_safe(pattern)
    if rx is None:
        raise InterpError(f"re.{name} with pattern {pattern!r} not followed (unknown, or it could backtrack)")
    if len(texts) < n_text or not all(isinstance(t, str) for t in texts):
        raise InterpError(f"re.{name} on a string not known when reading the source")
    if any(len(t) > _RE_MAX_TEXT for t in texts):
        raise InterpError(f"re.{name} on a string of more than {_RE_MAX_TEXT} characters not followed")
    extra = [x for x in list(a[1 + n_text:]) + list(k.values()) if not isinstance(x, (int, str))]
    if extra or k.get("flags") or (len(a) > 1 + n_text and name in ("findall",)):
        raise InterpError(f"re.{name} with flags not followed")
    return rx, texts


@handles("re.split")
def _h_re_split(it, a, k):
    rx, (text,) = _re_args("split", a, {kk: v for kk, v in k.items() if kk != "maxsplit"})
    return rx.split(text, maxsplit=int(k.get("maxsplit", a[2] if len(a) > 2 else 0)))


@handles("re.findall")
def _h_re_findall(it, a, k):
    rx, (text,) = _re_args("findall", a, k)
    return rx.findall(text)


@handles("re.sub")
def _h_re_sub(it, a, k):
    """re.sub with a string replacement (not a function)."""
    if len(a) < 3 or not isinstance(a[1], str):
        raise InterpError("re.sub with a replacement not known when reading the source")
    rx, (text,) = _re_args("sub", [a[0], a[2]], {})
    return rx.sub(a[1], text, count=int(k.get("count", a[3] if len(a) > 3 else 0)))


@handles("re.escape")
def _h_re_escape(it, a, k):
    if not a or not isinstance(a[0], str) or len(a[0]) > _RE_MAX_TEXT:
        raise InterpError("re.escape of a string not known when reading the source")
    import re
    return re.escape(a[0])


# siblings, imported last: the modules of this model call one another
from .torch.constants import _arange, _linspace, make_tensor  # noqa: E402
from .torch.dispatch import _arg  # noqa: E402
from .torch.modules import clone_module  # noqa: E402


def _param_names(it, fn):
    """The parameter names `inspect.signature(fn)` lists, or None when the parser cannot read them."""
    from .values import BoundMethod, ClassVal, FuncVal, TorchClass
    if isinstance(fn, BoundMethod):
        names = _param_names(it, fn.func)
        return names[1:] if names else names
    if isinstance(fn, FuncVal):
        a = fn.node.args
        names = [x.arg for x in a.posonlyargs + a.args]
        names += [a.vararg.arg] if a.vararg else []
        names += [x.arg for x in a.kwonlyargs] + ([a.kwarg.arg] if a.kwarg else [])
        return names
    if isinstance(fn, ClassVal):
        init, _ = it.class_attr(fn, "__init__")
        if isinstance(init, FuncVal):
            return _param_names(it, init)[1:]
        owner = it.torch_base(fn)
        return _param_names(it, TorchClass(owner)) if owner is not None else None
    if isinstance(fn, TorchClass):
        from ..ops.nn_classes import constructor_args
        args = constructor_args(fn.name)
        return None if args is None else [x.name for x in args] + ["device", "dtype"]
    return None


@handles("inspect.signature")
def inspect_signature(it, args, kwargs):
    """`inspect.signature(f).parameters`: the names f takes (`has_option(Norm[...], "num_features")`)."""
    from .values import TorchClass
    names = _param_names(it, args[0]) if args else None
    if names is None:
        return Unknown("signature")
    sig = InstanceVal(TorchClass("Signature"), "object")
    sig.attrs["parameters"] = {n: Unknown(f"parameter {n}") for n in names}
    return sig


@handles("inspect.currentframe")
def inspect_currentframe(it, args, kwargs):
    """The frame of the function being followed, as `inspect.currentframe()` gives it, with `f_back` (its
    caller's) and `f_locals`: d2l's `save_hyperparameters` reads its caller's arguments off
    `inspect.getargvalues(inspect.currentframe().f_back)`."""
    from .values import TorchClass
    below = None
    for fr in it.calls[-4:]:  # the innermost few: a frame's f_back chain, made before any is read
        f = InstanceVal(TorchClass("frame"), "object")
        f.attrs.update(f_back=below, f_locals=dict(fr.vars), __frame__=fr)
        below = f
    return below


@handles("inspect.getargvalues")
def inspect_getargvalues(it, args, kwargs):
    """`ArgInfo(args, varargs, keywords, locals)` of a frame inspect.currentframe gave."""
    fr = args[0].attrs.get("__frame__") if args and isinstance(args[0], InstanceVal) else None
    if fr is None or fr.func is None:
        return Unknown("inspect.getargvalues of a frame not known")
    a = fr.func.node.args
    names = [x.arg for x in a.posonlyargs + a.args + a.kwonlyargs]
    return (names, a.vararg.arg if a.vararg else None, a.kwarg.arg if a.kwarg else None, dict(fr.vars))


# ---- numpy / scipy arrays made in a constructor (weights initialised from a QR or an LU
# decomposition, a random projection): their values are never computed, their shapes are all a
# design needs.  An array is a constant TensorVal (float64 unless said), as np.arange's is.
def _np_shape(v):
    if is_int(v):
        return [v]
    if isinstance(v, (list, tuple)) and all(is_int(x) for x in v):
        return list(v)
    if v is None:
        return []
    return None


def _np_array(shape, dtype="float64"):
    return TensorVal(None, shape, dtype) if shape is not None else Unknown("numpy array of unknown shape")


_NP_SIZED = {"zeros": "float64", "ones": "float64", "empty": "float64", "full": "float64"}
_NP_RANDOM_SIZE_KW = {"random": 0, "random_sample": 0, "rand": None, "randn": None, "standard_normal": 0,
                      "normal": 2, "uniform": 2, "randint": 2, "choice": 1, "laplace": 2, "exponential": 1,
                      "beta": 2, "gamma": 2, "binomial": 2, "poisson": 1}


def numpy_shaped(name, args, kwargs):
    """The array numpy's creation function `name` returns, by shape; None when `name` is no such function."""
    if name in _NP_SIZED:
        shape = _np_shape(args[0] if args else kwargs.get("shape"))
        return _np_array(shape, _np_dtype(kwargs.get("dtype"), "float64"))
    if name in ("zeros_like", "ones_like", "empty_like", "full_like") and args and isinstance(args[0], TensorVal):
        return _np_array(args[0].shape, _np_dtype(kwargs.get("dtype"), args[0].dtype))
    if name in ("eye", "identity"):
        n = args[0] if args else kwargs.get("N")
        m = args[1] if len(args) > 1 and name == "eye" else kwargs.get("M", n)
        return _np_array([n, m] if is_int(n) and is_int(m) else None, _np_dtype(kwargs.get("dtype"), "float64"))
    return None


def _np_dtype(d, default):
    from .values import ExtVal
    if isinstance(d, str):
        return d[6:] if d.startswith("dtype:") else d
    if isinstance(d, ExtVal):
        last = d.path.rsplit(".", 1)[-1]
        return {"float_": "float64", "int_": "int64", "bool_": "bool"}.get(last, last)
    if d is float:
        return "float64"
    if d is int:
        return "int64"
    return default


@handles_module("numpy.random", "np.random")
def call_numpy_random(it, name, args, kwargs):
    if name in ("seed", "set_state", "shuffle"):
        return None
    pos = _NP_RANDOM_SIZE_KW.get(name, -1)
    if pos == -1:
        return Unknown(f"numpy.random.{name}")
    if pos is None:  # rand(d0, d1, ...)
        shape = list(args) if all(is_int(a) for a in args) else None
    else:
        size = kwargs.get("size", args[pos] if len(args) > pos else None)
        shape = _np_shape(size)
    return _np_array(shape, "int64" if name in ("randint", "binomial", "poisson") else "float64")


def _matrix(a):
    if isinstance(a, TensorVal) and a.shape is not None and len(a.shape) == 2 and all(is_int(d) for d in a.shape):
        return a.shape
    return None


def _decompose(lib, name, args, kwargs):
    """Shapes of a linear-algebra routine of numpy.linalg or scipy.linalg on a known 2-D array."""
    a = args[0] if args else kwargs.get("a")
    mn = _matrix(a)
    if mn is None:
        return Unknown(f"{lib}.{name} of an array not known")
    m, n = mn
    k = min(m, n)
    dt = a.dtype if a.dtype.startswith("float") else "float64"
    if name == "qr":
        mode = kwargs.get("mode", args[1] if len(args) > 1 else ("full" if lib == "scipy.linalg" else "reduced"))
        if mode in ("r",):
            return _np_array([k, n] if lib == "numpy.linalg" else [m, n], dt)
        if mode in ("full", "complete"):
            return (_np_array([m, m], dt), _np_array([m, n], dt))
        return (_np_array([m, k], dt), _np_array([k, n], dt))
    if name == "lu" and lib == "scipy.linalg":
        return (_np_array([m, m], dt), _np_array([m, k], dt), _np_array([k, n], dt))
    if name == "svd":
        full = kwargs.get("full_matrices", args[1] if len(args) > 1 else True)
        if full is False:
            return (_np_array([m, k], dt), _np_array([k], dt), _np_array([k, n], dt))
        return (_np_array([m, m], dt), _np_array([k], dt), _np_array([n, n], dt))
    if name in ("eigh", "eig") and m == n:
        return (_np_array([n], dt), _np_array([n, n], dt))
    if name in ("eigvalsh", "eigvals") and m == n:
        return _np_array([n], dt)
    if name in ("inv", "pinv", "cholesky", "expm", "sqrtm", "logm", "orth") and (m == n or name in ("pinv", "orth")):
        if name == "pinv":
            return _np_array([n, m], dt)
        if name == "orth":
            return Unknown(f"{lib}.orth: rank not known")
        return _np_array([m, n], dt)
    if name in ("det", "norm", "slogdet", "matrix_rank", "cond"):
        return Unknown(f"{lib}.{name}: a value, not a shape")
    return Unknown(f"{lib}.{name}")


@handles_module("numpy.linalg", "np.linalg")
def call_numpy_linalg(it, name, args, kwargs):
    return _decompose("numpy.linalg", name, args, kwargs)


@handles_module("scipy.linalg")
def call_scipy_linalg(it, name, args, kwargs):
    return _decompose("scipy.linalg", name, args, kwargs)


# ---- text files of the package read, never executed: a model description beside the source
# (`open(os.path.join(os.path.dirname(__file__), "arch.json"))`, then json / yaml).  Only a file
# inside the package root of the module that opens it, for reading, of at most MAX_TEXT bytes.
MAX_TEXT = 1 << 20
_OS_PATH_PURE = ("join", "dirname", "basename", "splitext", "split", "normpath", "isabs", "sep")


def _inside(path, root):
    import os
    real, top = os.path.realpath(path), os.path.realpath(root)
    return real == top or real.startswith(top.rstrip(os.sep) + os.sep)


def _caller_root(it):
    """The folder of the top-level package of the module running (a lone file: its own folder); for an
    installed package that is its folder in site-packages, never site-packages itself."""
    import os
    mod = it.loc[0]
    if mod is None:
        return None
    here = os.path.dirname(os.path.abspath(mod.path))
    root = it.loader.package_root(mod.path)
    if root == here:
        return here
    rel = os.path.relpath(here, root).split(os.sep)
    return os.path.join(root, rel[0])


@handles_module("os.path")
def call_os_path(it, name, args, kwargs):
    import os.path as osp
    if any(not isinstance(a, str) for a in args) or kwargs:
        return Unknown(f"os.path.{name} of a value not known")
    if name in _OS_PATH_PURE and name != "sep":
        try:
            return getattr(osp, name)(*args)
        except (TypeError, ValueError) as e:
            raise InterpError(f"os.path.{name}: {e}") from None
    if name in ("abspath", "realpath") and len(args) == 1 and osp.isabs(args[0]):
        return osp.normpath(args[0])
    if name in ("exists", "isfile", "isdir") and len(args) == 1 and osp.isabs(args[0]):
        root = _caller_root(it)
        if root is not None and _inside(args[0], root):
            return getattr(osp, name)(args[0])
    return Unknown(f"os.path.{name}")


def open_text(it, args, kwargs):
    """The builtin `open`, for reading a text file of the package; anything else is unknown (warned)."""
    import os
    path = args[0] if args else kwargs.get("file")
    mode = args[1] if len(args) > 1 else kwargs.get("mode", "r")
    if not isinstance(path, str) or not isinstance(mode, str):
        raise InterpError("open() of a file not known when reading the source")
    if set(mode) - set("rt"):
        raise InterpError(f"open({path!r}, {mode!r}) not followed: only text files are read")
    root = _caller_root(it)
    if not os.path.isabs(path) or root is None or not _inside(path, root):
        raise InterpError(f"open({path!r}) not followed: only files inside the package are read")
    try:
        if os.path.getsize(path) > MAX_TEXT:
            raise InterpError(f"open({path!r}): file larger than {MAX_TEXT} bytes not read")
        with open(path, encoding=kwargs.get("encoding") or "utf-8") as f:
            text = f.read(MAX_TEXT + 1)
    except (OSError, UnicodeDecodeError, LookupError) as e:
        raise InterpError(f"open({path!r}): {type(e).__name__} {e}") from None
    return TextFile(path, text)


def _text_of(v, what):
    if isinstance(v, TextFile):
        return v.text
    if isinstance(v, str):
        return v
    raise InterpError(f"{what} of a value not known when reading the source")


@handles("json.load", "json.loads")
def json_load(it, args, kwargs):
    import json
    text = _text_of(args[0] if args else kwargs.get("fp", kwargs.get("s")), "json.load")
    it.check_size(len(text))
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as e:
        raise InterpError(f"json.load: {e}") from None


@handles("yaml.safe_load", "yaml.load", "yaml.full_load")
def yaml_load(it, args, kwargs):
    """YAML read with PyYAML's safe loader where this Python has it (data only, no tags run)."""
    text = _text_of(args[0] if args else kwargs.get("stream"), "yaml.load")
    try:
        import yaml
    except ImportError:
        return Unknown("yaml (PyYAML is not installed here)")
    it.check_size(len(text))
    try:
        return yaml.safe_load(text)
    except (yaml.YAMLError, RecursionError) as e:
        raise InterpError(f"yaml.load: {e}") from None


def import_by_name(it, name, top=False):
    """`__import__(name)` / `importlib.import_module(name)`: the module an import statement naming it
    would give (read from source, or the model of torch, numpy, einops ...), never Python's import."""
    from . import torch as torchlib
    if not isinstance(name, str) or not all(p.isidentifier() for p in name.split(".")):
        raise InterpError("import of a module whose name is not known when reading the source")
    mod = it.loc[0]
    parts = name.split(".")
    want = parts[:1] if top else parts
    f = it.loader.resolve(mod.path, ".".join(want), 0) if mod is not None else None
    if f:
        return it._safe_load(f)
    if it.loader.resolve(mod.path, parts[0], 0) if mod is not None else None:
        raise InterpError(f"module {name} not found")
    return torchlib.ext(".".join(want))


@handles("importlib.import_module")
def _import_module(it, args, kwargs):
    name = args[0] if args else kwargs.get("name")
    if isinstance(name, str) and name.startswith("."):
        raise InterpError("relative importlib.import_module not followed")
    return import_by_name(it, name)

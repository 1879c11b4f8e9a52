"""Python builtins as the interpreter sees them.

Only pure functions over known values are provided; ``open``, ``exec``,
``eval``, ``__import__``, ``compile``, ``globals`` … are simply not there.
"""

from __future__ import annotations

from .values import (
    BoundMethod,
    BuiltinFn,
    ClassVal,
    ExcClass,
    ExtVal,
    FuncVal,
    InstanceVal,
    InterpError,
    NTuple,
    PartialVal,
    SuperVal,
    Sym,
    TensorVal,
    TorchClass,
    Unknown,
    is_int,
)

_EXC = ["Exception", "ValueError", "TypeError", "RuntimeError", "NotImplementedError", "KeyError", "IndexError",
        "AssertionError", "AttributeError", "ImportError", "ModuleNotFoundError", "ZeroDivisionError",
        "StopIteration", "Warning", "UserWarning", "DeprecationWarning", "FutureWarning", "OSError",
        "ArithmeticError", "LookupError", "BaseException"]


def make_builtins(it):
    def plain(v):
        from .interp import _is_plain
        return _is_plain(v)

    def b_len(a, k):
        v = a[0]
        if isinstance(v, (list, tuple, str, dict, set, frozenset, range)):
            return len(v)
        if isinstance(v, InstanceVal):
            if v.kind == "module" and v.torch_base in ("Sequential", "ModuleList", "ModuleDict"):
                return len(v.modules)
            f, _ = it.class_attr(v.cls, "__len__")
            if isinstance(f, FuncVal):
                return it.call_func(f, [v], {})
        if isinstance(v, TensorVal):
            if v.shape:
                d = v.shape[0]
                return d if is_int(d) else (d if isinstance(d, Sym) else Unknown("len"))
            return Unknown("len of tensor")
        if isinstance(v, Unknown):
            return v
        raise InterpError(f"len() of {it.describe(v)}")

    def b_range(a, k):
        if any(isinstance(x, (Unknown, Sym)) for x in a):
            return Unknown("range of unknown size")
        try:
            return range(*[int(x) if isinstance(x, bool) else x for x in a])
        except TypeError as e:
            raise InterpError(f"range: {e}") from None

    def b_minmax(fn):
        def f(a, k):
            vals = list(it.iterate(a[0])) if len(a) == 1 else list(a)
            if "default" in k and not vals:
                return k["default"]
            key = k.get("key")
            if key is not None:
                keys = [it.call(key, [x], {}) for x in vals]
                if not plain(keys):
                    return Unknown("min/max key")
                i = (keys.index(fn(keys)))
                return vals[i]
            if any(isinstance(x, Unknown) for x in vals):
                return Unknown("min/max of unknown")
            if any(isinstance(x, Sym) for x in vals):
                # decidable only when all differences are integers
                from .values import dim_add
                best = vals[0]
                for x in vals[1:]:
                    d = dim_add(x, best, -1)
                    if not is_int(d):
                        return Unknown("min/max of sizes")
                    if (fn is max and d > 0) or (fn is min and d < 0):
                        best = x
                return best
            if not plain(vals):
                raise InterpError("min/max of non-numbers")
            try:
                return fn(vals)
            except (TypeError, ValueError) as e:
                raise InterpError(f"{fn.__name__}: {e}") from None
        return f

    def b_sum(a, k):
        vals = it.iterate(a[0])
        total = a[1] if len(a) > 1 else k.get("start", 0)
        import ast as _ast
        for v in vals:
            total = it.binop(_ast.Add, total, v)
        return total

    def b_abs(a, k):
        v = a[0]
        if isinstance(v, (int, float)):
            return abs(v)
        if isinstance(v, TensorVal):
            from . import torch as torchlib
            return torchlib.call_ext(it, "torch.abs", [v], {})
        return Unknown("abs")

    def b_round(a, k):
        v = a[0]
        nd = a[1] if len(a) > 1 else k.get("ndigits")
        if isinstance(v, (int, float)) and (nd is None or isinstance(nd, int)):
            return round(v, nd) if nd is not None else round(v)
        return Unknown("round")

    def b_zip(a, k):
        seqs = [it.iterate(x) for x in a]
        return [tuple(t) for t in zip(*seqs)]

    def b_enumerate(a, k):
        start = a[1] if len(a) > 1 else k.get("start", 0)
        return [(i + start, x) for i, x in enumerate(it.iterate(a[0]))]

    def b_reversed(a, k):
        return list(reversed(it.iterate(a[0])))

    def b_sorted(a, k):
        vals = list(it.iterate(a[0]))
        key = k.get("key")
        rev = bool(k.get("reverse", False))
        keys = [it.call(key, [x], {}) for x in vals] if key is not None else vals
        if not plain(keys):
            return Unknown("sorted of unknown")
        order = sorted(range(len(vals)), key=lambda i: keys[i], reverse=rev)
        return [vals[i] for i in order]

    def b_anyall(fn):
        def f(a, k):
            vals = it.iterate(a[0])
            unknown = False
            for v in vals:
                t = it.truth(v)
                if t is None:
                    unknown = True
                elif fn is any and t:
                    return True
                elif fn is all and not t:
                    return False
            if unknown:
                return Unknown("any/all of unknown")
            return fn is all
        return f

    def b_map(a, k):
        f = a[0]
        seqs = [it.iterate(x) for x in a[1:]]
        return [it.call(f, list(t), {}) for t in zip(*seqs)]

    def b_filter(a, k):
        f = a[0]
        out = []
        for x in it.iterate(a[1]):
            t = it.truth(x if f is None else it.call(f, [x], {}))
            if t is None:
                raise InterpError("filter on unknown values")
            if t:
                out.append(x)
        return out

    def b_isinstance(a, k):
        return isinstance_(it, a[0], a[1])

    def b_issubclass(a, k):
        c, target = a[0], a[1]
        if isinstance(c, (ClassVal, TorchClass)):
            targets = target if isinstance(target, tuple) else (target,)
            mro = it.mro(c)
            return any(t in mro or (isinstance(t, ExtVal) and t.path == "torch.nn.Module" and
                                    it.torch_base(c) is not None) for t in targets)
        return Unknown("issubclass")

    def b_hasattr(a, k):
        obj, name = a[0], a[1]
        if isinstance(obj, Unknown) or not isinstance(name, str):
            return Unknown("hasattr")
        if isinstance(obj, InstanceVal):
            if name in obj.attrs or name in obj.modules or name in obj.params or name in obj.buffers:
                return True
            v, owner = it.class_attr(obj.cls, name)
            if v is not _missing():
                return True
            if obj.kind == "module" and obj.op is not None:
                from .torch.optable import full_args
                return name in full_args(obj.op, obj.args) or name in ("weight", "bias")
            return False
        try:
            it.getattr(obj, name)
            return True
        except InterpError:
            return False

    def b_getattr(a, k):
        obj, name = a[0], a[1]
        if not isinstance(name, str):
            return Unknown("getattr with unknown name")
        try:
            return it.getattr(obj, name)
        except InterpError:
            if len(a) > 2:
                return a[2]
            raise

    def b_setattr(a, k):
        it.setattr(a[0], a[1], a[2])
        return None

    def b_print(a, k):
        return None

    def b_super(a, k):
        if len(a) == 2:
            return SuperVal(a[0], a[1])
        raise InterpError("super() form not followed")

    def b_divmod(a, k):
        x, y = a
        if isinstance(x, (int, float)) and isinstance(y, (int, float)) and y:
            return divmod(x, y)
        return Unknown("divmod")

    def b_pow(a, k):
        import ast as _ast
        return it.binop(_ast.Pow, a[0], a[1])

    def b_type(a, k):
        v = a[0]
        if isinstance(v, InstanceVal):
            return v.cls
        if isinstance(v, (int, float, str, bool, list, tuple, dict, set, type(None))):
            return type(v)
        if isinstance(v, TensorVal):
            return ExtVal("torch.Tensor")
        return Unknown("type")

    def b_callable(a, k):
        v = a[0]
        return isinstance(v, (FuncVal, BoundMethod, PartialVal, BuiltinFn, ClassVal, TorchClass, ExtVal)) or (
            isinstance(v, InstanceVal) and v.kind == "module")

    def b_iter(a, k):
        return list(it.iterate(a[0]))

    def b_next(a, k):
        v = a[0]
        if isinstance(v, list) and v:
            return v.pop(0)
        if len(a) > 1:
            return a[1]
        return Unknown("next")

    def b_repr(a, k):
        v = a[0]
        return repr(v) if plain(v) else Unknown("repr")

    def b_id(a, k):
        return Unknown("id")

    def convert(typ, a, k):
        if not a:
            return dict(k) if typ is dict else typ()
        v = a[0]
        if isinstance(v, Unknown):
            return v
        if typ in (bytes, bytearray, complex):  # a type to test against, never a value a model is built from
            return Unknown(typ.__name__)
        if typ in (list, tuple, set, frozenset):
            if isinstance(v, TensorVal):
                from . import torch as torchlib
                return typ(torchlib.tensor_iter(it, v))
            return typ(it.iterate(v))
        if typ is dict:
            if isinstance(v, dict):
                out = dict(v)
            else:
                out = {}
                for pair in it.iterate(v):
                    kk, vv = pair
                    out[kk] = vv
            out.update(k)
            return out
        if isinstance(v, Sym):
            if typ in (int, float):
                return v
            return Unknown("size")
        if isinstance(v, TensorVal):
            if v.values is not None and len(v.values) == 1:
                return typ(v.values[0])
            return Unknown("value of a tensor")
        if typ is str:
            return str(v) if plain(v) else it.describe(v)
        if typ is bool:
            t = it.truth(v)
            return Unknown("bool") if t is None else t
        if typ is object or typ is slice or typ is type:
            if typ is slice:
                return slice(*a)
            return Unknown(typ.__name__)
        try:
            if typ is int and isinstance(v, str) and len(v) > 100:
                raise InterpError("int() of long string")
            return typ(*a)
        except (TypeError, ValueError, OverflowError) as e:
            raise InterpError(f"{typ.__name__}(): {e}") from None

    B = {
        "len": b_len, "range": b_range, "min": b_minmax(min), "max": b_minmax(max), "sum": b_sum,
        "abs": b_abs, "round": b_round, "zip": b_zip, "enumerate": b_enumerate, "reversed": b_reversed,
        "sorted": b_sorted, "any": b_anyall(any), "all": b_anyall(all), "map": b_map, "filter": b_filter,
        "isinstance": b_isinstance, "issubclass": b_issubclass, "hasattr": b_hasattr, "getattr": b_getattr,
        "setattr": b_setattr, "print": b_print, "super": b_super, "divmod": b_divmod, "pow": b_pow,
        "type": b_type, "callable": b_callable, "iter": b_iter, "next": b_next, "repr": b_repr, "id": b_id,
    }
    from .stdlib import import_by_name, open_text
    B["open"] = lambda a, k: open_text(it, a, k)
    B["__import__"] = lambda a, k: import_by_name(it, a[0] if a else k.get("name"), top=True)
    out = {name: BuiltinFn(name, f) for name, f in B.items()}
    for t in (int, float, str, bool, list, tuple, dict, set, frozenset, object, slice, bytes, bytearray, complex):
        out[t.__name__] = t
    for e in _EXC:
        out[e] = ExcClass(e)
    out["None"] = None
    out["True"] = True
    out["False"] = False
    out["NotImplemented"] = Unknown("NotImplemented")
    out["Ellipsis"] = Ellipsis
    out["__convert__"] = convert
    out["__name__"] = "__main__"
    return out


def _missing():
    from .source import _MISSING
    return _MISSING


_LIBRARY_TYPES = frozenset({"numpy", "scipy", "pandas", "PIL", "enum", "torch"})
_PLAIN_TYPES = (int, float, str, bool, type(None), list, tuple, dict, set, frozenset)


def isinstance_(it, v, target):
    if type(target) is TorchClass and type(v) is InstanceVal and type(v.cls) is TorchClass:
        tn = target.name
        return v.op == tn or v.torch_base == tn or tn == "Module"
    if isinstance(target, tuple):
        res = [isinstance_(it, v, t) for t in target]
        if any(r is True for r in res):
            return True
        if any(isinstance(r, Unknown) for r in res):
            return Unknown("isinstance")
        return False
    if isinstance(v, Unknown):
        return Unknown("isinstance of unknown")
    if isinstance(target, type):
        if isinstance(v, NTuple) and target is tuple:
            return True
        if target is object:
            return True
        if isinstance(v, (InstanceVal, TensorVal, FuncVal, ClassVal, TorchClass, ExtVal, Sym)):
            if isinstance(v, Sym) and target in (int,):
                return True
            return False
        return isinstance(v, target)
    if isinstance(target, ExtVal):
        p = target.path
        if p in ("torch.Tensor", "torch.nn.Parameter", "torch.nn.parameter.Parameter"):
            if isinstance(v, TensorVal):
                return True if p == "torch.Tensor" else v.param is not None
            return False
        if p in ("collections.abc.Sequence", "typing.Sequence", "collections.abc.Iterable", "typing.List",
                 "typing.Iterable"):
            return isinstance(v, (list, tuple))
        if p in ("collections.abc.Mapping", "typing.Dict", "typing.Mapping"):
            return isinstance(v, dict)
        if p in ("collections.OrderedDict",):
            return isinstance(v, dict)
        if p in ("numbers.Number", "numbers.Real"):
            return isinstance(v, (int, float)) and not isinstance(v, bool)
        if p in ("functools.partial",):
            return isinstance(v, PartialVal)
        if p == "torch.nn.Module":
            return isinstance(v, InstanceVal) and v.kind == "module"
        if p in ("types.FunctionType", "types.LambdaType", "types.MethodType", "types.BuiltinFunctionType"):
            return isinstance(v, (FuncVal, BoundMethod))
        if p in ("typing.Callable", "collections.abc.Callable"):  # timm's `isinstance(group_size, Callable)`
            if isinstance(v, (int, float, str, bool, list, tuple, dict, type(None), TensorVal, Sym)):
                return False
            return it.builtins["callable"].impl([v], {})
        if p in ("enum.EnumMeta", "enum.EnumType"):
            return isinstance(v, ClassVal) and it._is_enum(v)
        if p in ("collections.abc.Collection", "typing.Collection", "collections.abc.Sized",
                 "collections.abc.Container"):
            return isinstance(v, (list, tuple, dict, set, frozenset, str, range))
        if p in ("collections.abc.Hashable", "typing.Hashable"):
            if isinstance(v, (list, dict, set)):
                return False
            if isinstance(v, (int, float, str, bool, tuple, frozenset, type(None), ClassVal, FuncVal)):
                return True
        if p.split(".")[0] in _LIBRARY_TYPES and isinstance(v, _PLAIN_TYPES + (TensorVal, Sym)) and \
                p not in ("torch.Size", "torch.SymInt"):
            return False  # a numpy array, an enum's metaclass ... is never a plain Python value or a tensor
        return Unknown("isinstance of external class")
    if type(target) is TorchClass:
        if type(v) is not InstanceVal:
            return False
        tn = target.name
        if tn == "Module":
            return v.kind == "module"
        if v.op == tn or v.torch_base == tn:
            return True
        if type(v.cls) is ClassVal:
            return target in it.mro(v.cls)
        return False
    if isinstance(target, ClassVal):
        if isinstance(v, InstanceVal):
            return target in it.mro(v.cls)
        if isinstance(v, NTuple):
            return v._ntclass.name == target.name
        return False
    return Unknown("isinstance")

"""Abstract values of the static interpreter.

Plain Python data (int, float, str, bool, None, tuple, list, dict, set) stands
for itself.  Everything else the interpreter meets is one of these classes;
none of them wraps a live object of the user's code.
"""

from __future__ import annotations

from .. import dims as D


class Unknown:
    """A value the interpreter cannot know (its reason is kept for messages)."""

    __slots__ = ("why",)

    def __init__(self, why: str = ""):
        self.why = why

    def __repr__(self):
        return f"<unknown {self.why}>" if self.why else "<unknown>"


UNKNOWN = Unknown()


class InterpError(Exception):
    """Something the interpreter cannot follow: becomes a warning at file:line."""


class TooCostly(Exception):
    """The source asks for more time, memory or work than the parser's budget: the parse stops
    (never caught by the interpreted code's own ``try``)."""

    def __init__(self, what: str):
        super().__init__(what)
        self.what = what
        self.where = None  # file:line of the innermost statement it stopped in


class UserRaise(Exception):
    """The interpreted code executes a ``raise``."""

    def __init__(self, exc_name, message, where):
        super().__init__(message)
        self.exc_name = exc_name
        self.message = message
        self.where = where


class ReturnSignal(Exception):
    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


class BreakSignal(Exception):
    pass


class ContinueSignal(Exception):
    pass


class ParamInfo:
    """Identity of a learned tensor: the module that owns it and its name."""

    __slots__ = ("owner", "name", "qname", "leaf")

    def __init__(self, owner=None, name=None, leaf=False):
        self.owner = owner
        self.name = name
        self.qname = None
        self.leaf = leaf  # the weight/bias of a torch.nn leaf module


class TensorVal:
    """A tensor: in the graph (ref is a node reference) or constant (ref None)."""

    __slots__ = ("ref", "shape", "dtype", "values", "param", "pending", "origin")

    def __init__(self, ref=None, shape=None, dtype="float32", values=None, param=None):
        self.ref = ref
        self.shape = shape
        self.dtype = dtype
        self.values = values  # flat list for small constant tensors
        self.param = param
        self.pending = False  # input whose shape is inferred from its first consumer
        self.origin = None  # source line of a constant tensor

    def __repr__(self):
        return f"<tensor {self.ref} {self.shape}>"

    @property
    def is_const(self):
        # origin ("weight_t", w): a layer's weight read transposed, put in the graph when first used
        return self.ref is None and self.param is None and self.transposed_weight is None

    @property
    def transposed_weight(self):
        """The layer weight this value is the transpose of, while it is not yet in the graph, or None."""
        o = self.origin
        return o[1] if type(o) is tuple and len(o) == 2 and o[0] == "weight_t" else None


class FuncVal:
    __slots__ = ("node", "closure", "module", "name", "defaults", "kwdefaults", "kind", "owner_class",
                 "is_lambda")

    def __init__(self, node, closure, module, name, defaults, kwdefaults, kind="function", is_lambda=False):
        self.node = node
        self.closure = closure
        self.module = module
        self.name = name
        self.defaults = defaults
        self.kwdefaults = kwdefaults
        self.kind = kind  # function | staticmethod | classmethod | property
        self.owner_class = None
        self.is_lambda = is_lambda

    def __repr__(self):
        return f"<function {self.name}>"


class BoundMethod:
    __slots__ = ("func", "obj")

    def __init__(self, func, obj):
        self.func = func
        self.obj = obj


class PartialVal:
    __slots__ = ("func", "args", "kwargs")

    def __init__(self, func, args, kwargs):
        self.func = func
        self.args = list(args)
        self.kwargs = dict(kwargs)


class ExtVal:
    """A name from outside the parsed source (torch, math, typing …) by dotted path."""

    __slots__ = ("path",)

    def __init__(self, path):
        self.path = path

    def __repr__(self):
        return f"<ext {self.path}>"

    def __eq__(self, other):
        return isinstance(other, ExtVal) and other.path == self.path

    def __hash__(self):
        return hash(("ext", self.path))


class TorchClass:
    """A torch.nn module class (leaf op, container or nn.Module itself)."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"<nn.{self.name}>"

    def __eq__(self, other):
        return isinstance(other, TorchClass) and other.name == self.name

    def __hash__(self):
        return hash(("nn", self.name))


class ClassVal:
    __slots__ = ("name", "bases", "node", "module", "closure", "ns", "lazy", "mro", "dataclass_fields",
                 "nt_fields", "nt_defaults", "line")

    def __init__(self, name, bases, node, module, closure):
        self.name = name
        self.bases = bases
        self.node = node
        self.module = module
        self.closure = closure
        self.ns = {}
        self.lazy = {}
        self.mro = None
        self.dataclass_fields = None
        self.nt_fields = None
        self.nt_defaults = None
        self.line = node.lineno if node is not None else 0

    def __repr__(self):
        return f"<class {self.name}>"


class NTupleClass:
    __slots__ = ("name", "fields", "defaults")

    def __init__(self, name, fields, defaults=None):
        self.name = name
        self.fields = list(fields)
        self.defaults = defaults or {}


class NTuple(tuple):
    """A namedtuple instance (a real tuple with field names)."""

    _ntclass = None

    def __new__(cls, items, ntclass):
        t = super().__new__(cls, items)
        t._ntclass = ntclass
        return t


class InstanceVal:
    """An object built by the interpreted code: an nn.Module or a plain object."""

    __slots__ = ("cls", "attrs", "modules", "params", "buffers", "op", "args", "kind", "qname", "torch_base",
                 "line", "file", "unregistered", "cache", "__weakref__")

    def __init__(self, cls, kind="object", torch_base=None):
        self.cls = cls
        self.attrs = {}
        self.modules = {}
        self.params = {}
        self.buffers = {}
        self.op = None
        self.args = None
        self.kind = kind  # object | module
        self.torch_base = torch_base  # name of the torch.nn class in the MRO
        self.qname = None
        self.line = 0
        self.file = None
        self.unregistered = False
        self.cache = None  # (full args, design args) once emitted


    def __repr__(self):
        return f"<{self.cls.name} {self.qname}>"


class SuperVal:
    __slots__ = ("cls", "obj")

    def __init__(self, cls, obj):
        self.cls = cls
        self.obj = obj


class BuiltinFn:
    __slots__ = ("name", "impl")

    def __init__(self, name, impl):
        self.name = name
        self.impl = impl

    def __repr__(self):
        return f"<builtin {self.name}>"


class PyMethod:
    """A method of a plain Python value (str.join, list.append …)."""

    __slots__ = ("obj", "name")

    def __init__(self, obj, name):
        self.obj = obj
        self.name = name


class TensorMethod:
    __slots__ = ("tensor", "name")

    def __init__(self, tensor, name):
        self.tensor = tensor
        self.name = name


class ExcClass:
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name


# ------------------------------------------------------------------ sizes
class Sym:
    """A symbolic size met while interpreting (`x.size(0)`, `B * 64`, `T // 2`).  What it is and
    how it computes is core.dims' (one model of sizes for the parser, the verifier and the cost):
    this only marks it as a size among the interpreter's values, holding its canonical Dim string."""

    __slots__ = ("expr",)

    def __init__(self, expr: str):
        self.expr = expr

    @staticmethod
    def named(name: str) -> Sym:
        return Sym(name)

    def single_symbol(self):
        """The symbol name when this is exactly one symbol (`B`)."""
        return D.single_symbol(self.expr)

    def substitute(self, env: dict):
        """Its value with the symbols of env, or None."""
        v = D.substitute(self.expr, env)
        return v if D.is_const(v) else None

    def __repr__(self):
        return self.expr

    def __eq__(self, other):
        return isinstance(other, Sym) and other.expr == self.expr

    def __hash__(self):
        return hash(("sym", self.expr))


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def as_dim(v):
    """An interpreter value as a core.dims Dim (None when it is no size)."""
    if type(v) is Sym:
        return v.expr
    if is_int(v):
        return v
    if isinstance(v, bool):
        return int(v)
    return None


def from_dim(d):
    """A core.dims Dim back as an interpreter value."""
    return Sym(d) if isinstance(d, str) else d


def dim_add(a, b, sign=1):
    if type(a) is int and type(b) is int:
        return a + sign * b
    da, db = as_dim(a), as_dim(b)
    if da is None or db is None:
        return None
    return from_dim(D.add(da, db) if sign == 1 else D.sub(da, db))


def dim_mul(a, b):
    if type(a) is int and type(b) is int:
        return a * b
    da, db = as_dim(a), as_dim(b)
    if da is None or db is None:
        return None
    return from_dim(D.mul(da, db))


def dim_truediv(a, b):
    """a / b when it divides exactly (a rational polynomial for symbols); else None."""
    if type(a) is int and type(b) is int:
        return a // b if b and a % b == 0 else None
    da, db = as_dim(a), as_dim(b)
    if da is None or db is None:
        return None
    return from_dim(D.truediv(da, db))


def dim_floordiv(a, b):
    """a // b: exact when it divides; for a symbol by an int, core.dims' floor expression."""
    if type(a) is int and type(b) is int:
        return a // b if b else None
    da, db = as_dim(a), as_dim(b)
    if da is None or db is None or db == 0:
        return None
    return from_dim(D.floordiv(da, db))


def dim_eq(a, b):
    """True / False / None (undecidable)."""
    if type(a) is int and type(b) is int:
        return a == b
    da, db = as_dim(a), as_dim(b)
    if da is None or db is None:
        return None
    if is_int(da) and is_int(db):
        return da == db
    if isinstance(da, str) and isinstance(db, str):
        return D.same(da, db)
    d = D.sub(da, db)  # a size against a number: decided only when their difference is known
    return d == 0 if is_int(d) else None


def prod(dims):
    out = 1
    for d in dims:
        out = dim_mul(out, d)
        if out is None:
            return None
    return out


class Deque(list):
    """`collections.deque` of the interpreted code: a list with the deque's methods at both ends."""

    __slots__ = ()

    def appendleft(self, x):
        self.insert(0, x)

    def extendleft(self, xs):
        for x in xs:
            self.insert(0, x)

    def popleft(self):
        return self.pop(0)


class DefaultDict(dict):
    """`collections.defaultdict(factory)`: a missing key calls the factory through the interpreter."""

    __slots__ = ("interp", "factory")

    def __init__(self, interp, factory, *args):
        super().__init__(*args)
        self.interp = interp
        self.factory = factory

    def __missing__(self, key):
        if self.factory is None:
            raise KeyError(key)
        v = self[key] = self.interp.call(self.factory, [], {})
        return v


class TextFile:
    """A text file of the package opened for reading (`open(os.path.join(here, "arch.json"))`): its
    text, read when opened; nothing is ever written."""

    __slots__ = ("path", "text")

    def __init__(self, path, text):
        self.path = path
        self.text = text

    def __repr__(self):
        return f"<file {self.path}>"

    def lines(self):
        return self.text.splitlines(keepends=True)

"""The abstract interpreter: a safe subset of Python evaluated over the AST.

Only :mod:`ast` is used to read user code; no user code is compiled, imported
or executed.  Values are plain Python data or the abstract values of
:mod:`core.parse.values`.  What cannot be followed raises :class:`InterpError`,
which the statement executor turns into a warning naming ``file:line`` before
it carries on with the next statement.
"""

from __future__ import annotations

import ast
import copy as _copy
import operator
import os
import time

from . import torch as torchlib
from .libs import replacement
from .source import _MISSING, Loader, SourceModule
from .values import (
    BoundMethod,
    BreakSignal,
    BuiltinFn,
    ClassVal,
    ContinueSignal,
    Deque,
    ExcClass,
    ExtVal,
    FuncVal,
    InstanceVal,
    InterpError,
    NTuple,
    NTupleClass,
    PartialVal,
    PyMethod,
    ReturnSignal,
    SuperVal,
    Sym,
    TensorMethod,
    TensorVal,
    TextFile,
    TooCostly,
    TorchClass,
    Unknown,
    UserRaise,
    dim_add,
    dim_eq,
    dim_floordiv,
    dim_mul,
    dim_truediv,
    is_int,
)

MAX_STEPS = 3_000_000
MAX_DEPTH = 100
MAX_SEQ = 1_000_000
MAX_WALK = 1_000_000  # elements visited by one walk over a value (shared sub-lists count each time)
MAX_WARNINGS = 2000
TIME_LIMIT = 10.0  # seconds of wall clock for one parse
MEMORY_LIMIT = 1 << 30  # bytes the process may grow by during one parse
_CHECK_EVERY = 4096  # units of work between two looks at the clock and the memory

_INTERNAL = (TypeError, AttributeError, KeyError, IndexError, ValueError, ZeroDivisionError, OverflowError,
             AssertionError, StopIteration, UnicodeError)
_TRUTHY_TYPES = frozenset((int, float, str, list, tuple, dict, set, frozenset, range))
PLAIN = (int, float, str, bool, type(None), tuple, list, dict, set, frozenset, bytes, range)
PY_TYPES = {int, float, str, bool, list, tuple, dict, set, frozenset, object, slice, type}

_BINOPS = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
    ast.LShift: operator.lshift, ast.RShift: operator.rshift, ast.BitOr: operator.or_,
    ast.BitAnd: operator.and_, ast.BitXor: operator.xor, ast.MatMult: operator.matmul,
}
_FAST_OPS = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
}
_CMP = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
    ast.Gt: operator.gt, ast.GtE: operator.ge,
}
# methods of plain values that are safe to call for real (no I/O, no callbacks)
_SAFE_METHODS = {
    str: {"startswith", "endswith", "replace", "join", "split", "rsplit", "lower", "upper", "strip", "lstrip",
          "rstrip", "format", "isdigit", "isalpha", "find", "rfind", "count", "partition", "rpartition",
          "capitalize", "title", "zfill", "ljust", "rjust", "center", "splitlines", "index", "isidentifier",
          "casefold", "removeprefix", "removesuffix", "isupper", "islower", "encode", "isnumeric"},
    list: {"append", "extend", "insert", "pop", "remove", "index", "count", "reverse", "copy", "clear", "sort"},
    tuple: {"index", "count"},
    dict: {"get", "items", "keys", "values", "pop", "update", "setdefault", "copy", "clear", "popitem",
           "fromkeys"},
    set: {"add", "update", "discard", "remove", "pop", "union", "intersection", "difference", "copy",
          "issubset", "issuperset", "clear"},
    frozenset: {"union", "intersection", "difference", "issubset", "issuperset", "copy"},
    int: {"bit_length", "conjugate"},
    float: {"is_integer", "conjugate", "hex"},
    Deque: {"appendleft", "extendleft", "popleft"},
}


_SETTER = "__setter__ "  # class namespace key of a property's setter (a space: no Python name clashes)


class Frame:
    __slots__ = ("vars", "parent", "module", "func", "cls_scope", "args0")

    def __init__(self, vars, parent, module, func=None, cls_scope=None):
        self.vars = vars
        self.parent = parent
        self.module = module
        self.func = func
        self.cls_scope = cls_scope
        self.args0 = _MISSING


_SCALARS = (int, float, str, bool, type(None))
# methods that hash or compare their argument (a shared structure makes that exponential)
_HASHING_METHODS = frozenset(("index", "count", "remove", "add", "discard", "get", "pop", "setdefault", "fromkeys",
                              "union", "intersection", "difference", "issubset", "issuperset", "update"))
_SEQS = (tuple, list, set, frozenset)


# what torch.nn.Module's class itself defines (`vars(nn.Module)`, torch 2.x): a later mixin never shadows it
_MODULE_CLASS_ATTRS = frozenset((
    "T_destination", "__call__", "__delattr__", "__dir__", "__getattr__", "__getstate__", "__init__", "__repr__",
    "__setattr__", "__setstate__", "_apply", "_call_impl", "_compiled_call_impl", "_get_backward_hooks",
    "_get_backward_pre_hooks", "_get_name", "_load_from_state_dict", "_maybe_warn_non_full_backward_hook",
    "_named_members", "_register_load_state_dict_pre_hook", "_register_state_dict_hook",
    "_replicate_for_data_parallel", "_save_to_state_dict", "_slow_forward", "_version", "_wrapped_call_impl",
    "add_module", "apply", "bfloat16", "buffers", "call_super_init", "children", "compile", "cpu", "cuda",
    "double", "dump_patches", "eval", "extra_repr", "float", "forward", "get_buffer", "get_extra_state",
    "get_parameter", "get_submodule", "half", "ipu", "load_state_dict", "modules", "mtia", "named_buffers",
    "named_children", "named_modules", "named_parameters", "parameters", "register_backward_hook",
    "register_buffer", "register_forward_hook", "register_forward_pre_hook", "register_full_backward_hook",
    "register_full_backward_pre_hook", "register_load_state_dict_post_hook", "register_load_state_dict_pre_hook",
    "register_module", "register_parameter", "register_state_dict_post_hook", "register_state_dict_pre_hook",
    "requires_grad_", "set_extra_state", "set_submodule", "share_memory", "state_dict", "to", "to_empty", "train",
    "type", "xpu", "zero_grad", "training", "_parameters", "_buffers", "_modules", "__dict__", "__class__",
    "__module__", "__doc__", "__name__", "__qualname__"))


def _file_method(f, name):
    """The reading methods of a text file of the package (stdlib's `open`)."""
    if name == "read":
        return BuiltinFn("file.read", lambda a, k: f.text)
    if name == "readlines":
        return BuiltinFn("file.readlines", lambda a, k: f.lines())
    if name in ("close", "__exit__"):
        return BuiltinFn(f"file.{name}", lambda a, k: None)
    if name == "__enter__":
        return BuiltinFn("file.__enter__", lambda a, k: f)
    if name == "name":
        return f.path
    raise InterpError(f"file.{name} not followed: files are only read")


def _is_plain(v):
    """Plain Python data all the way down.  The walk is bounded: a value built by sharing
    (``a = [a, a]`` in a loop) is tiny in memory but exponential to walk, and everything that
    hands a value to Python itself (``str``, ``==``, ``sorted`` ...) asks this first."""
    if isinstance(v, _SCALARS):
        return True
    if not isinstance(v, (_SEQS, dict)):
        return False
    stack = [v]
    n = 0
    while stack:
        x = stack.pop()
        n += 1
        if n > MAX_WALK:
            raise TooCostly("a value too large to follow (nested or shared lists)")
        if isinstance(x, _SCALARS):
            continue
        if isinstance(x, _SEQS):
            stack.extend(x)
        elif isinstance(x, dict):
            stack.extend(x.keys())
            stack.extend(x.values())
        else:
            return False
    return True


def _sizes_eq(a, b):
    """A shape against the sizes it should have (`assert x.shape == (b, h * w, c)`), written in input
    sizes: equal when every size is, Unknown when one cannot be told; None when these are not two
    tuples of sizes with a symbol among them."""
    if not (isinstance(a, tuple) and isinstance(b, tuple)) or len(a) + len(b) > MAX_WALK:
        return None
    if not all(is_int(x) or isinstance(x, Sym) for x in a + b) or not any(isinstance(x, Sym) for x in a + b):
        return None
    if len(a) != len(b):
        return False
    eqs = [dim_eq(x, y) for x, y in zip(a, b)]
    if False in eqs:
        return False
    return Unknown("size comparison") if None in eqs else True


def _has_unknown(v):
    stack = [v]
    n = 0
    while stack:
        x = stack.pop()
        n += 1
        if n > MAX_WALK:
            raise TooCostly("a value too large to follow (nested or shared lists)")
        if isinstance(x, Unknown):
            return True
        if isinstance(x, (tuple, list)):
            stack.extend(x)
    return False


def _rss():
    """Resident memory of this process in bytes (0 where it cannot be read)."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        try:
            import resource
            return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        except (ImportError, OSError):
            return 0


class Interp:
    def __init__(self, loader=None, display=None):
        self.loader = loader or Loader()
        shown = {}
        raw = display or (lambda p: p)

        def cached_display(p):
            r = shown.get(p)
            if r is None:
                r = shown[p] = raw(p)
            return r
        self.display = cached_display
        self.warnings = []
        self.warnings_past_cap = 0
        self._wseen = set()
        # what is said of a torch.nn layer, held until the layer has a name: {id(module): (module, [LayerNote])}
        self.layer_notes = {}
        self.graph = None
        self.loc = (None, 0)
        self.steps = 0
        self.work = 0
        self._check_at = _CHECK_EVERY
        self.deadline = None
        self.time_limit = TIME_LIMIT
        self.memory_limit = MEMORY_LIMIT
        self._rss0 = 0
        self.depth = 0
        self.calls = []  # the frames of the functions being followed, innermost last (inspect.currentframe)
        self.symbolic = True  # inputs have symbolic sizes (design shape args keep symbols)
        self.batch_env = {}  # symbol -> int given on the command line
        self.training = None  # what forward's `self.training` reads: None (unknown), or the mode parsed in
        self.fwd_modules = []  # module-instance stack during the forward walk
        self._mod_frames = {}
        self._imported_effects = []  # modules loaded whose effects on imported registries are to run
        self._flushing = False
        self._acache = {}
        self._memo = {}
        from .builtins import make_builtins
        self.builtins = make_builtins(self)

    # ------------------------------------------------------------ budget
    def start_budget(self, time_limit=TIME_LIMIT, memory_limit=MEMORY_LIMIT, rss0=None):
        """From now on, the parse may take `time_limit` seconds and grow the process by
        `memory_limit` bytes (counted from `rss0`, the memory before the source was read, when
        given); past either, TooCostly stops it where it is."""
        self.time_limit, self.memory_limit = time_limit, memory_limit
        self.deadline = time.monotonic() + time_limit
        self._rss0 = _rss() if rss0 is None else rss0
        self._check_at = self.work + _CHECK_EVERY
        self._check_budget()

    def charge(self, n=1):
        """Count `n` units of work (a statement, a call, an item made); look at the clock and the
        memory every few thousand."""
        self.work += n
        if self.work >= self._check_at:
            self._check_budget()

    def _check_budget(self):
        self._check_at = self.work + _CHECK_EVERY
        if self.deadline is None:
            return
        if time.monotonic() > self.deadline:
            raise TooCostly(f"takes more than {self.time_limit:g} s")
        if self.memory_limit and _rss() - self._rss0 > self.memory_limit:
            raise TooCostly(f"needs more than {self.memory_limit >> 20} MB")

    def check_size(self, n):
        """A string or list about to be made with n items."""
        if n > MAX_SEQ:
            raise TooCostly(f"makes a sequence of {n} items")
        self.charge(n >> 4)

    # ------------------------------------------------------------ warnings
    def where(self):
        mod, line = self.loc
        path = self.display(mod.path) if mod is not None else "?"
        return f"{path}:{line}"

    def warn(self, message, loc=None):
        if "\n" in message:
            message = " ".join(message.split())
        mod, line = loc or self.loc
        path = self.display(mod.path) if mod is not None else "?"
        key = (path, line, message)
        if key in self._wseen:
            return
        self._wseen.add(key)
        if len(self.warnings) >= MAX_WARNINGS:
            self.warnings_past_cap += 1  # not kept (bounded memory), but counted: the total is said
            return
        self.warnings.append(key)

    # ------------------------------------------------------------ modules
    def module_frame(self, mod):
        fr = self._mod_frames.get(id(mod))
        if fr is None:
            fr = Frame(mod.values, None, mod)
            self._mod_frames[id(mod)] = fr
        return fr

    def load(self, path):
        return self.loader.load(path)

    def mod_lookup(self, mod, name):
        if name in mod.values:
            return mod.values[name]
        make = replacement(mod.dotted, name)
        if make is not None:  # a part of an installed library modelled (libs/)
            v = make(self, mod, lambda: self._mod_lookup_source(mod, name))
            if v is not _MISSING:
                mod.values[name] = v
            return v
        return self._mod_lookup_source(mod, name)

    def _mod_lookup_source(self, mod, name):
        if name in mod.values:
            return mod.values[name]
        stmts = mod.statements(name)
        if stmts is None:
            for st in mod.star:
                target = self._import_target(mod, st)
                if isinstance(target, SourceModule):
                    v = self.mod_lookup(target, name)
                    if v is not _MISSING:
                        return v
            if mod.is_package:
                f = self.loader.submodule_file(mod, name)
                if f:
                    return self._safe_load(f)
            return _MISSING
        if name in mod.evaluating:
            return Unknown(f"circular definition of {name}")
        mod.evaluating.add(name)
        saved = self.loc
        try:
            fr = self.module_frame(mod)
            for st in stmts:
                self._exec_top(mod, st, name, fr)
        finally:
            mod.evaluating.discard(name)
            self.loc = saved
        return mod.values.get(name, Unknown(f"{name} could not be evaluated"))

    def module_dict(self, mod):
        """`module.__dict__` (`resnet.__dict__[name](...)`, a builder picked by name): its top-level
        names; one the parser cannot evaluate is unknown, warned about where it is used, not here."""
        nwarn = len(self.warnings)
        out = {}
        for name in list(mod.defs):
            try:
                v = self.mod_lookup(mod, name)
            except InterpError as e:
                v = Unknown(str(e))
            if v is not _MISSING:
                out[name] = v
        del self.warnings[nwarn:]
        self._wseen = set(self.warnings)
        return out

    def _safe_load(self, f):
        try:
            fresh = os.path.abspath(f) not in self.loader.cache
            mod = self.load(f)
            if fresh and (mod.outward or mod.side_imports):
                self._imported_effects.append(mod)
            return mod
        except (OSError, SyntaxError, ValueError, RecursionError, MemoryError) as e:
            raise InterpError(f"cannot read {self.display(f)}: {type(e).__name__} {e}") from None

    def flush_imported_effects(self):
        """Run what loading a module would have run on names it imports: registrations into another
        module's registry (`@MODELS.register_module()` on a class, `Act.add(...)`), and the relative
        imports it makes only for their effects (`from . import backbones`).  Only effects whose target is
        a registry of the source (an object, dict, list or set it built, or a function of its own that
        writes into its module's names); decorators and calls of modelled libraries are never run."""
        if self._flushing:  # a registry being built while its registrations are pending: after it
            return
        self._flushing = True
        try:
            self._flush_imported_effects()
        finally:
            self._flushing = False

    def _flush_imported_effects(self):
        while self._imported_effects:
            mod = self._imported_effects.pop(0)
            saved = self.loc
            try:
                for st in mod.side_imports:
                    if id(st) in mod.done:
                        continue
                    mod.done.add(id(st))
                    self.loc = (mod, st.lineno)
                    f = self.loader.resolve(mod.path, st.module or "", st.level)
                    try:
                        target = self._safe_load(f) if f else None
                        for a in st.names:
                            if isinstance(target, SourceModule):
                                sub = self.loader.submodule_file(target, a.name)
                                if sub:
                                    self._safe_load(sub)
                    except InterpError:
                        continue
                for st, root, _ in mod.outward:
                    if id(st) in mod.done or not self._is_registry(mod, root):
                        continue
                    self._exec_top(mod, st, None, self.module_frame(mod))
            finally:
                self.loc = saved

    def _is_registry(self, mod, name):
        nwarn = len(self.warnings)
        try:
            v = self.mod_lookup(mod, name)
        except InterpError:
            v = None
        del self.warnings[nwarn:]
        self._wseen = set(self.warnings)
        if isinstance(v, (dict, list, set)) or (isinstance(v, InstanceVal) and v.kind != "module"):
            return True
        if isinstance(v, BoundMethod):
            v = v.obj if isinstance(v.obj, InstanceVal) and v.obj.kind != "module" else None
            return v is not None
        if isinstance(v, FuncVal) and isinstance(v.module, SourceModule) and not v.is_lambda:
            from .source import _written_globals
            return bool(_written_globals(v.node) & set(v.module.defs))
        return False

    def _import_target(self, mod, st):
        f = self.loader.resolve(mod.path, st.module or "", st.level)
        if f:
            return self._safe_load(f)
        return None

    def _exec_top(self, mod, st, name, fr):
        if id(st) in mod.effect_ids:  # a statement changing a registry (or binding one) runs once
            if id(st) in mod.done:
                return
            mod.done.add(id(st))
        self.loc = (mod, st.lineno)
        try:
            if isinstance(st, ast.ImportFrom):
                for a in st.names:
                    if (a.asname or a.name) == name:
                        mod.values[name] = self.import_from(mod, st, a.name)
            elif isinstance(st, ast.Import):
                for a in st.names:
                    if (a.asname or a.name.split(".")[0]) == name:
                        mod.values[name] = self.import_name(mod, a)
            else:
                self.exec_stmt(st, fr)
        except InterpError as e:
            self.warn(str(e))
            mod.values.setdefault(name, Unknown(str(e)))

    def import_from(self, mod, st, name):
        f = self.loader.resolve(mod.path, st.module or "", st.level)
        if f:
            target = self._safe_load(f)
            sub = self.loader.submodule_file(target, name)
            if sub and name in target.evaluating:
                # `from . import resnet` in a package's __init__: the submodule, which Python imports when
                # the package does not (yet) hold the name
                return self._safe_load(sub)
            v = self.mod_lookup(target, name)
            if v is not _MISSING:
                return v
            if sub:
                return self._safe_load(sub)
            return Unknown(f"{name} not found in {self.display(f)}")
        if st.level:
            return Unknown(f"relative import {'.' * st.level}{st.module or ''} not found")
        return torchlib.ext(st.module + "." + name)

    def import_name(self, mod, alias):
        full = alias.name
        if alias.asname:
            f = self.loader.resolve(mod.path, full, 0)
            if f:
                return self._safe_load(f)
            return torchlib.ext(full)
        top = full.split(".")[0]
        f = self.loader.resolve(mod.path, top, 0)
        if f:
            return self._safe_load(f)
        return torchlib.ext(top)

    # ------------------------------------------------------------ statements
    def exec_block(self, stmts, fr):
        for st in stmts:
            self.exec_stmt(st, fr)

    def exec_stmt(self, st, fr):
        self.loc = (fr.module, st.lineno)
        self.steps += 1
        self.work += 1
        if self.work >= self._check_at:
            self._check_budget()
            if self.steps > MAX_STEPS:
                raise TooCostly(f"runs more than {MAX_STEPS} statements")
        h = self._STMT.get(type(st))
        if h is None:
            self.warn(f"statement {type(st).__name__} not followed")
            return
        try:
            h(self, st, fr)
        except InterpError as e:
            self.warn(str(e))
            self._poison(st, fr)
        except TooCostly as e:
            if e.where is None:
                e.where = self.where()
            raise
        except _INTERNAL:  # a construct this interpreter models wrongly: say so, carry on
            # the user is told what was not followed, not the parser's own Python error
            self.warn(f"`{_src(st)}` is not followed: the parser does not model this use here")
            self._poison(st, fr)

    def _poison(self, st, fr):
        """After a failed statement, names it would bind become unknown."""
        targets = []
        if isinstance(st, ast.Assign):
            targets = st.targets
        elif isinstance(st, (ast.AnnAssign, ast.AugAssign)):
            targets = [st.target]
        for t in targets:
            for n in ast.walk(t):
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                    fr.vars[n.id] = Unknown("not followed")

    def s_Expr(self, st, fr):
        v = st.value
        if self.graph is not None and isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute) and \
                v.func.attr.endswith("_") and not isinstance(v.func.value, ast.Name):
            # in-place change of part of a tensor (`t[a:b].zero_()`): values only, nothing to build
            snap = self.graph.snapshot()
            nwarn = len(self.warnings)
            r = self.eval(v, fr)
            self.graph.restore(snap)
            del self.warnings[nwarn:]
            self._wseen = set(self.warnings)
            if isinstance(r, TensorVal) and not r.is_const:
                self.warn(f"in-place change `{_src(v)}` of a tensor's values is not followed")
            return
        self.eval(v, fr)

    def s_Pass(self, st, fr):
        pass

    def s_Assign(self, st, fr):
        v = self.eval(st.value, fr)
        for t in st.targets:
            self.assign(t, v, fr)

    def s_AnnAssign(self, st, fr):
        if st.value is not None:
            self.assign(st.target, self.eval(st.value, fr), fr)

    def s_AugAssign(self, st, fr):
        t = st.target
        if isinstance(t, ast.Name):
            cur = self.lookup(t.id, fr)
        elif isinstance(t, ast.Attribute):
            obj = self.eval(t.value, fr)
            cur = self.getattr(obj, t.attr)
        elif isinstance(t, ast.Subscript):
            obj = self.eval(t.value, fr)
            idx = self.eval(t.slice, fr)
            cur = self.getitem(obj, idx)
        else:
            raise InterpError("augmented assignment target not followed")
        v = self.binop(type(st.op), cur, self.eval(st.value, fr), inplace=True)
        if isinstance(t, ast.Name):
            fr.vars[t.id] = v
        elif isinstance(t, ast.Attribute):
            self.setattr(obj, t.attr, v)
        else:
            self.setitem(obj, idx, v)

    def s_Return(self, st, fr):
        if st.value is None:
            raise ReturnSignal(None)
        try:
            v = self.eval(st.value, fr)
        except InterpError as e:
            self.warn(str(e))
            v = Unknown(str(e))
        raise ReturnSignal(v)

    def s_If(self, st, fr):
        g = self.graph
        snap = g.snapshot() if g is not None else None
        try:
            c = self.truth(self.eval(st.test, fr))
        except InterpError as e:  # a condition the parser cannot evaluate is one not known: as any such `if`
            self.warn(str(e))
            c = None
        if c is None and g is not None:
            g.restore(snap)  # tensor ops that only fed the condition build nothing
        if c is True:
            self.exec_block(st.body, fr)
        elif c is False:
            self.exec_block(st.orelse, fr)
        else:
            self.unknown_branch(st, st.body, st.orelse, fr)

    def unknown_branch(self, st, body, orelse, fr):
        line = (fr.module, st.lineno)
        b_raises, o_raises = _always_raises(body), _always_raises(orelse)
        if b_raises and not o_raises:
            self.exec_block(orelse, fr)
            return
        if o_raises and not b_raises:
            self.exec_block(body, fr)
            return
        if ast.dump(ast.Module(body=body, type_ignores=[])) == ast.dump(ast.Module(body=orelse, type_ignores=[])):
            self.exec_block(body, fr)
            return
        src = _src(st.test) if isinstance(st, (ast.If, ast.While)) else "condition"
        g = self.graph
        if g is None:
            self.warn(f"`if {src}` depends on a value not known when reading the source; first branch taken",
                      line)
            self.exec_block(body, fr)
            return
        # forward: dry-run the other branch and compare what both build
        snap = g.snapshot()
        nwarn = len(self.warnings)
        saved_vars = {k: (_copy.copy(v) if isinstance(v, (list, dict)) else v) for k, v in fr.vars.items()}
        dry = Frame(dict(saved_vars), fr.parent, fr.module, fr.func, fr.cls_scope)
        dry.args0 = fr.args0
        other = None
        try:
            self.exec_block(orelse, dry)
            other = g.signature(snap[0])
        except (ReturnSignal, BreakSignal, ContinueSignal, UserRaise):
            other = None
        g.restore(snap)
        del self.warnings[nwarn:]
        self._wseen = set(self.warnings)
        start = len(g.nodes)
        try:
            self.exec_block(body, fr)
        finally:
            mine = g.signature(start)
            if other is None or mine != other:
                self.warn(f"`if {src}` depends on a value not known when reading the source and its branches "
                          f"differ; first branch taken", line)

    def s_For(self, st, fr):
        if _is_init_loop(st):
            return  # a weight-initialisation loop: builds nothing
        it = self.eval(st.iter, fr)
        items = self.iterate(it)
        for item in items:
            self.assign(st.target, item, fr)
            try:
                self.exec_block(st.body, fr)
            except BreakSignal:
                break
            except ContinueSignal:
                continue
        else:
            self.exec_block(st.orelse, fr)

    def s_While(self, st, fr):
        n = 0
        while True:
            c = self.truth(self.eval(st.test, fr))
            if c is None:
                raise InterpError(f"`while {_src(st.test)}` depends on an unknown value; loop not followed")
            if not c:
                self.exec_block(st.orelse, fr)
                break
            n += 1
            if n > 100_000:
                raise InterpError("while loop runs too long to follow")
            try:
                self.exec_block(st.body, fr)
            except BreakSignal:
                break
            except ContinueSignal:
                continue

    def s_Break(self, st, fr):
        raise BreakSignal()

    def s_Continue(self, st, fr):
        raise ContinueSignal()

    def s_Raise(self, st, fr):
        name, msg = "Exception", ""
        if st.exc is not None:
            try:
                e = self.eval(st.exc, fr)
            except InterpError:
                e = None
            if isinstance(e, tuple) and len(e) == 3 and e[0] == "__exc__":
                name, msg = e[1], e[2]
            elif isinstance(e, ExcClass):
                name = e.name
        raise UserRaise(name, msg, self.where())

    def s_Assert(self, st, fr):
        """An assert Python would fail fails here too: a test known false on plain values (a config
        check such as `dim % heads == 0` with the given --args) or a name defined nowhere.  A test
        on values the parser does not know passes."""
        try:
            v = self.eval(st.test, fr)
        except InterpError as e:
            if str(e).startswith("name '") and str(e).endswith("' is not defined"):
                raise UserRaise("NameError", str(e), self.where()) from None
            return
        if _plain_falsy(v):
            msg = ""
            if st.msg is not None:
                try:
                    m = self.eval(st.msg, fr)
                    msg = m if isinstance(m, str) else ""
                except InterpError:
                    pass
            raise UserRaise("AssertionError", msg[:200], self.where())

    def s_Delete(self, st, fr):
        for t in st.targets:
            if isinstance(t, ast.Name):
                fr.vars.pop(t.id, None)
            elif isinstance(t, ast.Subscript):
                obj = self.eval(t.value, fr)
                idx = self.eval(t.slice, fr)
                if isinstance(obj, (dict, list)) and _is_plain(idx):
                    try:
                        del obj[idx]
                    except (KeyError, IndexError, TypeError):
                        pass
            elif isinstance(t, ast.Attribute):
                obj = self.eval(t.value, fr)
                if isinstance(obj, InstanceVal):
                    for d in (obj.attrs, obj.modules, obj.params, obj.buffers):
                        d.pop(t.attr, None)

    def s_Global(self, st, fr):
        pass

    s_Nonlocal = s_Global

    def s_FunctionDef(self, st, fr):
        fr.vars[st.name] = self._registered(st, fr, self.make_function(st, fr))

    s_AsyncFunctionDef = s_FunctionDef

    def s_ClassDef(self, st, fr):
        fr.vars[st.name] = self._registered(st, fr, self.make_class(st, fr))

    def _registered(self, st, fr, value):
        """A module-level definition whose decorators put it in a registry of the module
        (`@Act.factory_function("swish")`, `@register("name")`): those decorators are called, innermost
        first, as importing the module does; the others are read as before (passed through)."""
        mod = fr.module
        at_top = isinstance(mod, SourceModule) and fr.vars is mod.values
        marks = list(mod.effect_decorators.get(id(st), ())) if at_top else None
        if at_top and mod.outward and id(st) in mod.effect_ids:
            from .source import _root
            for s_, _, idx in mod.outward:
                if s_ is st:
                    marks += [i for i in idx if self._is_registry(mod, _root(st.decorator_list[i]))]
        if not marks:
            return value
        for i in sorted(marks, reverse=True):
            deco = self.eval(st.decorator_list[i], fr)
            out = self.call(deco, [value], {})
            if out is not None and not isinstance(out, Unknown):
                value = out
        return value

    def s_Import(self, st, fr):
        for a in st.names:
            fr.vars[a.asname or a.name.split(".")[0]] = self.import_name(fr.module, a)

    def s_ImportFrom(self, st, fr):
        for a in st.names:
            if a.name == "*":
                continue
            fr.vars[a.asname or a.name] = self.import_from(fr.module, st, a.name)

    def s_With(self, st, fr):
        for item in st.items:
            cm = self.eval(item.context_expr, fr)
            if item.optional_vars is not None:
                self.assign(item.optional_vars, cm if isinstance(cm, TextFile) else Unknown("context manager"), fr)
        self.exec_block(st.body, fr)

    def s_Try(self, st, fr):
        try:
            self.exec_block(st.body, fr)
        except UserRaise as e:
            handled = False
            for h in st.handlers:
                if h.name:
                    fr.vars[h.name] = ("__exc__", e.exc_name, e.message)
                self.exec_block(h.body, fr)
                handled = True
                break
            if not handled:
                raise
        else:
            self.exec_block(st.orelse, fr)
        finally:
            self.exec_block(st.finalbody, fr)

    _STMT = {}

    # ------------------------------------------------------------ assignment
    def assign(self, t, v, fr):
        tt = type(t)
        if tt is ast.Name:
            fr.vars[t.id] = v
        elif tt in (ast.Tuple, ast.List):
            items = self.unpack(v, len(t.elts), any(isinstance(e, ast.Starred) for e in t.elts))
            if any(isinstance(e, ast.Starred) for e in t.elts):
                si = next(i for i, e in enumerate(t.elts) if isinstance(e, ast.Starred))
                nafter = len(t.elts) - si - 1
                if isinstance(items, Unknown):
                    for e in t.elts:
                        self.assign(e.value if isinstance(e, ast.Starred) else e, items, fr)
                    return
                head, mid, tail = items[:si], items[si:len(items) - nafter], items[len(items) - nafter:]
                for e, x in zip(t.elts[:si], head):
                    self.assign(e, x, fr)
                self.assign(t.elts[si].value, list(mid), fr)
                for e, x in zip(t.elts[si + 1:], tail):
                    self.assign(e, x, fr)
                return
            if isinstance(items, Unknown):
                for e in t.elts:
                    self.assign(e, items, fr)
                return
            if len(items) != len(t.elts):
                raise InterpError(f"cannot unpack {len(items)} values into {len(t.elts)} names")
            for e, x in zip(t.elts, items):
                self.assign(e, x, fr)
        elif tt is ast.Attribute:
            obj = self.eval(t.value, fr)
            self.setattr(obj, t.attr, v)
        elif tt is ast.Subscript:
            obj = self.eval(t.value, fr)
            idx = self.eval(t.slice, fr)
            self.setitem(obj, idx, v)
        elif tt is ast.Starred:
            self.assign(t.value, v, fr)
        else:
            raise InterpError(f"assignment to {tt.__name__} not followed")

    def unpack(self, v, n, starred=False):
        if isinstance(v, Unknown):
            return v
        if isinstance(v, TensorVal):
            return torchlib.tensor_unpack(self, v, n)
        return list(self.iterate(v))

    # ------------------------------------------------------------ expressions
    def eval(self, node, fr):
        t = type(node)
        if t is ast.Name:
            return self.lookup(node.id, fr)
        if t is ast.Constant:
            return node.value
        if t is ast.Attribute:
            return self.getattr(self.eval(node.value, fr), node.attr)
        h = self._EXPR.get(t)
        if h is None:
            raise InterpError(f"expression {type(node).__name__} not followed")
        return h(self, node, fr)

    def e_Constant(self, n, fr):
        return n.value

    def e_Name(self, n, fr):
        return self.lookup(n.id, fr)

    def lookup(self, name, fr):
        f = fr
        while f is not None:
            v = f.vars.get(name, _MISSING)
            if v is not _MISSING:
                return v
            if f.cls_scope is not None:
                v = self.class_own(f.cls_scope, name)
                if v is not _MISSING:
                    return v
            f = f.parent
        v = self.mod_lookup(fr.module, name)
        if v is not _MISSING:
            return v
        b = self.builtins.get(name, _MISSING)
        if b is not _MISSING:
            return b
        raise InterpError(f"name '{name}' is not defined")

    def e_Attribute(self, n, fr):
        return self.getattr(self.eval(n.value, fr), n.attr)

    def e_Tuple(self, n, fr):
        return tuple(self._elts(n.elts, fr))

    def e_List(self, n, fr):
        return self._elts(n.elts, fr)

    def e_Set(self, n, fr):
        try:
            elts = self._elts(n.elts, fr)
            _is_plain(elts)
            return set(elts)
        except TypeError:
            return Unknown("set")

    def _elts(self, elts, fr):
        out = []
        for e in elts:
            if isinstance(e, ast.Starred):
                v = self.eval(e.value, fr)
                if isinstance(v, Unknown):
                    raise InterpError(f"`*{_src(e.value)}` is not known")
                out.extend(self.iterate(v))
            else:
                out.append(self.eval(e, fr))
        return out

    def e_Dict(self, n, fr):
        out = {}
        for k, v in zip(n.keys, n.values):
            if k is None:
                d = self.eval(v, fr)
                if isinstance(d, dict):
                    out.update(d)
                elif isinstance(d, Unknown):
                    raise InterpError(f"`**{_src(v)}` is not known")
                else:
                    raise InterpError("`**` of a non-dict")
            else:
                key = self.eval(k, fr)
                if type(key) is tuple:
                    _is_plain(key)
                try:
                    out[key] = self.eval(v, fr)
                except TypeError:
                    raise InterpError("unhashable dict key") from None
        return out

    def e_JoinedStr(self, n, fr):
        parts = []
        for v in n.values:
            if isinstance(v, ast.Constant):
                parts.append(str(v.value))
            else:
                x = self.eval(v.value, fr)
                spec = ""
                if v.format_spec is not None:
                    spec = self.e_JoinedStr(v.format_spec, fr)
                    if isinstance(spec, Unknown):
                        return spec
                    if _big_width(spec):
                        return Unknown("f-string width too large")
                if isinstance(x, Unknown):
                    return Unknown("f-string of unknown value")
                if not _is_plain(x):
                    x = self.describe(x)
                if v.conversion == ord("r"):
                    x = repr(x)
                elif v.conversion == ord("s"):
                    x = str(x)
                try:
                    parts.append(format(x, spec))
                except (ValueError, TypeError):
                    parts.append(str(x))
        return "".join(parts)

    def e_FormattedValue(self, n, fr):
        return self.e_JoinedStr(ast.JoinedStr(values=[n]), fr)

    def e_BinOp(self, n, fr):
        return self.binop(type(n.op), self.eval(n.left, fr), self.eval(n.right, fr))

    def e_UnaryOp(self, n, fr):
        v = self.eval(n.operand, fr)
        op = type(n.op)
        if op is ast.Not:
            t = self.truth(v)
            return Unknown("not of unknown") if t is None else (not t)
        if isinstance(v, TensorVal):
            return torchlib.tensor_unary(self, op, v)
        if isinstance(v, Unknown):
            return v
        if isinstance(v, Sym):
            if op is ast.USub:
                return dim_mul(v, -1)
            if op is ast.UAdd:
                return v
            return Unknown("unary op on size")
        try:
            if op is ast.USub:
                return -v
            if op is ast.UAdd:
                return +v
            if op is ast.Invert:
                return ~v
        except TypeError:
            raise InterpError(f"unary {op.__name__} on {self.describe(v)}") from None
        raise InterpError("unary op not followed")

    def e_BoolOp(self, n, fr):
        is_and = isinstance(n.op, ast.And)
        result = None
        unknown = False
        for _i, e in enumerate(n.values):
            v = self.eval(e, fr)
            t = self.truth(v)
            if t is None:
                unknown = True
                result = v
                continue
            if is_and and not t:
                return v
            if not is_and and t:
                return v
            result = v
        return Unknown("boolean of unknown") if unknown else result

    def e_Compare(self, n, fr):
        left = self.eval(n.left, fr)
        result = True
        for op, rn in zip(n.ops, n.comparators):
            right = self.eval(rn, fr)
            r = self.compare(type(op), left, right)
            if isinstance(r, TensorVal):
                if len(n.ops) == 1:
                    return r
                return Unknown("tensor comparison")
            if r is False:
                return False
            if r is not True:
                result = Unknown("comparison of unknown")
            left = right
        return result

    def e_IfExp(self, n, fr):
        c = self.truth(self.eval(n.test, fr))
        if c is True:
            return self.eval(n.body, fr)
        if c is False:
            return self.eval(n.orelse, fr)
        g = self.graph
        start = len(g.nodes) if g is not None else 0
        a = self.eval(n.body, fr)
        mine = g.signature(start) if g is not None else None
        snap = g.snapshot() if g is not None else None
        nwarn = len(self.warnings)
        try:
            b = self.eval(n.orelse, fr)
            other = g.signature(snap[0]) if g is not None else None
        except (InterpError, UserRaise):
            b, other = Unknown("alternative not followed"), None
        if g is not None:
            g.restore(snap)  # the other alternative is only compared, never kept
            del self.warnings[nwarn:]
            self._wseen = set(self.warnings)
        if _is_plain(a) and _is_plain(b) and a == b:
            return a
        if isinstance(a, TensorVal) and isinstance(b, TensorVal) and g is not None and mine == other:
            return a
        if isinstance(a, Unknown) and isinstance(b, Unknown):
            return a
        self.warn(f"`{_src(n.test)}` is not known when reading the source; first alternative taken")
        return a

    def e_Subscript(self, n, fr):
        return self.getitem(self.eval(n.value, fr), self.eval(n.slice, fr))

    def e_Slice(self, n, fr):
        lo = self.eval(n.lower, fr) if n.lower is not None else None
        hi = self.eval(n.upper, fr) if n.upper is not None else None
        st = self.eval(n.step, fr) if n.step is not None else None
        return slice(lo, hi, st)

    def e_Index(self, n, fr):  # py<3.9
        return self.eval(n.value, fr)

    def e_Starred(self, n, fr):
        raise InterpError("starred expression here not followed")

    def e_Lambda(self, n, fr):
        return self.make_function(n, fr, is_lambda=True)

    def e_NamedExpr(self, n, fr):
        v = self.eval(n.value, fr)
        self.assign(n.target, v, fr)
        return v

    def _comp(self, n, fr, kind):
        inner = Frame({}, fr, fr.module, fr.func, None)
        inner.args0 = fr.args0
        out = [] if kind != "dict" else {}

        def rec(gi):
            if gi == len(n.generators):
                if kind == "dict":
                    out[self.eval(n.key, inner)] = self.eval(n.value, inner)
                else:
                    out.append(self.eval(n.elt, inner))
                if len(out) > MAX_SEQ:
                    raise TooCostly(f"makes a list of more than {MAX_SEQ} items")
                return
            g = n.generators[gi]
            it = self.eval(g.iter, inner if gi else fr)
            for item in self.iterate(it):
                self.charge()
                self.assign(g.target, item, inner)
                ok = True
                for cond in g.ifs:
                    c = self.truth(self.eval(cond, inner))
                    if c is None:
                        raise InterpError(f"comprehension filter `{_src(cond)}` is not known")
                    if not c:
                        ok = False
                        break
                if ok:
                    rec(gi + 1)
        rec(0)
        self.check_size(len(out))
        if kind == "set":
            try:
                return set(out)
            except TypeError:
                return Unknown("set")
        return out

    def e_ListComp(self, n, fr):
        return self._comp(n, fr, "list")

    def e_GeneratorExp(self, n, fr):
        return self._comp(n, fr, "list")

    def e_SetComp(self, n, fr):
        return self._comp(n, fr, "set")

    def e_DictComp(self, n, fr):
        return self._comp(n, fr, "dict")

    def e_Call(self, n, fr):
        self.loc = (fr.module, n.lineno)
        func_node = n.func
        # super() with no arguments needs the frame
        if isinstance(func_node, ast.Name) and func_node.id == "super" and not n.args:
            if "super" not in fr.vars:
                return self.zero_arg_super(fr)
        if type(func_node) is ast.Name and func_node.id == "locals" and not n.args and not n.keywords:
            try:
                self.lookup("locals", fr)
            except InterpError:  # the builtin: the current frame's names (a dict of values, no frame object)
                return dict(fr.vars)
        fn = self.eval(func_node, fr)
        if type(fn) is ExtVal and fn.path in _NOOP_CALLS:
            return None
        args = []
        for a in n.args:
            if isinstance(a, ast.Starred):
                v = self.eval(a.value, fr)
                if isinstance(v, Unknown):
                    raise InterpError(f"`*{_src(a.value)}` is not known")
                args.extend(self.iterate(v))
            else:
                args.append(self.eval(a, fr))
        kwargs = {}
        for k in n.keywords:
            if k.arg is None:
                d = self.eval(k.value, fr)
                if isinstance(d, dict):
                    kwargs.update(d)
                elif isinstance(d, Unknown):
                    raise InterpError(f"`**{_src(k.value)}` is not known")
                else:
                    raise InterpError(f"`**{_src(k.value)}` is not a dict")
            else:
                kwargs[k.arg] = self.eval(k.value, fr)
        self.loc = (fr.module, n.lineno)
        return self.call(fn, args, kwargs, n)

    _EXPR = {}

    # ------------------------------------------------------------ functions & classes
    def make_function(self, node, fr, is_lambda=False, kind="function"):
        a = node.args
        defaults = [self.eval(d, fr) for d in a.defaults]
        kwdefaults = {}
        for arg, d in zip(a.kwonlyargs, a.kw_defaults):
            if d is not None:
                kwdefaults[arg.arg] = self.eval(d, fr)
        if not is_lambda:
            for d in node.decorator_list:
                dn = _src(d)
                if dn.endswith("staticmethod"):
                    kind = "staticmethod"
                elif dn.endswith("classmethod"):
                    kind = "classmethod"
                elif dn.endswith("property") or dn.endswith("cached_property"):
                    kind = "property"
                elif dn.endswith(".setter") or dn.endswith(".deleter"):
                    kind = "setter"
        name = "<lambda>" if is_lambda else node.name
        return FuncVal(node, fr, fr.module, name, defaults, kwdefaults, kind, is_lambda)

    def make_class(self, node, fr):
        bases = []
        for b in node.bases:
            try:
                bases.append(self.eval(b, fr))
            except InterpError:
                bases.append(Unknown("base"))
        cls = ClassVal(node.name, bases, node, fr.module, fr)
        annotations = []
        for st in node.body:
            if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                if isinstance(st, ast.FunctionDef) and any(_src(d).endswith("_overload_method") or
                                                           _src(d).endswith("overload") for d in st.decorator_list):
                    continue
                cls.lazy.setdefault(st.name, []).append(st)
            elif isinstance(st, ast.Assign):
                for t in st.targets:
                    for nm in _names(t):
                        cls.lazy.setdefault(nm, []).append(st)
            elif isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name):
                annotations.append((st.target.id, st.value))
                if st.value is not None:
                    cls.lazy.setdefault(st.target.id, []).append(st)
        for d in node.decorator_list:
            dn = _src(d.func if isinstance(d, ast.Call) else d)
            if dn.endswith("dataclass"):
                fields = []
                for base in self.mro(cls)[1:]:
                    if isinstance(base, ClassVal) and base.dataclass_fields:
                        fields += [f for f in base.dataclass_fields if f[0] not in [x[0] for x in annotations]]
                cls.dataclass_fields = fields + [(nm, v) for nm, v in annotations]
        if any(isinstance(b, ExtVal) and b.path.endswith("NamedTuple") for b in bases):
            cls.nt_fields = [nm for nm, _ in annotations]
            cls.nt_defaults = {nm: v for nm, v in annotations if v is not None}
        return cls

    def class_own(self, cls, name):
        if name in cls.ns:
            return cls.ns[name]
        stmts = cls.lazy.get(name)
        if not stmts:
            return _MISSING
        fr = Frame(cls.ns, cls.closure, cls.module, None, cls)
        saved = self.loc
        try:
            del cls.lazy[name]
            for st in stmts:
                self.loc = (cls.module, st.lineno)
                if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    f = self.make_function(st, cls.closure)
                    f.owner_class = cls
                    prev = cls.ns.get(name)
                    if f.kind == "setter" and isinstance(prev, FuncVal) and prev.kind == "property":
                        # `@x.setter` after `@property x`: reading x stays the getter; assigning calls this
                        cls.ns[_SETTER + name] = f
                        continue
                    cls.ns[name] = f
                elif isinstance(st, ast.ClassDef):
                    cls.ns[name] = self.make_class(st, cls.closure)
                else:
                    try:
                        self.exec_stmt(st, fr)
                    except InterpError:
                        pass
        finally:
            self.loc = saved
        return cls.ns.get(name, _MISSING)

    def mro(self, cls):
        if isinstance(cls, TorchClass):
            return [cls] if cls.name == "Module" else [cls, TorchClass("Module")]
        if not isinstance(cls, ClassVal):
            return [cls]
        if cls.mro is not None:
            return cls.mro
        cls.mro = [cls]  # guard against cycles
        seqs = [list(self.mro(b)) for b in cls.bases if not isinstance(b, Unknown)]
        seqs.append([b for b in cls.bases if not isinstance(b, Unknown)])
        out = [cls]
        seqs = [s for s in seqs if s]
        while seqs:
            for s in seqs:
                head = s[0]
                if not any(head in t[1:] for t in seqs):
                    break
            else:
                # inconsistent: fall back to depth-first order
                for s in seqs:
                    for c in s:
                        if c not in out:
                            out.append(c)
                break
            out.append(head)
            seqs = [[c for c in s if c != head] for s in seqs]
            seqs = [s for s in seqs if s]
        cls.mro = out
        return out

    def torch_base(self, cls):
        for c in self.mro(cls):
            if isinstance(c, TorchClass):
                return c.name
            if isinstance(c, ExtVal) and (c.path in ("torch.nn.Module", "torch.nn.modules.module.Module") or
                                          c.path.endswith("LightningModule")):
                return "Module"  # pytorch-lightning modules are nn.Modules
        return None

    def class_attr(self, cls, name, start_after=None):
        """(value, defining class) of a class attribute through the MRO."""
        if start_after is None and type(cls) is ClassVal:
            key = (id(cls), name)
            r = self._acache.get(key)
            if r is None:
                r = self._acache[key] = self._class_attr(cls, name, None)
            return r
        return self._class_attr(cls, name, start_after)

    def _class_attr(self, cls, name, start_after):
        seq = self.mro(cls)
        if start_after is not None:
            try:
                seq = seq[seq.index(start_after) + 1:]
            except ValueError:
                seq = []
        for i, c in enumerate(seq):
            if isinstance(c, ClassVal):
                v = self.class_own(c, name)
                if v is not _MISSING:
                    return v, c
            elif isinstance(c, TorchClass):
                if c.name == "Module" and name not in _MODULE_CLASS_ATTRS:
                    # a plain mixin after nn.Module in the MRO (`class Encoder(ResNet, EncoderMixin)`):
                    # torch's Module does not define the name, so Python finds it in the mixin
                    for m in seq[i + 1:]:
                        if isinstance(m, ClassVal):
                            v = self.class_own(m, name)
                            if v is not _MISSING:
                                return v, m
                return _MISSING, c
        return _MISSING, None

    # ------------------------------------------------------------ calls
    def call(self, fn, args, kwargs, node=None):
        t = type(fn)
        if t is FuncVal:
            return self.call_func(fn, args, kwargs)
        if t is BoundMethod:
            f = fn.func
            if isinstance(f, FuncVal):
                return self.call_func(f, [fn.obj] + list(args), kwargs)
            return self.call(f, [fn.obj] + list(args), kwargs, node)
        if t is ClassVal:
            return self.instantiate(fn, args, kwargs)
        if t is TorchClass:
            return torchlib.make_torch_module(self, fn.name, args, kwargs)
        if t is PartialVal:
            kw = dict(fn.kwargs)
            kw.update(kwargs)
            return self.call(fn.func, fn.args + list(args), kw, node)
        if t is ExtVal:
            return torchlib.call_ext(self, fn.path, args, kwargs)
        if t is BuiltinFn:
            return fn.impl(args, kwargs)
        if t is PyMethod:
            return self.call_pymethod(fn, args, kwargs)
        if t is TensorMethod:
            return torchlib.tensor_method(self, fn.tensor, fn.name, args, kwargs)
        if t is InstanceVal:
            return self.call_instance(fn, args, kwargs)
        if t is NTupleClass:
            return self.make_ntuple(fn, args, kwargs)
        if t is ExcClass:
            msg = args[0] if args and isinstance(args[0], str) else ""
            return ("__exc__", fn.name, msg)
        if t is SuperVal:
            raise InterpError("calling super object")
        if fn in PY_TYPES if isinstance(fn, type) else False:
            return self.builtins["__convert__"](fn, args, kwargs)
        if isinstance(fn, Unknown):
            return torchlib.unknown_call(self, fn.why or "an unknown function", args, kwargs)
        raise InterpError(f"cannot call {self.describe(fn)}")

    def call_func(self, fn, args, kwargs):
        if fn.name in _TELEMETRY:
            return None
        if self._imported_effects:  # by the time a function runs, the imports before it have run
            self.flush_imported_effects()
        self.charge()
        self.depth += 1
        saved = self.loc
        if self.depth > MAX_DEPTH:
            self.depth -= 1
            raise InterpError(f"calls nested too deep in {fn.name}")
        try:
            fr = Frame({}, fn.closure, fn.module, fn)
            self.bind_args(fn, args, kwargs, fr)
            if fn.is_lambda:
                return self.eval(fn.node.body, fr)
            self.calls.append(fr)
            try:
                self.exec_block(fn.node.body, fr)
            except ReturnSignal as r:
                return r.value
            finally:
                self.calls.pop()
            return None
        finally:
            self.depth -= 1
            self.loc = saved

    def bind_args(self, fn, args, kwargs, fr):
        a = fn.node.args
        pos = [p.arg for p in a.posonlyargs] + [p.arg for p in a.args]
        v = fr.vars
        nd = len(fn.defaults)
        first_default = len(pos) - nd
        args = list(args)
        for i, name in enumerate(pos):
            if i < len(args):
                v[name] = args[i]
            elif name in kwargs:
                v[name] = kwargs[name]
            elif i >= first_default:
                v[name] = fn.defaults[i - first_default]
            else:
                v[name] = Unknown(f"argument {name}")
                self.warn(f"{fn.name}() called without argument '{name}'")
        if pos:
            fr.args0 = v.get(pos[0], _MISSING)
        extra = args[len(pos):]
        if a.vararg:
            v[a.vararg.arg] = tuple(extra)
        elif extra:
            self.warn(f"{fn.name}() given {len(extra)} extra positional argument(s)")
        used = set(pos[:len(args)]) | set(pos)
        for p in a.kwonlyargs:
            if p.arg in kwargs:
                v[p.arg] = kwargs[p.arg]
            elif p.arg in fn.kwdefaults:
                v[p.arg] = fn.kwdefaults[p.arg]
            else:
                v[p.arg] = Unknown(f"argument {p.arg}")
                self.warn(f"{fn.name}() called without keyword argument '{p.arg}'")
            used.add(p.arg)
        rest = {k: x for k, x in kwargs.items() if k not in used}
        if a.kwarg:
            v[a.kwarg.arg] = rest
        elif rest:
            self.warn(f"{fn.name}() got unexpected keyword argument(s) {', '.join(sorted(rest))}")

    def zero_arg_super(self, fr):
        f = fr
        while f is not None and f.func is None:
            f = f.parent
        if f is None or f.func.owner_class is None:
            raise InterpError("super() outside a method")
        obj = f.args0
        if obj is _MISSING:
            raise InterpError("super() without self")
        return SuperVal(f.func.owner_class, obj)

    def instantiate(self, cls, args, kwargs):
        if cls.nt_fields is not None:
            return self.make_ntuple(NTupleClass(cls.name, cls.nt_fields, {}), args, kwargs, cls)
        if len(args) == 1 and not kwargs and self._is_enum(cls):
            return self._enum_member(cls, args[0])
        tb = self.torch_base(cls)
        kind = "module" if tb is not None else "object"
        key = _memo_key((cls, tuple(args), tuple(sorted(kwargs.items())))) if tb is not None else None
        hit = self._memo.get(key) if key is not None else None
        if hit is not None and hit[1] is not None:
            # the same module class built again from the same plain arguments: copy the earlier build
            return torchlib.clone_module(hit[1])
        inst = self._instantiate(cls, tb, kind, args, kwargs)
        if key is not None:
            # keep a pristine copy only from the second build on (most builds are unique)
            self._memo[key] = ((cls, args, kwargs), torchlib.clone_module(inst) if hit is not None else None)
        return inst

    def _instantiate(self, cls, tb, kind, args, kwargs):
        inst = InstanceVal(cls, kind, tb)
        inst.line = self.loc[1]
        inst.file = self.loc[0]
        if tb is not None:
            torchlib.init_module_state(self, inst)
        init, owner = self.class_attr(cls, "__init__")
        if isinstance(init, FuncVal):
            self.call_func(init, [inst] + list(args), dict(kwargs))
        elif isinstance(owner, TorchClass) and owner.name != "Module":
            torchlib.torch_init(self, inst, owner.name, list(args), dict(kwargs))
        elif cls.dataclass_fields is not None or self._inherited_dataclass(cls):
            self.dataclass_init(inst, args, kwargs)
        return inst

    def _is_enum(self, cls):
        return any(isinstance(c, ExtVal) and c.path in ("enum.Enum", "enum.IntEnum", "enum.StrEnum")
                   for c in self.mro(cls))

    def enum_members(self, cls):
        """The members of an Enum class in definition order (each is its value, see `_enum_member`)."""
        out = []
        for c in reversed(self.mro(cls)):
            if isinstance(c, ClassVal) and c.node is not None:
                for st in c.node.body:
                    if isinstance(st, ast.Assign):
                        for t in st.targets:
                            if isinstance(t, ast.Name) and not t.id.startswith("_"):
                                v = self.class_own(c, t.id)
                                if v is not _MISSING and not isinstance(v, (FuncVal, ClassVal)) and v not in out:
                                    out.append(v)
        return out

    def _enum_member(self, cls, value):
        """`Format('NHWC')`: the member of that value.  Members are their values (`Format.NHWC` is
        'NHWC': a `str, Enum` compares equal to its value), so this is the value if it is one."""
        if isinstance(value, (Unknown, Sym)):
            return Unknown(f"{cls.name} member")
        for c in self.mro(cls):
            if isinstance(c, ClassVal) and c.node is not None:
                for st in c.node.body:
                    if isinstance(st, ast.Assign):
                        for t in st.targets:
                            if isinstance(t, ast.Name) and not t.id.startswith("_"):
                                v = self.class_own(c, t.id)
                                if v is not _MISSING and type(v) is type(value) and v == value:
                                    return v
        raise UserRaise("ValueError", f"{value!r} is not a valid {cls.name}", self.where())

    def _inherited_dataclass(self, cls):
        for c in self.mro(cls):
            if isinstance(c, ClassVal) and c.dataclass_fields is not None:
                return True
        return False

    def dataclass_init(self, inst, args, kwargs):
        fields = None
        for c in self.mro(inst.cls):
            if isinstance(c, ClassVal) and c.dataclass_fields is not None:
                fields = c.dataclass_fields
                break
        for i, (name, default) in enumerate(fields or []):
            if i < len(args):
                inst.attrs[name] = args[i]
            elif name in kwargs:
                inst.attrs[name] = kwargs[name]
            elif default is not None:
                inst.attrs[name] = self.eval(default, Frame({}, inst.cls.closure, inst.cls.module))
            else:
                inst.attrs[name] = Unknown(f"field {name}")
        post, _ = self.class_attr(inst.cls, "__post_init__")
        if isinstance(post, FuncVal):  # the dataclass __init__ ends by calling it
            self.call_func(post, [inst], {})

    def make_ntuple(self, ntc, args, kwargs, cls=None):
        vals = list(args)
        for f in ntc.fields[len(vals):]:
            if f in kwargs:
                vals.append(kwargs[f])
            elif cls is not None and f in (cls.nt_defaults or {}):
                vals.append(self.eval(cls.nt_defaults[f], Frame({}, cls.closure, cls.module)))
            elif f in ntc.defaults:
                vals.append(ntc.defaults[f])
            else:
                vals.append(None)
        return NTuple(vals, ntc)

    def call_instance(self, inst, args, kwargs):
        if inst.kind != "module":
            f, _ = self.class_attr(inst.cls, "__call__")
            if isinstance(f, FuncVal):
                return self.call_func(f, [inst] + list(args), kwargs)
            raise InterpError(f"{inst.cls.name} object is not callable")
        return torchlib.call_module(self, inst, list(args), dict(kwargs))

    def call_pymethod(self, m, args, kwargs):
        obj, name = m.obj, m.name
        if isinstance(obj, list) and name == "sort":
            key = kwargs.get("key")
            rev = bool(kwargs.get("reverse", False))
            if key is None and _is_plain(obj):
                obj.sort(reverse=rev)
                return None
            keys = [self.call(key, [x], {}) if key is not None else x for x in obj]
            if not _is_plain(keys):
                raise InterpError("sort by unknown key")
            order = sorted(range(len(obj)), key=lambda i: keys[i], reverse=rev)
            obj[:] = [obj[i] for i in order]
            return None
        if any(_has_big_int(a) for a in list(args) + list(kwargs.values())) and name not in ("index", "count"):
            raise InterpError(f"{type(obj).__name__}.{name} with a huge size not followed")
        if isinstance(obj, str) and name in ("format",) and _big_width(obj):
            raise InterpError("format width too large to follow")
        if name == "format" and isinstance(obj, str):
            if not all(_is_plain(a) for a in args) or not all(_is_plain(v) for v in kwargs.values()):
                return Unknown("format of unknown values")
            if "." in obj.replace("{:.", "").replace(":.", "") and "{" in obj and _fmt_has_attr(obj):
                return Unknown("format with attribute access")
        self._check_method_size(obj, name, args)
        try:
            r = getattr(obj, name)(*args, **kwargs)
        except (TypeError, ValueError, KeyError, IndexError, AttributeError) as e:
            raise InterpError(f"{type(obj).__name__}.{name}: {e}") from None
        if isinstance(r, (type({}.items()), type({}.keys()), type({}.values()))):
            return list(r)
        return r

    def _check_method_size(self, obj, name, args):
        """The size of what a real str/list/set method is about to make, before it makes it."""
        if name in _HASHING_METHODS:
            for a in args:
                if isinstance(a, (tuple, list)):
                    _is_plain(a)  # hashing or comparing it must stay bounded
        if isinstance(obj, str):
            if name == "replace" and len(args) >= 2 and isinstance(args[0], str) and isinstance(args[1], str):
                n = obj.count(args[0]) if args[0] else len(obj) + 1
                self.check_size(len(obj) + n * (len(args[1]) - len(args[0])))
            elif name == "join" and args and isinstance(args[0], (list, tuple)):
                self.check_size(sum(len(x) if isinstance(x, str) else 0 for x in args[0])
                                + len(obj) * len(args[0]))
            elif name in ("center", "ljust", "rjust", "zfill") and args and isinstance(args[0], int):
                self.check_size(args[0])
            else:
                self.charge(len(obj) >> 4)
        elif isinstance(obj, (list, set, dict)) and name in ("extend", "update", "union") and args and \
                isinstance(args[0], (list, tuple, set, frozenset, dict, str)):
            self.check_size(len(obj) + len(args[0]))

    # ------------------------------------------------------------ attributes
    def getattr(self, obj, name):
        t = type(obj)
        if t is InstanceVal:
            return self.inst_getattr(obj, name)
        if t is TensorVal:
            return torchlib.tensor_getattr(self, obj, name)
        if t is ExtVal:
            return torchlib.ext_getattr(self, obj, name)
        if t is SourceModule:
            if name == "__dict__":
                return self.module_dict(obj)
            v = self.mod_lookup(obj, name)
            if v is _MISSING:
                raise InterpError(f"module {self.display(obj.path)} has no attribute {name}")
            return v
        if t is ClassVal:
            if name in ("__name__", "__qualname__"):
                return obj.name
            if name == "apply" and self._is_autograd_function(obj):
                return BuiltinFn(f"{obj.name}.apply", lambda a, k: self._autograd_apply(obj, a, k))
            if name == "__module__":
                return obj.module.values.get("__name__")
            v, owner = self.class_attr(obj, name)
            if v is _MISSING:
                if isinstance(owner, TorchClass):
                    return torchlib.torch_class_attr(self, owner, name)
                if name in ("__init__", "__module__", "__qualname__", "__doc__"):
                    return Unknown(name)
                return Unknown(f"{obj.name}.{name}")
            if isinstance(v, FuncVal):
                if v.kind == "classmethod":
                    return BoundMethod(v, obj)
            return v
        if t is TorchClass:
            return torchlib.torch_class_attr(self, obj, name)
        if t is SuperVal:
            return self.super_getattr(obj, name)
        if isinstance(obj, Unknown):
            return obj
        if t is TextFile:
            return _file_method(obj, name)
        if isinstance(obj, NTuple):
            if name in obj._ntclass.fields:
                return obj[obj._ntclass.fields.index(name)]
            if name == "_fields":
                return tuple(obj._ntclass.fields)
            if name == "_replace":  # a copy with some fields changed (EfficientNet's block arguments)
                def _replace(a, k, obj=obj):
                    bad = [f for f in k if f not in obj._ntclass.fields]
                    if bad or a:
                        raise InterpError(f"_replace() of fields {bad or a} not in {obj._ntclass.name}")
                    return NTuple([k.get(f, v) for f, v in zip(obj._ntclass.fields, obj)], obj._ntclass)
                return BuiltinFn("_replace", _replace)
            if name == "_asdict":
                return BuiltinFn("_asdict", lambda a, k, obj=obj: dict(zip(obj._ntclass.fields, obj)))
        if isinstance(obj, Sym):
            raise InterpError(f"attribute {name} of a size")
        if t is FuncVal:
            if name == "__name__":
                return obj.name
            return Unknown(f"function attribute {name}")
        if t is PartialVal:
            if name == "func":
                return obj.func
            if name == "args":
                return tuple(obj.args)
            if name == "keywords":
                return dict(obj.kwargs)
        if t is BoundMethod and name == "__func__":
            return obj.func
        if isinstance(obj, tuple) and len(obj) == 3 and obj and obj[0] == "__exc__":
            return Unknown("exception attribute")
        if not name.startswith("_"):
            for typ, names in _SAFE_METHODS.items():
                if type(obj) is typ or (isinstance(obj, typ) and typ not in (int,)):
                    if name in names:
                        return PyMethod(obj, name)
            if isinstance(obj, (int, float)) and name in ("real", "imag"):
                return getattr(obj, name)
            if name == "value" and type(obj) in (str, int):  # an Enum member is read as its value
                return obj
        if isinstance(obj, dict) and name in obj:
            return obj[name]  # a dict standing for a config namespace (argparse args, a config object)
        if name == "__class__":
            return type(obj) if _is_plain(obj) else Unknown("class")
        if name == "__name__" and isinstance(obj, (TorchClass,)):
            return obj.name
        raise InterpError(f"attribute '{name}' of {self.describe(obj)} not followed")

    def _is_autograd_function(self, cls):
        return any(isinstance(c, ExtVal) and c.path in ("torch.autograd.Function", "torch.autograd.function.Function")
                   for c in self.mro(cls))

    def _autograd_apply(self, cls, args, kwargs):
        """`MyFunction.apply(*args)`: its forward, with a context object that records what it is given
        (the backward is never needed to know shapes and parameters)."""
        f, _ = self.class_attr(cls, "forward")
        if not isinstance(f, FuncVal):
            raise InterpError(f"{cls.name}.apply without a forward")
        ctx = InstanceVal(TorchClass("FunctionCtx"), "object")
        return self.call_func(f, [ctx] + list(args), kwargs)

    def inst_getattr(self, inst, name, fallback=True):
        v = inst.attrs.get(name, _MISSING)
        if v is not _MISSING:
            return v
        if type(inst.cls) is TorchClass and inst.cls.name == "FunctionCtx":
            if name == "saved_tensors":
                return Unknown("saved tensors")
            return BuiltinFn(f"ctx.{name}", lambda a, k: None)  # save_for_backward, mark_dirty ...
        if name == "__class__":
            return inst.cls
        if name == "__module__":
            return inst.cls.module.values.get("__name__") if isinstance(inst.cls, ClassVal) else "torch.nn"
        if name == "__dict__":
            return dict(inst.attrs)
        cv, owner = self.class_attr(inst.cls, name)
        if cv is not _MISSING:
            if isinstance(cv, FuncVal):
                if cv.kind == "staticmethod":
                    return cv
                if cv.kind == "classmethod":
                    return BoundMethod(cv, inst.cls)
                if cv.kind == "property":
                    return self.call_func(cv, [inst], {})
                return BoundMethod(cv, inst)
            return cv
        if inst.kind == "module":
            for d in (inst.params, inst.buffers, inst.modules):
                v = d.get(name, _MISSING)
                if v is not _MISSING:
                    return v
            return torchlib.module_builtin_attr(self, inst, name)
        if name == "__doc__" and isinstance(inst.cls, ClassVal):
            return ast.get_docstring(inst.cls.node, clean=False)
        if fallback and isinstance(inst.cls, ClassVal) and not name.startswith("__"):
            hook, _ = self.class_attr(inst.cls, "__getattr__")
            if isinstance(hook, FuncVal):  # the class's own __getattr__ (`Act.RELU`, a factory's names)
                return self.call_func(hook, [inst, name], {})
        raise InterpError(f"'{inst.cls.name}' object has no attribute '{name}'")

    def super_getattr(self, sv, name):
        obj = sv.obj
        cls = obj.cls if isinstance(obj, InstanceVal) else obj
        v, owner = self.class_attr(cls, name, start_after=sv.cls)
        if v is not _MISSING:
            if isinstance(v, FuncVal):
                if v.kind == "staticmethod":
                    return v
                if v.kind == "classmethod":
                    return BoundMethod(v, cls)
                if v.kind == "property":
                    return self.call_func(v, [obj], {})
                return BoundMethod(v, obj)
            return v
        if isinstance(owner, TorchClass) and isinstance(obj, InstanceVal):
            return torchlib.torch_super_method(self, obj, owner.name, name)
        if name == "__getattribute__" and isinstance(obj, InstanceVal) and obj.kind != "module":
            return BuiltinFn("object.__getattribute__", lambda a, k: self.inst_getattr(obj, a[0], fallback=False))
        if name == "__init__" and isinstance(obj, InstanceVal):
            if self._inherited_dataclass(obj.cls):
                return BuiltinFn("dataclass.__init__", lambda a, k: self.dataclass_init(obj, a, k))
            return BuiltinFn("object.__init__", lambda a, k: None)
        return Unknown(f"super().{name}")

    def setattr(self, obj, name, value):
        if isinstance(obj, InstanceVal):
            if isinstance(obj.cls, ClassVal) and name not in obj.attrs:
                prop, _ = self.class_attr(obj.cls, name)
                if isinstance(prop, FuncVal) and prop.kind == "property":
                    setter, _ = self.class_attr(obj.cls, _SETTER + name)
                    if isinstance(setter, FuncVal):
                        self.call_func(setter, [obj, value], {})
                        return
            if obj.kind == "module":
                torchlib.module_setattr(self, obj, name, value)
            else:
                obj.attrs[name] = value
            return
        if isinstance(obj, ClassVal):
            obj.ns[name] = value
            self._acache.clear()
            return
        if isinstance(obj, SourceModule):  # `setattr(sys.modules[fn.__module__], name, fn)` (timm's registry)
            obj.values[name] = value
            return
        if isinstance(obj, (Unknown, TensorVal, ExtVal, FuncVal)):
            return
        raise InterpError(f"setting attribute {name} of {self.describe(obj)} not followed")

    def _loaded_module(self, name):
        """`sys.modules[__name__]` (d2l's `d2l = sys.modules[__name__]`): a module of the source already read;
        any other is not known."""
        for mod in self.loader.cache.values():
            if isinstance(mod, SourceModule) and mod.values.get("__name__") == name:
                return mod
        return Unknown(f"sys.modules[{name!r}]")

    # ------------------------------------------------------------ items
    def getitem(self, obj, idx):
        to = type(obj)
        if (to is list or to is tuple) and type(idx) is int:
            try:
                return obj[idx]
            except IndexError:
                raise InterpError(f"index {idx} out of range") from None
        if to is dict and type(idx) is str and idx in obj:
            return obj[idx]
        if isinstance(obj, TensorVal):
            return torchlib.tensor_getitem(self, obj, idx)
        if isinstance(obj, Unknown):
            return obj
        if isinstance(obj, InstanceVal):
            return torchlib.module_getitem(self, obj, idx)
        if isinstance(obj, ExtVal) and obj.path == "sys.modules" and type(idx) is str:
            return self._loaded_module(idx)
        if isinstance(obj, (ExtVal, ClassVal, TorchClass)):
            return Unknown("subscripted type")
        if isinstance(obj, (list, tuple, str, dict, range)):
            if isinstance(idx, Unknown) or isinstance(idx, Sym):
                return Unknown("index not known")
            if isinstance(idx, slice):
                if any(isinstance(x, (Unknown, Sym)) for x in (idx.start, idx.stop, idx.step)):
                    return Unknown("slice not known")
            try:
                r = obj[idx]
            except (IndexError, KeyError, TypeError) as e:
                raise InterpError(f"indexing failed: {type(e).__name__} {e}") from None
            if isinstance(obj, NTuple) and isinstance(idx, slice):
                return tuple(r)
            return r
        raise InterpError(f"indexing {self.describe(obj)} not followed")

    def setitem(self, obj, idx, value):
        if isinstance(obj, (list, dict)):
            if type(idx) is tuple:
                _is_plain(idx)
            if isinstance(idx, (Unknown, Sym)):
                raise InterpError("assignment at an unknown index")
            try:
                obj[idx] = value
            except (IndexError, TypeError) as e:
                raise InterpError(f"item assignment failed: {e}") from None
            return
        if isinstance(obj, TensorVal):
            return torchlib.tensor_setitem(self, obj, idx, value)
        if isinstance(obj, InstanceVal):
            return torchlib.module_setitem(self, obj, idx, value)
        if isinstance(obj, Unknown):
            return
        raise InterpError(f"item assignment on {self.describe(obj)} not followed")

    # ------------------------------------------------------------ iteration / truth
    def iterate(self, v):
        if isinstance(v, (list, tuple, str, range)):
            if isinstance(v, range) and len(v) > MAX_SEQ:
                raise InterpError("range too long to follow")
            self.charge(len(v) >> 4)
            return list(v)
        if isinstance(v, dict):
            return list(v.keys())
        if isinstance(v, (set, frozenset)):
            try:
                return sorted(v)
            except TypeError:
                return list(v)
        if isinstance(v, InstanceVal):
            return torchlib.module_iter(self, v)
        if isinstance(v, TensorVal):
            return torchlib.tensor_iter(self, v)
        if isinstance(v, ClassVal) and self._is_enum(v):
            return self.enum_members(v)
        if isinstance(v, TextFile):
            return v.lines()
        if isinstance(v, Unknown):
            raise InterpError("iteration over a value not known when reading the source"
                              + (f" ({v.why})" if v.why else ""))
        if isinstance(v, (type({}.items()), type({}.keys()), type({}.values()))):
            return list(v)
        raise InterpError(f"iteration over {self.describe(v)} not followed")

    def truth(self, v):
        if v is None or v is False:
            return False
        if v is True:
            return True
        t = type(v)
        if t in _TRUTHY_TYPES:
            return bool(v)
        if isinstance(v, Unknown):
            return None
        if isinstance(v, Sym):
            return None
        if t is InstanceVal:
            if v.kind == "module" and v.torch_base in ("Sequential", "ModuleList", "ModuleDict"):
                return bool(v.modules)
            f, _ = self.class_attr(v.cls, "__len__")
            if isinstance(f, FuncVal):
                return self.truth(self.call_func(f, [v], {}))
            return True
        if t is TensorVal:
            if v.values is not None and len(v.values) == 1:
                return bool(v.values[0])
            return None
        return True

    # ------------------------------------------------------------ operators
    def binop(self, op, a, b, inplace=False):
        ta, tb = type(a), type(b)
        if (ta is int or ta is float) and (tb is int or tb is float) and op in _FAST_OPS:
            if op is ast.Mult and ta is int and tb is int and a.bit_length() + b.bit_length() > 65536:
                raise InterpError("integer too large to follow")
            try:
                return _FAST_OPS[op](a, b)
            except (ZeroDivisionError, OverflowError, ValueError) as e:
                raise InterpError(f"{op.__name__}: {e}") from None
        if isinstance(a, TensorVal) or isinstance(b, TensorVal):
            return torchlib.tensor_binop(self, op, a, b, inplace)
        if isinstance(a, Unknown):
            return a
        if isinstance(b, Unknown):
            return b
        if isinstance(a, Sym) or isinstance(b, Sym):
            return _sym_binop(op, a, b)
        if isinstance(a, InstanceVal) and op is ast.Add:
            return torchlib.module_add(self, a, b, inplace)
        if op is ast.Add and isinstance(a, (str, bytes, list, tuple)) and isinstance(b, (str, bytes, list, tuple)):
            self.check_size(len(a) + len(b))
        if not (_is_simple(a) and _is_simple(b)):
            if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and op is ast.Add:
                if inplace and isinstance(a, list):
                    a.extend(b)
                    return a
                return a + b if type(a) is type(b) else Unknown("list+tuple")
            if isinstance(a, (list, tuple)) and isinstance(b, int) and op is ast.Mult:
                if len(a) * b > MAX_SEQ:
                    raise InterpError("sequence too long")
                self.charge(max(len(a) * b, 0) >> 4)
                return a * b
            if isinstance(a, dict) and isinstance(b, dict) and op is ast.BitOr:
                return {**a, **b}
            raise InterpError(f"operator {op.__name__} on {self.describe(a)} and {self.describe(b)} not followed")
        f = _BINOPS.get(op)
        if op is ast.Pow and isinstance(b, (int, float)) and abs(b) > 4096 and isinstance(a, int) and abs(a) > 1:
            raise InterpError("power too large")
        seq = (str, list, tuple, bytes)
        if op is ast.Mult and ((isinstance(a, seq) and isinstance(b, int) and len(a) * b > MAX_SEQ)
                               or (isinstance(b, seq) and isinstance(a, int) and len(b) * a > MAX_SEQ)):
            raise InterpError("sequence too long")
        if op is ast.Mult and isinstance(a, (str, bytes, list, tuple)) and isinstance(b, int):
            self.charge(max(len(a) * b, 0) >> 4)
        elif op is ast.Mult and isinstance(b, (str, bytes, list, tuple)) and isinstance(a, int):
            self.charge(max(len(b) * a, 0) >> 4)
        if op is ast.LShift and isinstance(b, int) and b > 4096:
            raise InterpError("shift too large")
        if op is ast.Mult and isinstance(a, int) and isinstance(b, int) and \
                a.bit_length() + b.bit_length() > 65536:
            raise InterpError("integer too large to follow")
        if op is ast.Pow and isinstance(a, int) and isinstance(b, int) and b > 0 and \
                a.bit_length() * b > 65536:
            raise InterpError("integer too large to follow")
        if op is ast.Mod and isinstance(a, (str, bytes)) and _has_big_int(b):
            raise InterpError("string formatting too large to follow")
        try:
            if inplace and isinstance(a, list) and op is ast.Add:
                a.extend(b)
                return a
            return f(a, b)
        except (TypeError, ZeroDivisionError, ValueError, OverflowError) as e:
            raise InterpError(f"{op.__name__}: {e}") from None

    def compare(self, op, a, b):
        ta, tb = type(a), type(b)
        if (ta is int or ta is float or ta is str) and ta is tb and op in _CMP:
            return _CMP[op](a, b)
        if op is ast.Is or op is ast.IsNot:
            if isinstance(a, Unknown) or isinstance(b, Unknown):
                if (a is None or b is None) and not (isinstance(a, Unknown) and isinstance(b, Unknown)):
                    return Unknown("is None of unknown")
                return Unknown("identity of unknown")
            r = a is b or (isinstance(a, (TorchClass, ExtVal)) and a == b)
            return r if op is ast.Is else (not r)
        if op is ast.In or op is ast.NotIn:
            if isinstance(b, Unknown) or isinstance(a, Unknown):
                return Unknown("membership of unknown")
            if isinstance(b, InstanceVal):
                hook, _ = self.class_attr(b.cls, "__contains__") if isinstance(b.cls, ClassVal) else (None, None)
                if isinstance(hook, FuncVal):
                    r = self.truth(self.call_func(hook, [b, a], {}))
                else:
                    r = a in b.modules
            elif isinstance(b, ClassVal) and self._is_enum(b):
                r = a in self.enum_members(b)
            elif isinstance(b, (list, tuple, set, frozenset, dict, str, range)):
                if isinstance(a, (tuple, list)):
                    _is_plain(a)
                try:
                    r = a in b
                except TypeError:
                    return Unknown("membership")
            else:
                return Unknown("membership")
            return r if op is ast.In else (not r)
        if isinstance(a, TensorVal) or isinstance(b, TensorVal):
            return torchlib.tensor_compare(self, op, a, b)
        if isinstance(a, Unknown) or isinstance(b, Unknown):
            return Unknown("comparison")
        if isinstance(a, Sym) or isinstance(b, Sym):
            if op in (ast.Eq, ast.NotEq):
                r = dim_eq(a, b)
                if r is None:
                    return Unknown("size comparison")
                return r if op is ast.Eq else (not r)
            d = dim_add(a, b, -1)
            if is_int(d):
                return _CMP[op](d, 0)
            return Unknown("size comparison")
        if op in (ast.Eq, ast.NotEq):
            r = _sizes_eq(a, b)
            if r is not None:
                return r if op is ast.Eq or isinstance(r, Unknown) else (not r)
            if _is_plain(a) or _is_plain(b):
                if _has_unknown(a) or _has_unknown(b):
                    return Unknown("comparison")
                r = a == b
            else:
                r = a is b or (isinstance(a, (TorchClass, ExtVal)) and a == b)
            return r if op is ast.Eq else (not r)
        try:
            return _CMP[op](a, b)
        except TypeError as e:
            raise InterpError(f"comparison: {e}") from None

    # ------------------------------------------------------------ misc
    def describe(self, v):
        if isinstance(v, InstanceVal):
            return f"{v.cls.name} object"
        if isinstance(v, (ClassVal, TorchClass)):
            return f"class {v.name}"
        if isinstance(v, FuncVal):
            return f"function {v.name}"
        if isinstance(v, ExtVal):
            return v.path
        if isinstance(v, TensorVal):
            return "tensor"
        if isinstance(v, Unknown):
            return "unknown value"
        if isinstance(v, Sym):
            return "size"
        return type(v).__name__


class _NoMemo(Exception):
    pass


def _memo_key(v):
    """A hashable key for constructor arguments made only of immutable values
    (numbers, strings, tuples, classes, functions, partials of those); None otherwise."""
    try:
        if not _small(v, 10_000):
            return None
        return _mk(v)
    except _NoMemo:
        return None


def _small(v, cap):
    """At most `cap` elements reached by walking v (shared parts counted each time they are met)."""
    stack = [v]
    n = 0
    while stack:
        x = stack.pop()
        n += 1
        if n > cap:
            return False
        if isinstance(x, (tuple, list)):
            stack.extend(x)
        elif isinstance(x, PartialVal):
            stack.extend(x.args)
            stack.extend(x.kwargs.values())
        elif isinstance(x, dict):
            stack.extend(x.values())
    return True


def _mk(v):
    t = type(v)
    if v is None or t is bool or t is int or t is str:
        return (t.__name__, v)
    if t is float:
        return ("float", repr(v))
    if t is tuple or t is list:
        return (t.__name__,) + tuple(_mk(x) for x in v)
    if t is ClassVal or t is FuncVal or t is TorchClass or t is ExtVal:
        return ("obj", id(v))
    if t is PartialVal:
        return ("partial", _mk(v.func), tuple(_mk(x) for x in v.args), tuple(sorted((k, _mk(x)) for k, x in
                                                                                      v.kwargs.items())))
    if t is str:
        return ("str", v)
    raise _NoMemo()


def _is_simple(v):
    return isinstance(v, (int, float, str, bool, type(None), bytes)) or (
        isinstance(v, (tuple, list, set, frozenset, dict)) and _is_plain(v))


def _sym_binop(op, a, b):
    if op is ast.Add:
        r = dim_add(a, b)
    elif op is ast.Sub:
        r = dim_add(a, b, -1)
    elif op is ast.Mult:
        if isinstance(a, float) or isinstance(b, float):
            fa = a if not isinstance(a, float) else (int(a) if a.is_integer() else None)
            fb = b if not isinstance(b, float) else (int(b) if b.is_integer() else None)
            r = dim_mul(fa, fb) if fa is not None and fb is not None else None
        else:
            r = dim_mul(a, b)
    elif op is ast.FloorDiv:
        r = dim_floordiv(a, b)
    elif op is ast.Div:
        r = dim_truediv(a, b)
    else:
        r = None
    return Unknown("size expression") if r is None else r


def _names(t):
    if isinstance(t, ast.Name):
        return [t.id]
    if isinstance(t, (ast.Tuple, ast.List)):
        out = []
        for e in t.elts:
            out += _names(e)
        return out
    return []


def _always_raises(stmts):
    if not stmts:
        return False
    last = stmts[-1]
    return isinstance(last, ast.Raise)


_NOOP_CALLS = frozenset(("torch._assert", "warnings.warn", "torch._C._log_api_usage_once", "print"))
# library telemetry / logging helpers that build nothing (torchvision calls one in every constructor)
_TELEMETRY = frozenset(("_log_api_usage_once", "log_api_usage_once"))
_INIT_LOOP_CACHE = {}
_MODULE_ITERS = ("modules", "named_modules", "children", "named_children", "parameters", "named_parameters")


def _is_init_loop(st):
    key = id(st)
    r = _INIT_LOOP_CACHE.get(key)
    if r is None or r[0] is not st:
        it = st.iter
        ok = (isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute) and it.func.attr in _MODULE_ITERS
              and not st.orelse and _init_only(st.body) and not _calls_a_name(st.body, set(_names(st.target))))
        r = _INIT_LOOP_CACHE[key] = (st, ok)
    return r[1]


def _calls_a_name(stmts, names) -> bool:
    """Whether the statements call one of `names` (the loop's modules): `x = block(x)` over `self.children()` is a
    forward (timm's RegStage), not an initialisation loop."""
    return bool(names) and any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in names
                               for s in stmts for n in ast.walk(s))


def _init_only(stmts):
    for s in stmts:
        if isinstance(s, ast.If):
            if not (_init_only(s.body) and _init_only(s.orelse)):
                return False
        elif isinstance(s, ast.Expr) and isinstance(s.value, ast.Call):
            f = s.value.func
            src = _src(f)
            if not (isinstance(f, ast.Attribute) and (f.attr.endswith("_") or ".init." in "." + src or
                                                       src.startswith("init."))):
                return False
        elif isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant):
            continue
        elif isinstance(s, (ast.Assign, ast.AnnAssign)):
            targets = s.targets if isinstance(s, ast.Assign) else [s.target]
            if not all(isinstance(t, ast.Name) for t in targets):
                return False
        elif isinstance(s, (ast.Pass, ast.Continue)):
            continue
        elif isinstance(s, ast.With):
            if not _init_only(s.body):
                return False
        else:
            return False
    return True


def _has_big_int(v, depth=0):
    """A size-like integer argument too large to follow (a width, a count); sizes hide in short
    argument tuples, never deep inside data, so long or deep values are not walked."""
    if isinstance(v, bool):
        return False
    if isinstance(v, int):
        return abs(v) > MAX_SEQ
    if isinstance(v, (tuple, list)) and len(v) <= 16 and depth < 2:
        return any(_has_big_int(x, depth + 1) for x in v)
    return False


def _big_width(s):
    import re
    return re.search(r"\d{7,}", s) is not None


def _fmt_has_attr(s):
    import string
    try:
        for _, field, _, _ in string.Formatter().parse(s):
            if field and ("." in field or "[" in field):
                return True
    except ValueError:
        return True
    return False


def _src(node):
    try:
        s = ast.unparse(node)
    except Exception:  # noqa: BLE001 - unparse of odd nodes
        return "?"
    return s if len(s) <= 60 else s[:57] + "..."


for _k in list(vars(Interp)):
    if _k.startswith("s_"):
        Interp._STMT[getattr(ast, _k[2:], None)] = getattr(Interp, _k)
    elif _k.startswith("e_"):
        _n = getattr(ast, _k[2:], None)
        if _n is not None:
            Interp._EXPR[_n] = getattr(Interp, _k)
Interp._STMT.pop(None, None)


def _plain_falsy(v):
    """v is a plain Python value (what the parser computed exactly) and false."""
    if v is None or type(v) in (bool, int, float, str):
        return not v
    if type(v) in (tuple, list, dict):
        return len(v) == 0
    return False

"""Reading source files: parsing, lazy top-level namespaces, import resolution.

Files are only read and parsed with :mod:`ast`; nothing is imported or executed.
"""

from __future__ import annotations

import ast
import io
import os
import re
import tokenize
import warnings

from .packages import MODELLED

_MISSING = object()
_DEFS_CACHE = {}  # id(tree) -> (tree, defs, star, effects): top-level bindings depend on the tree only


class SourceModule:
    """One parsed file.  Top-level names are evaluated lazily, on first lookup."""

    def __init__(self, path, tree, dotted=None):
        self.path = path
        self.tree = tree
        self.dotted = dotted
        self.values = {}
        self.defs = {}
        self.star = []  # ImportFrom nodes with '*'
        # module-level statements that change a name the module binds, after binding it (a registry
        # filled by `R.update(...)`, `R[k] = v`, `@R.register(...)` or a module function that writes
        # into R): run, in source order, when R is looked up, as importing the module would have
        self.effects = {}
        self.effect_ids = set()  # id() of every such statement: each runs once
        self.effect_decorators = {}  # id(def) -> indices of its decorators that register it
        # effects on a name the module imports (`@MODELS.register_module()` with MODELS from a registry
        # module, `register_block('x', X)`): (statement, that name, decorator indices); run when the
        # module is loaded, as importing it would (Interp.flush_imported_effects)
        self.outward = []
        self.side_imports = []  # import statements whose names the module never reads: imported to run
        self.done = set()
        self.evaluating = set()
        self.is_package = os.path.basename(path) == "__init__.py"
        self.values["__name__"] = dotted or os.path.splitext(os.path.basename(path))[0]
        self.values["__file__"] = os.path.abspath(path)  # for a text file beside it (stdlib's `open`)
        cached = _DEFS_CACHE.get(id(tree))
        if cached is not None and cached[0] is tree:
            self.defs = {k: list(v) for k, v in cached[1].items()}
            self.star = list(cached[2])
            self.effects = {k: list(v) for k, v in cached[3].items()}
            self.effect_ids = {id(st) for v in self.effects.values() for st in v}
            self.effect_decorators = dict(cached[4])
            self.outward = list(cached[5])
            self.side_imports = list(cached[6])
            self.effect_ids |= {id(st) for st, _, _ in self.outward}
            return
        self._pending = []
        for st in tree.body:
            self._collect(st)
        self._collect_effects()
        _DEFS_CACHE[id(tree)] = (tree, {k: list(v) for k, v in self.defs.items()}, list(self.star),
                                 {k: list(v) for k, v in self.effects.items()}, dict(self.effect_decorators),
                                 list(self.outward), list(self.side_imports))

    def __repr__(self):
        return f"<module {self.path}>"

    def _add(self, name, st):
        self.defs.setdefault(name, []).append(st)

    def statements(self, name):
        """The module-level statements that bind `name`, then those that change it, in source order."""
        stmts = self.defs.get(name)
        more = self.effects.get(name)
        if not more or stmts is None:
            return stmts
        seen = {id(st) for st in stmts}
        return sorted(stmts + [st for st in more if id(st) not in seen], key=lambda st: (st.lineno, st.col_offset))

    def _collect(self, st):
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            self._add(st.name, st)
            if st.decorator_list:
                self._pending.append(st)
        elif isinstance(st, ast.Assign):
            for t in st.targets:
                for n in _target_names(t):
                    self._add(n, st)
                if not isinstance(t, ast.Name):
                    self._pending.append(st)
        elif isinstance(st, (ast.AnnAssign, ast.AugAssign)):
            if isinstance(st.target, ast.Name) and (not isinstance(st, ast.AnnAssign) or st.value is not None):
                self._add(st.target.id, st)
            elif isinstance(st, ast.AugAssign):
                self._pending.append(st)
        elif isinstance(st, ast.Expr) and isinstance(st.value, ast.Call):
            self._pending.append(st)
        elif isinstance(st, ast.Import):
            for a in st.names:
                self._add(a.asname or a.name.split(".")[0], st)
        elif isinstance(st, ast.ImportFrom):
            for a in st.names:
                if a.name == "*":
                    self.star.append(st)
                else:
                    self._add(a.asname or a.name, st)
        elif isinstance(st, ast.If):
            for s in st.body:
                self._collect(s)
            for s in st.orelse:
                self._collect(s)
        elif isinstance(st, ast.Try) or type(st).__name__ == "TryStar":
            for s in st.body:
                self._collect(s)
            for h in st.handlers:
                for s in h.body:
                    self._collect(s)
            for s in st.orelse + st.finalbody:
                self._collect(s)
        elif isinstance(st, ast.With):
            for s in st.body:
                self._collect(s)


    def _collect_effects(self):
        own = {n for n, sts in self.defs.items()
               if any(not isinstance(st, (ast.Import, ast.ImportFrom)) for st in sts)}
        imported = {n for n in self.defs if n not in own}
        writes = {}  # module function -> module-level names its body changes
        for st in self._pending:
            if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                roots = [_root(d) for d in st.decorator_list]
            elif isinstance(st, ast.Expr):
                roots = [_root(st.value.func)]
            elif isinstance(st, ast.Assign):
                roots = [_root(t) for t in st.targets if not isinstance(t, ast.Name)]
            else:
                roots = [_root(st.target)]
            names = set()
            outward = [i for i, r in enumerate(roots) if r in imported]
            if outward:
                self.outward.append((st, roots[outward[0]], outward))
                self.effect_ids.add(id(st))
            for i, r in enumerate(roots):
                if r is None or r not in own:
                    continue
                fns = [d for d in self.defs[r] if isinstance(d, (ast.FunctionDef, ast.AsyncFunctionDef))]
                if fns:  # `register(X)`, `@register('name')`: the names that function writes into
                    if r not in writes:
                        writes[r] = set().union(*(_written_globals(f) for f in fns)) & own
                    hit = writes[r]
                elif not (isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and r == st.name):
                    hit = {r}
                else:
                    hit = set()
                if hit and isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    self.effect_decorators.setdefault(id(st), []).append(i)
                names |= hit
            for n in sorted(names):
                self.effects.setdefault(n, []).append(st)
                self.effect_ids.add(id(st))
        del self._pending
        if not self.is_package and self.outward is not None:
            used = {n.id for n in ast.walk(self.tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
            used |= {_root(n) for n in ast.walk(self.tree) if isinstance(n, ast.Attribute)}
            for st in self.tree.body:
                if isinstance(st, ast.ImportFrom) and st.level and all(
                        a.name != "*" and (a.asname or a.name) not in used for a in st.names):
                    self.side_imports.append(st)


def _root(node):
    """The name an expression starts from: `R` of `R.a[k].f(...)`."""
    while True:
        if isinstance(node, ast.Call):
            node = node.func
        elif isinstance(node, (ast.Attribute, ast.Subscript)):
            node = node.value
        elif isinstance(node, ast.Name):
            return node.id
        else:
            return None


def _written_globals(fn):
    """Names a function's body changes without binding them locally: `R[k] = v`, `R.update(...)`,
    `R.append(...)`, `global R` (a guess at module-level names; the caller keeps the module's own)."""
    local = {a.arg for a in ast.walk(fn.args) if isinstance(a, ast.arg)}
    declared = set()
    out = set()
    for n in ast.walk(fn):
        if isinstance(n, ast.Global):
            declared.update(n.names)
        elif isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            local.add(n.id)
        elif isinstance(n, (ast.Assign, ast.AugAssign)):
            for t in (n.targets if isinstance(n, ast.Assign) else [n.target]):
                if isinstance(t, (ast.Subscript, ast.Attribute)):
                    r = _root(t)
                    if r:
                        out.add(r)
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in _MUTATORS:
            r = _root(n.func.value)
            if r:
                out.add(r)
    return (out - local) | declared


_MUTATORS = frozenset({"update", "append", "extend", "add", "setdefault", "insert", "register", "__setitem__"})


def _target_names(t):
    if isinstance(t, ast.Name):
        return [t.id]
    if isinstance(t, (ast.Tuple, ast.List)):
        out = []
        for e in t.elts:
            out += _target_names(e.value if isinstance(e, ast.Starred) else e)
        return out
    return []


_AST_CACHE = {}
_WORD = re.compile(rb"\w+")


class SourceTooLarge(ValueError):
    """A source whose syntax tree alone would outgrow the parse's memory budget."""


def _check_encoding(data: bytes, path: str) -> None:
    """Refuse, as Python's import does, a file that is not text in its declared encoding (UTF-8 unless a
    coding cookie says otherwise): ast.parse of the bytes lets a bad byte in a comment pass."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        data.decode(encoding)
    except (SyntaxError, LookupError) as e:
        raise SyntaxError(str(e).split("\n")[0], (path, 1, 0, None)) from None
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise SyntaxError(f"byte {data[e.start]:#04x} is not {encoding} text (no other encoding declared)",
                          (path, line, 0, None)) from None


class Loader:
    """Finds and parses the files of the entry's package (cached per path).

    Parsed trees are shared between loaders while the file is unchanged
    (same size and mtime); evaluated namespaces never are."""

    MAX_BYTES = 4_000_000
    # ast.parse holds ~900 bytes per literal item: a 1.3M-item list grew the process by 1.1 GB
    # inside ast.parse, before any budget could look.  Words bound the tree's nodes from below;
    # the largest module torch ships has 117k.
    MAX_WORDS = 400_000

    def __init__(self, packages=None):
        self.cache = {}
        self._tops = {}
        self.packages = packages  # a packages.PackageFinder: installed packages read from their source

    def load(self, path):
        path = os.path.abspath(path)
        m = self.cache.get(path)
        if m is not None:
            return m
        st = os.stat(path)
        if st.st_size > self.MAX_BYTES:
            raise OSError(f"file too large ({st.st_size} bytes)")
        key = (path, st.st_size, st.st_mtime_ns)
        tree = _AST_CACHE.get(key)
        if tree is None:
            with open(path, "rb") as f:
                data = f.read()
            words = _WORD.subn(b"", data)[1]
            if words > self.MAX_WORDS:
                raise SourceTooLarge(f"{words} names and literals, more than the {self.MAX_WORDS} "
                                     f"whose syntax tree fits the parse's memory budget")
            _check_encoding(data, path)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # a user's invalid escape sequences are not ours to report
                tree = ast.parse(data, filename=path)
            if len(_AST_CACHE) > 512:
                _AST_CACHE.clear()
                _DEFS_CACHE.clear()
            _AST_CACHE[key] = tree
        m = SourceModule(path, tree, self.dotted_name(path))
        self.cache[path] = m
        return m

    @staticmethod
    def package_root(path):
        """The directory holding the top-level package of path (or path's own dir)."""
        d = os.path.dirname(os.path.abspath(path))
        top = None
        while os.path.isfile(os.path.join(d, "__init__.py")):
            top = d
            parent = os.path.dirname(d)
            if parent == d:
                break
            d = parent
        if top is None:
            return os.path.dirname(os.path.abspath(path))
        return os.path.dirname(top)

    def _top_of(self, path):
        """The top-level package `path` belongs to (cached: asked at every import)."""
        top = self._tops.get(path)
        if top is None:
            top = self._tops[path] = self.dotted_name(path).split(".")[0]
        return top

    def dotted_name(self, path):
        root = self.package_root(path)
        rel = os.path.relpath(os.path.abspath(path), root)
        parts = rel[:-3].split(os.sep) if rel.endswith(".py") else rel.split(os.sep)
        if parts and parts[-1] == "__init__":
            parts = parts[:-1]
        return ".".join(parts)

    @staticmethod
    def _module_file(base_dir, parts):
        p = os.path.join(base_dir, *parts) if parts else base_dir
        if parts and os.path.isfile(p + ".py"):
            return p + ".py"
        if os.path.isfile(os.path.join(p, "__init__.py")):
            return os.path.join(p, "__init__.py")
        return None

    def resolve(self, from_path, module, level):
        """File for an import of ``module`` (dotted, may be '') at ``level`` from from_path, or None."""
        parts = module.split(".") if module else []
        if level:
            d = os.path.dirname(os.path.abspath(from_path))
            for _ in range(level - 1):
                d = os.path.dirname(d)
            return self._module_file(d, parts)
        if not parts:
            return None
        if parts[0] in MODELLED and parts[0] != self._top_of(from_path):
            # torch, numpy ... are answered by the model wherever the file sits: a file parsed in place in
            # site-packages (torchvision's models/resnet.py) would otherwise find torch's own source beside
            # it.  A modelled package's own files still read each other (torchvision.ops from its models)
            return None
        # absolute: the file's own package tree, then a sibling file next to it
        root = self.package_root(from_path)
        f = self._module_file(root, parts)
        if f:
            return f
        here = os.path.dirname(os.path.abspath(from_path))
        if here != root:
            f = self._module_file(here, parts)
            if f:
                return f
        # a namespace package (a folder without __init__.py) that the file sits in: `vit_pytorch/t2t.py`
        # importing `vit_pytorch.vit` finds it from the folder above, as Python would from sys.path
        d = here
        for _ in range(4):
            if os.path.basename(d) == parts[0]:
                return self._module_file(os.path.dirname(d), parts)
            parent = os.path.dirname(d)
            if parent == d:
                break
            d = parent
        if self.packages is not None:
            return self.packages.find(parts)
        return None

    def submodule_file(self, pkg_module, name):
        if not pkg_module.is_package:
            return None
        return self._module_file(os.path.dirname(pkg_module.path), [name])

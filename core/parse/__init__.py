"""Static parser: reads human-written PyTorch model code and produces archgraph/1
designs *without importing or executing it*.

Public API
----------
``parse_source(path, entry, args=None, inputs=None) -> ParseResult``
    ``entry`` names a class (an ``nn.Module`` subclass) or a builder function in
    the file; ``args`` are its keyword arguments; ``inputs`` is one
    ``(shape, dtype)`` per forward argument (shape entries are ints or symbol
    names).  Without ``inputs`` the inputs are symbolic: dim 0 is ``"B"``, and
    the rest is inferred from the first layer that consumes the input
    (``Conv2d`` -> ``["B", C, "H", "W"]``, ``Conv1d`` -> ``["B", C, "L"]``,
    ``Linear`` -> ``["B", F]``, ``Embedding`` -> ``["B", "T"]`` int64,
    recurrent / attention layers -> ``["B", "T", F]`` (batch_first) or
    ``["T", "B", F]``).
``discover_modules(path) -> list[str]``
    ``nn.Module`` subclasses whose constructor needs no argument.  For a file:
    class names.  For a folder: ``"relative/file.py:ClassName"`` entries.
``ParseResult`` (``.design``, ``.warnings``), ``ParseWarning`` (``file``,
``line``, ``message``), ``ParseFailure`` (one line naming the file and reason).

What could not be followed is a warning naming ``file:line``; it is also kept
in ``design["meta"]["parser_warnings"]`` as ``{"line": "file:line",
"message": ...}`` for the verifier's ``parse.unfollowed`` finding.
"""

from __future__ import annotations

import ast
import gc
import os
import re
import sys
from dataclasses import dataclass, field

from ..ops import OP_TABLE
from ..ops.base import DTYPE_NAMES, dtype_named
from . import torch as torchlib
from .graph import Graph
from .interp import MEMORY_LIMIT, TIME_LIMIT, Interp, _rss
from .libs.hf import config_class_of
from .packages import PackageFinder
from .source import Loader, SourceTooLarge
from .values import (
    BoundMethod,
    ClassVal,
    FuncVal,
    InstanceVal,
    InterpError,
    PartialVal,
    Sym,
    TensorVal,
    TooCostly,
    TorchClass,
    Unknown,
    UserRaise,
    is_int,
)

__all__ = ["parse_source", "discover_modules", "ParseResult", "ParseWarning", "ParseFailure", "design_params",
           "parse_input_spec"]

IGNORED_BUILDER_ARGS = ("weights", "progress", "pretrained", "pretrained_backbone", "weights_backbone")


class ParseFailure(Exception):
    """NAME not found, the file unreadable, or nothing of NAME recognised (always one line)."""

    def __init__(self, message):
        super().__init__(" ".join(str(message).split()))


@dataclass
class ParseWarning:
    file: str
    line: int
    message: str

    def __str__(self):
        return f"{self.file}:{self.line}: {self.message}"


@dataclass
class ParseResult:
    design: dict
    warnings: list = field(default_factory=list)

    def to_dict(self) -> dict:
        return self.design


INPUT_FORM = ("--input takes SHAPE[:DTYPE], one per forward argument: sizes separated by commas, each an integer "
              "or a symbol (B, T, H, W; a lone size is a symbol only with a capital), e.g. 2,3,32,32 or B,16:int64")
_SIZES_BY_X = re.compile(r"\d+(x\d+)+")  # 2x3x32x32


def parse_input_spec(spec) -> tuple:
    """``"2,3,32,32"`` / ``"2,16:int64"`` / ``"B,3,H,W"`` -> (shape, dtype); tuples pass through.

    A symbol is an identifier (SPEC: any name); a lone lowercase word (``abc``) is refused, being far more
    often a mistyped value than a 1-d input of symbolic size (write ``B`` for that)."""
    if isinstance(spec, (tuple, list)) and len(spec) == 2 and isinstance(spec[0], (list, tuple)):
        shape, dtype = spec
        return [d if isinstance(d, str) else int(d) for d in shape], str(dtype or "float32")
    if not isinstance(spec, str):
        raise ParseFailure(f"input shape {spec!r} is not SHAPE[:DTYPE]")
    shown = repr(spec[:60] + ("…" if len(spec) > 60 else ""))
    text, _, dtype = spec.strip().partition(":")
    dtype = dtype.strip() or "float32"
    if dtype_named(dtype) is None:
        raise ParseFailure(f"input {shown}: unknown dtype {dtype[:30]!r} (one of {', '.join(sorted(DTYPE_NAMES))})")
    dtype = dtype_named(dtype)
    shape = []
    parts = []
    for part in text.split(","):
        part = part.strip()
        parts.extend(part.split("x") if _SIZES_BY_X.fullmatch(part) else [part])
    for part in parts:
        if not part:
            continue
        if part.isascii() and part.lstrip("-").isdigit():  # ascii: "²".isdigit() holds, int("²") fails
            if len(part.lstrip("-")) > 19:
                raise ParseFailure(f"input {shown}: size {part[:30]}… is past int64")
            v = int(part)
            if v < 0:
                raise ParseFailure(f"input {shown}: negative size {v}")
            shape.append(v)
        elif part.isascii() and part.isidentifier() and (part[0].isupper() or len(parts) > 1):
            shape.append(part)
        else:
            raise ParseFailure(f"input {shown}: size {part[:30]!r} is neither an integer nor a symbol; {INPUT_FORM}")
    if not shape:
        raise ParseFailure(f"input {shown}: no sizes; {INPUT_FORM}")
    return shape, dtype


def design_params(design):
    """Parameter count of a design (shared weights once); None when a size is unknown.

    The op table's count (core/ops), as the verifier and the cost make it.  A node that shares
    another node's weight counts only what it does not share: nothing when both are the same op,
    else its own bias (a tied LM head keeps its own bias)."""
    from .torch.optable import own_bias_count, param_count
    ops = {n["id"]: n["op"] for n in design.get("nodes", [])}
    total = 0
    for n in design.get("nodes", []):
        args = n.get("args") or {}
        if n.get("parametrize") == "weight_norm":  # its magnitudes, one per slice of dim 0, are parameters too
            args = dict(args, weight_norm=True)
        if n.get("shares"):
            if ops.get(n["shares"]) == n["op"]:
                continue
            c = own_bias_count(n["op"], args)
        else:
            c = param_count(n["op"], args)
        if c is None:
            return None
        total += c
    return total


def _display_fn(given):
    given_dir = os.path.dirname(given)
    abs_dir = os.path.dirname(os.path.abspath(given))

    def display(p):
        if os.path.abspath(p) == os.path.abspath(given):
            return given
        rel = os.path.relpath(os.path.abspath(p), abs_dir)
        return os.path.normpath(os.path.join(given_dir, rel)) if given_dir else os.path.normpath(rel)
    return display


def _load_entry_module(path, package_roots=()):
    loader = Loader(PackageFinder(package_roots))
    if os.path.isdir(path):
        raise ParseFailure(f"{path}: is a folder; parse reads one .py file (the one that defines the entry); "
                           f"`archcurator import FOLDER` reads every module of a folder")
    if not os.path.isfile(path):
        raise ParseFailure(f"{path}: no such file" if not os.path.exists(path) else f"{path}: not a regular file")
    try:
        mod = loader.load(path)
    except SyntaxError as e:
        # a line only where Python names one: a NUL byte fails the whole file (lineno None)
        where = f"{path}:{e.lineno}" if isinstance(e.lineno, int) else path
        raise ParseFailure(f"{where}: cannot parse: {e.msg}") from None
    except RecursionError:
        raise ParseFailure(f"{path}: cannot parse: nested too deep") from None
    except SourceTooLarge as e:
        raise ParseFailure(f"{path}: too costly to follow: the source holds {e}") from None
    except (OSError, ValueError) as e:
        raise ParseFailure(f"{path}: cannot read: {e}") from None
    return loader, mod


def parse_source(path, entry: str, args: dict | None = None, inputs: list | None = None, *,
                 time_limit: float = TIME_LIMIT, memory_limit: int = MEMORY_LIMIT,
                 package_roots=(), mode: str | None = None) -> ParseResult:
    """Read `entry` of `path` into a design.  The reading has a budget: `time_limit` seconds
    and `memory_limit` bytes of growth; past either (or on code that would build values too
    large to follow), ParseFailure says "too costly to follow" at the line where it stopped.
    Imports of installed packages are read from their source in `package_roots` (folders
    holding top-level packages, such as an unpacked wheel), then in site-packages.  `mode`
    ("train" or "eval") is written into the design's `train.mode`, the mode the verifier checks the
    model in, and is what `self.training` reads in forward (unknown without it)."""
    if mode not in (None, "train", "eval"):
        raise ParseFailure(f"{path}: mode must be 'train' or 'eval', not {mode!r}")
    gc_was = gc.isenabled()
    gc.disable()  # many short-lived objects; collecting them mid-walk costs more than it saves
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 6000))  # the interpreter nests ~20 frames per call it follows
    state = {}
    try:
        return _parse_source(path, entry, args, inputs, (time_limit, memory_limit), state, package_roots, mode)
    except (TooCostly, MemoryError) as e:
        it = state.get("it")
        where = getattr(e, "where", None) or (it.where() if it is not None and it.loc[0] is not None else str(path))
        what = e.what if isinstance(e, TooCostly) else f"needs more than {memory_limit >> 20} MB"
        raise ParseFailure(f"{where}: too costly to follow: '{entry}' {what}") from None
    except (ParseFailure, KeyboardInterrupt):
        raise
    except Exception as e:  # noqa: BLE001 - never a traceback for a user's file
        raise ParseFailure(f"{path}: '{entry}' could not be read ({type(e).__name__}: {e})") from None
    finally:
        sys.setrecursionlimit(limit)
        if gc_was:
            gc.enable()


def _parse_source(path, entry, args, inputs, budget, state, package_roots=(), mode=None):
    path = str(path)
    if inputs is not None:
        inputs = [parse_input_spec(x) for x in inputs] or None
    if args is not None and not isinstance(args, dict):
        raise ParseFailure(f"{path}: --args must be a JSON object of keyword arguments")
    rss0 = _rss()  # the syntax tree of the source counts against the budget
    loader, mod = _load_entry_module(path, package_roots)
    display = _display_fn(path)
    it = Interp(loader, display)
    it.training = None if mode is None else mode == "train"
    if mod.outward or mod.side_imports:  # the entry's module is imported too: its effects run
        it._imported_effects.append(mod)
    state["it"] = it
    it.start_budget(*budget, rss0=rss0)
    it.settled = []
    head, _, attr = entry.partition(".")  # `Class.builder`: a classmethod or staticmethod that builds
    if head not in mod.defs:
        raise ParseFailure(f"{path}: no class or function named '{head}'")
    try:
        target = it.mod_lookup(mod, head)
        if attr:
            target = it.getattr(target, attr)
    except (InterpError, RecursionError) as e:
        raise ParseFailure(f"{path}: '{entry}' could not be read: {e}") from None
    defline = mod.defs[head][-1].lineno
    if isinstance(target, BoundMethod) and isinstance(target.func, FuncVal):
        defline = target.func.node.lineno
    elif isinstance(target, FuncVal) and attr:
        defline = target.node.lineno
    if not isinstance(target, (ClassVal, FuncVal, PartialVal, TorchClass, BoundMethod)):
        raise ParseFailure(f"{path}:{defline}: '{entry}' is not a class or builder function")
    kwargs = dict(args or {})
    if isinstance(target, FuncVal):
        for k in IGNORED_BUILDER_ARGS:
            if k in kwargs:
                kwargs.pop(k)
                it.warn(f"argument '{k}' ignored: weights are never loaded", (mod, defline))
        fa = target.node.args
        accepted = {a.arg for a in fa.posonlyargs + fa.args + fa.kwonlyargs}
        for k in IGNORED_BUILDER_ARGS:
            if k in accepted and k != "progress":
                # whatever the default, no weights: what is built is the bare architecture
                kwargs[k] = False if k.startswith("pretrained") else None
    it.loc = (mod, defline)
    try:
        kwargs = _config_args(it, target, kwargs)
        kwargs = _known_kwargs(it, target, kwargs, entry, (mod, defline))
        model = it.call(target, [], kwargs)
    except UserRaise as e:
        raise ParseFailure(f"{e.where}: building '{entry}' raises {e.exc_name}"
                           + (f": {e.message}" if e.message else "")) from None
    except InterpError as e:
        raise ParseFailure(f"{it.where()}: '{entry}' could not be built: {e}") from None
    except RecursionError:
        raise ParseFailure(f"{path}:{defline}: '{entry}' nests too deep to follow") from None
    torchlib.say_layer_notes(it)  # the model is built: its layers have their names
    if not (isinstance(model, InstanceVal) and model.kind == "module"):
        why = model.why if isinstance(model, Unknown) and model.why else it.describe(model)
        first = f" ({it.warnings[0][0]}:{it.warnings[0][1]}: {it.warnings[0][2]})" if it.warnings else ""
        raise ParseFailure(f"{path}:{defline}: '{entry}' did not build a recognised nn.Module "
                           f"(got {why}){first}")
    design = _walk(it, model, entry, inputs, mod, defline, display(path))
    torchlib.say_layer_notes(it)  # of layers built by forward
    if not design["nodes"]:
        first = f": {it.warnings[0][0]}:{it.warnings[0][1]}: {it.warnings[0][2]}" if it.warnings else ""
        raise ParseFailure(f"{path}:{defline}: nothing of '{entry}' recognised{first}")
    warnings = [ParseWarning(f, line, msg) for f, line, msg in it.warnings]
    design["meta"]["parser_warnings"] = [{"line": f"{w.file}:{w.line}", "message": w.message} for w in warnings]
    if it.warnings_past_cap:  # past the MAX_WARNINGS kept: how many more there were
        design["meta"]["parser_warnings_not_kept"] = it.warnings_past_cap
    if mode is not None:
        design["train"] = {"mode": mode}
    return ParseResult(design, warnings)


def _init_of(it, target):
    """(FuncVal, module) of what building `target` runs: a class's __init__, or the builder."""
    if isinstance(target, ClassVal):
        init, _ = it.class_attr(target, "__init__")
        return (init, init.module) if isinstance(init, FuncVal) else (None, None)
    if isinstance(target, FuncVal):
        return target, target.module
    return None, None


def _known_kwargs(it, target, kwargs, entry, loc):
    """--args that NAME takes; the others are named in one warning and left out (Python would
    refuse the call with a TypeError, and a misspelt key silently building the default model is
    worse than either)."""
    fn, _ = _init_of(it, target)
    if fn is None or fn.node.args.kwarg is not None:
        return kwargs
    a = fn.node.args
    positional = a.posonlyargs + a.args
    takes = {p.arg for p in positional[1 if isinstance(target, ClassVal) else 0:] + a.kwonlyargs}
    unknown = [k for k in kwargs if k not in takes]
    if unknown:
        it.warn(f"--args {', '.join(repr(k) for k in unknown)}: not "
                f"{'a parameter' if len(unknown) == 1 else 'parameters'} of '{entry}'; ignored", loc)
    return {k: v for k, v in kwargs.items() if k in takes}


def _annotated_class(it, fn, name):
    """The source class a parameter of fn is annotated with (`config: GPTConfig`), or None."""
    a = fn.node.args
    for p in a.posonlyargs + a.args + a.kwonlyargs:
        if p.arg == name and p.annotation is not None:
            ann = p.annotation
            if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
                try:
                    ann = ast.parse(ann.value, mode="eval").body
                except SyntaxError:
                    return None
            for cand in _annotation_classes(ann):
                try:
                    v = it.eval(cand, it.module_frame(fn.module))
                except InterpError:
                    continue
                if isinstance(v, ClassVal) and it.torch_base(v) is None:
                    return v
            return None
    return None


def _annotation_classes(ann):
    """The class names an annotation admits, in order: `Cfg`, `mod.Cfg`, `Union[Cfg, dict]`,
    `Optional[Cfg]`, `Cfg | None`, `"Cfg"`."""
    if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
        try:
            ann = ast.parse(ann.value, mode="eval").body
        except SyntaxError:
            return []
    if isinstance(ann, (ast.Name, ast.Attribute)):
        return [ann]
    if isinstance(ann, ast.BinOp) and isinstance(ann.op, ast.BitOr):
        return _annotation_classes(ann.left) + _annotation_classes(ann.right)
    if isinstance(ann, ast.Subscript) and isinstance(ann.value, (ast.Name, ast.Attribute)) and \
            (ann.value.attr if isinstance(ann.value, ast.Attribute) else ann.value.id) in ("Union", "Optional"):
        items = ann.slice.elts if isinstance(ann.slice, ast.Tuple) else [ann.slice]
        return [c for x in items for c in _annotation_classes(x)]
    return []


def _config_args(it, target, kwargs):
    """--args as configuration objects of the source's own classes: a dict given for a parameter
    annotated with a class builds that class (`dims: ModelDimensions`); fields given for a class
    whose constructor takes one `config` builds its config class (`config_class = LlamaConfig`, or
    the annotation), so that `isinstance(config, ...)` and the config's own defaults hold."""
    fn, _ = _init_of(it, target)
    if fn is None:
        return kwargs
    a = fn.node.args
    params = [p.arg for p in a.posonlyargs + a.args + a.kwonlyargs]
    out = dict(kwargs)
    for k, v in kwargs.items():
        if isinstance(v, dict) and k in params:
            cls = _annotated_class(it, fn, k)
            if cls is not None:
                out[k] = it.call(cls, [], dict(v))
    if "config" in params and "config" not in kwargs and not set(kwargs) & set(params) and \
            (kwargs or _required(fn, "config")):
        cls = _annotated_class(it, fn, "config")
        if cls is None and isinstance(target, ClassVal):
            c, _ = it.class_attr(target, "config_class")
            cls = c if isinstance(c, ClassVal) else config_class_of(it, target)
        if cls is not None:
            out = {"config": it.call(cls, [], dict(kwargs))}
    return out


def _required(fn, name):
    """Whether fn's parameter `name` has no default (a model class that cannot be built without it)."""
    a = fn.node.args
    positional = a.posonlyargs + a.args
    first_default = len(positional) - len(a.defaults)
    for i, p in enumerate(positional):
        if p.arg == name:
            return i < first_default
    for p, d in zip(a.kwonlyargs, a.kw_defaults):
        if p.arg == name:
            return d is None
    return False


def _assign_names(root):
    reserved = set()
    for q, m in torchlib.named_modules(root):
        m.qname = q
        if q:
            reserved.add(q)
        for pname, p in m.params.items():
            if p is not None and p.param is not None and p.param.qname is None:
                p.param.qname = (q + "." if q else "") + pname
                reserved.add(p.param.qname)
    return reserved


def _forward_signature(it, model):
    f = torchlib._user_method(it, model, "forward")
    if f is None:
        if model.op == "MultiheadAttention":
            return ["query", "key", "value"], 3, None
        if model.op in OP_TABLE and OP_TABLE[model.op].arity[0] == 2:  # a decoder layer, a Bilinear
            return ["x", "x1"], 2, None
        return ["x"], 1, None
    a = f.node.args
    pos = [p.arg for p in a.posonlyargs + a.args][1:]
    ndef = len(f.defaults)
    required = len(pos) - ndef
    return pos, max(required, 0), f


def _walk(it, model, entry, inputs, mod, defline, shown_path):
    reserved = _assign_names(model)
    names, required, f = _forward_signature(it, model)
    n_in = len(inputs) if inputs is not None else required
    if inputs is not None and len(inputs) < required:
        it.warn(f"forward takes {required} tensor argument(s) but {len(inputs)} input shape(s) were given; "
                f"the rest are symbolic", (mod, defline))
        n_in = required
    if inputs is not None and len(inputs) > len(names) and not (f is not None and f.node.args.vararg):
        raise ParseFailure(f"{shown_path}:{defline}: {len(inputs)} inputs given but forward of '{entry}' takes "
                           f"{len(names)}")
    ids = []
    for i in range(n_in):
        nm = names[i] if i < len(names) else f"x{i}"
        if nm in reserved or nm in ids:
            nm = f"{nm}_in"
        ids.append(nm)
    given = list(inputs or [])
    concrete = bool(given) and all(all(is_int(d) for d in shape) for shape, _ in given) and len(given) >= n_in
    it.symbolic = not concrete
    batch = None
    if concrete and given and given[0][0]:
        batch = given[0][0][0]
        it.batch_env = {"B": batch}
    B = Sym.named("B")

    def make_inputs(settled):
        vals = []
        for i, nm in enumerate(ids):
            if i < len(given):
                shape, dtype = given[i]
                internal = []
                for j, d in enumerate(shape):
                    if isinstance(d, str):
                        internal.append(Sym.named(d))
                    elif j == 0 and is_int(d) and (batch is None or d == batch) and concrete:
                        internal.append(B)
                    else:
                        internal.append(d)
                t = TensorVal(nm, internal, dtype or "float32")
            elif nm in settled:
                shape, dtype = settled[nm]
                t = TensorVal(nm, list(shape), dtype)
            else:
                t = TensorVal(nm, None, "float32")
                t.pending = True
            vals.append(t)
        return vals

    nwarn, past_cap = len(it.warnings), it.warnings_past_cap
    wseen = set(it._wseen)
    out, g, ins = _run_forward(it, model, make_inputs({}), reserved, ids)
    if any(t.pending is False and t.shape is not None and i >= len(given) for i, t in enumerate(ins)) and \
            len(given) < len(ids):
        settled = {t.ref: (t.shape, t.dtype) for i, t in enumerate(ins) if i >= len(given) and t.shape is not None}
        del it.warnings[nwarn:]
        it.warnings_past_cap = past_cap
        it.layer_notes.clear()  # of layers the first forward built (those of the model are said before _walk)
        it._wseen = wseen
        out, g, ins = _run_forward(it, model, make_inputs(settled), reserved, ids)
    # inputs of the design
    design_inputs = []
    for i, t in enumerate(ins):
        if i < len(given):
            shape = [d if (is_int(d) or isinstance(d, str)) else None for d in given[i][0]]
        elif t.shape is not None:
            shape = [_dim_json(d) for d in t.shape]
        else:
            it.warn(f"shape of input '{t.ref}' could not be inferred from its first use; rank unknown",
                    (mod, defline))
            shape = ["B", None]
        design_inputs.append({"id": t.ref, "shape": shape, "dtype": t.dtype})
    outputs = []
    _collect_outputs(it, out, outputs, g)
    _report_unreached(it, model, g, mod, defline)
    return {
        "format": "archgraph/1",
        "name": entry,
        "inputs": design_inputs,
        "nodes": g.nodes,
        "outputs": outputs,
        "meta": {"source": f"{shown_path}:{defline}", "entry": entry, "parser": "archcurator.parse",
                 "parser_warnings": [], **({"input_batch": batch} if is_int(batch) and batch > 0 else {})},
    }


def _dim_json(d):
    if is_int(d):
        return d
    if isinstance(d, Sym) and d.single_symbol():
        return d.single_symbol()
    return None


def _run_forward(it, model, ins, reserved, ids):
    g = Graph(reserved | set(ids))
    g.ids.update(ids)
    it.graph = g
    out = None
    try:
        out = torchlib.call_module(it, model, list(ins), {})
    except UserRaise as e:
        it.warn(f"forward raises {e.exc_name}" + (f": {e.message}" if e.message else "") + "; walk stopped")
    except InterpError as e:
        it.warn(str(e) + "; walk stopped")
    except RecursionError:
        it.warn("forward nests too deep to follow; walk stopped")
    return out, g, ins


def _collect_outputs(it, v, out, g):
    if isinstance(v, TensorVal):
        r = torchlib.ref_of(it, v)
        if r not in out:
            out.append(r)
    elif isinstance(v, (tuple, list)):
        for x in v:
            _collect_outputs(it, x, out, g)
    elif isinstance(v, dict):
        for x in v.values():
            _collect_outputs(it, x, out, g)
    elif v is None:
        return
    elif isinstance(v, InstanceVal) and v.kind == "object" and _dataclass_field_names(it, v) is not None:
        # a dataclass of outputs (Hugging Face's ModelOutput): its fields in order, None ones left out
        for name in _dataclass_field_names(it, v):
            _collect_outputs(it, v.attrs.get(name), out, g)
    else:
        it.warn(f"forward returns {it.describe(v)}; not a tensor output")


def _dataclass_field_names(it, inst):
    for c in it.mro(inst.cls):
        if isinstance(c, ClassVal) and c.dataclass_fields is not None:
            return [name for name, _ in c.dataclass_fields]
    return None


def _report_unreached(it, model, g, mod, defline):
    from .torch.optable import param_count, param_shapes

    def subtree(m, seen):
        """(params in subtree not reached, any reached)"""
        if id(m) in seen:
            return 0, True
        seen.add(id(m))
        missing = 0
        reached = id(m) in g.called
        if m.op:
            if not reached:
                missing += param_count(m.op, m.args or {}) or 0
        else:
            for _k, p in m.params.items():
                if p is not None and p.param is not None and id(p.param) not in _param_ids(g):
                    n = 1
                    for d in p.shape or []:
                        n = n * d if is_int(d) else n
                    missing += n
        for c in m.modules.values():
            if c is not None:
                mm, rr = subtree(c, seen)
                missing += mm
                reached = reached or rr
        return missing, reached

    def unused(qname, shape):
        """A learned tensor torch counts but forward never reads: a Parameter that nothing reads
        (the verifier names it as a dead node; its parameters are counted as torch counts them)."""
        nid = g.claim(qname)
        g.add(nid, "Parameter", {"shape": torchlib.shape_arg(it, list(shape), "Parameter")}, [])

    def emit_unused(m, seen):
        if id(m) in seen:
            return
        seen.add(id(m))
        if m.op and id(m) not in g.called:
            for pname, shape in param_shapes(m.op, m.args or {}):
                p = m.params.get(pname)
                if p is not None and p.param is not None and (p.param.owner is not m or
                                                              id(p.param) in _param_ids(g)):
                    continue  # a tensor owned elsewhere, or already in the design (read directly)
                unused(f"{m.qname}.{pname}", shape)
        elif not m.op:
            for _k, p in m.params.items():
                if p is not None and p.param is not None and id(p.param) not in _param_ids(g) and \
                        p.param.owner is m and p.shape is not None:
                    unused(p.param.qname, p.shape)
        for c in m.modules.values():
            if c is not None:
                emit_unused(c, seen)

    def walk(m, seen):
        missing, reached = subtree(m, set())
        if missing == 0:
            return
        if not reached or m.op:
            it.warn(f"'{m.qname or m.cls.name}' ({missing} parameters) is built but never reached by forward; "
                    f"its parameters are in the design as Parameters nothing reads (torch counts them)",
                    (m.file or mod, m.line or defline))
            emit_unused(m, done)
            return
        for _k, p in m.params.items():
            if p is not None and p.param is not None and not m.op and id(p.param) not in _param_ids(g):
                it.warn(f"parameter '{p.param.qname}' is never used by forward; in the design as a Parameter "
                        f"nothing reads (torch counts it)", (m.file or mod, m.line or defline))
                if p.param.owner is m and p.shape is not None:
                    unused(p.param.qname, p.shape)
        for c in m.modules.values():
            if c is not None and id(c) not in seen:
                seen.add(id(c))
                walk(c, seen)

    done = set()
    walk(model, {id(model)})


def _param_ids(g):
    cache = getattr(g, "_pids", None)
    if cache is None:
        cache = {k for k in g.param_refs}
        g._pids = cache
    return cache


# ------------------------------------------------------------------ discovery
def discover_modules(path) -> list:
    path = str(path)
    if os.path.isdir(path):
        out = []
        for root, dirs, files in os.walk(path):
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
            for fn in sorted(files):
                if fn.endswith(".py"):
                    fp = os.path.join(root, fn)
                    rel = os.path.relpath(fp, path)
                    try:
                        for name in _discover_file(fp):
                            out.append(f"{rel}:{name}")
                    except ParseFailure:
                        continue
        return out
    return _discover_file(path)


def _discover_file(path):
    loader, mod = _load_entry_module(path)
    it = Interp(loader, _display_fn(path))
    it.start_budget()
    it.settled = []
    out = []
    for st in mod.tree.body:
        if not isinstance(st, ast.ClassDef):
            continue
        try:
            cls = it.mod_lookup(mod, st.name)
            if not isinstance(cls, ClassVal) or it.torch_base(cls) is None:
                continue
            init, owner = it.class_attr(cls, "__init__")
        except TooCostly:
            break  # the file's budget is spent: what was found so far is offered
        except Exception:  # noqa: BLE001 - a class we cannot read is simply not offered
            continue
        tb = it.torch_base(cls)
        if tb not in ("Module", "Sequential", "ModuleList", "ModuleDict"):
            continue
        if isinstance(init, FuncVal):
            a = init.node.args
            pos = [p.arg for p in a.posonlyargs + a.args][1:]
            if len(pos) - len(init.defaults) > 0:
                continue
            if any(p.arg not in init.kwdefaults for p in a.kwonlyargs):
                continue
        if tb in ("ModuleList", "ModuleDict") and not isinstance(init, FuncVal):
            continue
        out.append(st.name)
    return out

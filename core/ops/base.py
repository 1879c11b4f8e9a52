"""What one op-table entry holds, and the context its shape rule runs in.

One `OpSpec` per op (NNSmith's layout): the argument schema with torch's
own defaults, the shape rule over int / symbolic / unknown dimensions, the
parameter count, the forward FLOPs (2 per multiply-add, as
`FlopCounterMode` counts), its requirements (raised by the shape rule
through `ctx.require`, each with the id of the check that owns its words),
and how to build it in torch. Checks read this table; they never re-derive
shapes.
"""

from __future__ import annotations

import math
import re

from .. import dims as D
from ..dims import Dim
from ..valueclass import field, value_class
from .rules import (
    DTYPE_INT_INTO_FLOAT,
    SHAPE_RANK,
    SHAPE_SIZE_MEETS_WIDTH,
    SHAPE_SPLIT_SIZES,
    SHAPE_SYMBOL_CONDITION,
    SHAPE_UNKNOWN_DIM,
    SHAPE_UNKNOWN_INDEX,
)
from .traits import check_traits

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the start-up of verify --json)
if TYPE_CHECKING:
    from collections.abc import Callable, Collection
    from typing import Any

# a table read by position at least this long is a context length (README: Sizes), not a defect
CONTEXT_TABLE_ROWS = 64


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED = _Required()

FLOAT_DTYPES = {"float32", "float16", "bfloat16", "float64", "float"}
INT_DTYPES = {"int64", "int32", "int16", "int8", "uint8", "long", "int"}


class Kind:
    """What values an argument takes, as torch's constructor accepts them: `problem(v)` is None
    for a good value, else the words "must be ..." completing the finding's sentence."""

    __slots__ = ("test", "text", "form", "detail")

    def __init__(self, test: Callable[[Any], bool], text: str, form: tuple = ("any",),
                 detail: Callable[[Any], str | None] | None = None):
        # `form` says the same as `test`, as data: what a generator of designs draws values from
        self.test, self.text, self.form = test, text, form
        # the whole reason a refused value is refused, as a clause after the argument's name ("has argument(s)
        # 'dtype': ..."), where "must be <text>, got <value>" would hide it (a nested layer's args); None: no more
        self.detail = detail

    def problem(self, v) -> str | None:
        try:
            return None if self.test(v) else self.text
        except (TypeError, ValueError, OverflowError, RecursionError):
            return self.text

    def __repr__(self) -> str:
        return f"Kind({self.text})"


def _is_int(v) -> bool:
    return type(v) is int


def _is_num(v) -> bool:
    return (type(v) is int or type(v) is float) and math.isfinite(v)


def Int(lo: int | None = None, hi: int | None = None) -> Kind:  # noqa: N802 - reads as a type
    form = ("int", lo, hi)
    if lo is None and hi is None:
        return Kind(_is_int, "an int", form)
    if hi is not None:
        return Kind(lambda v: type(v) is int and (lo is None or v >= lo) and v <= hi,
                    f"an int in [{lo}, {hi}]" if lo is not None else f"an int <= {hi}", form)
    assert lo is not None  # both None returned above
    words = {0: "an int >= 0", 1: "a positive int"}.get(lo, f"an int >= {lo}")
    return Kind(lambda v: type(v) is int and v >= lo, words, form)


def Float(lo: float | None = None, hi: float | None = None, *, lo_open: bool = False,  # noqa: N802
          hi_open: bool = False) -> Kind:
    """A finite number (an int is a number) within the bounds."""
    def test(v):
        if not _is_num(v):
            return False
        if lo is not None and (v < lo or (lo_open and v == lo)):
            return False
        return not (hi is not None and (v > hi or (hi_open and v == hi)))

    if lo is None and hi is None:
        words = "a finite number"
    else:
        left = "(" if lo_open else "["
        right = ")" if hi_open else "]"
        words = f"a finite number in {left}{'-inf' if lo is None else lo:g}, {'inf' if hi is None else hi:g}{right}" \
            if lo is not None and hi is not None else \
            (f"a finite number {'>' if lo_open else '>='} {lo:g}" if lo is not None else
             f"a finite number {'<' if hi_open else '<='} {hi:g}")
    return Kind(test, words, ("float", lo, hi))


BOOL = Kind(lambda v: type(v) is bool or (type(v) is int and v in (0, 1)), "true or false", ("bool",))
ANY = Kind(lambda v: True, "anything")
INT = Int()
NAT = Int(0)
POS = Int(1)
NUM = Float()


def Enum(*values) -> Kind:  # noqa: N802
    allowed = frozenset(values)
    return Kind(lambda v: type(v) is str and v in allowed, "one of " + ", ".join(repr(x) for x in values),
                ("enum", values))


def Optional(kind: Kind) -> Kind:  # noqa: N802
    inner = kind.detail
    return Kind(lambda v: v is None or kind.test(v), f"null or {kind.text}", ("optional", kind),
                None if inner is None else (lambda v: None if v is None else inner(v)))


def OneOf(*kinds: Kind) -> Kind:  # noqa: N802
    return Kind(lambda v: any(k.test(v) for k in kinds), " or ".join(k.text for k in kinds), ("oneof", kinds))


def ListOf(kind: Kind, n: int | None = None, *, min_len: int = 0, max_len: int | None = None) -> Kind:  # noqa: N802
    """A list (a JSON array) of values of one kind: exactly n of them, or min_len..max_len."""
    def test(v):
        if type(v) is not list and type(v) is not tuple:
            return False
        if n is not None and len(v) != n:
            return False
        if len(v) < min_len or (max_len is not None and len(v) > max_len):
            return False
        return all(kind.test(x) for x in v)

    count = f"{n} " if n is not None else ""
    return Kind(test, f"a list of {count}{kind.text.removeprefix('a ').removeprefix('an ')}s",
                ("list", kind, n, min_len, max_len))


def Ints(n: int, elem: Kind = POS) -> Kind:  # noqa: N802
    """torch's _single/_pair/_triple: one int, or a list of n ints."""
    lst = ListOf(elem, n)
    return Kind(lambda v: elem.test(v) or lst.test(v),
                f"{elem.text} or a list of {n} of them", ("oneof", (elem, lst)))


# torch's factory kwargs: a layer's constructor takes them for its weights' placement and dtype; torch's default
# for each is None (an op takes them when it has the trait factory-kwargs)
FACTORY_ARGS = frozenset({"dtype", "device"})
# why a layer given factory kwargs other than torch's default is refused, after "has argument(s) 'dtype'"
FACTORY_WORDS = ("archgraph/1 builds every layer with float32 weights on the run's device, so a design gives "
                 "neither; drop them (declare an input's dtype for the data)")


def takes_factory_args(op: str) -> bool:
    """Whether torch.nn.<op>'s constructor takes dtype and device (the trait factory-kwargs)."""
    from . import OP_TABLE

    spec = OP_TABLE.get(op)
    return spec is not None and "factory-kwargs" in spec.traits


def Nested(args: tuple, op: str) -> Kind:  # noqa: N802
    """The arguments of another op, `op`, as an object (TransformerEncoder's encoder_layer). A factory kwarg at
    torch's default (null) is taken where op's constructor takes it, as a layer's own args take it."""
    names = {a.name: a for a in args}

    def unknown(v: dict) -> list:
        return [k for k in v if k not in names and not (v[k] is None and k in FACTORY_ARGS and takes_factory_args(op))]

    def test(v):
        if type(v) is not dict or (not v.keys() <= names.keys() and unknown(v)):
            return False
        if any(a.required and a.name not in v for a in args):
            return False
        return all(names[k].problem(x) is None for k, x in v.items() if k in names)

    def detail(v) -> str | None:
        if type(v) is not dict:
            return None
        extra = unknown(v)
        if extra:
            given = ", ".join(_short(k) for k in extra[:5]) + (f" and {len(extra) - 5} more" if len(extra) > 5
                                                                   else "")
            if set(extra) <= FACTORY_ARGS and takes_factory_args(op):
                return f"has argument(s) {given}: {FACTORY_WORDS}"
            return f"has argument(s) {given} that torch.nn.{op} does not take"
        missing = [a.name for a in args if a.required and a.name not in v]
        if missing:
            return f"is missing required argument(s) {', '.join(missing)} of torch.nn.{op}"
        for k, x in v.items():
            why = names[k].problem(x) if k in names else None
            if why is not None:
                return f"has {k}={_short(x)}, but torch.nn.{op}'s {k} must be {why}"
        return None

    return Kind(test, "an object of the arguments " + ", ".join(names), ("nested", args), detail)


SYMBOL = Kind(lambda v: type(v) is str and bool(v), "a symbol", ("symbol",))
# a size in a shape argument: an int >= 0, or a symbol of the design
SIZE = OneOf(NAT, SYMBOL)


@value_class(frozen=True)
class Arg:
    name: str
    default: Any = REQUIRED
    kind: Kind = ANY

    @property
    def required(self) -> bool:
        return self.default is REQUIRED

    def problem(self, v) -> str | None:
        """Why `v` is not a value this argument takes (None when it is). The default is always good."""
        if v is self.default and not self.required:
            return None
        return self.kind.problem(v)


@value_class(frozen=True)
class TensorType:
    """A value flowing along an edge: its shape (None = rank unknown) and dtype."""

    shape: tuple | None = None
    dtype: str = "float32"

    @property
    def rank(self) -> int | None:
        return None if self.shape is None else len(self.shape)

    @property
    def is_float(self) -> bool:
        return self.dtype in FLOAT_DTYPES

    @property
    def is_int(self) -> bool:
        return self.dtype in INT_DTYPES or self.dtype == "bool"


UNKNOWN = TensorType(None, "float32")


# the dtypes the model knows, by torch's names, and every other name torch gives one of them (torch.float,
# torch.half, torch.short ...); a name not here is no dtype torch has
DTYPES = ("float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8", "bool")
_CANON = {"float": "float32", "double": "float64", "half": "float16", "long": "int64", "int": "int32",
          "short": "int16"}
DTYPE_NAMES: dict[str, str] = {**{d: d for d in DTYPES}, **_CANON}
# the dtype each of torch's casting methods gives (`x.half()`, `x.char()`, `x.byte()` ...)
CAST_METHODS: dict[str, str] = {"float": "float32", "double": "float64", "half": "float16", "bfloat16": "bfloat16",
                                "long": "int64", "int": "int32", "short": "int16", "char": "int8", "byte": "uint8",
                                "bool": "bool"}
_BYTES = {"float64": 8, "float32": 4, "float16": 2, "bfloat16": 2, "int64": 8, "int32": 4, "int16": 2, "int8": 1,
          "uint8": 1, "bool": 1}


def dtype_named(name) -> str | None:
    """The dtype torch calls `name` (`half` is float16), or None when torch has no such dtype."""
    return DTYPE_NAMES.get(name) if isinstance(name, str) else None


def dtype_bytes(d: str) -> int:
    """Bytes per value of dtype d (torch's element size); a name the model does not know counts as float32."""
    return _BYTES.get(canonical_dtype(d), 4)
# torch's promotion among the dtypes a design names: bool < integers < floats; within a kind the wider wins
_INT_RANK = {"uint8": 1, "int8": 1, "int16": 2, "int32": 3, "int64": 4}
_FLOAT_RANK = {"float16": 1, "bfloat16": 1, "float32": 2, "float64": 3}


def canonical_dtype(d: str) -> str:
    """The dtype's torch name (`float` is float32, `long` int64, `half` float16 ...)."""
    return _CANON.get(d, d)


def promote(a: str, b: str) -> str:
    """The dtype torch gives an element-wise op of two dimensioned tensors of dtypes a and b
    (torch.promote_types; uint8 with int8 and float16 with bfloat16 meet one step up)."""
    a, b = _CANON.get(a, a), _CANON.get(b, b)
    if a == b:
        return a
    if a == "bool" or b == "bool":
        return b if a == "bool" else a
    fa, fb = a in _FLOAT_RANK, b in _FLOAT_RANK
    if fa != fb:
        return a if fa else b
    ranks = _FLOAT_RANK if fa else _INT_RANK
    ra, rb = ranks.get(a, 0), ranks.get(b, 0)
    if ra == rb:
        return "float32" if fa else "int16"
    return a if ra > rb else b


def _category(d: str) -> int:
    return 0 if d == "bool" else 2 if d in _FLOAT_RANK else 1


_DEFAULT_OF_CATEGORY = ("bool", "int64", "float32")  # torch's default dtype of a Python bool, int, float


def result_type(operands, divide: bool = False) -> str:
    """The dtype torch gives an element-wise op (torch.result_type): `operands` are (dtype, kind) with kind
    "tensor" (a dimensioned tensor, or one of unknown rank), "zerodim" (a 0-D tensor) or "number" (a Python
    number: bool, int64 or float32 by its type). Dimensioned tensors decide; a 0-D tensor of a higher
    category (bool < integer < float) decides among its category; a Python number of a higher category
    gives that category's default dtype. True division makes an integer result float32.
    tests/test_dtype_model.py measures it against torch."""
    groups: dict = {"tensor": [], "zerodim": [], "number": []}
    for d, kind in operands:
        groups[kind].append(canonical_dtype(d))
    result = None
    for kind in ("tensor", "zerodim"):
        found = groups[kind]
        if not found:
            continue
        top = max(_category(d) for d in found)
        if result is not None and top <= _category(result):
            continue
        picked = [d for d in found if result is None or _category(d) == top]
        result = picked[0]
        for d in picked[1:]:
            result = promote(result, d)
    if groups["number"]:
        top = max(_category(d) for d in groups["number"])
        if result is None or top > _category(result):
            result = _DEFAULT_OF_CATEGORY[top]
    result = result or "float32"
    if divide and _category(result) < 2:
        return "float32"
    return result


@value_class
class Violation:
    rule: str  # the rule's id, a plain string (a Rule passed in is read as its id)
    message: str
    nodes: list
    severity: str = "block"

    def __post_init__(self) -> None:
        if type(self.rule) is not str:
            self.rule = str(self.rule)


_NO_VALUES: dict = {}  # InferCtx's value_ranges and value_reach where no operand carries any (never written)


class InferCtx:
    """What a shape rule sees: the node, its resolved args and operand types."""

    __slots__ = ("node", "args", "inputs", "violations", "producers", "design_train", "declared", "value_ranges",
                 "dtype_ok", "max_result", "bounds", "value_reach", "roles")

    def __init__(self, node, args, inputs, producers=None, design_train=None, declared=None, *, bounds=None,
                 roles=None, dtype_ok=False, max_result=0):
        self.node = node
        self.args = args
        self.inputs: list[TensorType] = inputs
        self.violations: list[Violation] = []
        self.producers = producers or []  # op names of the operands' nodes (None for inputs)
        self.design_train = design_train or {}
        self.declared = declared or {}  # symbol -> the size the design declares for it (train block)
        # operand index -> its ids' declared range (a design input's vocab_size) / how far its values may reach
        # past that range (exclusive); rules only read them, and the walk gives a dict of its own to a node
        # whose operands carry any, so most nodes share one empty dict instead of making two
        self.value_ranges: dict = _NO_VALUES
        self.value_reach: dict = _NO_VALUES
        self.dtype_ok = dtype_ok  # torch's kernels were measured to take the data operands' dtype (dtype_support)
        self.max_result = max_result  # the highest result index (`id:N`) the design reads of this node
        # symbol -> (least, most, what it is): a size known only to lie in a range (a constant slice of a
        # symbolic size); shared by the design's nodes, so a condition on it elsewhere is judged in its range
        self.bounds: dict = {} if bounds is None else bounds
        # symbol -> "batch" | "sequence" | "image": what a size of 1 or 2 would make degenerate
        self.roles: dict = {} if roles is None else roles

    @property
    def x(self) -> TensorType:
        return self.inputs[0]

    def require(self, cond: bool | None, rule: str, message) -> bool:
        """Record a block finding when `cond` is known to be False. `message` is a string, or a
        function that makes it (shape rules run on every node: words only when they are needed)."""
        if cond is False:
            if rule == DTYPE_INT_INTO_FLOAT and self.dtype_ok:
                return True  # measured: torch's kernels take this dtype (core/ops/dtype_support.py)
            self.violations.append(Violation(rule, message() if callable(message) else message, [self.node.id]))
            return False
        return True

    def require_equal(self, a, b, rule: str, message, kind: str = "eq") -> bool:
        """Sizes `a` and `b` must agree (kind "eq"), broadcast ("broadcast") or satisfy a <= b ("le").
        Two constants decide it; a symbol meeting a constant or another symbol is a condition on the
        symbol's size: a block when the design's declared sizes violate it or no size satisfies it,
        else a warn that states it ("runs only when T = 768"). Returns False when it blocked."""
        c = D.condition(kind, a, b)
        if c is None and (a is None or b is None):
            self.unknown_size(message)
            return True
        if c is None or c is True:
            return True
        if c is False:
            return self.require(False, rule, message)
        return self.on_condition(c, rule, message)

    def on_condition(self, c, rule: str, message) -> bool:
        if D.always(c):  # every size satisfies it (index -1 of a size T: 1 <= T): no finding
            return True
        label = f"{self.node.op} {self.node.id!r}"
        declared = D.holds(c, self.declared) if self.declared else None
        if declared is False:
            sizes = ", ".join(f"{k} = {v}" for k, v in self.declared.items() if k in
                              D.symbols_of(c.lhs) + D.symbols_of(c.rhs))
            return self.require(False, rule, lambda: f"{message() if callable(message) else message}; it runs only "
                                                     f"when {c.text()}, and the design declares {sizes}")
        ranged = [s for s in D.symbols_of(c.lhs) + D.symbols_of(c.rhs) if s in self.bounds]
        within = "".join(f"; {s} is {self.bounds[s][2]}, {self.bounds[s][0]}..{self.bounds[s][1]}" for s in ranged)
        if declared is None and not D.satisfiable(c, self.declared, self.bounds):
            return self.require(False, rule, lambda: f"{message() if callable(message) else message}; it runs only "
                                                     f"when {c.text()}, which no size satisfies{within}")
        why = (message() if callable(message) else message) + within
        if declared:
            return True  # the design runs at the sizes it declares: nothing for a curator to judge
        degenerate = self._degenerate(c)
        if degenerate:
            return self.require(False, rule, lambda: f"{label} runs only when {degenerate}: {why}")
        coincidence = self._width_coincidence(c)
        if coincidence:
            self.violations.append(Violation(SHAPE_SIZE_MEETS_WIDTH,
                                             f"{label} runs only when {c.text()}, {coincidence}: {why}",
                                             [self.node.id], "warn"))
            return True
        self.state_condition(f"{label} runs only when {c.text()}: {why}")
        return True

    def _degenerate(self, c) -> str | None:
        """The words for a condition that only a degenerate size satisfies, else None: every satisfying
        size makes a sequence or an image 1 or 2 long, or makes the batch 1 in training mode, or the batch
        must be a multiple of an odd number larger than the batch a run uses (the declared one, else 2).
        A design that runs only there crashes for every real use, so it blocks (README: Sizes)."""
        names = [s for s in dict.fromkeys(D.symbols_of(c.lhs) + D.symbols_of(c.rhs)) if s not in self.declared]
        train = self.design_train if isinstance(self.design_train, dict) else {}
        training = train.get("mode", "train") != "eval"
        least = {"sequence": 3, "image": 3, "batch": 2 if training else 1}
        wanted = {s: least[self.roles[s]] for s in names if self.roles.get(s) in least}
        if not wanted:
            return None
        if c.kind == "multiple" and len(names) == 1 and self.roles.get(names[0]) == "batch":
            step = _batch_step(c, names[0])
            if step is not None and step % 2 == 1 and step > 2:
                return (f"the batch {names[0]} is a multiple of {step} ({c.text()}): no batch a run uses "
                        "(an odd multiple, larger than any usual batch)")
        free = dict(self.bounds)
        for s, lo in wanted.items():
            was = free.get(s)
            free[s] = (max(lo, was[0]), was[1], was[2]) if was else (lo, 1 << 16, "")
            if free[s][0] > free[s][1]:
                return None
        if D.satisfiable(c, self.declared, free):
            return None
        # the size the condition holds down: bounded from below alone, the condition cannot be met
        forced = [s for s in wanted if not D.satisfiable(c, self.declared, {**self.bounds, s: free[s]})]
        if not forced:
            return None
        s = forced[0]
        fits = [v for v in range(1, wanted[s]) if D.satisfiable(c, {**self.declared, s: v}, self.bounds)]
        if not fits:
            return None
        at = " or ".join(f"{s} = {v}" for v in fits)
        text = c.text() if c.text() == at else f"{c.text()}, that is {at}"
        what = {"sequence": "no real sequence", "image": "no real image",
                "batch": "a batch of one, and the design trains"}[self.roles[s]]
        return f"{text}: {what}"

    def _width_coincidence(self, c) -> str | None:
        """The words for a condition that equates a batch or sequence size with a constant width found on
        another axis of the same operands (a Linear(176) fed [B, 176, T]: T = 176; q @ k not transposed:
        T = 64), the classic missing transpose; else None."""
        if c.kind not in ("eq", "broadcast"):
            return None
        sym, k = (c.lhs, c.rhs) if D.is_const(c.rhs) else (c.rhs, c.lhs)
        if not (D.is_const(k) and k >= 3 and D.single_symbol(sym) and sym in self.roles):
            return None
        for t in self.inputs:
            if t.shape is None or sym not in t.shape:
                continue
            at = [i for i, d in enumerate(t.shape) if d == sym]
            other = [i for i, d in enumerate(t.shape) if d == k and i not in at]
            if other:
                role = {"batch": "a batch", "sequence": "a sequence", "image": "an image"}[self.roles[sym]]
                return (f"{role} size equal to the width {k} the same operand has at dim {other[0]} "
                        f"(likely a missing transpose or permute)")
        return None

    def is_context_table(self, sym, rows) -> bool:
        """Whether a table of `rows` rows read at positions 0..sym-1 (a position embedding, a causal-mask
        buffer, a RoPE cache) is the context length the design was written for: `sym` an undeclared
        sequence size and the table at least CONTEXT_TABLE_ROWS long. "Runs only when T <= 512" on every
        BERT is not worth a curator's minute; a table of 4 rows read to an undeclared T still is."""
        return (isinstance(sym, str) and self.roles.get(sym) == "sequence" and sym not in self.declared
                and D.is_const(rows) and rows >= CONTEXT_TABLE_ROWS)

    def state_condition(self, message: str) -> None:
        """A shape.symbol-condition warn. A finding is known by its rule and node, so a second condition on
        the node joins the first's words (an Add of [B, 8, H, W] and [B, 8, 16, 32] needs W = 32 and H = 16;
        one of them was dropped)."""
        for v in self.violations:
            if v.rule == SHAPE_SYMBOL_CONDITION and v.nodes == [self.node.id]:
                label = f"{self.node.op} {self.node.id!r} "
                v.message += "; and " + (message[len(label):] if message.startswith(label) else message)
                return
        self.violations.append(Violation(SHAPE_SYMBOL_CONDITION, message, [self.node.id], "warn"))

    def require_at_sizes(self, size, holds, text: str, rule: str, message) -> bool:
        """A requirement on a symbolic size that is not linear in it (int(T * 0.4) >= 1): judged by value,
        at the design's declared size when there is one, else over sizes 1..4096 (a block when none
        fits, else a warn that states `text`, "runs only when int(T * 0.4) >= 1"). False when it blocked."""
        label = f"{self.node.op} {self.node.id!r}"
        at = D.substitute(size, self.declared) if self.declared else size
        if D.is_const(at):
            return self.require(bool(holds(at)), rule, lambda: f"{message() if callable(message) else message}; it "
                                                               f"runs only when {text}, and the design's sizes give "
                                                               f"{D.fmt(size)} = {at}")
        if not any(holds(v) for v in range(1, 4097)):
            return self.require(False, rule, lambda: f"{message() if callable(message) else message}; it runs only "
                                                     f"when {text}, which no size satisfies")
        if holds(1) and all(holds(v) for v in range(1, 4097)):
            return True
        self.state_condition(f"{label} runs only when {text}: {message() if callable(message) else message}")
        return True

    def warn_reach(self, operand: int, size) -> None:
        """Positions whose sure range fits `size` but that may reach past it (a max pool's positions, a
        running sum of ids): whether they fit depends on the values, so it is said, never blocked."""
        reach, why = self.value_reach.get(operand) or (None, "")
        sure = self.value_ranges.get(operand)
        if reach is not None and D.is_const(size) and type(sure) is int and sure <= size < reach:
            self.warn(SHAPE_UNKNOWN_INDEX, f"{self.node.op} {self.node.id!r}: its index may hold values up to "
                                             f"{reach - 1} ({why}); it runs only if every one lies below {size}, "
                                             "the indexed size")

    def unknown_size(self, message) -> None:
        """A requirement that reads a size the verifier lost (null, a count that depends on values): an
        unknown never blocks, it warns once per node with what went unchecked."""
        if any(v.rule == SHAPE_UNKNOWN_DIM for v in self.violations):
            return
        label = f"{self.node.op} {self.node.id!r}"
        text = (message() if callable(message) else message).removeprefix(label + ": ").replace("None", "unknown")
        self.violations.append(Violation(
            SHAPE_UNKNOWN_DIM, f"{label}: a size it reads is unknown, so this was not checked ({text})",
            [self.node.id], "warn"))

    def warn(self, rule: str, message: str) -> None:
        self.violations.append(Violation(rule, message, [self.node.id], "warn"))

    def fail(self, rule: str, message: str) -> list[TensorType]:
        self.violations.append(Violation(rule, message, [self.node.id]))
        return [UNKNOWN]

    def need_rank(self, t: TensorType, allowed: tuple, what: str = "input") -> bool:
        if t.shape is None:
            return True
        if len(t.shape) not in allowed:
            want = " or ".join(f"{r}-D" for r in allowed)
            self.violations.append(
                Violation(
                    SHAPE_RANK,
                    f"{self.node.op} {self.node.id!r} expects a {want} {what}, "
                    f"got {len(t.shape)}-D {D.fmt_shape(t.shape)}",
                    [self.node.id],
                )
            )
            return False
        return True


def _batch_step(c, batch: str) -> int | None:
    """The step of the batches that satisfy `k*B is a multiple of m` (m / gcd(k, m)), else None."""
    import math

    p = D._poly(c.lhs)
    if not D.is_const(c.rhs) or c.rhs <= 0 or p is None or len(p) != 1:
        return None
    mono, coef = p[0]
    if mono != (batch,) or coef.denominator != 1:
        return None
    return c.rhs // math.gcd(int(coef), c.rhs)


if TYPE_CHECKING:  # the rules' types, for the annotations below
    ShapeRule = Callable[[InferCtx], list]
    ParamRule = Callable[[dict], Dim]
    # (name, shape) of each learned tensor, as torch's named_parameters() names and orders them
    ParamShapesRule = Callable[[dict], list]
    FlopRule = Callable[[InferCtx, list], Dim]
    BuildRule = Callable[[dict], Any]


def _no_params(args: dict) -> int:
    return 0


def _no_param_shapes(args: dict) -> list:
    return []


def _no_flops(ctx: InferCtx, outs: list) -> Dim:
    return 0


def _always_measured(args: dict) -> bool:
    return True


# OpSpec.measured_for's default: the verifier skips the call for the ops that keep it
ALWAYS_MEASURED = _always_measured


@value_class
class OpSpec:
    name: str
    family: str
    args: tuple
    infer: ShapeRule
    build: BuildRule
    arity: tuple = (1, 1)  # (min, max); max None = any
    # the parameter count; an op that gives only `param_shapes` counts the sum of their products. An op
    # whose tensors repeat per layer (RNN, the transformer stacks) gives both: the count in closed form
    # (num_layers 10**9 must not build a list), which tests keep equal to the shapes' sum
    params: ParamRule = _no_params
    # the named learned tensors for resolved args (sizes are core.dims Dims: symbols stay symbols)
    param_shapes: ParamShapesRule = _no_param_shapes
    flops: FlopRule = _no_flops
    rules: tuple = ()  # check ids this op's requirements may raise
    running_stats: bool = False
    reduces: bool = False  # a statistic over dims (a sum, mean, max): what it gives is meant to broadcast back
    accepts: str = "float"  # float | int | any: the operand dtypes torch accepts
    doc: str = ""
    extra: Kind | None = None  # the kind of further keyword arguments (einops' axis lengths); None: none taken
    draw_extra: Callable | None = None  # (rng, args, operand shapes) -> further keyword arguments, for generators
    # whether the measured dtype table (dtype_support) speaks for a node with these args: it was measured with
    # the example's, and a few args select another kernel
    measured_for: Callable[[dict], bool] = _always_measured
    # the row of the measured dtype table for a node with these args, where some args select other kernels
    # (a LayerNorm without weights takes float64); None: the op's own row
    dtype_key: Callable[[dict], str] | None = None
    # what consumers ask of the op instead of keeping lists of names (core/ops/traits.py says each one)
    traits: Collection[str] = frozenset()  # given as any collection of names; kept as a frozenset
    positions: int | None = None  # the operand whose values it reads as positions (an index, an id)
    symbol_args: tuple = ()  # args that may name a symbol the run resolves from the inputs (a Slice's bounds)
    # (arg of dim 0, arg of dim 1) of a layer whose 2-D weight alone fixes what it computes (a design may tie it)
    weight_dims: tuple | None = None
    layer_op: str | None = None  # the op of the layer a stack repeats (TransformerEncoder: its encoder layer)
    scalar: Callable | None = None  # the op on one Python number (the parser folds constants with it)
    # one valid example, (operand (shape, dtype) pairs, args), that tests/test_ops.py runs against torch and the
    # dtype table is measured on; an op declared before this field keeps its example in examples.py
    example: tuple | None = None
    # its spellings in torch's call surface, which the parser reads as this op (it asks by_functional & co. in
    # core/ops, never a list of its own); each spelling names one op, or the table fails when it is built
    functional: tuple = ()  # torch.nn.functional names: F.relu(x), F.relu_(x) are ReLU
    # F.<name>(input, *these) of an activation-style functional: its positional args after the input (F.gelu's
    # approximate); None: the functional's args line up with the constructor's, in order (F.max_pool2d)
    functional_args: tuple | None = None
    torch_functions: tuple = ()  # torch.<name>(x), read as this op with its defaults
    tensor_methods: tuple = ()  # x.<name>(), read as this op with its defaults
    einops_reduction: str | None = None  # the name einops.reduce / Reduce give this reduction ("mean")
    operator: str | None = None  # the Python operator between two tensors that is this op ("+")
    # (attribute, op, arg of its layer count) of each submodule torch builds inside it (nn.Transformer's encoder
    # and decoder), which the parser builds so that a subclass reaches self.encoder
    parts: tuple = ()
    arg_names: frozenset = field(default=frozenset(), init=False)

    def __post_init__(self) -> None:
        self.traits = check_traits(self.name, self.traits)
        if self.params is _no_params and self.param_shapes is not _no_param_shapes:
            self.params = self._count_param_shapes
        self.arg_names = frozenset(a.name for a in self.args)
        self._by_name = {a.name: a for a in self.args}
        self._defaults = {a.name: a.default for a in self.args}  # in the constructor's order
        self._required = frozenset(a.name for a in self.args if a.required)

    def _count_param_shapes(self, args: dict) -> Dim:
        total: Dim = 0
        for _name, shape in self.param_shapes(args):
            n: Dim
            ints = 1
            for d in shape:  # sizes that are all ints (nearly every weight) are multiplied as ints
                if type(d) is not int:
                    n = D.prod(shape)
                    break
                ints *= d
            else:
                n = ints
            total = total + n if type(total) is int and type(n) is int else D.add(total, n)
        return total

    def arg_problems(self, given: dict) -> list[str]:
        """Each given argument that is not a value torch's constructor takes: "name must be ..., got v"
        (names the op does not take are resolve_args' `unknown`)."""
        out = []
        by_name = self._by_name
        for name, v in given.items():
            a = by_name.get(name)
            if a is not None:
                # Arg.problem inlined (this runs for every argument of every node): the default is always good
                default = a.default
                if v is default and default is not REQUIRED:
                    continue
                kind = a.kind
                try:
                    if kind.test(v):
                        continue
                    why = kind.text
                except (TypeError, ValueError, OverflowError, RecursionError):
                    why = kind.text
                detail = kind.detail(v) if kind.detail is not None else None
                if detail is not None:  # the whole reason, where "got <value>" would cut it off
                    out.append(f"{name} {detail}")
                    continue
            else:
                why = self.extra.problem(v) if self.extra is not None else None
            if why is not None:
                out.append(f"{name} must be {why}, got {_short(v)}")
        return out

    def takes_as_given(self, given: dict) -> bool:
        """Whether a node gives only names the op takes, every required one, each a value its kind takes
        (nearly every node): one pass where resolve_args and arg_problems make two. False: the caller takes
        their way, which says what is wrong."""
        keys = given.keys()
        if not (keys <= self.arg_names and self._required <= keys):
            return False
        by_name = self._by_name
        for name, v in given.items():
            a = by_name[name]
            default = a.default
            if v is default and default is not REQUIRED:  # the default is always good (as in arg_problems)
                continue
            try:
                if not a.kind.test(v):
                    return False
            except (TypeError, ValueError, OverflowError, RecursionError):
                return False
        return True

    def resolve_args(self, given: dict) -> tuple[dict, list[str], list[str]]:
        """Args with torch's defaults filled; (args, missing, unknown)."""
        keys = given.keys()
        if keys <= self.arg_names and self._required <= keys:  # the common case, on the hot path
            out = self._defaults.copy()
            out.update(given)
            return out, [], []
        out = {}
        missing: list[str] = []
        for a in self.args:
            if a.name in given:
                out[a.name] = given[a.name]
            elif a.required:
                missing.append(a.name)
            else:
                out[a.name] = a.default
        # a factory kwarg at torch's default (null) is what torch takes when none is given: taken, and left out
        unknown = [k for k in given if k not in self.arg_names and
                   not (given[k] is None and k in FACTORY_ARGS and "factory-kwargs" in self.traits)]
        if self.extra is not None:
            out.update((k, given[k]) for k in unknown)
            unknown = []
        return out, missing, unknown


def _short(v) -> str:
    text = repr(v)
    return text if len(text) <= 60 else text[:57] + "..."


def pair(v, n: int = 2) -> tuple:
    """torch's _pair/_triple: an int or a sequence of n ints (pooling also takes a sequence of one)."""
    if isinstance(v, (list, tuple)):
        return tuple(v) * n if len(v) == 1 and n > 1 else tuple(v)
    return (v,) * n


def symbolic_pieces(ctx: InferCtx, x: TensorType, dim: int, piece, what: str) -> list[TensorType]:
    """The pieces of a split whose size is a symbol: as many as the design reads (piece N exists only
    when N * piece < size, a condition on the symbol), each `piece` long."""
    assert x.shape is not None  # a split asks for the rank first
    size = x.shape[dim]
    n = ctx.max_result
    if n:
        ctx.require_equal(D.add(D.mul(piece, n), 1), size, SHAPE_SPLIT_SIZES,
                          lambda: f"{ctx.node.op} {ctx.node.id!r} is read at piece {n}, which exists only when "
                                  f"{what} of size {size} makes more than {n} pieces", kind="le")
    s = list(x.shape)
    s[dim] = piece
    full = TensorType(tuple(s), x.dtype)
    if not (D.is_const(piece) and piece > 1):
        return [full] * (n + 1)
    # the last piece read may be the short last piece (a split of 2 by 10 is one piece of 2, gen-205157):
    # its length is a size of its own, known to lie in 1..piece
    last = size_symbol(ctx.node.id, dim)
    ctx.bounds[last] = (1, piece, f"the length of piece {n} of {ctx.node.op} {ctx.node.id!r} of a size "
                                  f"{D.fmt(size)}, {piece} long unless it is the last")
    s[dim] = last
    return [full] * n + [TensorType(tuple(s), x.dtype)]


def size_symbol(node_id: str, i: int) -> str:
    """A size nobody knows that is still one size wherever its tensor goes (a `null` size of a tensor made
    from nothing, a slice or piece whose length depends on a symbol): a symbol of its own ("c.size1"), so
    what the design needs of it is stated as a condition ("runs only when c.size1 = 8")."""
    name = re.sub(r"[^A-Za-z_0-9.]", "_", node_id)
    return f"{name if re.match(r'[A-Za-z_]', name) else '_' + name}.size{i}"


def same_shape(ctx: InferCtx) -> list[TensorType]:
    return [ctx.x]


def broadcast(a: tuple, b: tuple, conditions: list | None = None) -> tuple[tuple | None, str | None]:
    """Broadcast two shapes; (shape, None) or (None, reason) when they cannot. A symbol against
    another size broadcasts only when they are equal or one is 1: that condition is appended to
    `conditions` (when given) and the result takes the constant side."""
    out = []
    ra, rb = len(a), len(b)
    for i in range(1, max(ra, rb) + 1):
        da = a[-i] if i <= ra else 1
        db = b[-i] if i <= rb else 1
        if da == 1:
            out.append(db)
        elif db == 1:
            out.append(da)
        elif D.differ(da, db):
            return None, f"size {da} against {db} at dim {-i}"
        elif da is None:
            out.append(db)
        elif db is None or da == db:
            out.append(da)
        else:
            if conditions is not None:
                conditions.append(D.Condition("broadcast", da, db))
            out.append(db if D.is_const(db) else da)
    return tuple(reversed(out)), None


def require_one_float_dtype(ctx: InferCtx, operands: tuple, rule: str) -> bool:
    """A module whose data operands meet its float32 weights in one kernel (Bilinear, attention, the
    Transformer layers): measured, torch refuses them in different dtypes, another float one or an integer
    one ('All tensors must have the same dtype', 'expected m1 and m2 to have the same dtype') where the
    element-wise ops promote. False when it blocked. `operands`: the indices of the data operands."""
    # an operand of unknown type (a dangling reference, an unknown op's result) is not read as float32: an
    # unknown never blocks
    given = [(i, ctx.inputs[i].dtype) for i in operands
             if i < len(ctx.inputs) and ctx.inputs[i].shape is not None]
    kinds = {dt for _, dt in given}
    if len(kinds) < 2:
        return True  # one dtype: the op's measured dtype row judges it
    op = ctx.node.op
    return ctx.require(False, rule, lambda: (
        f"{op} {ctx.node.id!r} receives operands of different dtypes ("
        + ", ".join(f"operand {i}: {dt}" for i, dt in given)
        + f"); torch's {op} takes them only in one dtype, that of its weights: cast them all to float32"))

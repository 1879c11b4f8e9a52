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

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .. import dims as D
from ..dims import Dim


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED = _Required()

FLOAT_DTYPES = {"float32", "float16", "bfloat16", "float64", "float"}
INT_DTYPES = {"int64", "int32", "int16", "int8", "uint8", "long", "int"}


@dataclass(frozen=True)
class Arg:
    name: str
    default: Any = REQUIRED

    @property
    def required(self) -> bool:
        return self.default is REQUIRED


@dataclass(frozen=True)
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


@dataclass
class Violation:
    rule: str
    message: str
    nodes: list
    severity: str = "block"


class InferCtx:
    """What a shape rule sees: the node, its resolved args and operand types."""

    __slots__ = ("node", "args", "inputs", "violations", "producers", "design_train")

    def __init__(self, node, args, inputs, producers=None, design_train=None):
        self.node = node
        self.args = args
        self.inputs: list[TensorType] = inputs
        self.violations: list[Violation] = []
        self.producers = producers or []  # op names of the operands' nodes (None for inputs)
        self.design_train = design_train or {}

    @property
    def x(self) -> TensorType:
        return self.inputs[0]

    def require(self, cond: bool | None, rule: str, message) -> bool:
        """Record a block finding when `cond` is known to be False. `message` is a string, or a
        function that makes it (shape rules run on every node: words only when they are needed)."""
        if cond is False:
            self.violations.append(Violation(rule, message() if callable(message) else message, [self.node.id]))
            return False
        return True

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
                    "shape.rank",
                    f"{self.node.op} {self.node.id!r} expects a {want} {what}, "
                    f"got {len(t.shape)}-D {D.fmt_shape(t.shape)}",
                    [self.node.id],
                )
            )
            return False
        return True


ShapeRule = Callable[[InferCtx], list]
ParamRule = Callable[[dict], int]
FlopRule = Callable[[InferCtx, list], Dim]
BuildRule = Callable[[dict], Any]


def _no_params(args: dict) -> int:
    return 0


def _no_flops(ctx: InferCtx, outs: list) -> Dim:
    return 0


@dataclass
class OpSpec:
    name: str
    family: str
    args: tuple
    infer: ShapeRule
    build: BuildRule
    arity: tuple = (1, 1)  # (min, max); max None = any
    params: ParamRule = _no_params
    flops: FlopRule = _no_flops
    rules: tuple = ()  # check ids this op's requirements may raise
    running_stats: bool = False
    accepts: str = "float"  # float | int | any: the operand dtypes torch accepts
    doc: str = ""
    arg_names: frozenset = field(default=frozenset(), init=False)

    def __post_init__(self) -> None:
        self.arg_names = frozenset(a.name for a in self.args)
        self._defaults = {a.name: a.default for a in self.args}  # in the constructor's order
        self._required = frozenset(a.name for a in self.args if a.required)

    def resolve_args(self, given: dict) -> tuple[dict, list[str], list[str]]:
        """Args with torch's defaults filled; (args, missing, unknown)."""
        keys = given.keys()
        if keys <= self.arg_names and self._required <= keys:  # the common case, on the hot path
            out = self._defaults.copy()
            out.update(given)
            return out, [], []
        out: dict = {}
        missing: list[str] = []
        for a in self.args:
            if a.name in given:
                out[a.name] = given[a.name]
            elif a.required:
                missing.append(a.name)
            else:
                out[a.name] = a.default
        unknown = [k for k in given if k not in self.arg_names]
        return out, missing, unknown


def pair(v, n: int = 2) -> tuple:
    """torch's _pair/_triple: an int or a sequence of n ints."""
    if isinstance(v, (list, tuple)):
        return tuple(v)
    return (v,) * n


def same_shape(ctx: InferCtx) -> list[TensorType]:
    return [ctx.x]


def broadcast(a: tuple, b: tuple) -> tuple[tuple | None, str | None]:
    """Broadcast two shapes; (shape, None) or (None, reason) when they cannot."""
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
        else:
            out.append(da)
    return tuple(reversed(out)), None

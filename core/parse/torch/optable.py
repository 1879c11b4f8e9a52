"""The op table (core/ops) asked with the interpreter's values: what a torch.nn constructor takes and
its defaults (`core.ops.nn_classes`), a layer's learned tensors, its parameter count and output shapes.

Nothing about torch.nn is written here: this only turns the interpreter's sizes (`Sym`, unknowns)
into core.dims' Dims and back, and keeps an error of an op's rule on odd arguments from stopping
the walk (the value is then unknown).
"""

from __future__ import annotations

from ...ops import OP_TABLE, ops_with
from ...ops.base import UNKNOWN, InferCtx, TensorType
from ...ops.base import broadcast as _broadcast
from ...ops.nn_classes import (
    PARAMETRIZATIONS,
    constructor_args,
    constructor_defaults,
    from_pretrained_args,
    parametrized,
    positional_args,
    takes_factory_kwargs,
)
from ...shapes import weight_rows
from ..values import Sym, Unknown, from_dim, is_int

# ops whose call returns several tensors (the interpreter unpacks them); a max pool too, with return_indices
MULTI_RESULT = ops_with("multi-result")
_RULE_ERRORS = (TypeError, ValueError, IndexError, ZeroDivisionError, KeyError, AttributeError)


def arg_names(op):
    """The names of `torch.nn.<op>(...)`'s arguments in order; None for a class the table does not know."""
    args = constructor_args(op)
    return None if args is None else [a.name for a in args]


def positional_names(op):
    """The names `torch.nn.<op>(...)` takes by position, in order (device and dtype where it takes them); None
    for a class the table does not know."""
    return positional_args(op)


def takes_factory(op):
    """Whether `torch.nn.<op>(...)` takes device and dtype (torch raises TypeError for either where not)."""
    return takes_factory_kwargs(op)


def pretrained_args(op):
    """The names `nn.<op>.from_pretrained(...)` takes, in torch's order; None for a class without one."""
    return from_pretrained_args(op)


def required_args(op):
    return [a.name for a in constructor_args(op) or () if a.required]


def defaults(op):
    """torch's defaults of nn.<op>'s constructor (a design leaves them out)."""
    return constructor_defaults(op)


def full_args(op, args):
    """args with the constructor's defaults filled (the op's own defaults for an op that is no
    torch.nn class)."""
    spec = OP_TABLE.get(op)
    out = dict(constructor_defaults(op) or ({} if spec is None else spec.resolve_args({})[0]))
    out.update(args or {})
    return out


def spatial_dims(op):
    """How many spatial dims a window op's sizes cover: torch.nn names them `Conv2d`, `MaxPool3d`."""
    return int(op[-2]) if op.endswith("d") and op[-2:-1] in ("1", "2", "3") else 2


def _table_dim(d):
    return d.expr if isinstance(d, Sym) else d if (is_int(d) or d is None) else None


def _table_arg(v):
    if isinstance(v, Sym):
        return v.expr
    if isinstance(v, (list, tuple)):
        # a design is JSON: the op table's rules take a size given as a tuple as the list it becomes
        return [_table_arg(x) for x in v]
    return v


def _resolved(spec, args):
    """The op's args, resolved with its defaults; a value not known when reading the source is its
    default (a flag) or an unknown size (None). None when a required argument is missing."""
    given = {}
    for k, v in (args or {}).items():
        if k not in spec.arg_names:
            continue
        if isinstance(v, Unknown):
            a = spec._by_name[k]
            v = None if a.required else a.default
        given[k] = _table_arg(v)
    a, missing, _ = spec.resolve_args(given)
    return None if missing else a


def param_shapes(op, args):
    """[(name, shape)] of the learned tensors of nn.<op> with these args (with the `weight_norm` the
    parser records as an argument), as torch names them; a size not known is None. [] for an op the
    table does not hold."""
    spec = OP_TABLE.get(op)
    a = None if spec is None else _resolved(spec, args)
    if a is None:
        return []
    try:
        shapes = spec.param_shapes(a)
    except _RULE_ERRORS:
        return []
    for par in PARAMETRIZATIONS:
        if (args or {}).get(par):
            shapes = parametrized(shapes, par) or shapes
    return [(name, [from_dim(d) for d in shape]) for name, shape in shapes]


def param_count(op, args):
    """Number of learned scalars of one op (the op table's count, the one the verifier and the cost
    use, with a `weight_norm`'s magnitudes), or None when a size is unknown or the table lacks it."""
    spec = OP_TABLE.get(op)
    a = None if spec is None else _resolved(spec, args)
    if a is None:
        return None if spec is not None else 0
    try:
        n = spec.params(a)
        if is_int(n) and (args or {}).get("weight_norm"):
            n += weight_rows(op, a)  # the node's parametrize: one magnitude per slice of dim 0
    except _RULE_ERRORS:
        return None
    return n if is_int(n) else None


def own_bias_count(op, args):
    """What a layer that shares another layer's weight still owns (a tied LM head keeps its bias)."""
    a = dict(args or {})
    if not a.get("bias", True):
        return 0
    full = param_count(op, a)
    bare = param_count(op, dict(a, bias=False))
    return None if full is None or bare is None else full - bare


class _Node:
    __slots__ = ("id", "op")

    def __init__(self, op):
        self.id, self.op = "parse", op


def infer(op, a, shapes, dtypes=None):
    """Output shape (or list of shapes for multi-result ops) of op with args a: the op table's
    shape rule, the same rule the verifier runs; None when unknown or the table lacks the op."""
    return infer_typed(op, a, shapes, dtypes)[0]


def infer_typed(op, a, shapes, dtypes=None):
    """(output shape(s) as `infer` gives them, the dtype of the first result by the op table's dtype
    model); the dtype is None where the table's rule refused the op or did not run."""
    spec = OP_TABLE.get(op)
    if spec is None:
        return None, None  # not an op of the table: the parser does not emit it (see emit_module / emit_op)
    try:
        args, missing, _unknown = spec.resolve_args({k: _table_arg(v) for k, v in a.items()
                                                     if k in spec.arg_names})
        if missing:
            return None, None
        ins = [TensorType(None if sh is None else tuple(_table_dim(d) for d in sh),
                          (dtypes[i] if dtypes and i < len(dtypes) else "float32"))
               for i, sh in enumerate(shapes)]
        outs = spec.infer(InferCtx(_Node(op), args, ins))
    except _RULE_ERRORS:
        return None, None
    res = [None if t.shape is None else [from_dim(d) for d in t.shape] for t in outs]
    dtype = outs[0].dtype if outs and outs[0] is not UNKNOWN and dtypes else None
    return (res if op in MULTI_RESULT or args.get("return_indices") else (res[0] if res else None)), dtype


def broadcast(a, b):
    """The broadcast shape of two known shapes (the op table's rule); None when unknown or they do not
    broadcast."""
    if a is None or b is None:
        return None
    out, _why = _broadcast(tuple(_table_dim(d) for d in a), tuple(_table_dim(d) for d in b))
    return None if out is None else [from_dim(d) for d in out]

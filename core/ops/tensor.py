"""Tensor operations: arithmetic, joins, splits, views, reductions, sources."""

from __future__ import annotations

import re

from .. import dims as D
from . import torch_build as tb
from .base import (
    BOOL,
    FLOAT_DTYPES,
    INT,
    INT_DTYPES,
    NAT,
    NUM,
    POS,
    SIZE,
    SYMBOL,
    UNKNOWN,
    Arg,
    Enum,
    InferCtx,
    Int,
    Ints,
    ListOf,
    OneOf,
    OpSpec,
    Optional,
    TensorType,
    broadcast,
    canonical_dtype,
    promote,
    size_symbol,
    symbolic_pieces,
)
from .functional import (
    INTERP_MODES,
    INTERP_SCALE,
    INTERP_SIZE,
    fill_fits,
    interp_dtype_key,
    interpolate_infer,
    pad_sizes,
)
from .rules import (
    CONNECTIVITY_BAD_ARG,
    DTYPE_INT_INTO_FLOAT,
    DTYPE_MIXED,
    SHAPE_BROADCAST,
    SHAPE_CONCAT_SIZES,
    SHAPE_DIM_RANGE,
    SHAPE_EXPAND,
    SHAPE_INDEX_RANGE,
    SHAPE_MATMUL_INNER,
    SHAPE_PAD_SIZE,
    SHAPE_RANK,
    SHAPE_RESHAPE_PRODUCT,
    SHAPE_SPATIAL_COLLAPSE,
    SHAPE_SPLIT_SIZES,
    SHAPE_UNKNOWN_DIM,
)

DIM = Arg("dim", kind=INT)
DIMS = Optional(OneOf(INT, ListOf(INT)))
# a target shape: sizes, symbols, and -1 for the one size torch infers
TARGET = ListOf(OneOf(Int(-1), SYMBOL))


def _norm_dim(ctx: InferCtx, dim, rank: int, extra: int = 0):
    """A dim argument made non-negative, or None (with a finding) when out of range (a 0-D tensor
    takes dims 0 and -1, as torch wraps it like a 1-D one)."""
    r = max(rank + extra, 1)
    if not isinstance(dim, int) or not (-r <= dim < r):
        ctx.require(False, SHAPE_DIM_RANGE,
                    f"{ctx.node.op} {ctx.node.id!r}: dim={dim} is out of range for a {rank}-D input")
        return None
    return dim % r


def _scale_factor_tuple(args: dict) -> dict:
    if isinstance(args.get("scale_factor"), list):
        args["scale_factor"] = tuple(args["scale_factor"])
    return args


def _dtype_join(types):
    floats = [t.dtype for t in types if t.is_float]
    return floats[0] if floats else types[0].dtype


# ---- element-wise binary ------------------------------------------------
def _binary_infer(ctx: InferCtx):
    """Broadcast the operands left to right, as torch evaluates a + b + c: Add and Mul take two or more."""
    acc = ctx.inputs[0]
    for b in ctx.inputs[1:]:
        acc = _broadcast_pair(ctx, acc, b)
        if acc is UNKNOWN:
            break
    return [acc]


def _broadcast_pair(ctx: InferCtx, a, b):
    dtype = promote(a.dtype, b.dtype)
    if ctx.node.op == "Div" and a.is_int and b.is_int:
        dtype = "float32"
    if a.shape is None or b.shape is None:
        return TensorType(None, dtype)
    conds: list = []
    out, why = broadcast(a.shape, b.shape, conds)
    if out is not None and (None in a.shape or None in b.shape):
        ctx.unknown_size(f"{ctx.node.op} {ctx.node.id!r} broadcasts {D.fmt_shape(a.shape)} with "
                         f"{D.fmt_shape(b.shape)}")
    words = (f"{ctx.node.op} {ctx.node.id!r} combines {D.fmt_shape(a.shape)} and {D.fmt_shape(b.shape)}, "
             f"which cannot broadcast ({why}); project one side (e.g. a 1x1 conv or Linear) to match")
    if out is None:
        return ctx.fail(SHAPE_BROADCAST, words)[0]
    for c in conds:
        if not ctx.on_condition(c, SHAPE_BROADCAST,
                                f"{ctx.node.op} {ctx.node.id!r} combines {D.fmt_shape(a.shape)} and "
                                f"{D.fmt_shape(b.shape)}"):
            return UNKNOWN
    return TensorType(out, dtype)


def _matmul_infer(ctx: InferCtx):
    a, b = ctx.inputs[0], ctx.inputs[1]
    ctx.require(not (a.is_int or b.is_int) or (a.is_int and b.is_int), DTYPE_INT_INTO_FLOAT,
                f"MatMul {ctx.node.id!r} mixes integer and float operands; cast one side")
    if a.shape is None or b.shape is None:
        return [TensorType(None, _dtype_join([a, b]))]
    # measured: every matmul kernel (dot, mv, mm, bmm) needs one dtype; nothing promotes (float32 @ float64 fails)
    da, db = canonical_dtype(a.dtype), canonical_dtype(b.dtype)
    ctx.require(da == db or a.is_int != b.is_int, DTYPE_MIXED,
                lambda: f"MatMul {ctx.node.id!r} multiplies {da} by {db}; torch's matmul needs one dtype — "
                "cast one side")
    if len(a.shape) == 0 or len(b.shape) == 0:
        return ctx.fail(SHAPE_RANK, f"MatMul {ctx.node.id!r}: operands must be at least 1-D")
    sa = a.shape if len(a.shape) > 1 else (1,) + a.shape
    sb = b.shape if len(b.shape) > 1 else b.shape + (1,)
    if not ctx.require_equal(sa[-1], sb[-2], SHAPE_MATMUL_INNER,
                             f"MatMul {ctx.node.id!r}: inner sizes differ: {D.fmt_shape(a.shape)} @ "
                             f"{D.fmt_shape(b.shape)} ({sa[-1]} vs {sb[-2]}); transpose one operand or fix its width"):
        return [UNKNOWN]
    conds: list = []
    batch, why = broadcast(sa[:-2], sb[:-2], conds)
    for c in conds:
        if not ctx.on_condition(c, SHAPE_BROADCAST, f"MatMul {ctx.node.id!r}: batch dims {D.fmt_shape(sa[:-2])} "
                                                      f"and {D.fmt_shape(sb[:-2])}"):
            return [UNKNOWN]
    if batch is None:
        return ctx.fail(SHAPE_BROADCAST,
                        f"MatMul {ctx.node.id!r}: batch dims {D.fmt_shape(sa[:-2])} and {D.fmt_shape(sb[:-2])} "
                        f"cannot broadcast ({why})")
    out = batch + ((sa[-2],) if len(a.shape) > 1 else ()) + ((sb[-1],) if len(b.shape) > 1 else ())
    return [TensorType(out, _dtype_join([a, b]))]


def _matmul_flops(ctx, outs):
    a, b = ctx.inputs[0].shape, ctx.inputs[1].shape
    if a is None or b is None or outs[0].shape is None:
        return None
    k = a[-1]
    return D.mul(D.mul(2, D.prod(outs[0].shape)), k)


# ---- joins and splits -----------------------------------------------------
def _shapes_text(ts, most: int = 8) -> str:
    """The operands' shapes for a message; a join of thousands names the first few."""
    shown = ", ".join(D.fmt_shape(t.shape) for t in ts[:most])
    return shown + (f" and {len(ts) - most} more" if len(ts) > most else "")


def _concat_infer(stack: bool):
    def infer(ctx: InferCtx):
        ts = ctx.inputs
        dtype = _dtype_join(ts)
        shapes = [t.shape for t in ts if t.shape is not None]
        if len(shapes) < len(ts):
            return [TensorType(None, dtype)]
        r = len(shapes[0])
        if any(len(s) != r for s in shapes):
            return ctx.fail(SHAPE_CONCAT_SIZES,
                            f"{ctx.node.op} {ctx.node.id!r}: operands have different ranks "
                            f"({_shapes_text(ts)})")
        dim = _norm_dim(ctx, ctx.args["dim"], r, 1 if stack else 0)
        if dim is None:
            return [UNKNOWN]
        out = list(shapes[0])
        for shape in shapes[1:]:
            for i, (u, v) in enumerate(zip(out, shape)):
                if (stack or i != dim) and not ctx.require_equal(
                        u, v, SHAPE_CONCAT_SIZES,
                        lambda i=i: f"{ctx.node.op} {ctx.node.id!r} along dim {ctx.args['dim']}: operands differ at "
                        f"dim {i} ({_shapes_text(ts)}); all sizes but the joined dim must agree"):
                    return [UNKNOWN]
                if u is None:
                    out[i] = v
        if stack:
            out.insert(dim, len(ts))
        else:
            out[dim] = D.total([s[dim] for s in shapes])
        return [TensorType(tuple(out), dtype)]

    return infer


MAX_PIECES = 4096  # results of a Split the walk follows; more are unknown (each would be a result to keep)


def _split_results(args, size):
    sec = args["split_size_or_sections"]
    if isinstance(sec, list):
        return list(sec) if len(sec) <= MAX_PIECES else None
    if not D.is_const(size):
        return None
    if size // sec > MAX_PIECES:
        return None
    return [sec] * (size // sec) + ([size % sec] if size % sec else [])


def _split_infer(ctx: InferCtx):
    x = ctx.x
    if x.shape is None:
        return [UNKNOWN]
    dim = _norm_dim(ctx, ctx.args["dim"], len(x.shape))
    if dim is None:
        return [UNKNOWN]
    sec = ctx.args["split_size_or_sections"]
    size = x.shape[dim]
    if isinstance(sec, list) and not ctx.require_equal(
            sum(sec), size, SHAPE_SPLIT_SIZES,
            f"Split {ctx.node.id!r}: sections {sec} sum to {sum(sec)} but dim {dim} has size {size}"):
        return [UNKNOWN]
    pieces = _split_results(ctx.args, size)
    if pieces is None and ctx.declared and D.is_sym(size) and D.is_const(D.substitute(size, ctx.declared)):
        pieces = _split_results(ctx.args, D.substitute(size, ctx.declared))
    if pieces is None:
        return symbolic_pieces(ctx, x, dim, sec, f"dim {dim}")
    outs = []
    for p in pieces:
        s = list(x.shape)
        s[dim] = p
        outs.append(TensorType(tuple(s), x.dtype))
    return outs


# ---- views ------------------------------------------------------------------
def _reshape_infer(ctx: InferCtx):
    x = ctx.x
    target = list(ctx.args["shape"])
    if x.shape is None:
        return [TensorType(tuple(None if t == -1 else t for t in target), x.dtype)]
    total = D.prod(x.shape)
    if target.count(-1) > 1:
        return ctx.fail(SHAPE_RESHAPE_PRODUCT, f"Reshape {ctx.node.id!r}: only one -1 is allowed in {target}")
    known = D.prod([t for t in target if t != -1])
    if -1 in target:
        if D.is_const(total) and D.is_const(known) and (known == 0 or total % known):
            return ctx.fail(SHAPE_RESHAPE_PRODUCT,
                            f"Reshape {ctx.node.id!r}: {D.fmt_shape(x.shape)} has {total} elements, "
                            f"which is not a multiple of {known} for target {target}")
        if not (D.is_const(total) and D.is_const(known)) and not D.divides(total, known) and \
                not ctx.require_equal(total, known, SHAPE_RESHAPE_PRODUCT,
                                      f"Reshape {ctx.node.id!r}: the -1 in {target} needs {D.fmt_shape(x.shape)}'s "
                                      f"{D.fmt(total)} elements to be a multiple of {D.fmt(known)}", kind="multiple"):
            return [UNKNOWN]
        fill = D.exact_div(total, known)
        target = [fill if t == -1 else t for t in target]
    elif not ctx.require_equal(total, known, SHAPE_RESHAPE_PRODUCT,
                               f"Reshape {ctx.node.id!r}: {D.fmt_shape(x.shape)} has {total} elements but target "
                               f"{target} holds {known}; make the products agree"):
        return [UNKNOWN]
    return [TensorType(tuple(target), x.dtype)]


def _flatten_infer(ctx: InferCtx):
    x = ctx.x
    if x.shape is None:
        return [x]
    r = len(x.shape)
    s = _norm_dim(ctx, ctx.args["start_dim"], r)
    if r == 0:
        e = _norm_dim(ctx, ctx.args["end_dim"], r)
        return [TensorType((1,), x.dtype)] if s is not None and e is not None else [UNKNOWN]
    e = _norm_dim(ctx, ctx.args["end_dim"], r)
    if s is None or e is None:
        return [UNKNOWN]
    if s > e:
        return ctx.fail(SHAPE_DIM_RANGE, f"Flatten {ctx.node.id!r}: start_dim {s} comes after end_dim {e}")
    return [TensorType(x.shape[:s] + (D.prod(x.shape[s:e + 1]),) + x.shape[e + 1:], x.dtype)]


def _unflatten_infer(ctx: InferCtx):
    x = ctx.x
    if x.shape is None:
        return [x]
    dim = _norm_dim(ctx, ctx.args["dim"], len(x.shape))
    if dim is None:
        return [UNKNOWN]
    sizes = list(ctx.args["unflattened_size"])
    if sizes.count(-1) > 1:
        return ctx.fail(SHAPE_RESHAPE_PRODUCT, f"Unflatten {ctx.node.id!r}: only one -1 is allowed in {sizes}")
    if -1 in sizes:
        known = D.prod([v for v in sizes if v != -1])
        size = x.shape[dim]
        if not ctx.require_equal(size, known, SHAPE_RESHAPE_PRODUCT,
                                 f"Unflatten {ctx.node.id!r}: sizes {sizes} do not divide dim {dim} of size {size}",
                                 kind="multiple"):
            return [UNKNOWN]
        sizes = [D.exact_div(size, known) if v == -1 else v for v in sizes]
    prod = D.prod(sizes)
    if not ctx.require_equal(prod, x.shape[dim], SHAPE_RESHAPE_PRODUCT,
                             f"Unflatten {ctx.node.id!r}: sizes {ctx.args['unflattened_size']} multiply to {prod}, "
                             f"but dim {dim} has {x.shape[dim]}"):
        return [UNKNOWN]
    return [TensorType(x.shape[:dim] + tuple(sizes) + x.shape[dim + 1:], x.dtype)]


def _permute_infer(ctx: InferCtx):
    x = ctx.x
    dims = list(ctx.args["dims"])
    if x.shape is None:
        return [TensorType(None, x.dtype)]
    r = len(x.shape)
    norm = [d % r if isinstance(d, int) and -r <= d < r else None for d in dims]
    perm = [d for d in norm if d is not None]
    if len(dims) != r or len(perm) < len(norm) or sorted(perm) != list(range(r)):
        return ctx.fail(SHAPE_DIM_RANGE,
                        f"Permute {ctx.node.id!r}: dims {dims} are not a permutation of the {r} dims of "
                        f"{D.fmt_shape(x.shape)}")
    return [TensorType(tuple(x.shape[d] for d in perm), x.dtype)]


def _transpose_infer(ctx: InferCtx):
    x = ctx.x
    if x.shape is None:
        return [x]
    r = len(x.shape)
    a = _norm_dim(ctx, ctx.args["dim0"], r)
    b = _norm_dim(ctx, ctx.args["dim1"], r)
    if a is None or b is None:
        return [UNKNOWN]
    if r == 0:
        return [x]
    s = list(x.shape)
    s[a], s[b] = s[b], s[a]
    return [TensorType(tuple(s), x.dtype)]


def _squeeze_infer(ctx: InferCtx):
    x = ctx.x
    if x.shape is None:
        return [x]
    dim = ctx.args["dim"]
    if dim is None:
        sizes = [D.substitute(d, ctx.declared) if ctx.declared and D.is_sym(d) else d for d in x.shape]
        if any(_maybe_one(ctx, d) for d in x.shape):
            return _squeeze_unknown(ctx, x, [d for d in x.shape if _maybe_one(ctx, d)])
        return [TensorType(tuple(d for d, v in zip(x.shape, sizes) if v != 1), x.dtype)]
    literal = dim if isinstance(dim, list) else [dim]
    if len(set(literal)) != len(literal):
        return ctx.fail(SHAPE_DIM_RANGE, f"Squeeze {ctx.node.id!r}: a dim appears more than once in {dim}")
    dims = []
    for one in (dim if isinstance(dim, list) else [dim]):
        d = _norm_dim(ctx, one, max(len(x.shape), 1))
        if d is None:
            return [UNKNOWN]
        if d in dims:
            return ctx.fail(SHAPE_DIM_RANGE, f"Squeeze {ctx.node.id!r}: dim {d} appears more than once in {dim}")
        dims.append(d)
    if not x.shape:
        return [x]
    # a symbol the design declares as 1 (seq_len: 1) is squeezed like a 1
    sizes = [D.substitute(d, ctx.declared) if ctx.declared and D.is_sym(d) else d for d in x.shape]
    if any(_maybe_one(ctx, x.shape[i]) for i in dims):
        return _squeeze_unknown(ctx, x, [x.shape[i] for i in dims if _maybe_one(ctx, x.shape[i])])
    return [TensorType(tuple(s for i, (s, v) in enumerate(zip(x.shape, sizes)) if not (i in dims and v == 1)),
                       x.dtype)]


def _maybe_one(ctx: InferCtx, size) -> bool:
    """A size of its own (a Constant's null size, run as 1; a constant slice of a symbolic size) that may
    be 1: whether Squeeze drops it is not known. A named symbol (B, T) the design leaves undeclared is
    taken as more than 1, as its runs take it."""
    if not (isinstance(size, str) and re.fullmatch(r"[A-Za-z_][A-Za-z_0-9.]*\.size\d+", size)):
        return False
    least, most = ctx.bounds[size][:2] if size in ctx.bounds else (1, 1)
    return least <= 1 <= most


def _squeeze_unknown(ctx: InferCtx, x: TensorType, which: list) -> list:
    ctx.warn(SHAPE_UNKNOWN_DIM, f"Squeeze {ctx.node.id!r} drops {', '.join(map(D.fmt, which))} only where it is "
                                  "1, which the verifier cannot tell; the sizes after it are unknown")
    return [TensorType(None, x.dtype)]


def _unsqueeze_infer(ctx: InferCtx):
    x = ctx.x
    if x.shape is None:
        return [x]
    d = _norm_dim(ctx, ctx.args["dim"], len(x.shape), 1)
    if d is None:
        return [UNKNOWN]
    s = list(x.shape)
    s.insert(d, 1)
    return [TensorType(tuple(s), x.dtype)]


def _reduce_infer(ctx: InferCtx):
    x = ctx.x
    if ctx.node.op == "Mean":
        ctx.require(not x.is_int, DTYPE_INT_INTO_FLOAT,
                    f"Mean {ctx.node.id!r} of integer {x.dtype} values is not defined in torch; cast first")
    # torch sums bool and integer values as int64 (amax/amin keep the dtype)
    dtype = "int64" if ctx.node.op == "Sum" and x.is_int else x.dtype
    if x.shape is None:
        return [TensorType(None, dtype)]
    r = len(x.shape)
    dim, keep = ctx.args["dim"], ctx.args["keepdim"]
    if dim is None:
        return [TensorType((), dtype)]  # x.sum() / x.mean(): one value, keepdim or not
    dims = list(dim) if isinstance(dim, (list, tuple)) else [dim]
    norm = []
    for d in dims:
        nd = _norm_dim(ctx, d, r)
        if nd is None:
            return [UNKNOWN]
        norm.append(nd)
    if len(set(norm)) != len(norm):  # torch compares the dims made non-negative: [-1, 1] on 2-D names 1 twice
        return ctx.fail(SHAPE_DIM_RANGE, f"{ctx.node.op} {ctx.node.id!r}: a dim appears more than once in {dim} "
                                           f"(for a {r}-D input)")
    reduced = set(norm)  # looked up once per dim: a list made this rank x len(dim)
    out = [1 if i in reduced else s for i, s in enumerate(x.shape)] if keep else \
          [s for i, s in enumerate(x.shape) if i not in reduced]
    return [TensorType(tuple(out), dtype)]


def _select_infer(ctx: InferCtx):
    x = ctx.x
    if x.shape is None:
        return [x]
    r = len(x.shape)
    if r == 0:
        return ctx.fail(SHAPE_RANK, f"Select {ctx.node.id!r}: a 0-D tensor has no dim to select from")
    d = _norm_dim(ctx, ctx.args["dim"], r)
    if d is None:
        return [UNKNOWN]
    idx, size = ctx.args["index"], x.shape[d]
    if not ctx.require_equal(idx + 1 if idx >= 0 else -idx, size, SHAPE_INDEX_RANGE,
                             f"Select {ctx.node.id!r}: index {idx} is out of range for dim {d} of size {size}",
                             kind="le"):
        return [UNKNOWN]
    return [TensorType(x.shape[:d] + x.shape[d + 1:], x.dtype)]


def _slice_infer(ctx: InferCtx):
    x = ctx.x
    if x.shape is None:
        return [x]
    d = _norm_dim(ctx, ctx.args["dim"], len(x.shape))
    if d is None:
        return [UNKNOWN]
    a = ctx.args
    size = x.shape[d]
    start, end, step = a["start"], a["end"], a["step"] or 1
    # no size passes int64: an end at its largest (x[:, :sys.maxsize]) is the open end, a start at its
    # least the open start, for every size
    end = None if D.is_const(end) and step > 0 and end >= _INT64_MAX else end
    start = None if D.is_const(start) and step > 0 and start <= -_INT64_MAX else start
    # a bound written as a symbol is that symbol's size in the run (pos[:, :T]): at the design's declared
    # size it is a number; else an end of T from the start is T long, as long as T fits the size
    if isinstance(start, str) or isinstance(end, str):
        at = D.substitute(end, ctx.declared) if isinstance(end, str) and ctx.declared else None
        never_past = isinstance(end, str) and end != size and D.always(D.Condition("le", end, size))
        if start in (None, 0) and step == 1 and (never_past or D.is_const(at) and (
                end == size or (D.is_const(size) and at <= size))):
            s = list(x.shape)
            s[d] = end  # T long, at the declared T as at any: kept as the symbol, so what meets it compares T
            return [TensorType(tuple(s), x.dtype)]
        start, end = (D.substitute(v, ctx.declared) if isinstance(v, str) and ctx.declared else v
                      for v in (start, end))
        if isinstance(start, str) or isinstance(end, str):
            if start in (None, 0) and isinstance(end, str) and step == 1:
                s = list(x.shape)
                s[d] = end
                if end != size:
                    c = D.Condition("le", end, size)
                    if D.always(c):
                        pass  # the end never passes the size (x[:, :T] of a T+2): exactly T long, no condition
                    elif not D.satisfiable(c, ctx.declared, ctx.bounds):
                        s[d] = size  # the end is always past the size: torch clamps it, the slice is all of it
                    elif ctx.is_context_table(end, size):
                        pass  # [:T] of a mask buffer or RoPE cache of N rows, T undeclared: N is its context
                    else:  # a warn only: torch never refuses a slice, what meets its length may
                        ctx.state_condition(f"Slice {ctx.node.id!r} runs as written only when {c.text()}: [:{end}] "
                                            f"of a dim of size {D.fmt(size)} is {end} long only up to {D.fmt(size)} "
                                            "(torch clamps the end)")
                return [TensorType(tuple(s), x.dtype)]
            s = list(x.shape)
            s[d] = None
            ctx.unknown_size(f"Slice {ctx.node.id!r}: bounds [{start}:{end}] of a size the design does not declare")
            return [TensorType(tuple(s), x.dtype)]
    n: D.Dim
    if D.is_const(size):
        n = len(range(*slice(start, end, step).indices(size)))
    elif start in (None, 0) and end is None and step == 1:
        n = size
    elif (n := _slice_len_at_declared(size, start, end, step, ctx.declared)) is not None:
        pass
    elif start is not None and start < 0 and end is None and step == 1:
        n = -start
    elif step >= 1 and (start is None or start >= 0) and (end is None or end < 0):
        # a slice that grows with the size (x[:, 2:], x[:, :-1], x[:, 1:-1]): size - start + end while the
        # size is at least start - end, as written for a crop that aligns a residual with a valid conv's
        # output (the length is 0 below that, which nothing here models)
        cut = (start or 0) - (end or 0)
        n = D.add(size, -cut) if step == 1 else D.add(D.floordiv(D.add(size, step - 1 - cut), step), 0)
    elif (span := _slice_len_range(start, end, step)) is not None:
        # torch clamps constant bounds to the size, so the length lies in a range whatever the size is
        # (x[:, 6:8] of a T is 0..2 long): a constant when the range is one value, else a size of its own
        # whose range is known, so what meets it is judged there ("runs only when n2.size1 = 2", or a
        # block when no length in the range fits)
        n = span[0] if span[0] == span[1] else size_symbol(ctx.node.id, d)
        if span[0] != span[1]:
            ctx.bounds[n] = (span[0], span[1], f"the length of {ctx.node.op} {ctx.node.id!r}'s "
                                               f"[{'' if start is None else start}:{'' if end is None else end}"
                                               f"{'' if step == 1 else f':{step}'}] of a size {D.fmt(size)}")
    s = list(x.shape)
    s[d] = n
    return [TensorType(tuple(s), x.dtype)]


def _slice_len_range(start, end, step):
    """(least, most) length of a constant slice over every size >= 1, or None when the length grows with
    the size (an open end from a non-negative start, or a negative end after one: x[1:-1])."""
    first = 0 if start is None else start
    if step <= 0 or (end is None and first >= 0) or (end is not None and end < 0 <= first):
        return None
    past = abs(first) + abs(end or 0) + 2 * step + 2  # beyond this both bounds are clamped the same way
    # between the sizes where a bound starts or stops being clamped the length is monotone, so its least
    # and most lie at those sizes: a bounded set of sizes to try, whatever the bounds (an end of 2**63-1
    # once listed that many lengths)
    e = abs(end or 0)
    corners = {1, past, *(b + j for b in (abs(first), e, abs(first) + e, abs(e - abs(first))) for j in (-1, 0, 1))}
    lengths = [len(range(*slice(start, end, step).indices(v))) for v in corners if 1 <= v <= past]
    return min(lengths), max(lengths)


_NEAR_MOST = 4096
_INT64_MAX = 2 ** 63 - 1


def _slice_len_at_declared(size, start, end, step, declared):
    """The length of a constant slice of a symbolic size, as a size the next ops can compare (a Stack of
    T[0:3] and T[3:8]): torch clamps the bounds, so the length is a piecewise function of the size; at
    the design's declared size it is known, and it is kept in the form that holds on the piece around
    that size (a constant when the slice ends inside it, ceil((size - start) / step) when it runs past
    the end). Unknown (None) without a declared size or when neither form holds."""
    at = D.substitute(size, declared) if declared else None
    if not D.is_const(at) or at < 0:
        return None
    width = 2 * abs(step)
    if width > _NEAR_MOST:
        return None  # a step this long: the sizes around the declared one are too many to list
    for near in ([at + j for j in range(width + 1)], [v for v in range(at - width, at + 1) if v >= 0]):
        lengths = [len(range(*slice(start, end, step).indices(v))) for v in near]
        if len(set(lengths)) == 1:
            return lengths[0]
        if all(n == v - (at - lengths[-1 if near[-1] == at else 0]) for n, v in zip(lengths, near)):  # T[1:-1]
            return D.sub(size, at - lengths[-1 if near[-1] == at else 0])
        less = slice(start, end, step).indices(at)[0]
        if step > 0 and 0 <= less < at and all(n == -(-(v - less) // step) for n, v in zip(lengths, near)):
            return D.sub(size, less) if step == 1 else D.floordiv(D.add(size, step - 1 - less), step)
    return None


def _scale_infer(ctx: InferCtx):
    # measured: an integer value keeps integer tensors integer (a bool one becomes int64), a float value
    # promotes them to float32 (the dtype table's rows "Scale[integer value]" and "Scale")
    x = ctx.x
    if x.dtype == "bool" and type(ctx.args["value"]) is int:
        return [TensorType(x.shape, "int64")]
    return [x]


def _expand_infer(ctx: InferCtx):
    x = ctx.x
    target = list(ctx.args["shape"])
    if x.shape is None:
        return [TensorType(tuple(None if t == -1 else t for t in target), x.dtype)]
    if len(target) < len(x.shape):
        return ctx.fail(SHAPE_EXPAND,
                        f"Expand {ctx.node.id!r}: target {target} has fewer dims than {D.fmt_shape(x.shape)}")
    pad = len(target) - len(x.shape)
    out = []
    for i, t in enumerate(target):
        src = x.shape[i - pad] if i >= pad else None
        if t == -1:
            if i < pad:
                return ctx.fail(SHAPE_EXPAND, f"Expand {ctx.node.id!r}: -1 is not allowed in a new leading dim "
                                                f"({target})")
            out.append(src)
            continue
        if i >= pad and src != 1 and not ctx.require_equal(
                src, t, SHAPE_EXPAND, f"Expand {ctx.node.id!r}: cannot expand size {src} to {t} at dim {i}; only "
                                        "size-1 dims can be expanded", kind="expand"):
            return [UNKNOWN]
        out.append(t)
    return [TensorType(tuple(out), x.dtype)]


def _source_infer(dtype_of):
    def infer(ctx: InferCtx):
        shape = ctx.args.get("shape")
        if shape is None:
            return [TensorType((ctx.args["end"],), "int64")]
        return [TensorType(tuple(size_symbol(ctx.node.id, i) if d is None else d for i, d in enumerate(shape)),
                           dtype_of(ctx.args))]

    return infer


_upsample_infer = interpolate_infer


def _param_shapes(a):
    return [("weight", tuple(a["shape"]))]  # torch_impl.Parameter holds it as `weight`


OPS = [
    OpSpec(name, "tensor", (), _binary_infer, tb.custom(name), arity=(2, most), accepts="any",
           rules=(SHAPE_BROADCAST,), traits=("functional",) + traits, operator=symbol)
    # Add and Mul are associative: torch runs a + b + c + d (WaveNet's sum of skips); Sub and Div stay binary
    for name, symbol, most, traits in (
            ("Add", "+", None, ("adds", "grows-ids", "masks", "shortcut", "promotes-operands", "rotary-step")),
            ("Sub", "-", 2, ("adds", "masks", "promotes-operands", "refuses-bool", "rotary-step")),
            ("Mul", "*", None, ("grows-ids", "nonlinear", "promotes-operands", "rotary-step")),
            ("Div", "/", 2, ("nonlinear", "scales", "promotes-operands")))
] + [
    OpSpec("MatMul", "tensor", (), _matmul_infer, tb.custom("MatMul"), arity=(2, 2), flops=_matmul_flops,
           rules=(SHAPE_MATMUL_INNER, SHAPE_BROADCAST, SHAPE_RANK, DTYPE_MIXED), traits=("functional", "nonlinear",)),
    OpSpec("Concat", "tensor", (Arg("dim", 0, INT),), _concat_infer(False), tb.custom("Concat"), arity=(1, None),
           accepts="any", rules=(SHAPE_CONCAT_SIZES, SHAPE_DIM_RANGE),
           traits=("functional", "first-dtype", "joins-values", "shortcut", "promotes-operands", "rotary-step")),
    OpSpec("Stack", "tensor", (Arg("dim", 0, INT),), _concat_infer(True), tb.custom("Stack"), arity=(1, None),
           accepts="any", rules=(SHAPE_CONCAT_SIZES, SHAPE_DIM_RANGE),
           traits=("functional", "first-dtype", "joins-values", "promotes-operands")),
    OpSpec("Split", "tensor", (Arg("split_size_or_sections", kind=OneOf(POS, ListOf(NAT))), Arg("dim", 0, INT)),
           _split_infer, tb.custom("Split"),
           accepts="any", rules=(SHAPE_SPLIT_SIZES, SHAPE_DIM_RANGE),
           traits=("functional", "first-dtype", "multi-result", "split-view")),
    OpSpec("Reshape", "tensor", (Arg("shape", kind=TARGET),), _reshape_infer, tb.custom("Reshape"), accepts="any",
           rules=(SHAPE_RESHAPE_PRODUCT,),

           traits=("functional", "first-dtype", "flattens", "moves-values",
                   "takes-target-shape", "view-if-contiguous")),
    OpSpec("Flatten", "tensor", (Arg("start_dim", 1, INT), Arg("end_dim", -1, INT)), _flatten_infer,
           tb.module("Flatten"),
           accepts="any", rules=(SHAPE_DIM_RANGE,),
           traits=("first-dtype", "flattens", "moves-values", "view-if-contiguous")),
    OpSpec("Unflatten", "tensor", (DIM, Arg("unflattened_size", kind=ListOf(Int(-1), min_len=1))), _unflatten_infer,
           tb.module("Unflatten"),
           accepts="any", rules=(SHAPE_RESHAPE_PRODUCT,), traits=("moves-values", "view")),
    OpSpec("Permute", "tensor", (Arg("dims", kind=ListOf(INT)),), _permute_infer, tb.custom("Permute"), accepts="any",
           rules=(SHAPE_DIM_RANGE,),
           traits=("functional", "adds-no-position", "first-dtype", "moves-values", "permutes", "view")),
    OpSpec("Transpose", "tensor", (Arg("dim0", kind=INT), Arg("dim1", kind=INT)), _transpose_infer,
           tb.custom("Transpose"),
           accepts="any", rules=(SHAPE_DIM_RANGE,),
           traits=("functional", "adds-no-position", "first-dtype", "moves-values", "permutes", "view")),
    OpSpec("Squeeze", "tensor", (Arg("dim", None, DIMS),), _squeeze_infer, tb.custom("Squeeze"), accepts="any",
           traits=("functional", "moves-values", "view")),
    OpSpec("Unsqueeze", "tensor", (DIM,), _unsqueeze_infer, tb.custom("Unsqueeze"), accepts="any",
           traits=("functional", "moves-values", "view")),
    OpSpec("Mean", "tensor", (Arg("dim", None, DIMS), Arg("keepdim", False, BOOL)), _reduce_infer, tb.custom("Mean"),
           rules=(SHAPE_DIM_RANGE, DTYPE_INT_INTO_FLOAT), traits=("functional", "reduces"), einops_reduction="mean"),
    OpSpec("Sum", "tensor", (Arg("dim", None, DIMS), Arg("keepdim", False, BOOL)), _reduce_infer, tb.custom("Sum"),
           accepts="any", rules=(SHAPE_DIM_RANGE,), traits=("functional", "keeps-max", "sums", "reduces"),
           einops_reduction="sum"),
    OpSpec("Amax", "tensor", (Arg("dim", None, DIMS), Arg("keepdim", False, BOOL)), _reduce_infer, tb.custom("Amax"),
           accepts="any", rules=(SHAPE_DIM_RANGE,), doc="torch.amax: the largest value over dim",
           traits=("functional", "keeps-max", "reduces"), einops_reduction="max"),
    OpSpec("Amin", "tensor", (Arg("dim", None, DIMS), Arg("keepdim", False, BOOL)), _reduce_infer, tb.custom("Amin"),
           accepts="any", rules=(SHAPE_DIM_RANGE,), doc="torch.amin: the smallest value over dim",
           traits=("functional", "reduces"), einops_reduction="min"),
    OpSpec("Select", "tensor", (DIM, Arg("index", kind=INT)), _select_infer, tb.custom("Select"), accepts="any",
           rules=(SHAPE_DIM_RANGE, SHAPE_INDEX_RANGE),
           traits=("functional", "first-dtype", "moves-values", "picks-values", "view")),
    OpSpec("Slice", "tensor", (DIM, Arg("start", None, Optional(OneOf(INT, SYMBOL))),
                               Arg("end", None, Optional(OneOf(INT, SYMBOL))),
                                   Arg("step", 1, Optional(POS))), _slice_infer,
           tb.custom("Slice"), accepts="any", rules=(SHAPE_DIM_RANGE,), symbol_args=("start", "end"),
           traits=("functional", "first-dtype", "moves-values", "picks-values", "view")),
    OpSpec("Expand", "tensor", (Arg("shape", kind=TARGET),), _expand_infer, tb.custom("Expand"), accepts="any",
           rules=(SHAPE_EXPAND,),
           traits=("functional", "first-dtype", "moves-values", "table", "takes-target-shape", "view")),
    OpSpec("Scale", "tensor", (Arg("value", kind=NUM),), _scale_infer, tb.custom("Scale"), accepts="any",
           dtype_key=lambda a: "Scale[integer value]" if type(a["value"]) is int else "Scale",
           traits=("functional", "adds-no-position", "scales")),
    OpSpec("Constant", "tensor", (Arg("shape", kind=ListOf(Optional(SIZE))), Arg("value", 0.0, OneOf(NUM, BOOL)),
                                  Arg("dtype", None, Optional(Enum(*sorted(FLOAT_DTYPES | INT_DTYPES | {"bool"}))))),
           _source_infer(lambda a: a["dtype"] if a.get("dtype") else
                         "bool" if isinstance(a.get("value"), bool) else  # torch.full(shape, True) is bool
                         "int64" if isinstance(a.get("value"), int) else "float32"),
           tb.custom("Constant"), arity=(0, 0), accepts="any", traits=("functional", "source", "table")),
    OpSpec("Arange", "tensor", (Arg("end", kind=SIZE),), _source_infer(lambda a: "int64"), tb.custom("Arange"),
           arity=(0, 0), accepts="any", traits=("functional", "source", "table", "starts-values")),
    OpSpec("Parameter", "tensor", (Arg("shape", kind=ListOf(NAT)),), _source_infer(lambda a: "float32"),
           tb.custom("Parameter"),
           arity=(0, 0), param_shapes=_param_shapes, accepts="any",
           traits=("functional", "source", "table", "starts-values")),
    OpSpec("Upsample", "tensor", (Arg("size", None, Optional(INTERP_SIZE)),
                                  Arg("scale_factor", None, Optional(INTERP_SCALE)),
                                  Arg("mode", "nearest", INTERP_MODES), Arg("align_corners", None, Optional(BOOL))),
                                      # nn.Upsample reads a tuple of scale factors but calls float() on a list:
                                      # a design's JSON list is the tuple a Python author writes
                                      _upsample_infer, tb.module("Upsample", _scale_factor_tuple),
           rules=(SHAPE_RANK, DTYPE_INT_INTO_FLOAT, CONNECTIVITY_BAD_ARG, SHAPE_SPATIAL_COLLAPSE),
           dtype_key=interp_dtype_key),
]


# ---- padding ----------------------------------------------------------------


def _pad_infer(n: int, mode: str):
    """The padding layers: Zero/ConstantPad take any rank >= n; Reflection/Replication/CircularPad take
    n + 1 or n + 2 dims; reflection pads must be smaller than the size they reflect, circular ones at
    most that size."""
    def infer(ctx: InferCtx):
        x = ctx.x
        if x.shape is None:
            return [x]
        r = len(x.shape)
        if (mode == "constant" and r < n) or (mode != "constant" and r not in (n + 1, n + 2)):
            want = f"at least {n}-D" if mode == "constant" else f"{n + 1}-D or {n + 2}-D"
            return ctx.fail(SHAPE_RANK, f"{ctx.node.op} {ctx.node.id!r} expects a {want} input, "
                                          f"got {D.fmt_shape(x.shape)}")
        pad = ctx.args["padding"]
        pads = list(pad) if isinstance(pad, (list, tuple)) else [pad] * (2 * n)
        if not fill_fits(ctx, x, ctx.args.get("value", 0), pads):
            return [UNKNOWN]
        s = pad_sizes(ctx, list(x.shape), pads, n, mode)
        if s is None:
            return [UNKNOWN]
        return [TensorType(tuple(s), x.dtype)]

    return infer


PAD_RULES = (SHAPE_RANK, SHAPE_SPATIAL_COLLAPSE, SHAPE_PAD_SIZE)
for _n in (1, 2, 3):
    _padding = Arg("padding", kind=Ints(2 * _n, INT))
    OPS += [
        OpSpec(f"ZeroPad{_n}d", "tensor", (_padding,), _pad_infer(_n, "constant"), tb.module(f"ZeroPad{_n}d"),
               accepts="any", rules=PAD_RULES, traits=("pads",)),
        OpSpec(f"ConstantPad{_n}d", "tensor", (_padding, Arg("value", kind=NUM)), _pad_infer(_n, "constant"),
               tb.module(f"ConstantPad{_n}d"), accepts="any", rules=PAD_RULES, traits=("pads", "pads-with-fill")),
        OpSpec(f"ReflectionPad{_n}d", "tensor", (_padding,), _pad_infer(_n, "reflect"),
               tb.module(f"ReflectionPad{_n}d"), accepts="any", rules=PAD_RULES, traits=("pads",)),
        OpSpec(f"ReplicationPad{_n}d", "tensor", (_padding,), _pad_infer(_n, "replicate"),
               tb.module(f"ReplicationPad{_n}d"), accepts="any", rules=PAD_RULES, traits=("pads",)),
        OpSpec(f"CircularPad{_n}d", "tensor", (_padding,), _pad_infer(_n, "circular"), tb.module(f"CircularPad{_n}d"),
               accepts="any", rules=PAD_RULES, traits=("pads",)),
    ]

"""The parser's model of einops' call surface: `rearrange`, `reduce`, `repeat`,
`einsum`, `pack`, `unpack` and the layers `Rearrange`, `Reduce`, `Repeat`.

einops is never imported.  A pattern is read into elementary axes and written as
the archgraph ops torch itself would run for it: Reshape (split and merge groups),
Permute, Mean/Sum/Amax/Amin (reduced axes), Unsqueeze + Expand (new axes), Concat
and Split (pack, unpack).  Shapes, parameters and results are exact.
"""

from __future__ import annotations

from ..ops import by_einops_reduction
from ..ops.einsum import PatternError, read_side, split_pattern
from . import torch as T
from .registry import handles
from .values import InstanceVal, InterpError, Sym, TensorVal, TorchClass, Unknown, dim_truediv, is_int, prod


def _expand_ellipsis(groups, n_ell):
    names = [f"...{i}" for i in range(n_ell)]
    out = []
    for g in groups:
        if g == "...":
            out += [[n] for n in names]
        elif "..." in g:  # '(...)': the axes it stands for merged into one
            out.append([x for y in g for x in (names if y == "..." else [y])])
        else:
            out.append(g)
    return out


def _plan(x, pattern, sizes):
    """(lhs groups, rhs groups, size of every named axis) for tensor x."""
    if not isinstance(pattern, str):
        raise PatternError("pattern not known")
    lhs, rhs = split_pattern(pattern)
    lg, rg = read_side(lhs), read_side(rhs)
    if x.shape is None:
        raise PatternError("input of unknown rank")
    rank = len(x.shape)
    has_ell = "..." in lg
    n_ell = rank - (len(lg) - 1) if has_ell else 0
    if has_ell and n_ell < 0 or not has_ell and len(lg) != rank:
        raise PatternError(f"pattern has {len(lg)} groups for a {rank}-D input")
    lg, rg = _expand_ellipsis(lg, n_ell), _expand_ellipsis(rg, n_ell)
    known = {}
    for k, v in sizes.items():
        if is_int(v) or isinstance(v, Sym):
            known[k] = v
        else:
            raise PatternError(f"size {k} not known")
    for g, d in zip(lg, x.shape):
        names = [n for n in g if not isinstance(n, int)]
        missing = [n for n in names if n not in known]
        if len(missing) > 1:
            raise PatternError("two unknown axes in one group")
        if missing:
            rest = prod([known[n] for n in names if n in known])
            q = dim_truediv(d, rest) if d is not None and rest is not None else None
            if q is None:
                raise PatternError(f"axis {missing[0]} not known")
            known[missing[0]] = q
    return lg, rg, known


def _reshape_if(it, t, shape):
    if t.shape is not None and len(t.shape) == len(shape) and all(
            (a is b) or (is_int(a) and is_int(b) and a == b) or (isinstance(a, Sym) and a == b)
            for a, b in zip(t.shape, shape)):
        return t
    return T.reshape(it, t, list(shape))


def _axis_size(known, n):
    return n if isinstance(n, int) else known[n]


def apply(it, x, pattern, reduction=None, sizes=None, op_name="rearrange"):
    """einops.rearrange / reduce / repeat of one tensor, as archgraph ops."""
    sizes = dict(sizes or {})
    try:
        lg, rg, known = _plan(x, pattern, sizes)
    except PatternError as e:
        return T.passthrough(it, f"einops.{op_name}('{pattern}') ({e})", x, keep_shape=False)
    lhs_axes = [n for g in lg for n in g]
    rhs_axes = [n for g in rg for n in g if not isinstance(n, int)]
    cur = x
    # 1. split the input's groups into elementary axes
    if any(len(g) != 1 for g in lg):
        cur = _reshape_if(it, cur, [known[n] for n in lhs_axes])
    # 2. reduce the axes the output does not name
    gone = [i for i, n in enumerate(lhs_axes) if n not in rhs_axes]
    if gone:
        if reduction is None:
            return T.passthrough(it, f"einops.{op_name}('{pattern}') drops axes without a reduction", x,
                                 keep_shape=False)
        op = by_einops_reduction(reduction) if isinstance(reduction, str) else None
        if op is None:
            return T.passthrough(it, f"einops reduction {reduction!r}", cur, keep_shape=False)
        cur = T.emit_op(it, op, {"dim": gone, "keepdim": False}, [cur])
        lhs_axes = [n for n in lhs_axes if n in rhs_axes]
    # 3. bring the kept axes into the output's order
    kept = [n for n in rhs_axes if n in lhs_axes]
    perm = [lhs_axes.index(n) for n in kept]
    if perm != list(range(len(perm))):
        cur = T.permute(it, cur, perm)
    # 4. new axes (repeat): unsqueeze each where it goes, then expand
    order = [n for g in rg for n in g]
    new = [n for n in order if isinstance(n, int) or n not in lhs_axes]
    if new:
        pos = 0
        target = []
        for n in order:
            if isinstance(n, int) or n not in lhs_axes:
                cur = T.unsqueeze(it, cur, pos)
                s = n if isinstance(n, int) else sizes.get(n)
                if s is None:
                    return T.passthrough(it, f"einops.{op_name}: size of new axis {n} not given", x,
                                         keep_shape=False)
                target.append(s)
            else:
                target.append(-1)
            pos += 1
        cur = T.expand(it, cur, target)
        for n, s in zip(order, target):
            if not isinstance(n, int) and n not in known:
                known[n] = s
    # 5. merge into the output's groups
    final = [prod([_axis_size(known, n) for n in g]) if g else 1 for g in rg]
    if any(len(g) != 1 for g in rg):
        cur = _reshape_if(it, cur, final)
    return cur


def _sizes(kwargs, skip=("pattern", "reduction")):
    return {k: v for k, v in kwargs.items() if k not in skip}


def rearrange(it, args, kwargs):
    x = args[0] if args else kwargs.get("tensor")
    pattern = args[1] if len(args) > 1 else kwargs.get("pattern")
    if isinstance(x, (list, tuple)) and all(isinstance(t, TensorVal) for t in x):
        x = T.concat(it, [T.unsqueeze(it, t, 0) for t in x], 0)  # a list is stacked first
    if not isinstance(x, TensorVal):
        return Unknown("einops.rearrange of a non-tensor")
    return apply(it, x, pattern, None, _sizes(kwargs))


def reduce(it, args, kwargs):
    x = args[0] if args else kwargs.get("tensor")
    pattern = args[1] if len(args) > 1 else kwargs.get("pattern")
    reduction = args[2] if len(args) > 2 else kwargs.get("reduction")
    if not isinstance(x, TensorVal):
        return Unknown("einops.reduce of a non-tensor")
    return apply(it, x, pattern, reduction, _sizes(kwargs), "reduce")


def repeat(it, args, kwargs):
    x = args[0] if args else kwargs.get("tensor")
    pattern = args[1] if len(args) > 1 else kwargs.get("pattern")
    if not isinstance(x, TensorVal):
        return Unknown("einops.repeat of a non-tensor")
    return apply(it, x, pattern, None, _sizes(kwargs), "repeat")


def einsum(it, args, kwargs):
    """einops.einsum(t1, t2, 'b i d, b j d -> b i j'): the pattern comes last, axes are words."""
    if not args or not isinstance(args[-1], str):
        return Unknown("einops.einsum")
    spec = args[-1]
    ins, _, out = spec.partition("->")
    names = {}

    def letters(side):
        out_ = ""
        for w in side.split():
            if w == "...":
                out_ += "..."
                continue
            if w not in names:
                names[w] = chr(ord("a") + len(names))
            out_ += names[w]
        return out_

    eq = ",".join(letters(s) for s in ins.split(",")) + "->" + letters(out)
    return T.f_einsum(it, [eq] + list(args[:-1]), {})


def _star_index(groups):
    flat = [g for g in groups]
    return flat.index(["*"]) if ["*"] in flat else None


def pack(it, args, kwargs):
    """einops.pack([a, b], 'b * d') -> (packed, shapes of each '*' part)."""
    ts = args[0] if args else kwargs.get("tensors")
    pattern = args[1] if len(args) > 1 else kwargs.get("pattern")
    ts = list(it.iterate(ts))
    if not isinstance(pattern, str) or not all(isinstance(t, TensorVal) and t.shape is not None for t in ts):
        raise InterpError("einops.pack of tensors of unknown shape")
    try:
        groups = read_side(pattern, star=True)
    except PatternError as e:
        raise InterpError(f"einops.pack pattern {pattern!r}: {e}") from None
    k = _star_index(groups)
    if k is None:
        raise InterpError("einops.pack pattern without *")
    after = len(groups) - k - 1
    parts, shapes = [], []
    for t in ts:
        r = len(t.shape)
        star = list(t.shape[k:r - after])
        shapes.append(tuple(star))
        merged = list(t.shape[:k]) + [prod(star) if star else 1] + list(t.shape[r - after:])
        parts.append(_reshape_if(it, t, merged))
    return (T.concat(it, parts, k), shapes)


def unpack(it, args, kwargs):
    """einops.unpack(t, shapes, 'b * d') -> the tensors pack joined."""
    t = args[0] if args else kwargs.get("tensor")
    shapes = args[1] if len(args) > 1 else kwargs.get("packed_shapes")
    pattern = args[2] if len(args) > 2 else kwargs.get("pattern")
    if not isinstance(t, TensorVal) or t.shape is None or not isinstance(pattern, str):
        raise InterpError("einops.unpack of a tensor of unknown shape")
    try:
        groups = read_side(pattern, star=True)
    except PatternError as e:
        raise InterpError(f"einops.unpack pattern {pattern!r}: {e}") from None
    k = _star_index(groups)
    shapes = [list(s) for s in it.iterate(shapes)]
    sizes = [prod(s) if s else 1 for s in shapes]
    if k is None or any(s is None for s in sizes):
        raise InterpError("einops.unpack with sizes not known")
    if not all(is_int(s) for s in sizes):
        raise InterpError("einops.unpack with sizes that depend on the input")
    pieces = T.emit_op(it, "Split", {"split_size_or_sections": sizes, "dim": k}, [t], nres=len(sizes))
    if not isinstance(pieces, tuple):
        pieces = (pieces,)
    out = []
    for p, s in zip(pieces, shapes):
        full = list(p.shape[:k]) + s + list(p.shape[k + 1:]) if p.shape is not None else None
        out.append(_reshape_if(it, p, full) if full is not None else p)
    return out


# ---------------------------------------------------------------- layers
def make_layer(it, kind, args, kwargs):
    """einops.layers.torch.Rearrange / Reduce / Repeat: a module without parameters."""
    inst = InstanceVal(TorchClass(kind), "module", "__einops__")
    inst.line, inst.file = it.loc[1], it.loc[0]
    pattern = args[0] if args else kwargs.get("pattern")
    reduction = None
    if kind == "Reduce":
        reduction = args[1] if len(args) > 1 else kwargs.get("reduction")
    inst.attrs["__einops__"] = (kind, pattern, reduction, _sizes(kwargs))
    return inst


def call_layer(it, inst, args, kwargs):
    kind, pattern, reduction, sizes = inst.attrs["__einops__"]
    x = args[0] if args else kwargs.get("input")
    if not isinstance(x, TensorVal):
        raise InterpError(f"einops {kind} called on {it.describe(x)}")
    g = it.graph
    if g is not None:
        g.scope.append(inst.qname or "")
    try:
        return apply(it, x, pattern, reduction, sizes, kind.lower())
    finally:
        if g is not None:
            g.scope.pop()


handles("einops.rearrange")(rearrange)
handles("einops.reduce")(reduce)
handles("einops.repeat")(repeat)
handles("einops.einsum")(einsum)
handles("einops.pack")(pack)
handles("einops.unpack")(unpack)


@handles("einops.layers.torch.Rearrange")
def _rearrange_layer(it, a, k):
    return make_layer(it, "Rearrange", a, k)


@handles("einops.layers.torch.Reduce")
def _reduce_layer(it, a, k):
    return make_layer(it, "Reduce", a, k)


@handles("einops.layers.torch.Repeat")
def _repeat_layer(it, a, k):
    return make_layer(it, "Repeat", a, k)

"""Einsum(equation), and einops' Rearrange / Reduce / Repeat (pattern, plus axis lengths as keyword
arguments, e.g. {"pattern": "b c (h p1) (w p2) -> b (h w) (p1 p2 c)", "p1": 16, "p2": 16}).

The same parse serves the shape rule (here) and the run (`einops_apply`, called by the torch
module): einops itself is not needed to build a design.
"""

from __future__ import annotations

import re

from .. import dims as D
from . import torch_build as tb
from .base import INT_DTYPES, NAT, SYMBOL, UNKNOWN, Arg, Enum, InferCtx, Kind, OneOf, OpSpec, TensorType, promote
from .rules import (
    DTYPE_INT_INTO_FLOAT,
    DTYPE_MIXED,
    DTYPE_UNSUPPORTED,
    SHAPE_EINOPS_PATTERN,
    SHAPE_EINSUM_SIZES,
    SHAPE_UNKNOWN_DIM,
)

_LETTER = re.compile(r"^[A-Za-z]$")


class PatternError(ValueError):
    """An equation or pattern torch (or einops) refuses; the message says why."""


# ---- einsum ----------------------------------------------------------------------------------
def parse_equation(eq: str, n_operands: int):
    """([terms], output or None); each term a list of letters and at most one '...'."""
    eq = eq.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != n_operands:
        raise PatternError(f"{len(terms)} subscript term(s) for {n_operands} operand(s)")

    def split(term):
        out, i = [], 0
        while i < len(term):
            if term.startswith("...", i):
                if "..." in out:
                    raise PatternError(f"more than one ellipsis in {term!r}")
                out.append("...")
                i += 3
            elif _LETTER.match(term[i]):
                out.append(term[i])
                i += 1
            else:
                raise PatternError(f"invalid subscript {term[i]!r} in {eq!r}")
        return out

    parsed = [split(t) for t in terms]
    out = split(rhs) if arrow else None
    if out is not None:
        seen = set()
        for c in out:
            if c in seen:
                raise PatternError(f"output subscript {c} appears more than once")
            seen.add(c)
            if c != "..." and not any(c in t for t in parsed):
                raise PatternError(f"output subscript {c} does not appear in the inputs")
        if "..." in out and not any("..." in t for t in parsed):
            raise PatternError("ellipsis in the output but in no input")
    return parsed, out


def einsum_shape(eq: str, shapes: list, ctx: InferCtx | None = None):
    """The output shape, or raises PatternError; symbolic sizes that must agree go through ctx."""
    terms, out = parse_equation(eq, len(shapes))
    sizes: dict = {}
    ell = ()
    for k, (term, shape) in enumerate(zip(terms, shapes)):
        letters = [c for c in term if c != "..."]
        if "..." in term:
            n_ell = len(shape) - len(letters)
            if n_ell < 0:
                raise PatternError(f"operand {k} has {len(shape)} dims, fewer than its subscripts {''.join(term)}")
            at = term.index("...")
            dims = list(shape[:at]) + list(shape[at + n_ell:])
            mine = tuple(shape[at:at + n_ell])
            if ctx is not None:
                from .base import broadcast

                conds: list = []
                merged, why = broadcast(ell, mine, conds)
                if merged is None:
                    raise PatternError(f"ellipsis dims do not broadcast ({why})")
                for c in conds:
                    ctx.on_condition(c, SHAPE_EINSUM_SIZES, f"Einsum {ctx.node.id!r}: ellipsis dims")
                ell = merged
            else:
                ell = mine if len(mine) >= len(ell) else ell
        else:
            if len(shape) != len(letters):
                raise PatternError(f"operand {k} has {len(shape)} dims but subscripts {''.join(term)}")
            dims = list(shape)
        mine_sizes: dict = {}
        for c, s in zip(letters, dims):
            if c in mine_sizes and mine_sizes[c] != s and D.is_const(s) and D.is_const(mine_sizes[c]):
                raise PatternError(f"subscript {c} is repeated in operand {k} with sizes {mine_sizes[c]} and {s}")
            if c in mine_sizes and ctx is not None:  # a diagonal: the sizes must be equal, 1 does not broadcast
                a, b = (s, mine_sizes[c]) if D.is_const(mine_sizes[c]) else (mine_sizes[c], s)
                ctx.require_equal(a, b, SHAPE_EINSUM_SIZES,
                                  f"Einsum {ctx.node.id!r}: subscript {c} is repeated in operand {k} with sizes "
                                  f"{mine_sizes[c]} and {s}")
            mine_sizes[c] = s
        for c, s in zip(letters, dims):
            prev = sizes.get(c)
            if prev is None or prev == 1:
                sizes[c] = s if prev is None or s != 1 else prev
                if prev == 1:
                    sizes[c] = s
                continue
            if s == 1 or s == prev:
                continue
            if D.is_const(s) and D.is_const(prev):
                raise PatternError(f"subscript {c} has size {s} for operand {k}, which does not broadcast with "
                                   f"size {prev} seen before")
            if ctx is not None:
                ctx.require_equal(s, prev, SHAPE_EINSUM_SIZES,
                                  f"Einsum {ctx.node.id!r}: subscript {c} has sizes {prev} and {s}", kind="broadcast")
    if out is None:
        once = [c for c in sorted(sizes, key=lambda c: (c.islower(), c)) if sum(t.count(c) for t in terms) == 1]
        out = (["..."] if ell else []) + once
    shape = []
    for c in out:
        if c == "...":
            shape.extend(ell)
        else:
            shape.append(sizes[c])
    return tuple(shape), sizes, terms, out


def _label_sizes(term: list, shape: tuple | None) -> dict:
    """Subscript -> its size in one operand (the ellipsis dims left out)."""
    assert shape is not None  # the rule asks for every operand's rank first
    letters = [c for c in term if c != "..."]
    if "..." in term:
        at = term.index("...")
        dims = list(shape[:at]) + list(shape[len(shape) - (len(letters) - at):]) if len(letters) > at else \
            list(shape[:at])
    else:
        dims = list(shape)
    return dict(zip(letters, dims))


def _summed(dtype: str) -> str:
    """torch.sum's dtype: bool and integers become int64."""
    return "int64" if dtype == "bool" or dtype in INT_DTYPES else dtype


def _contract(dtypes: list, sizes: list, outs: set, is_one) -> tuple:
    """(result dtype, None) or (None, (rule, why)): torch's eager einsum (aten einsum, as measured).
    A subscript not in the output is summed at the last operand where its size is not 1: out of the
    result alone or of the operand alone when the other side has size 1 there (a sum: bool and integers
    become int64), else it is a contraction dim; a pair with contraction dims is one bmm (or dot): one
    dtype, no bool; a pair without is a broadcast multiply, which promotes."""
    if len(dtypes) == 1:  # one operand: a sum over any subscript not in the output, size 1 or not
        return (_summed(dtypes[0]) if set(sizes[0]) - outs else dtypes[0]), None
    last: dict = {}
    for k, sz in enumerate(sizes):
        for c, n in sz.items():
            if c not in outs and not is_one(n):
                last[c] = k
    acc = dtypes[0]
    have = dict(sizes[0])
    for c in [c for c in have if c not in outs and last.get(c, 0) == 0]:
        if not is_one(have.pop(c)):
            acc = _summed(acc)
    for k in range(1, len(dtypes)):
        dt, sz = dtypes[k], sizes[k]
        contracted = False
        for c in set(have) | set(sz):
            if c in outs or last.get(c, 0) != k:
                continue
            if is_one(have.get(c, 1)):
                dt = _summed(dt)
            elif is_one(sz.get(c, 1)):
                acc = _summed(acc)
            else:
                contracted = True
        if contracted and acc != dt:
            return None, (DTYPE_MIXED, f"operand {k} ({dt}) is contracted with a {acc} operand in one matrix "
                                         "product; torch needs one dtype there")
        if contracted and acc == "bool":
            return None, (DTYPE_UNSUPPORTED, f"operand {k} is contracted in one matrix product of bool values, "
                                               "which torch's bmm does not take")
        if not contracted:
            acc = promote(acc, dt)
        for c, n in sz.items():
            if c in outs or last.get(c, 0) > k:
                have[c] = n if is_one(have.get(c, 1)) else have.get(c, 1)
        for c in [c for c in have if c not in outs and last.get(c, 0) <= k]:
            del have[c]
    return acc, None


UNSURE_SIZES = 4  # unknown sizes tried both ways (size 1 and not); more are left unjudged


def _einsum_dtype(ctx: InferCtx, terms: list, out: list) -> str | None:
    """The result dtype as torch's eager einsum makes it (None: blocked). Whether a size is 1 decides
    what is summed and what is contracted (`_contract`): a size the verifier does not know is tried
    both ways, and the design is blocked only when it fails either way; when it fails only if a
    symbol is not 1, that is stated as the condition it runs under."""
    ts = ctx.inputs
    outs = set(out) - {"..."}
    sizes = [_label_sizes(t, x.shape) for t, x in zip(terms, ts)]
    dtypes = [t.dtype for t in ts]
    unsure: list = []

    def known_one(n):
        if D.is_sym(n) and ctx.declared:
            v = D.substitute(n, ctx.declared)
            n = n if v is None else v
        if D.is_const(n):
            return n == 1
        c = D.condition("eq", n, 1) if n is not None else None
        if c is not None and c is not True and not D.satisfiable(c):
            return False
        if n not in unsure:
            unsure.append(n)
        return None

    for sz in sizes:
        for c, n in sz.items():
            if c not in outs:
                known_one(n)
    if len(unsure) > UNSURE_SIZES:
        return promote_all(dtypes)
    results = []
    for bits in range(1 << len(unsure)):
        ones = {n for b, n in enumerate(unsure) if bits >> b & 1}
        results.append(_contract(dtypes, sizes, outs, lambda n, ones=ones: known_one(n) or n in ones))
    failing = [r for r in results if r[1] is not None]
    if not failing:
        return results[0][0]
    rule, why = failing[0][1]
    if len(failing) == len(results) and None not in unsure:  # each null size is its own unknown: not judged
        ctx.fail(rule, f"Einsum {ctx.node.id!r}: {why}")
        return None
    symbols = [n for n in unsure if D.is_sym(n)]
    if symbols:
        if not ctx.on_condition(D.condition("eq", symbols[0], 1), rule,
                                f"Einsum {ctx.node.id!r}: unless it is 1, {why}"):
            return None
    else:
        ctx.warn(SHAPE_UNKNOWN_DIM, f"Einsum {ctx.node.id!r}: a size it sums over is unknown; unless it is 1, "
                                      f"{why}")
    ok = [r for r in results if r[1] is None]
    return ok[0][0] if ok else promote_all(dtypes)


def promote_all(dtypes: list) -> str:
    acc = dtypes[0]
    for d in dtypes[1:]:
        acc = promote(acc, d)
    return acc


def _einsum_infer(ctx: InferCtx):
    ts = ctx.inputs
    if any(t.shape is None for t in ts):
        return [TensorType(None, promote_all([t.dtype for t in ts]))]
    try:
        shape, _, terms, out = einsum_shape(ctx.args["equation"], [t.shape for t in ts], ctx)
    except PatternError as exc:
        return ctx.fail(SHAPE_EINSUM_SIZES, f"Einsum {ctx.node.id!r}: {exc}")
    dtype = _einsum_dtype(ctx, terms, out)
    if dtype is None:
        return [UNKNOWN]
    return [TensorType(shape, dtype)]


def _einsum_flops(ctx, outs):
    """torch contracts operands left to right, each pair as one bmm (2 FLOPs a multiply-add): batch
    (in both and kept) x left-only kept x right-only kept x summed."""
    ts = ctx.inputs
    if len(ts) < 2 or any(t.shape is None for t in ts):
        return 0 if len(ts) < 2 else None
    _, sizes, terms, out = einsum_shape(ctx.args["equation"], [t.shape for t in ts])
    if any("..." in t for t in terms) or "..." in out:
        return None
    total = 0
    left = set(terms[0])
    for k in range(1, len(terms)):
        right = set(terms[k])
        later = set(out).union(*[set(t) for t in terms[k + 1:]]) if k + 1 < len(terms) else set(out)
        lk = {c for c in left if c in later or c in right}
        rk = {c for c in right if c in later or c in left}
        batch = {c for c in lk & rk if c in later}
        summed = (lk & rk) - later
        lo = lk - rk
        ro = rk - lk
        n = 2
        for c in batch | summed | lo | ro:
            n = D.mul(n, sizes[c])
        total = D.add(total, n)
        left = (lk | rk) & later
    return total


# ---- einops ----------------------------------------------------------------------------------
# einops' own split of a side: whitespace and parentheses part the tokens; each is a name, '...', a number
# (an anonymous axis of that size) or, in a pack pattern, '*'
_SIDE_TOKEN = re.compile(r"[()]|[^\s()]+")


def split_pattern(pattern) -> tuple:
    """('left', 'right') of an einops pattern 'left -> right', or raises PatternError."""
    if not isinstance(pattern, str) or pattern.count("->") != 1:
        raise PatternError("the pattern needs 'left -> right'")
    left, _, right = pattern.partition("->")
    return left, right


def read_side(text: str, *, star: bool = False) -> list:
    """One side of an einops pattern (or a pack pattern, where `star`), as einops reads it: a list of
    groups, each a list of axis names, numbers (anonymous axes of that size; 1 is none) and at most one
    '...' (as '(...)' writes it), or the bare '...'. 'b (h w) ... 1' -> [['b'], ['h', 'w'], '...', []].
    Raises PatternError for what einops refuses to parse."""
    groups: list = []
    group: list | None = None
    ellipses = 0
    for tok in _SIDE_TOKEN.findall(text):
        if tok == "(":
            if group is not None:
                raise PatternError("nested parentheses")
            group = []
            continue
        if tok == ")":
            if group is None:
                raise PatternError("unbalanced ')'")
            groups.append(group)
            group = None
            continue
        if tok == "...":
            ellipses += 1
            if ellipses > 1:
                raise PatternError("more than one '...' on one side")
            if group is None:
                groups.append("...")
            else:
                group.append("...")
            continue
        if tok.isdigit():
            item = int(tok)
        elif tok.isidentifier() or (star and tok == "*"):
            item = tok
        else:
            raise PatternError(f"invalid axis {tok!r} in the pattern")
        if group is None:
            groups.append([] if item == 1 else [item])
        elif item != 1:
            group.append(item)
    if group is not None:
        raise PatternError("unbalanced '('")
    return groups


def _side(text: str) -> list:
    """A side the op table's einops ops take: `read_side` without anonymous axes other than 1, and '...'
    only bare."""
    side = read_side(text)
    for e in side:
        if isinstance(e, list):
            for m in e:
                if m == "...":
                    raise PatternError("'...' inside parentheses is not supported")
                if isinstance(m, int):
                    raise PatternError(f"a number other than 1 ({m}) in the pattern")
    return side


def einops_sides(pattern) -> tuple | None:
    """(left, right) of an einops pattern as `read_side` reads them; None for one einops refuses to parse."""
    try:
        lt, rt = split_pattern(pattern)
        return read_side(lt), read_side(rt)
    except PatternError:
        return None


def _axes(side: list) -> list:
    """A side's axes in order, groups opened: names, anonymous sizes and '...' (size-1 axes are none)."""
    return [m for e in side for m in (["..."] if e == "..." else e)]


def einops_reorder(pattern, rank: int) -> list | None:
    """The permutation a pattern applies to a tensor of `rank` dims when all it does is reorder named axes
    (`b c h w -> b h w c`, a group of one axis being that axis); None for any other pattern."""
    sides = einops_sides(pattern)
    if sides is None:
        return None
    left, right = sides
    if not all(isinstance(e, list) and len(e) == 1 and isinstance(e[0], str) and e[0] != "..."
               for e in left + right):
        return None
    lhs, rhs = [e[0] for e in left], [e[0] for e in right]
    if len(lhs) != rank or sorted(lhs) != sorted(rhs):
        return None
    return [lhs.index(t) for t in rhs]


def einops_is_view(pattern) -> bool:
    """Whether torch's result of the pattern is a view of its input (measured: splits, reorders, new axes and
    merges of axes that lie next to each other in the input, in order, are views; any other merge, a merge
    with a new axis and a reduction copy)."""
    sides = einops_sides(pattern)
    if sides is None:
        return False
    lhs = _axes(sides[0])
    groups = [g for g in sides[1] if g]  # an empty group (a new size-1 axis) moves nothing
    rhs = _axes(groups)
    if any(t not in rhs for t in lhs):
        return False  # a reduction
    # a merge is a view when its axes lie next to each other in the input, in order (the input read as
    # contiguous); a new axis in a merge (a repeat's stride 0) makes it a copy
    for g in groups:
        if g == "..." or len(g) < 2:
            continue
        if any(t not in lhs for t in g):
            return False
        at = [lhs.index(t) for t in g]
        if any(b != a + 1 for a, b in zip(at, at[1:])):
            return False
    return True


def einops_keeps_every_axis(pattern) -> bool:
    """Whether every input axis of the pattern is still in its result (a Reduce of it then only rearranges)."""
    sides = einops_sides(pattern)
    return sides is not None and set(_axes(sides[0])) <= set(_axes(sides[1]))


def _names(side: list) -> list:
    out = []
    for e in side:
        for n in (e if isinstance(e, list) else [e]):
            if n != "...":
                if n in out:
                    raise PatternError(f"axis {n} appears twice on one side")
                out.append(n)
    return out


def parse_pattern(kind: str, pattern: str, axes: dict):
    lt, rt = split_pattern(pattern)
    left, right = _side(lt), _side(rt)
    ln, rn = _names(left), _names(right)
    if ("..." in left) != ("..." in right):
        raise PatternError("'...' on one side only")
    if kind == "rearrange" and set(ln) != set(rn):
        raise PatternError(f"axes {sorted(set(ln) ^ set(rn))} appear on one side only")
    if kind == "reduce" and not set(rn) <= set(ln):
        raise PatternError(f"axes {sorted(set(rn) - set(ln))} are new on the right; reduce cannot make them")
    if kind == "repeat" and not set(ln) <= set(rn):
        raise PatternError(f"axes {sorted(set(ln) - set(rn))} disappear; repeat cannot drop them")
    for name in axes:
        if name not in ln and name not in rn:
            raise PatternError(f"axis length {name}={axes[name]} names no axis of the pattern")
    if kind == "repeat":
        missing = [n for n in rn if n not in ln and n not in axes]
        if missing:
            raise PatternError(f"new axes {missing} need their lengths")
    return left, right, ln, rn


def _left_lengths(left: list, shape: tuple, axes: dict, ctx: InferCtx | None):
    """Each left axis's length and the ellipsis dims, from the input's shape."""
    n_named = sum(1 for e in left if e != "...")
    if "..." in left:
        if len(shape) < n_named:
            raise PatternError(f"the input has {len(shape)} dims, the pattern at least {n_named}")
    elif len(shape) != n_named:
        raise PatternError(f"the input has {len(shape)} dims, the pattern's left side {n_named}")
    lengths: dict = {}
    ell: tuple = ()
    i = 0
    for e in left:
        if e == "...":
            k = len(shape) - n_named
            ell = tuple(shape[i:i + k])
            i += k
            continue
        size = shape[i]
        i += 1
        members = e if isinstance(e, list) else [e]
        known = [axes[m] for m in members if m in axes]
        unknown = [m for m in members if m not in axes]
        if len(unknown) > 1:
            raise PatternError(f"axes {unknown} of one group need their lengths")
        prod = 1
        for v in known:
            prod *= v
        for m in members:
            if m in axes:
                lengths[m] = axes[m]
        if unknown:
            if D.is_const(size):
                if prod == 0 or size % prod:
                    raise PatternError(f"dim of size {size} is not divisible by {prod} ({'*'.join(members)})")
                lengths[unknown[0]] = size // prod
            else:
                lengths[unknown[0]] = q = D.exact_div(size, prod)
                if ctx is not None and size is not None and (q is None or "/" in str(q)):
                    ctx.require_equal(size, prod, SHAPE_EINOPS_PATTERN,
                                      f"{ctx.node.op} {ctx.node.id!r}: dim of size {size} is split into "
                                      f"{'*'.join(members)} with {'*'.join(m for m in members if m in axes)} = {prod}",
                                      kind="multiple")
        elif D.is_const(size) and size != prod:
            raise PatternError(f"dim of size {size} does not match {'*'.join(members) or '1'} = {prod}")
        elif not D.is_const(size) and ctx is not None:
            ctx.require_equal(size, prod, SHAPE_EINOPS_PATTERN,
                              f"{ctx.node.op} {ctx.node.id!r}: dim of size {size} against {'*'.join(members)} = "
                              f"{prod}")
    return lengths, ell


def _reduces(pattern: str, axes: dict) -> bool:
    try:
        _, _, ln, rn = parse_pattern("reduce", pattern, axes)
    except PatternError:
        return False
    return bool(set(ln) - set(rn))


def einops_shape(kind: str, pattern: str, axes: dict, shape: tuple, ctx: InferCtx | None = None) -> tuple:
    left, right, _, _ = parse_pattern(kind, pattern, axes)
    lengths, ell = _left_lengths(left, shape, axes, ctx)
    for name, v in axes.items():
        lengths.setdefault(name, v)
    out = []
    for e in right:
        if e == "...":
            out.extend(ell)
        else:
            out.append(D.prod([lengths.get(m) for m in (e if isinstance(e, list) else [e])]))
    return tuple(out)


def _einops_infer(kind: str):
    def infer(ctx: InferCtx):
        x, a = ctx.x, ctx.args
        axes = {k: v for k, v in a.items() if k not in ("pattern", "reduction")}
        if kind == "reduce" and a["reduction"] == "mean" and x.is_int and _reduces(a["pattern"], axes):
            return ctx.fail(DTYPE_INT_INTO_FLOAT,
                            f"Reduce {ctx.node.id!r}: the mean of integer {x.dtype} values is not defined in torch")
        if x.shape is None:
            try:
                parse_pattern(kind, a["pattern"], axes)
            except PatternError as exc:
                return ctx.fail(SHAPE_EINOPS_PATTERN, f"{ctx.node.op} {ctx.node.id!r}: {exc}")
            return [TensorType(None, x.dtype)]
        try:
            return [TensorType(einops_shape(kind, a["pattern"], axes, x.shape, ctx), x.dtype)]
        except PatternError as exc:
            return ctx.fail(SHAPE_EINOPS_PATTERN, f"{ctx.node.op} {ctx.node.id!r}: {exc}")

    return infer


def einops_apply(kind: str, pattern: str, axes: dict, x, reduction=None):
    """Run the pattern on a torch tensor: reshape to the left axes, reduce or add axes, permute,
    reshape to the right side."""
    left, right, ln, rn = parse_pattern(kind, pattern, axes)
    lengths, ell = _left_lengths(left, tuple(x.shape), axes, None)
    flat = []  # axis names of the fully split input, "...k" for ellipsis dims
    shape = []
    for e in left:
        if e == "...":
            for k, s in enumerate(ell):
                flat.append(f"...{k}")
                shape.append(s)
        else:
            for m in (e if isinstance(e, list) else [e]):
                flat.append(m)
                shape.append(lengths[m])
    x = x.reshape(shape)
    if kind == "reduce":
        drop = [i for i, n in enumerate(flat) if not n.startswith("...") and n not in rn]
        if drop:
            fn = {"sum": x.sum, "mean": x.mean, "max": x.amax, "min": x.amin, "prod": None}[reduction]
            if reduction == "prod":
                for i in sorted(drop, reverse=True):
                    x = x.prod(dim=i)
            else:
                x = fn(dim=drop)
            flat = [n for i, n in enumerate(flat) if i not in drop]
    order: list[str] = []
    for e in right:
        if e == "...":
            order.extend(f"...{k}" for k in range(len(ell)))
        else:
            order.extend(e if isinstance(e, list) else [e])
    if kind == "repeat":
        for n in order:
            if n not in flat:
                x = x.unsqueeze(-1)
                flat.append(n)
                lengths[n] = axes[n]
    x = x.permute([flat.index(n) for n in order])
    if kind == "repeat":
        x = x.expand([lengths[n] if n in lengths and not n.startswith("...") else -1 for n in order])
    out = []
    for e in right:
        if e == "...":
            out.extend(ell)
        else:
            p = 1
            for m in (e if isinstance(e, list) else [e]):
                p *= lengths[m]
            out.append(p)
    return x.reshape(out)


PATTERN = Kind(lambda v: type(v) is str and "->" in v, "an einops pattern 'left -> right'", ("pattern",))
EQUATION = Kind(lambda v: type(v) is str, "an einsum equation", ("equation",))
EINOPS_RULES = (SHAPE_EINOPS_PATTERN, DTYPE_INT_INTO_FLOAT)


def _draw_axes(rng, args: dict, shapes: list) -> dict:
    """A generator's draw of a pattern that reads the operand's rank (and sometimes breaks it)."""
    rank = len(shapes[0]) if shapes else 2
    names = [f"a{i}" for i in range(max(rank, 1))]
    if rank >= 2 and rng.random() < 0.5:
        left = " ".join(names)
        right = " ".join(names[:-2]) + f" ({names[-2]} {names[-1]})"
        extra = {}
    elif rank >= 1 and rng.random() < 0.5:
        k = rng.choice((1, 2, 3))
        left = " ".join(names[:-1] + [f"({names[-1]} p)"])
        right = " ".join(["p"] + names)
        extra = {"p": k}
    else:
        shuffled = list(names)
        rng.shuffle(shuffled)
        left, right, extra = " ".join(names), " ".join(shuffled), {}
    if rng.random() < 0.1:
        right = right + " q"
    return {"pattern": f"{left} -> {right}", **extra}


def _draw_equation(rng, args: dict, shapes: list) -> dict:
    letters = "ijklmn"
    terms = []
    for s in shapes:
        r = len(s)
        terms.append("".join(rng.choice(letters[:max(r, 1) + 1]) for _ in range(r)))
    out = "".join(sorted(set("".join(terms))))[: rng.randint(0, 3)]
    return {"equation": ",".join(terms) + ("->" + out if rng.random() < 0.7 else "")}


# an axis length: an int, or a symbol of the design (the run's size of it: `b: "B"` repeats a class token
# to the batch)
AXIS = OneOf(NAT, SYMBOL)
OPS = [
    OpSpec("Einsum", "tensor", (Arg("equation", kind=EQUATION),), _einsum_infer, tb.custom("Einsum"),
           arity=(1, None), accepts="any", flops=_einsum_flops,
           rules=(SHAPE_EINSUM_SIZES, DTYPE_MIXED, DTYPE_UNSUPPORTED),
           measured_for=lambda a: False,  # which dtypes torch takes depends on the equation: _einsum_dtype
           draw_extra=_draw_equation, traits=("functional",)),
    OpSpec("Rearrange", "tensor", (Arg("pattern", kind=PATTERN),), _einops_infer("rearrange"),
           tb.custom("Rearrange"), accepts="any", extra=AXIS, draw_extra=_draw_axes, rules=EINOPS_RULES,
           traits=("functional", "einops", "moves-values")),
    OpSpec("Reduce", "tensor", (Arg("pattern", kind=PATTERN),
                                Arg("reduction", kind=Enum("min", "max", "sum", "mean", "prod"))),
           _einops_infer("reduce"), tb.custom("Reduce"), accepts="any", extra=AXIS, draw_extra=_draw_axes,
           rules=EINOPS_RULES, traits=("functional", "einops")),
    OpSpec("Repeat", "tensor", (Arg("pattern", kind=PATTERN),), _einops_infer("repeat"), tb.custom("Repeat"),
           accepts="any", extra=AXIS, draw_extra=_draw_axes, rules=EINOPS_RULES,
           traits=("functional", "einops", "moves-values")),
]

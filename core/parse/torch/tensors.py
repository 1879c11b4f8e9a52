"""Tensor operations, indexing, attributes and methods, each written as archgraph ops."""

from __future__ import annotations

import ast
import math

from ...ops import OP_TABLE, by_operator, by_tensor_method, ops_with
from ...ops.base import CAST_METHODS, FLOAT_DTYPES, result_type
from ..values import (
    InterpError,
    Sym,
    TensorMethod,
    TensorVal,
    Unknown,
    dim_add,
    dim_eq,
    dim_floordiv,
    dim_mul,
    is_int,
    prod,
)
from . import optable

FIRST_DTYPE = ops_with("first-dtype")  # ops whose result takes their first operand's dtype


def _is_graph(t):
    return isinstance(t, TensorVal) and not t.is_const


def emit_op(it, op, args, ins, full=None, nres=None):
    """A tensor op on TensorVal inputs; args are design args (already JSON-ready
    except for internal sizes given separately as full)."""
    full = full if full is not None else args
    if not in_op_table(op):
        return not_in_op_table(it, op, ins[0] if ins else None, 0)
    shapes, dt = optable.infer_typed(op, full, [t.shape for t in ins], [t.dtype for t in ins])
    g = it.graph
    if dt is None:  # the table refused the op: its operands' promoted dtype (its first one's, where it keeps that)
        dt = ins[0].dtype if ins and op in FIRST_DTYPE else result_type([(t.dtype, "tensor") for t in ins])
    if g is None or not any(_is_graph(t) for t in ins):
        # constant computation: shapes only
        if op == "Split":
            return tuple(TensorVal(None, s, dt) for s in (shapes or [None] * (nres or 1)))
        return TensorVal(None, shapes, dt)
    refs = [ref_of(it, t) for t in ins]
    nid = g.fresh(op)
    g.add(nid, op, args, refs, warn=it.warn)
    if op == "Split":
        n = len(shapes) if shapes else (nres or 1)
        return tuple(TensorVal(f"{nid}:{i}", shapes[i] if shapes else None, dt) for i in range(n))
    return TensorVal(nid, shapes, dt)


def in_op_table(op):
    from ...ops import OP_TABLE
    return op in OP_TABLE


def not_in_op_table(it, op, t, params):
    """One model of PyTorch: an op the op table does not know is never emitted (the verifier could
    not read it).  The tensor goes on: with its shape when the op keeps shapes."""
    if not isinstance(t, TensorVal):
        return Unknown(f"nn.{op}")
    if params:
        it.warn(f"nn.{op} is not in the op table; its {params} parameters are not in the design")
    return passthrough(it, f"nn.{op}", t, keep_shape=False)  # what it makes of the shape is not known


def passthrough(it, what, t, keep_shape=True):
    """An op the design cannot express: warn and carry the tensor on."""
    if not isinstance(t, TensorVal):
        return Unknown(what)
    if t.is_const or it.graph is None:
        return TensorVal(None, t.shape if keep_shape else None, t.dtype)
    it.warn(f"{what} has no archgraph op; the tensor is passed through unchanged")
    return TensorVal(t.ref if t.ref is not None else ref_of(it, t), t.shape if keep_shape else None, t.dtype)


def _graph_tensors(vals, out, depth=0):
    for a in vals:
        if _is_graph(a):
            out.append(a)
        elif isinstance(a, (list, tuple)) and depth < 3:
            _graph_tensors(a, out, depth + 1)
    return out


def unknown_call(it, why, args, kwargs):
    ts = _graph_tensors(list(args) + list(kwargs.values()), [])
    if ts and it.graph is not None:
        return passthrough(it, f"call of {why}", ts[0], keep_shape=False)
    return Unknown(f"result of {why}")


def _norm_dim(d, t):
    if not is_int(d):
        raise InterpError("dimension not known")
    if d < 0 and t.shape is not None:
        return d + len(t.shape)
    return d


def reshape(it, t, shape):
    shape = list(shape)
    if len(shape) == 1 and isinstance(shape[0], (list, tuple)):
        shape = list(shape[0])
    full = {"shape": [(-1 if (is_int(d) and d == -1) else d) for d in shape]}
    for d in shape:
        if isinstance(d, Unknown) or d is None:
            full["shape"] = [(-1 if (is_int(x) and x == -1) else (None if isinstance(x, Unknown) else x))
                             for x in shape]
    outshape = optable.infer("Reshape", _reshape_full(full["shape"]), [t.shape])
    if t.is_const or it.graph is None:
        vals = t.values if (t.values is not None and outshape and all(is_int(d) for d in outshape)) else None
        return TensorVal(None, outshape, t.dtype, values=vals)
    # design shape: from the output shape so that batch-derived sizes become symbols or -1
    dims = outshape if outshape is not None else full["shape"]
    explicit_m1 = [i for i, d in enumerate(full["shape"]) if is_int(d) and d == -1]
    design = shape_arg(it, [d if not (is_int(d) and d == -1) else None for d in dims], "Reshape", minus1=True)
    if design is not None and explicit_m1 and -1 not in design:
        pass
    return emit_op(it, "Reshape", {"shape": design}, [t], {"shape": full["shape"]} if outshape is None else
                   {"shape": outshape})


def _reshape_full(shape):
    return {"shape": [(-1 if d is None else d) for d in shape]}


def permute(it, t, dims):
    dims = list(dims)
    if len(dims) == 1 and isinstance(dims[0], (list, tuple)):
        dims = list(dims[0])
    if not all(is_int(d) for d in dims):
        raise InterpError("permute with unknown dims")
    return emit_op(it, "Permute", {"dims": dims}, [t])


def transpose(it, t, d0, d1):
    if not (is_int(d0) and is_int(d1)):
        raise InterpError("transpose with unknown dims")
    if _tieable_weight(it, t) and {d0 % 2, d1 % 2} == {0, 1}:
        # a Linear/Embedding weight read transposed: a matmul with it is that layer's weight used as a
        # bias-free Linear (a tied output head, `x @ emb.weight.T`); anything else puts it in the graph
        r = TensorVal(None, [t.shape[1], t.shape[0]], t.dtype)
        r.origin = ("weight_t", t)
        return r
    return emit_op(it, "Transpose", {"dim0": d0, "dim1": d1}, [t])


_TIEABLE = frozenset(name for name, spec in OP_TABLE.items() if spec.weight_dims)


def _tieable_weight(it, w):
    """w is the 2-d weight of a torch.nn Linear or Embedding (the layers a design can tie)."""
    p = w.param if isinstance(w, TensorVal) else None
    return (it.graph is not None and p is not None and p.leaf and p.name == "weight"
            and getattr(p.owner, "op", None) in _TIEABLE and w.shape is not None and len(w.shape) == 2
            and all(is_int(d) for d in w.shape))


def tied_projection(it, x, w):
    """`x @ w.T` (or F.linear(x, w)) where w is the weight of a Linear or Embedding already in the
    graph: a bias-free Linear sharing that layer's weight, so the weight is counted once, as torch
    counts it.  None when it is not that (the caller emits the plain ops)."""
    g = it.graph
    if not (isinstance(x, TensorVal) and _tieable_weight(it, w)) or x.shape == []:
        return None
    owner_node = g.calls.get(id(w.param.owner))
    out_f, in_f = w.shape
    if owner_node is None or (x.shape is not None and is_int(x.shape[-1]) and x.shape[-1] != in_f):
        return None  # a width the parser knows to differ: the plain MatMul, for the verifier to name
    args = {"in_features": in_f, "out_features": out_f, "bias": False}
    shapes = optable.infer("Linear", args, [x.shape]) if x.shape is not None else None
    nid = g.fresh("Linear")
    g.add(nid, "Linear", args, [ref_of(it, x)], shares=owner_node, warn=it.warn)
    return TensorVal(nid, shapes, x.dtype)


def flatten(it, t, start_dim=0, end_dim=-1):
    return emit_op(it, "Flatten", {"start_dim": start_dim, "end_dim": end_dim}, [t])


def unsqueeze(it, t, d):
    if t.shape is None:
        return passthrough(it, "unsqueeze of a tensor of unknown rank", t, keep_shape=False)
    r = len(t.shape) + 1
    if not is_int(d):
        raise InterpError("unsqueeze dim not known")
    if d < 0:
        d += r
    if t.is_const or it.graph is None:  # the op table's shape (it refuses a dim out of range, as torch does)
        return TensorVal(None, optable.infer("Unsqueeze", {"dim": d}, [t.shape], [t.dtype]), t.dtype,
                         values=t.values)
    return emit_op(it, "Unsqueeze", {"dim": d}, [t])


def squeeze(it, t, d=None):
    if t.shape is None:
        return passthrough(it, "squeeze of a tensor of unknown rank", t, keep_shape=False)
    if d is not None:
        dd = d if d >= 0 else d + len(t.shape)
        if not (0 <= dd < len(t.shape) and is_int(t.shape[dd]) and t.shape[dd] == 1):
            return t  # squeezing a dim that is not 1 changes nothing: no node
    args = {"dim": d} if d is not None else {}
    if t.is_const or it.graph is None:  # the op table's shape, never one of the parser's own
        return TensorVal(None, optable.infer("Squeeze", args, [t.shape], [t.dtype]), t.dtype, values=t.values)
    return emit_op(it, "Squeeze", args, [t])


def expand(it, t, sizes):
    sizes = list(sizes)
    if len(sizes) == 1 and isinstance(sizes[0], (list, tuple)):
        sizes = list(sizes[0])
    out = []
    for _i, s in enumerate(sizes):
        if is_int(s) and s == -1:
            out.append(-1)
        elif is_int(s):
            out.append(s)
        elif isinstance(s, Sym):
            if it.symbolic and s.single_symbol():
                out.append(s.single_symbol())
            else:
                r = s.substitute(it.batch_env)
                out.append(unknown_size(it, "Expand") if r is None else r)
        else:
            out.append(unknown_size(it, "Expand"))
    internal = [(-1 if (is_int(s) and s == -1) else s) for s in sizes]
    return emit_op(it, "Expand", {"shape": out}, [t], {"shape": internal})


def where(it, cond, a, b):
    """torch.where(cond, a, b) with a tensor of the graph among them: the Where op (a number stands as a
    0-d constant).  None when it is constant work or the condition is not a bool tensor."""
    def as_tensor(v, dtype):
        if isinstance(v, TensorVal):
            return v
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return TensorVal(None, [], dtype, values=[v])
        return None
    c = cond if isinstance(cond, TensorVal) else None
    floaty = next((v.dtype for v in (a, b) if isinstance(v, TensorVal)), "float32")
    x, y = as_tensor(a, floaty), as_tensor(b, floaty)
    if c is None or x is None or y is None or c.dtype not in ("bool", "uint8") or it.graph is None:
        return None
    if not any(_is_graph(t) for t in (c, x, y)):
        return None
    return emit_op(it, "Where", {}, [c, x, y])


def _number(it, v):
    """v as the finite number an op's NUM argument takes (a one-value constant tensor as its value, a size
    read off the given inputs as that size), or None when the parser does not hold it or it is not finite
    (the op table takes finite numbers only)."""
    if isinstance(v, Sym) and not it.symbolic:
        v = v.substitute(it.batch_env)
    if isinstance(v, TensorVal) and v.is_const and v.values is not None and len(v.values) == 1:
        v = v.values[0]
    if isinstance(v, bool):
        return int(v)
    if not isinstance(v, (int, float)) or not math.isfinite(v):
        return None
    return v


def _int_list(it, v):
    """An int, or a list of ints, from the interpreter's values (a size read off the given inputs resolved);
    None when one is not known."""
    def one(x):
        if isinstance(x, Sym) and not it.symbolic:
            x = x.substitute(it.batch_env)
        return x if is_int(x) and not isinstance(x, bool) else None
    if isinstance(v, (list, tuple)):
        out = [one(x) for x in v]
        return None if any(x is None for x in out) else out
    return one(v)


def roll(it, t, shifts, dims):
    """torch.roll / Tensor.roll: the Roll op (Swin's cyclic shift)."""
    s = _int_list(it, shifts)
    d = None if dims is None else _int_list(it, dims)
    if s is None or (dims is not None and d is None):
        return passthrough(it, ".roll() by shifts or dims not known when reading the source", t)
    return emit_op(it, "Roll", {"shifts": s} if d is None else {"shifts": s, "dims": d}, [t])


def masked_fill(it, t, mask, value):
    """Tensor.masked_fill(mask, value): the MaskedFill op, the mask an operand (a mask made in forward
    a Constant node).  A value the op cannot take (not known, or not finite: the op table's MaskedFill
    takes finite numbers) is passed through with a warning."""
    v = _number(it, value)
    if not isinstance(mask, TensorVal) or mask.dtype not in ("bool", "uint8"):
        return passthrough(it, ".masked_fill() with a mask the parser does not hold as a bool tensor", t)
    if v is None:
        why = "not finite" if isinstance(value, float) else "not known when reading the source"
        return passthrough(it, f".masked_fill() with a value {why} (MaskedFill takes a finite number)", t)
    return emit_op(it, "MaskedFill", {"value": v}, [t, mask])


def clamp(it, t, lo, hi):
    """clamp / clip / clamp_min / clamp_max: the Clamp op.  An infinite bound on its own side bounds
    nothing (left out); a tensor bound or one not known is passed through with a warning."""
    args = {}
    for k, v in (("min", lo), ("max", hi)):
        if v is None:
            continue
        if isinstance(v, float) and math.isinf(v) and (v < 0) == (k == "min"):
            continue
        n = _number(it, v)
        if n is None:
            return passthrough(it, f".clamp() with a {k} not known when reading the source (or a tensor)", t)
        args[k] = n
    if not args and (lo is not None or hi is not None):
        return t  # only infinite bounds: torch returns the values unchanged
    return emit_op(it, "Clamp", args, [t])


def normalize(it, t, p, dim, eps):
    """F.normalize: the Normalize op (its defaults left out of the design)."""
    pn, en, d = _number(it, p), _number(it, eps), _int_list(it, dim)
    if pn is None or en is None or not is_int(d):
        return passthrough(it, "F.normalize with p, dim or eps not known when reading the source", t)
    args = {k: v for k, v, default in (("p", pn, 2.0), ("dim", d, 1), ("eps", en, 1e-12)) if v != default}
    return emit_op(it, "Normalize", args, [t])


def cumsum(it, t, dim, dtype):
    d = _int_list(it, dim)
    if not is_int(d) or dtype is not None:
        return passthrough(it, ".cumsum() with a dim not known or a dtype given", t)
    return emit_op(it, "Cumsum", {"dim": d}, [t])


def gather(it, op, t, dim, index):
    """Tensor.gather / index_select: the Gather / IndexSelect op, the index an operand."""
    d = _int_list(it, dim)
    if not is_int(d) or not isinstance(index, TensorVal) or index.dtype not in ("int64", "int32"):
        return passthrough(it, f".{'gather' if op == 'Gather' else 'index_select'}() by a dim or an index the "
                               "parser does not hold", t, keep_shape=False)
    return emit_op(it, op, {"dim": d}, [t, index])


# tensor methods the op table holds, written as its ops when a tensor of the graph takes part
_TABLE_METHODS = {"roll", "masked_fill", "clamp", "clip", "clamp_min", "clamp_max", "cumsum", "gather",
                  "index_select"}


def table_method(it, t, name, args, kwargs):
    if name == "roll":
        return roll(it, t, _arg(args, kwargs, 0, "shifts"), _arg(args, kwargs, 1, "dims"))
    if name == "masked_fill":
        return masked_fill(it, t, _arg(args, kwargs, 0, "mask"), _arg(args, kwargs, 1, "value"))
    if name in ("clamp", "clip"):
        return clamp(it, t, _arg(args, kwargs, 0, "min"), _arg(args, kwargs, 1, "max"))
    if name == "clamp_min":
        return clamp(it, t, _arg(args, kwargs, 0, "min"), None)
    if name == "clamp_max":
        return clamp(it, t, None, _arg(args, kwargs, 0, "max"))
    if name == "cumsum":
        return cumsum(it, t, _arg(args, kwargs, 0, "dim"), kwargs.get("dtype"))
    return gather(it, "Gather" if name == "gather" else "IndexSelect", t, _arg(args, kwargs, 0, "dim"),
                  _arg(args, kwargs, 1, "index"))


def repeat(it, t, reps):
    """x.repeat(r0, r1, ...): Unsqueeze + Expand + Reshape per repeated dim (exact)."""
    if not it.symbolic:  # a count read off the given inputs (`x.repeat(1, bs, 1)`, bs = src.shape[0])
        reps = [r.substitute(it.batch_env) if isinstance(r, Sym) and r.substitute(it.batch_env) is not None
                else r for r in reps]
    if t.shape is None and t.is_const and reps and all(is_int(r) or isinstance(r, Sym) for r in reps):
        # torch takes at least as many counts as dims: the result has one dim per count, sizes not known
        return TensorVal(None, [None] * len(reps), t.dtype)
    if t.shape is None or not all(is_int(r) for r in reps) or len(reps) < len(t.shape):
        return passthrough(it, ".repeat()", t, keep_shape=False)
    cur = t
    lead = len(reps) - len(t.shape)
    for _ in range(lead):
        cur = unsqueeze(it, cur, 0)
    for d, r in enumerate(reps):
        if r == 1:
            continue
        shape = list(cur.shape)
        cur = unsqueeze(it, cur, d)
        cur = expand(it, cur, [-1] * d + [r] + [-1] * (len(shape) - d))
        cur = reshape(it, cur, shape[:d] + [dim_mul(r, shape[d])] + shape[d + 1:])
    return cur


def repeat_interleave(it, t, r, dim):
    if t.shape is not None and is_int(r) and dim is None:  # torch flattens the input first
        t, dim = reshape(it, t, [prod(t.shape)]), 0
    if t.shape is None or not is_int(r) or dim is None or not is_int(dim):
        return passthrough(it, "repeat_interleave", t, keep_shape=False)
    d = _norm_dim(dim, t)
    shape = list(t.shape)
    cur = unsqueeze(it, t, d + 1)
    cur = expand(it, cur, [-1] * (d + 1) + [r] + [-1] * (len(shape) - d - 1))
    return reshape(it, cur, shape[:d] + [dim_mul(shape[d], r)] + shape[d + 1:])


def tensor_split(it, t, spec, dim=0):
    if t.shape is None:
        return passthrough(it, "tensor_split", t, keep_shape=False)
    d = _norm_dim(dim, t)
    L = t.shape[d]
    if isinstance(spec, (list, tuple)) and all(is_int(i) for i in spec):
        bounds = [0] + list(spec) + [L]
        sizes = []
        for a, b in zip(bounds, bounds[1:]):
            sizes.append(dim_add(b, a, -1) if b is not None else None)
    elif is_int(spec) and is_int(L):
        q, r = divmod(L, spec)
        sizes = [q + 1] * r + [q] * (spec - r)
    else:
        return passthrough(it, "tensor_split", t, keep_shape=False)
    if not all(is_int(x) for x in sizes):
        if not it.symbolic or not all(is_int(x) or (isinstance(x, Sym) and x.single_symbol()) for x in sizes):
            return passthrough(it, "tensor_split with sizes not known", t, keep_shape=False)
        arg = [x if is_int(x) else x.single_symbol() for x in sizes]
        return emit_op(it, "Split", {"split_size_or_sections": arg, "dim": dim}, [t],
                       {"split_size_or_sections": sizes, "dim": dim})
    return emit_op(it, "Split", {"split_size_or_sections": sizes, "dim": dim}, [t])


def split(it, t, size, dim=0):
    if isinstance(size, (list, tuple)):
        arg = list(size)
    elif is_int(size):
        arg = size
    else:
        raise InterpError("split size not known")
    return emit_op(it, "Split", {"split_size_or_sections": arg, "dim": dim}, [t])


def chunk(it, t, n, dim=0):
    if not is_int(n):
        raise InterpError("chunk count not known")
    if t.shape is None:
        raise InterpError("chunk of a tensor of unknown shape")
    d = _norm_dim(dim, t)
    L = t.shape[d]
    if not is_int(L):
        q = dim_floordiv(L, n)
        if q is None:
            raise InterpError("chunk of a dimension of unknown size")
        if it.symbolic and isinstance(q, Sym) and q.single_symbol():
            arg = q.single_symbol()
        elif not it.symbolic and isinstance(q, Sym) and q.substitute(it.batch_env) is not None:
            arg = q.substitute(it.batch_env)  # derived from the given input sizes
        else:
            raise InterpError("chunk of a dimension of unknown size")
        return emit_op(it, "Split", {"split_size_or_sections": arg, "dim": dim}, [t],
                       {"split_size_or_sections": [q] * n, "dim": dim})
    size = -(-L // n)
    return emit_op(it, "Split", {"split_size_or_sections": size, "dim": dim}, [t])


def reduce_op(it, op, t, dim=None, keepdim=False):
    if isinstance(dim, tuple):
        dim = list(dim)
    if dim is not None and not (is_int(dim) or (isinstance(dim, list) and all(is_int(d) for d in dim))):
        raise InterpError(f"{op.lower()} over unknown dims")
    args = {"dim": dim, "keepdim": bool(keepdim)}
    if t.is_const and t.values is not None and dim is None and op == "Sum":
        return TensorVal(None, [], t.dtype, values=[sum(t.values)])
    r = emit_op(it, op, args, [t])
    if isinstance(r, TensorVal) and r.shape is None and dim is None and not keepdim:
        r.shape = []  # a reduction over every dim is a scalar whatever the rank it reduced (a loss term)
    return r


def select(it, t, dim, index):
    return emit_op(it, "Select", {"dim": dim, "index": index}, [t])


def slice_op(it, t, dim, start, end, step):
    args = {"dim": dim, "start": start}
    if end is not None:
        args["end"] = end
    if step != 1:
        args["step"] = step
    full = {"dim": dim, "start": start, "end": end, "step": step}
    return emit_op(it, "Slice", args, [t], full)


def concat(it, ts, dim=0, op="Concat"):
    ts = list(ts)
    if not all(isinstance(t, TensorVal) for t in ts):
        if any(isinstance(t, Unknown) for t in ts):
            raise InterpError(f"{op.lower()} of values not known")
        raise InterpError(f"{op.lower()} of non-tensors")
    if not is_int(dim):
        raise InterpError("concat dim not known")
    if all(t.is_const for t in ts) and all(t.values is not None for t in ts) and op == "Concat":
        vals = [v for t in ts for v in t.values]
        return TensorVal(None, [len(vals)], ts[0].dtype, values=vals) if all(
            t.shape is not None and len(t.shape) == 1 for t in ts) else TensorVal(None, None)
    return emit_op(it, op, {"dim": dim}, ts)


def activation(it, op, t, args=None):
    if not isinstance(t, TensorVal):
        raise InterpError(f"{op} of {it.describe(t)}")
    f = OP_TABLE[op].scalar if op in OP_TABLE else None
    if t.is_const and t.values is not None and f is not None:
        return TensorVal(None, t.shape, t.dtype, values=[f(v) for v in t.values])
    return emit_op(it, op, args or {}, [t])


def scale(it, t, value):
    if isinstance(value, Sym):
        value = value.substitute(it.batch_env) if not it.symbolic else None
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        if isinstance(value, bool):
            value = int(value)
        else:
            it.warn("scale factor not known when reading the source; left unknown (null)")
            value = None
    return emit_op(it, "Scale", {"value": value}, [t])


def _scalar_const(it, v, like):
    if isinstance(v, Sym):
        v = v.substitute(it.batch_env) if not it.symbolic else None
    if not isinstance(v, (int, float)):
        it.warn("a constant in a tensor expression is not known; left unknown (null)")
        v = None
    return TensorVal(None, [], like.dtype if like is not None else "float32", values=[v] if v is not None else None)


def _elementwise_values(op, a, b, dtype):
    fa = a.values if isinstance(a, TensorVal) else None
    fb = b.values if isinstance(b, TensorVal) else None
    if isinstance(a, TensorVal) and fa is None:
        return None
    if isinstance(b, TensorVal) and fb is None:
        return None
    la = fa if fa is not None else [a]
    lb = fb if fb is not None else [b]
    n = max(len(la), len(lb))
    if len(la) not in (1, n) or len(lb) not in (1, n):
        return None
    f = {ast.Add: lambda x, y: x + y, ast.Sub: lambda x, y: x - y, ast.Mult: lambda x, y: x * y,
         ast.Div: lambda x, y: x / y, ast.FloorDiv: lambda x, y: x // y, ast.Pow: lambda x, y: x ** y,
         ast.Mod: lambda x, y: x % y}.get(op)
    if f is None:
        return None
    try:
        out = [f(la[i if len(la) > 1 else 0], lb[i if len(lb) > 1 else 0]) for i in range(n)]
    except (ZeroDivisionError, OverflowError, TypeError, ValueError):
        return None
    if dtype in ("float32",):
        out = [_f32(float(v)) for v in out]
    elif dtype == "int64":
        out = [int(v) for v in out]
    return out


def _operand_dtype(v) -> tuple:
    """(dtype, kind) of an arithmetic operand, as the op table's dtype model reads it (ops.base.result_type)."""
    if isinstance(v, TensorVal):
        return v.dtype, "zerodim" if v.shape is not None and len(v.shape) == 0 else "tensor"
    return ("bool" if isinstance(v, bool) else "float32" if isinstance(v, float) else "int64"), "number"


def _result_dtype(op, a, b):
    """torch's dtype of `a op b` (float16 + float32 tensors is float32; int / int is float32)."""
    return result_type([_operand_dtype(a), _operand_dtype(b)], divide=op is ast.Div)


def tensor_binop(it, op, a, b, inplace=False):
    ta, tb = isinstance(a, TensorVal), isinstance(b, TensorVal)
    if (ta and a.is_const or not ta) and (tb and b.is_const or not tb) or it.graph is None:
        # constant arithmetic: shapes (and small values)
        if isinstance(a, Unknown) or isinstance(b, Unknown):
            return TensorVal(None, (a if ta else b).shape, (a if ta else b).dtype)
        dt = _result_dtype(op, a, b)
        if op is ast.MatMult:
            sh = optable.infer("MatMul", {}, [a.shape if ta else None, b.shape if tb else None])
            return TensorVal(None, sh, dt)
        sh = optable.broadcast(a.shape if ta else [], b.shape if tb else [])
        vals = _elementwise_values(op, a, b, dt)
        return TensorVal(None, sh, dt, values=vals)
    if isinstance(a, Unknown) or isinstance(b, Unknown):
        t = a if ta else b
        it.warn("arithmetic with a value not known when reading the source; the tensor is passed through")
        return TensorVal(ref_of(it, t), t.shape, t.dtype)
    if op is ast.MatMult:
        if tb and b.ref is None and b.transposed_weight is not None:
            y = tied_projection(it, a, b.transposed_weight)
            if y is not None:
                return y
        return emit_op(it, "MatMul", {}, [a, b])
    if ta and tb:
        name = by_operator(_OPERATOR_SYMBOLS.get(op, ""))
        if name:
            return emit_op(it, name, {}, [a, b])
        if op is ast.Pow:
            return passthrough(it, "tensor ** tensor", a)
        return passthrough(it, f"tensor operator {op.__name__}", a)
    t, s = (a, b) if ta else (b, a)
    if isinstance(s, (list, tuple)):
        raise InterpError("tensor arithmetic with a list")
    if op is ast.Mult:
        return scale(it, t, s)
    if op is ast.Div and ta:
        if isinstance(s, (int, float)) and s != 0 and not isinstance(s, bool):
            return scale(it, t, 1.0 / s)
        if isinstance(s, Sym):
            return scale(it, t, Unknown("size"))
    if op is ast.Pow and ta and is_int(s) and s == 2:
        return emit_op(it, "Mul", {}, [t, t])
    if op is ast.Pow and ta and isinstance(s, (int, float)) and s == 1:
        return t
    if op in (ast.Add, ast.Sub):
        if isinstance(s, (int, float)) and s == 0:
            return t
        c = _scalar_const(it, s, t)
        name = "Add" if op is ast.Add else "Sub"
        return emit_op(it, name, {}, [a if ta else c, c if ta else b])
    if op is ast.Div and tb:
        c = _scalar_const(it, s, t)
        return emit_op(it, "Div", {}, [c, t])
    return passthrough(it, f"tensor operator {op.__name__} with a number", t)


def tensor_unary(it, op, t):
    if op is ast.USub:
        if t.is_const:
            return TensorVal(None, t.shape, t.dtype, values=[-v for v in t.values] if t.values else None)
        return scale(it, t, -1)
    if op is ast.UAdd:
        return t
    return passthrough(it, "~ on a tensor", t)


def _compare_values(op, a, b):
    """The values of a comparison of constants whose values are known (a numpy array of kernel sizes
    against a number: `np.all(stride_np == 1)`), elementwise; None otherwise."""
    import ast
    import operator
    fn = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
          ast.Gt: operator.gt, ast.GtE: operator.ge}.get(op)
    va = a.values if isinstance(a, TensorVal) else [a]
    vb = b.values if isinstance(b, TensorVal) else [b]
    if fn is None or va is None or vb is None or not va or not vb:
        return None
    if not all(isinstance(x, (int, float, bool)) for x in va + vb):
        return None
    n = max(len(va), len(vb))
    if len(va) not in (1, n) or len(vb) not in (1, n):
        return None
    return [bool(fn(va[i if len(va) > 1 else 0], vb[i if len(vb) > 1 else 0])) for i in range(n)]


def tensor_compare(it, op, a, b):
    t = a if isinstance(a, TensorVal) else b
    other = b if t is a else a
    if t.is_const and (not isinstance(other, TensorVal) or other.is_const):
        sh = optable.broadcast(t.shape, other.shape if isinstance(other, TensorVal) else [])
        return TensorVal(None, sh, "bool", values=_compare_values(op, a, b))
    return TensorVal(None, t.shape, "bool")  # a run-time value: any `if` on it warns


def tensor_getitem(it, t, idx):
    items = list(idx) if isinstance(idx, tuple) else [idx]
    if items.count(Ellipsis) == 1 and t.shape is not None and any(isinstance(x, list) for x in items):
        # x[..., [-2], :] (Falcon's fused qkv): the ellipsis written out, so the list index has its dim
        k = items.index(Ellipsis)
        n_real = sum(1 for x in items if x is not None and x is not Ellipsis)
        items = items[:k] + [slice(None)] * max(len(t.shape) - n_real, 0) + items[k + 1:]
        idx = tuple(items)
    if isinstance(idx, TensorVal) and idx.is_const and idx.dtype.startswith("int") and idx.shape is not None \
            and t.shape and not t.is_const and it.graph is not None:
        return _gather_rows(it, t, idx)
    if len(items) >= 2 and _const_index_tensors(t, items) and it.graph is not None:
        return _gather_rows_by(it, t, items)
    lists = [i for i, x in enumerate(items) if isinstance(x, list)]
    if len(lists) == 1 and Ellipsis not in items and all(is_int(v) for v in items[lists[0]]) and \
            items[lists[0]] and not any(isinstance(x, TensorVal) for x in items):
        return _index_with_list(it, t, items, lists[0])
    if len(items) == 2 and _one_per_row(t, items[0], items[1]) and it.graph is not None and not t.is_const:
        return _pick_per_row(it, t, items[1])
    if len(items) == 2 and items[0] == slice(None) and isinstance(items[1], TensorVal) and items[1].is_const \
            and items[1].dtype.startswith("int") and items[1].shape is not None and t.shape is not None \
            and len(t.shape) == 2 and not t.is_const and it.graph is not None:
        return _gather_columns(it, t, items[1])
    run = _index_tensor_run(t, items)
    if run is not None and it.graph is not None and not t.is_const:
        return _index_by_tensors(it, t, items[run[0]:run[1]], run[0])
    if any(isinstance(x, (TensorVal, list)) for x in items):
        return passthrough(it, "indexing with a tensor or list", t, keep_shape=False)
    if any(isinstance(x, Unknown) for x in items):
        return passthrough(it, "indexing with an unknown value", t, keep_shape=False)
    rank = len(t.shape) if t.shape is not None else None
    n_real = sum(1 for x in items if x is not None and x is not Ellipsis)
    if Ellipsis in items:
        k = items.index(Ellipsis)
        if rank is not None:
            fill = rank - n_real
            items = items[:k] + [slice(None)] * fill + items[k + 1:]
    elif rank is not None and n_real < rank:
        items = items + [slice(None)] * (rank - n_real)
    if Ellipsis in items:
        # unknown rank with an ellipsis: negative dims for what follows it
        k = items.index(Ellipsis)
        cur = t
        for j, x in enumerate(items[:k]):
            cur = _index_one(it, cur, j, x)
        after = items[k + 1:]
        dim = -len([x for x in after if x is not None])
        for x in after:
            if x is None:
                raise InterpError("None index after ... on a tensor of unknown rank")
            cur = _index_one(it, cur, dim, x)
            if not is_int(x):
                dim += 1
            else:
                pass
        return cur
    cur = t
    d = 0
    for x in items:
        if x is None:
            cur = unsqueeze(it, cur, d)
            d += 1
            continue
        if is_int(x) or isinstance(x, bool):
            cur = _index_one(it, cur, d, x)
            continue
        cur = _index_one(it, cur, d, x)
        d += 1
    return cur


def _index_with_list(it, t, items, k):
    """t[..., [i, j, ...], ...]: a list of ints picks rows of one dim and keeps that dim.  A run of
    consecutive indices is a Slice; anything else a Concat of one-row Slices, in the list's order."""
    idx = items[k]
    d_out = sum(1 for x in items[:k] if not is_int(x))  # where that dim is once the others are applied
    size = None
    if t.shape is not None:
        d_in = sum(1 for x in items[:k] if x is not None)
        size = t.shape[d_in] if d_in < len(t.shape) else None
    if is_int(size):
        if any(not -size <= v < size for v in idx):
            raise InterpError(f"index {idx} out of range for a dim of size {size}")
        idx = [v % size for v in idx]
    elif any(v < 0 for v in idx) and not all(v < 0 for v in idx):
        return passthrough(it, "indexing with a list of mixed signs", t, keep_shape=False)

    def one(lo, hi):
        sub = list(items)
        sub[k] = slice(lo, hi if hi != 0 else None)
        return tensor_getitem(it, t, tuple(sub))

    if all(b == a + 1 for a, b in zip(idx, idx[1:])):
        return one(idx[0], idx[-1] + 1)
    return concat(it, [one(v, v + 1) for v in idx], d_out)


def _one_per_row(t, rows, picks):
    """x[torch.arange(n), idx]: one element of dim 1 per row (CLIP's end-of-text token, a class token
    chosen by argmax): a constant integer row index over dim 0 and an integer index of n rows."""
    return (isinstance(rows, TensorVal) and rows.is_const and rows.dtype.startswith("int")
            and rows.shape is not None and len(rows.shape) == 1 and t.shape is not None and len(t.shape) >= 2
            and dim_eq(rows.shape[0], t.shape[0])
            and isinstance(picks, TensorVal) and picks.dtype.startswith("int")
            and (picks.shape is None or (len(picks.shape) == 1 and dim_eq(picks.shape[0], t.shape[0]))))


def _pick_per_row(it, t, picks):
    """Gather over dim 1 with an index of shape [n, 1, rest...], then Squeeze: the shape torch gives.
    Which element each row picks is a run-time value the design does not hold (warned)."""
    it.warn("x[arange(n), index] is written as Gather over dim 1 with a constant index; which element each "
            "row picks is not recorded")
    shape = [t.shape[0], 1] + list(t.shape[2:])
    index = TensorVal(None, shape, "int64")
    index.origin = "onehot"  # already explained above
    return squeeze(it, emit_op(it, "Gather", {"dim": 1}, [t, index]), 1)


def _gather_rows(it, t, idx):
    """t[idx] for a constant integer index tensor: a one-hot matrix times t (exact
    in shape, parameters and result; the index values themselves are not kept)."""
    n = prod(idx.shape)
    rows = t.shape[0]
    if not (is_int(n) and is_int(rows)):
        return passthrough(it, "indexing with a tensor", t, keep_shape=False)
    it.warn("indexing by a constant index tensor is written as a one-hot MatMul; the index values are not "
            "recorded")
    onehot = TensorVal(None, [n, rows], "float32")
    onehot.origin = "onehot"  # already explained above
    flat = t
    rest = list(t.shape[1:])
    if len(t.shape) > 2:
        flat = reshape(it, t, [rows, -1])
    y = tensor_binop(it, ast.MatMult, onehot, flat)
    if len(idx.shape) != 1 or len(t.shape) > 2:
        y = reshape(it, y, list(idx.shape) + rest)
    return y


def _gather_columns(it, t, idx):
    """t[:, idx] of a 2-D table by a constant integer index tensor (LeViT's and EfficientFormer's
    relative position biases, `attention_biases[:, attention_bias_idxs]`): t times a one-hot matrix,
    reshaped to [rows, *idx.shape], as `_gather_rows` does over dim 0."""
    n = prod(idx.shape)
    cols = t.shape[1]
    if not (is_int(n) and is_int(cols)):
        return passthrough(it, "indexing with a tensor", t, keep_shape=False)
    it.warn("indexing by a constant index tensor is written as a one-hot MatMul; the index values are not "
            "recorded")
    onehot = TensorVal(None, [cols, n], "float32")
    onehot.origin = "onehot"  # already explained above
    y = tensor_binop(it, ast.MatMult, t, onehot)
    if len(idx.shape) != 1:
        y = reshape(it, y, [t.shape[0]] + list(idx.shape))
    return y


def _index_tensor_run(t, items):
    """(start, end) of the index tensors of `t[:, ..., i0, i1, ..., :, ...]`: one run of integer index tensors
    (or one bool mask) between whole slices, the only way the Index op (merging the dims they index) writes
    torch's advanced indexing exactly; None for any other subscript."""
    if t.shape is None:
        return None
    ks = [i for i, x in enumerate(items) if isinstance(x, TensorVal)]
    if not ks or ks != list(range(ks[0], ks[-1] + 1)) or \
            any(not (isinstance(x, slice) and x == slice(None)) for i, x in enumerate(items) if i not in ks):
        return None
    run = [items[i] for i in ks]
    if any(x.shape is None for x in run):
        return None
    if all(x.dtype in ("int64", "int32") for x in run):
        return (ks[0], ks[-1] + 1) if ks[-1] < len(t.shape) else None
    if len(run) == 1 and run[0].dtype == "bool" and ks[0] + len(run[0].shape) <= len(t.shape):
        return ks[0], ks[0] + 1
    return None


def _index_by_tensors(it, t, run, d):
    """`t[..., i0, i1, ...]` by index tensors computed in the graph (or given): torch's advanced indexing as one
    Index op over dim d. Several integer indices pick one element of the dims they index each, as one index
    into those dims merged, i0 * size1 + i1 (a mask or one index is the op's own operand)."""
    if len(run) == 1:
        return emit_op(it, "Index", {"dim": d}, [t, run[0]])
    sizes = t.shape[d:d + len(run)]
    if not all(is_int(n) for n in sizes[1:]):
        return passthrough(it, "indexing with several index tensors over dims of sizes not known", t,
                           keep_shape=False)
    flat = run[0]
    for n, x in zip(sizes[1:], run[1:]):
        flat = tensor_binop(it, ast.Add, tensor_binop(it, ast.Mult, flat, n), x)
    merged = reshape(it, t, list(t.shape[:d]) + [prod(sizes)] + list(t.shape[d + len(run):]))
    return emit_op(it, "Index", {"dim": d}, [merged, flat])


def _const_index_tensors(t, items):
    """t[i0, i1, ...] with constant integer index tensors over its leading dims (the rest whole):
    Swin's relative position bias `table[rel[:, :, 0], rel[:, :, 1]]`."""
    k = 0
    while k < len(items) and isinstance(items[k], TensorVal):
        k += 1
    return (k >= 2 and not t.is_const and t.shape is not None and len(t.shape) >= k
            and all(x.is_const and x.dtype.startswith("int") and x.shape is not None for x in items[:k])
            and all(isinstance(x, slice) and x == slice(None) for x in items[k:]))


def _gather_rows_by(it, t, items):
    """Several index tensors pick one element of the leading dims each: the same rows of t with those
    dims flattened into one, picked by one index of the indices' broadcast shape (the values not kept)."""
    k = sum(1 for x in items if isinstance(x, TensorVal))
    shape = items[0].shape
    for x in items[1:k]:
        shape = optable.broadcast(shape, x.shape)
    rows = prod(t.shape[:k])
    if shape is None or not is_int(rows):
        return passthrough(it, "indexing with several index tensors", t, keep_shape=False)
    flat = reshape(it, t, [rows] + list(t.shape[k:]))
    return _gather_rows(it, flat, TensorVal(None, shape, "int64"))


def _index_one(it, t, d, x):
    if isinstance(x, Sym):
        raise InterpError("index depends on an input size")
    if is_int(x):
        if t.is_const and t.values is not None and t.shape and len(t.shape) == 1 and d == 0:
            try:
                return TensorVal(None, [], t.dtype, values=[t.values[x]])
            except IndexError:
                raise InterpError("index out of range") from None
        return select(it, t, d, x)
    if isinstance(x, slice):
        st, en, sp = x.start, x.stop, x.step
        if any(isinstance(v, Unknown) for v in (st, en, sp)):
            return passthrough(it, "slicing with unknown bounds", t, keep_shape=False)
        L = t.shape[d] if (t.shape is not None and -len(t.shape) <= d < len(t.shape)) else None
        if isinstance(st, Sym) or isinstance(en, Sym):
            st = _sym_bound(it, st)
            en = _sym_bound(it, en)
        sp = 1 if sp is None else sp
        st0 = 0 if st is None else st
        if (st0 == 0 and sp == 1 and (en is None or (is_int(L) and is_int(en) and en >= L) or
                                      (L is not None and not is_int(en) and dim_eq(en, L)))):
            return t
        if t.is_const and t.values is not None and t.shape and len(t.shape) == 1 and d == 0:
            vals = t.values[slice(st0, en, sp)]
            return TensorVal(None, [len(vals)], t.dtype, values=vals)
        return slice_op(it, t, d, st0, en, sp)
    raise InterpError(f"index {type(x).__name__} not followed")


def _sym_bound(it, v):
    if isinstance(v, Sym):
        r = v.substitute(it.batch_env) if not it.symbolic else None
        if r is None:
            raise InterpError("slice bound depends on an input size")
        return r
    return v


def tensor_setitem(it, t, idx, value):
    if t.is_const:
        t.values = None
        return
    it.warn("assignment into part of a tensor has no archgraph op; ignored")


def tensor_iter(it, t):
    if t.shape and is_int(t.shape[0]):
        if t.is_const and t.values is not None and len(t.shape) == 1:
            return [TensorVal(None, [], t.dtype, values=[v]) for v in t.values]
        if t.shape[0] > 4096:
            raise InterpError("iteration over a long tensor")
        return [select(it, t, 0, i) for i in range(t.shape[0])]
    raise InterpError("iteration over a tensor of unknown length")


def tensor_unpack(it, t, n):
    if t.shape is not None and t.shape and is_int(t.shape[0]) and t.shape[0] != n:
        raise InterpError(f"cannot unpack a tensor of {t.shape[0]} rows into {n} names")
    return [select(it, t, 0, i) for i in range(n)]


def tensor_shape_tuple(t):
    if t.shape is None:
        return Unknown("shape of a tensor whose rank is unknown")
    return tuple(d if (is_int(d) or isinstance(d, Sym)) else Unknown("size") for d in t.shape)


def tensor_getattr(it, t, name):
    if name == "shape":
        return tensor_shape_tuple(t)
    if name == "dtype":
        return "dtype:" + t.dtype
    if name == "ndim":
        return len(t.shape) if t.shape is not None else Unknown("ndim")
    if name in ("data", "mT"):
        return t
    if name == "T":
        if t.shape is not None and len(t.shape) == 2:
            return transpose(it, t, 0, 1)
        return passthrough(it, ".T", t, keep_shape=False)
    if name in ("requires_grad", "is_cuda", "is_sparse", "is_quantized"):
        return False if name != "requires_grad" else (t.param is not None)
    if name == "device":
        return Unknown("device")
    if name == "grad":
        return None
    return TensorMethod(t, name)


_IDENTITY_METHODS = {"contiguous", "clone", "detach", "float", "cpu", "cuda", "to", "type_as", "requires_grad_",
                     "half", "double", "bfloat16", "pin_memory", "coalesce", "view_as_real_copy",
                     "retain_grad", "share_memory_"}


_SHAPE_KEEP_FUNCS = {"exp", "log", "abs", "sqrt", "rsqrt", "sign", "neg", "reciprocal", "erf", "floor", "ceil",
                     "round", "clamp", "clamp_min", "clamp_max", "clip", "roll", "flip", "masked_fill", "normalize",
                     "sin", "cos", "log2", "log1p", "expm1", "cumsum", "nan_to_num", "square", "pow", "lerp",
                     "trunc", "frac", "logit", "tril", "triu", "where", "fill_", "zero_", "masked_fill_",
                     "dropout_", "bernoulli", "bernoulli_", "erfinv", "sigmoid_", "tanh_", "relu_", "floor_divide",
                     "remainder", "fmod", "addcmul", "addcdiv", "lerp_", "hardtanh", "threshold", "celu"}


_INPLACE_CONST = {"normal_", "uniform_", "zero_", "fill_", "copy_", "bernoulli_", "div_", "mul_", "add_", "sub_",
                  "clamp_", "exponential_", "random_", "fill_diagonal_", "masked_fill_", "requires_grad_",
                  "trunc_normal_", "log_normal_", "geometric_", "cauchy_", "index_fill_", "scatter_"}


def _dims_arg(args, kwargs, key="dim"):
    if args:
        return args[0]
    return kwargs.get(key)


def _f32vals(vals, fn):
    try:
        return [_f32(fn(v)) for v in vals]
    except (ValueError, OverflowError, ZeroDivisionError, TypeError):
        return None


_INPLACE_GRAPH = {"add_", "sub_", "mul_", "div_", "relu_", "sigmoid_", "tanh_", "clamp_", "unsqueeze_",
                  "squeeze_", "transpose_", "t_", "masked_fill_", "clamp_min_", "clamp_max_", "clip_", "pow_", "exp_",
                  "neg_", "abs_", "sqrt_",
                  "hardtanh_", "fill_", "zero_", "copy_", "normal_", "uniform_", "bernoulli_"}


def _index_add(it, t, args, kwargs):
    """t.index_add(dim, index, source): t plus the rows of source added at the positions index names
    along dim, written as t + onehot^T @ source over that dim (a constant [t's size, source's size]
    matrix, as a gather is written: exact in shape and in what depends on what; the positions are
    not recorded).  None when the sizes are not known."""
    dim = args[0] if args else kwargs.get("dim")
    src = args[2] if len(args) > 2 else kwargs.get("source")
    alpha = kwargs.get("alpha", 1)
    if not (is_int(dim) and isinstance(src, TensorVal) and t.shape is not None and src.shape is not None
            and len(t.shape) == len(src.shape) and -len(t.shape) <= dim < len(t.shape)) or it.graph is None:
        return None
    d = dim % len(t.shape)
    n_to, n_from = t.shape[d], src.shape[d]
    if not (is_int(n_to) and is_int(n_from)):
        return None
    it.warn(".index_add() is written as a one-hot MatMul over its dim; the positions it adds at are not recorded")
    onehot = TensorVal(None, [n_to, n_from], src.dtype)
    onehot.origin = "onehot"  # already explained above
    moved = src if d == len(src.shape) - 2 else transpose(it, src, d, -2)
    if len(src.shape) == 1:
        moved = unsqueeze(it, src, 1)
    added = tensor_binop(it, ast.MatMult, onehot, moved)
    if len(src.shape) == 1:
        added = squeeze(it, added, 1)
    elif d != len(src.shape) - 2:
        added = transpose(it, added, d, -2)
    if alpha != 1:
        added = scale(it, added, alpha)
    if t.is_const and t.values is not None and not any(t.values):
        return added  # into a fresh zeros tensor: what is added is the result
    return tensor_binop(it, ast.Add, t, added)


def _unique(t, name, args, kwargs):
    """torch.unique / unique_consecutive of a constant tensor (timm's RegNet reads its stage depths this way):
    the values, sorted for unique, then the inverse indices and the counts where asked, as torch returns them.
    The values not known: their count is not either."""
    keys = ("sorted", "return_inverse", "return_counts") if name == "unique" else ("return_inverse", "return_counts")
    flags = {k: (args[i] if i < len(args) else kwargs.get(k, k == "sorted")) for i, k in enumerate(keys)}
    inverse, counts = bool(flags["return_inverse"]), bool(flags["return_counts"])
    if t.values is None:
        out = [TensorVal(None, [None], t.dtype)]
        out += [TensorVal(None, list(t.shape) if t.shape is not None else None, "int64")] if inverse else []
        out += [TensorVal(None, [None], "int64")] if counts else []
        return out[0] if len(out) == 1 else tuple(out)
    vals = list(t.values)
    if name == "unique":
        order = sorted(set(vals))
    else:
        order = [v for i, v in enumerate(vals) if i == 0 or vals[i - 1] != v]
    if name == "unique":
        where = {v: i for i, v in enumerate(order)}
        inv = [where[v] for v in vals]
        cnt = [vals.count(v) for v in order]
    else:
        inv, cnt = [], []
        for i, v in enumerate(vals):
            if i and vals[i - 1] == v:
                cnt[-1] += 1
            else:
                cnt.append(1)
            inv.append(len(cnt) - 1)
    out = [TensorVal(None, [len(order)], t.dtype, values=order)]
    if inverse:
        out.append(TensorVal(None, list(t.shape), "int64", values=inv))
    if counts:
        out.append(TensorVal(None, [len(cnt)], "int64", values=cnt))
    return out[0] if len(out) == 1 else tuple(out)


def tensor_method(it, t, name, args, kwargs):
    if name == "astype" and t.is_const:  # a numpy array made in a constructor (stdlib's numpy model)
        from ..stdlib import _np_dtype
        return TensorVal(None, t.shape, _np_dtype(args[0] if args else kwargs.get("dtype"), t.dtype))
    if name in ("addmm", "baddbmm"):
        from .dispatch import add_product
        a = args[0] if args else kwargs.get("mat1", kwargs.get("batch1"))
        b = args[1] if len(args) > 1 else kwargs.get("mat2", kwargs.get("batch2"))
        return add_product(it, t, a, b, kwargs.get("beta", 1), kwargs.get("alpha", 1))
    if name in ("index_add", "index_add_"):
        r = _index_add(it, t, args, kwargs)
        if r is None:
            it.warn(f".{name}() with sizes not known is not followed; the tensor is passed through unchanged")
            return t
        if name.endswith("_") and isinstance(r, TensorVal):
            t.ref, t.shape, t.dtype, t.values, t.param = r.ref, r.shape, r.dtype, r.values, r.param
        return r
    if t.is_const and name.endswith("_") and it.graph is not None and any(
            isinstance(a, TensorVal) and not a.is_const for a in list(args) + list(kwargs.values())):
        # a constant (a fresh zeros tensor) written with values of the graph: the result would depend on
        # nothing (scatter_, copy_, masked_scatter_ ...); said, never silently cut off
        it.warn(f"in-place .{name}() writes values of the graph into a constant tensor; not followed, so what "
                "is built from that tensor does not depend on them")
    if name in _INPLACE_GRAPH and not t.is_const and t.param is None and it.graph is not None:
        if name in ("fill_", "zero_", "copy_", "normal_", "uniform_", "bernoulli_"):
            it.warn(f"in-place .{name}() on a tensor in forward is not followed")
            return t
        r = tensor_method(it, t, name[:-1], args, kwargs)
        if isinstance(r, TensorVal) and r.ref is not None:
            t.ref, t.shape, t.dtype = r.ref, r.shape, r.dtype
        return t
    if name in ("outer", "ger") and len(args) == 1 and isinstance(args[0], TensorVal):
        from .dispatch import f_einsum  # torch.outer(a, b) is einsum('i,j->ij', a, b)
        return f_einsum(it, ["i,j->ij", t, args[0]], {})
    if name in _IDENTITY_METHODS:
        if CAST_METHODS.get(name) in FLOAT_DTYPES:
            dt = CAST_METHODS[name]
            return TensorVal(t.ref, t.shape, dt, values=t.values, param=t.param) if t.is_const else _retype(t, dt)
        if name == "to":
            for a in list(args) + list(kwargs.values()):
                if isinstance(a, str) and a.startswith("dtype:"):
                    return _retype(t, a[6:])
        return t
    if name in CAST_METHODS:  # to an integer dtype or bool
        dt = CAST_METHODS[name]
        vals = None
        if t.values is not None:
            vals = [bool(v) for v in t.values] if dt == "bool" else [int(v) for v in t.values]
        if t.is_const:
            return TensorVal(None, t.shape, dt, values=vals)
        return _retype(t, dt)
    if name == "type":
        if args and isinstance(args[0], str) and args[0].startswith("dtype:"):
            return _retype(t, args[0][6:])
        return t
    if name in ("unique", "unique_consecutive") and t.is_const and kwargs.get("dim") is None and \
            (len(args) < 4 or args[3] is None):
        return _unique(t, name, args, kwargs)
    if name in ("tolist",):
        if t.values is not None and t.shape is not None and len(t.shape) <= 1:
            return list(t.values) if t.shape else t.values[0]
        return Unknown("tensor values")
    if name == "item":
        if t.values is not None and len(t.values) == 1:
            return t.values[0]
        return Unknown("tensor value")
    if name == "numpy":
        return t
    if name == "size":
        d = _dims_arg(args, kwargs)
        if d is None:
            return tensor_shape_tuple(t)
        if t.shape is None:
            return Unknown("size of a tensor whose rank is unknown")
        try:
            v = t.shape[d]
        except (IndexError, TypeError):
            raise InterpError("size() dimension out of range") from None
        return v if (is_int(v) or isinstance(v, Sym)) else Unknown("size")
    if name in ("dim", "ndimension"):
        return len(t.shape) if t.shape is not None else Unknown("dim")
    if name in ("numel", "nelement"):
        n = prod(t.shape) if t.shape is not None else None
        return n if n is not None else Unknown("numel")
    if name == "element_size":
        return 4
    if name in ("view", "reshape"):
        if args and isinstance(args[0], str) and args[0].startswith("dtype:"):
            return t
        return reshape(it, t, args if args else kwargs.get("shape", ()))
    if name in ("view_as", "reshape_as"):
        o = args[0]
        return reshape(it, t, o.shape if o.shape is not None else [Unknown("shape")])
    if name == "permute":
        return permute(it, t, args if args else kwargs.get("dims", ()))
    if name in ("transpose", "swapaxes", "swapdims"):
        a0 = args[0] if args else kwargs.get("dim0")
        a1 = args[1] if len(args) > 1 else kwargs.get("dim1")
        return transpose(it, t, a0, a1)
    if name == "t":
        return transpose(it, t, 0, 1)
    if name == "flatten":
        s = args[0] if args else kwargs.get("start_dim", 0)
        e = args[1] if len(args) > 1 else kwargs.get("end_dim", -1)
        return flatten(it, t, s, e)
    if name == "unflatten":
        d = args[0] if args else kwargs.get("dim")
        sizes = args[1] if len(args) > 1 else kwargs.get("sizes")
        if t.shape is None:
            raise InterpError("unflatten of a tensor of unknown rank")
        dd = _norm_dim(d, t)
        new = list(t.shape[:dd]) + list(sizes) + list(t.shape[dd + 1:])
        return reshape(it, t, new)
    if name in ("mean", "sum", "amax", "amin", "max", "min", "prod", "std", "var", "norm", "logsumexp", "all",
                "any", "argmax", "argmin"):
        d = _dims_arg(args, kwargs)
        keep = args[1] if len(args) > 1 else kwargs.get("keepdim", False)
        if name in ("var", "std"):  # x.var(dim, unbiased, keepdim)
            keep = kwargs.get("keepdim", args[2] if len(args) > 2 else False)
        elif name == "norm":  # x.norm(p, dim, keepdim)
            d = kwargs.get("dim", args[1] if len(args) > 1 else None)
            keep = kwargs.get("keepdim", args[2] if len(args) > 2 else False)
        if name == "mean":
            return reduce_op(it, "Mean", t, d, keep)
        if name == "sum":
            return reduce_op(it, "Sum", t, d, keep)
        if t.is_const:
            if name in ("max", "min") and t.values and d is None:
                return TensorVal(None, [], t.dtype, values=[max(t.values) if name == "max" else min(t.values)])
            return TensorVal(None, None, t.dtype)
        if name in ("max", "min", "amax", "amin"):
            r = reduce_op(it, "Amax" if name in ("max", "amax") else "Amin", t, d, keep)
            if name in ("max", "min") and d is not None:
                return (r, TensorVal(None, list(r.shape) if r.shape is not None else None, "int64"))
            return r
        if name in ("var", "std", "norm", "logsumexp", "prod"):
            it.warn(f".{name}() has no archgraph op; written as Mean over the same dims (the same shape)")
            return reduce_op(it, "Mean", t, d, keep)
        r = passthrough(it, f".{name}()", t, keep_shape=False)
        return r
    if name in ("unsqueeze",):
        return unsqueeze(it, t, _dims_arg(args, kwargs))
    if name == "squeeze":
        return squeeze(it, t, _dims_arg(args, kwargs))
    if name == "chunk":
        n = args[0] if args else kwargs.get("chunks")
        d = args[1] if len(args) > 1 else kwargs.get("dim", 0)
        return chunk(it, t, n, d)
    if name == "split":
        s = args[0] if args else kwargs.get("split_size", kwargs.get("split_size_or_sections"))
        d = args[1] if len(args) > 1 else kwargs.get("dim", 0)
        return split(it, t, s, d)
    if name == "unbind":
        d = _dims_arg(args, kwargs) or 0
        if t.shape is None or not is_int(t.shape[_norm_dim(d, t)]):
            raise InterpError("unbind of a dimension of unknown size")
        return tuple(select(it, t, d, i) for i in range(t.shape[_norm_dim(d, t)]))
    if name == "expand":
        return expand(it, t, args if args else kwargs.get("size", ()))
    if name == "expand_as":
        o = args[0]
        return expand(it, t, o.shape if o.shape is not None else [Unknown("shape")])
    if name == "where" and len(args) + len(kwargs) == 2:  # x.where(cond, other) = torch.where(cond, x, other)
        r = where(it, _arg(args, kwargs, 0, "condition"), t, _arg(args, kwargs, 1, "other"))
        if r is not None:
            return r
    if name in ("repeat", "tile"):
        reps = list(args) if args else list(kwargs.get("repeats", kwargs.get("dims", ())))
        if len(reps) == 1 and isinstance(reps[0], (list, tuple)):
            reps = list(reps[0])
        if name == "tile" and t.shape is not None and len(reps) < len(t.shape):
            reps = [1] * (len(t.shape) - len(reps)) + reps  # torch.tile counts from the last dim
        return repeat(it, t, reps)
    if name == "repeat_interleave":
        return repeat_interleave(it, t, _arg(args, kwargs, 0, "repeats"), _arg(args, kwargs, 1, "dim"))
    if name == "tensor_split":
        return tensor_split(it, t, _arg(args, kwargs, 0, "indices_or_sections",
                                        kwargs.get("indices", kwargs.get("sections"))), _arg(args, kwargs, 1, "dim", 0))
    if name in ("softmax", "log_softmax"):
        d = _dims_arg(args, kwargs)
        return activation(it, "Softmax" if name == "softmax" else "LogSoftmax", t, {"dim": d})
    act = by_tensor_method(name)
    if act is not None:
        return activation(it, act, t)
    if name in ("matmul", "bmm", "mm", "__matmul__"):
        return tensor_binop(it, ast.MatMult, t, args[0])
    if name in ("add", "sub", "mul", "div", "add_", "sub_", "mul_", "div_", "true_divide", "multiply", "subtract",
                "divide"):
        if t.is_const and name.endswith("_"):
            return t
        op = {"add": ast.Add, "sub": ast.Sub, "subtract": ast.Sub, "mul": ast.Mult, "multiply": ast.Mult,
              "div": ast.Div, "divide": ast.Div, "true_divide": ast.Div}[name.rstrip("_")]
        other = args[0] if args else kwargs.get("other")
        alpha = kwargs.get("alpha")
        if alpha is not None and alpha != 1:
            other = tensor_binop(it, ast.Mult, other, alpha) if isinstance(other, TensorVal) else other * alpha
        return tensor_binop(it, op, t, other)
    if name in ("new_zeros", "new_ones", "new_empty", "new_full", "new_tensor"):
        if name == "new_tensor":
            return make_tensor(it, args[0] if args else kwargs.get("data"), t.dtype)
        size = args[0] if args else kwargs.get("size")
        if name != "new_full" and len(args) > 1:  # new_zeros(*outer, n, m): the sizes given one by one
            size = list(args)
        vals_fill = {"new_zeros": 0.0, "new_ones": 1.0}.get(name)
        if name == "new_full":
            vals_fill = args[1] if len(args) > 1 else kwargs.get("fill_value")
        return const_tensor(it, _size_list(size if isinstance(size, (list, tuple)) else [size]), t.dtype, vals_fill)
    if name in _INPLACE_CONST and (t.is_const or t.param is not None):
        if t.is_const and name not in ("requires_grad_",):
            t.values = None if name not in ("zero_", "fill_") else t.values
        return t
    if name in _TABLE_METHODS and (not t.is_const or _graph_tensors(list(args) + list(kwargs.values()), [])) \
            and it.graph is not None:
        return table_method(it, t, name, args, kwargs)
    if name in ("pow",) and args and is_int(args[0]) and args[0] == 2 and not t.is_const:
        return emit_op(it, "Mul", {}, [t, t])
    if t.is_const:
        # constant math: keep the shape, compute small value lists where cheap
        fn = _CONST_FUNCS.get(name)
        vals = _f32vals(t.values, fn) if (fn is not None and t.values is not None) else None
        if name == "diff" and t.values is not None:
            vals = [b - a for a, b in zip(t.values, t.values[1:])]
            return TensorVal(None, [len(vals)], t.dtype, values=vals)
        if name in ("flatten",):
            return TensorVal(None, [prod(t.shape)] if t.shape is not None else None, t.dtype, values=t.values)
        return TensorVal(None, t.shape if name in _SHAPE_KEEP_FUNCS or fn is not None else None, t.dtype,
                         values=vals)
    if name in _SHAPE_KEEP_FUNCS:
        return passthrough(it, f".{name}()", t)
    if name in ("masked_fill", "index_select", "gather", "scatter", "narrow", "topk", "sort", "cumsum", "roll",
                "repeat_interleave", "tile", "flip", "einsum"):
        return passthrough(it, f".{name}()", t, keep_shape=name in _SHAPE_KEEP_FUNCS)
    return passthrough(it, f"tensor method .{name}()", t, keep_shape=False)


# the Python operator each ast node spells; the op table says which op each one is (OpSpec.operator)
_OPERATOR_SYMBOLS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/"}

_CONST_FUNCS = {"exp": math.exp, "log": math.log, "abs": abs, "sqrt": math.sqrt, "round": round,
                "floor": math.floor, "ceil": math.ceil, "log2": math.log2, "neg": lambda v: -v,
                "sign": lambda v: (v > 0) - (v < 0)}


def _retype(t, dt):
    if t.is_const:
        return TensorVal(None, t.shape, dt, values=t.values)
    return TensorVal(t.ref if t.ref is not None else None, t.shape, dt, param=t.param) if t.ref is None else \
        TensorVal(t.ref, t.shape, dt)


# siblings, imported last: the modules of this model call one another
from .constants import _size_list, const_tensor, make_tensor  # noqa: E402
from .dispatch import _arg  # noqa: E402
from .names import _f32  # noqa: E402
from .refs import ref_of, shape_arg, unknown_size  # noqa: E402

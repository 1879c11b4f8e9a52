"""Tensor operations: arithmetic, joins, splits, views, reductions, sources."""

from __future__ import annotations

from .. import dims as D
from . import torch_build as tb
from .base import UNKNOWN, Arg, InferCtx, OpSpec, TensorType, broadcast


def _norm_dim(ctx: InferCtx, dim, rank: int, extra: int = 0):
    """A dim argument made non-negative, or None (with a finding) when out of range."""
    r = rank + extra
    if not isinstance(dim, int) or not (-r <= dim < r):
        ctx.require(False, "shape.dim-range",
                    f"{ctx.node.op} {ctx.node.id!r}: dim={dim} is out of range for a {rank}-D input")
        return None
    return dim % r


def _dtype_join(types):
    floats = [t.dtype for t in types if t.is_float]
    return floats[0] if floats else types[0].dtype


# ---- element-wise binary ------------------------------------------------
def _binary_infer(ctx: InferCtx):
    a, b = ctx.inputs[0], ctx.inputs[1]
    dtype = _dtype_join([a, b])
    if ctx.node.op == "Div" and a.is_int and b.is_int:
        dtype = "float32"
    if a.shape is None or b.shape is None:
        return [TensorType(None, dtype)]
    out, why = broadcast(a.shape, b.shape)
    if out is None:
        return ctx.fail("shape.broadcast",
                        f"{ctx.node.op} {ctx.node.id!r} combines {D.fmt_shape(a.shape)} and {D.fmt_shape(b.shape)}, "
                        f"which cannot broadcast ({why}); project one side (e.g. a 1x1 conv or Linear) to match")
    return [TensorType(out, dtype)]


def _matmul_infer(ctx: InferCtx):
    a, b = ctx.inputs[0], ctx.inputs[1]
    ctx.require(not (a.is_int or b.is_int) or (a.is_int and b.is_int), "dtype.int-into-float",
                f"MatMul {ctx.node.id!r} mixes integer and float operands; cast one side")
    if a.shape is None or b.shape is None:
        return [TensorType(None, _dtype_join([a, b]))]
    if len(a.shape) == 0 or len(b.shape) == 0:
        return ctx.fail("shape.rank", f"MatMul {ctx.node.id!r}: operands must be at least 1-D")
    sa = a.shape if len(a.shape) > 1 else (1,) + a.shape
    sb = b.shape if len(b.shape) > 1 else b.shape + (1,)
    if D.differ(sa[-1], sb[-2]):
        return ctx.fail("shape.matmul-inner",
                        f"MatMul {ctx.node.id!r}: inner sizes differ: {D.fmt_shape(a.shape)} @ {D.fmt_shape(b.shape)} "
                        f"({sa[-1]} vs {sb[-2]}); transpose one operand or fix its width")
    batch, why = broadcast(sa[:-2], sb[:-2])
    if batch is None:
        return ctx.fail("shape.broadcast",
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
def _concat_infer(stack: bool):
    def infer(ctx: InferCtx):
        ts = ctx.inputs
        dtype = _dtype_join(ts)
        if any(t.shape is None for t in ts):
            return [TensorType(None, dtype)]
        r = len(ts[0].shape)
        if any(len(t.shape) != r for t in ts):
            return ctx.fail("shape.concat-sizes",
                            f"{ctx.node.op} {ctx.node.id!r}: operands have different ranks "
                            f"({', '.join(D.fmt_shape(t.shape) for t in ts)})")
        dim = _norm_dim(ctx, ctx.args["dim"], r, 1 if stack else 0)
        if dim is None:
            return [UNKNOWN]
        out = list(ts[0].shape)
        for t in ts[1:]:
            for i, (u, v) in enumerate(zip(out, t.shape)):
                if (stack or i != dim) and D.differ(u, v):
                    return ctx.fail("shape.concat-sizes",
                                    f"{ctx.node.op} {ctx.node.id!r} along dim {ctx.args['dim']}: operands differ at "
                                    f"dim {i} ({', '.join(D.fmt_shape(t.shape) for t in ts)}); all sizes but the "
                                    "joined dim must agree")
                if u is None:
                    out[i] = v
        if stack:
            out.insert(dim, len(ts))
        else:
            total = 0
            for t in ts:
                total = D.add(total, t.shape[dim])
            out[dim] = total
        return [TensorType(tuple(out), dtype)]

    return infer


def _split_results(args, size):
    sec = args["split_size_or_sections"]
    if isinstance(sec, list):
        return list(sec)
    if not D.is_const(size):
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
    if isinstance(sec, list) and D.is_const(size) and sum(sec) != size:
        return ctx.fail("shape.split-sizes",
                        f"Split {ctx.node.id!r}: sections {sec} sum to {sum(sec)} but dim {dim} has size {size}")
    pieces = _split_results(ctx.args, size)
    if pieces is None:
        return [UNKNOWN]
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
        return ctx.fail("shape.reshape-product", f"Reshape {ctx.node.id!r}: only one -1 is allowed in {target}")
    known = D.prod([t for t in target if t != -1])
    if -1 in target:
        if D.is_const(total) and D.is_const(known) and (known == 0 or total % known):
            return ctx.fail("shape.reshape-product",
                            f"Reshape {ctx.node.id!r}: {D.fmt_shape(x.shape)} has {total} elements, "
                            f"which is not a multiple of {known} for target {target}")
        fill = D.exact_div(total, known)
        target = [fill if t == -1 else t for t in target]
    else:
        if D.is_const(total) and D.is_const(known) and total != known:
            return ctx.fail("shape.reshape-product",
                            f"Reshape {ctx.node.id!r}: {D.fmt_shape(x.shape)} has {total} elements but target "
                            f"{target} holds {known}; make the products agree")
        if D.is_sym(total) and D.is_sym(known) and total != known:
            q = D.exact_div(total, known)
            if D.is_const(q) and q != 1:
                return ctx.fail("shape.reshape-product",
                                f"Reshape {ctx.node.id!r}: {D.fmt_shape(x.shape)} ({total}) does not match target "
                                f"{target} ({known})")
    return [TensorType(tuple(target), x.dtype)]


def _flatten_infer(ctx: InferCtx):
    x = ctx.x
    if x.shape is None:
        return [x]
    r = len(x.shape)
    if r == 0:
        return [TensorType((1,), x.dtype)]
    s = _norm_dim(ctx, ctx.args["start_dim"], r)
    e = _norm_dim(ctx, ctx.args["end_dim"], r)
    if s is None or e is None:
        return [UNKNOWN]
    if s > e:
        return ctx.fail("shape.dim-range", f"Flatten {ctx.node.id!r}: start_dim {s} comes after end_dim {e}")
    return [TensorType(x.shape[:s] + (D.prod(x.shape[s:e + 1]),) + x.shape[e + 1:], x.dtype)]


def _unflatten_infer(ctx: InferCtx):
    x = ctx.x
    if x.shape is None:
        return [x]
    dim = _norm_dim(ctx, ctx.args["dim"], len(x.shape))
    if dim is None:
        return [UNKNOWN]
    sizes = list(ctx.args["unflattened_size"])
    if -1 in sizes:
        known = D.prod([v for v in sizes if v != -1])
        sizes = [D.exact_div(x.shape[dim], known) if v == -1 else v for v in sizes]
    prod = D.prod(sizes)
    if D.differ(prod, x.shape[dim]):
        return ctx.fail("shape.reshape-product",
                        f"Unflatten {ctx.node.id!r}: sizes {ctx.args['unflattened_size']} multiply to {prod}, "
                        f"but dim {dim} has {x.shape[dim]}")
    return [TensorType(x.shape[:dim] + tuple(sizes) + x.shape[dim + 1:], x.dtype)]


def _permute_infer(ctx: InferCtx):
    x = ctx.x
    dims = list(ctx.args["dims"])
    if x.shape is None:
        return [TensorType(None, x.dtype)]
    r = len(x.shape)
    norm = [d % r if isinstance(d, int) and -r <= d < r else None for d in dims]
    if len(dims) != r or None in norm or sorted(norm) != list(range(r)):
        return ctx.fail("shape.dim-range",
                        f"Permute {ctx.node.id!r}: dims {dims} are not a permutation of the {r} dims of "
                        f"{D.fmt_shape(x.shape)}")
    return [TensorType(tuple(x.shape[d] for d in norm), x.dtype)]


def _transpose_infer(ctx: InferCtx):
    x = ctx.x
    if x.shape is None:
        return [x]
    r = len(x.shape)
    a = _norm_dim(ctx, ctx.args["dim0"], r)
    b = _norm_dim(ctx, ctx.args["dim1"], r)
    if a is None or b is None:
        return [UNKNOWN]
    s = list(x.shape)
    s[a], s[b] = s[b], s[a]
    return [TensorType(tuple(s), x.dtype)]


def _squeeze_infer(ctx: InferCtx):
    x = ctx.x
    if x.shape is None:
        return [x]
    dim = ctx.args["dim"]
    if dim is None:
        return [TensorType(tuple(d for d in x.shape if d != 1), x.dtype)]
    d = _norm_dim(ctx, dim, len(x.shape))
    if d is None:
        return [UNKNOWN]
    s = list(x.shape)
    if s[d] == 1:
        del s[d]
    return [TensorType(tuple(s), x.dtype)]


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
        ctx.require(not x.is_int, "dtype.int-into-float",
                    f"Mean {ctx.node.id!r} of integer {x.dtype} values is not defined in torch; cast first")
    if x.shape is None:
        return [x]
    r = len(x.shape)
    dim, keep = ctx.args["dim"], ctx.args["keepdim"]
    dims = list(range(r)) if dim is None else (list(dim) if isinstance(dim, (list, tuple)) else [dim])
    norm = []
    for d in dims:
        nd = _norm_dim(ctx, d, r)
        if nd is None:
            return [UNKNOWN]
        norm.append(nd)
    out = [1 if i in norm else s for i, s in enumerate(x.shape)] if keep else \
          [s for i, s in enumerate(x.shape) if i not in norm]
    return [TensorType(tuple(out), x.dtype)]


def _select_infer(ctx: InferCtx):
    x = ctx.x
    if x.shape is None:
        return [x]
    r = len(x.shape)
    d = _norm_dim(ctx, ctx.args["dim"], r)
    if d is None:
        return [UNKNOWN]
    idx, size = ctx.args["index"], x.shape[d]
    if D.is_const(size) and not (-size <= idx < size):
        return ctx.fail("shape.index-range",
                        f"Select {ctx.node.id!r}: index {idx} is out of range for dim {d} of size {size}")
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
    if D.is_const(size):
        n = len(range(*slice(start, end, step).indices(size)))
    elif start in (None, 0) and end is None and step == 1:
        n = size
    elif start is not None and start < 0 and end is None and step == 1:
        n = -start
    elif (start in (None, 0)) and isinstance(end, int) and end >= 0 and step == 1:
        n = None  # min(end, size): unknown without the size
    else:
        n = None
    s = list(x.shape)
    s[d] = n
    return [TensorType(tuple(s), x.dtype)]


def _expand_infer(ctx: InferCtx):
    x = ctx.x
    target = list(ctx.args["shape"])
    if x.shape is None:
        return [TensorType(tuple(None if t == -1 else t for t in target), x.dtype)]
    if len(target) < len(x.shape):
        return ctx.fail("shape.expand",
                        f"Expand {ctx.node.id!r}: target {target} has fewer dims than {D.fmt_shape(x.shape)}")
    pad = len(target) - len(x.shape)
    out = []
    for i, t in enumerate(target):
        src = x.shape[i - pad] if i >= pad else None
        if t == -1:
            out.append(src)
            continue
        if i >= pad and src != 1 and D.differ(src, t):
            return ctx.fail("shape.expand",
                            f"Expand {ctx.node.id!r}: cannot expand size {src} to {t} at dim {i}; only size-1 dims "
                            "can be expanded")
        out.append(t)
    return [TensorType(tuple(out), x.dtype)]


def _source_infer(dtype_of):
    def infer(ctx: InferCtx):
        shape = ctx.args.get("shape")
        if shape is None:
            return [TensorType((ctx.args["end"],), "int64")]
        return [TensorType(tuple(shape), dtype_of(ctx.args))]

    return infer


def _upsample_infer(ctx: InferCtx):
    x, a = ctx.x, ctx.args
    ctx.require(not x.is_int, "dtype.int-into-float",
                lambda: f"Upsample {ctx.node.id!r} receives integer {x.dtype} values; torch interpolates floats only "
                "— cast first")
    if x.shape is None:
        return [x]
    n = len(x.shape) - 2
    if n < 1:
        return ctx.fail("shape.rank", f"Upsample {ctx.node.id!r} needs a batched input with spatial dims")
    if a["size"] is not None:
        sz = a["size"] if isinstance(a["size"], (list, tuple)) else [a["size"]] * n
        return [TensorType(x.shape[:2] + tuple(sz), x.dtype)]
    sf = a["scale_factor"]
    if sf is None:
        return ctx.fail("connectivity.missing-arg", f"Upsample {ctx.node.id!r} needs size or scale_factor")
    sfs = sf if isinstance(sf, (list, tuple)) else [sf] * n
    out = []
    for s, f in zip(x.shape[2:], sfs):
        if D.is_const(s):
            out.append(int(s * f))
        elif float(f).is_integer():
            out.append(D.mul(s, int(f)))
        else:
            out.append(None)
    return [TensorType(x.shape[:2] + tuple(out), x.dtype)]


def _param_params(a):
    n = 1
    for s in a["shape"]:
        n *= s
    return n


OPS = [
    OpSpec(name, "tensor", (), _binary_infer, tb.custom(name), arity=(2, 2), accepts="any",
           rules=("shape.broadcast",))
    for name in ("Add", "Sub", "Mul", "Div")
] + [
    OpSpec("MatMul", "tensor", (), _matmul_infer, tb.custom("MatMul"), arity=(2, 2), flops=_matmul_flops,
           rules=("shape.matmul-inner", "shape.broadcast", "shape.rank")),
    OpSpec("Concat", "tensor", (Arg("dim", 0),), _concat_infer(False), tb.custom("Concat"), arity=(1, None),
           accepts="any", rules=("shape.concat-sizes", "shape.dim-range")),
    OpSpec("Stack", "tensor", (Arg("dim", 0),), _concat_infer(True), tb.custom("Stack"), arity=(1, None),
           accepts="any", rules=("shape.concat-sizes", "shape.dim-range")),
    OpSpec("Split", "tensor", (Arg("split_size_or_sections"), Arg("dim", 0)), _split_infer, tb.custom("Split"),
           accepts="any", rules=("shape.split-sizes", "shape.dim-range")),
    OpSpec("Reshape", "tensor", (Arg("shape"),), _reshape_infer, tb.custom("Reshape"), accepts="any",
           rules=("shape.reshape-product",)),
    OpSpec("Flatten", "tensor", (Arg("start_dim", 1), Arg("end_dim", -1)), _flatten_infer, tb.module("Flatten"),
           accepts="any", rules=("shape.dim-range",)),
    OpSpec("Unflatten", "tensor", (Arg("dim"), Arg("unflattened_size")), _unflatten_infer, tb.module("Unflatten"),
           accepts="any", rules=("shape.reshape-product",)),
    OpSpec("Permute", "tensor", (Arg("dims"),), _permute_infer, tb.custom("Permute"), accepts="any",
           rules=("shape.dim-range",)),
    OpSpec("Transpose", "tensor", (Arg("dim0"), Arg("dim1")), _transpose_infer, tb.custom("Transpose"),
           accepts="any", rules=("shape.dim-range",)),
    OpSpec("Squeeze", "tensor", (Arg("dim", None),), _squeeze_infer, tb.custom("Squeeze"), accepts="any"),
    OpSpec("Unsqueeze", "tensor", (Arg("dim"),), _unsqueeze_infer, tb.custom("Unsqueeze"), accepts="any"),
    OpSpec("Mean", "tensor", (Arg("dim", None), Arg("keepdim", False)), _reduce_infer, tb.custom("Mean"),
           rules=("shape.dim-range", "dtype.int-into-float")),
    OpSpec("Sum", "tensor", (Arg("dim", None), Arg("keepdim", False)), _reduce_infer, tb.custom("Sum"),
           accepts="any", rules=("shape.dim-range",)),
    OpSpec("Amax", "tensor", (Arg("dim", None), Arg("keepdim", False)), _reduce_infer, tb.custom("Amax"),
           accepts="any", rules=("shape.dim-range",), doc="torch.amax: the largest value over dim"),
    OpSpec("Amin", "tensor", (Arg("dim", None), Arg("keepdim", False)), _reduce_infer, tb.custom("Amin"),
           accepts="any", rules=("shape.dim-range",), doc="torch.amin: the smallest value over dim"),
    OpSpec("Select", "tensor", (Arg("dim"), Arg("index")), _select_infer, tb.custom("Select"), accepts="any",
           rules=("shape.dim-range", "shape.index-range")),
    OpSpec("Slice", "tensor", (Arg("dim"), Arg("start", None), Arg("end", None), Arg("step", 1)), _slice_infer,
           tb.custom("Slice"), accepts="any", rules=("shape.dim-range",)),
    OpSpec("Expand", "tensor", (Arg("shape"),), _expand_infer, tb.custom("Expand"), accepts="any",
           rules=("shape.expand",)),
    OpSpec("Scale", "tensor", (Arg("value"),), lambda ctx: [ctx.x], tb.custom("Scale"), accepts="any"),
    OpSpec("Constant", "tensor", (Arg("shape"), Arg("value", 0.0), Arg("dtype", None)),
           _source_infer(lambda a: a["dtype"] if a.get("dtype") else
                         "int64" if isinstance(a.get("value"), int) and not isinstance(a.get("value"), bool)
                         else "float32"),
           tb.custom("Constant"), arity=(0, 0), accepts="any"),
    OpSpec("Arange", "tensor", (Arg("end"),), _source_infer(lambda a: "int64"), tb.custom("Arange"),
           arity=(0, 0), accepts="any"),
    OpSpec("Parameter", "tensor", (Arg("shape"),), _source_infer(lambda a: "float32"), tb.custom("Parameter"),
           arity=(0, 0), params=_param_params, accepts="any"),
    OpSpec("Upsample", "tensor", (Arg("size", None), Arg("scale_factor", None), Arg("mode", "nearest"),
                                  Arg("align_corners", None)), _upsample_infer, tb.module("Upsample"),
           rules=("shape.rank", "dtype.int-into-float")),
]


# ---- padding ----------------------------------------------------------------
def _pad_infer(n: int):
    def infer(ctx: InferCtx):
        x = ctx.x
        if x.shape is None:
            return [x]
        if len(x.shape) not in (n + 1, n + 2):
            return ctx.fail("shape.rank", f"{ctx.node.op} {ctx.node.id!r} expects a {n + 1}-D or {n + 2}-D input, "
                                          f"got {D.fmt_shape(x.shape)}")
        pad = ctx.args["padding"]
        pads = list(pad) if isinstance(pad, (list, tuple)) else [pad] * (2 * n)
        if len(pads) != 2 * n:
            return ctx.fail("connectivity.bad-arg",
                            f"{ctx.node.op} {ctx.node.id!r}: padding needs {2 * n} values, got {pads}")
        s = list(x.shape)
        # torch's order: last dim first (left, right), then the one before it
        for i in range(n):
            dim = len(s) - 1 - i
            s[dim] = D.add(s[dim], pads[2 * i] + pads[2 * i + 1])
            if D.is_const(s[dim]) and s[dim] <= 0:
                return ctx.fail("shape.spatial-collapse",
                                f"{ctx.node.op} {ctx.node.id!r}: negative padding leaves size {s[dim]}")
        return [TensorType(tuple(s), x.dtype)]

    return infer


for _n in (1, 2, 3):
    OPS.append(OpSpec(f"ZeroPad{_n}d", "tensor", (Arg("padding"),), _pad_infer(_n), tb.module(f"ZeroPad{_n}d"),
                      accepts="any", rules=("shape.rank", "shape.spatial-collapse")))
    OPS.append(OpSpec(f"ConstantPad{_n}d", "tensor", (Arg("padding"), Arg("value")), _pad_infer(_n),
                      tb.module(f"ConstantPad{_n}d"), accepts="any", rules=("shape.rank", "shape.spatial-collapse")))
    OPS.append(OpSpec(f"ReflectionPad{_n}d", "tensor", (Arg("padding"),), _pad_infer(_n),
                      tb.module(f"ReflectionPad{_n}d"), rules=("shape.rank", "shape.spatial-collapse")))
    OPS.append(OpSpec(f"ReplicationPad{_n}d", "tensor", (Arg("padding"),), _pad_infer(_n),
                      tb.module(f"ReplicationPad{_n}d"), rules=("shape.rank", "shape.spatial-collapse")))


def _pixel_shuffle_infer(ctx: InferCtx):
    """PixelShuffle(r): [*, C*r*r, H, W] -> [*, C, H*r, W*r]; PixelUnshuffle the other way."""
    x = ctx.x
    if x.shape is None:
        return [x]
    if not ctx.need_rank(x, tuple(range(3, 9))):
        return [UNKNOWN]
    c, h, w = x.shape[-3:]
    if ctx.node.op == "PixelShuffle":
        r = ctx.args["upscale_factor"]
        if D.is_const(c) and c % (r * r):
            return ctx.fail("shape.reshape-product", f"PixelShuffle {ctx.node.id!r}: {c} channels do not divide by "
                                                     f"upscale_factor^2 = {r * r}")
        out = (D.exact_div(c, r * r), D.mul(h, r), D.mul(w, r))
    else:
        r = ctx.args["downscale_factor"]
        if any(D.is_const(v) and v % r for v in (h, w)):
            return ctx.fail("shape.reshape-product", f"PixelUnshuffle {ctx.node.id!r}: {h}x{w} does not divide by "
                                                     f"downscale_factor {r}")
        out = (D.mul(c, r * r), D.exact_div(h, r), D.exact_div(w, r))
    return [TensorType(x.shape[:-3] + out, x.dtype)]


OPS.append(OpSpec("PixelShuffle", "tensor", (Arg("upscale_factor"),), _pixel_shuffle_infer, tb.module("PixelShuffle"),
                  accepts="any", rules=("shape.rank", "shape.reshape-product")))
OPS.append(OpSpec("PixelUnshuffle", "tensor", (Arg("downscale_factor"),), _pixel_shuffle_infer,
                  tb.module("PixelUnshuffle"), accepts="any", rules=("shape.rank", "shape.reshape-product")))

"""Tensor functions real model code calls on whole tensors: Clamp, Normalize (F.normalize), Roll,
Cumsum, Chunk, Tile, Pad (F.pad) and Interpolate (F.interpolate)."""

from __future__ import annotations

from .. import dims as D
from . import torch_build as tb
from .base import (
    BOOL,
    INT,
    NAT,
    NUM,
    POS,
    UNKNOWN,
    Arg,
    Enum,
    Float,
    InferCtx,
    ListOf,
    OneOf,
    OpSpec,
    Optional,
    TensorType,
    symbolic_pieces,
)
from .rules import (
    CONNECTIVITY_BAD_ARG,
    DTYPE_INT_INTO_FLOAT,
    SHAPE_DIM_RANGE,
    SHAPE_PAD_SIZE,
    SHAPE_RANK,
    SHAPE_SPATIAL_COLLAPSE,
    SHAPE_SPLIT_SIZES,
)


def _dim(ctx: InferCtx, dim, rank: int) -> int | None:
    r = max(rank, 1)
    if not isinstance(dim, int) or not ctx.require(-r <= dim < r, SHAPE_DIM_RANGE,
                                                   lambda: f"{ctx.node.op} {ctx.node.id!r}: dim={dim} is out of "
                                                           f"range for a {rank}-D input"):
        return None
    return dim % r


def _clamp(ctx: InferCtx):
    x, a = ctx.x, ctx.args
    if a["min"] is None and a["max"] is None:
        return ctx.fail(CONNECTIVITY_BAD_ARG, f"Clamp {ctx.node.id!r}: give min, max or both")
    floaty = any(isinstance(v, float) for v in (a["min"], a["max"]))
    if x.dtype == "bool":
        return [TensorType(x.shape, "float32" if floaty else "int64")]
    return [TensorType(x.shape, "float32" if floaty and x.is_int else x.dtype)]


def _normalize(ctx: InferCtx):
    x = ctx.x
    ctx.require(not x.is_int, DTYPE_INT_INTO_FLOAT,
                lambda: f"Normalize {ctx.node.id!r} receives integer {x.dtype} values; the norm needs floats")
    if x.shape is not None:
        _dim(ctx, ctx.args["dim"], len(x.shape))
    return [x]


def _roll(ctx: InferCtx):
    x, a = ctx.x, ctx.args
    shifts = a["shifts"] if isinstance(a["shifts"], list) else [a["shifts"]]
    dims = a["dims"]
    if dims is None or dims == []:
        if len(shifts) != 1:
            return ctx.fail(CONNECTIVITY_BAD_ARG, f"Roll {ctx.node.id!r}: without dims, shifts must be one int")
        return [x]
    dims = dims if isinstance(dims, list) else [dims]
    if x.shape == ():
        return ctx.fail(SHAPE_DIM_RANGE, f"Roll {ctx.node.id!r}: a 0-D tensor has no dim to roll along "
                                           "(torch rolls it only without dims)")
    if len(dims) != len(shifts):
        return ctx.fail(CONNECTIVITY_BAD_ARG, f"Roll {ctx.node.id!r}: {len(shifts)} shift(s) for {len(dims)} dim(s)")
    if x.shape is not None:
        for d in dims:
            if _dim(ctx, d, len(x.shape)) is None:
                return [UNKNOWN]
    return [x]


def _cumsum(ctx: InferCtx):
    x = ctx.x
    if x.shape is not None and _dim(ctx, ctx.args["dim"], len(x.shape)) is None:
        return [UNKNOWN]
    return [TensorType(x.shape, "int64" if x.is_int else x.dtype)]


def _chunk(ctx: InferCtx):
    x, n = ctx.x, ctx.args["chunks"]
    if x.shape is None:
        return [UNKNOWN]
    d = _dim(ctx, ctx.args["dim"], len(x.shape))
    if d is None or not x.shape:
        return [UNKNOWN] if d is None else ctx.fail(SHAPE_RANK, f"Chunk {ctx.node.id!r}: a 0-D tensor")
    size = x.shape[d]
    if not D.is_const(size) and ctx.declared and D.is_const(at := D.substitute(size, ctx.declared)):
        size = at  # (a size with a symbol the design does not declare stays symbolic, not unknown)
    if not D.is_const(size):
        return symbolic_pieces(ctx, x, d, D.floordiv(D.add(size, n - 1), n), f"dim {d}")
    step = -(-size // n) if size else 0
    pieces = [min(step, size - i) for i in range(0, size, step)] if step else [0]
    out = []
    for p in pieces:
        s = list(x.shape)
        s[d] = p
        out.append(TensorType(tuple(s), x.dtype))
    return out


def _tile(ctx: InferCtx):
    x, reps = ctx.x, list(ctx.args["dims"])
    if x.shape is None:
        return [x]
    rank = max(len(reps), len(x.shape))
    reps = [1] * (rank - len(reps)) + reps
    shape = [1] * (rank - len(x.shape)) + list(x.shape)
    return [TensorType(tuple(D.mul(s, r) for s, r in zip(shape, reps)), x.dtype)]


# F.pad's non-constant modes: how many dims they pad for a pad of 2k values, and the ranks they take
_PAD_RANKS = {1: (2, 3), 2: (3, 4), 3: (4, 5)}


INT_RANGES = {"uint8": (0, 255), "int8": (-128, 127), "int16": (-2 ** 15, 2 ** 15 - 1)}


def fill_fits(ctx: InferCtx, x: TensorType, value, pads: list) -> bool:
    """A constant pad's fill must fit an integer input's dtype (measured: torch refuses -1.9 for uint8);
    torch fills only where it pads, so padding that only trims never converts it. False when it blocked."""
    lo_hi = INT_RANGES.get(x.dtype)
    value = value or 0
    return not (lo_hi and not lo_hi[0] <= value <= lo_hi[1] and any(p > 0 for p in pads)) or ctx.require(
        False, CONNECTIVITY_BAD_ARG, f"{ctx.node.op} {ctx.node.id!r}: value={value} does not fit its {x.dtype} input")


def _blocked(ctx: InferCtx, rule: str, message: str) -> list | None:  # what pad_sizes gives when it blocked
    ctx.fail(rule, message)
    return None


def pad_sizes(ctx: InferCtx, s: list, pads: list, n: int, mode: str) -> list | None:
    """The sizes after padding the last `n` dims of sizes `s` by `pads` (torch's order: last dim first,
    (left, right)) in `mode`, with each mode's limits (measured): reflection pads must be smaller than the
    size, circular ones wrap at most once, negative sides trim first. None when it blocked."""
    # torch's order: last dim first (left, right), then the one before it
    for i in range(n):
        dim = len(s) - 1 - i
        left, right = pads[2 * i], pads[2 * i + 1]
        size = s[dim]
        # measured: only a side that pads must be smaller than the size; a trimming side is limited by
        # the result's size alone (ReflectionPad1d((1, -2)) of 2 gives 1)
        if mode == "reflect" and D.is_const(size) and (left >= size or right >= size):
            return _blocked(ctx, SHAPE_PAD_SIZE, f"{ctx.node.op} {ctx.node.id!r}: reflection padding ({left}, "
                                              f"{right}) must be smaller than the size {size} of dim {dim}")
        if mode == "circular" and D.is_const(size) and (left > size or right > size):
            return _blocked(ctx, SHAPE_PAD_SIZE, f"{ctx.node.op} {ctx.node.id!r}: circular padding ({left}, "
                                              f"{right}) may wrap at most once around size {size}")
        if mode == "reflect" and not D.is_const(size):
            # each side that pads must be smaller than the size: p + 1 <= size, a condition on the symbol
            for p in sorted({left, right}):
                if p > 0 and not ctx.require_equal(p + 1, size, SHAPE_PAD_SIZE,
                                         f"{ctx.node.op} {ctx.node.id!r}: reflection padding {p} against size "
                                         f"{size} of dim {dim}", kind="le"):
                    return None
        if mode == "circular" and not D.is_const(size):
            for p in (left, right):
                if not ctx.require_equal(p, size, SHAPE_PAD_SIZE,
                                         f"{ctx.node.op} {ctx.node.id!r}: circular padding {p} against size "
                                         f"{size} of dim {dim}", kind="le"):
                    return None
        # constant and circular padding narrow away the negative sides first, then pad
        if mode in ("constant", "circular") and D.is_const(size) and size + min(left, 0) + min(right, 0) < 0:
            return _blocked(ctx, SHAPE_SPATIAL_COLLAPSE,
                            f"{ctx.node.op} {ctx.node.id!r}: negative padding ({left}, {right}) trims more "
                            f"than the size {size} of dim {dim}")
        trim = -(min(left, 0) + min(right, 0))
        if mode in ("constant", "circular") and trim and not D.is_const(size):
            if not ctx.require_equal(trim, size, SHAPE_SPATIAL_COLLAPSE,
                                     f"{ctx.node.op} {ctx.node.id!r}: negative padding ({left}, {right}) trims "
                                     f"{trim} of size {size} of dim {dim}", kind="le"):
                return None
        s[dim] = D.add(size, left + right)
        # 1-D reflection and replication refuse an empty result ("input is too small"); measured, the 2-D
        # and 3-D layers and the other modes give one
        if mode in ("reflect", "replicate") and n == 1 and D.is_const(s[dim]) and s[dim] == 0:
            return _blocked(ctx, SHAPE_SPATIAL_COLLAPSE,
                            f"{ctx.node.op} {ctx.node.id!r}: negative padding leaves size 0 of dim {dim}")
        if mode in ("reflect", "replicate") and left + right < 0 and not D.is_const(size):
            if not ctx.require_equal((1 if n == 1 else 0) - (left + right), size, SHAPE_SPATIAL_COLLAPSE,
                                     f"{ctx.node.op} {ctx.node.id!r}: negative padding {left + right} of size "
                                     f"{size} of dim {dim}", kind="le"):
                return None
        if D.is_const(s[dim]) and s[dim] < 0:
            return _blocked(ctx, SHAPE_SPATIAL_COLLAPSE,
                            f"{ctx.node.op} {ctx.node.id!r}: negative padding leaves size {s[dim]}")
    return s


def _pad(ctx: InferCtx):
    x, a = ctx.x, ctx.args
    pad, mode = list(a["pad"]), a["mode"]
    if len(pad) % 2:
        return ctx.fail(CONNECTIVITY_BAD_ARG, f"Pad {ctx.node.id!r}: pad {pad} must have an even length")
    if mode != "constant" and a["value"] not in (None, 0, 0.0):
        return ctx.fail(CONNECTIVITY_BAD_ARG, f"Pad {ctx.node.id!r}: value is for mode 'constant' only")
    if x.shape is None:
        return [x]
    k = len(pad) // 2
    if k > len(x.shape):
        return ctx.fail(SHAPE_RANK, f"Pad {ctx.node.id!r}: {len(pad)} pad values for a {len(x.shape)}-D input")
    if mode in ("reflect", "replicate") and x.dtype == "bool":  # measured: circular copies bools
        return ctx.fail(DTYPE_INT_INTO_FLOAT, f"Pad {ctx.node.id!r}: mode {mode!r} does not take bool values")
    if mode != "constant":
        if k not in _PAD_RANKS or len(x.shape) not in _PAD_RANKS[k]:
            return ctx.fail(SHAPE_RANK, f"Pad {ctx.node.id!r}: mode {mode!r} with {len(pad)} pad values takes a "
                                          f"{' or '.join(f'{r}-D' for r in _PAD_RANKS.get(k, ()))} input, got "
                                          f"{D.fmt_shape(x.shape)}".replace("takes a  input", "takes no input"))
    if mode == "constant" and not fill_fits(ctx, x, a["value"], pad):
        return [UNKNOWN]
    if mode != "constant" and any(D.is_const(d) and d == 0 for d in x.shape[len(x.shape) - k:]):
        return ctx.fail(SHAPE_PAD_SIZE, f"Pad {ctx.node.id!r}: mode {mode!r} cannot pad an empty dim")
    s = pad_sizes(ctx, list(x.shape), pad, k, mode)
    if s is None:
        return [UNKNOWN]
    return [TensorType(tuple(s), x.dtype)]


# F.interpolate's modes and the input ranks (batch, channels, spatial) each takes
INTERP_RANKS = {"nearest": (3, 4, 5), "nearest-exact": (3, 4, 5), "area": (3, 4, 5), "linear": (3,),
                "bilinear": (4,), "bicubic": (4,), "trilinear": (5,)}


UINT8_MODES = ("nearest", "nearest-exact", "bilinear", "bicubic")


def interp_dtype_key(a: dict) -> str:
    """The row of the dtype table for an interpolation's mode (nn.Upsample calls F.interpolate: one set of
    kernels for both)."""
    return "Interpolate[nearest]" if a["mode"] in ("nearest", "nearest-exact") else \
        "Interpolate[bilinear]" if a["mode"] in ("bilinear", "bicubic") else "Interpolate"


def interpolate_infer(ctx: InferCtx):
    """Upsample and Interpolate: one of size / scale_factor, a mode that fits the rank, align_corners
    only with the interpolating modes, antialias only with bilinear / bicubic (and area's own)."""
    x, a = ctx.x, ctx.args
    # torch has uint8 kernels for the nearest modes and (image) bilinear / bicubic, measured; none for the
    # other integers or bool
    ctx.require(not x.is_int or (x.dtype == "uint8" and a["mode"] in UINT8_MODES),
                DTYPE_INT_INTO_FLOAT,
                lambda: f"{ctx.node.op} {ctx.node.id!r} receives integer {x.dtype} values; torch interpolates floats "
                "only — cast first")
    mode = a["mode"]
    if (a["size"] is None) == (a["scale_factor"] is None):
        return ctx.fail(CONNECTIVITY_BAD_ARG, f"{ctx.node.op} {ctx.node.id!r}: give exactly one of size and "
                                                "scale_factor")
    if a.get("recompute_scale_factor") and a["size"] is not None:
        return ctx.fail(CONNECTIVITY_BAD_ARG, f"{ctx.node.op} {ctx.node.id!r}: recompute_scale_factor=true with an "
                                                "explicit size (torch: 'not meaningful with an explicit size')")
    if a["align_corners"] is not None and mode not in ("linear", "bilinear", "bicubic", "trilinear"):
        return ctx.fail(CONNECTIVITY_BAD_ARG, f"{ctx.node.op} {ctx.node.id!r}: align_corners is for the "
                                                f"interpolating modes, not {mode!r}")
    if a.get("antialias") and mode not in ("bilinear", "bicubic"):
        return ctx.fail(CONNECTIVITY_BAD_ARG, f"{ctx.node.op} {ctx.node.id!r}: antialias is for bilinear and "
                                                f"bicubic, not {mode!r}")
    if x.shape is None:
        return [x]
    if not ctx.need_rank(x, INTERP_RANKS[mode]):
        return [UNKNOWN]
    return resized(ctx, x, a["size"], a["scale_factor"])


def resized(ctx: InferCtx, x: TensorType, size, scale_factor) -> list:
    """The one size / scale rule of F.interpolate, which nn.Upsample and nn.Upsampling*2d call: a size or
    scale per spatial dim (one value stands for all), and every output size at least 1 (torch: "Input and
    output sizes should be greater than 0"; measured in tests/test_interpolate.py)."""
    assert x.shape is not None  # callers ask for the rank first
    n = len(x.shape) - 2
    if size is not None:
        sz = size if isinstance(size, list) else [size] * n
        if len(sz) != n:
            return ctx.fail(CONNECTIVITY_BAD_ARG, f"{ctx.node.op} {ctx.node.id!r}: size {sz} for {n} spatial dims")
        if any(v <= 0 for v in sz):
            return ctx.fail(SHAPE_SPATIAL_COLLAPSE, f"{ctx.node.op} {ctx.node.id!r}: output size {sz}")
        return [TensorType(x.shape[:2] + tuple(sz), x.dtype)]
    sfs = scale_factor if isinstance(scale_factor, list) else [scale_factor] * n
    if len(sfs) != n:
        return ctx.fail(CONNECTIVITY_BAD_ARG, f"{ctx.node.op} {ctx.node.id!r}: scale_factor {sfs} for {n} dims")
    out = scaled_sizes(ctx, x.shape[2:], sfs)
    return [UNKNOWN] if out is None else [TensorType(x.shape[:2] + tuple(out), x.dtype)]


def scaled_sizes(ctx: InferCtx, sizes, factors) -> list | None:
    """The spatial sizes an interpolation by scale factors gives: torch takes int(size * scale), which
    must be at least 1 (a symbolic size is judged by value). None when it blocked."""
    out: list[D.Dim] = []
    for s, f in zip(sizes, factors):
        if D.is_const(s):
            v = int(s * f)
            if v <= 0 or s <= 0:
                ctx.fail(SHAPE_SPATIAL_COLLAPSE, f"{ctx.node.op} {ctx.node.id!r}: scale {f} of size {s} gives {v}")
                return None
            out.append(v)
        elif float(f).is_integer():
            out.append(D.mul(s, int(f)))
        else:
            if f < 1 and s is not None and not ctx.require_at_sizes(
                    s, lambda v, f=f: int(v * f) >= 1, f"int({D.fmt(s)} * {f:g}) >= 1", SHAPE_SPATIAL_COLLAPSE,
                    f"{ctx.node.op} {ctx.node.id!r}: scale {f:g} of size {D.fmt(s)}"):
                return None
            out.append(None)
    return out


SCALE = Float(0, lo_open=True)
# an output size: 0 is a size torch refuses at run time ("output sizes should be greater than 0"), which the
# shape rule says as shape.spatial-collapse, the same for every op that interpolates
INTERP_SIZE = OneOf(NAT, ListOf(NAT, min_len=1))
INTERP_SCALE = OneOf(SCALE, ListOf(SCALE, min_len=1))
INTERP_MODES = Enum(*INTERP_RANKS)
DIMS = OneOf(INT, ListOf(INT, min_len=1))

OPS = [
    OpSpec("Clamp", "tensor", (Arg("min", None, Optional(NUM)), Arg("max", None, Optional(NUM))), _clamp,
           tb.custom("Clamp"), accepts="any", rules=(CONNECTIVITY_BAD_ARG,), traits=("functional", "starts-values"),
           # integer bounds keep an integer tensor's dtype (a float bound promotes it): another row of the table
           dtype_key=lambda a: "Clamp" if any(isinstance(v, float) for v in (a["min"], a["max"]))
           else "Clamp[integer bounds]"),
    OpSpec("Normalize", "tensor", (Arg("p", 2.0, NUM), Arg("dim", 1, INT), Arg("eps", 1e-12, NUM)), _normalize,
           tb.custom("Normalize"), rules=(SHAPE_DIM_RANGE, DTYPE_INT_INTO_FLOAT), traits=("functional",)),
    # torch.roll takes dims=[] as no dims: one shift of the flattened tensor
    OpSpec("Roll", "tensor", (Arg("shifts", kind=DIMS), Arg("dims", None, Optional(OneOf(INT, ListOf(INT))))), _roll,
           tb.custom("Roll"), accepts="any", rules=(SHAPE_DIM_RANGE, CONNECTIVITY_BAD_ARG),
           traits=("functional", "moves-values",)),
    OpSpec("Cumsum", "tensor", (Arg("dim", kind=INT),), _cumsum, tb.custom("Cumsum"), accepts="any",
           rules=(SHAPE_DIM_RANGE,), traits=("functional", "keeps-max", "sums")),
    OpSpec("Chunk", "tensor", (Arg("chunks", kind=POS), Arg("dim", 0, INT)), _chunk, tb.custom("Chunk"),
           accepts="any", rules=(SHAPE_DIM_RANGE, SHAPE_RANK, SHAPE_SPLIT_SIZES), traits=("functional", "split-view",)),
    OpSpec("Tile", "tensor", (Arg("dims", kind=ListOf(NAT)),), _tile, tb.custom("Tile"), accepts="any",
           traits=("functional", "moves-values",)),
    OpSpec("Pad", "tensor", (Arg("pad", kind=ListOf(INT)), Arg("mode", "constant",
                                                            Enum("constant", "reflect", "replicate", "circular")),
                             Arg("value", None, Optional(NUM))), _pad, tb.custom("Pad"), accepts="any",
           rules=(CONNECTIVITY_BAD_ARG, SHAPE_RANK, SHAPE_PAD_SIZE, SHAPE_SPATIAL_COLLAPSE,
                  DTYPE_INT_INTO_FLOAT), traits=("functional", "pads", "pads-with-fill")),
    OpSpec("Interpolate", "tensor",
           (Arg("size", None, Optional(INTERP_SIZE)),
            Arg("scale_factor", None, Optional(INTERP_SCALE)),
            Arg("mode", "nearest", INTERP_MODES), Arg("align_corners", None, Optional(BOOL)),
            Arg("recompute_scale_factor", None, Optional(BOOL)), Arg("antialias", False, BOOL)),
           interpolate_infer, tb.custom("Interpolate"),
           rules=(SHAPE_RANK, DTYPE_INT_INTO_FLOAT, CONNECTIVITY_BAD_ARG, SHAPE_SPATIAL_COLLAPSE),
           dtype_key=interp_dtype_key, traits=("functional",)),
]

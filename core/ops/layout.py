"""Memory layout: which permuted views a kernel refuses (measured on the CPU, torch 2.13).

Most kernels take any strides (they copy to contiguous first). A few read the layout instead:

- ``LocalResponseNorm`` of 5 or more dims calls ``view`` to merge the dims after the third, which fails
  when a ``Permute`` left them out of order in memory (gen-91438, gen-144895);
- ``MaxPool3d`` on an unbatched 4-D input takes its memory format from the 4-D strides, and refuses the
  channels-last one (gen-120931);
- ``PixelShuffle`` / ``PixelUnshuffle`` of 5 dims refuse a channels-last-3d one.

A layout is the order of a tensor's dims in memory, outermost first; the verifier follows it from the
views that permute (``Permute``, ``Transpose``, einops patterns that only reorder axes) through the
element-wise ops that keep their input's strides. A tensor it does not follow is taken as contiguous:
nothing here blocks on a guess. The stride tests are torch's own (c10's ``is_channels_last_strides_2d_s4``
and ``_3d_s5``, ATen's ``computeStride``), on constant sizes only.
"""

from __future__ import annotations

from .. import dims as D
from .einsum import einops_reorder

# ops whose result has their input's strides (element-wise on one tensor; TensorIterator keeps a dense
# input's permutation), measured for each (LogSigmoid and an RReLU that is not in place do not); an op
# that works in place returns its input, strides and all
KEEPS_LAYOUT = frozenset({
    "ReLU", "ReLU6", "LeakyReLU", "ELU", "SELU", "GELU", "SiLU", "Mish", "Hardswish", "Hardsigmoid", "Hardtanh",
    "Softplus", "Tanh", "Sigmoid", "CELU", "Hardshrink", "Softshrink", "Softsign", "Tanhshrink",
    "Threshold", "Identity", "Dropout", "AlphaDropout", "Dropout2d", "Dropout3d", "FeatureAlphaDropout", "Clamp",
    "Normalize", "Scale",
})


def strides_of(sizes: tuple, order: tuple) -> tuple:
    """The strides of a dense tensor whose dims lie in memory in `order` (outermost first)."""
    strides = [0] * len(sizes)
    step = 1
    for d in reversed(order):
        strides[d] = step
        step *= max(sizes[d], 1)
    return tuple(strides)


def permuted(order: tuple | None, rank: int, perm: list) -> tuple | None:
    """The layout of `x.permute(perm)` for an x of layout `order` (None: contiguous); None when that is
    contiguous again."""
    base = order or tuple(range(rank))
    where = {old: new for new, old in enumerate(perm)}
    out = tuple(where[d] for d in base)
    return None if out == tuple(range(rank)) else out


def _channels_last(sizes: tuple, strides: tuple, walk: tuple) -> bool:
    # c10/core/MemoryFormat.h, is_channels_last_strides_2d_s4 / _3d_s5
    if strides[1] == 0:
        return False
    least = 0
    for d in walk:
        if sizes[d] == 0 or strides[d] < least:
            return False
        if d == 0 and least == strides[1]:
            return False
        least = strides[d]
        if sizes[d] > 1:
            least *= sizes[d]
    return True


def suggested_format(sizes: tuple, strides: tuple) -> str:
    """torch's ``suggest_memory_format``: channels_last (4-D), channels_last_3d (5-D) or contiguous."""
    if len(sizes) == 4 and _channels_last(sizes, strides, (1, 3, 2, 0)):
        return "channels_last"
    if len(sizes) == 5 and _channels_last(sizes, strides, (1, 4, 3, 2, 0)):
        return "channels_last_3d"
    return "contiguous"


def viewable(sizes: tuple, strides: tuple, new: tuple) -> bool:
    """Whether ``view(new)`` of a tensor of these sizes and strides works (ATen's computeStride)."""
    numel = 1
    for s in sizes:
        numel *= s
    if numel == 0:
        return True
    view_d = len(new) - 1
    chunk_base = strides[-1] if strides else 1
    tensor_numel = 1
    view_numel = 1
    for d in range(len(sizes) - 1, -1, -1):
        tensor_numel *= sizes[d]
        if d == 0 or (sizes[d - 1] != 1 and strides[d - 1] != tensor_numel * chunk_base):
            while view_d >= 0 and (view_numel < tensor_numel or new[view_d] == 1):
                view_numel *= new[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return False
            if d > 0:
                chunk_base = strides[d - 1]
                tensor_numel = 1
                view_numel = 1
    return view_d == -1


def refusal(op: str, sizes: tuple, order: tuple | None, declared: dict | None = None) -> str | None:
    """Why `op`'s kernel refuses an input of these sizes lying in memory in `order` (None: it takes it,
    or the layout or a size is not known). Symbols take the design's declared sizes; one left over is
    tried at 1, 2 and 3, and only a refusal at all three counts (an unknown never blocks)."""
    if order is None or any(s is None for s in sizes):
        return None
    if declared:
        sizes = tuple(D.substitute(s, declared) for s in sizes)
    if all(D.is_const(s) for s in sizes):
        return _refusal(op, sizes, order)
    whys = set()
    for v in (1, 2, 3):
        at = tuple(s if D.is_const(s) else D.substitute(s, {x: v for x in D.symbols_of(s)}) for s in sizes)
        if not all(D.is_const(s) for s in at):
            return None
        whys.add(_refusal(op, at, order))
    return whys.pop() if len(whys) == 1 else None


def _refusal(op: str, sizes: tuple, order: tuple) -> str | None:
    strides = strides_of(sizes, order)
    r = len(sizes)
    if op == "LocalResponseNorm" and r >= 5:
        rest = 1
        for s in sizes[3:]:
            rest *= s
        if not viewable(sizes, strides, (sizes[0], 1, sizes[1], sizes[2], rest)):
            return "merges its dims after the third with view, which this permuted layout does not allow"
    if op == "MaxPool3d" and r == 4 and suggested_format(sizes, strides) == "channels_last":
        return "takes the memory format of an unbatched 4-D input from its strides, and refuses channels-last"
    if op in ("PixelShuffle", "PixelUnshuffle") and r == 5 and suggested_format(sizes, strides) == "channels_last_3d":
        return "refuses a 5-D input laid out channels-last-3d"
    return None


LAYOUT_READERS = frozenset({"LocalResponseNorm", "MaxPool3d", "PixelShuffle", "PixelUnshuffle"})
# `inplace: true` that writes nothing in place, measured: alpha dropout computes a new tensor (so a
# Parameter or an expanded tensor passes it); Threshold's kernel takes an expanded tensor (not a leaf)
NO_WRITE_INPLACE = frozenset({"AlphaDropout", "FeatureAlphaDropout"})
OVERLAP_TOLERANT_INPLACE = frozenset({"Threshold"})
# dropout in eval mode returns its input untouched: nothing is written
EVAL_NO_WRITE = frozenset({"Dropout", "Dropout1d", "Dropout2d", "Dropout3d"})
# views that keep every element of their input where it was: an expanded tensor stays one
VIEWS_KEEP_OVERLAP = frozenset({"Permute", "Transpose", "Unsqueeze", "Identity", "Rearrange", "Repeat", "Reduce"})


def expands_onto_itself(in_shape: tuple, target: list, declared: dict | None) -> bool:
    """Whether an Expand of `in_shape` to `target` makes several elements share one memory location (a
    size-1 or new dim stretched past 1), at the design's declared sizes; an undeclared symbol may be 1,
    so it does not count."""
    lead = len(target) - len(in_shape)
    if lead < 0:
        return False
    for i, t in enumerate(target):
        if t == -1:
            continue
        size = D.substitute(t, declared) if declared and isinstance(t, str) else t
        if not D.is_const(size) or size <= 1:
            continue
        if i < lead or in_shape[i - lead] == 1:
            return True
    return False


def writes_in_place(op: str, args: dict, mode: str) -> bool:
    """Whether a node writes into its input's memory."""
    return args.get("inplace") is True and op not in NO_WRITE_INPLACE and not (mode == "eval" and op in EVAL_NO_WRITE)
# views that reorder dims without copying: Permute, Transpose, and einops patterns that only reorder axes
LAYOUT_MAKERS = frozenset({"Permute", "Transpose", "Rearrange", "Repeat", "Reduce"})


def view_permutation(op: str, args: dict, rank: int) -> list | None:
    """The permutation a layout-making node applies to a tensor of `rank` dims (None: not a pure
    reorder, or arguments the shape rule will refuse)."""
    if op == "Permute":
        dims = args.get("dims")
        if not isinstance(dims, list) or len(dims) != rank or not all(type(d) is int for d in dims):
            return None
        perm = [d % rank for d in dims if -rank <= d < rank]
        return perm if len(perm) == len(dims) and sorted(perm) == list(range(rank)) else None
    if op == "Transpose":
        a, b = args.get("dim0"), args.get("dim1")
        if type(a) is not int or type(b) is not int or not (-rank <= a < rank and -rank <= b < rank):
            return None
        perm = list(range(rank))
        perm[a % rank], perm[b % rank] = perm[b % rank], perm[a % rank]
        return perm
    return einops_reorder(args.get("pattern"), rank)

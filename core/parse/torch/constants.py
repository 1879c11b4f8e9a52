"""Constant tensors (zeros, arange, tensor literals) with their dtypes, shapes and small values."""

from __future__ import annotations

import math

from ..values import (
    Sym,
    TensorVal,
    TooCostly,
    is_int,
    prod,
)


def _size_list(args):
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        args = list(args[0])
    out = []
    for a in args:
        if is_int(a) or isinstance(a, Sym):
            out.append(a)
        elif isinstance(a, TensorVal) and a.values is not None and len(a.values) == 1:
            out.append(int(a.values[0]))
        else:
            out.append(None)
    return out


# Past this many values a constant built in __init__ (a buffer, a mask) is no longer a detail of the
# graph: torch allocates it when the model is built (16 GiB even as int8), which fails on most machines.
HUGE_VALUES = 1 << 34


def const_tensor(it, shape, dtype="float32", fill=None):
    vals = None
    n = prod(shape) if shape is not None and None not in shape else None
    if is_int(n) and n >= HUGE_VALUES:
        it.warn(f"a constant tensor of {n:,} values is allocated when the model is built (at least "
                f"{n / 2**30:,.0f} GiB): torch fails there on a machine without that memory")
    if fill is not None and is_int(n) and n <= MAX_VALUES and isinstance(fill, (int, float)):
        v = _f32(float(fill)) if dtype == "float32" else fill
        vals = [v] * n
    t = TensorVal(None, shape, dtype, values=vals)
    t.origin = it.loc
    return t


def _nested_shape(data):
    if isinstance(data, (list, tuple)):
        if not data:
            return [0], []
        subs = [_nested_shape(x) for x in data]
        if any(s is None for s in subs):
            return None
        sh = subs[0][0]
        if any(s[0] != sh for s in subs):
            return None
        return [len(data)] + sh, [v for s in subs for v in s[1]]
    if isinstance(data, (int, float, bool)):
        return [], [data]
    if isinstance(data, TensorVal) and data.values is not None and data.shape == []:
        return [], list(data.values)
    return None


def make_tensor(it, data, dtype=None):
    if isinstance(data, TensorVal):
        return data
    if isinstance(data, (list, tuple)):
        from ..interp import _small
        if not _small(data, MAX_VALUES * 4):
            raise TooCostly("a tensor literal too large to follow")
    r = _nested_shape(data)
    if r is None:
        return TensorVal(None, None, dtype or "float32")
    shape, vals = r
    if dtype is None:
        if any(isinstance(v, float) for v in vals):
            dtype = "float32"
        elif all(isinstance(v, bool) for v in vals) and vals:
            dtype = "bool"
        else:
            dtype = "int64"
    if dtype == "float32":
        vals = [_f32(float(v)) for v in vals]
    return TensorVal(None, shape, dtype, values=vals if len(vals) <= MAX_VALUES else None)


def _dtype_kw(kwargs, default="float32"):
    d = kwargs.get("dtype")
    if isinstance(d, str) and d.startswith("dtype:"):
        return d[6:]
    return default


def _arange(it, args, kwargs):
    a = list(args)
    if not a and "end" in kwargs:
        a = [kwargs.get("start", 0), kwargs["end"]]
    if "step" in kwargs:
        a = a + [kwargs["step"]] if len(a) >= 2 else a
    if len(a) == 1:
        start, end, step = 0, a[0], 1
    elif len(a) == 2:
        start, end, step = a[0], a[1], 1
    else:
        start, end, step = a[0], a[1], a[2]
    if all(is_int(v) for v in (start, end, step)):
        vals = list(range(start, end, step))
        dt = _dtype_kw(kwargs, "int64")
        if dt.startswith("float"):
            vals = [_f32(float(v)) for v in vals]
        return TensorVal(None, [len(vals)], dt, values=vals if len(vals) <= MAX_VALUES else None)
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (start, end, step)):
        n = max(0, math.ceil((end - start) / step))
        vals = [_f32(start + i * step) for i in range(n)] if n <= MAX_VALUES else None
        return TensorVal(None, [n], _dtype_kw(kwargs, "float32"), values=vals)
    if is_int(start) and start == 0 and isinstance(end, Sym) and step == 1:
        return TensorVal(None, [end], _dtype_kw(kwargs, "int64"))
    return TensorVal(None, [None], _dtype_kw(kwargs, "int64"))


def _linspace(start, end, steps):
    if steps == 1:
        return [float(start)]
    step = (end - start) / (steps - 1)
    return [start + i * step for i in range(steps)]


# siblings, imported last: the modules of this model call one another
from .names import MAX_VALUES, _f32  # noqa: E402

"""Graph references: learned and constant tensors as nodes, constructor arguments as JSON."""

from __future__ import annotations

import math

from ...ops import ops_with
from ..values import (
    InstanceVal,
    Sym,
    TooCostly,
    is_int,
)
from . import optable

TARGET_SHAPES = ops_with("takes-target-shape")


def ref_of(it, t):
    if t.ref is not None:
        return t.ref
    g = it.graph
    if t.transposed_weight is not None:  # a weight read transposed, now used
        r = g.param_refs.get(id(t))
        if r:
            return r[1]
        w = ref_of(it, t.transposed_weight)
        nid = g.fresh("Transpose")
        g.add(nid, "Transpose", {"dim0": 0, "dim1": 1}, [w])
        g.set_param_ref(id(t), (t, nid))  # journaled: a dry run's rollback forgets it
        return nid
    if t.param is not None:
        key = id(t.param)
        r = g.param_refs.get(key)
        if r:
            return r[1]
        qn = t.param.qname
        if qn is None:
            it.warn("a learned tensor that is not registered on a module is used")
            nid = g.fresh("Parameter")
        else:
            nid = g.claim(qn)
        if t.param.leaf:
            it.warn(f"weight {qn} of a torch.nn module is used directly; it is counted as its own Parameter")
        g.add(nid, "Parameter", {"shape": shape_arg(it, t.shape, "Parameter")}, [])
        g.set_param_ref(key, (t.param, nid))  # the object is kept alive so that its id stays unique
        owner = t.param.owner
        if owner is not None:
            g.mark_called(("param", id(t.param)))
        return nid
    key = id(t)
    r = g.param_refs.get(key)
    if r:
        return r[1]
    if t.values is not None and len(t.values) > 1 and t.shape is not None and len(t.shape) == 1 and \
            t.values == list(range(len(t.values))):
        nid = g.fresh("Arange")
        g.add(nid, "Arange", {"end": len(t.values)}, [])
    else:
        val = None
        if t.values is not None and t.values and all(v == t.values[0] for v in t.values):
            val = t.values[0]
        elif t.shape == [] and t.values:
            val = t.values[0]
        elif t.origin != "onehot":
            it.warn("a constant tensor built in forward enters the graph; its values are not recorded")
        if t.shape is None:
            it.warn("a constant tensor whose rank is not known enters the graph as a scalar")
        nid = g.fresh("Constant")
        cargs = {"shape": shape_arg(it, t.shape or [], "Constant")}
        if val is not None:
            cargs["value"] = val
        if t.dtype != "float32" and not (t.dtype == "int64" and is_int(val)):
            cargs["dtype"] = t.dtype  # index tables stay integers (an Embedding looks them up)
        g.add(nid, "Constant", cargs, [])
    g.set_param_ref(key, (t, nid))
    return nid


def jval(it, v, what):
    """A constructor argument as JSON."""
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, float):
        if math.isfinite(v):
            return v
        return str(v)
    if isinstance(v, (list, tuple)):
        return [jval(it, x, what) for x in v]
    if isinstance(v, Sym):
        if it.symbolic:
            s = v.single_symbol()
            if s is not None:
                return s
        else:
            r = v.substitute(it.batch_env)
            if r is not None:
                return r
        it.warn(f"{what} depends on an input size; left unknown (null)")
        return None
    if isinstance(v, InstanceVal) and v.kind == "module" and v.op:
        return v.op.lower()
    if isinstance(v, dict):
        return {str(k): jval(it, x, what) for k, x in v.items()}
    it.warn(f"{what} is not known when reading the source; left unknown (null)")
    return None


def jargs(it, op, given):
    from ..interp import MAX_WALK, _small
    d = optable.defaults(op)
    out = {}
    for k, v in given.items():
        if isinstance(v, (list, tuple, dict)) and not _small(v, MAX_WALK):
            raise TooCostly(f"argument {k} of {op} is too large to follow")
        if k in d and _plain_eq(d[k], v):
            continue
        out[k] = jval(it, v, f"argument {k} of {op}")
    return out


def _plain_eq(a, b):
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float, str, type(None))) and isinstance(b, (int, float, str, type(None))):
        return type(a) is type(b) and a == b or (isinstance(a, (int, float)) and isinstance(b, (int, float))
                                                and not isinstance(a, bool) and a == b)
    return False


def shape_arg(it, dims, op, minus1=False, src=None):
    """Sizes for a Reshape / Expand / Parameter / Constant arg."""
    if dims is None:
        it.warn(f"shape of {op} is not known; left unknown (null)")
        return None
    out = []
    used_m1 = False
    pending = []
    for i, d in enumerate(dims):
        if is_int(d):
            out.append(d)
            continue
        if isinstance(d, Sym) and it.symbolic and d.single_symbol() is not None:
            out.append(d.single_symbol())
            continue
        pending.append(i)
        out.append(d)
    if minus1 and sum(1 for i in pending if _resolved_size(it, out[i]) is None) == 1:
        # the one size nobody can know is the one torch infers: the others are the sizes given
        pending.sort(key=lambda i: _resolved_size(it, out[i]) is not None)
    for _n, i in enumerate(pending):
        d = out[i]
        if minus1 and not used_m1:
            out[i] = -1
            used_m1 = True
            continue
        r = _resolved_size(it, d)
        if r is not None:
            out[i] = r
            continue
        out[i] = unknown_size(it, op)
    return out


def _resolved_size(it, d):
    return d.substitute(it.batch_env) if isinstance(d, Sym) and not it.symbolic else None


def unknown_size(it, op):
    """A size of a Reshape / Expand the parser cannot know: a symbol of its own (`unknown_1`), which the
    verifier holds as a size not known; a null there is an argument the op refuses, a block for a defect
    that is the parser's, not the code's.  A Constant's shape may hold null."""
    if op not in TARGET_SHAPES:
        it.warn(f"a size of {op} depends on values not known when reading the source; left unknown (null)")
        return None
    it.unknown_sizes = getattr(it, "unknown_sizes", 0) + 1
    name = f"unknown_{it.unknown_sizes}"
    it.warn(f"a size of {op} depends on values not known when reading the source; written as the symbol "
            f"{name!r}")
    return name

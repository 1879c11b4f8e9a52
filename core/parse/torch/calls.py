"""Module calls in forward: user forwards, torch.nn leaves emitted as op nodes, symbolic inputs settled."""

from __future__ import annotations

from ...ops import OP_TABLE, ops_of, ops_with
from ..values import (
    ClassVal,
    InterpError,
    Sym,
    TensorVal,
    is_int,
)
from . import optable

STACKS = ops_with("stack")
RECURRENT_ALL = ops_of("recurrent")
RNNS = ops_with("reads-width", family="recurrent")  # the layers over a sequence (not the cells)
CONVS = ops_of("conv")
# the norms of a [B, C, H, W] map: the 2-D batch and instance norms, GroupNorm
CHANNEL_NORMS_2D = frozenset(n for n in ops_with("affine") if n.endswith("2d")) | \
    (ops_with("reads-channels", family="norm") - ops_with("batchnorm"))
TRANSFORMER_LAYERS = ops_with("attention-layer", "residual")


def call_module(it, inst, args, kwargs):
    cname = inst.cls.name
    if isinstance(inst.cls, ClassVal) and cname in IDENTITY_CLASSES:
        x = args[0] if args else kwargs.get("input", kwargs.get("x"))
        return emit_module(it, inst, [x], {}, op_override="Identity")
    f = _user_method(it, inst, "forward")
    if f is not None:
        g = it.graph
        if g is not None:
            g.scope.append(inst.qname or "")
        try:
            return it.call_func(f, [inst] + list(args), kwargs)
        finally:
            if g is not None:
                g.scope.pop()
    return builtin_forward(it, inst, args, kwargs)


def builtin_forward(it, inst, args, kwargs, tname=None):
    tb = tname or inst.torch_base
    if tb == "__einops__":
        from .. import einops_lib
        return einops_lib.call_layer(it, inst, args, kwargs)
    if inst.op and tb not in CONTAINER_KINDS:
        return emit_module(it, inst, args, kwargs)
    if tb == "Sequential":
        x = args[0] if args else kwargs.get("input")
        g = it.graph
        if g is not None:
            g.scope.append(inst.qname or "")
        try:
            for m in inst.modules.values():
                if m is not None:
                    x = it.call(m, [x], {})
        finally:
            if g is not None:
                g.scope.pop()
        return x
    if tb in STACKS:
        x = args[0] if args else kwargs.get("src", kwargs.get("tgt"))
        rest = list(args[1:2]) if tb == "TransformerDecoder" else []
        if tb == "TransformerDecoder" and not rest and "memory" in kwargs:
            rest = [kwargs["memory"]]
        for k in kwargs:
            if k.endswith("mask") and isinstance(kwargs[k], TensorVal):
                it.warn(f"{k} of nn.{tb} is not part of the design")
        for m in inst.modules["layers"].modules.values():
            x = it.call(m, [x] + rest, {})
        norm = inst.modules.get("norm")
        if norm is not None:
            x = it.call(norm, [x], {})
        return x
    if tb == "Transformer":
        src = args[0] if args else kwargs.get("src")
        tgt = args[1] if len(args) > 1 else kwargs.get("tgt")
        for k in kwargs:
            if k.endswith("mask") and isinstance(kwargs[k], TensorVal):
                it.warn(f"{k} of nn.Transformer is not part of the design")
        for a in args[2:]:
            if isinstance(a, TensorVal):
                it.warn("a mask of nn.Transformer is not part of the design")
        memory = it.call(inst.modules["encoder"], [src], {})
        return it.call(inst.modules["decoder"], [tgt, memory], {})
    if tb in ("ModuleList", "ModuleDict"):
        raise InterpError(f"nn.{tb} is not callable")
    raise InterpError(f"{inst.cls.name} has no forward")


def _tensor_inputs(it, inst, op, args, kwargs):
    """(inputs, extra) for a leaf module call."""
    if op == "MultiheadAttention":
        q = args[0] if len(args) > 0 else kwargs.get("query")
        k = args[1] if len(args) > 1 else kwargs.get("key")
        v = args[2] if len(args) > 2 else kwargs.get("value")
        for name in ("key_padding_mask", "attn_mask"):
            if isinstance(kwargs.get(name), TensorVal):
                it.warn(f"{name} of nn.MultiheadAttention is not part of the design")
        nw = kwargs.get("need_weights", args[4] if len(args) > 4 else True)
        return [q, k, v], {"need_weights": nw}
    if op in RECURRENT_ALL:
        x = args[0] if args else kwargs.get("input")
        hx = args[1] if len(args) > 1 else kwargs.get("hx")
        ins = [x]
        states = [hx] if isinstance(hx, TensorVal) else [h for h in hx if isinstance(h, TensorVal)] \
            if isinstance(hx, (tuple, list)) else []
        most = OP_TABLE[op].arity[1]
        if states and (most is None or most > 1):
            ins += states
        elif states:
            # the op table takes no initial state: it changes values, never shapes or parameters
            it.warn(f"initial state of nn.{op} is not part of the design")
        return ins, {}
    if op in OP_TABLE and OP_TABLE[op].family == "attention" and OP_TABLE[op].arity[0] == 2:
        return [a for a in args[:2]], {}  # a decoder layer, a Transformer: target and memory
    least = OP_TABLE[op].arity[0] if op in OP_TABLE else 1
    if least > 1:  # Bilinear, CosineSimilarity, PairwiseDistance, MaxUnpool (x, indices): by position or name
        named = [v for v in kwargs.values() if isinstance(v, TensorVal)]
        return (list(args) + named)[:least], {}
    x = args[0] if args else (kwargs.get("input", kwargs.get("x", kwargs.get("src"))))
    for a in list(args[1:]) + list(kwargs.values()):
        if isinstance(a, TensorVal):
            it.warn(f"extra tensor argument of nn.{op} is not part of the design")
    return [x], {}


def emit_module(it, inst, args, kwargs, op_override=None):
    op = op_override or inst.op
    ins, extra = _tensor_inputs(it, inst, op, args, kwargs)
    for t in ins:
        if not isinstance(t, TensorVal):
            raise InterpError(f"nn.{op} called on {it.describe(t)}")
    if not in_op_table(op):
        return not_in_op_table(it, op, ins[0] if ins else None, optable.param_count(op, inst.args or {}))
    if "__lazy__" in inst.attrs and ins and not op_override:
        read_lazy_size(inst, ins[0])
    if WEIGHTS_DTYPE in inst.attrs:
        weights_dtype_meets(it, inst, op, ins)
    g = it.graph
    cache = inst.cache
    if cache is None or cache[0] != op:
        margs = {} if op_override else dict(inst.args or {})
        cache = inst.cache = (op, margs, optable.full_args(op, margs), None)
    _, margs, full, jd = cache
    for t in ins:
        if t.pending:
            settle_pending(it, t, op, full)
    shapes = optable.infer(op, full, [t.shape for t in ins])
    if g is None:
        return _const_results(op, shapes, extra, full)
    refs = [ref_of(it, t) for t in ins]
    key = id(inst)
    first = g.calls.get(key)
    shares = None
    if inst.qname is None:
        if not inst.unregistered:
            inst.unregistered = True
            it.warn(f"nn.{op} built at {it.display(inst.file.path) if inst.file else '?'}:{inst.line} is not a "
                    f"registered submodule (torch would not count its parameters)")
        nid = g.fresh(op)
        if first is not None:
            shares = first
    elif first is None:
        nid = g.claim(inst.qname or _snake(op))
    else:
        nid = g.claim(inst.qname)
        shares = first
    g.keep.append(inst)
    tie = inst.attrs.get("__tie__")
    if tie is not None and shares is None:
        if id(tie) in g.calls:
            shares = g.calls[id(tie)]
        elif ("tie", id(tie)) in g.calls:
            # another layer tied to the same weight came first (BART's encoder and decoder token
            # embeddings both tied to `shared`): one tensor, as torch counts it
            shares = g.calls[("tie", id(tie))]
        else:
            # the module that owns the tied weight comes later: it will share this node's
            g.set_call(("tie", id(tie)), nid)
            g.keep.append(tie)
        if set(p for p, v in tie.params.items() if v is not None) <= {"weight"}:
            g.mark_called(id(tie))  # its only learned tensor is in the design, through this node
    if shares is None and first is None and ("tie", key) in g.calls:
        shares = g.calls[("tie", key)]
    if first is None:
        g.set_call(key, nid)
    g.mark_called(key)
    if jd is None:
        jd = jargs(it, op, margs)
        inst.cache = (op, margs, full, jd)
    g.add(nid, op, dict(jd), refs, shares, warn=it.warn)
    return _results(op, nid, shapes, extra, ins, full)


def _snake(op):
    from ..graph import snake
    return snake(op)


def _results(op, nid, shapes, extra, ins, full):
    dt = ins[0].dtype if ins else "float32"
    if full.get("return_indices"):  # a max pool's values and their int64 positions
        shapes = shapes or [None, None]
        return (TensorVal(nid, shapes[0], dt), TensorVal(nid + ":1", shapes[1], "int64"))
    if op in RNNS:
        shapes = shapes or [None, None, None]
        out = TensorVal(nid, shapes[0], dt)
        h = TensorVal(nid + ":1", shapes[1], dt)
        if op == "LSTM":
            return (out, (h, TensorVal(nid + ":2", shapes[2], dt)))
        return (out, h)
    if op == "MultiheadAttention":
        shapes = shapes or [None, None]
        w = TensorVal(nid + ":1", shapes[1], dt) if extra.get("need_weights", True) is not False else None
        return (TensorVal(nid, shapes[0], dt), w)
    if op == "LSTMCell":
        shapes = shapes or [None, None]
        return (TensorVal(nid, shapes[0], dt), TensorVal(nid + ":1", shapes[1], dt))
    if op == "Embedding" or op == "EmbeddingBag":
        dt = "float32"
    return TensorVal(nid, shapes, dt)


def _const_results(op, shapes, extra, full):
    if full.get("return_indices"):
        shapes = shapes or [None, None]
        return (TensorVal(None, shapes[0]), TensorVal(None, shapes[1], "int64"))
    if op in RNNS:
        shapes = shapes or [None, None, None]
        if op == "LSTM":
            return (TensorVal(None, shapes[0]), (TensorVal(None, shapes[1]), TensorVal(None, shapes[2])))
        return (TensorVal(None, shapes[0]), TensorVal(None, shapes[1]))
    if op == "MultiheadAttention":
        shapes = shapes or [None, None]
        return (TensorVal(None, shapes[0]), TensorVal(None, shapes[1]))
    if op == "LSTMCell":
        shapes = shapes or [None, None]
        return (TensorVal(None, shapes[0]), TensorVal(None, shapes[1]))
    return TensorVal(None, shapes)


def settle_pending(it, t, op, a):
    """Give a symbolic input the shape its first consumer expects."""
    t.pending = False
    B = Sym.named("B")
    shape = None
    if op in CONVS:
        n = optable.spatial_dims(op)
        sp = {1: ["L"], 2: ["H", "W"], 3: ["D", "H", "W"]}[n]
        shape = [B, a.get("in_channels")] + [Sym.named(s) for s in sp]
    elif op in CHANNEL_NORMS_2D:
        c = a.get("num_features", a.get("num_channels"))
        shape = [B, c, Sym.named("H"), Sym.named("W")]
    elif op in ("BatchNorm1d",):
        shape = [B, a.get("num_features")]
    elif op in ("Linear",):
        shape = [B, a.get("in_features")]
    elif op in ("Embedding",):
        shape = [B, Sym.named("T")]
        t.dtype = "int64"
    elif op in RNNS:
        T = Sym.named("T")
        shape = [B, T, a.get("input_size")] if a.get("batch_first") else [T, B, a.get("input_size")]
    elif op in ("MultiheadAttention",):
        T = Sym.named("T")
        e = a.get("embed_dim")
        shape = [B, T, e] if a.get("batch_first") else [T, B, e]
    elif op in TRANSFORMER_LAYERS:
        T = Sym.named("T")
        e = a.get("d_model")
        shape = [B, T, e] if a.get("batch_first") else [T, B, e]
    elif op == "LayerNorm":
        ns = a.get("normalized_shape")
        ns = list(ns) if isinstance(ns, (list, tuple)) else [ns]
        shape = [B, Sym.named("T")] + ns
    if shape is not None and all(is_int(d) or isinstance(d, Sym) for d in shape):
        t.shape = shape
        it.settled.append(t)


# siblings, imported last: the modules of this model call one another
from .modules import WEIGHTS_DTYPE, _user_method, read_lazy_size, weights_dtype_meets  # noqa: E402
from .names import CONTAINER_KINDS, IDENTITY_CLASSES  # noqa: E402
from .refs import jargs, ref_of  # noqa: E402
from .tensors import in_op_table, not_in_op_table  # noqa: E402

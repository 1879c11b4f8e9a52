"""Recurrent layers: RNN, LSTM, GRU (results 0 output, 1 h_n, 2 c_n for LSTM; an optional initial
state as further operands: h_0, and c_0 for LSTM) and the cells RNNCell, GRUCell, LSTMCell (operands
x and optionally h, and c for LSTMCell; results h, and c for LSTMCell)."""

from __future__ import annotations

from functools import partial

from .. import dims as D
from . import torch_build as tb
from .base import BOOL, NAT, POS, UNKNOWN, Arg, Enum, Float, InferCtx, OpSpec, TensorType  # noqa: F401
from .rules import (
    CONNECTIVITY_BAD_ARG,
    DTYPE_INT_INTO_FLOAT,
    DTYPE_MIXED,
    SHAPE_RANK,
    SHAPE_RNN_INPUT_SIZE,
    SHAPE_RNN_STATE,
)

GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}
_COMMON = [Arg("input_size", kind=NAT), Arg("hidden_size", kind=POS), Arg("num_layers", 1, POS)]
_TAIL = [Arg("bias", True, BOOL), Arg("batch_first", False, BOOL), Arg("dropout", 0.0, Float(0, 1)),
         Arg("bidirectional", False, BOOL)]


def _args(op):
    if op == "RNN":
        return tuple(_COMMON + [Arg("nonlinearity", "tanh", Enum("tanh", "relu"))] + _TAIL)
    if op == "LSTM":
        return tuple(_COMMON + _TAIL + [Arg("proj_size", 0, NAT)])
    return tuple(_COMMON + _TAIL)


def _rnn_infer(ctx: InferCtx):
    x, a = ctx.x, ctx.args
    op = ctx.node.op
    ctx.require(not x.is_int, DTYPE_INT_INTO_FLOAT,
                f"{op} {ctx.node.id!r} receives integer {x.dtype} values; embed token ids first")
    dirs = 2 if a["bidirectional"] else 1
    proj = a.get("proj_size", 0) or 0
    h_out = proj or a["hidden_size"]
    if not ctx.require(proj < a["hidden_size"] or not proj, CONNECTIVITY_BAD_ARG,
                       lambda: f"{op} {ctx.node.id!r}: proj_size={proj} must be smaller than "
                               f"hidden_size={a['hidden_size']} (torch's constructor refuses it)"):
        return [UNKNOWN] * (3 if op == "LSTM" else 2)
    if x.shape is None:
        return [TensorType(None)] * (3 if op == "LSTM" else 2)
    if not ctx.need_rank(x, (2, 3)):
        return [UNKNOWN] * (3 if op == "LSTM" else 2)
    ctx.require_equal(x.shape[-1], a["input_size"], SHAPE_RNN_INPUT_SIZE,
                f"{op} {ctx.node.id!r} expects input_size={a['input_size']} but its input "
                f"{D.fmt_shape(x.shape)} ends in {x.shape[-1]}; set input_size={x.shape[-1]}")
    layers = a["num_layers"] * dirs
    n_batch = None if len(x.shape) == 2 else (x.shape[0] if a["batch_first"] else x.shape[1])
    states = ((layers, h_out), (layers, a["hidden_size"])) if len(x.shape) == 2 else \
        ((layers, n_batch, h_out), (layers, n_batch, a["hidden_size"]))
    for k, t in enumerate(ctx.inputs[1:]):
        name = ("h_0", "c_0")[k]
        ctx.require(t.dtype == x.dtype or t.shape is None and False, DTYPE_MIXED,
                    lambda t=t, name=name: f"{op} {ctx.node.id!r}: {name} is {t.dtype} but the input is {x.dtype}; "
                                           "torch needs one dtype")
        if t.shape is None:
            continue
        want = states[k]
        if len(t.shape) != len(want):
            ctx.require(False, SHAPE_RNN_STATE, lambda t=t, name=name, want=want: (
                f"{op} {ctx.node.id!r}: {name} {D.fmt_shape(t.shape)} should be {D.fmt_shape(want)}"))
            continue
        for u, v in zip(t.shape, want):
            if not ctx.require_equal(u, v, SHAPE_RNN_STATE, lambda t=t, name=name, want=want: (
                    f"{op} {ctx.node.id!r}: {name} {D.fmt_shape(t.shape)} should be {D.fmt_shape(want)}")):
                break
    if len(x.shape) == 2:
        out = TensorType((x.shape[0], dirs * h_out), x.dtype)
        h = TensorType((layers, h_out), x.dtype)
        c = TensorType((layers, a["hidden_size"]), x.dtype)
    else:
        n = x.shape[0] if a["batch_first"] else x.shape[1]
        out = TensorType(x.shape[:2] + (dirs * h_out,), x.dtype)
        h = TensorType((layers, n, h_out), x.dtype)
        c = TensorType((layers, n, a["hidden_size"]), x.dtype)
    return [out, h, c] if op == "LSTM" else [out, h]


def _per_layers(num_layers, first, rest):
    """first + (num_layers - 1) * rest: layers after the first are alike, so the count is a product,
    not a loop over num_layers (10**9 layers hung the verifier)."""
    if num_layers < 1:
        return 0
    return first + (num_layers - 1) * rest


def _rnn_params(op):
    def params(a):
        g, hs = GATES[op], a["hidden_size"]
        dirs = 2 if a["bidirectional"] else 1
        proj = a.get("proj_size", 0) or 0
        h_out = proj or hs

        def layer(inp):
            per = g * hs * inp + g * hs * h_out + (2 * g * hs if a["bias"] else 0)
            if proj:
                per += proj * hs
            return per * dirs

        return _per_layers(a["num_layers"], layer(a["input_size"]), layer(h_out * dirs))

    return params


def _rnn_shapes(op):
    def shapes(a):
        gh, hs = D.mul(GATES[op], a["hidden_size"]), a["hidden_size"]
        dirs = 2 if a["bidirectional"] else 1
        proj = a.get("proj_size", 0) or 0
        h_out = proj or hs
        out = []
        for layer in range(a["num_layers"]):
            for d in range(dirs):
                sfx = f"_l{layer}" + ("_reverse" if d else "")
                inp = a["input_size"] if layer == 0 else D.mul(h_out, dirs)
                out += [("weight_ih" + sfx, (gh, inp)), ("weight_hh" + sfx, (gh, h_out))]
                if a["bias"]:
                    out += [("bias_ih" + sfx, (gh,)), ("bias_hh" + sfx, (gh,))]
                if proj:
                    out.append(("weight_hr" + sfx, (proj, hs)))
        return out

    return shapes


def _rnn_flops(op):
    def flops(ctx, outs):
        x, a = ctx.x.shape, ctx.args
        if x is None:
            return None
        g, hs = GATES[op], a["hidden_size"]
        dirs = 2 if a["bidirectional"] else 1
        proj = a.get("proj_size", 0) or 0
        h_out = proj or hs
        if len(x) == 2:
            steps_rows = x[0]
        else:
            steps_rows = D.mul(x[0], x[1])
        def layer(inp):
            return dirs * 2 * (g * hs * inp + g * hs * h_out + (proj * hs if proj else 0))

        per_row = _per_layers(a["num_layers"], layer(a["input_size"]), layer(h_out * dirs))
        return D.mul(steps_rows, per_row)

    return flops


def _cell_args(op):
    base = [Arg("input_size", kind=NAT), Arg("hidden_size", kind=NAT), Arg("bias", True, BOOL)]
    if op == "RNNCell":
        base.append(Arg("nonlinearity", "tanh", Enum("tanh", "relu")))
    return tuple(base)


CELL_GATES = {"RNNCell": 1, "GRUCell": 3, "LSTMCell": 4}


def _cell_infer(ctx: InferCtx):
    x, a, op = ctx.x, ctx.args, ctx.node.op
    ctx.require(not x.is_int, DTYPE_INT_INTO_FLOAT,
                lambda: f"{op} {ctx.node.id!r} receives integer {x.dtype} values; embed token ids first")
    n_out = 2 if op == "LSTMCell" else 1
    if x.shape is None:
        return [TensorType(None, x.dtype)] * n_out
    if not ctx.need_rank(x, (1, 2)):
        return [UNKNOWN] * n_out
    ctx.require_equal(x.shape[-1], a["input_size"], SHAPE_RNN_INPUT_SIZE,
                      lambda: f"{op} {ctx.node.id!r} expects input_size={a['input_size']} but its input "
                              f"{D.fmt_shape(x.shape)} ends in {x.shape[-1]}")
    want = x.shape[:-1] + (a["hidden_size"],)
    h = ctx.inputs[1] if len(ctx.inputs) > 1 else None
    if op == "RNNCell" and len(x.shape) == 1 and h is not None and h.shape is not None and len(h.shape) == 2:
        # measured: an unbatched input unsqueezes h to [1, a, b]; torch checks only a against hidden_size and
        # the product h @ W_hh needs b = hidden_size, so h [H, H] runs and gives [H, H] (gen-189936)
        for u in h.shape:
            if not ctx.require_equal(u, a["hidden_size"], SHAPE_RNN_STATE,
                                     lambda: f"{op} {ctx.node.id!r}: h {D.fmt_shape(h.shape)} should be "
                                             f"{D.fmt_shape(want)}"):
                return [UNKNOWN]
        return [TensorType((h.shape[0], a["hidden_size"]), x.dtype)]
    for k, t in enumerate(ctx.inputs[1:]):
        name = ("h", "c")[k]
        ctx.require(t.dtype == x.dtype, DTYPE_MIXED,
                    lambda t=t, name=name: f"{op} {ctx.node.id!r}: {name} is {t.dtype} but the input is {x.dtype}")
        if t.shape is None:
            continue
        if len(t.shape) != len(want):
            ctx.require(False, SHAPE_RNN_STATE, lambda t=t, name=name: (
                f"{op} {ctx.node.id!r}: {name} {D.fmt_shape(t.shape)} should be {D.fmt_shape(want)}"))
            continue
        for u, v in zip(t.shape, want):
            if not ctx.require_equal(u, v, SHAPE_RNN_STATE, lambda t=t, name=name: (
                    f"{op} {ctx.node.id!r}: {name} {D.fmt_shape(t.shape)} should be {D.fmt_shape(want)}")):
                break
    return [TensorType(want, x.dtype)] * n_out


def _cell_shapes(a, op):
    gh, h = D.mul(CELL_GATES[op], a["hidden_size"]), a["hidden_size"]
    out = [("weight_ih", (gh, a["input_size"])), ("weight_hh", (gh, h))]
    return out + ([("bias_ih", (gh,)), ("bias_hh", (gh,))] if a["bias"] else [])


def _cell_flops(ctx, outs):
    x, a = ctx.x.shape, ctx.args
    if x is None:
        return None
    g, h = CELL_GATES[ctx.node.op], a["hidden_size"]
    rows = x[0] if len(x) == 2 else 1
    return D.mul(rows, 2 * g * h * (a["input_size"] + h))


_RNN_RULES = (SHAPE_RNN_INPUT_SIZE, SHAPE_RNN_STATE, SHAPE_RANK, DTYPE_INT_INTO_FLOAT, DTYPE_MIXED)
OPS = [
    OpSpec(op, "recurrent", _args(op), _rnn_infer, tb.custom(op), params=_rnn_params(op), param_shapes=_rnn_shapes(op),
           flops=_rnn_flops(op),
           arity=(1, 3 if op == "LSTM" else 2), rules=_RNN_RULES,
           traits=("factory-kwargs", "multi-result", "nonlinear", "reads-width"))
    for op in ("RNN", "LSTM", "GRU")
] + [
    OpSpec(op, "recurrent", _cell_args(op), _cell_infer, tb.custom(op),
           param_shapes=partial(_cell_shapes, op=op), flops=_cell_flops,
           arity=(1, 3 if op == "LSTMCell" else 2), rules=_RNN_RULES,
           traits=("factory-kwargs", "nonlinear") + (("multi-result",) if op == "LSTMCell" else ()))
    for op in ("RNNCell", "GRUCell", "LSTMCell")
]

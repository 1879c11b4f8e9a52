"""Recurrent layers: RNN, LSTM, GRU. Results: 0 output, 1 h_n, 2 c_n (LSTM)."""

from __future__ import annotations

from .. import dims as D
from . import torch_build as tb
from .base import BOOL, NAT, POS, UNKNOWN, Arg, Enum, Float, InferCtx, OpSpec, TensorType

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
    ctx.require(not x.is_int, "dtype.int-into-float",
                f"{op} {ctx.node.id!r} receives integer {x.dtype} values; embed token ids first")
    dirs = 2 if a["bidirectional"] else 1
    proj = a.get("proj_size", 0) or 0
    h_out = proj or a["hidden_size"]
    if x.shape is None:
        return [TensorType(None)] * (3 if op == "LSTM" else 2)
    if not ctx.need_rank(x, (2, 3)):
        return [UNKNOWN] * (3 if op == "LSTM" else 2)
    ctx.require(not D.differ(x.shape[-1], a["input_size"]), "shape.rnn-input-size",
                f"{op} {ctx.node.id!r} expects input_size={a['input_size']} but its input "
                f"{D.fmt_shape(x.shape)} ends in {x.shape[-1]}; set input_size={x.shape[-1]}")
    layers = a["num_layers"] * dirs
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


def _rnn_params(op):
    def params(a):
        g, hs = GATES[op], a["hidden_size"]
        dirs = 2 if a["bidirectional"] else 1
        proj = a.get("proj_size", 0) or 0
        h_out = proj or hs
        total = 0
        for layer in range(a["num_layers"]):
            inp = a["input_size"] if layer == 0 else h_out * dirs
            per = g * hs * inp + g * hs * h_out + (2 * g * hs if a["bias"] else 0)
            if proj:
                per += proj * hs
            total += per * dirs
        return total

    return params


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
        per_row = 0
        for layer in range(a["num_layers"]):
            inp = a["input_size"] if layer == 0 else h_out * dirs
            per_row += dirs * 2 * (g * hs * inp + g * hs * h_out + (proj * hs if proj else 0))
        return D.mul(steps_rows, per_row)

    return flops


OPS = [
    OpSpec(op, "recurrent", _args(op), _rnn_infer, tb.custom(op), params=_rnn_params(op), flops=_rnn_flops(op),
           rules=("shape.rnn-input-size", "shape.rank", "dtype.int-into-float"))
    for op in ("RNN", "LSTM", "GRU")
]

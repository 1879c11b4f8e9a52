"""Small torch modules behind the tensor operations of archgraph/1.

Imported only by build functions, so `import core.ops` never imports torch.
Every module's forward takes the node's operands in order and returns a
tensor or a flat tuple of results (`id:N`).
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn


class Function(nn.Module):
    """A tensor function as a module (torch_build.function): `torch.<name>` or `forward`, the node's args as
    keyword arguments."""

    def __init__(self, name: str, forward, args: dict):
        super().__init__()
        self.fn = forward if forward is not None else getattr(torch, name)
        self.name = name
        self.args = dict(args)

    def forward(self, *xs):
        return self.fn(*xs, **self.args)

    def extra_repr(self) -> str:
        return f"{self.name}, " + ", ".join(f"{k}={v!r}" for k, v in self.args.items())


class _Binary(nn.Module):
    fn: Callable[..., torch.Tensor] = staticmethod(torch.add)

    def forward(self, a, b):
        return self.fn(a, b)


class Add(_Binary):
    fn: Callable[..., torch.Tensor] = staticmethod(torch.add)

    def forward(self, *xs):  # n-ary, folded left to right as torch evaluates a + b + c
        out = xs[0]
        for x in xs[1:]:
            out = self.fn(out, x)
        return out


class Sub(_Binary):
    fn = staticmethod(torch.sub)


class Mul(Add):
    fn = staticmethod(torch.mul)


class Div(_Binary):
    fn = staticmethod(torch.div)


class MatMul(_Binary):
    fn = staticmethod(torch.matmul)


class Concat(nn.Module):
    def __init__(self, dim=0):
        super().__init__()
        self.dim = dim

    def forward(self, *xs):
        return torch.cat(xs, dim=self.dim)


class Stack(Concat):
    def forward(self, *xs):
        return torch.stack(xs, dim=self.dim)


class Split(nn.Module):
    def __init__(self, split_size_or_sections, dim=0):
        super().__init__()
        self.sections, self.dim = split_size_or_sections, dim

    def forward(self, x):
        return tuple(torch.split(x, self.sections, dim=self.dim))


def _resolve_shape(shape, x, sizes):
    # a symbol is the same size everywhere in the design (SPEC §1): its size in this run, bound from the
    # inputs (`sizes`, kept up to date by the graph module); a symbol no input carries stands for the
    # input's size at the same place, or -1 (torch infers it) when it is the only one
    from .. import dims as D

    out = []
    unresolved = [s for s in shape if not isinstance(s, int) and not D.is_const(D.substitute(s, sizes or {}))]
    for i, s in enumerate(shape):
        if isinstance(s, int):
            out.append(s)
            continue
        v = D.substitute(s, sizes or {}) if isinstance(s, str) else None
        if D.is_const(v):
            out.append(v)
        elif len(unresolved) == 1:
            out.append(-1)
        elif i < x.dim():
            out.append(x.shape[i])
        else:
            out.append(-1)
    return out


class Reshape(nn.Module):
    def __init__(self, shape):
        super().__init__()
        self.shape = list(shape)
        self.sizes: dict = {}  # the run's symbol sizes (set by the graph module)

    def forward(self, x):
        return x.reshape(_resolve_shape(self.shape, x, self.sizes))


class Expand(Reshape):
    def forward(self, x):
        return x.expand(_resolve_shape(self.shape, x, self.sizes))


class Permute(nn.Module):
    def __init__(self, dims):
        super().__init__()
        self.dims = list(dims)

    def forward(self, x):
        return x.permute(self.dims)


class Transpose(nn.Module):
    def __init__(self, dim0, dim1):
        super().__init__()
        self.dim0, self.dim1 = dim0, dim1

    def forward(self, x):
        return x.transpose(self.dim0, self.dim1)


class Squeeze(nn.Module):
    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return x.squeeze() if self.dim is None else x.squeeze(self.dim)


class Unsqueeze(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return x.unsqueeze(self.dim)


class Mean(nn.Module):
    def __init__(self, dim=None, keepdim=False):
        super().__init__()
        self.dim, self.keepdim = dim, keepdim

    def forward(self, x):
        if self.dim is None:
            return x.mean()
        return x.mean(dim=self.dim, keepdim=self.keepdim)


class Sum(Mean):
    def forward(self, x):
        if self.dim is None:
            return x.sum()
        return x.sum(dim=self.dim, keepdim=self.keepdim)


class Amax(Mean):
    def forward(self, x):
        if self.dim is None:
            return x.amax()
        return x.amax(dim=self.dim, keepdim=self.keepdim)


class Amin(Mean):
    def forward(self, x):
        if self.dim is None:
            return x.amin()
        return x.amin(dim=self.dim, keepdim=self.keepdim)


class Select(nn.Module):
    def __init__(self, dim, index):
        super().__init__()
        self.dim, self.index = dim, index

    def forward(self, x):
        return x.select(self.dim, self.index)


class Slice(nn.Module):
    def __init__(self, dim, start=None, end=None, step=1):
        super().__init__()
        self.dim, self.sl = dim, slice(start, end, 1 if step is None else step)
        self.sizes: dict = {}  # the run's symbol sizes (set by the graph module): a bound may be a symbol

    def forward(self, x):
        idx = [slice(None)] * x.dim()
        sl = self.sl
        if isinstance(sl.start, str) or isinstance(sl.stop, str):
            from .. import dims as D

            bounds = [D.substitute(v, self.sizes) if isinstance(v, str) else v for v in (sl.start, sl.stop)]
            for v, got in zip((sl.start, sl.stop), bounds):
                if isinstance(v, str) and got is None:
                    raise ValueError(f"Slice bound {v!r} names no size of this run")
            sl = slice(*bounds, sl.step)
        idx[self.dim] = sl
        return x[tuple(idx)]


class Scale(nn.Module):
    def __init__(self, value):
        super().__init__()
        self.value = value

    def forward(self, x):
        return x * self.value


class Constant(nn.Module):
    def __init__(self, shape, value=0.0, dtype=None):
        super().__init__()
        self.shape, self.value = [s if isinstance(s, int) else 1 for s in shape], value
        self.dtype = getattr(torch, dtype) if dtype else None
        self.register_buffer("anchor", torch.empty(0), persistent=False)

    def forward(self):
        value = 0 if self.value is None else self.value
        return torch.full(self.shape, value, dtype=self.dtype, device=self.anchor.device)


class Arange(nn.Module):
    def __init__(self, end):
        super().__init__()
        self.end = end
        self.register_buffer("anchor", torch.empty(0), persistent=False)

    def forward(self):
        return torch.arange(self.end, device=self.anchor.device)


class Parameter(nn.Module):
    def __init__(self, shape):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(*shape) * 0.02)

    def forward(self):
        return self.weight


class MultiheadAttention(nn.MultiheadAttention):
    """Operands: query, key, value, attn_mask, key_padding_mask (key and value default to the query)."""

    def __init__(self, *args, is_causal=False, need_weights=True, average_attn_weights=True, **kwargs):
        super().__init__(*args, **kwargs)
        self.is_causal, self.need_weights, self.average_attn_weights = is_causal, need_weights, average_attn_weights

    def forward(self, query, key=None, value=None, attn_mask=None, key_padding_mask=None):
        key = query if key is None else key
        value = key if value is None else value
        out = super().forward(query, key, value, key_padding_mask=key_padding_mask, attn_mask=attn_mask,
                              is_causal=self.is_causal, need_weights=self.need_weights,
                              average_attn_weights=self.average_attn_weights)
        return out if self.need_weights else out[:1]


class TransformerEncoderLayer(nn.TransformerEncoderLayer):
    """Operands: src, src_mask, src_key_padding_mask."""

    def __init__(self, *args, is_causal=False, **kwargs):
        super().__init__(*args, **kwargs)
        self.is_causal = is_causal

    def forward(self, src, src_mask=None, src_key_padding_mask=None):
        return super().forward(src, src_mask, src_key_padding_mask, is_causal=self.is_causal)


class TransformerDecoderLayer(nn.TransformerDecoderLayer):
    """Operands: tgt, memory, tgt_mask, memory_mask."""

    def __init__(self, *args, tgt_is_causal=False, **kwargs):
        super().__init__(*args, **kwargs)
        self.tgt_is_causal = tgt_is_causal

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None):
        return super().forward(tgt, memory, tgt_mask, memory_mask, tgt_is_causal=self.tgt_is_causal)


def _norm(args):
    return None if args is None else nn.LayerNorm(**args)


class TransformerEncoder(nn.TransformerEncoder):
    """`encoder_layer` is the args of a TransformerEncoderLayer, `norm` those of a LayerNorm (or null).
    Operands: src, mask, src_key_padding_mask."""

    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True, mask_check=True,
                 is_causal=False):
        super().__init__(nn.TransformerEncoderLayer(**encoder_layer), num_layers, _norm(norm),
                         enable_nested_tensor, mask_check)
        self.is_causal = is_causal

    def forward(self, src, mask=None, src_key_padding_mask=None):
        return super().forward(src, mask, src_key_padding_mask, is_causal=self.is_causal or None)


class TransformerDecoder(nn.TransformerDecoder):
    """`decoder_layer` is the args of a TransformerDecoderLayer. Operands: tgt, memory, tgt_mask, memory_mask."""

    def __init__(self, decoder_layer, num_layers, norm=None, tgt_is_causal=False):
        super().__init__(nn.TransformerDecoderLayer(**decoder_layer), num_layers, _norm(norm))
        self.tgt_is_causal = tgt_is_causal

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None):
        return super().forward(tgt, memory, tgt_mask, memory_mask, tgt_is_causal=self.tgt_is_causal or None)


class Transformer(nn.Transformer):
    """Operands: src, tgt, src_mask, tgt_mask, memory_mask."""

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None):
        return super().forward(src, tgt, src_mask, tgt_mask, memory_mask)


class LSTM(nn.LSTM):
    def forward(self, x, h0=None, c0=None):
        if h0 is not None and c0 is None:
            c0 = h0.new_zeros(h0.shape[:-1] + (self.hidden_size,))
        state = None if h0 is None else (h0, c0)
        out, (h, c) = super().forward(x, state)
        return out, h, c


class GRU(nn.GRU):
    pass


class RNN(nn.RNN):
    pass


class RNNCell(nn.RNNCell):
    pass


class GRUCell(nn.GRUCell):
    pass


class LSTMCell(nn.LSTMCell):
    def forward(self, x, h=None, c=None):
        state = None if h is None else (h, c if c is not None else torch.zeros_like(h))
        return super().forward(x, state)


class Gather(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x, index):
        return torch.gather(x, self.dim, index)


class IndexSelect(Gather):
    def forward(self, x, index):
        return torch.index_select(x, self.dim, index)


class Index(nn.Module):
    """x[..., index, ...] at `dim`: a constant index (an int or a list) or a tensor operand."""

    def __init__(self, dim=0, index=None):
        super().__init__()
        self.dim, self.index = dim, index

    def forward(self, x, index=None):
        if (self.index is None) == (index is None):
            raise ValueError("Index takes its index either as the `index` argument or as an operand, not both "
                             "or neither")
        idx = self.index if index is None else index
        r = max(x.dim(), 1)
        if not -r <= self.dim < r:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-r}, {r - 1}], got {self.dim})")
        if isinstance(idx, list):
            idx = torch.tensor(idx, dtype=torch.long, device=x.device)
        return x[(slice(None),) * (self.dim % max(x.dim(), 1)) + (idx,)]


class MaskedFill(nn.Module):
    def __init__(self, value):
        super().__init__()
        self.value = value

    def forward(self, x, mask):
        return x.masked_fill(mask, self.value)


class Where(nn.Module):
    def forward(self, condition, x, other):
        return torch.where(condition, x, other)


class Clamp(nn.Module):
    def __init__(self, min=None, max=None):  # noqa: A002 - torch's own names
        super().__init__()
        self.min, self.max = min, max

    def forward(self, x):
        return torch.clamp(x, self.min, self.max)


class Normalize(nn.Module):
    def __init__(self, p=2.0, dim=1, eps=1e-12):
        super().__init__()
        self.p, self.dim, self.eps = p, dim, eps

    def forward(self, x):
        return nn.functional.normalize(x, self.p, self.dim, self.eps)


class Roll(nn.Module):
    def __init__(self, shifts, dims=None):
        super().__init__()
        self.shifts, self.dims = shifts, dims

    def forward(self, x):
        if self.dims is None:
            return torch.roll(x, self.shifts)
        return torch.roll(x, self.shifts, self.dims)


class Cumsum(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.cumsum(x, self.dim)


class Chunk(nn.Module):
    def __init__(self, chunks, dim=0):
        super().__init__()
        self.chunks, self.dim = chunks, dim

    def forward(self, x):
        return tuple(torch.chunk(x, self.chunks, self.dim))


class Tile(nn.Module):
    def __init__(self, dims):
        super().__init__()
        self.dims = list(dims)

    def forward(self, x):
        return torch.tile(x, self.dims)


class Pad(nn.Module):
    def __init__(self, pad, mode="constant", value=None):
        super().__init__()
        self.pad, self.mode, self.value = list(pad), mode, value

    def forward(self, x):
        return nn.functional.pad(x, self.pad, self.mode, self.value)


class Interpolate(nn.Module):
    def __init__(self, size=None, scale_factor=None, mode="nearest", align_corners=None, recompute_scale_factor=None,
                 antialias=False):
        super().__init__()
        self.kw = {"size": size, "scale_factor": scale_factor, "mode": mode, "align_corners": align_corners,
                   "recompute_scale_factor": recompute_scale_factor, "antialias": antialias}

    def forward(self, x):
        return nn.functional.interpolate(x, **self.kw)


class Einsum(nn.Module):
    def __init__(self, equation):
        super().__init__()
        self.equation = equation

    def forward(self, *xs):
        return torch.einsum(self.equation, *xs)


class _Einops(nn.Module):
    """Rearrange / Reduce / Repeat in einops notation, done with reshape, permute, reductions and
    expand (core.ops.einsum plans the steps; einops itself is not needed)."""

    kind = "rearrange"

    def __init__(self, pattern, reduction=None, **axes_lengths):
        super().__init__()
        self.pattern, self.reduction, self.axes = pattern, reduction, axes_lengths
        self.sizes: dict = {}  # the run's symbol sizes (set by the graph module): an axis length may be one

    def forward(self, x):
        from .. import dims as D
        from .einsum import einops_apply

        axes = {k: D.substitute(v, self.sizes) if isinstance(v, str) else v for k, v in self.axes.items()}
        return einops_apply(self.kind, self.pattern, axes, x, self.reduction)


class Rearrange(_Einops):
    kind = "rearrange"

    def __init__(self, pattern, **axes_lengths):
        super().__init__(pattern, None, **axes_lengths)


class Reduce(_Einops):
    kind = "reduce"

    def __init__(self, pattern, reduction, **axes_lengths):
        if reduction not in ("min", "max", "sum", "mean", "prod"):
            raise ValueError(f"unknown reduction {reduction!r}")
        super().__init__(pattern, reduction, **axes_lengths)


class Repeat(_Einops):
    kind = "repeat"

    def __init__(self, pattern, **axes_lengths):
        super().__init__(pattern, None, **axes_lengths)

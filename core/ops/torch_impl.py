"""Small torch modules behind the tensor operations of archgraph/1.

Imported only by build functions, so `import core.ops` never imports torch.
Every module's forward takes the node's operands in order and returns a
tensor or a flat tuple of results (`id:N`).
"""

from __future__ import annotations

import torch
from torch import nn


class _Binary(nn.Module):
    fn = staticmethod(torch.add)

    def forward(self, a, b):
        return self.fn(a, b)


class Add(_Binary):
    fn = staticmethod(torch.add)


class Sub(_Binary):
    fn = staticmethod(torch.sub)


class Mul(_Binary):
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


def _resolve_shape(shape, x):
    # symbols in a target shape stand for the input's sizes at the same place
    # when they match an input dim, else -1 (torch infers it)
    out = []
    syms = [s for s in shape if isinstance(s, str) or s is None]
    for i, s in enumerate(shape):
        if isinstance(s, int):
            out.append(s)
        elif len(syms) == 1:
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

    def forward(self, x):
        return x.reshape(_resolve_shape(self.shape, x))


class Expand(Reshape):
    def forward(self, x):
        shape = [(-1 if not isinstance(s, int) else s) for s in self.shape]
        if any(not isinstance(s, int) for s in self.shape):
            # a symbolic size is the batch of whatever the design feeds; take it from the input when it has it
            pad = len(shape) - x.dim()
            shape = [x.shape[i - pad] if (s == -1 and i >= pad) else s for i, s in enumerate(shape)]
        return x.expand(shape)


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
        self.dim, self.sl = dim, slice(start, end, step or 1)

    def forward(self, x):
        idx = [slice(None)] * x.dim()
        idx[self.dim] = self.sl
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
    def forward(self, query, key=None, value=None):
        key = query if key is None else key
        value = key if value is None else value
        return super().forward(query, key, value)


class TransformerEncoderLayer(nn.TransformerEncoderLayer):
    def forward(self, src):
        return super().forward(src)


class TransformerDecoderLayer(nn.TransformerDecoderLayer):
    def forward(self, tgt, memory):
        return super().forward(tgt, memory)


class LSTM(nn.LSTM):
    def forward(self, x):
        out, (h, c) = super().forward(x)
        return out, h, c


class GRU(nn.GRU):
    pass


class RNN(nn.RNN):
    pass

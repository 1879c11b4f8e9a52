"""Candidates rebuilt from their spec, batched across seeds.

Every parameter is stored with a leading seed dimension ``S``: seed ``s``'s
MLP is ``W[s]``, its transformer is the ``s``-th slice of each tensor. The
optimizers ArchitectureIQ uses (SGD, Adam, AdamW, RMSprop, Adagrad) act
element by element, so one ``torch.optim`` optimizer over the stacked
tensors is exactly ten independent optimizers; the per-seed losses are summed,
so each seed's gradient is its own. Initialisation draws each seed's slice
from that seed's own generator, so a seed's run does not depend on which
other seeds share the batch.

torch is imported inside the functions (the walls keep core import-light).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from .spec import LEGACY_LEAKY_RELU_SLOPE, SpecError

if TYPE_CHECKING:
    import torch


def _uniform_(t: torch.Tensor, bound: float, g: torch.Generator) -> None:
    import torch
    t.copy_(torch.rand(t.shape, generator=g, dtype=t.dtype) * 2 * bound - bound)


class SeedBatchedModel:
    """A functional model whose parameters carry a leading seed dimension."""

    def __init__(self) -> None:
        self.params: list[torch.Tensor] = []
        self.names: list[str] = []

    def _new(self, name: str, shape: tuple[int, ...], S: int) -> torch.Tensor:
        import torch
        t = torch.zeros((S, *shape), dtype=torch.float32)
        self.params.append(t)
        self.names.append(name)
        return t

    def to(self, device: str) -> SeedBatchedModel:
        moved = [p.detach().to(device).requires_grad_(True) for p in self.params]
        self.params = moved
        self._bind()
        return self

    def _bind(self) -> None:  # pragma: no cover - overridden
        pass

    def num_params(self) -> int:
        return sum(p[0].numel() for p in self.params)

    def penalty(self, kind: str) -> torch.Tensor:
        """ArchitectureIQ's L1/L2 terms: mean over tensors of each tensor's mean, per seed."""
        import torch
        if kind == "l2":
            per = [p.pow(2).flatten(1).mean(1) for p in self.params]
        else:
            per = [p.abs().flatten(1).mean(1) for p in self.params]
        return torch.stack(per, 0).mean(0)


def _activation(name: str, x: torch.Tensor, slope: float) -> torch.Tensor:
    import torch
    import torch.nn.functional as F
    if name == "relu":
        return F.relu(x)
    if name == "leaky_relu":
        return F.leaky_relu(x, slope)
    if name == "gelu":
        return F.gelu(x)
    if name == "silu":
        return F.silu(x)
    if name == "tanh":
        return torch.tanh(x)
    raise SpecError(f"unknown activation {name!r}")


class BatchedMLP(SeedBatchedModel):
    """Linear(in, w) -> depth x [LayerNorm?] Linear(w, w) act [+ residual] -> Linear(w, out)."""

    def __init__(self, spec: dict, input_dim: int, output_dim: int, seeds: list[int]) -> None:
        import torch
        super().__init__()
        S = len(seeds)
        self.depth = int(spec["depth"])
        self.width = w = int(spec["width"])
        self.residual = bool(spec.get("residual", False))
        self.acts = list(spec["activations"])
        self.norms = [bool(v) for v in spec["layer_norm"]]
        # the study's generated model.py: the spec's slope, else its legacy 0.1
        self.slope = float(spec.get("leaky_relu_slope", LEGACY_LEAKY_RELU_SLOPE))
        if len(self.acts) != self.depth or len(self.norms) != self.depth:
            raise SpecError("MLP depth does not match activations / layer_norm")
        shapes: list[tuple[str, tuple[int, ...], str, int]] = [
            ("in.w", (input_dim, w), "u", input_dim), ("in.b", (w,), "u", input_dim)]
        for i in range(self.depth):
            if self.norms[i]:
                shapes += [(f"b{i}.ln.g", (w,), "one", 0), (f"b{i}.ln.b", (w,), "zero", 0)]
            shapes += [(f"b{i}.w", (w, w), "u", w), (f"b{i}.b", (w,), "u", w)]
        shapes += [("out.w", (w, output_dim), "u", w), ("out.b", (output_dim,), "u", w)]
        tensors = [self._new(n, s, S) for n, s, _, _ in shapes]
        with torch.no_grad():
            for si, seed in enumerate(seeds):
                g = torch.Generator().manual_seed(int(seed))
                for t, (_, _, kind, fan_in) in zip(tensors, shapes):
                    if kind == "u":
                        _uniform_(t[si], 1.0 / math.sqrt(fan_in), g)
                    elif kind == "one":
                        t[si].fill_(1.0)
        for p in self.params:
            p.requires_grad_(True)
        self._bind()

    def _bind(self) -> None:
        it = iter(self.params)
        self.in_w, self.in_b = next(it), next(it)
        self.blocks = []
        for i in range(self.depth):
            ln = (next(it), next(it)) if self.norms[i] else None
            self.blocks.append((ln, next(it), next(it)))
        self.out_w, self.out_b = next(it), next(it)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x: [S, B, in] -> [S, B, out]."""
        import torch
        import torch.nn.functional as F
        h = torch.baddbmm(self.in_b.unsqueeze(1), x, self.in_w)
        for i, (ln, w, b) in enumerate(self.blocks):
            z = h
            if ln is not None:
                z = F.layer_norm(z, (self.width,)) * ln[0].unsqueeze(1) + ln[1].unsqueeze(1)
            z = _activation(self.acts[i], torch.baddbmm(b.unsqueeze(1), z, w), self.slope)
            h = z + h if self.residual else z
        return torch.baddbmm(self.out_b.unsqueeze(1), h, self.out_w)


class BatchedTransformerLM(SeedBatchedModel):
    """Token + position embeddings, post-LN causal encoder layers (GELU FF), linear head.

    As ``nn.TransformerEncoder(layer, num_layers)`` does, every layer starts
    as a deep copy of one initialised layer: the copies are separate
    parameters that train apart, but they share their starting values.
    """

    LAYER = 12  # tensors per encoder layer

    def __init__(self, spec: dict, vocab: int, context: int, seeds: list[int]) -> None:
        import torch
        super().__init__()
        S = len(seeds)
        self.d = d = int(spec.get("d_model", spec.get("embed_dim", 0)))
        self.ff = ff = int(spec.get("d_ff", spec.get("ff_dim", 0)))
        self.h = int(spec["num_heads"])
        self.L = int(spec["num_layers"])
        self.vocab, self.context = vocab, context
        if d <= 0 or ff <= 0 or d % self.h or self.L <= 0:
            raise SpecError("transformer_lm needs d_model divisible by num_heads, d_ff > 0 and num_layers > 0")
        xav = math.sqrt(6.0 / (d + 3 * d))
        layer: list[tuple[str, tuple[int, ...], str, float]] = [
            ("qkv.w", (d, 3 * d), "u", xav), ("qkv.b", (3 * d,), "zero", 0),
            ("o.w", (d, d), "u", 1 / math.sqrt(d)), ("o.b", (d,), "zero", 0),
            ("f1.w", (d, ff), "u", 1 / math.sqrt(d)), ("f1.b", (ff,), "u", 1 / math.sqrt(d)),
            ("f2.w", (ff, d), "u", 1 / math.sqrt(ff)), ("f2.b", (d,), "u", 1 / math.sqrt(ff)),
            ("ln1.g", (d,), "one", 0), ("ln1.b", (d,), "zero", 0),
            ("ln2.g", (d,), "one", 0), ("ln2.b", (d,), "zero", 0),
        ]
        head = [("head.w", (d, vocab), "u", 1 / math.sqrt(d)), ("head.b", (vocab,), "u", 1 / math.sqrt(d))]
        emb = [("tok", (vocab, d), "n", 1.0), ("pos", (context, d), "n", 1.0)]
        tensors_emb = [self._new(n, sh, S) for n, sh, _, _ in emb]
        tensors_layers = [[self._new(f"l{i}.{n}", sh, S) for n, sh, _, _ in layer] for i in range(self.L)]
        tensors_head = [self._new(n, sh, S) for n, sh, _, _ in head]
        with torch.no_grad():
            for si, seed in enumerate(seeds):
                g = torch.Generator().manual_seed(int(seed))
                # the order torch's constructor draws in: embeddings, the one layer, the head
                for group, shapes in ((tensors_emb, emb), (tensors_layers[0], layer), (tensors_head, head)):
                    for t, (_, _, kind, bound) in zip(group, shapes):
                        if kind == "u":
                            _uniform_(t[si], bound, g)
                        elif kind == "n":
                            t[si].copy_(torch.randn(t[si].shape, generator=g))
                        elif kind == "one":
                            t[si].fill_(1.0)
            for copy in tensors_layers[1:]:
                for dst, src in zip(copy, tensors_layers[0]):
                    dst.copy_(src)
        for p in self.params:
            p.requires_grad_(True)
        self._bind()

    def _bind(self) -> None:
        it = iter(self.params)
        self.tok, self.pos = next(it), next(it)
        self.layers = [tuple(next(it) for _ in range(self.LAYER)) for _ in range(self.L)]
        self.head_w, self.head_b = next(it), next(it)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """tokens: [S, B, T] int64 -> logits [S, B, T, V]."""
        import torch
        import torch.nn.functional as F
        S, B, T = tokens.shape
        d, H = self.d, self.h
        onehot = F.one_hot(tokens, self.vocab).to(self.tok.dtype).reshape(S, B * T, self.vocab)
        x = torch.bmm(onehot, self.tok).reshape(S, B, T, d) + self.pos[:, None, :T, :]
        for (qkv_w, qkv_b, o_w, o_b, f1w, f1b, f2w, f2b, g1, b1, g2, b2) in self.layers:
            flat = x.reshape(S, B * T, d)
            qkv = torch.baddbmm(qkv_b.unsqueeze(1), flat, qkv_w).reshape(S * B, T, 3, H, d // H)
            q, k, v = (qkv[:, :, j].transpose(1, 2) for j in range(3))
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            a = a.transpose(1, 2).reshape(S, B * T, d)
            a = torch.baddbmm(o_b.unsqueeze(1), a, o_w)
            flat = F.layer_norm(flat + a, (d,)) * g1.unsqueeze(1) + b1.unsqueeze(1)
            hdn = F.gelu(torch.baddbmm(f1b.unsqueeze(1), flat, f1w))
            hdn = torch.baddbmm(f2b.unsqueeze(1), hdn, f2w)
            flat = F.layer_norm(flat + hdn, (d,)) * g2.unsqueeze(1) + b2.unsqueeze(1)
            x = flat.reshape(S, B, T, d)
        out = torch.baddbmm(self.head_b.unsqueeze(1), x.reshape(S, B * T, d), self.head_w)
        return out.reshape(S, B, T, self.vocab)


def kan_grid(grid_size: int, spline_order: int, low: float, high: float) -> torch.Tensor:
    """Uniform knots: the grid over [low, high] extended by SPLINE_ORDER steps on each side."""
    import torch
    step = (high - low) / grid_size
    core = torch.linspace(low, high, grid_size + 1)
    left = core[0] - step * torch.arange(spline_order, 0, -1, dtype=core.dtype)
    right = core[-1] + step * torch.arange(1, spline_order + 1, dtype=core.dtype)
    return torch.cat((left, core, right))


def bspline_bases(x: torch.Tensor, knots: torch.Tensor, order: int) -> torch.Tensor:
    """B-spline bases of X (any shape) on KNOTS by the Cox-de Boor recursion: [..., len(knots) - 1 - order].

    The last order-0 basis is closed on the right, so a point on the last knot
    still has a basis.
    """
    xe = x.unsqueeze(-1)
    bases = ((xe >= knots[:-1]) & (xe < knots[1:])).to(x.dtype)
    bases[..., -1] = ((x >= knots[-2]) & (x <= knots[-1])).to(x.dtype)
    for k in range(1, order + 1):
        left = (xe - knots[:-(k + 1)]) / (knots[k:-1] - knots[:-(k + 1)]) * bases[..., :-1]
        right = (knots[k + 1:] - xe) / (knots[k + 1:] - knots[1:-k]) * bases[..., 1:]
        bases = left + right
    return bases


class BatchedKAN(SeedBatchedModel):
    """The study's fixed-grid spline KAN: layers in -> width x (depth + 1) -> out, each
    ``base_weight @ act(x)`` plus a spline per input-output edge, no bias."""

    def __init__(self, spec: dict, input_dim: int, output_dim: int, seeds: list[int]) -> None:
        import torch
        super().__init__()
        S = len(seeds)
        depth, width = int(spec["depth"]), int(spec["width"])
        self.order = int(spec["spline_order"])
        self.grid_size = int(spec["grid_size"])
        lo, hi = (float(v) for v in spec.get("grid_range", [-1.0, 1.0]))
        self.act = str(spec.get("base_activation", "silu"))
        self.knots = kan_grid(self.grid_size, self.order, lo, hi)
        nb = self.grid_size + self.order
        dims = [input_dim] + [width] * (depth + 1) + [output_dim]
        self.n_layers = len(dims) - 1
        shapes = []
        for i in range(self.n_layers):
            shapes += [(f"k{i}.base", (dims[i + 1], dims[i]), "u", 1 / math.sqrt(dims[i])),
                       (f"k{i}.spline", (dims[i + 1], dims[i], nb), "n", 0.01)]
        tensors = [self._new(n, sh, S) for n, sh, _, _ in shapes]
        with torch.no_grad():
            for si, seed in enumerate(seeds):
                g = torch.Generator().manual_seed(int(seed))
                for t, (_, _, kind, scale) in zip(tensors, shapes):
                    if kind == "u":
                        _uniform_(t[si], scale, g)
                    else:
                        t[si].copy_(torch.randn(t[si].shape, generator=g) * scale)
        for p in self.params:
            p.requires_grad_(True)
        self._bind()

    def to(self, device: str) -> BatchedKAN:
        self.knots = self.knots.to(device)
        return super().to(device)  # type: ignore[return-value]

    def _bind(self) -> None:
        it = iter(self.params)
        self.layers = [(next(it), next(it)) for _ in range(self.n_layers)]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x: [S, B, in] -> [S, B, out]."""
        import torch
        for base_w, spline_w in self.layers:
            base = torch.bmm(_activation(self.act, x, 0.0), base_w.transpose(1, 2))
            bases = bspline_bases(x, self.knots, self.order)  # [S, B, in, nb]
            spline = torch.einsum("sbik,soik->sbo", bases, spline_w)
            x = base + spline
        return x


def build_batched(model_spec: dict, *, input_dim: int, output_dim: int, vocab: int, context: int,
                  seeds: list[int]) -> SeedBatchedModel:
    mt = model_spec.get("type")
    if mt == "mlp":
        return BatchedMLP(model_spec, input_dim, output_dim, seeds)
    if mt == "transformer_lm":
        return BatchedTransformerLM(model_spec, vocab, context, seeds)
    if mt == "kan":
        return BatchedKAN(model_spec, input_dim, output_dim, seeds)
    raise SpecError(f"model type {mt!r} is not supported by our executor")


#: optimizers with a fused kernel on the CPU (one pass over each tensor: several times faster
#: on two cores than the per-op update, and as deterministic)
FUSED = ("SGD", "Adam", "AdamW", "Adagrad")


def build_optimizer(spec: dict[str, Any], params: list[torch.Tensor]) -> torch.optim.Optimizer:
    import torch
    t = spec["type"]
    lr = float(spec["lr"])
    wd = float(spec.get("weight_decay", 0.0) or 0.0)
    fused = {"fused": True} if t in FUSED else {}
    if t == "SGD":
        return torch.optim.SGD(params, lr=lr, momentum=float(spec.get("momentum", 0.0) or 0.0), weight_decay=wd,
                               **fused)
    if t in ("Adam", "AdamW"):
        b = spec.get("betas", [0.9, 0.999])
        cls = torch.optim.Adam if t == "Adam" else torch.optim.AdamW
        return cls(params, lr=lr, betas=(float(b[0]), float(b[1])), weight_decay=wd, **fused)
    if t == "RMSprop":
        return torch.optim.RMSprop(params, lr=lr, weight_decay=wd)
    if t == "Adagrad":
        return torch.optim.Adagrad(params, lr=lr, weight_decay=wd, **fused)
    raise SpecError(f"unknown optimizer {t!r}")

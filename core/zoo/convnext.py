"""ConvNeXt as torchvision builds it. torchvision's LayerNorm2d (a LayerNorm
over channels of an NCHW tensor) is written out as Permute -> LayerNorm ->
Permute; the layer scale is a Parameter node of shape [C, 1, 1]."""

from __future__ import annotations

from .builder import GraphBuilder, conv, layer_norm, linear
from .common import IMAGENET, meta

_M = "convnext"

_CONFIGS = {  # stage dims, depths, published params, GMACs
    "convnext_tiny": ([96, 192, 384, 768], [3, 3, 9, 3], 28_589_128, 4.456),
    "convnext_small": ([96, 192, 384, 768], [3, 3, 27, 3], 50_223_688, 8.684),
}


def _ln2d(b: GraphBuilder, id: str, x: str, c: int) -> str:
    x = b.node(f"{id}.permute", "Permute", x, dims=[0, 2, 3, 1])
    x = layer_norm(b, id, x, c, eps=1e-6)
    return b.node(f"{id}.permute_1", "Permute", x, dims=[0, 3, 1, 2])


def convnext(name: str) -> dict:
    dims, depths, params, gmacs = _CONFIGS[name]
    b = GraphBuilder(name, train=IMAGENET,
                     meta=meta("convnext", f"torchvision.models.{name}", params=params,
                               gmacs=gmacs, module=_M,
                               note="StochasticDepth (torchvision.ops, identity at inference) "
                                    "is left out: not a torch.nn op"))
    x = b.input("x", ["B", 3, 224, 224])
    x = conv(b, "features.0.0", x, 3, dims[0], 4, 4, 0)
    x = _ln2d(b, "features.0.1", x, dims[0])
    fi = 1
    for si, (d, n) in enumerate(zip(dims, depths)):
        for j in range(n):
            p = f"features.{fi}.{j}"
            h = conv(b, f"{p}.block.0", x, d, d, 7, 1, 3, groups=d)
            h = b.node(f"{p}.block.1", "Permute", h, dims=[0, 2, 3, 1])
            h = layer_norm(b, f"{p}.block.2", h, d, eps=1e-6)
            h = linear(b, f"{p}.block.3", h, d, 4 * d)
            h = b.node(f"{p}.block.4", "GELU", h)
            h = linear(b, f"{p}.block.5", h, 4 * d, d)
            h = b.node(f"{p}.block.6", "Permute", h, dims=[0, 3, 1, 2])
            scale = b.param(f"{p}.layer_scale", [d, 1, 1])
            h = b.node(f"{p}.mul", "Mul", [scale, h])
            x = b.node(f"{p}.add", "Add", [h, x])
        fi += 1
        if si + 1 < len(dims):
            x = _ln2d(b, f"features.{fi}.0", x, d)
            x = conv(b, f"features.{fi}.1", x, d, dims[si + 1], 2, 2)
            fi += 1
    x = b.node("avgpool", "AdaptiveAvgPool2d", x, output_size=1)
    x = _ln2d(b, "classifier.0", x, dims[-1])
    x = b.node("classifier.1", "Flatten", x, start_dim=1)
    x = linear(b, "classifier.2", x, dims[-1], 1000)
    b.output(x)
    return b.design()


def builders() -> dict:
    return {name: (lambda n=name: convnext(n)) for name in _CONFIGS}

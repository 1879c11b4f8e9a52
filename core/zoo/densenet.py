"""DenseNets as torchvision builds them: every dense layer reads the
concatenation (Concat, dim=1) of its block's input and all earlier layers."""

from __future__ import annotations

from .builder import GraphBuilder, bn, conv, linear
from .common import IMAGENET, meta

_M = "densenet"

# name: (growth_rate, block_config, num_init_features, params, GMACs)
_CONFIGS = {
    "densenet121": (32, (6, 12, 24, 16), 64, 7_978_856, 2.834),
    "densenet161": (48, (6, 12, 36, 24), 96, 28_681_000, 7.728),
    "densenet169": (32, (6, 12, 32, 32), 64, 14_149_480, 3.36),
    "densenet201": (32, (6, 12, 48, 32), 64, 20_013_928, 4.291),
}


def densenet(name: str, bn_size: int = 4) -> dict:
    growth, blocks, init, params, gmacs = _CONFIGS[name]
    b = GraphBuilder(name, train=IMAGENET,
                     meta=meta("densenet", f"torchvision.models.{name}", params=params,
                               gmacs=gmacs, module=_M))
    x = b.input("x", ["B", 3, 224, 224])
    x = conv(b, "features.conv0", x, 3, init, 7, 2, 3, bias=False)
    x = bn(b, "features.norm0", x, init)
    x = b.node("features.relu0", "ReLU", x)
    x = b.node("features.pool0", "MaxPool2d", x, kernel_size=3, stride=2, padding=1)
    c = init
    for bi, n in enumerate(blocks, start=1):
        blk = f"features.denseblock{bi}"
        feats = [x]
        for li in range(1, n + 1):
            p = f"{blk}.denselayer{li}"
            cin = c + (li - 1) * growth
            h = feats[0] if len(feats) == 1 else b.node(f"{p}.cat", "Concat", list(feats), dim=1)
            h = bn(b, f"{p}.norm1", h, cin)
            h = b.node(f"{p}.relu1", "ReLU", h)
            h = conv(b, f"{p}.conv1", h, cin, bn_size * growth, 1, bias=False)
            h = bn(b, f"{p}.norm2", h, bn_size * growth)
            h = b.node(f"{p}.relu2", "ReLU", h)
            h = conv(b, f"{p}.conv2", h, bn_size * growth, growth, 3, 1, 1, bias=False)
            feats.append(h)
        x = b.node(f"{blk}.cat", "Concat", feats, dim=1)
        c = c + n * growth
        if bi != len(blocks):
            t = f"features.transition{bi}"
            x = bn(b, f"{t}.norm", x, c)
            x = b.node(f"{t}.relu", "ReLU", x)
            x = conv(b, f"{t}.conv", x, c, c // 2, 1, bias=False)
            x = b.node(f"{t}.pool", "AvgPool2d", x, kernel_size=2, stride=2)
            c //= 2
    x = bn(b, "features.norm5", x, c)
    x = b.node("relu", "ReLU", x)
    x = b.node("adaptive_avg_pool2d", "AdaptiveAvgPool2d", x, output_size=[1, 1])
    x = b.node("flatten", "Flatten", x, start_dim=1)
    x = linear(b, "classifier", x, c, 1000)
    b.output(x)
    return b.design()


def builders() -> dict:
    return {name: (lambda n=name: densenet(n)) for name in _CONFIGS}

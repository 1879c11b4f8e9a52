"""Residual networks, as torchvision.models.resnet builds them (ResNet v1.5:
the stride sits on the 3x3 convolution of a bottleneck)."""

from __future__ import annotations

from .builder import GraphBuilder, bn, conv, linear
from .common import CIFAR, IMAGENET, meta

_M = "resnet"

# name: (block, layers, groups, width_per_group, published params, published GMACs)
_CONFIGS = {
    "resnet18": ("basic", [2, 2, 2, 2], 1, 64, 11_689_512, 1.814),
    "resnet34": ("basic", [3, 4, 6, 3], 1, 64, 21_797_672, 3.664),
    "resnet50": ("bottleneck", [3, 4, 6, 3], 1, 64, 25_557_032, 4.089),
    "resnet101": ("bottleneck", [3, 4, 23, 3], 1, 64, 44_549_160, 7.801),
    "resnet152": ("bottleneck", [3, 8, 36, 3], 1, 64, 60_192_808, 11.514),
    "resnext50_32x4d": ("bottleneck", [3, 4, 6, 3], 32, 4, 25_028_904, 4.23),
    "resnext101_32x8d": ("bottleneck", [3, 4, 23, 3], 32, 8, 88_791_336, 16.414),
    "wide_resnet50_2": ("bottleneck", [3, 4, 6, 3], 1, 128, 68_883_240, 11.398),
    "wide_resnet101_2": ("bottleneck", [3, 4, 23, 3], 1, 128, 126_886_696, 22.753),
}


def _basic(b: GraphBuilder, p: str, x: str, inplanes: int, planes: int, stride: int) -> str:
    out = conv(b, f"{p}.conv1", x, inplanes, planes, 3, stride, 1, bias=False)
    out = bn(b, f"{p}.bn1", out, planes)
    out = b.node(f"{p}.relu", "ReLU", out)
    out = conv(b, f"{p}.conv2", out, planes, planes, 3, 1, 1, bias=False)
    out = bn(b, f"{p}.bn2", out, planes)
    identity = x
    if stride != 1 or inplanes != planes:
        identity = conv(b, f"{p}.downsample.0", x, inplanes, planes, 1, stride, bias=False)
        identity = bn(b, f"{p}.downsample.1", identity, planes)
    out = b.node(f"{p}.add", "Add", [out, identity])
    return b.node(f"{p}.relu_1", "ReLU", out)


def _bottleneck(b: GraphBuilder, p: str, x: str, inplanes: int, planes: int, stride: int,
                groups: int, base_width: int) -> str:
    width = int(planes * (base_width / 64.0)) * groups
    outc = planes * 4
    out = conv(b, f"{p}.conv1", x, inplanes, width, 1, bias=False)
    out = bn(b, f"{p}.bn1", out, width)
    out = b.node(f"{p}.relu", "ReLU", out)
    out = conv(b, f"{p}.conv2", out, width, width, 3, stride, 1, groups=groups, bias=False)
    out = bn(b, f"{p}.bn2", out, width)
    out = b.node(f"{p}.relu_1", "ReLU", out)
    out = conv(b, f"{p}.conv3", out, width, outc, 1, bias=False)
    out = bn(b, f"{p}.bn3", out, outc)
    identity = x
    if stride != 1 or inplanes != outc:
        identity = conv(b, f"{p}.downsample.0", x, inplanes, outc, 1, stride, bias=False)
        identity = bn(b, f"{p}.downsample.1", identity, outc)
    out = b.node(f"{p}.add", "Add", [out, identity])
    return b.node(f"{p}.relu_2", "ReLU", out)


def resnet(name: str) -> dict:
    block, layers, groups, width, params, gmacs = _CONFIGS[name]
    b = GraphBuilder(name, train=IMAGENET,
                     meta=meta("resnet", f"torchvision.models.{name}", params=params,
                               gmacs=gmacs, module=_M))
    x = b.input("x", ["B", 3, 224, 224])
    x = conv(b, "conv1", x, 3, 64, 7, 2, 3, bias=False)
    x = bn(b, "bn1", x, 64)
    x = b.node("relu", "ReLU", x)
    x = b.node("maxpool", "MaxPool2d", x, kernel_size=3, stride=2, padding=1)
    inplanes = 64
    expansion = 1 if block == "basic" else 4
    for li, (planes, n) in enumerate(zip((64, 128, 256, 512), layers), start=1):
        for bi in range(n):
            stride = 2 if (bi == 0 and li > 1) else 1
            p = f"layer{li}.{bi}"
            if block == "basic":
                x = _basic(b, p, x, inplanes, planes, stride)
            else:
                x = _bottleneck(b, p, x, inplanes, planes, stride, groups, width)
            inplanes = planes * expansion
    x = b.node("avgpool", "AdaptiveAvgPool2d", x, output_size=[1, 1])
    x = b.node("flatten", "Flatten", x, start_dim=1)
    x = linear(b, "fc", x, 512 * expansion, 1000)
    b.output(x)
    return b.design()


def resnet20_cifar() -> dict:
    """He et al. 2016's CIFAR ResNet-20 (3 stages of 3 basic blocks, 16/32/64
    channels), with 1x1-convolution projection shortcuts (option B)."""
    b = GraphBuilder("resnet20_cifar", train=CIFAR,
                     meta=meta("resnet", "He et al. 2016 CIFAR ResNet-20, option-B shortcuts",
                               module=_M))
    x = b.input("x", ["B", 3, 32, 32])
    x = conv(b, "conv1", x, 3, 16, 3, 1, 1, bias=False)
    x = bn(b, "bn1", x, 16)
    x = b.node("relu", "ReLU", x)
    inplanes = 16
    for li, planes in enumerate((16, 32, 64), start=1):
        for bi in range(3):
            stride = 2 if (bi == 0 and li > 1) else 1
            x = _basic(b, f"layer{li}.{bi}", x, inplanes, planes, stride)
            inplanes = planes
    x = b.node("avgpool", "AdaptiveAvgPool2d", x, output_size=[1, 1])
    x = b.node("flatten", "Flatten", x, start_dim=1)
    x = linear(b, "fc", x, 64, 10)
    b.output(x)
    return b.design()


def builders() -> dict:
    out = {name: (lambda n=name: resnet(n)) for name in _CONFIGS}
    out["resnet20_cifar"] = resnet20_cifar
    return out

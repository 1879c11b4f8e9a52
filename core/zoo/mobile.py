"""Mobile networks as torchvision builds them: MobileNetV2/V3, EfficientNet,
ShuffleNetV2 and MNASNet (depthwise convolutions, squeeze-excitation)."""

from __future__ import annotations

import math

from .builder import GraphBuilder, bn, conv, linear, make_divisible
from .common import IMAGENET, meta

_M = "mobile"


def _cna(b: GraphBuilder, p: str, x: str, cin: int, cout: int, k: int, s: int = 1, *,
         groups: int = 1, act: str | None = "ReLU6", eps: float = 1e-5,
         momentum: float = 0.1, dilation: int = 1) -> str:
    """torchvision's Conv2dNormActivation: p.0 conv, p.1 BN, p.2 activation."""
    pad = (k - 1) // 2 * dilation
    x = conv(b, f"{p}.0", x, cin, cout, k, s, pad, groups=groups, bias=False, dilation=dilation)
    x = bn(b, f"{p}.1", x, cout, eps=eps, momentum=momentum)
    if act is not None:
        x = b.node(f"{p}.2", act, x)
    return x


def _se(b: GraphBuilder, p: str, x: str, c: int, sq: int, act: str, scale_act: str) -> str:
    """torchvision.ops.SqueezeExcitation: pool, fc1, act, fc2, scale act, multiply."""
    s = b.node(f"{p}.avgpool", "AdaptiveAvgPool2d", x, output_size=1)
    s = conv(b, f"{p}.fc1", s, c, sq, 1)
    s = b.node(f"{p}.activation", act, s)
    s = conv(b, f"{p}.fc2", s, sq, c, 1)
    s = b.node(f"{p}.scale_activation", scale_act, s)
    return b.node(f"{p}.mul", "Mul", [s, x])


# ---- MobileNetV2 ---------------------------------------------------------

def mobilenet_v2() -> dict:
    b = GraphBuilder("mobilenet_v2", train=IMAGENET,
                     meta=meta("mobilenet", "torchvision.models.mobilenet_v2",
                               params=3_504_872, gmacs=0.301, module=_M))
    x = b.input("x", ["B", 3, 224, 224])
    x = _cna(b, "features.0", x, 3, 32, 3, 2)
    cin, i = 32, 1
    for t, c, n, s in [[1, 16, 1, 1], [6, 24, 2, 2], [6, 32, 3, 2], [6, 64, 4, 2],
                       [6, 96, 3, 1], [6, 160, 3, 2], [6, 320, 1, 1]]:
        for j in range(n):
            stride = s if j == 0 else 1
            hidden = int(round(cin * t))
            p = f"features.{i}.conv"
            h, k = x, 0
            if t != 1:
                h = _cna(b, f"{p}.0", h, cin, hidden, 1)
                k = 1
            h = _cna(b, f"{p}.{k}", h, hidden, hidden, 3, stride, groups=hidden)
            h = conv(b, f"{p}.{k + 1}", h, hidden, c, 1, bias=False)
            h = bn(b, f"{p}.{k + 2}", h, c)
            if stride == 1 and cin == c:
                h = b.node(f"features.{i}.add", "Add", [x, h])
            x, cin, i = h, c, i + 1
    x = _cna(b, f"features.{i}", x, cin, 1280, 1)
    x = b.node("adaptive_avg_pool2d", "AdaptiveAvgPool2d", x, output_size=[1, 1])
    x = b.node("flatten", "Flatten", x, start_dim=1)
    x = b.node("classifier.0", "Dropout", x, p=0.2)
    x = linear(b, "classifier.1", x, 1280, 1000)
    b.output(x)
    return b.design()


# ---- MobileNetV3 ---------------------------------------------------------

_V3 = {
    "large": ([
        (16, 3, 16, 16, False, "RE", 1), (16, 3, 64, 24, False, "RE", 2),
        (24, 3, 72, 24, False, "RE", 1), (24, 5, 72, 40, True, "RE", 2),
        (40, 5, 120, 40, True, "RE", 1), (40, 5, 120, 40, True, "RE", 1),
        (40, 3, 240, 80, False, "HS", 2), (80, 3, 200, 80, False, "HS", 1),
        (80, 3, 184, 80, False, "HS", 1), (80, 3, 184, 80, False, "HS", 1),
        (80, 3, 480, 112, True, "HS", 1), (112, 3, 672, 112, True, "HS", 1),
        (112, 5, 672, 160, True, "HS", 2), (160, 5, 960, 160, True, "HS", 1),
        (160, 5, 960, 160, True, "HS", 1),
    ], 1280, 5_483_032, 0.217),
    "small": ([
        (16, 3, 16, 16, True, "RE", 2), (16, 3, 72, 24, False, "RE", 2),
        (24, 3, 88, 24, False, "RE", 1), (24, 5, 96, 40, True, "HS", 2),
        (40, 5, 240, 40, True, "HS", 1), (40, 5, 240, 40, True, "HS", 1),
        (40, 5, 120, 48, True, "HS", 1), (48, 5, 144, 48, True, "HS", 1),
        (48, 5, 288, 96, True, "HS", 2), (96, 5, 576, 96, True, "HS", 1),
        (96, 5, 576, 96, True, "HS", 1),
    ], 1024, 2_542_856, 0.057),
}


def mobilenet_v3(size: str) -> dict:
    cfg, last_channel, params, gmacs = _V3[size]
    name = f"mobilenet_v3_{size}"
    b = GraphBuilder(name, train=IMAGENET,
                     meta=meta("mobilenet", f"torchvision.models.{name}", params=params,
                               gmacs=gmacs, module=_M))
    nb = dict(eps=0.001, momentum=0.01)
    x = b.input("x", ["B", 3, 224, 224])
    x = _cna(b, "features.0", x, 3, 16, 3, 2, act="Hardswish", **nb)
    i = 1
    for cin, k, exp, cout, use_se, a, stride in cfg:
        actn = "Hardswish" if a == "HS" else "ReLU"
        p = f"features.{i}.block"
        h, j = x, 0
        if exp != cin:
            h = _cna(b, f"{p}.{j}", h, cin, exp, 1, act=actn, **nb)
            j += 1
        h = _cna(b, f"{p}.{j}", h, exp, exp, k, stride, groups=exp, act=actn, **nb)
        j += 1
        if use_se:
            h = _se(b, f"{p}.{j}", h, exp, make_divisible(exp // 4, 8), "ReLU", "Hardsigmoid")
            j += 1
        h = _cna(b, f"{p}.{j}", h, exp, cout, 1, act=None, **nb)
        if stride == 1 and cin == cout:
            h = b.node(f"features.{i}.add", "Add", [h, x])
        x, i = h, i + 1
    lastconv = 6 * cfg[-1][3]
    x = _cna(b, f"features.{i}", x, cfg[-1][3], lastconv, 1, act="Hardswish", **nb)
    x = b.node("avgpool", "AdaptiveAvgPool2d", x, output_size=1)
    x = b.node("flatten", "Flatten", x, start_dim=1)
    x = linear(b, "classifier.0", x, lastconv, last_channel)
    x = b.node("classifier.1", "Hardswish", x)
    x = b.node("classifier.2", "Dropout", x, p=0.2)
    x = linear(b, "classifier.3", x, last_channel, 1000)
    b.output(x)
    return b.design()


# ---- EfficientNet --------------------------------------------------------

_B0_STAGES = [  # expand_ratio, kernel, stride, in, out, layers
    (1, 3, 1, 32, 16, 1), (6, 3, 2, 16, 24, 2), (6, 5, 2, 24, 40, 2), (6, 3, 2, 40, 80, 3),
    (6, 5, 1, 80, 112, 3), (6, 5, 2, 112, 192, 4), (6, 3, 1, 192, 320, 1),
]

_EFF = {  # width_mult, depth_mult, dropout, published params, GMACs
    "efficientnet_b0": (1.0, 1.0, 0.2, 5_288_548, 0.386),
    "efficientnet_b1": (1.0, 1.1, 0.2, 7_794_184, 0.687),
}


def efficientnet(name: str) -> dict:
    wm, dm, dropout, params, gmacs = _EFF[name]
    resolution = {"efficientnet_b0": 224, "efficientnet_b1": 240}[name]
    b = GraphBuilder(name, train=IMAGENET,
                     meta=meta("efficientnet", f"torchvision.models.{name}", params=params,
                               gmacs=gmacs, module=_M,
                               note="StochasticDepth (torchvision.ops, identity at inference) "
                                    "is left out: not a torch.nn op"))
    nb = dict(eps=1e-3)

    def ch(c: int) -> int:
        return make_divisible(c * wm, 8)

    x = b.input("x", ["B", 3, resolution, resolution])
    first = ch(32)
    x = _cna(b, "features.0", x, 3, first, 3, 2, act="SiLU", **nb)
    for si, (e, k, s, cin0, cout0, n) in enumerate(_B0_STAGES, start=1):
        cin, cout = ch(cin0), ch(cout0)
        for j in range(int(math.ceil(n * dm))):
            stride = s if j == 0 else 1
            bin_ = cin if j == 0 else cout
            exp = make_divisible(bin_ * e, 8)
            p = f"features.{si}.{j}.block"
            h, q = x, 0
            if exp != bin_:
                h = _cna(b, f"{p}.{q}", h, bin_, exp, 1, act="SiLU", **nb)
                q += 1
            h = _cna(b, f"{p}.{q}", h, exp, exp, k, stride, groups=exp, act="SiLU", **nb)
            q += 1
            h = _se(b, f"{p}.{q}", h, exp, max(1, bin_ // 4), "SiLU", "Sigmoid")
            q += 1
            h = _cna(b, f"{p}.{q}", h, exp, cout, 1, act=None, **nb)
            if stride == 1 and bin_ == cout:
                h = b.node(f"features.{si}.{j}.add", "Add", [h, x])
            x = h
    last_in = ch(320)
    lastconv = 4 * last_in
    x = _cna(b, "features.8", x, last_in, lastconv, 1, act="SiLU", **nb)
    x = b.node("avgpool", "AdaptiveAvgPool2d", x, output_size=1)
    x = b.node("flatten", "Flatten", x, start_dim=1)
    x = b.node("classifier.0", "Dropout", x, p=dropout)
    x = linear(b, "classifier.1", x, lastconv, 1000)
    b.output(x)
    return b.design()


# ---- ShuffleNetV2 --------------------------------------------------------

_SHUFFLE = {
    "shufflenet_v2_x0_5": ([24, 48, 96, 192, 1024], 1_366_792, 0.04),
    "shufflenet_v2_x1_0": ([24, 116, 232, 464, 1024], 2_278_604, 0.14),
}


def _shuffle_unit(b: GraphBuilder, p: str, x: str, inp: int, oup: int, stride: int) -> str:
    bf = oup // 2
    if stride > 1:
        b1 = conv(b, f"{p}.branch1.0", x, inp, inp, 3, stride, 1, groups=inp, bias=False)
        b1 = bn(b, f"{p}.branch1.1", b1, inp)
        b1 = conv(b, f"{p}.branch1.2", b1, inp, bf, 1, bias=False)
        b1 = bn(b, f"{p}.branch1.3", b1, bf)
        b1 = b.node(f"{p}.branch1.4", "ReLU", b1)
        src, cin2 = x, inp
    else:
        chunks = b.node(f"{p}.chunk", "Split", x, split_size_or_sections=inp // 2, dim=1)
        b1, src, cin2 = f"{chunks}:0", f"{chunks}:1", bf
    b2 = conv(b, f"{p}.branch2.0", src, cin2, bf, 1, bias=False)
    b2 = bn(b, f"{p}.branch2.1", b2, bf)
    b2 = b.node(f"{p}.branch2.2", "ReLU", b2)
    b2 = conv(b, f"{p}.branch2.3", b2, bf, bf, 3, stride, 1, groups=bf, bias=False)
    b2 = bn(b, f"{p}.branch2.4", b2, bf)
    b2 = conv(b, f"{p}.branch2.5", b2, bf, bf, 1, bias=False)
    b2 = bn(b, f"{p}.branch2.6", b2, bf)
    b2 = b.node(f"{p}.branch2.7", "ReLU", b2)
    out = b.node(f"{p}.cat", "Concat", [b1, b2], dim=1)
    # channel_shuffle(out, 2): view(B, 2, C/2, H, W) -> transpose(1, 2) -> view(B, C, H, W)
    out = b.node(f"{p}.view", "Unflatten", out, dim=1, unflattened_size=[2, oup // 2])
    out = b.node(f"{p}.transpose", "Transpose", out, dim0=1, dim1=2)
    return b.node(f"{p}.view_1", "Flatten", out, start_dim=1, end_dim=2)


def shufflenet_v2(name: str) -> dict:
    chans, params, gmacs = _SHUFFLE[name]
    b = GraphBuilder(name, train=IMAGENET,
                     meta=meta("shufflenet", f"torchvision.models.{name}", params=params,
                               gmacs=gmacs, module=_M))
    x = b.input("x", ["B", 3, 224, 224])
    x = conv(b, "conv1.0", x, 3, chans[0], 3, 2, 1, bias=False)
    x = bn(b, "conv1.1", x, chans[0])
    x = b.node("conv1.2", "ReLU", x)
    x = b.node("maxpool", "MaxPool2d", x, kernel_size=3, stride=2, padding=1)
    cin = chans[0]
    for si, (reps, cout) in enumerate(zip([4, 8, 4], chans[1:4]), start=2):
        x = _shuffle_unit(b, f"stage{si}.0", x, cin, cout, 2)
        for j in range(1, reps):
            x = _shuffle_unit(b, f"stage{si}.{j}", x, cout, cout, 1)
        cin = cout
    x = conv(b, "conv5.0", x, cin, chans[4], 1, bias=False)
    x = bn(b, "conv5.1", x, chans[4])
    x = b.node("conv5.2", "ReLU", x)
    x = b.node("mean", "Mean", x, dim=[2, 3])
    x = linear(b, "fc", x, chans[4], 1000)
    b.output(x)
    return b.design()


# ---- MNASNet -------------------------------------------------------------

_MNAS = {"mnasnet1_0": (1.0, 4_383_312, 0.314), "mnasnet0_5": (0.5, 2_218_512, 0.104)}


def _round_to_multiple_of(val: float, divisor: int, round_up_bias: float = 0.9) -> int:
    new_val = max(divisor, int(val + divisor / 2) // divisor * divisor)
    return new_val if new_val >= round_up_bias * val else new_val + divisor


def mnasnet(name: str) -> dict:
    alpha, params, gmacs = _MNAS[name]
    mom = 1 - 0.9997
    b = GraphBuilder(name, train=IMAGENET,
                     meta=meta("mnasnet", f"torchvision.models.{name}", params=params,
                               gmacs=gmacs, module=_M))
    depths = [_round_to_multiple_of(d * alpha, 8) for d in [32, 16, 24, 40, 80, 96, 192, 320]]
    x = b.input("x", ["B", 3, 224, 224])
    x = conv(b, "layers.0", x, 3, depths[0], 3, 2, 1, bias=False)
    x = bn(b, "layers.1", x, depths[0], momentum=mom)
    x = b.node("layers.2", "ReLU", x)
    x = conv(b, "layers.3", x, depths[0], depths[0], 3, 1, 1, groups=depths[0], bias=False)
    x = bn(b, "layers.4", x, depths[0], momentum=mom)
    x = b.node("layers.5", "ReLU", x)
    x = conv(b, "layers.6", x, depths[0], depths[1], 1, bias=False)
    x = bn(b, "layers.7", x, depths[1], momentum=mom)
    stacks = [(depths[1], depths[2], 3, 2, 3, 3), (depths[2], depths[3], 5, 2, 3, 3),
              (depths[3], depths[4], 5, 2, 6, 3), (depths[4], depths[5], 3, 1, 6, 2),
              (depths[5], depths[6], 5, 2, 6, 4), (depths[6], depths[7], 3, 1, 6, 1)]
    for li, (cin, cout, k, stride, e, reps) in enumerate(stacks, start=8):
        for j in range(reps):
            i_c = cin if j == 0 else cout
            s = stride if j == 0 else 1
            mid = i_c * e
            p = f"layers.{li}.{j}.layers"
            h = conv(b, f"{p}.0", x, i_c, mid, 1, bias=False)
            h = bn(b, f"{p}.1", h, mid, momentum=mom)
            h = b.node(f"{p}.2", "ReLU", h)
            h = conv(b, f"{p}.3", h, mid, mid, k, s, k // 2, groups=mid, bias=False)
            h = bn(b, f"{p}.4", h, mid, momentum=mom)
            h = b.node(f"{p}.5", "ReLU", h)
            h = conv(b, f"{p}.6", h, mid, cout, 1, bias=False)
            h = bn(b, f"{p}.7", h, cout, momentum=mom)
            if i_c == cout and s == 1:
                h = b.node(f"layers.{li}.{j}.add", "Add", [h, x])
            x = h
    x = conv(b, "layers.14", x, depths[7], 1280, 1, bias=False)
    x = bn(b, "layers.15", x, 1280, momentum=mom)
    x = b.node("layers.16", "ReLU", x)
    x = b.node("mean", "Mean", x, dim=[2, 3])
    x = b.node("classifier.0", "Dropout", x, p=0.2)
    x = linear(b, "classifier.1", x, 1280, 1000)
    b.output(x)
    return b.design()


def builders() -> dict:
    out = {
        "mobilenet_v2": mobilenet_v2,
        "mobilenet_v3_large": lambda: mobilenet_v3("large"),
        "mobilenet_v3_small": lambda: mobilenet_v3("small"),
    }
    for name in _EFF:
        out[name] = (lambda n=name: efficientnet(n))
    for name in _SHUFFLE:
        out[name] = (lambda n=name: shufflenet_v2(n))
    for name in _MNAS:
        out[name] = (lambda n=name: mnasnet(n))
    return out

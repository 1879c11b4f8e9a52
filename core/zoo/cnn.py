"""Plain convolutional networks: LeNet, AlexNet, VGG, SqueezeNet and small CNNs."""

from __future__ import annotations

from .builder import GraphBuilder, bn, conv, linear
from .common import CIFAR, IMAGENET, MNIST, meta

_M = "cnn"


def lenet5() -> dict:
    """LeCun et al. 1998, C1-S2-C3-S4-C5-F6 on 32x32 (tanh, average pooling)."""
    b = GraphBuilder("lenet5", train=MNIST,
                     meta=meta("lenet", "LeCun et al. 1998 (tanh, average pooling)",
                               params=61_706, module=_M))
    x = b.input("x", ["B", 1, 32, 32])
    x = conv(b, "features.0", x, 1, 6, 5)
    x = b.node("features.1", "Tanh", x)
    x = b.node("features.2", "AvgPool2d", x, kernel_size=2, stride=2)
    x = conv(b, "features.3", x, 6, 16, 5)
    x = b.node("features.4", "Tanh", x)
    x = b.node("features.5", "AvgPool2d", x, kernel_size=2, stride=2)
    x = b.node("flatten", "Flatten", x, start_dim=1)
    x = linear(b, "classifier.0", x, 400, 120)
    x = b.node("classifier.1", "Tanh", x)
    x = linear(b, "classifier.2", x, 120, 84)
    x = b.node("classifier.3", "Tanh", x)
    x = linear(b, "classifier.4", x, 84, 10)
    b.output(x)
    return b.design()


def lenet5_mnist() -> dict:
    """The PyTorch-tutorial LeNet on 28x28 MNIST (padding 2, ReLU, max pooling)."""
    b = GraphBuilder("lenet5_mnist", train=MNIST,
                     meta=meta("lenet", "PyTorch tutorial LeNet, 28x28 input with padding 2",
                               params=61_706, module=_M))
    x = b.input("x", ["B", 1, 28, 28])
    x = conv(b, "conv1", x, 1, 6, 5, p=2)
    x = b.node("relu", "ReLU", x)
    x = b.node("max_pool2d", "MaxPool2d", x, kernel_size=2)
    x = conv(b, "conv2", x, 6, 16, 5)
    x = b.node("relu_1", "ReLU", x)
    x = b.node("max_pool2d_1", "MaxPool2d", x, kernel_size=2)
    x = b.node("flatten", "Flatten", x, start_dim=1)
    x = linear(b, "fc1", x, 400, 120)
    x = b.node("relu_2", "ReLU", x)
    x = linear(b, "fc2", x, 120, 84)
    x = b.node("relu_3", "ReLU", x)
    x = linear(b, "fc3", x, 84, 10)
    b.output(x)
    return b.design()


def mnist_cnn() -> dict:
    """pytorch/examples mnist `Net` (two convs, dropout, two linears, log-softmax)."""
    b = GraphBuilder("mnist_cnn", train={**MNIST, "loss": "nll"},
                     meta=meta("small-cnn", "pytorch/examples mnist/main.py Net",
                               params=1_199_882, module=_M))
    x = b.input("x", ["B", 1, 28, 28])
    x = conv(b, "conv1", x, 1, 32, 3)
    x = b.node("relu", "ReLU", x)
    x = conv(b, "conv2", x, 32, 64, 3)
    x = b.node("relu_1", "ReLU", x)
    x = b.node("max_pool2d", "MaxPool2d", x, kernel_size=2)
    x = b.node("dropout1", "Dropout", x, p=0.25)
    x = b.node("flatten", "Flatten", x, start_dim=1)
    x = linear(b, "fc1", x, 9216, 128)
    x = b.node("relu_2", "ReLU", x)
    x = b.node("dropout2", "Dropout", x, p=0.5)
    x = linear(b, "fc2", x, 128, 10)
    x = b.node("log_softmax", "LogSoftmax", x, dim=1)
    b.output(x)
    return b.design()


def tiny_cnn() -> dict:
    """The smallest useful CIFAR-10 CNN (the SPEC's example, grown to a classifier)."""
    b = GraphBuilder("tiny_cnn", train=CIFAR,
                     meta=meta("small-cnn", "SPEC example tiny-cnn", module=_M))
    x = b.input("x", ["B", 3, 32, 32])
    x = conv(b, "features.0", x, 3, 16, 3, p=1)
    x = b.node("features.1", "ReLU", x)
    x = b.node("pool", "AdaptiveAvgPool2d", x, output_size=1)
    x = b.node("flat", "Flatten", x)
    x = linear(b, "fc", x, 16, 10)
    b.output(x)
    return b.design()


def cifar_cnn() -> dict:
    """A VGG-style CIFAR-10 network: three conv-BN-ReLU pairs with pooling, then a head."""
    b = GraphBuilder("cifar_cnn", train=CIFAR,
                     meta=meta("small-cnn", "VGG-style CIFAR-10 baseline", module=_M))
    x = b.input("x", ["B", 3, 32, 32])
    cin, i = 3, 0
    for cout in (64, 128, 256):
        for _ in range(2):
            x = conv(b, f"features.{i}", x, cin, cout, 3, p=1, bias=False)
            x = bn(b, f"features.{i + 1}", x, cout)
            x = b.node(f"features.{i + 2}", "ReLU", x)
            cin, i = cout, i + 3
        x = b.node(f"features.{i}", "MaxPool2d", x, kernel_size=2, stride=2)
        i += 1
    x = b.node("avgpool", "AdaptiveAvgPool2d", x, output_size=1)
    x = b.node("flatten", "Flatten", x, start_dim=1)
    x = b.node("classifier.0", "Dropout", x, p=0.3)
    x = linear(b, "classifier.1", x, 256, 10)
    b.output(x)
    return b.design()


def alexnet() -> dict:
    b = GraphBuilder("alexnet", train=IMAGENET,
                     meta=meta("alexnet", "torchvision.models.alexnet", params=61_100_840,
                               gmacs=0.714, module=_M))
    x = b.input("x", ["B", 3, 224, 224])
    x = conv(b, "features.0", x, 3, 64, 11, 4, 2)
    x = b.node("features.1", "ReLU", x)
    x = b.node("features.2", "MaxPool2d", x, kernel_size=3, stride=2)
    x = conv(b, "features.3", x, 64, 192, 5, p=2)
    x = b.node("features.4", "ReLU", x)
    x = b.node("features.5", "MaxPool2d", x, kernel_size=3, stride=2)
    x = conv(b, "features.6", x, 192, 384, 3, p=1)
    x = b.node("features.7", "ReLU", x)
    x = conv(b, "features.8", x, 384, 256, 3, p=1)
    x = b.node("features.9", "ReLU", x)
    x = conv(b, "features.10", x, 256, 256, 3, p=1)
    x = b.node("features.11", "ReLU", x)
    x = b.node("features.12", "MaxPool2d", x, kernel_size=3, stride=2)
    x = b.node("avgpool", "AdaptiveAvgPool2d", x, output_size=[6, 6])
    x = b.node("flatten", "Flatten", x, start_dim=1)
    x = b.node("classifier.0", "Dropout", x, p=0.5)
    x = linear(b, "classifier.1", x, 256 * 6 * 6, 4096)
    x = b.node("classifier.2", "ReLU", x)
    x = b.node("classifier.3", "Dropout", x, p=0.5)
    x = linear(b, "classifier.4", x, 4096, 4096)
    x = b.node("classifier.5", "ReLU", x)
    x = linear(b, "classifier.6", x, 4096, 1000)
    b.output(x)
    return b.design()


_VGG_CFG = {
    "A": [64, "M", 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"],
    "B": [64, 64, "M", 128, 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"],
    "D": [64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M"],
    "E": [64, 64, "M", 128, 128, "M", 256, 256, 256, 256, "M", 512, 512, 512, 512, "M",
          512, 512, 512, 512, "M"],
}

_VGG_PUBLISHED = {
    "vgg11": (132_863_336, 7.609), "vgg11_bn": (132_868_840, 7.609),
    "vgg13": (133_047_848, 11.308), "vgg13_bn": (133_053_736, 11.308),
    "vgg16": (138_357_544, 15.470), "vgg16_bn": (138_365_992, 15.470),
    "vgg19": (143_667_240, 19.632), "vgg19_bn": (143_678_248, 19.632),
}


def vgg(name: str, cfg: str, batch_norm: bool) -> dict:
    params, gmacs = _VGG_PUBLISHED[name]
    b = GraphBuilder(name, train=IMAGENET,
                     meta=meta("vgg", f"torchvision.models.{name}", params=params, gmacs=gmacs,
                               module=_M))
    x = b.input("x", ["B", 3, 224, 224])
    cin, i = 3, 0
    for v in _VGG_CFG[cfg]:
        if v == "M":
            x = b.node(f"features.{i}", "MaxPool2d", x, kernel_size=2, stride=2)
            i += 1
            continue
        x = conv(b, f"features.{i}", x, cin, v, 3, p=1)
        i += 1
        if batch_norm:
            x = bn(b, f"features.{i}", x, v)
            i += 1
        x = b.node(f"features.{i}", "ReLU", x)
        i += 1
        cin = v
    x = b.node("avgpool", "AdaptiveAvgPool2d", x, output_size=[7, 7])
    x = b.node("flatten", "Flatten", x, start_dim=1)
    x = linear(b, "classifier.0", x, 512 * 7 * 7, 4096)
    x = b.node("classifier.1", "ReLU", x)
    x = b.node("classifier.2", "Dropout", x, p=0.5)
    x = linear(b, "classifier.3", x, 4096, 4096)
    x = b.node("classifier.4", "ReLU", x)
    x = b.node("classifier.5", "Dropout", x, p=0.5)
    x = linear(b, "classifier.6", x, 4096, 1000)
    b.output(x)
    return b.design()


def _fire(b: GraphBuilder, p: str, x: str, cin: int, sq: int, e1: int, e3: int) -> str:
    s = conv(b, f"{p}.squeeze", x, cin, sq, 1)
    s = b.node(f"{p}.squeeze_activation", "ReLU", s)
    a = conv(b, f"{p}.expand1x1", s, sq, e1, 1)
    a = b.node(f"{p}.expand1x1_activation", "ReLU", a)
    c = conv(b, f"{p}.expand3x3", s, sq, e3, 3, p=1)
    c = b.node(f"{p}.expand3x3_activation", "ReLU", c)
    return b.node(f"{p}.cat", "Concat", [a, c], dim=1)


def squeezenet(version: str) -> dict:
    name = f"squeezenet{version}"
    params, gmacs = {"1_0": (1_248_424, 0.819), "1_1": (1_235_496, 0.349)}[version]
    b = GraphBuilder(name, train=IMAGENET,
                     meta=meta("squeezenet", f"torchvision.models.{name}", params=params,
                               gmacs=gmacs, module=_M))
    x = b.input("x", ["B", 3, 224, 224])
    pool = dict(kernel_size=3, stride=2, ceil_mode=True)
    if version == "1_0":
        x = conv(b, "features.0", x, 3, 96, 7, 2)
        x = b.node("features.1", "ReLU", x)
        x = b.node("features.2", "MaxPool2d", x, **pool)
        plan = [(96, 16, 64, 64), (128, 16, 64, 64), (128, 32, 128, 128), "M",
                (256, 32, 128, 128), (256, 48, 192, 192), (384, 48, 192, 192),
                (384, 64, 256, 256), "M", (512, 64, 256, 256)]
    else:
        x = conv(b, "features.0", x, 3, 64, 3, 2)
        x = b.node("features.1", "ReLU", x)
        x = b.node("features.2", "MaxPool2d", x, **pool)
        plan = [(64, 16, 64, 64), (128, 16, 64, 64), "M", (128, 32, 128, 128),
                (256, 32, 128, 128), "M", (256, 48, 192, 192), (384, 48, 192, 192),
                (384, 64, 256, 256), (512, 64, 256, 256)]
    for i, item in enumerate(plan, start=3):
        if item == "M":
            x = b.node(f"features.{i}", "MaxPool2d", x, **pool)
        else:
            x = _fire(b, f"features.{i}", x, *item)
    x = b.node("classifier.0", "Dropout", x, p=0.5)
    x = conv(b, "classifier.1", x, 512, 1000, 1)
    x = b.node("classifier.2", "ReLU", x)
    x = b.node("classifier.3", "AdaptiveAvgPool2d", x, output_size=[1, 1])
    x = b.node("flatten", "Flatten", x, start_dim=1)
    b.output(x)
    return b.design()


def builders() -> dict:
    out = {
        "lenet5": lenet5,
        "lenet5_mnist": lenet5_mnist,
        "mnist_cnn": mnist_cnn,
        "tiny_cnn": tiny_cnn,
        "cifar_cnn": cifar_cnn,
        "alexnet": alexnet,
    }
    for name, cfg in (("vgg11", "A"), ("vgg13", "B"), ("vgg16", "D"), ("vgg19", "E")):
        out[name] = (lambda n=name, c=cfg: vgg(n, c, False))
    for name, cfg in (("vgg11_bn", "A"), ("vgg16_bn", "D")):
        out[name] = (lambda n=name, c=cfg: vgg(n, c, True))
    out["squeezenet1_0"] = lambda: squeezenet("1_0")
    out["squeezenet1_1"] = lambda: squeezenet("1_1")
    return out

"""VGG-style network built from a configuration table, with OrderedDict and x.flatten."""
from collections import OrderedDict

import torch
import torch.nn as nn

CFGS = {
    "A": [16, "M", 32, "M", 64, 64, "M"],
    "B": [16, 16, "M", 32, 32, "M", 64, 64, 64, "M"],
}


def make_layers(cfg, batch_norm=False, in_channels=3):
    layers = []
    for v in cfg:
        if v == "M":
            layers += [nn.MaxPool2d(kernel_size=2, stride=2)]
        else:
            conv2d = nn.Conv2d(in_channels, v, kernel_size=3, padding=1)
            if batch_norm:
                layers += [conv2d, nn.BatchNorm2d(v), nn.ReLU(inplace=True)]
            else:
                layers += [conv2d, nn.ReLU(inplace=True)]
            in_channels = v
    return nn.Sequential(*layers)


class VGG(nn.Module):
    def __init__(self, features, num_classes=10, hidden=128, dropout=0.5):
        super().__init__()
        self.features = features
        self.avgpool = nn.AdaptiveAvgPool2d((2, 2))
        self.classifier = nn.Sequential(OrderedDict([
            ("fc1", nn.Linear(64 * 2 * 2, hidden)),
            ("act", nn.ReLU(True)),
            ("drop", nn.Dropout(p=dropout)),
            ("fc2", nn.Linear(hidden, num_classes)),
        ]))

    def forward(self, x):
        x = self.features(x)
        x = self.avgpool(x)
        x = x.flatten(1)
        return self.classifier(x)


def _vgg(cfg: str, batch_norm: bool, **kwargs):
    return VGG(make_layers(CFGS[cfg], batch_norm=batch_norm), **kwargs)


def vgg_a(**kwargs):
    return _vgg("A", False, **kwargs)


def vgg_b_bn(**kwargs):
    return _vgg("B", True, **kwargs)

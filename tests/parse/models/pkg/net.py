import torch.nn as nn
import torch.nn.functional as F

from . import layers
from .blocks import Branches, Stem


class PkgNet(nn.Module):
    def __init__(self, num_classes=7):
        super().__init__()
        self.stem = Stem(3, 16)
        self.mix = Branches(16)
        self.head = layers.conv_bn(self.mix.out_channels, 32, k=1)
        self.fc = nn.Linear(32, num_classes)

    def forward(self, x):
        x = self.stem(x)
        x = F.max_pool2d(self.mix(x), 2)
        x = self.head(x)
        x = F.adaptive_avg_pool2d(x, 1).flatten(1)
        return self.fc(F.dropout(x, 0.2, self.training))

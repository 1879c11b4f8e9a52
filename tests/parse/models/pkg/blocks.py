from functools import partial

import torch
import torch.nn as nn

from .layers import conv_bn


class Branches(nn.Module):
    """Parallel branches kept in a ModuleDict and concatenated."""

    def __init__(self, cin, widths=(8, 8, 16)):
        super().__init__()
        self.branches = nn.ModuleDict({f"b{i}": conv_bn(cin, w, k=1 + 2 * i) for i, w in enumerate(widths)})
        self.out_channels = sum(widths)

    def forward(self, x):
        return torch.cat([b(x) for b in self.branches.values()], dim=1)


Stem = partial(conv_bn, k=3, stride=2)

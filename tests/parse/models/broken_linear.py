"""Broken on purpose: the classifier expects 64 features but receives 32*4*4 = 512."""
import torch
import torch.nn as nn


class BrokenNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 32, 3, padding=1)
        self.pool = nn.AdaptiveAvgPool2d(4)
        self.fc = nn.Linear(64, 10)

    def forward(self, x):
        x = torch.relu(self.conv(x))
        x = self.pool(x).flatten(1)
        return self.fc(x)


class BrokenChannels(nn.Module):
    """Second conv expects 16 channels but the first produces 8."""

    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU(), nn.Conv2d(16, 16, 3))

    def forward(self, x):
        return self.features(x)

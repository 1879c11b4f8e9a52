"""Assorted styles: dataclass configs, partial, ModuleList append/extend/index, ModuleDict,
add_module with f-strings, nn.Parameter scale, chunk, residual lambdas, unknown branches."""
from dataclasses import dataclass
from functools import partial
from typing import Sequence

import torch
import torch.nn as nn
import torch.nn.functional as F

HIDDEN = 24


@dataclass
class StageCfg:
    width: int
    depth: int
    act: str = "relu"


ACTS = {"relu": nn.ReLU, "gelu": nn.GELU, "silu": nn.SiLU}


class MLPNet(nn.Module):
    def __init__(self, in_features=20, stages: Sequence[StageCfg] = (StageCfg(32, 2), StageCfg(16, 1, "gelu")),
                 num_classes=4):
        super().__init__()
        self.layers = nn.ModuleList()
        d = in_features
        for s in stages:
            for i in range(s.depth):
                self.layers.append(nn.Linear(d, s.width))
                self.layers.extend([ACTS[s.act](), nn.LayerNorm(s.width)])
                d = s.width
        self.scale = nn.Parameter(torch.ones(d))
        self.out = nn.Linear(d, num_classes)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        x = x * self.scale
        return self.out(x)


class Gated(nn.Module):
    """GLU-style gate with chunk, sigmoid and a learned per-channel scale."""

    def __init__(self, dim=HIDDEN):
        super().__init__()
        self.proj = nn.Linear(dim, 2 * dim)
        self.gamma = nn.Parameter(1e-2 * torch.ones(dim))
        self.norm = partial(nn.LayerNorm, eps=1e-6)(dim)

    def forward(self, x):
        a, b = self.proj(self.norm(x)).chunk(2, dim=-1)
        return x + self.gamma * (a * torch.sigmoid(b))


class DictNet(nn.Module):
    def __init__(self, channels=(3, 8, 16), num_classes=6):
        super().__init__()
        self.body = nn.Sequential()
        for i, (cin, cout) in enumerate(zip(channels[:-1], channels[1:])):
            self.body.add_module(f"conv{i}", nn.Conv2d(cin, cout, 3, padding=1))
            self.body.add_module(f"act{i}", nn.ReLU())
        self.heads = nn.ModuleDict({"cls": nn.Linear(channels[-1], num_classes), "aux": nn.Linear(channels[-1], 1)})
        self.gates = nn.ModuleList([Gated(channels[-1]) for _ in range(2)])

    def forward(self, x):
        x = self.body(x)
        x = x.mean([2, 3])
        x = self.gates[0](x)
        x = self.gates[-1](x)
        return self.heads["cls"](x), self.heads["aux"](x)


class SharedBlock(nn.Module):
    """One block applied twice: the second call shares the first's weights."""

    def __init__(self, dim=16):
        super().__init__()
        self.inp = nn.Linear(8, dim)
        self.block = nn.Sequential(nn.Linear(dim, dim), nn.Tanh())
        self.out = nn.Linear(dim, 2)

    def forward(self, x):
        h = self.inp(x)
        h = self.block(h)
        h = self.block(h)
        return self.out(h)


class Branchy(nn.Module):
    """An `if` on a value only known at run time, with branches that differ."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 8)
        self.b = nn.Linear(8, 8)

    def forward(self, x):
        if x.sum() > 0:
            x = self.a(x)
        else:
            x = F.relu(self.b(x))
        return x


class SameBranches(nn.Module):
    """An `if` on self.training whose branches build the same thing: followed once, no warning."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        x = self.fc(x)
        if self.training:
            x = F.dropout(x, p=0.25, training=True)
        else:
            x = F.dropout(x, p=0.25, training=False)
        return x

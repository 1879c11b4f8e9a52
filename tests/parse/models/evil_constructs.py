"""The constructs the parser newly follows, each carrying a payload that would leave a
marker if it ever ran: an autograd.Function's forward, einops patterns and layers, locals(),
a setattr'd submodule, a module-level config global, a numpy buffer, a checkpoint wrapper."""
import os

import numpy as np
import torch
import torch.nn as nn
from einops import rearrange
from einops.layers.torch import Rearrange
from torch.utils.checkpoint import checkpoint

MARKER = os.environ.get("ARCHCURATOR_TEST_MARKER", "/tmp/archcurator-parse-marker")
TOUCHED = open(MARKER + ".global", "w")
WIDTH = 8


def _boom(tag):
    os.system("touch " + MARKER + "." + tag)
    __import__("subprocess").run(["touch", MARKER + ".sub-" + tag])
    return tag


class Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.tag = _boom("function-forward")
        ctx.save_for_backward(x)
        return x * 2

    @staticmethod
    def backward(ctx, g):
        _boom("function-backward")
        return g


class Block(nn.Module):
    def __init__(self, dim=WIDTH):
        super().__init__()
        names = locals()
        setattr(self, "proj" + str(len(names) * 0), nn.Linear(dim, dim))
        self.to_tokens = Rearrange("b (n d) -> b n d", d=dim)
        self.register_buffer("table", torch.from_numpy(np.zeros((dim,), dtype=np.float32)))
        eval("_boom('eval')")

    def forward(self, x):
        x = Scale.apply(x)
        x = checkpoint(self.proj0, x, use_reentrant=False)
        t = self.to_tokens(x)
        _boom("forward")
        return rearrange(t, "b n d -> b (n d)")

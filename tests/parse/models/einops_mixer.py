"""An MLP-mixer-like net written with einops.rearrange, a timm-style DropPath, a registered
buffer and a property (einops need not be installed: the parser only reads the source)."""
import torch
import torch.nn as nn
from einops import rearrange


class DropPath(nn.Module):
    def __init__(self, p=0.0):
        super().__init__()
        self.p = p

    def forward(self, x):
        if self.p == 0.0 or not self.training:
            return x
        keep = 1 - self.p
        mask = x.new_empty(x.shape[0], 1, 1).bernoulli_(keep)
        return x * mask / keep


class PatchMixer(nn.Module):
    def __init__(self, image=16, patch=4, dim=32, classes=5, depth=2, drop_path=0.1):
        super().__init__()
        self.patch = patch
        n = (image // patch) ** 2
        self.embed = nn.Linear(3 * patch * patch, dim)
        self.register_buffer("pos_ids", torch.arange(n))
        self.pos = nn.Embedding(n, dim)
        self.mix = nn.ModuleList([nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, dim), nn.GELU())
                                  for _ in range(depth)])
        self.drop = nn.ModuleList([DropPath(drop_path * i / max(depth - 1, 1)) for i in range(depth)])
        self.head = nn.Linear(dim, classes)

    @property
    def width(self):
        return self.embed.out_features

    def forward(self, img):
        x = rearrange(img, "b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=self.patch, p2=self.patch)
        x = self.embed(x) + self.pos(self.pos_ids)
        for mix, drop in zip(self.mix, self.drop):
            x = x + drop(mix(x))
        x = x.mean(dim=1)
        assert x.shape[-1] == self.width
        return self.head(x)

from dataclasses import dataclass
import torch.nn as nn


@dataclass
class Dims:
    n_in: int = 4
    n_out: int = 3
    hidden: int = 16


class PretrainedConfig:
    def __init__(self, **kwargs):
        for k, v in kwargs.items():
            setattr(self, k, v)


class TinyConfig(PretrainedConfig):
    def __init__(self, hidden_size=8, vocab_size=20, **kwargs):
        self.hidden_size = hidden_size
        self.vocab_size = vocab_size
        super().__init__(**kwargs)


class Net(nn.Module):
    def __init__(self, dims: Dims):
        super().__init__()
        self.fc1 = nn.Linear(dims.n_in, dims.hidden)
        self.fc2 = nn.Linear(dims.hidden, dims.n_out)

    def forward(self, x):
        return self.fc2(self.fc1(x))


class TinyModel(nn.Module):
    config_class = TinyConfig

    def __init__(self, config):
        super().__init__()
        assert isinstance(config, PretrainedConfig)
        self.emb = nn.Embedding(config.vocab_size, config.hidden_size)

    def forward(self, ids):
        return self.emb(ids)

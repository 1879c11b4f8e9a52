"""Build functions for op-table entries; torch is imported only when one runs."""

from __future__ import annotations

from collections.abc import Callable


def module(class_name: str, convert: Callable[[dict], dict] | None = None):
    """Build `torch.nn.<class_name>(**args)`."""

    def build(args: dict):
        import torch.nn as nn

        kwargs = convert(dict(args)) if convert else dict(args)
        wn = kwargs.pop("weight_norm", False)
        m = getattr(nn, class_name)(**kwargs)
        if wn:  # weight = g * v / |v|: one magnitude per slice of dim 0 of the weight
            m = nn.utils.parametrizations.weight_norm(m)
        return m

    build.__qualname__ = f"build_{class_name}"
    return build


def custom(class_name: str):
    """Build one of our own small modules for tensor operations."""

    def build(args: dict):
        from . import torch_impl

        return getattr(torch_impl, class_name)(**args)

    build.__qualname__ = f"build_{class_name}"
    return build

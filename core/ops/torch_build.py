"""Build functions for op-table entries; torch is imported only when one runs."""

from __future__ import annotations

from collections.abc import Callable


def module(class_name: str, convert: Callable[[dict], dict] | None = None):
    """Build `torch.nn.<class_name>(**args)`."""

    def build(args: dict):
        import torch.nn as nn

        kwargs = convert(dict(args)) if convert else dict(args)
        return getattr(nn, class_name)(**kwargs)

    build.__qualname__ = f"build_{class_name}"
    return build


def custom(class_name: str):
    """Build one of our own small modules for tensor operations."""

    def build(args: dict):
        from . import torch_impl

        return getattr(torch_impl, class_name)(**args)

    build.__qualname__ = f"build_{class_name}"
    return build


def function(name: str, forward: Callable | None = None):
    """Build a module that calls a tensor function: `torch.<name>(*operands, **args)`, or `forward(*operands,
    **args)` where the op is not one torch function call (`forward` imports torch itself, so the table does
    not). A new tensor op needs no class of its own in torch_impl.py."""

    def build(args: dict):
        from . import torch_impl

        return torch_impl.Function(name, forward, args)

    build.__qualname__ = f"build_{name}"
    return build

"""External names: canonical torch paths, dtypes, attributes of torch and of nn classes."""

from __future__ import annotations

import functools
import importlib.metadata
import itertools
import math
import operator
import struct

from ...ops.base import dtype_named
from ...ops.nn_classes import is_nn_class
from ..values import (
    BuiltinFn,
    ExtVal,
    TorchClass,
    Unknown,
)
from .optable import pretrained_args

MAX_VALUES = 1 << 16


CONTAINER_KINDS = ("Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict")


IDENTITY_CLASSES = {"StochasticDepth", "DropPath", "DropBlock2d", "DropBlock3d"}


def _f32(x):
    try:
        return struct.unpack("f", struct.pack("f", x))[0]
    except (OverflowError, struct.error):
        return x


_CANON_PREFIX = [
    ("torch.nn.modules.", None),
    ("torch.nn.parameter.Parameter", "torch.nn.Parameter"),
    ("torch.functional.", "torch."),
    ("torch.nn.functional.", "torch.nn.functional."),
]


def canon(path):
    if path.startswith("torch.nn.modules."):
        last = path.rsplit(".", 1)[-1]
        return "torch.nn." + last
    if path == "torch.nn.parameter.Parameter" or path == "torch.nn.parameter":
        return "torch.nn.Parameter" if path.endswith("Parameter") else path
    if path.startswith("torch.functional."):
        return "torch." + path[len("torch.functional."):]
    if path.startswith("torch.autograd.Variable"):
        return "torch.autograd.Variable"
    return path


_EXT_CACHE = {}


def ext(path):
    v = _EXT_CACHE.get(path)
    if v is None:
        v = _EXT_CACHE[path] = _ext(path)
    return v


def _ext(path):
    path = canon(path)
    if path.startswith("torch.nn.") and path.count(".") == 2:
        name = path.rsplit(".", 1)[-1]
        if is_nn_class(name):
            return TorchClass(name)
    return ExtVal(path)


def ext_getattr(it, e, name):
    p = e.path
    if p in ("math", "numpy", "torch") and name in ("pi", "e", "inf", "nan", "tau"):
        return getattr(math, name)
    if p == "torch" and dtype_named(name) is not None:
        return "dtype:" + dtype_named(name)
    if p == "sys" and name == "version_info":
        return (3, 11, 0)
    if p == "torch" and name == "__version__":
        return torch_version()
    return ext(p + "." + name)


class TorchVersion(str):
    """torch.__version__: a string that compares with a version string as a version, as torch's own
    TorchVersion does (`torch.__version__ > "1.2.0"` picks a code path by the installed torch)."""

    @staticmethod
    def _key(v):
        out = []
        for part in str(v).split("+")[0].split("."):
            digits = "".join(itertools.takewhile(str.isdigit, part))
            if not digits:
                break
            out.append(int(digits))
        return tuple(out)

    def _cmp(self, other, op):
        if not isinstance(other, str):
            return NotImplemented
        return op(self._key(self), self._key(other))

    def __eq__(self, other):
        return self._cmp(other, operator.eq)

    def __ne__(self, other):
        return self._cmp(other, operator.ne)

    def __lt__(self, other):
        return self._cmp(other, operator.lt)

    def __le__(self, other):
        return self._cmp(other, operator.le)

    def __gt__(self, other):
        return self._cmp(other, operator.gt)

    def __ge__(self, other):
        return self._cmp(other, operator.ge)

    __hash__ = str.__hash__


@functools.lru_cache(maxsize=1)
def torch_version():
    """The installed torch's version, read from its package metadata (torch is not imported)."""
    try:
        return TorchVersion(importlib.metadata.version("torch"))
    except importlib.metadata.PackageNotFoundError:
        return TorchVersion("2.0.0")


def torch_class_attr(it, cls, name):
    if name == "__name__":
        return cls.name
    if name in ("__init__", "forward"):
        return BuiltinFn(f"nn.{cls.name}.{name}", lambda a, k: torch_super_method(it, a[0], cls.name, name)(a[1:], k))
    if name == "__setattr__":  # nn.Module.__setattr__(self, name, value)
        return BuiltinFn(f"nn.{cls.name}.__setattr__", lambda a, k: it.setattr(a[0], a[1], a[2]))
    if name == "__getattr__":
        return BuiltinFn(f"nn.{cls.name}.__getattr__", lambda a, k: it.getattr(a[0], a[1]))
    if name == "from_pretrained" and pretrained_args(cls.name) is not None:
        return BuiltinFn(f"nn.{cls.name}.from_pretrained", lambda a, k: from_pretrained(it, cls.name, a, k))
    return Unknown(f"nn.{cls.name}.{name}")


# siblings, imported last: the modules of this model call one another
from .modules import from_pretrained, torch_super_method  # noqa: E402

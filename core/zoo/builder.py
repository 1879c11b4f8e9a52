"""A tiny graph builder for the reference zoo.

The zoo's generators describe each architecture the way its torch source
would run it: one `node` per module call or tensor operation, in the order
the forward pass meets them, ids being torch's qualified module names
(`layer1.0.conv1`) and `<module>.<op>` / `<module>.<op>_N` for functional
steps (`layer1.0.add`, `layer1.0.relu_1`). The builder refuses a duplicate
id or a reference to something not defined yet, so every generated design
is topologically ordered by construction.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from ..graph import FORMAT, parse_ref


class ZooError(ValueError):
    """A generator wrote an inconsistent graph (a bug in the zoo, not a design finding)."""


class GraphBuilder:
    def __init__(self, name: str, *, train: dict | None = None, meta: dict | None = None):
        self.name = name
        self.train = dict(train) if train else None
        self.meta = dict(meta) if meta else None
        self._inputs: list[dict] = []
        self._nodes: list[dict] = []
        self._outputs: list[str] = []
        self._ids: set[str] = set()
        self._counts: dict[str, int] = {}

    # ---- graph ---------------------------------------------------------
    def input(self, id: str, shape: list, dtype: str = "float32") -> str:
        self._claim(id)
        self._inputs.append({"id": id, "shape": list(shape), "dtype": dtype})
        return id

    def node(self, id: str, op: str, inputs: str | Iterable[str] = (), *,
             shares: str | None = None, **args: Any) -> str:
        """Add one node; `inputs` is one reference or a list; returns the id."""
        if isinstance(inputs, str):
            inputs = [inputs]
        refs = list(inputs)
        for r in refs:
            rid, _ = parse_ref(r)
            if rid not in self._ids:
                raise ZooError(f"{self.name}: node {id!r} reads {r!r} before it is defined")
        if shares is not None and shares not in self._ids:
            raise ZooError(f"{self.name}: node {id!r} shares {shares!r}, which is not defined")
        self._claim(id)
        entry: dict[str, Any] = {"id": id, "op": op}
        if args:
            entry["args"] = {k: _plain(v) for k, v in args.items()}
        entry["in"] = refs
        if shares is not None:
            entry["shares"] = shares
        self._nodes.append(entry)
        return id

    def param(self, id: str, shape: list) -> str:
        """A learned tensor (class token, position table, layer scale)."""
        return self.node(id, "Parameter", [], shape=list(shape))

    def output(self, *ids: str) -> None:
        for o in ids:
            if parse_ref(o)[0] not in self._ids:
                raise ZooError(f"{self.name}: output {o!r} is not defined")
            self._outputs.append(o)

    def fresh(self, base: str) -> str:
        """torch.fx-style id for the next call of a functional step:
        `base`, then `base_1`, `base_2`, ..."""
        n = self._counts.get(base, 0)
        self._counts[base] = n + 1
        cand = base if n == 0 else f"{base}_{n}"
        while cand in self._ids:
            n += 1
            self._counts[base] = n + 1
            cand = f"{base}_{n}"
        return cand

    def has(self, id: str) -> bool:
        return id in self._ids

    # ---- result --------------------------------------------------------
    def design(self) -> dict:
        if not self._outputs:
            raise ZooError(f"{self.name}: no outputs")
        d: dict[str, Any] = {
            "format": FORMAT,
            "name": self.name,
            "inputs": [dict(i) for i in self._inputs],
            "nodes": [dict(n) for n in self._nodes],
            "outputs": list(self._outputs),
        }
        if self.train:
            d["train"] = dict(self.train)
        if self.meta:
            d["meta"] = dict(self.meta)
        return d

    def _claim(self, id: str) -> None:
        if id in self._ids:
            raise ZooError(f"{self.name}: duplicate id {id!r}")
        self._ids.add(id)


def _plain(v: Any) -> Any:
    if isinstance(v, tuple):
        return [_plain(x) for x in v]
    if isinstance(v, list):
        return [_plain(x) for x in v]
    return v


def dumps(design: dict) -> str:
    """Deterministic JSON: top level indented, one node per line."""
    out = ["{"]
    keys = list(design.keys())
    for i, k in enumerate(keys):
        v = design[k]
        comma = "," if i < len(keys) - 1 else ""
        if k in ("inputs", "nodes") and isinstance(v, list) and v:
            out.append(f"  {json.dumps(k)}: [")
            for j, item in enumerate(v):
                c = "," if j < len(v) - 1 else ""
                out.append("    " + json.dumps(item, separators=(", ", ": ")) + c)
            out.append("  ]" + comma)
        else:
            out.append(f"  {json.dumps(k)}: {json.dumps(v, separators=(', ', ': '))}{comma}")
    out.append("}")
    return "\n".join(out) + "\n"


# ---- small helpers shared by the families -----------------------------

def conv(b: GraphBuilder, id: str, x: str, cin: int, cout: int, k, s=1, p=0, *,
         groups: int = 1, bias: bool = True, dilation=1, op: str = "Conv2d") -> str:
    args: dict[str, Any] = {"in_channels": cin, "out_channels": cout, "kernel_size": k}
    if s != 1:
        args["stride"] = s
    if p != 0:
        args["padding"] = p
    if dilation != 1:
        args["dilation"] = dilation
    if groups != 1:
        args["groups"] = groups
    if not bias:
        args["bias"] = False
    return b.node(id, op, x, **args)


def bn(b: GraphBuilder, id: str, x: str, c: int, *, eps: float = 1e-5,
       momentum: float = 0.1, op: str = "BatchNorm2d") -> str:
    args: dict[str, Any] = {"num_features": c}
    if eps != 1e-5:
        args["eps"] = eps
    if momentum != 0.1:
        args["momentum"] = momentum
    return b.node(id, op, x, **args)


def linear(b: GraphBuilder, id: str, x: str, fin: int, fout: int, bias: bool = True,
           shares: str | None = None) -> str:
    args: dict[str, Any] = {"in_features": fin, "out_features": fout}
    if not bias:
        args["bias"] = False
    return b.node(id, "Linear", x, shares=shares, **args)


def act(b: GraphBuilder, id: str, x: str, name: str | None, **args) -> str:
    """An activation module by torch class name (None: no activation)."""
    if name is None:
        return x
    return b.node(id, name, x, **args)


def layer_norm(b: GraphBuilder, id: str, x: str, dim: int, eps: float = 1e-5) -> str:
    args: dict[str, Any] = {"normalized_shape": dim}
    if eps != 1e-5:
        args["eps"] = eps
    return b.node(id, "LayerNorm", x, **args)


def make_divisible(v: float, divisor: int = 8, min_value: int | None = None) -> int:
    """torchvision's _make_divisible."""
    if min_value is None:
        min_value = divisor
    new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    if new_v < 0.9 * v:
        new_v += divisor
    return new_v

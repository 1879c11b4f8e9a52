"""An op is one OpSpec entry: its build can call a torch function without a class of its own, and its
example, given on the entry, joins the examples the op tests run (core/ops/README.md, "How to add an op")."""

from __future__ import annotations

import torch

from archcurator.core.ops import torch_build as tb
from archcurator.core.ops.examples import EXAMPLES


def _scaled_flip(x, dims, by):
    return torch.flip(x, dims) * by


def test_a_torch_function_builds_from_its_name_with_the_nodes_args():
    x = torch.randn(2, 3, 4)
    mod = tb.function("flip")({"dims": [0, -1]})
    assert isinstance(mod, torch.nn.Module)
    assert torch.equal(mod(x), torch.flip(x, [0, -1]))


def test_a_forward_of_the_entry_builds_with_the_nodes_args():
    x = torch.randn(2, 3)
    mod = tb.function("ScaledFlip", _scaled_flip)({"dims": [1], "by": 2.0})
    assert torch.equal(mod(x), torch.flip(x, [1]) * 2.0)
    assert "ScaledFlip" in repr(mod)


def test_an_entrys_example_joins_the_examples(monkeypatch):
    from archcurator.core import ops
    from archcurator.core.ops import examples
    from archcurator.core.ops.base import INT as INT_KIND
    from archcurator.core.ops.base import Arg, ListOf, OpSpec

    spec = OpSpec("FlipForTest", "tensor", (Arg("dims", kind=ListOf(INT_KIND)),), lambda ctx: [ctx.x],
                  tb.function("flip"), accepts="any", traits=("functional",),
                  example=([((2, 3), "float32")], {"dims": [0]}))
    monkeypatch.setitem(ops.OP_TABLE, "FlipForTest", spec)
    monkeypatch.setattr(examples, "EXAMPLES", dict(EXAMPLES))
    examples._gather_entries()
    assert examples.EXAMPLES["FlipForTest"] == ([((2, 3), "float32")], {"dims": [0]})
    try:
        examples._gather_entries()
    except ValueError as exc:
        assert "FlipForTest" in str(exc) and "twice" in str(exc)
    else:
        raise AssertionError("an example given twice must fail")

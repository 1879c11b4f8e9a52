"""Indexing by index tensors the graph computes or is given (`x[idx]`, `x[:, idx]`, `x[mask]`, BERT's masked
positions `X[batch_idx, pred_positions]`): torch's advanced indexing written as the Index op, so the design has
torch's shape where it had passed the tensor through unchanged (and a reshape downstream was then refused for
a source that runs). Each forward is run in torch by the test."""

from __future__ import annotations

import importlib.util

import pytest
import torch
from parsehelp import output_shapes

from archcurator.core.graph import Design
from archcurator.core.parse import parse_source
from archcurator.core.verify import verify_graph

SOURCE = """import torch
import torch.nn as nn


class M(nn.Module):
    def forward(self, x, idx):
{body}
"""

X = ([2, 5, 6], "float32")
FORWARDS = {
    "rows": ("        return x[idx]", [X, ([4], "int64")]),
    "rows_by_matrix": ("        return x[idx]", [X, ([3, 2], "int64")]),
    "middle_dim": ("        return x[:, idx]", [X, ([4], "int64")]),
    "last_dim_then_reshape": ("        return x[:, :, idx].reshape(2, -1)", [X, ([3], "int64")]),
    "mask": ("        return x[idx > 0]", [X, ([2, 5], "float32")]),
    "sum_over_a_masked_dim": ("        return x[:, idx > 0].sum(1)", [X, ([5], "float32")]),
    "two_indices": ("        return x[idx[:, 0], idx[:, 1]]", [X, ([7, 2], "int64")]),
    "bert_masked_positions": ("""        n = idx.shape[1]
        positions = idx.reshape(-1)
        rows = torch.repeat_interleave(torch.arange(0, x.shape[0]), n)
        picked = x[rows, positions]
        return picked.reshape((x.shape[0], n, -1))""", [X, ([2, 3], "int64")]),
    "repeat_interleave_flat": ("        return torch.repeat_interleave(idx, 2) + x.sum()",
                               [X, ([2, 3], "float32")]),
}


def _torch(src, name, specs):
    loader = importlib.util.spec_from_file_location(f"index_{name}", src)
    mod = importlib.util.module_from_spec(loader)
    loader.loader.exec_module(mod)
    torch.manual_seed(0)
    xs = [torch.randint(0, 2, s) if d == "int64" else torch.randn(s) for s, d in specs]
    with torch.no_grad():
        return [list(mod.M()(*xs).shape)]


@pytest.mark.parametrize("name", sorted(FORWARDS))
def test_index_tensors_give_torchs_shape(tmp_path, name):
    body, specs = FORWARDS[name]
    src = tmp_path / f"{name}.py"
    src.write_text(SOURCE.format(body=body))
    real = _torch(src, name, specs)
    r = parse_source(src, "M", {}, specs)
    rep = verify_graph(Design.from_dict(r.design))
    assert not [f for f in rep.findings if f.severity == "block"], [f.message for f in rep.findings]
    got = output_shapes(r.design, rep)
    if name.startswith("mask"):  # how many elements a mask keeps is a run-time value: unknown, never guessed
        assert len(got[0]) == len(real[0]) and None in got[0]
        assert [d for d in got[0] if d is not None] == [d for i, d in enumerate(real[0]) if got[0][i] is not None]
    else:
        assert got == real
    assert not [w for w in r.warnings if "passed through" in w.message], [w.message for w in r.warnings]


def test_an_index_tensor_over_too_many_dims_is_still_passed_on_and_said(tmp_path):
    src = tmp_path / "m.py"
    src.write_text(SOURCE.format(body="        return (x * 2)[idx, idx, idx, idx]"))
    r = parse_source(src, "M", {}, [X, ([3], "int64")])
    assert [w.message for w in r.warnings if "passed through" in w.message]

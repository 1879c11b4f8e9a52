"""Arguments torch's constructors read that no node carries (an Embedding's `_freeze` and `_weight`, a norm's
keyword-only `bias`, Hardtanh's deprecated `min_value`, Upsample's `recompute_scale_factor`) and the
`from_pretrained` classmethods: each source here runs in torch 2.13, so the design must not be refused, and its
shapes and parameter count are torch's (a norm built with bias=False is said: archgraph/1's norms hold a bias)."""

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
    def __init__(self):
        super().__init__()
        self.layer = {layer}

    def forward(self, x):
        return self.layer(x)
"""

TOKENS = ([2, 5], "int64")
FEATURES = ([2, 16, 6], "float32")
IMAGE = ([1, 2, 4, 4], "float32")
# layer, input, how many parameters more the design counts than torch (a norm's bias torch leaves out)
RUNS = {
    "embedding_freeze_positional": ("nn.Embedding(10, 4, None, None, 2.0, False, False, None, True)", TOKENS, 0),
    "embedding_freeze_keyword": ("nn.Embedding(10, 4, _freeze=True)", TOKENS, 0),
    "embedding_freeze_none": ("nn.Embedding(10, 4, padding_idx=0, _freeze=None)", TOKENS, 0),
    "embedding_initial_weight": ("nn.Embedding(10, 4, _weight=torch.randn(10, 4))", TOKENS, 0),
    "embedding_from_pretrained": ("nn.Embedding.from_pretrained(torch.randn(12, 6), freeze=True)", TOKENS, 0),
    "embedding_from_pretrained_positional": ("nn.Embedding.from_pretrained(torch.zeros(12, 6), False, 0)",
                                             TOKENS, 0),
    "embedding_bag_from_pretrained": ("nn.EmbeddingBag.from_pretrained(torch.randn(12, 6), mode='sum')",
                                      TOKENS, 0),
    "hardtanh_deprecated_spelling": ("nn.Hardtanh(min_value=-2.0, max_value=2.0)", FEATURES, 0),
    "upsample_recompute": ("nn.Upsample(scale_factor=2.0, recompute_scale_factor=True)", IMAGE, 0),
    "batchnorm_no_bias": ("nn.BatchNorm1d(16, bias=False)", FEATURES, 16),
    "batchnorm_no_affine_no_bias": ("nn.BatchNorm1d(16, affine=False, bias=False)", FEATURES, 0),
    "groupnorm_no_bias": ("nn.GroupNorm(4, 16, bias=False)", FEATURES, 16),
    "instancenorm_no_bias": ("nn.InstanceNorm1d(16, affine=True, bias=False)", FEATURES, 16),
}


def _source(tmp_path, name, layer):
    src = tmp_path / f"{name}.py"
    src.write_text(SOURCE.format(layer=layer))
    return src


def _torch(src, name, spec):
    """The same file run in torch (by this test only; the parser reads it)."""
    loader = importlib.util.spec_from_file_location(f"constructor_only_{name}", src)
    mod = importlib.util.module_from_spec(loader)
    loader.loader.exec_module(mod)
    model = mod.M().eval()
    shape, dtype = spec
    x = torch.randint(0, 10, shape) if dtype == "int64" else torch.randn(shape)
    with torch.no_grad():
        y = model(x)
    return sum(p.numel() for p in model.parameters()), [list(y.shape)]


@pytest.mark.parametrize("name", sorted(RUNS))
def test_a_source_torch_builds_is_not_refused_and_counts_as_torch(tmp_path, name):
    layer, spec, extra = RUNS[name]
    src = _source(tmp_path, name, layer)
    real_params, real_shapes = _torch(src, name, spec)
    r = parse_source(src, "M", {}, [spec])
    rep = verify_graph(Design.from_dict(r.design))
    assert not [f for f in rep.findings if f.severity == "block"], [f.message for f in rep.findings]
    assert (rep.cost["params"], output_shapes(r.design, rep)) == (real_params + extra, real_shapes)
    said = [w.message for w in r.warnings if "bias=False" in w.message]
    assert len(said) == (1 if extra else 0), [w.message for w in r.warnings]
    if extra:
        assert f"counts {extra} more parameters" in said[0]
    assert not [w for w in r.warnings if "_freeze" in w.message or "recompute" in w.message
                or "min_value" in w.message or "from_pretrained" in w.message]


def test_a_table_of_unknown_shape_leaves_both_sizes_unknown_and_says_so(tmp_path):
    src = tmp_path / "m.py"
    src.write_text(SOURCE.replace("def __init__(self):", "def __init__(self, table):")
                   .format(layer="nn.Embedding.from_pretrained(table)"))
    r = parse_source(src, "M", {}, [TOKENS])
    assert [(n["op"], n["args"]) for n in r.design["nodes"]] == [
        ("Embedding", {"num_embeddings": None, "embedding_dim": None})]
    said = " ".join(w.message for w in r.warnings)
    assert "num_embeddings of Embedding is not known" in said and "embedding_dim of Embedding is not known" in said


def test_a_table_that_is_not_two_dimensional_is_said_as_torch_refuses_it(tmp_path):
    src = _source(tmp_path, "m", "nn.Embedding.from_pretrained(torch.randn(3, 10, 4))")
    with pytest.raises(AssertionError, match="2-dimensional"):
        _torch(src, "three_d", TOKENS)
    with pytest.raises(Exception, match=r"from_pretrained of a 3-D tensor.*2-dimensional"):
        parse_source(src, "M", {}, [TOKENS])


def test_initial_weights_of_the_wrong_shape_are_said_not_to_build(tmp_path):
    src = _source(tmp_path, "m", "nn.Embedding(10, 4, _weight=torch.randn(10, 5))")
    with pytest.raises(AssertionError, match="Shape of weight does not match"):
        _torch(src, "wrong_weight", TOKENS)
    said = [w.message for w in parse_source(src, "M", {}, [TOKENS]).warnings]
    assert len(said) == 1 and "_weight of shape [10, 5]" in said[0] and "cannot build" in said[0]


def test_recompute_with_an_explicit_size_is_said_not_to_run(tmp_path):
    src = _source(tmp_path, "m", "nn.Upsample(size=(8, 8), recompute_scale_factor=True)")
    with pytest.raises(ValueError, match="recompute_scale_factor"):
        _torch(src, "recompute_size", IMAGE)
    said = [w.message for w in parse_source(src, "M", {}, [IMAGE]).warnings]
    assert len(said) == 1 and "ValueError" in said[0] and "cannot run" in said[0]

"""Node ids that are also names of nn.Module attributes build and run (a blind tester's VAE with a node
`half` failed in `run` with "attribute 'half' already exists")."""

from __future__ import annotations

import pytest

from archcurator.core.build import build_module, example_inputs
from archcurator.core.graph import Design


@pytest.mark.parametrize("nid", ["half", "train", "eval", "forward", "to", "float", "apply", "cuda", "parameters",
                                 "keys", "training", "_private", "a.b"])
def test_a_node_id_that_is_a_module_attribute_builds(nid):
    design = Design.from_dict({
        "format": "archgraph/1", "name": "ids", "inputs": [{"id": "x", "shape": [2, 4], "dtype": "float32"}],
        "nodes": [{"id": nid, "op": "Linear", "args": {"in_features": 4, "out_features": 3}, "in": ["x"]},
                  {"id": "tied", "op": "Linear", "args": {"in_features": 3, "out_features": 3}, "in": [nid]},
                  {"id": "again", "op": "Linear", "args": {"in_features": 4, "out_features": 3}, "in": ["x"],
                   "shares": nid},
                  {"id": "out", "op": "Add", "args": {}, "in": ["tied", "again"]}],
        "outputs": ["out"]})
    model = build_module(design, "cpu")
    y = model(*example_inputs(design, batch=2))
    assert tuple(y.shape) == (2, 3)
    assert sum(p.numel() for p in model.parameters()) == 15 + 12


def test_a_parameter_with_a_symbolic_shape_is_refused_by_verify_and_by_the_builder():
    """verify refuses it (connectivity.bad-arg) and `run` built it: a blind tester saw the two disagree."""
    from archcurator.core.build import BuildError
    from archcurator.core.verify import verify_graph

    design = Design.from_dict({
        "format": "archgraph/1", "name": "pos", "inputs": [{"id": "x", "shape": ["B", "T", 4], "dtype": "float32"}],
        "nodes": [{"id": "pos", "op": "Parameter", "args": {"shape": [1, "T", 4]}},
                  {"id": "add", "op": "Add", "in": ["x", "pos"]}],
        "outputs": ["add"]})
    assert verify_graph(design).verdict == "block"
    with pytest.raises(BuildError, match="Parameter's shape must be ints"):
        build_module(design, "cpu")

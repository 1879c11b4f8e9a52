"""Helpers for the parser's tests (a module of its own, as tests/tui/apphelp.py: `import conftest` would
find whichever folder's conftest came first when the whole suite runs)."""

from __future__ import annotations


def output_shapes(design: dict, report) -> list:
    """The shape the verifier gives each of the design's outputs (None: rank unknown), as lists."""
    shapes = []
    for ref in design["outputs"]:
        node, _, k = ref.partition(":")
        t = report.types[node][int(k or 0)]
        shapes.append(None if t.shape is None else list(t.shape))
    return shapes

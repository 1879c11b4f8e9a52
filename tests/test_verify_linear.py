"""Verify grows linearly with the design: on chains of layers that never repeat (so the repeat cache finds
nothing), the Python calls made per node stay the same from 1,000 to 10,000 nodes. Counted, not timed: a
check that walked every ancestor of every node, or a per-node copy of something the size of the design, would
multiply them."""

from __future__ import annotations

import json
import sys

import pytest
from verify_golden import chain

from archcurator.core import dims
from archcurator.core.graph import Design
from archcurator.core.verify import verify_graph


def _cold_caches() -> None:
    """The size arithmetic's caches emptied, so that both chains start alike (what an earlier test left in
    them would spare one chain calls the other makes)."""
    for name in dir(dims):
        fn = getattr(dims, name)
        if callable(getattr(fn, "cache_clear", None)):
            fn.cache_clear()


def _calls(n_nodes: int) -> int:
    text = json.dumps(chain(n_nodes))
    count = [0]
    _cold_caches()

    def tally(frame, event, arg):
        if event in ("call", "c_call"):
            count[0] += 1

    sys.setprofile(tally)
    try:
        report = verify_graph(Design.from_json(text))
    finally:
        sys.setprofile(None)
    assert len(report.types) == n_nodes + 1
    return count[0]


@pytest.mark.slow
def test_calls_per_node_stay_flat_from_1000_to_10000_distinct_nodes():
    small, large = _calls(1_000) / 1_000, _calls(10_000) / 10_000
    assert large <= small * 1.05, f"{small:.1f} calls per node at 1,000 nodes, {large:.1f} at 10,000"

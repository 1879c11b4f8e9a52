"""efficiency.memory-over-device without a declared device: the largest device in the price table is the bar."""

from rule_fixtures import CE, mlp

from archcurator.core.graph import Design
from archcurator.core.verify import verify_graph


def _fired(graph) -> list:
    report = verify_graph(Design.from_dict(graph))
    return [f.message for f in report.findings if f.rule == "efficiency.memory-over-device"]


def test_a_design_no_device_in_the_table_holds_is_warned():
    messages = _fired(mlp(train=dict(CE, batch_size=10 ** 9)))
    assert messages and "largest device in the price table (H200, 141 GB)" in messages[0]


def test_a_design_that_fits_the_largest_device_is_not():
    assert _fired(mlp(train=dict(CE, batch_size=10 ** 5))) == []

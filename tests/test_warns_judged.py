"""Every warn earns a curator's judgment (issue 26): no condition that cannot be false or that the
declared sizes meet; degenerate-only conditions block in plain words; a size equal to a width on another
axis is a likely defect; idiomatic broadcasts are not warned, and each idiom still lets a real mistake
through to its warn. Each case failed before the issue's fixes; each blocking one is also run in torch."""

from __future__ import annotations

import pytest

from archcurator.core import dims as D
from archcurator.core.graph import Design
from archcurator.core.ground.child import observe_eager
from archcurator.core.verify import verify_graph


def N(id, op, ins=(), **args):
    return {"id": id, "op": op, "args": args, "in": list(ins)}


def X(*shape, id="x", dtype="float32"):
    return {"id": id, "shape": list(shape), "dtype": dtype}


def G(nodes, inputs, train=None, outputs=None):
    d = {"format": "archgraph/1", "name": "case", "inputs": inputs, "nodes": nodes,
         "outputs": outputs or [nodes[-1]["id"]]}
    if train:
        d["train"] = train
    return d


def findings(g):
    return verify_graph(Design.from_dict(g)).findings


def conditions(g):
    return [f for f in findings(g) if f.rule in ("shape.symbol-condition", "shape.size-meets-width")]


# ---- conditions that cannot be false, or are met -----------------------------------------------------
@pytest.mark.parametrize("text", ["T <= (T+2)", "T <= T*T", "(2*T-1) <= T*T", "B*T <= B*T*T", "1 <= T"])
def test_conditions_true_for_every_size_are_proved(text):
    lhs, rhs = text.split(" <= ")
    assert D.always(D.Condition("le", lhs, rhs))


@pytest.mark.parametrize("text", ["T <= 64", "T <= (T-1)", "2 <= T", "T*T <= (T+5)"])
def test_conditions_some_size_breaks_are_not_proved(text):
    lhs, rhs = text.split(" <= ")
    assert not D.always(D.Condition("le", lhs, rhs))


def test_the_crop_of_a_causal_conv_states_no_condition():
    # an SSM block's causal conv: pad k-1 on both sides, keep the first T ("runs only when T <= (T+2)")
    g = G([N("conv", "Conv1d", ["x"], in_channels=16, out_channels=16, kernel_size=3, padding=2, groups=16),
           N("crop", "Slice", ["conv"], dim=2, start=0, end="T")], [X("B", 16, "T")])
    assert not findings(g)


def test_a_condition_the_declared_sizes_meet_is_no_warn():
    # positions read from a 64-row table: "runs only when T <= 64 (the declared sizes satisfy it)" before
    g = G([N("i", "Arange", end="T"), N("pos", "Embedding", ["i"], num_embeddings=64, embedding_dim=16),
           N("a", "Add", ["x", "pos"])], [X("B", "T", 16)], train={"seq_len": 32})
    assert not findings(g)
    # a fixed table of 64 positions added to [B, T, 16]: "T = 64 (or T = 1)", met by the declared 64
    g2 = G([N("pos", "Parameter", shape=[1, 64, 16]), N("a", "Add", ["x", "pos"])], [X("B", "T", 16)],
           train={"seq_len": 64})
    assert not findings(g2)
    # a sliced table is no warn either (the length is T; the broadcast over the batch is a learned table's)
    g3 = G([N("pos", "Parameter", shape=[64, 16]), N("p", "Slice", ["pos"], dim=0, start=0, end="T"),
            N("a", "Add", ["x", "p"])], [X("B", "T", 16)], train={"seq_len": 32})
    assert not findings(g3)
    g.pop("train")  # undeclared, T <= 64 is stated
    assert [c.message for c in conditions(g)] and "T <= 64" in conditions(g)[0].message


# ---- degenerate-only conditions block ----------------------------------------------------------------
DEGENERATE = {
    # [B, T, 16] read as [B, 16]: only T = 1
    "T = 1": (G([N("r", "Reshape", ["x"], shape=["B", 16])], [X("B", "T", 16)]), "T = 1: no real sequence"),
    # a difference of neighbours read as [B, 16]: only T - 1 = 1
    "(T-1) = 1": (G([N("a", "Slice", ["x"], dim=1, start=1), N("r", "Reshape", ["a"], shape=["B", 16])],
                    [X("B", "T", 16)]), "T = 2: no real sequence"),
    # 3072*B must be a multiple of 816: B a multiple of 17
    "B multiple of 17": (G([N("r", "Reshape", ["x"], shape=[-1, 816])], [X("B", 3072)]),
                         "the batch B is a multiple of 17"),
    # a class token never expanded to the batch: 1 = B, in a design that trains
    "1 = B": (G([N("cls", "Parameter", shape=[1, 1, 16]), N("c", "Concat", ["cls", "x"], dim=1)],
                [X("B", "T", 16)]), "B = 1: a batch of one"),
}


@pytest.mark.parametrize("name", sorted(DEGENERATE))
def test_degenerate_only_conditions_block_in_plain_words(name):
    g, words = DEGENERATE[name]
    found = findings(g)
    blocks = [f for f in found if f.severity == "block"]
    assert blocks and words in blocks[0].message, [(f.rule, f.message) for f in found]
    assert observe_eager(g)["status"] != "ok"  # torch at the run's sizes (T = 8, batch 2) agrees


def test_a_batch_of_one_in_eval_mode_stays_a_warn():
    g, _ = DEGENERATE["1 = B"]
    g = dict(g, train={"mode": "eval"})
    found = findings(g)
    assert not [f for f in found if f.severity == "block"] and conditions(g)


def test_a_condition_a_real_size_meets_stays_a_warn():
    # T <= 64 has real sizes: not degenerate
    g = G([N("pos", "Parameter", shape=[64, 16]), N("p", "Slice", ["pos"], dim=0, start=0, end="T"),
           N("a", "Add", ["x", "p"])], [X("B", "T", 16)])
    assert verify_graph(Design.from_dict(g)).verdict == "warn"


# ---- likely defects ----------------------------------------------------------------------------------
def test_a_sequence_size_equal_to_a_width_on_another_axis_is_a_likely_defect_listed_first():
    g = G([N("fc", "Linear", ["x"], in_features=176, out_features=64)], [X("B", 176, "T")])
    found = findings(g)
    assert [f.rule for f in found] == ["shape.size-meets-width"] and "T = 176" in found[0].message
    from archcurator.core.checks import CATALOGUE
    from archcurator.core.report import display_key

    assert "missing transpose" in found[0].message and CATALOGUE["shape.size-meets-width"].likely_defect
    plain = ("shape.symbol-condition", "warn", ("a",), {"a": 0, "fc": 1})
    assert display_key("shape.size-meets-width", "warn", ("fc",), {"a": 0, "fc": 1}) < display_key(*plain)


def test_q_at_k_without_the_transpose_is_a_likely_defect():
    g = G([N("q", "Linear", ["x"], in_features=32, out_features=64),
           N("k", "Linear", ["x"], in_features=32, out_features=64), N("m", "MatMul", ["q", "k"])], [X("B", "T", 32)])
    assert [f.rule for f in findings(g)] == ["shape.size-meets-width"]


def test_a_fixed_position_table_is_a_plain_condition_not_a_likely_defect():
    # the table's 197 rows sit on the same axis as N: a real limit, not a swapped axis
    g = G([N("pos", "Parameter", shape=[1, 197, 16]), N("a", "Add", ["x", "pos"])], [X("B", "N", 16)])
    assert [f.rule for f in findings(g)] == ["shape.symbol-condition"]


# ---- broadcast idioms, each against a mistake it must still catch -----------------------------------
def broadcasts(g):
    return [f for f in findings(g) if f.rule == "shape.silent-broadcast"]


def test_outer_difference_of_two_ranges_is_not_warned_but_a_one_sided_residual_is():
    # ALiBi distances: arange(T)[None, :] - arange(T)[:, None], here from data so that only "outer" applies
    g = G([N("p", "Linear", ["x"], in_features=8, out_features=1), N("t", "Transpose", ["p"], dim0=1, dim1=2),
           N("d", "Sub", ["t", "p"])], [X("B", "T", 8)])
    assert not broadcasts(g)
    # the mistake: a residual whose branch kept a 1 on one side only
    g = G([N("p", "Linear", ["x"], in_features=8, out_features=1), N("d", "Add", ["x", "p"])], [X("B", "T", 8)])
    assert broadcasts(g)


def test_a_statistic_is_not_warned_but_a_projected_pool_is():
    # x - x.amax(-1, keepdim=True), and a norm [N, 1] added to a distance matrix [N, K]
    g = G([N("m", "Amax", ["x"], dim=-1, keepdim=True), N("d", "Sub", ["x", "m"])], [X("B", "T", 8)])
    assert not broadcasts(g)
    g = G([N("sq", "Mul", ["z", "z"]), N("n", "Sum", ["sq"], dim=1, keepdim=True),
           N("ze", "MatMul", ["z", "book"]), N("d", "Sub", ["n", "ze"])],
          [X("N", 8, id="z"), X(8, 32, id="book")])
    assert not broadcasts(g)
    # the mistake: a statistic of the input added to a layer's output as a residual
    g = G([N("c", "Conv2d", ["x"], in_channels=8, out_channels=8, kernel_size=3, padding=1),
           N("m", "Mean", ["x"], dim=[2, 3], keepdim=True), N("a", "Add", ["c", "m"])], [X("B", 8, 4, 4)])
    assert broadcasts(g)
    # the mistake: a pooled branch that went through a layer before the residual
    g = G([N("m", "Mean", ["x"], dim=1, keepdim=True), N("f", "Linear", ["m"], in_features=8, out_features=8),
           N("d", "Add", ["x", "f"])], [X("B", "T", 8)])
    assert broadcasts(g)


def test_an_explicit_bias_is_not_warned_but_a_convolved_one_is():
    # a time embedding unsqueezed to [B, C, 1, 1] and added to the feature map
    g = G([N("e", "Linear", ["t"], in_features=16, out_features=8), N("u1", "Unsqueeze", ["e"], dim=-1),
           N("u2", "Unsqueeze", ["u1"], dim=-1), N("a", "Add", ["x", "u2"])],
          [X("B", 8, 4, 4), X("B", 16, id="t")])
    assert not broadcasts(g)
    # the mistake: a globally pooled map convolved and added back as a residual
    g = G([N("p", "AdaptiveAvgPool2d", ["x"], output_size=1),
           N("c", "Conv2d", ["p"], in_channels=8, out_channels=8, kernel_size=1), N("a", "Add", ["x", "c"])],
          [X("B", 8, 4, 4)])
    assert broadcasts(g)


def test_a_mask_from_positions_is_not_warned_but_one_from_data_is():
    # an additive causal mask [T, T] from two aranges, added to scores [B, T, T]
    g = G([N("i", "Arange", end="T"), N("ci", "Unsqueeze", ["i"], dim=1), N("j", "Arange", end="T"),
           N("cj", "Unsqueeze", ["j"], dim=0), N("dist", "Sub", ["cj", "ci"]),
           N("blk", "Clamp", ["dist"], min=0, max=1), N("m", "Scale", ["blk"], value=-1e4),
           N("s", "MatMul", ["x", "xt"]), N("a", "Add", ["s", "m"])],
          [X("B", "T", 8), X("B", 8, "T", id="xt")])
    assert not broadcasts(g)
    # the mistake: the same [T, T] picked from data (one sample's scores) added to every sample's
    g = G([N("s", "MatMul", ["x", "xt"]), N("v", "Select", ["s"], dim=0, index=0), N("a", "Add", ["s", "v"])],
          [X("B", "T", 8), X("B", 8, "T", id="xt")])
    assert broadcasts(g)

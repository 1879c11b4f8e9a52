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
    # undeclared, a table shorter than any context is stated (64 rows and more are the design's context:
    # test_a_fixed_table_sliced_to_an_undeclared_length_is_the_designs_context_not_a_warn)
    g = G([N("i", "Arange", end="T"), N("pos", "Embedding", ["i"], num_embeddings=16, embedding_dim=16),
           N("a", "Add", ["x", "pos"])], [X("B", "T", 16)])
    assert [c.message for c in conditions(g)] and "T <= 16" in conditions(g)[0].message


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
    # T = 64 has real sizes: not degenerate
    g = G([N("pos", "Parameter", shape=[64, 16]), N("a", "Add", ["x", "pos"])], [X("B", "T", 16)])
    assert verify_graph(Design.from_dict(g)).verdict == "warn" and conditions(g)


def test_a_fixed_table_sliced_to_an_undeclared_length_is_the_designs_context_not_a_warn():
    # pos[:T] of a 64-row table (nanoGPT's mask buffer, a RoPE cache): 64 is the context the design was
    # written for; with T undeclared there is nothing to judge, with T declared past it torch fails
    table = [N("pos", "Parameter", shape=[64, 16]), N("p", "Slice", ["pos"], dim=0, start=0, end="T"),
             N("a", "Add", ["x", "p"])]
    assert not findings(G(table, [X("B", "T", 16)]))
    past = dict(G(table, [X("B", "T", 16)]), train={"batch": 2, "seq_len": 128})
    assert verify_graph(Design.from_dict(past)).verdict == "block"
    assert observe_eager(past)["status"] != "ok"
    within = dict(G(table, [X("B", "T", 16)]), train={"batch": 2, "seq_len": 32})
    assert not findings(within) and observe_eager(within)["status"] == "ok"
    # a table of 4 rows is no context anyone writes: read to an undeclared T it still states its condition
    short = G([N("pos", "Parameter", shape=[4, 16]), N("p", "Slice", ["pos"], dim=0, start=0, end="T"),
               N("a", "Add", ["x", "p"])], [X("B", "T", 16)])
    assert conditions(short)
    # the same for a position embedding read at arange(T) (BERT's 512 rows)
    emb = G([N("t", "Arange", end="T"), N("e", "Embedding", ["t"], num_embeddings=512, embedding_dim=16),
             N("a", "Add", ["x", "e"])], [X("B", "T", 16)])
    assert not findings(emb)
    assert conditions(dict(emb, nodes=[dict(n, args={**n["args"], "num_embeddings": 4}) if n["id"] == "e" else n
                                       for n in emb["nodes"]]))


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


# ---- warns judged false alarms on an outside clean set, and a miss -----------------------------------
def rule_hits(g, rule):
    return [f for f in findings(g) if f.rule == rule]


def _qk(extra, scores="m", inputs=None):
    base = [N("q", "Linear", ["x"], in_features=32, out_features=32),
            N("k", "Linear", ["x"], in_features=32, out_features=32)]
    return G(base + extra + [N("sm", "Softmax", [scores], dim=-1)], inputs or [X("B", "T", 32)])


def _rope(p, t):
    # q * cos + rotate_half(q) * sin, the tables [64, 32] sliced to T
    return [N(p + "1", "Slice", [t], dim=-1, start=0, end=16), N(p + "2", "Slice", [t], dim=-1, start=16, end=None),
            N(p + "n", "Scale", [p + "2"], value=-1.0), N(p + "r", "Concat", [p + "n", p + "1"], dim=-1),
            N(p + "a", "Mul", [t, "c"]), N(p + "b", "Mul", [p + "r", "s"]), N(p + "o", "Add", [p + "a", p + "b"])]


ROPE_TABLES = [N("cos", "Parameter", shape=[64, 32]), N("sin", "Parameter", shape=[64, 32]),
               N("c", "Slice", ["cos"], dim=0, start=0, end="T"), N("s", "Slice", ["sin"], dim=0, start=0, end="T")]
CAUSAL_MASK = [N("i", "Arange", end="T"), N("iu", "Unsqueeze", ["i"], dim=1), N("j", "Arange", end="T"),
               N("ju", "Unsqueeze", ["j"], dim=0), N("dd", "Sub", ["ju", "iu"]), N("cl", "Clamp", ["dd"], min=0, max=1),
               N("mk", "Scale", ["cl"], value=-1e4)]


def test_a_softmax_over_distances_to_a_codebook_is_not_attention_but_learned_queries_are():
    # VQ: softmax(2 z.e - ||z||^2) over a codebook Parameter, with no temperature: not attention
    g = G([N("z", "Linear", ["x"], in_features=32, out_features=32), N("book", "Parameter", shape=[64, 32]),
           N("zm", "Mul", ["z", "z"]), N("zz", "Sum", ["zm"], dim=-1, keepdim=True),
           N("bt", "Transpose", ["book"], dim0=0, dim1=1), N("ze", "MatMul", ["z", "bt"]),
           N("negd", "Sub", ["ze", "zz"]), N("sm", "Softmax", ["negd"], dim=-1)], [X("B", "T", 32)])
    assert not rule_hits(g, "numerics.attention-no-scale")
    # the mistake it must still catch: Perceiver latents (a Parameter too) projected to queries, unscaled
    g = _qk([N("lat", "Parameter", shape=[1, 8, 32]), N("le", "Expand", ["lat"], shape=["B", -1, -1]),
             N("lq", "Linear", ["le"], in_features=32, out_features=32), N("kt", "Transpose", ["k"], dim0=-2, dim1=-1),
             N("m", "MatMul", ["lq", "kt"])])
    assert rule_hits(g, "numerics.attention-no-scale")


def test_unscaled_attention_after_a_rotary_embedding_or_behind_a_mask_is_warned():
    rope = ROPE_TABLES + _rope("Q", "q") + _rope("K", "k") + [N("kt", "Transpose", ["Ko"], dim0=-2, dim1=-1),
                                                              N("m", "MatMul", ["Qo", "kt"])]
    assert rule_hits(_qk(rope), "numerics.attention-no-scale")
    # the causal mask added first: Add(mask, scores)
    assert rule_hits(_qk(rope + CAUSAL_MASK + [N("ad", "Add", ["mk", "m"])], scores="ad"),
                     "numerics.attention-no-scale")
    # scores by einsum
    g = _qk(ROPE_TABLES + _rope("Q", "q") + _rope("K", "k") + [N("m", "Einsum", ["Qo", "Ko"], equation="btd,bsd->bts")])
    assert rule_hits(g, "numerics.attention-no-scale")
    # negating the scores is no scaling
    assert rule_hits(_qk(rope + [N("neg", "Scale", ["m"], value=-1.0)], scores="neg"), "numerics.attention-no-scale")


def test_attention_scaled_before_the_rotation_or_behind_a_mask_is_not_warned():
    g = _qk(ROPE_TABLES + [N("qs", "Scale", ["q"], value=32 ** -0.5)] + _rope("Q", "qs") + _rope("K", "k")
            + [N("kt", "Transpose", ["Ko"], dim0=-2, dim1=-1), N("m", "MatMul", ["Qo", "kt"])])
    assert not rule_hits(g, "numerics.attention-no-scale")
    g = _qk([N("kt", "Transpose", ["k"], dim0=-2, dim1=-1), N("m0", "MatMul", ["q", "kt"]),
             N("m1", "Scale", ["m0"], value=32 ** -0.5)] + CAUSAL_MASK + [N("ad", "Add", ["mk", "m1"])], scores="ad")
    assert not rule_hits(g, "numerics.attention-no-scale")
    # cosine attention: both operands normalised, the scores bounded whatever the width
    g = _qk([N("qn", "Normalize", ["q"], dim=-1), N("kn", "Normalize", ["k"], dim=-1),
             N("kt", "Transpose", ["kn"], dim0=-2, dim1=-1), N("m", "MatMul", ["qn", "kt"])])
    assert not rule_hits(g, "numerics.attention-no-scale")


def test_batchnorm_at_batch_one_over_a_map_is_not_warned_but_over_a_vector_is():
    def net(shape, bn, **a):
        return G([N("c", "Conv2d" if bn == "BatchNorm2d" else "Linear", ["x"], **a),
                  N("bn", bn, ["c"], num_features=16), N("r", "ReLU", ["bn"])], [X(*shape)],
                 train={"batch_size": 1, "loss": "mse"})
    # a U-Net level at batch 1: statistics over 32*32 values per channel
    g = net(("B", 3, 32, 32), "BatchNorm2d", in_channels=3, out_channels=16, kernel_size=3, padding=1, bias=False)
    assert not rule_hits(g, "numerics.batchnorm-batch-one")
    # a 2x2 map at batch 1: four values per channel
    g = net(("B", 3, 2, 2), "BatchNorm2d", in_channels=3, out_channels=16, kernel_size=3, padding=1, bias=False)
    assert rule_hits(g, "numerics.batchnorm-batch-one")


def test_a_head_of_the_task_s_width_is_not_warned_but_a_hidden_odd_width_is():
    # a vocabulary of 1001 projected before a reshape: the task's width
    g = G([N("h", "Linear", ["x"], in_features=64, out_features=1001), N("r", "Reshape", ["h"], shape=[-1, 1001])],
          [X("B", "T", 64)])
    assert not rule_hits(g, "efficiency.width-not-multiple-of-8")
    g = G([N("h", "Linear", ["x"], in_features=64, out_features=100), N("a", "GELU", ["h"]),
           N("o", "Linear", ["a"], in_features=100, out_features=10)], [X("B", 64)])
    assert rule_hits(g, "efficiency.width-not-multiple-of-8")


def test_a_low_rank_factorisation_is_not_a_collapse_but_a_widening_pair_is():
    def pair(r):
        return G([N("a", "Linear", ["x"], in_features=256, out_features=r),
                  N("b", "Linear", ["a"], in_features=r, out_features=256)], [X("B", 256)])
    assert not rule_hits(pair(16), "numerics.linear-collapse")  # 2*256*16 weights, not 256*256
    assert rule_hits(pair(1024), "numerics.linear-collapse")


def _wavenet(layers):
    nodes, h = [N("in", "Conv1d", ["x"], in_channels=1, out_channels=16, kernel_size=1)], "in"
    for i in range(layers):
        nodes += [N(f"p{i}", "ConstantPad1d", [h], padding=[2 ** i, 0], value=0.0),
                  N(f"d{i}", "Conv1d", [f"p{i}"], in_channels=16, out_channels=16, kernel_size=2, dilation=2 ** i),
                  N(f"t{i}", "Tanh", [f"d{i}"]), N(f"r{i}", "Conv1d", [f"t{i}"], in_channels=16, out_channels=16,
                                                   kernel_size=1),
                  N(f"h{i}", "Add", [h, f"r{i}"])]
        h = f"h{i}"
    return G(nodes, [X("B", 1, "T")])


def test_a_few_residual_blocks_without_norms_are_not_warned_but_a_deep_residual_stack_is():
    assert not rule_hits(_wavenet(6), "numerics.deep-no-norm")  # 13 weighted layers, 6 residual joins
    assert rule_hits(_wavenet(12), "numerics.deep-no-norm")


def test_relative_position_buckets_clamped_by_integers_stay_integers():
    # T5: clamp(j - i, -4, 3) + 4 looks up a [8, heads] bias table; integer bounds keep int64 (torch does)
    g = G([N("i", "Arange", end="T"), N("iu", "Unsqueeze", ["i"], dim=1), N("j", "Arange", end="T"),
           N("ju", "Unsqueeze", ["j"], dim=0), N("dd", "Sub", ["ju", "iu"]), N("rel", "Clamp", ["dd"], min=-4, max=3),
           N("off", "Constant", shape=[1], value=4, dtype="int64"), N("b", "Add", ["rel", "off"]),
           N("e", "Embedding", ["b"], num_embeddings=8, embedding_dim=4), N("a", "Add", ["x", "e"])],
          [X("B", "T", "T", 4)])
    assert not [f for f in findings(g) if f.severity == "block"], [(f.rule, f.message) for f in findings(g)]
    assert observe_eager(g)["status"] == "ok"
    # a float bound promotes the ids to float32, and an Embedding refuses them (torch too)
    g["nodes"][5]["args"]["min"] = -4.0
    assert [f.rule for f in findings(g) if f.severity == "block"] == ["dtype.float-into-embedding"]
    assert observe_eager(g)["status"] != "ok"


def test_adaln_pieces_of_an_unsqueezed_projection_are_a_bias_but_pieces_of_a_pooled_projection_are_not():
    # DiT: shift, scale = Linear(c).unsqueeze(1).chunk(2, -1); x * (1 + scale) + shift over [B, N, d]
    g = G([N("m", "Linear", ["c"], in_features=8, out_features=32), N("u", "Unsqueeze", ["m"], dim=1),
           N("p", "Chunk", ["u"], chunks=2, dim=-1), N("y", "Mul", ["x", "p:1"]), N("a", "Add", ["y", "p:0"])],
          [X("B", "N", 16), X("B", 8, id="c")])
    assert not broadcasts(g)
    # the mistake: the tokens pooled, projected and chunked, then added back as a residual
    g = G([N("pool", "Mean", ["x"], dim=1, keepdim=True), N("m", "Linear", ["pool"], in_features=16, out_features=32),
           N("p", "Chunk", ["m"], chunks=2, dim=-1), N("a", "Add", ["x", "p:0"])], [X("B", "N", 16)])
    assert broadcasts(g)


def test_positions_clamped_into_their_table_are_known_to_fit_but_clamped_past_it_are_not():
    def bucket(lo, hi, offset, rows):
        return G([N("i", "Arange", end="T"), N("iu", "Unsqueeze", ["i"], dim=1), N("j", "Arange", end="T"),
                  N("ju", "Unsqueeze", ["j"], dim=0), N("dd", "Sub", ["ju", "iu"]),
                  N("rel", "Clamp", ["dd"], min=lo, max=hi),
                  N("off", "Constant", shape=[1], value=offset, dtype="int64"), N("b", "Add", ["rel", "off"]),
                  N("e", "Embedding", ["b"], num_embeddings=rows, embedding_dim=4), N("a", "Add", ["x", "e"])],
                 [X("B", "T", "T", 4)])
    assert not findings(bucket(-4, 3, 4, 8))  # T5: clamp(j - i, -4, 3) + 4 lies in 0..7, the table's 8 rows
    assert [f.rule for f in findings(bucket(-4, 4, 4, 8))] == ["shape.unknown-index"]  # up to 8: may not fit
    assert [f.rule for f in findings(bucket(-4, 3, 3, 8))] == ["shape.unknown-index"]  # down to -1: may not fit

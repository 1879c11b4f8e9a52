"""Differential testing against torch, a fixed-seed sample: random designs drawn from the op table
(core.ground.generate, which knows nothing of the checks) run eagerly in torch and verified here.
bench/differential.py runs 10,000 of them."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from archcurator.core import dims as D
from archcurator.core.graph import Design
from archcurator.core.ground.child import observe_eager
from archcurator.core.ground.differential import DiffResult, run_differential, summarize_differential, verify_result
from archcurator.core.ground.generate import generate
from archcurator.core.verify import verify_graph

SEEDS = (7000, 150)  # first seed, count: a sample no fix was made against


def test_the_generator_is_deterministic_and_draws_from_the_whole_table():
    a, b = generate(11), generate(11)
    assert a == b
    ops = {n["op"] for s in range(60) for n in generate(s)["nodes"]}
    assert len(ops) > 60
    modes = {(generate(s).get("train") or {}).get("mode", "train") for s in range(60)}
    assert modes == {"train", "eval"}


@pytest.mark.slow
def test_block_iff_torch_fails_on_a_fixed_sample():
    results = run_differential(*SEEDS, timeout=20)
    s = summarize_differential(results)
    assert s["judged"] >= SEEDS[1] - 2
    assert 0.2 < s["ran"] / s["judged"] < 0.8, "the sample should hold designs that run and designs that fail"
    detail = {r.case: (r.verdict, r.blocking[:2], r.status, r.exception, r.message[:100])
              for r in results if r.case in s["false_blocks"] + s["crashes_without_block"]}
    assert not s["false_blocks"], detail
    assert s["agreement_counting_conditions"] >= 0.97, detail


def test_conditions_on_symbols():
    c = D.condition("eq", "T", 768)
    assert isinstance(c, D.Condition) and c.text() == "T = 768"
    assert D.holds(c, {"T": 768}) is True and D.holds(c, {"T": 128}) is False and D.holds(c, {}) is None
    assert D.satisfiable(c)
    assert not D.satisfiable(D.condition("eq", "8*T", 99))
    assert not D.satisfiable(D.condition("eq", "16*B", "32*B"))
    assert D.satisfiable(D.condition("eq", "B", "T"))
    assert D.condition("eq", 3, 3) is True and D.condition("eq", 3, 4) is False and D.condition("eq", None, 3) is None
    assert D.satisfiable(D.condition("le", "T", 64)) and D.condition("le", "T", 64).text() == "T <= 64"
    assert D.condition("broadcast", "T", 5).text() == "T = 5 (or T = 1)"
    assert D.holds(D.condition("multiple", "T", 4), {"T": 12}) is True
    assert D.symbols_of("((T+3)//2)") == ["T"]


# Disagreements the held-out differential runs found, each a design small enough to read: torch is run
# here, eagerly, and the verdict must block exactly when it fails.
def _g(inputs, nodes, mode="train", seq_len=16):
    train = {"mode": mode, "seq_len": seq_len} if seq_len else {"mode": mode}
    return {"format": "archgraph/1", "name": "case", "train": train,
            "inputs": [{"id": f"x{i}", "shape": s, "dtype": d} for i, (s, d) in enumerate(inputs)],
            "nodes": [{"id": f"n{i}", "op": op, "args": args, "in": ins} for i, (op, args, ins) in enumerate(nodes)],
            "outputs": [f"n{len(nodes) - 1}"]}


def _one(op, args, *inputs, mode="train"):
    return _g(list(inputs), [(op, args, [f"x{i}" for i in range(len(inputs))])], mode)


def _ids(graph, vocab_size):
    """The graph with its first input declared as ids below vocab_size (the run draws the largest)."""
    graph["inputs"][0]["vocab_size"] = vocab_size
    return graph


FOUND = {
    # 1 element reshaped to [-1, T, T] needs T = 1: a sequence no real input has, so it blocks (issue 26;
    # it was a warn stating "1 is a multiple of T*T")
    "reshape-fill-of-one-element": _g([([5, "T", 2], "float32")], [("Amin", {}, ["x0"]),
                                                                  ("Reshape", {"shape": [-1, "T", "T"]}, ["n0"])],
                                      seq_len=None),
    # a norm without weights takes float64 (its row of the dtype table is measured on such args)
    "layernorm-no-affine-f64": _one("LayerNorm", {"normalized_shape": 4, "elementwise_affine": False},
                                    ([3, 4], "float64")),
    "layernorm-affine-f64": _one("LayerNorm", {"normalized_shape": 4}, ([3, 4], "float64")),
    "layernorm-no-affine-int": _one("LayerNorm", {"normalized_shape": 4, "elementwise_affine": False},
                                    ([3, 4], "int64")),
    "groupnorm-no-affine-f64": _one("GroupNorm", {"num_groups": 2, "num_channels": 4, "affine": False},
                                    ([3, 4, 5], "float64")),
    "hardtanh-u8-nonnegative": _one("Hardtanh", {"min_val": 0.5, "max_val": 2.0}, ([3, 4], "uint8")),
    "hardtanh-u8-default": _one("Hardtanh", {}, ([3, 4], "uint8")),
    "hardtanh-u8-limits-truncate-to-0": _one("Hardtanh", {"min_val": -0.53, "max_val": -0.281}, ([3, 4], "uint8")),
    "interpolate-nearest-u8": _one("Interpolate", {"size": [2, 7]}, ([2, 7, 12, 1], "uint8")),
    "interpolate-nearest-int64": _one("Interpolate", {"size": [2, 7]}, ([2, 7, 12, 1], "int64")),
    "interpolate-linear-u8": _one("Interpolate", {"scale_factor": 2, "mode": "linear"}, ([1, 2, 5], "uint8")),
    "pad-trim-value-unread": _one("ConstantPad1d", {"padding": -1, "value": -1.136}, ([3, 3, 16], "uint8")),
    "pad-fill-value-overflows": _one("ConstantPad1d", {"padding": 1, "value": -1.136}, ([3, 3, 16], "uint8")),
    "groupnorm-no-affine-indivisible": _one("GroupNorm", {"num_groups": 3, "num_channels": 160, "affine": False},
                                            ([2, 160, 4], "float32")),
    "reflection-pad-vs-declared-t": _g([([1, "T"], "float32")], [("ReflectionPad1d", {"padding": 16}, ["x0"])]),
    "reflection-pad-under-declared-t": _g([([1, "T"], "float32")], [("ReflectionPad1d", {"padding": 15}, ["x0"])]),
    "reflection-trim-to-empty": _one("ReflectionPad1d", {"padding": -2}, ([3, 4], "float32")),
    "replication-trim-to-one": _one("ReplicationPad1d", {"padding": [-1, -2]}, ([3, 4], "float32")),
    "circular-trim-to-empty": _one("CircularPad1d", {"padding": -2}, ([3, 4], "float32")),
    "avgpool3d-padded-window-past-input": _one("AvgPool3d", {"kernel_size": 3, "padding": 1},
                                               ([1, 2, 2, 8, 8], "float32")),
    "lppool3d-ceil-window-past-input": _one("LPPool3d", {"norm_type": 2, "kernel_size": 4, "ceil_mode": True},
                                            ([2, 3, 8, 8], "float32")),
    "maxpool3d-padded-window-past-input": _one("MaxPool3d", {"kernel_size": 3, "padding": 1},
                                               ([1, 2, 2, 8, 8], "float32")),
    "constant-pad-trims-left-first": _one("ConstantPad1d", {"padding": [-5, 3], "value": 0.0}, ([3, 4], "float32")),
    "constant-pad-trims-to-empty": _one("ConstantPad1d", {"padding": [-4, 3], "value": 0.0}, ([3, 4], "float32")),
    "circular-pad-trims-past": _one("CircularPad1d", {"padding": [-2, -3]}, ([3, 4], "float32")),
    "lstm-proj-not-smaller": _one("LSTM", {"input_size": 4, "hidden_size": 3, "proj_size": 3}, ([2, 5, 4], "float32")),
    "lstm-proj-smaller": _one("LSTM", {"input_size": 4, "hidden_size": 3, "proj_size": 2}, ([2, 5, 4], "float32")),
    "fractional2d-kernel-0": _one("FractionalMaxPool2d", {"kernel_size": 0, "output_ratio": 0.698},
                                  ([1, 1, 2, 3], "float32")),
    "fractional3d-kernel-0": _one("FractionalMaxPool3d", {"kernel_size": 0, "output_ratio": 0.5},
                                  ([1, 1, 4, 4, 4], "float32")),
    "interpolate-recompute-with-size": _one("Interpolate", {"size": 7, "recompute_scale_factor": True},
                                            ([1, 2, 5], "float32")),
    "roll-0d-along-dim": _g([([3], "float32")], [("Sum", {}, ["x0"]), ("Roll", {"shifts": 1, "dims": 0}, ["n0"])]),
    "roll-0d-without-dims": _g([([3], "float32")], [("Sum", {}, ["x0"]), ("Roll", {"shifts": 1}, ["n0"])]),
    "self-attention-half-into-float-weights": _one("MultiheadAttention", {"embed_dim": 7, "num_heads": 7},
                                                   ([3, 8, 7], "float16")),
    "rnncell-bfloat16-unbatched": _one("RNNCell", {"input_size": 8, "hidden_size": 8}, ([8], "bfloat16")),
    "upsample-scale-factor-list": _one("Upsample", {"scale_factor": [1.834, 0.345], "mode": "bilinear"},
                                       ([1, 16, 7, 7], "float32")),
    "conv2d-one-element-dilation": _one("Conv2d", {"in_channels": 4, "out_channels": 6, "kernel_size": 3,
                                                   "dilation": [2], "stride": [2], "padding": [1]},
                                        ([2, 4, 9, 9], "float32")),
    "conv2d-one-element-kernel": _one("Conv2d", {"in_channels": 4, "out_channels": 6, "kernel_size": [3]},
                                      ([2, 4, 9, 9], "float32")),
    "interpolate-bilinear-u8": _one("Interpolate", {"size": 16, "mode": "bilinear"}, ([2, 4, 7, 12], "uint8")),
    "interpolate-trilinear-u8": _one("Interpolate", {"size": 8, "mode": "trilinear"}, ([1, 2, 4, 4, 4], "uint8")),
    "fractional2d-kernel-negative": _one("FractionalMaxPool2d", {"kernel_size": -1, "output_size": 8},
                                         ([7, 20, 20], "float32")),
    "groupnorm-6d": _one("GroupNorm", {"num_groups": 1, "num_channels": 7}, ([2, 7, 3, 1, 5, 4], "float32")),
    "groupnorm-1d": _one("GroupNorm", {"num_groups": 1, "num_channels": 7, "affine": False}, ([7], "float32")),
    "pool-window-past-declared-t": _g([([2, "T"], "float32")], [("LPPool1d", {"norm_type": 2, "kernel_size": 17},
                                                                   ["x0"])]),
    "pool-window-fits-declared-t": _g([([2, "T"], "float32")], [("LPPool1d", {"norm_type": 2, "kernel_size": 16},
                                                                   ["x0"])]),
    "lrn-4d-bfloat16": _one("LocalResponseNorm", {"size": 2}, ([2, 5, 4, 4], "bfloat16")),
    "lrn-3d-bfloat16": _one("LocalResponseNorm", {"size": 2}, ([2, 5, 4], "bfloat16")),
    "conv-same-strided": _one("Conv2d", {"in_channels": 4, "out_channels": 3, "kernel_size": 3, "stride": [2],
                                         "padding": "same"}, ([2, 4, 9, 9], "float32")),
    "conv-same-unstrided": _one("Conv2d", {"in_channels": 4, "out_channels": 3, "kernel_size": 3, "stride": [1],
                                           "padding": "same"}, ([2, 4, 9, 9], "float32")),
    "hardtanh-bool-nonnegative": _one("Hardtanh", {"min_val": 0.5, "max_val": 2.0}, ([3, 4], "bool")),
    # einsum: an outer product is a multiply (promotes); a contraction is a bmm (one dtype, no bool)
    "einsum-outer-mixed": _one("Einsum", {"equation": "i,j->ij"}, ([3], "int64"), ([4], "float32")),
    "einsum-scalar-mixed": _one("Einsum", {"equation": ",jil->i"}, ([], "int64"), ([2, 3, 4], "float32")),
    "einsum-contract-mixed": _one("Einsum", {"equation": "i,i"}, ([3], "int64"), ([3], "float32")),
    "einsum-contract-bool": _one("Einsum", {"equation": "ij,j->i"}, ([3, 4], "bool"), ([4], "bool")),
    "einsum-outer-bool": _one("Einsum", {"equation": "i,j->ij"}, ([3], "bool"), ([4], "bool")),
    "einsum-contract-u8": _one("Einsum", {"equation": "ij,jk->ik"}, ([3, 4], "uint8"), ([4, 5], "uint8")),
    "einsum-third-contracted": _one("Einsum", {"equation": "i,j,j->"}, ([3], "float32"), ([4], "float32"),
                                    ([4], "int64")),
    # whether a summed size is 1 decides what torch sums alone and what it contracts (one dtype there)
    "einsum-size-1-sum-is-a-multiply": _one("Einsum", {"equation": "ij,j"}, ([3, 1], "float64"), ([1], "float32")),
    "einsum-contracted-at-last-big-operand": _one("Einsum", {"equation": "ij,j,j"}, ([3, 2], "float64"),
                                                  ([2], "float32"), ([1], "float64")),
    "einsum-size-1-label-squeezed-not-summed": _g([([3, 1], "int32"), ([4], "int32"), ([4], "int64")],
                                                  [("Einsum", {"equation": "ij,k->ik"}, ["x0", "x1"]),
                                                   ("Einsum", {"equation": "ik,k->i"}, ["n0", "x2"])]),
    "einsum-diagonal-of-1-and-t": _g([([1, "T"], "float64")], [("Einsum", {"equation": "jj->j"}, ["x0"])]),
    # dtypes torch gives: a sum of bools is int64, a distance of ints is float, a bool Constant is bool
    "sum-of-bools-into-einsum": _g([([4], "bool")], [("Sum", {}, ["x0"]), ("Einsum", {"equation": "i,,j->ij"},
                                                                              ["x0", "n0", "x0"])]),
    "distance-of-ints-is-float": _g([([3, 4], "int64"), ([3, 4], "float32")],
                                    [("PairwiseDistance", {}, ["x0", "x1"]), ("Hardswish", {}, ["n0"])]),
    "sum-of-uint8-is-int64": _g([([3, 4], "uint8"), ([3, 1], "float32")],
                                [("Sum", {"keepdim": True}, ["x0"]), ("PairwiseDistance", {}, ["n0", "x1"]),
                                 ("Softshrink", {}, ["n1"])]),
    "bool-constant-as-condition": _g([([5, 1], "float32")], [("Constant", {"shape": [1], "value": False}, []),
                                                             ("Where", {}, ["n0", "x0", "n0"])]),
    "roll-no-dims": _one("Roll", {"shifts": 6, "dims": []}, ([3, 4], "float32")),
    "roll-two-shifts-no-dims": _one("Roll", {"shifts": [5, 1], "dims": []}, ([3, 4], "float32")),
    "upsampling-one-size-3d": _one("UpsamplingNearest2d", {"size": [5]}, ([2, 3, 4], "float32")),
    "upsampling-one-size-4d": _one("UpsamplingNearest2d", {"size": [5]}, ([2, 3, 4, 4], "float32")),
    # is_causal without a key padding mask: torch drops the mask without reading its shape
    "causal-mask-unread": _one("TransformerEncoderLayer", {"d_model": 6, "nhead": 3, "is_causal": True},
                               ([2, 2, 6], "float32"), ([2, 2, 6], "float32")),
    "mask-read-without-causal": _one("TransformerEncoderLayer", {"d_model": 6, "nhead": 3},
                                     ([2, 2, 6], "float32"), ([2, 2, 6], "float32")),
    "batchnorm-features-unread": _one("BatchNorm1d", {"num_features": -1, "affine": False,
                                                      "track_running_stats": False}, ([3, 4, 5], "float32")),
    "batchnorm-negative-features": _one("BatchNorm1d", {"num_features": -1, "affine": False}, ([3, 4, 5], "float32")),
    "batchnorm-negative-eps-eval": _one("BatchNorm1d", {"num_features": 4, "eps": -0.5}, ([3, 4], "float32"),
                                        mode="eval"),
    "batchnorm-zero-eps-eval": _one("BatchNorm1d", {"num_features": 4, "eps": 0.0}, ([3, 4], "float32"),
                                    mode="eval"),
    "batchnorm-zero-eps-train": _one("BatchNorm1d", {"num_features": 4, "eps": 0.0}, ([3, 4], "float32")),
    # a 0-D tensor takes a 0-D bool mask (one element or none) and no other index
    "index-0d-by-0d-mask": _g([([3], "float32")], [("Sum", {}, ["x0"]), ("Constant", {"shape": [], "value": True}, []),
                                                   ("Index", {"dim": 0}, ["n0", "n1"])]),
    "index-0d-by-0d-ids": _g([([3], "float32")], [("Sum", {}, ["x0"]), ("Constant", {"shape": [], "value": 0}, []),
                                                  ("Index", {"dim": 0}, ["n0", "n1"])]),
    "index-0d-by-1d-mask": _g([([3], "float32")], [("Sum", {}, ["x0"]), ("Constant", {"shape": [1], "value": True}, []),
                                                   ("Index", {"dim": 0}, ["n0", "n1"])]),
    # torch's eval fast path (even heads, batch first, no autograd) reads a mask by its element count and
    # takes is_causal without one; with odd heads the Python path checks the mask's shape
    "encoder-fast-path-mask-by-count": _one("TransformerEncoderLayer", {"d_model": 6, "nhead": 6, "batch_first": True},
                                            ([3, 1, 6], "float32"), ([3, 1, 6], "float32"), mode="eval"),
    "encoder-fast-path-mask-bad-count": _one("TransformerEncoderLayer", {"d_model": 6, "nhead": 6,
                                                                         "batch_first": True},
                                             ([3, 1, 6], "float32"), ([3, 1, 5], "float32"), mode="eval"),
    "encoder-odd-heads-mask-shape": _one("TransformerEncoderLayer", {"d_model": 6, "nhead": 3, "batch_first": True},
                                         ([3, 2, 6], "float32"), ([4], "float32"), mode="eval"),
    "encoder-fast-path-1d-mask": _one("TransformerEncoderLayer", {"d_model": 6, "nhead": 2, "batch_first": True},
                                      ([3, 2, 6], "float32"), ([4], "float32"), mode="eval"),
    "encoder-fast-path-causal-no-mask": _one("TransformerEncoderLayer", {"d_model": 6, "nhead": 2, "batch_first": True,
                                                                         "is_causal": True},
                                             ([3, 2, 6], "float32"), mode="eval"),
    "encoder-fast-path-causal-mask-read": _one("TransformerEncoderLayer", {"d_model": 6, "nhead": 2,
                                                                           "batch_first": True, "is_causal": True},
                                               ([3, 2, 6], "float32"), ([5, 5], "float32"), mode="eval"),
    "encoder-fast-path-padding-beside": _one("TransformerEncoderLayer", {"d_model": 6, "nhead": 2,
                                                                         "batch_first": True},
                                             ([3, 2, 6], "float32"), ([2, 2], "bool"), ([2, 3], "bool"), mode="eval"),
    "encoder-stack-padding-exact": _one("TransformerEncoder", {"encoder_layer": {"d_model": 6, "nhead": 2,
                                                                                 "batch_first": True},
                                                               "num_layers": 2},
                                        ([3, 2, 6], "float32"), ([2, 2], "bool"), ([2, 3], "bool"), mode="eval"),
    "mha-odd-heads-causal-no-mask": _one("MultiheadAttention", {"embed_dim": 6, "num_heads": 3, "batch_first": True,
                                                                "is_causal": True}, ([3, 2, 6], "float32"),
                                         mode="eval"),
    "mha-fast-path-mask-by-count": _g([([3, 2, 6], "float32"), ([3, 4, 2], "bool")],
                                      [("MultiheadAttention", {"embed_dim": 6, "num_heads": 2, "batch_first": True},
                                        ["x0", "x0", "x0", "x1"])], mode="eval"),
    "mha-float-mask-slow-path": _g([([3, 2, 6], "float32"), ([3, 4, 2], "float32")],
                                   [("MultiheadAttention", {"embed_dim": 6, "num_heads": 2, "batch_first": True},
                                     ["x0", "x0", "x0", "x1"])], mode="eval"),
    "decoder-fast-path-bool-1d-mask": _one("TransformerDecoderLayer", {"d_model": 6, "nhead": 2, "batch_first": True},
                                           ([3, 2, 6], "float32"), ([3, 5, 6], "float32"), ([4], "bool"), mode="eval"),
    "decoder-float-1d-mask": _one("TransformerDecoderLayer", {"d_model": 6, "nhead": 2, "batch_first": True},
                                  ([3, 2, 6], "float32"), ([3, 5, 6], "float32"), ([4], "float32"), mode="eval"),
    # a table of 0 rows has no id to look up
    "embedding-0-rows": _one("Embedding", {"num_embeddings": 0, "embedding_dim": 3}, ([2, 4], "int64")),
    "bag-0-rows": _one("EmbeddingBag", {"num_embeddings": 0, "embedding_dim": 3}, ([2, 4], "int64")),
    # id ranges follow ReLU (keeps), ReLU6 (clips at 6), eval-mode dropout (identity) and Chunk's pieces
    "gather-ids-through-relu6-past": _ids(_g([([3, 1], "int64")], [("ReLU6", {}, ["x0"]), ("ReLU", {}, ["n0"]),
                                                                    ("Gather", {"dim": 0}, ["n1", "n1"])]), 32),
    "gather-ids-through-relu6-within": _ids(_g([([3, 1], "int64"), ([7, 1], "float32")],
                                               [("ReLU6", {}, ["x0"]), ("Gather", {"dim": 0}, ["x1", "n0"])]), 32),
    "bag-ids-through-eval-dropout": _ids(_g([([6, 6], "int32")], [("Dropout2d", {"p": 0.8}, ["x0"]),
                                                                  ("EmbeddingBag", {"num_embeddings": 6,
                                                                                    "embedding_dim": 6}, ["n0"])],
                                            mode="eval"), 8),
    "embedding-ids-in-a-chunk-past": _ids(_g([([4, 2], "int64")], [("Chunk", {"chunks": 2}, ["x0"]),
                                                                   ("Embedding", {"num_embeddings": 5,
                                                                                  "embedding_dim": 3}, ["n0:1"])]), 10),
    "embedding-ids-in-a-chunk-within": _ids(_g([([4, 2], "int64")], [("Chunk", {"chunks": 2}, ["x0"]),
                                                                     ("Embedding", {"num_embeddings": 10,
                                                                                    "embedding_dim": 3}, ["n0:1"])]),
                                            10),
    # an einops split of a symbolic size needs a multiple: a block when the declared size is not one
    "rearrange-split-declared-t-indivisible": _g([([2, "T"], "float32")],
                                                 [("Rearrange", {"pattern": "a0 (a1 p) -> p a0 a1", "p": 3}, ["x0"])]),
    "rearrange-split-declared-t-divisible": _g([([2, "T"], "float32")],
                                               [("Rearrange", {"pattern": "a0 (a1 p) -> p a0 a1", "p": 4}, ["x0"])]),
    "glu-declared-t-even": _g([([2, "T"], "float32")], [("GLU", {}, ["x0"])]),
    # a null size of a constant is one size: 12 * it = 18 has no solution
    "reshape-null-size-impossible": _g([], [("Constant", {"shape": [12, None]}, []),
                                            ("Reshape", {"shape": [6, 3]}, ["n0"])]),
    # batch statistics (eval mode without running statistics too) need more than one value
    "batchnorm-eval-batch-stats-one-value": _one("BatchNorm1d", {"num_features": 1, "track_running_stats": False},
                                                 ([1, 1], "float32"), mode="eval"),
    "batchnorm-eval-running-stats-one-value": _one("BatchNorm1d", {"num_features": 1}, ([1, 1], "float32"),
                                                   mode="eval"),
    "instancenorm-eval-one-spatial": _one("InstanceNorm1d", {"num_features": 3}, ([2, 3, 1], "float32"), mode="eval"),
    "instancenorm-eval-running-stats-one-spatial": _one("InstanceNorm1d", {"num_features": 3,
                                                                           "track_running_stats": True},
                                                        ([2, 3, 1], "float32"), mode="eval"),
    # id ranges through Amax (it keeps the largest) and Concat (all its operands' values)
    "gather-ids-through-amax": _ids(_g([(["B", "T", 1, 3], "int64")], [("Amax", {"dim": 1}, ["x0"]),
                                                                       ("Gather", {"dim": -1}, ["n0", "n0"])]), 8),
    "gather-ids-through-concat": _ids(_g([([3], "int64")], [("Concat", {"dim": -1}, ["x0", "x0"]),
                                                            ("Gather", {"dim": 0}, ["x0", "n0"])]), 4),
    # a transposed conv's output padding must be smaller than its stride or its dilation
    "conv-transpose-output-padding-1-stride-1": _one("ConvTranspose2d", {"in_channels": 2, "out_channels": 3,
                                                                         "kernel_size": 3, "output_padding": 1},
                                                     ([1, 2, 5, 5], "float32")),
    "conv-transpose-output-padding-1-dilation-2": _one("ConvTranspose2d", {"in_channels": 2, "out_channels": 3,
                                                                           "kernel_size": 3, "dilation": 2,
                                                                           "output_padding": 1},
                                                       ([1, 2, 5, 5], "float32")),
    "conv-transpose-output-padding-2-stride-2": _one("ConvTranspose2d", {"in_channels": 2, "out_channels": 3,
                                                                         "kernel_size": 3, "stride": 2,
                                                                         "output_padding": 2},
                                                     ([1, 2, 5, 5], "float32")),
    # Bilinear's inputs share their batch dims exactly: no broadcasting, same rank
    "bilinear-batch-1-against-3": _one("Bilinear", {"in1_features": 4, "in2_features": 5, "out_features": 2},
                                       ([3, 4], "float32"), ([1, 5], "float32")),
    "bilinear-ranks-differ": _one("Bilinear", {"in1_features": 4, "in2_features": 5, "out_features": 2},
                                  ([2, 3, 4], "float32"), ([3, 5], "float32")),
    "bilinear-3d-same-batch": _one("Bilinear", {"in1_features": 4, "in2_features": 5, "out_features": 2},
                                   ([2, 3, 4], "float32"), ([2, 3, 5], "float32")),
    # Threshold below 0 keeps every id; above, ids at or below it become its value
    "gather-ids-through-threshold": _ids(_g([([3], "int64")], [("Threshold", {"threshold": -0.5, "value": 0.3},
                                                                ["x0"]), ("Gather", {"dim": 0}, ["x0", "n0"])]), 4),
    # training mode: an in-place op on (a view of) a Chunk/Split result that needs gradients
    "inplace-on-chunk-of-linear-train": _g([([2, 4], "float32")],
                                           [("Linear", {"in_features": 4, "out_features": 4}, ["x0"]),
                                            ("Chunk", {"chunks": 2}, ["n0"]), ("Unsqueeze", {"dim": 0}, ["n1:1"]),
                                            ("ReLU", {"inplace": True}, ["n2"])]),
    "inplace-on-chunk-of-linear-eval": _g([([2, 4], "float32")],
                                          [("Linear", {"in_features": 4, "out_features": 4}, ["x0"]),
                                           ("Chunk", {"chunks": 2}, ["n0"]), ("ReLU", {"inplace": True}, ["n1:1"])],
                                          mode="eval"),
    "inplace-on-chunk-of-input-train": _g([([2, 4], "float32")], [("Split", {"split_size_or_sections": 2, "dim": 1},
                                                                   ["x0"]), ("ReLU", {"inplace": True}, ["n0:1"])]),
    # a Reshape's -1 over a symbolic count: the known part must divide it
    "reshape-fill-never-divides": _g([(["B", 12, 5], "float32")], [("Reshape", {"shape": [-1, 7, "B"]}, ["x0"])],
                                     mode="eval"),
    "reshape-fill-divides": _g([(["B", 12, 5], "float32")], [("Reshape", {"shape": [-1, 6, "B"]}, ["x0"])],
                               mode="eval"),
    # a 0-D input takes index 0 only; a running sum of ids is at least each id
    "index-select-0d-by-largest-id": _ids(_g([([2, "T"], "int64")], [("Amax", {}, ["x0"]),
                                                                     ("IndexSelect", {"dim": -1}, ["n0", "n0"])]), 4),
    "embedding-ids-through-cumsum": _ids(_g([([8, "T", 6], "int64")], [("Cumsum", {"dim": 0}, ["x0"]),
                                                                       ("Embedding", {"num_embeddings": 4,
                                                                                      "embedding_dim": 8}, ["n0"])],
                                            mode="eval"), 16),
    # an LSTM with proj_size takes h_0 of the projected width; a LayerNorm fed a 1-D input through a reshape
    "lstm-proj-h0-hidden-width": _one("LSTM", {"input_size": 4, "hidden_size": 3, "proj_size": 2, "batch_first": True},
                                      ([2, 5, 4], "float32"), ([1, 2, 3], "float32")),
    "lstm-proj-h0-projected-width": _one("LSTM", {"input_size": 4, "hidden_size": 3, "proj_size": 2,
                                                  "batch_first": True}, ([2, 5, 4], "float32"), ([1, 2, 2], "float32")),
    "layernorm-1d-through-reshape": _g([([2, 4], "float32")], [("Reshape", {"shape": [-1]}, ["x0"]),
                                                               ("LayerNorm", {"normalized_shape": [16]}, ["n0"])]),
    # negative constant padding over a symbolic size trims it: the declared size must hold the trim
    "constant-pad-trims-past-declared-t": _g([([2, "T"], "float32")], [("ConstantPad1d", {"padding": [-9, -8],
                                                                                          "value": 0.0}, ["x0"])]),
    "constant-pad-trims-declared-t-to-empty": _g([([2, "T"], "float32")],
                                                 [("ConstantPad1d", {"padding": [-8, -8], "value": 0.0}, ["x0"])]),
    # FractionalMaxPool3d wants output + kernel - 1 < size (the 2-D one allows equality)
    "fractional3d-window-reaches-the-end": _one("FractionalMaxPool3d", {"kernel_size": 2, "output_size": 3},
                                                ([1, 1, 4, 4, 4], "float32")),
    "fractional3d-window-inside": _one("FractionalMaxPool3d", {"kernel_size": 2, "output_size": 2},
                                       ([1, 1, 4, 4, 4], "float32")),
    "fractional2d-window-reaches-the-end": _one("FractionalMaxPool2d", {"kernel_size": 3, "output_size": 2},
                                                ([1, 1, 4, 4], "float32")),
    # an Arange's values are known: a Select or Slice of it holds the picked positions only
    "arange-select-first-into-one-row": _g([], [("Arange", {"end": 7}, []), ("Select", {"dim": 0, "index": 0}, ["n0"]),
                                                ("Embedding", {"num_embeddings": 1, "embedding_dim": 3}, ["n1"])]),
    "arange-select-fourth-into-three-rows": _g([], [("Arange", {"end": 7}, []),
                                                    ("Select", {"dim": 0, "index": 3}, ["n0"]),
                                                    ("Embedding", {"num_embeddings": 3, "embedding_dim": 3}, ["n1"])]),
    "arange-through-eval-dropout-select": _g([([2], "float32")], [("Arange", {"end": 7}, []),
                                                                  ("Dropout", {}, ["n0"]),
                                                                  ("Select", {"dim": 0, "index": 1}, ["n1"]),
                                                                  ("Gather", {"dim": 0}, ["n2", "n2"])], mode="eval"),
    "arange-slice-into-its-rows": _g([], [("Arange", {"end": 7}, []),
                                          ("Slice", {"dim": 0, "start": 1, "end": 6, "step": 2}, ["n0"]),
                                          ("Embedding", {"num_embeddings": 6, "embedding_dim": 3}, ["n1"])]),
    "arange-slice-past-its-rows": _g([], [("Arange", {"end": 7}, []), ("Slice", {"dim": 0, "end": 4}, ["n0"]),
                                          ("Embedding", {"num_embeddings": 3, "embedding_dim": 3}, ["n1"])]),
    # a max pool's indices reach at least the first corner of its last window (flattened spatial position)
    "pool-indices-past-the-table": _g([([2, 6, 16, 16, 5], "float32")],
                                      [("AdaptiveMaxPool3d", {"output_size": [1, 5, 6], "return_indices": True},
                                        ["x0"]),
                                       ("Embedding", {"num_embeddings": 7, "embedding_dim": 1}, ["n0:1"])],
                                      mode="eval"),
    "pool-indices-within-the-table": _g([([2, 3, 8], "float32")],
                                        [("MaxPool1d", {"kernel_size": 2, "return_indices": True}, ["x0"]),
                                         ("Embedding", {"num_embeddings": 8, "embedding_dim": 1}, ["n0:1"])],
                                        mode="eval"),
    # Squeeze of a symbol the design declares as 1 drops that dim
    "squeeze-declared-t-of-1": {**_g([(["B", "T", 12], "float32")], [("Squeeze", {"dim": 1}, ["x0"]),
                                                                    ("Reduce", {"pattern": "a0 a1 -> a0",
                                                                                "reduction": "sum"}, ["n0"])]),
                                "train": {"mode": "train", "seq_len": 1}},
    # F.pad narrows its negative sides away first, as the padding layers do
    "pad-trims-past-the-size": _one("Pad", {"pad": [1, -2]}, ([3, 1], "float32")),
    "pad-trims-to-empty-then-pads": _one("Pad", {"pad": [1, -1]}, ([3, 1], "float32")),
    # padding copies the ids (and adds its fill)
    "embedding-ids-through-replication-pad": _ids(_g([([8, 2, 6], "int64")],
                                                     [("ReplicationPad1d", {"padding": 1}, ["x0"]),
                                                      ("Embedding", {"num_embeddings": 5, "embedding_dim": 2},
                                                       ["n0"])]), 8),
    "embedding-ids-through-constant-pad-fill": _ids(_g([([2, 6], "int64")],
                                                       [("ConstantPad1d", {"padding": 1, "value": 9.0}, ["x0"]),
                                                        ("Embedding", {"num_embeddings": 9, "embedding_dim": 2},
                                                         ["n0"])]), 4),
    # a constant slice of a symbolic size is 0..end-start long whatever the size (gen-78854: 6:8 of T meets 6)
    "slice-of-t-never-the-matmul-width": _g([([6, "T"], "float64")],
                                            [("Slice", {"dim": -1, "start": 6, "end": 8}, ["x0"]),
                                             ("MatMul", {}, ["n0", "x0"])], seq_len=None),
    "slice-of-t-can-fit-the-matmul": _g([([6, "T"], "float32"), ([6, 4], "float32")],
                                        [("Slice", {"dim": -1, "start": 0, "end": 6}, ["x0"]),
                                         ("MatMul", {}, ["n0", "x1"])], seq_len=None),
    "negative-slice-of-t-never-the-width": _g([([3, "T"], "float32"), ([5, 4], "float32")],
                                              [("Slice", {"dim": 1, "start": -3, "end": -1}, ["x0"]),
                                               ("MatMul", {}, ["n0", "x1"])], seq_len=None),
    # ids are never negative: x + x and x * x double and square the largest, a sum reaches the larger range
    "ids-doubled-past-the-gather": _ids(_g([([1], "int64")], [("Add", {}, ["x0", "x0"]),
                                                              ("Gather", {"dim": 0}, ["n0", "n0"])]), 2),
    "ids-squared-past-the-table": _ids(_g([([4], "int64")], [("Mul", {}, ["x0", "x0"]),
                                                             ("Embedding", {"num_embeddings": 9, "embedding_dim": 2},
                                                              ["n0"])]), 4),
    "ids-squared-within-the-table": _ids(_g([([4], "int64")], [("Mul", {}, ["x0", "x0"]),
                                                               ("Embedding", {"num_embeddings": 10,
                                                                              "embedding_dim": 2}, ["n0"])]), 4),
    "ids-plus-positions-past-the-table": _ids(_g([([4], "int64")], [("Arange", {"end": 4}, []),
                                                                    ("Add", {}, ["x0", "n0"]),
                                                                    ("Embedding", {"num_embeddings": 6,
                                                                                   "embedding_dim": 2}, ["n1"])]), 8),
    # an einops Reduce that keeps every axis only rearranges the ids (gen-66158)
    "ids-through-a-reduce-of-nothing": _ids(_g([([3], "int64")],
                                               [("Reduce", {"pattern": "(a0 p) -> p a0", "reduction": "prod", "p": 1},
                                                 ["x0"]),
                                                ("Embedding", {"num_embeddings": 3, "embedding_dim": 3}, ["n0"])]), 32),
    # a constant pad's negative fill puts -1 among integer values: gather, index_select and the lookups refuse
    # it (gen-67303), tensor indexing wraps it
    "negative-fill-into-gather": _g([([2, 4], "int64")], [("Sub", {}, ["x0", "x0"]),
                                                          ("ConstantPad1d", {"padding": 2, "value": -1.24}, ["n0"]),
                                                          ("Gather", {"dim": 1}, ["n1", "n1"])], mode="eval"),
    "negative-fill-into-index-select": _g([([4], "int64"), ([3, 5], "float32")],
                                          [("ConstantPad1d", {"padding": 1, "value": -1.0}, ["x0"]),
                                           ("IndexSelect", {"dim": 1}, ["x1", "n0"])]),
    "negative-fill-into-embedding": _g([([2, 4], "int64")],
                                       [("Pad", {"pad": [0, 1], "value": -2.0}, ["x0"]), ("Flatten", {}, ["n0"]),
                                        ("Embedding", {"num_embeddings": 5, "embedding_dim": 2}, ["n1"])]),
    # an in-place op rewrites its operand: a later read of it does not hold the declared ids (gen-28737)
    "ids-clamped-in-place-before-indexing": _ids(_g([([7, 4], "int64")], [("Hardtanh", {"inplace": True}, ["x0"]),
                                                                          ("Index", {}, ["n0", "x0"])]), 16),
    "ids-kept-by-an-in-place-threshold": _ids(_g([(["B", 12, 7, 3], "int64")],
                                                  [("ZeroPad2d", {"padding": 3}, ["x0"]),
                                                   ("Threshold", {"threshold": -1.214, "value": -0.807,
                                                                  "inplace": True}, ["n0"]),
                                                   ("Embedding", {"num_embeddings": 12, "embedding_dim": 9},
                                                    ["n0"])]), 16),
    # reflection: a side that pads must be smaller than the size, a side that trims is limited by the result
    # alone (gen-87548)
    "reflection-trims-as-much-as-the-size": _one("ReflectionPad1d", {"padding": [1, -2]}, ([1, 3, 2], "float32")),
    "reflection-pads-as-much-as-the-size": _one("ReflectionPad1d", {"padding": [2, -1]}, ([1, 3, 2], "float32")),
    "reflection-trims-a-symbol": _g([([1, "T"], "float32")], [("ReflectionPad1d", {"padding": [2, -9]}, ["x0"])],
                                    seq_len=10),
    # a window against a symbolic size states its condition, or blocks on a declared size it does not fit
    # (gen-85768, gen-84324)
    "unfold-window-past-declared-t": _g([([3, 4, 1, "T"], "float32")], [("Unfold", {"kernel_size": [1, 3]}, ["x0"])],
                                        seq_len=2),
    "unfold-window-within-declared-t": _g([([3, 4, 1, "T"], "float32")],
                                          [("Unfold", {"kernel_size": [1, 3]}, ["x0"])], seq_len=3),
    "fractional2d-output-past-declared-t": _g([([1, "T", 13], "float32")],
                                              [("FractionalMaxPool2d", {"kernel_size": 1, "output_size": [9, 1]},
                                                ["x0"])], seq_len=7),
    "fractional2d-output-within-declared-t": _g([([1, "T", 13], "float32")],
                                                [("FractionalMaxPool2d", {"kernel_size": 1, "output_size": [9, 1]},
                                                  ["x0"])], seq_len=9),
    # only the 1-D reflection and replication layers refuse an empty result
    "reflection2d-trims-to-width-0": _one("ReflectionPad2d", {"padding": [-1, -1, 0, 0]}, ([1, 1, 5, 2], "float32")),
    "replication3d-trims-to-depth-0": _one("ReplicationPad3d", {"padding": [0, 0, 0, 0, -1, -1]},
                                           ([1, 1, 2, 3, 5], "float32")),
    "replication1d-trims-to-width-0": _one("ReplicationPad1d", {"padding": [-1, -1]}, ([1, 3, 2], "float32")),
    "negative-fill-clamped-in-place": _g([([2, 4], "int64")],
                                         [("Sub", {}, ["x0", "x0"]),
                                          ("ConstantPad1d", {"padding": 1, "value": -1.0}, ["n0"]),
                                          ("ReLU", {"inplace": True}, ["n1"]),
                                          ("Gather", {"dim": 1}, ["n2", "n1"])]),
    # a Constant's null size runs as 1: whether Squeeze drops it is unknown (gen-29491)
    "squeeze-of-a-null-size": _g([], [("Constant", {"shape": [4, None], "value": -0.5}, []), ("Squeeze", {}, ["n0"]),
                                      ("Repeat", {"pattern": "(a0 p) -> p a0", "p": 1}, ["n1"])]),
    # circular padding copies bools; reflection and replication have no bool kernel (gen-29826)
    "circular-pad-of-bools": _one("Pad", {"pad": [11, 4], "mode": "circular"}, ([4, 16, 11], "bool")),
    "reflect-pad-of-bools": _one("Pad", {"pad": [1, 1], "mode": "reflect"}, ([4, 16, 11], "bool")),
    "negative-fill-into-indexing": _g([([4], "int64"), ([3, 5], "float32")],
                                      [("Sub", {}, ["x0", "x0"]),
                                       ("ConstantPad1d", {"padding": 1, "value": -1.0}, ["n0"]),
                                       ("Index", {}, ["x1", "n1"])]),
    "sum-same-dim-twice": _one("Sum", {"dim": [-1, 1]}, ([3, 4], "float32")),
    "amax-two-dims": _one("Amax", {"dim": [0, -1]}, ([3, 4], "float32")),
    # training-mode dropout with p = 0 returns its input and with p = 1 multiplies by zeros, in any dtype
    # (gen-94361, the fresh 90,000 range's false block); 0 < p < 1 rescales and refuses integers
    "dropout-p1-int-train": _one("Dropout", {"p": 1}, ([3, 4], "int64")),
    "dropout-p0-bool-train": _one("AlphaDropout", {"p": 0}, ([3, 4], "bool")),
    "dropout-p-half-int-train": _one("Dropout2d", {"p": 0.5}, ([2, 3, 4], "int64")),
    # every matmul kernel needs one dtype, nothing promotes (gen-97597: an InstanceNorm keeps bfloat16, then
    # meets a float32 operand)
    "matmul-bf16-by-f32": _g([([3, 7], "bfloat16"), ([7, 3], "float32")],
                             [("InstanceNorm1d", {"num_features": 6, "eps": 0.5}, ["x0"]),
                              ("MatMul", {}, ["n0", "x1"])]),
    "matmul-f64-by-f32-batched": _g([([4, 2, 3], "float64"), ([3, 2], "float32")], [("MatMul", {}, ["x0", "x1"])]),
    "matmul-int32-by-int64": _g([([3], "int32"), ([3, 2], "int64")], [("MatMul", {}, ["x0", "x1"])]),
    "matmul-f16-by-f16": _g([([2, 3], "float16"), ([3, 2], "float16")], [("MatMul", {}, ["x0", "x1"])]),
    # the fresh 100,000 range: a convolution with no output channels fails in forward (gen-100099; the
    # transposed one in the CPU's kernel, gen-80938), and group_norm wants more than one value per group
    # in eval mode too (gen-109133)
    "conv1d-no-out-channels": _one("Conv1d", {"in_channels": 5, "out_channels": 0, "kernel_size": 1},
                                   ([2, 5, 8], "float32")),
    "convtranspose2d-no-out-channels": _one("ConvTranspose2d", {"in_channels": 3, "out_channels": 0,
                                                                "kernel_size": 1}, ([2, 3, 4, 4], "float32")),
    "groupnorm-one-value-per-group-eval": _one("GroupNorm", {"num_groups": 2, "num_channels": 2},
                                               ([1, 2, 1], "float32"), mode="eval"),
    "groupnorm-one-value-per-group-train": _one("GroupNorm", {"num_groups": 4, "num_channels": 4},
                                                ([1, 4], "float32")),
    "groupnorm-two-values-per-group": _one("GroupNorm", {"num_groups": 1, "num_channels": 2}, ([1, 2, 1], "float32")),
    # the fresh 120,000 and 130,000 ranges: MultiheadAttention applies dropout only above 0 and only in
    # training (gen-122055, gen-137432 were false blocks); a promoting op is judged at the promoted dtype
    # (gen-123459: int64 with bool is int64, which cosine similarity refuses); F.pad's constant fill must fit
    # an integer input as the padding layers' does (gen-133502)
    "mha-negative-dropout-train": _one("MultiheadAttention", {"embed_dim": 4, "num_heads": 2, "dropout": -0.5},
                                       ([3, 2, 4], "float32")),
    "mha-dropout-above-one-train": _one("MultiheadAttention", {"embed_dim": 4, "num_heads": 2, "dropout": 1.5},
                                        ([3, 2, 4], "float32")),
    "mha-dropout-above-one-eval": _one("MultiheadAttention", {"embed_dim": 4, "num_heads": 2, "dropout": 1.5},
                                       ([3, 2, 4], "float32"), mode="eval"),
    "cosine-similarity-int64-with-bool": _g([([8, 3], "bool")], [("Sum", {}, ["x0"]),
                                                                 ("CosineSimilarity", {}, ["n0", "x0"])]),
    "cosine-similarity-float-with-int": _one("CosineSimilarity", {}, ([8, 3], "float32"), ([8, 3], "int64")),
    "add-uint8-with-0d-int64": _g([([4, 3], "uint8"), ([4, 3], "int64")], [("Sum", {}, ["x1"]),
                                                                           ("Add", {}, ["x0", "n0"])]),
    "functional-pad-fill-overflows-uint8": _one("Pad", {"pad": [6, 2], "value": -1.916}, ([5, 4], "uint8")),
    "functional-pad-fill-fits-uint8": _one("Pad", {"pad": [6, 2], "value": 7}, ([5, 4], "uint8")),
    # the fresh 180,000..210,000 ranges: what writes in place into an Expand whose elements share memory
    # fails (gen-204419), alpha dropout and Threshold do not write it, nor does dropout in eval; alpha dropout
    # in place on a Parameter runs (gen-181876 was a false block); an unbatched RNNCell takes h [H, H]
    # (gen-189936, a false block); a transposed convolution takes dilation 0 where its kernel is 1 wide
    # (gen-214866, a false block)
    "rrelu-in-place-on-an-expand": _g([([1, 4], "float32")], [("Expand", {"shape": [3, 4]}, ["x0"]),
                                                               ("RReLU", {"inplace": True}, ["n0"])]),
    "relu-in-place-on-a-permuted-expand-eval": _g([([4, 1], "float32")],
                                                  [("Expand", {"shape": [4, 3]}, ["x0"]),
                                                   ("Transpose", {"dim0": 0, "dim1": 1}, ["n0"]),
                                                   ("ReLU", {"inplace": True}, ["n1"])], mode="eval"),
    "dropout-in-place-on-an-expand-eval": _g([([1, 4], "float32")], [("Expand", {"shape": [3, 4]}, ["x0"]),
                                                                      ("Dropout", {"inplace": True}, ["n0"])],
                                             mode="eval"),
    "threshold-in-place-on-an-expand": _g([([1, 4], "float32")],
                                          [("Expand", {"shape": [3, 4]}, ["x0"]),
                                           ("Threshold", {"threshold": 0.1, "value": 0.0, "inplace": True},
                                            ["n0"])]),
    "relu-in-place-on-an-expand-to-one": _g([([1, 4], "float32")], [("Expand", {"shape": [1, 4]}, ["x0"]),
                                                                     ("ReLU", {"inplace": True}, ["n0"])]),
    "alpha-dropout-in-place-on-a-parameter": _g([], [("Parameter", {"shape": [7, 9]}, []),
                                                     ("FeatureAlphaDropout", {"p": 0.6, "inplace": True}, ["n0"])]),
    "rnncell-unbatched-square-h": _g([([8], "float32"), ([8, 8], "float32")],
                                     [("RNNCell", {"input_size": 8, "hidden_size": 8}, ["x0", "x1"])]),
    "rnncell-unbatched-wide-h": _g([([8], "float32"), ([8, 3], "float32")],
                                   [("RNNCell", {"input_size": 8, "hidden_size": 8}, ["x0", "x1"])]),
    "grucell-unbatched-square-h": _g([([8], "float32"), ([8, 8], "float32")],
                                     [("GRUCell", {"input_size": 8, "hidden_size": 8}, ["x0", "x1"])]),
    "convtranspose2d-dilation-0-kernel-1": _one("ConvTranspose2d", {"in_channels": 3, "out_channels": 1,
                                                                    "kernel_size": 1, "dilation": [0]},
                                                ([2, 3, 5, 6], "float32")),
    "convtranspose2d-dilation-0-kernel-2": _one("ConvTranspose2d", {"in_channels": 3, "out_channels": 1,
                                                                    "kernel_size": 2, "dilation": 0},
                                                ([2, 3, 5, 6], "float32")),
    # a split of an undeclared B by 10 is one piece of B when B < 10: its length is a size of its own, in
    # 1..10 (gen-205157 was a false block)
    "split-of-undeclared-b-by-more-than-b": _g([(["B", 2, 8], "float32")],
                                                [("Split", {"split_size_or_sections": 10}, ["x0"]),
                                                 ("Amin", {"dim": -2}, ["n0"]),
                                                 ("Mul", {}, ["n1", "x0"])], seq_len=None),
    # the fresh 220,000 and 230,000 ranges: a convolution trims a negative padding with a padding_mode other
    # than zeros (gen-235157 was a false block); GroupNorm's symbolic channels must be a multiple of its
    # groups (gen-237273 passed at a declared T = 6); a max pool's indices over a declared T (gen-228305)
    "conv1d-negative-padding-replicate": _one("Conv1d", {"in_channels": 2, "out_channels": 2, "kernel_size": 3,
                                                         "padding": -1, "padding_mode": "replicate"},
                                              ([1, 2, 7], "float32")),
    "conv1d-negative-padding-zeros": _one("Conv1d", {"in_channels": 2, "out_channels": 2, "kernel_size": 1,
                                                     "padding": -1}, ([1, 2, 7], "float32")),
    "conv1d-negative-padding-reflect-too-far": _one("Conv1d", {"in_channels": 2, "out_channels": 2, "kernel_size": 1,
                                                               "padding": -1, "padding_mode": "reflect"},
                                                    ([1, 2, 2], "float32")),
    "groupnorm-declared-t-channels-not-a-multiple": _g([([16, "T", 6, 7], "float32")],
                                                       [("GroupNorm", {"num_groups": 5, "num_channels": 5,
                                                                       "affine": False}, ["x0"])], seq_len=6),
    "groupnorm-declared-t-channels-a-multiple": _g([([16, "T", 6, 7], "float32")],
                                                   [("GroupNorm", {"num_groups": 5, "num_channels": 5,
                                                                   "affine": False}, ["x0"])], seq_len=10),
    "max-pool-indices-over-declared-t": _g([([7, "T"], "float32")],
                                           [("MaxPool1d", {"kernel_size": 1, "return_indices": True}, ["x0"]),
                                            ("Gather", {"dim": 0}, ["n0:1", "n0:1"])], seq_len=12),
    # the fresh 240,000 and 250,000 ranges: a decoder's tgt and memory must both be batched or both not
    # (gen-256479 passed); a base rewritten in place after a Chunk of it makes later reads of its pieces fail
    # in training (gen-254912 passed)
    "decoder-unbatched-tgt-batched-memory": _g([([5, 12], "float32"), ([2, 7, 12], "float32")],
                                               [("TransformerDecoderLayer", {"d_model": 12, "nhead": 2},
                                                 ["x0", "x1"])]),
    "decoder-batches-differ": _g([([2, 5, 12], "float32"), ([3, 7, 12], "float32")],
                                 [("TransformerDecoderLayer", {"d_model": 12, "nhead": 2, "batch_first": True},
                                   ["x0", "x1"])]),
    "chunk-then-base-written-then-piece-read": _g([([3, 8], "float32")],
                                                  [("Linear", {"in_features": 8, "out_features": 8}, ["x0"]),
                                                   ("Chunk", {"chunks": 2}, ["n0"]),
                                                   ("ReLU", {"inplace": True}, ["n0"]),
                                                   ("Tanh", {}, ["n1:0"])]),
    "chunk-then-base-written-eval": _g([([3, 8], "float32")],
                                       [("Linear", {"in_features": 8, "out_features": 8}, ["x0"]),
                                        ("Chunk", {"chunks": 2}, ["n0"]),
                                        ("ReLU", {"inplace": True}, ["n0"]),
                                        ("Tanh", {}, ["n1:0"])], mode="eval"),
    # what shares a Parameter's memory is a view of a leaf (measured): Tile, Roll and a merge after a reorder
    # copy, so an in-place op after them runs; PixelShuffle of ids keeps their range (gen-267352)
    "relu-in-place-on-a-tiled-parameter": _g([], [("Parameter", {"shape": [2, 4]}, []),
                                                  ("Tile", {"dims": [2, 1]}, ["n0"]),
                                                  ("ReLU", {"inplace": True}, ["n1"])]),
    "relu-in-place-on-a-merged-parameter": _g([], [("Parameter", {"shape": [2, 4]}, []),
                                                   ("Rearrange", {"pattern": "a b -> (a b)"}, ["n0"]),
                                                   ("ReLU", {"inplace": True}, ["n1"])]),
    "relu-in-place-on-a-reordered-merged-parameter": _g([], [("Parameter", {"shape": [2, 4]}, []),
                                                             ("Rearrange", {"pattern": "a b -> (b a)"}, ["n0"]),
                                                             ("ReLU", {"inplace": True}, ["n1"])]),
    "relu-in-place-on-a-repeated-parameter": _g([], [("Parameter", {"shape": [2, 4]}, []),
                                                     ("Repeat", {"pattern": "a b -> a r b", "r": 2}, ["n0"]),
                                                     ("ReLU", {"inplace": True}, ["n1"])]),
    "embedding-of-pixel-shuffled-ids": _ids(_g([(["B", 1, 2], "int64")],
                                               [("PixelShuffle", {"upscale_factor": 1}, ["x0"]),
                                                ("Embedding", {"num_embeddings": 1, "embedding_dim": 1}, ["n0"])]), 2),
    # a blind tester's pos[:, :T]: a Slice bound may be a symbol, the run's size of it; an output naming a
    # result its node lacks fails as a node reading it would (a Split in two pieces read as "sp:2")
    "slice-of-a-table-to-declared-t": _g([(["B", "T", 8], "float32")],
                                         [("Parameter", {"shape": [1, 32, 8]}, []),
                                          ("Slice", {"dim": 1, "end": "T"}, ["n0"]),
                                          ("Add", {}, ["x0", "n1"])], seq_len=20),
    # an end always past the size is clamped: x[:, :T+1] of a T is all of it (a block would be false)
    "slice-to-past-the-size": _g([(["B", "T", 8], "float32")],
                                 [("Slice", {"dim": 1, "end": "T+1"}, ["x0"]), ("Add", {}, ["x0", "n0"])],
                                 seq_len=None),
    # a bound or an einops length naming no symbol of the inputs: the run cannot resolve it (an adversarial
    # pass on the new symbolic arguments: verify warned while run failed)
    "slice-end-naming-no-input-symbol": _g([(["B", "T", 8], "float32")], [("Slice", {"dim": 1, "end": "S"}, ["x0"])]),
    "repeat-length-that-is-no-symbol": _g([(["B", "T", 8], "float32")],
                                          [("Repeat", {"pattern": "b t d -> b t d r", "r": "(("}, ["x0"])]),
    "slice-of-a-table-past-it": _g([(["B", "T", 8], "float32")],
                                   [("Parameter", {"shape": [1, 32, 8]}, []),
                                    ("Slice", {"dim": 1, "end": "T"}, ["n0"]),
                                    ("Add", {}, ["x0", "n1"])], seq_len=40),
    "output-of-a-missing-piece": dict(_g([([2, 4], "float32")], [("Split", {"split_size_or_sections": 2,
                                                                              "dim": 1}, ["x0"])]),
                                      outputs=["n0:2"]),
    "output-of-a-second-result-of-a-linear": dict(_g([([2, 4], "float32")],
                                                     [("Linear", {"in_features": 4, "out_features": 4}, ["x0"])]),
                                                  outputs=["n0:1"]),
    # seq_len sizes every symbol first met at dim 1 (a decoder's S and T)
    "decoder-declared-seq-for-both": _g([(["B", "S", 12], "float32"), (["B", "T", 12], "float32"),
                                         (["T", "T"], "float32")],
                                        [("TransformerDecoderLayer", {"d_model": 12, "nhead": 2,
                                                                      "batch_first": True}, ["x1", "x0", "x2"])],
                                        seq_len=6),
    # the fresh 280,000..310,000 ranges: an adaptive pool's output_size given as a list needs more dims than
    # entries (gen-288644 passed); a Transformer stack of 0 layers fails in forward (gen-316054 passed); a 0-D
    # index of a 1-D input gathers (gen-319932 was a false block)
    "adaptive-avg3d-list-output-of-3d": _one("AdaptiveAvgPool3d", {"output_size": [None, 1, 1]},
                                             ([1, 8, 5], "float32")),
    "adaptive-avg2d-list-ones-of-2d": _one("AdaptiveAvgPool2d", {"output_size": [1, 1]}, ([4, 5], "float32")),
    "adaptive-avg2d-int-one-of-2d": _one("AdaptiveAvgPool2d", {"output_size": 1}, ([4, 5], "float32")),
    "transformer-encoder-of-no-layers": _one("TransformerEncoder", {"encoder_layer": {"d_model": 4, "nhead": 2},
                                                                    "num_layers": 0}, ([2, 3, 4], "float32")),
    "gather-0d-index-of-1d": _g([([3], "float32")], [("Constant", {"shape": [], "value": 0, "dtype": "long"}, []),
                                                    ("Gather", {"dim": -1}, ["x0", "n0"])]),
    # a third blind tester: MultiheadAttention's forward flags, Identity's ignored arguments, a class token
    # repeated to the batch by an einops length "B"
    "mha-per-head-weights": _g([([2, 5, 8], "float32")],
                               [("MultiheadAttention", {"embed_dim": 8, "num_heads": 2, "batch_first": True,
                                                        "average_attn_weights": False}, ["x0"]),
                                ("Linear", {"in_features": 5, "out_features": 3}, ["n0:1"])]),
    "mha-no-weights-read": _g([([2, 5, 8], "float32")],
                              [("MultiheadAttention", {"embed_dim": 8, "num_heads": 2, "batch_first": True,
                                                       "need_weights": False}, ["x0"]),
                               ("ReLU", {}, ["n0:1"])]),
    "mha-causal-no-weights-mask-dropped": _g([([2, 5, 8], "float32"), ([3, 3], "bool")],
                                             [("MultiheadAttention", {"embed_dim": 8, "num_heads": 2,
                                                                      "batch_first": True, "is_causal": True,
                                                                      "need_weights": False}, ["x0", "x0", "x0",
                                                                                               "x1"])]),
    "identity-with-arguments": _one("Identity", {"anything": 3}, ([2, 4], "float32")),
    "class-token-repeated-to-b": _g([(["B", 5, 8], "float32")],
                                    [("Parameter", {"shape": [1, 1, 8]}, []),
                                     ("Repeat", {"pattern": "o n d -> (o b) n d", "b": "B"}, ["n0"]),
                                     ("Concat", {"dim": 1}, ["n1", "x0"])]),
    # a mask torch drops for the causal path is checked for its rank first, and an unbatched query's 3-D mask
    # is (heads, L, S) whatever the path (gen-361954 passed, a 4-D mask)
    "decoder-causal-4d-mask-unbatched": _g([([5, 4], "float32"), ([1, 1, 5, 5], "float32")],
                                           [("TransformerDecoderLayer", {"d_model": 4, "nhead": 1,
                                                                         "tgt_is_causal": True},
                                             ["x0", "x0", "x1"])]),
    "mha-unbatched-3d-mask-of-the-batch": _g([([5, 8], "float32"), ([4, 5, 5], "bool")],
                                             [("MultiheadAttention", {"embed_dim": 8, "num_heads": 2},
                                               ["x0", "x0", "x0", "x1"])]),
    "mha-unbatched-3d-mask-per-head": _g([([5, 8], "float32"), ([2, 5, 5], "bool")],
                                         [("MultiheadAttention", {"embed_dim": 8, "num_heads": 2},
                                           ["x0", "x0", "x0", "x1"])]),
    # seq_len sizes the sequence symbol where it is (dim 2 of a 1-D convolution's input, when no input has a
    # symbol at dim 1): a valid dilated convolution needs T >= 17
    "tcn-declared-seq-too-short": _g([(["B", 4, "T"], "float32")],
                                     [("Conv1d", {"in_channels": 4, "out_channels": 4, "kernel_size": 3,
                                                  "dilation": 8}, ["x0"])], seq_len=10),
    "tcn-declared-seq-long-enough": _g([(["B", 4, "T"], "float32")],
                                       [("Slice", {"dim": 2, "start": 2}, ["x0"]),
                                        ("Conv1d", {"in_channels": 4, "out_channels": 4, "kernel_size": 3,
                                                    "dilation": 8}, ["n0"])], seq_len=19),
    "tcn-crop-declared-one-short": _g([(["B", 4, "T"], "float32")],
                                      [("Slice", {"dim": 2, "start": 2}, ["x0"]),
                                       ("Conv1d", {"in_channels": 4, "out_channels": 4, "kernel_size": 3,
                                                   "dilation": 8}, ["n0"])], seq_len=18),
    # the fresh 160,000 and 170,000 ranges: an adaptive average whose None output size resolves to 1 is a
    # mean at any rank (gen-164262, a false block); MultiheadAttention's weights see the key add_bias_kv
    # and add_zero_attn append (gen-175938, a false block); ids padded with a negative fill keep their range
    # (gen-168167)
    "adaptive-avg2d-none-resolving-to-one-5d": _one("AdaptiveAvgPool2d", {"output_size": [1, None]},
                                                    ([2, 1, 4, 4, 1], "float32")),
    "adaptive-avg2d-none-resolving-to-four-5d": _one("AdaptiveAvgPool2d", {"output_size": [1, None]},
                                                     ([2, 1, 4, 4, 4], "float32")),
    "mha-weights-with-bias-kv-and-zero-attn": _g([([5, 3, 8], "float32")],
                                                 [("MultiheadAttention", {"embed_dim": 8, "num_heads": 2,
                                                                          "add_bias_kv": True, "add_zero_attn": True},
                                                   ["x0"]),
                                                  ("Linear", {"in_features": 7, "out_features": 2}, ["n0:1"])]),
    "mha-weights-with-zero-attn-wrong-width": _g([([5, 3, 8], "float32")],
                                                 [("MultiheadAttention", {"embed_dim": 8, "num_heads": 2,
                                                                          "add_zero_attn": True}, ["x0"]),
                                                  ("Linear", {"in_features": 5, "out_features": 2}, ["n0:1"])]),
    "pool-indices-padded-negative-then-index": _g([([4, 6, 3, 3], "float32")],
                                                  [("AdaptiveMaxPool3d", {"output_size": 4, "return_indices": True},
                                                    ["x0"]),
                                                   ("ConstantPad3d", {"padding": [1, 0, 0, 0, 0, 0], "value": -1},
                                                    ["n0:1"]),
                                                   ("Index", {}, ["x0", "n1"])]),
}


# Crashes at the sizes the run picks (a null size of a Constant is built as 1, an undeclared symbol takes
# the default size) that the verifier cannot decide: the verdict must state the condition they run under.
CONDITIONAL = {
    "glu-null-size": _g([], [("Constant", {"shape": [2, None]}, []), ("GLU", {}, ["n0"])]),
    "layernorm-null-width": _g([], [("Constant", {"shape": [None]}, []),
                                    ("LayerNorm", {"normalized_shape": [8]}, ["n0"])]),
    "circular-pad-null-size": _g([], [("Constant", {"shape": [6, 2, None]}, []),
                                      ("CircularPad1d", {"padding": 2}, ["n0"])]),
    "reduce-split-undeclared-t": _g([([7, "T"], "float64")], [("Reduce", {"pattern": "a0 (a1 p) -> p a0 a1",
                                                                          "reduction": "mean", "p": 3}, ["x0"])],
                                    seq_len=None),
    # a Chunk of a size with a symbol the design does not declare keeps its symbolic pieces (gen-22353)
    "split-of-a-chunk-of-undeclared-b": _g([(["B", 1], "float32")],
                                           [("Chunk", {"chunks": 7}, ["x0"]), ("Clamp", {"max": 0.976}, ["n0:1"]),
                                            ("Split", {"split_size_or_sections": [1, 1, 1]}, ["n1"])],
                                           seq_len=None),
    "unfold-window-against-undeclared-b": _g([(["B", 4, 1, 3], "float64")],
                                             [("Transpose", {"dim0": 0, "dim1": 3}, ["x0"]),
                                              ("Unfold", {"kernel_size": [1, 3]}, ["n0"])], seq_len=None),
    "einsum-diagonal-undeclared-t": _g([([1, "T"], "float64")], [("Einsum", {"equation": "jj->j"}, ["x0"])],
                                       seq_len=None),
    # F.pad's reflection against a size the design does not declare (gen-113463: it said nothing; the
    # padding layers stated it)
    "functional-reflect-pad-undeclared-t": _g([([16, "T"], "float32")],
                                              [("Pad", {"pad": [8, 8], "mode": "reflect"}, ["x0"])], seq_len=None),
    # a blind tester's TCN: an unpadded dilated convolution over a length the design does not declare passed
    # silently, and a crop x[:, :, 2:] of it made the length unknown
    "conv1d-dilated-undeclared-t": _g([(["B", 4, "T"], "float32")],
                                      [("Conv1d", {"in_channels": 4, "out_channels": 4, "kernel_size": 3,
                                                   "dilation": 8}, ["x0"])], seq_len=None),
    "crop-then-conv-undeclared-t": _g([(["B", 4, "T"], "float32")],
                                      [("Slice", {"dim": 2, "start": 2}, ["x0"]),
                                       ("Conv1d", {"in_channels": 4, "out_channels": 4, "kernel_size": 3,
                                                   "dilation": 4}, ["n0"])], seq_len=None),
    # a null size of a Constant (the run makes it 1): InstanceNorm's spatial values in training (gen-144045,
    # gen-212094) and a downscale to int(size * 0.4) (gen-152214) state their condition
    "instancenorm-over-a-null-length": _g([], [("Constant", {"shape": [2, 4, None]}, []),
                                               ("InstanceNorm1d", {"num_features": 4}, ["n0"])]),
    "groupnorm-over-a-null-batch": _g([], [("Constant", {"shape": [None, 1]}, []),
                                           ("GroupNorm", {"num_groups": 1, "num_channels": 1}, ["n0"])]),
    "upsampling-down-a-null-size": _g([], [("Constant", {"shape": [2, 3, None]}, []),
                                           ("UpsamplingNearest2d", {"scale_factor": 0.4}, ["n0"])]),
    "slice-of-a-table-to-undeclared-t": _g([(["B", "T", 8], "float32")],
                                           [("Parameter", {"shape": [1, 4, 8]}, []),
                                            ("Slice", {"dim": 1, "end": "T"}, ["n0"]),
                                            ("Add", {}, ["x0", "n1"])], seq_len=None),
    # output_ratio of a size the design does not declare: int(B * r) + k - 1 <= B (gen-125985)
    "fractional-ratio-undeclared-b": _g([(["B", 4, 4], "float32")],
                                        [("Permute", {"dims": [2, 1, 0]}, ["x0"]),
                                         ("FractionalMaxPool2d", {"kernel_size": [2, 4],
                                                                  "output_ratio": [0.5, 0.033]}, ["n0"])],
                                        seq_len=None),
}


# Crashes whose sizes or positions depend on the values (a count of selected elements, where a maximum
# falls): never passed silently, a shape.unknown-dim or shape.unknown-index warn names what went unchecked.
UNFOLLOWED = {
    # a max pool's indices may reach the last window's far corner: the flat positions of an adaptive pool to
    # 1x1 over 2x12 reach 23, Gather's dim has 8 (gen-110819)
    "gather-of-adaptive-max-pool-indices": _g([([12, 2, 12], "float64"), ([12, 2, 8], "float64")],
                                              [("AdaptiveMaxPool2d", {"output_size": 1, "return_indices": True},
                                                ["x0"]),
                                               ("Gather", {"dim": 2}, ["x1", "n0:1"])]),
    # a running sum of 0/1 ids over 3 values may reach 3 (gen-194296 passed silently)
    "gather-of-a-cumsum-of-ids": _ids(_g([([2, 8, 4, 3, 1], "int64")],
                                         [("Cumsum", {"dim": -2}, ["x0"]), ("Gather", {"dim": 3}, ["x0", "n0"])]), 2),
    # a max pool's positions through a Chunk and a ReLU6 into an Embedding of 2 rows (gen-310919)
    "embedding-of-pool-positions-through-relu6": _g([([8, 2, 11], "float32")],
                                                    [("MaxPool1d", {"kernel_size": 11, "padding": 1,
                                                                    "return_indices": True}, ["x0"]),
                                                     ("Chunk", {"chunks": 1}, ["n0:1"]),
                                                     ("ReLU6", {}, ["n1"]),
                                                     ("Embedding", {"num_embeddings": 2, "embedding_dim": 8},
                                                      ["n2"])]),
    # a mask selection broadcast against a full tensor (gen-239913)
    "sub-with-a-mask-selection": _g([([3, 4, 5, 16], "uint8")], [("Index", {}, ["x0", "x0"]),
                                                                 ("Sub", {}, ["x0", "n0"])]),
    # a uint8 index is a mask: how many it selects depends on the ids (gen-118451)
    "unflatten-of-a-mask-selection": _g([([1, 8, 2, 6], "uint8")],
                                        [("Index", {}, ["x0", "x0"]), ("Unflatten", {"dim": -1,
                                                                                    "unflattened_size": [88, 4]},
                                                                      ["n0"])]),
}


@pytest.mark.parametrize("name", sorted(UNFOLLOWED))
def test_crashes_at_unfollowed_sizes_are_warned(name):
    graph = UNFOLLOWED[name]
    seen = observe_eager(graph)
    report = verify_graph(Design.from_dict(graph))
    assert seen["status"] != "ok", seen
    assert report.verdict == "warn", [(f.rule, f.message) for f in report.findings]
    assert any(f.rule in ("shape.unknown-dim", "shape.unknown-index") for f in report.findings)


@pytest.mark.parametrize("name", sorted(CONDITIONAL))
def test_crashes_the_verifier_cannot_decide_state_their_condition(name):
    graph = CONDITIONAL[name]
    seen = observe_eager(graph)
    report = verify_graph(Design.from_dict(graph))
    assert seen["status"] != "ok", seen
    conditions = [f.message for f in report.findings if f.rule == "shape.symbol-condition"]
    assert report.verdict == "warn" and conditions, [(f.rule, f.message) for f in report.findings]


@pytest.mark.parametrize("name", sorted(FOUND))
def test_found_disagreements_now_agree_with_torch(name):
    graph = FOUND[name]
    seen = observe_eager(graph)
    report = verify_graph(Design.from_dict(graph))
    blocks = [f"{f.rule}: {f.message}" for f in report.findings if f.severity == "block"]
    assert (report.verdict == "block") == (seen["status"] != "ok"), (seen, blocks)


@pytest.mark.slow
def test_an_allocation_past_the_childs_memory_limit_is_killed_not_failed():
    """A design that needs more memory than the child may take is a resource outcome (SPEC's `killed`),
    kept out of the agreement; the same design under the limit runs."""
    graph = _g([([2, 1024], "float32")], [("Repeat", {"pattern": "b d -> b (r d)", "r": 65536}, ["x0"])])
    script = ("import json, sys, torch\n"
              "from archcurator.core.ground.child import _arm_memory_limit, observe_eager\n"
              "_arm_memory_limit(int(sys.argv[1]), torch)\n"
              "print(json.dumps(observe_eager(json.loads(sys.argv[2]))))\n")
    seen = {}
    for mb in (128, 4096):
        proc = subprocess.run([sys.executable, "-c", script, str(mb), json.dumps(graph)], capture_output=True,
                              text=True, timeout=120)
        seen[mb] = json.loads(proc.stdout.strip().splitlines()[-1])
    assert seen[128]["status"] == "killed" and "memory limit of 128 MB" in seen[128]["message"], seen[128]
    assert seen[4096]["status"] == "ok", seen[4096]
    r = DiffResult("mem", graph, seen[128]["status"], seen[128]["exception"], seen[128]["origin"], None,
                   seen[128]["message"])
    verify_result(r)
    s = summarize_differential([r])
    assert s["judged"] == 0 and s["resource_limited"][0]["case"] == "mem"


def test_every_condition_on_a_node_is_stated():
    """A finding is known by rule and node: a second condition on one node joins the first's words instead of
    being dropped (a blind tester's Add of [B, 8, H, W] and [B, 8, 16, 32] stated W = 32 only)."""
    graph = _g([(["B", 8, "H", "W"], "float32"), (["B", 8, 16, 32], "float32")], [("Add", {}, ["x0", "x1"])],
               seq_len=None)
    report = verify_graph(Design.from_dict(graph))
    said = [f.message for f in report.findings if f.rule == "shape.symbol-condition"]
    assert len(said) == 1 and "W = 32" in said[0] and "H = 16" in said[0], said
    assert observe_eager(graph)["status"] != "ok"  # at the run's sizes (H = W = 8) it fails

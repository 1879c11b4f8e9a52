"""Corruption kinds: wiring: unknown ops, arguments, references, cycles, outputs; the parser."""

from __future__ import annotations

import json

from ...checks.connectivity import (
    CONNECTIVITY_DEAD_NODE,
    CONNECTIVITY_DUPLICATE_OUTPUT,
    CONNECTIVITY_SHARED_RUNNING_STATS,
    CONNECTIVITY_UNUSED_INPUT,
    PARSE_UNFOLLOWED,
)
from ...graph import parse_ref
from ...ops import OP_TABLE, ops_with
from ...ops.lookalikes import LOOKALIKES
from ...ops.rules import (
    CONNECTIVITY_BAD_ARG,
    CONNECTIVITY_BAD_RESULT,
    CONNECTIVITY_CYCLE,
    CONNECTIVITY_DANGLING,
    CONNECTIVITY_INPLACE_LEAF,
    CONNECTIVITY_MISSING_ARG,
    CONNECTIVITY_NO_OUTPUT,
    CONNECTIVITY_UNKNOWN_OP,
    SHAPE_SHARES_IGNORED,
)
from .base import BNS, ELEMENTWISE, RNNS, _graph_site, branch, kind

SHAPE_KEEPERS = ELEMENTWISE | ops_with("affine")  # and the norms
# the layers a kind gives an argument their constructor does not take
CONSTRUCTED = ops_with("weighted") | ops_with("lookup") | ops_with("reads-width")
TIEABLE = frozenset(name for name, spec in OP_TABLE.items() if spec.weight_dims)

HALLUCINATED = LOOKALIKES


def _unknown_apply(g, site):
    n = g.node(site)
    n["op"] = HALLUCINATED[n["op"]]
    return g.d


@kind("unknown-op", "block", [CONNECTIVITY_UNKNOWN_OP],
     bases=("resnet18", "gpt-nano", "char_rnn", "mlp_mnist", "vit_b_32", "efficientnet_b0"), per_base=1,
     doc="an op torch.nn does not have", apply=_unknown_apply)
def _unknown_sites(g):
    return [n["id"] for n in g.nodes if n["op"] in HALLUCINATED]


def _missing_apply(g, site):
    from ...ops import OP_TABLE

    n = g.node(site)
    req = [a.name for a in OP_TABLE[n["op"]].args if a.required and a.name in n.get("args", {})]
    del n["args"][req[-1]]
    return g.d


@kind("missing-arg", "block", [CONNECTIVITY_MISSING_ARG],
     bases=("resnet18", "gpt-nano", "lstm_lm", "mobilenet_v2", "tiny_cnn"), per_base=1,
     doc="a required constructor argument left out", apply=_missing_apply)
def _missing_sites(g):
    from ...ops import OP_TABLE

    return [n["id"] for n in g.nodes if n["op"] in OP_TABLE
            and any(a.required and a.name in n.get("args", {}) for a in OP_TABLE[n["op"]].args)]


def _bad_arg_apply(g, site):
    n = g.node(site)
    if n["op"] == "TransformerEncoderLayer":
        n["args"]["activation"] = "swiglu"
    elif n["op"] == "LayerNorm":
        n["args"]["affine"] = True  # BatchNorm's word; LayerNorm calls it elementwise_affine
    elif n["op"] in RNNS:
        n["args"]["hidden_dim"] = n["args"].get("hidden_size", 0)
    else:
        n["args"]["init"] = "xavier_uniform"
    return g.d


@kind("bad-arg", "block", [CONNECTIVITY_BAD_ARG],
     bases=("resnet18", "tiny_transformer_lm", "gpt-nano", "gru_lm", "vgg11"), per_base=1,
     doc="an argument the constructor does not take", apply=_bad_arg_apply)
def _bad_arg_sites(g):
    return [n["id"] for n in g.nodes if n["op"] in CONSTRUCTED]


def _bad_result_apply(g, site):
    n = g.node(site)
    rid, _ = parse_ref(n["in"][0])
    res = g.types().get(rid) or [None]
    n["in"] = [f"{rid}:{len(res)}"] + n["in"][1:]
    return g.d


@kind("bad-result", "block", [CONNECTIVITY_BAD_RESULT],
     bases=("resnet18", "char_rnn", "vit_b_32", "gpt-nano"), per_base=1,
     doc="a reference to result N of a node that has fewer results", apply=_bad_result_apply)
def _bad_result_sites(g):
    out = []
    for n in g.nodes:
        for r in n.get("in", []):
            rid, idx = parse_ref(r)
            res = g.types().get(rid)
            if res is not None and rid != n["id"]:
                out.append(n["id"])
                break
    return out


def _dangling_apply(g, site):
    n = g.node(site)
    rid, _ = parse_ref(n["in"][0])
    n["in"] = [g.fresh_id(rid + "_typo")] + n["in"][1:]
    return g.d


@kind("dangling", "block", [CONNECTIVITY_DANGLING],
     bases=("resnet18", "gpt-nano", "mlp_mnist", "unet", "seq2seq_gru"), per_base=1,
     doc="an operand names a node that does not exist (a typo, a deleted layer)", apply=_dangling_apply)
def _dangling_sites(g):
    return [n["id"] for n in g.nodes if n.get("in")]


def _cycle_apply(g, site):
    n = g.node(site)
    user = g.users(site)[0]
    n["in"] = [user["id"]] + n["in"][1:]
    return g.d


@kind("cycle", "block", [CONNECTIVITY_CYCLE], bases=("resnet18", "mlp_mnist", "gpt-nano", "lenet5"),
     doc="a layer reads its own consumer: a loop", apply=_cycle_apply)
def _cycle_sites(g):
    return [n["id"] for n in g.nodes if n.get("in") and g.users(n["id"])]


def _no_output_apply(g, site):
    g.d["outputs"] = []
    return g.d


@kind("no-output", "block", [CONNECTIVITY_NO_OUTPUT], bases=("resnet18", "mlp_mnist", "char_rnn"),
     doc="the design declares no outputs", apply=_no_output_apply)
def _where_no_output(g):
    return _graph_site(g)


def _sever_apply(g, site):
    g.bypass(site)
    return g.d


@kind("severed-connection", "warn", [CONNECTIVITY_DEAD_NODE],
     bases=("resnet18", "gpt-nano", "mlp_mnist", "vgg11", "char_rnn", "mobilenet_v2"), per_base=1,
     doc="the edge through a shape-preserving layer is cut: its consumer reads around it, the layer runs "
         "for nothing", apply=_sever_apply)
def _sever_sites(g):
    out = []
    for n in g.nodes:
        if n["op"] in SHAPE_KEEPERS and len(n.get("in", [])) == 1 and \
                n["id"] not in g.outputs() and not n.get("shares"):
            src = n["in"][0]
            if g.shape(src) is not None and g.shape(src) == g.shape(n["id"]) and g.dtype(src) == g.dtype(n["id"]):
                out.append(n["id"])
    return out


def _dup_output_apply(g, site):
    g.d["outputs"] = g.d["outputs"] + g.d["outputs"][:1]
    return g.d


@kind("duplicate-output", "warn", [CONNECTIVITY_DUPLICATE_OUTPUT], bases=("mlp_mnist", "resnet18"),
     doc="the output listed twice", apply=_dup_output_apply)
def _where_duplicate_output(g):
    return _graph_site(g)


def _unused_input_apply(g, site):
    first = g.d["inputs"][0]
    g.d["inputs"].append({"id": g.fresh_id("mask"), "shape": list(first["shape"][:2]), "dtype": "float32"})
    return g.d


@kind("unused-input", "warn", [CONNECTIVITY_UNUSED_INPUT], bases=("gpt-nano", "mlp_mnist"),
     doc="an input nothing reads", apply=_unused_input_apply)
def _where_unused_input(g):
    return _graph_site(g)


def _shared_bn_apply(g, site):
    n = g.node(site)
    key = json.dumps(n.get("args", {}), sort_keys=True)
    for prev in g.nodes[:g.index(site)]:
        if prev["op"] == n["op"] and json.dumps(prev.get("args", {}), sort_keys=True) == key:
            n["shares"] = prev["id"]
            return g.d
    return None


@kind("shared-running-stats", "warn", [CONNECTIVITY_SHARED_RUNNING_STATS], bases=("resnet18", "resnet20_cifar"),
     doc="a BatchNorm reused at a second call site", apply=_shared_bn_apply)
def _shared_bn_sites(g):
    out = []
    seen: dict = {}
    for n in g.nodes:
        if n["op"] not in BNS:
            continue
        key = json.dumps(n.get("args", {}), sort_keys=True)
        if key in seen:
            out.append(n["id"])
        else:
            seen[key] = n["id"]
    return out


def _parser_warn_apply(g, site):
    meta = dict(g.d.get("meta") or {})
    meta["parser_warnings"] = [{"line": "model.py:42", "message": "could not follow a loop over self.blocks"}]
    g.d["meta"] = meta
    return g.d


@kind("parser-warning", "warn", [PARSE_UNFOLLOWED], bases=("tiny_cnn",),
     doc="the parser reports a construct it could not follow", apply=_parser_warn_apply)
def _where_parser_warning(g):
    return _graph_site(g)



def _inplace_apply(g, site):
    branch(g, site, "ReLU", {"inplace": True}, suffix="relu_")
    return g.d


@kind("inplace-on-parameter", "block", [CONNECTIVITY_INPLACE_LEAF], bases=("vit_b_32", "convnext_tiny"),
      doc="an in-place ReLU applied straight to a learned Parameter", apply=_inplace_apply)
def _inplace_sites(g):
    return [n["id"] for n in g.nodes if n["op"] == "Parameter"][:2]


def _tied_size_apply(g, site):
    n = g.node(site)
    a = g.args(site)
    key = "in_features" if n["op"] == "Linear" else "num_embeddings" if n["op"] == "Embedding" else None
    if key is None or key not in a:
        return None
    a[key] = a[key] + 1
    return g.d


@kind("shared-layer-declared-size", "warn", [SHAPE_SHARES_IGNORED], bases=("transformer", "gpt2"),
      doc="a layer that shares another's weight declares a size the shared weight does not have (the shared "
          "weight wins)", apply=_tied_size_apply)
def _tied_size_sites(g):
    return [n["id"] for n in g.nodes if n.get("shares") and n["op"] in TIEABLE]

"""Corruption kinds: compute, memory and money spent for nothing."""

from __future__ import annotations

from types import SimpleNamespace

from ...checks.efficiency import (
    EFFICIENCY_DUPLICATE_BRANCH,
    EFFICIENCY_MEMORY_OVER_DEVICE,
    EFFICIENCY_OVER_BUDGET,
    EFFICIENCY_OVERSIZED_EMBEDDING,
    EFFICIENCY_PARAM_BLOWUP,
    EFFICIENCY_REDUNDANT_TRANSPOSE,
    EFFICIENCY_UNKNOWN_DEVICE,
    EFFICIENCY_WIDTH_NOT_MULTIPLE_OF_8,
)
from ...graph import Design, parse_ref
from ...ops import ops_with
from ...shapes import _memory_view
from .base import ACTIVATIONS, ELEMENTWISE, _graph_site, _index_range_sites, _of, kind

# parameter-free layers a kind computes twice: activations, max pools, flattens
PARAMETER_FREE = ACTIVATIONS | (ops_with("pools") & ops_with("nonlinear")) | ops_with("flattens")


def _transpose_apply(g, site):
    t1 = g.insert_after(site, "Transpose", {"dim0": 1, "dim1": 2}, suffix="t")
    g.insert_after(t1, "Transpose", {"dim0": 1, "dim1": 2}, suffix="back")
    return g.d


@kind("redundant-transpose", "warn", [EFFICIENCY_REDUNDANT_TRANSPOSE], bases=("resnet18", "gpt-nano"),
     doc="a Transpose undone right after", apply=_transpose_apply)
def _transpose_sites(g):
    return [n["id"] for n in g.nodes if n["op"] in ACTIVATIONS and g.shape(n["id"]) is not None
            and len(g.shape(n["id"])) >= 3]


def _elementwise_chain_to_linear(g, nid):
    cur = nid
    for _ in range(4):
        us = g.users(cur)
        if len(us) != 1:
            return None
        u = us[0]
        if u["op"] == "Linear" and not u.get("shares"):
            return u["id"]
        if u["op"] not in ELEMENTWISE:
            return None
        cur = u["id"]
    return None


def _width8_apply(g, site):
    nxt = _elementwise_chain_to_linear(g, site)
    w = g.args(site)["out_features"] + 4
    g.args(site)["out_features"] = w
    g.args(nxt)["in_features"] = w
    return g.d


@kind("width-not-multiple-of-8", "warn", [EFFICIENCY_WIDTH_NOT_MULTIPLE_OF_8],
     bases=("mlp_mnist", "mlp_tabular", "vgg11"),
     doc="a hidden width moved off a multiple of 8 (consistently on both sides)", apply=_width8_apply)
def _width8_sites(g):
    out = []
    for n in _of(g, ("Linear",)):
        w = g.args(n).get("out_features")
        if not isinstance(w, int) or w < 64 or n in g.outputs():
            continue
        chain = _elementwise_chain_to_linear(g, n)
        if chain is not None:
            out.append(n)
    return out


def _oversized_apply(g, site):
    from ...sizes import declared_id_range

    vocab = declared_id_range(Design.from_dict(g.d), g.node(site)["in"][0])
    g.args(site)["num_embeddings"] = vocab * 5
    return g.d


@kind("oversized-embedding", "warn", [EFFICIENCY_OVERSIZED_EMBEDDING], bases=("char_rnn", "gpt-nano"),
     doc="an Embedding with 5x the rows of the vocabulary", apply=_oversized_apply)
def _oversized_sites(g):
    return _index_range_sites(g)


def _budget_apply(g, site):
    from ...verify import verify_graph

    usd = (verify_graph(Design.from_dict(g.d)).cost.get("quote") or {}).get("usd") or 1.0
    g.train()["budget_usd"] = round(usd / 10, 6)
    return g.d


@kind("over-budget", "warn", [EFFICIENCY_OVER_BUDGET], bases=("resnet18", "gpt-nano"),
     doc="a declared budget far under the run's quote", apply=_budget_apply)
def _where_over_budget(g):
    return _graph_site(g)


def _device_apply(g, site):
    g.train()["device"] = "TPU-v9"
    return g.d


@kind("unknown-device", "warn", [EFFICIENCY_UNKNOWN_DEVICE], bases=("mlp_mnist",),
     doc="a declared device the price table does not know", apply=_device_apply)
def _where_unknown_device(g):
    return _graph_site(g)


def _blowup_apply(g, site):
    from ...verify import verify_graph

    params = verify_graph(Design.from_dict(g.d)).cost.get("params") or 1000
    g.train()["baseline"] = {"params": max(1, params // 20)}
    return g.d


@kind("param-blowup", "warn", [EFFICIENCY_PARAM_BLOWUP], bases=("resnet18", "char_rnn"),
     doc="a declared baseline with 1/20 of the parameters", apply=_blowup_apply)
def _where_param_blowup(g):
    return _graph_site(g)


def _memory_apply(g, site):
    t = g.train()
    t["device"] = "T4"
    t["batch_size"] = 65536
    return g.d


@kind("memory-over-device", "warn", [EFFICIENCY_MEMORY_OVER_DEVICE], bases=("resnet50", "vgg16"),
     doc="a batch of 65,536 declared on a 16 GB T4", apply=_memory_apply)
def _where_memory_over_device(g):
    return _graph_site(g)


def _dup_branch_apply(g, site):
    n = g.node(site)
    user = g.users(site)[0]
    twin = g.fresh_id(site + ".twin")
    g.nodes.insert(g.index(site) + 1, {"id": twin, "op": n["op"], "args": dict(n.get("args", {})),
                                       "in": list(n["in"])})
    user["in"] = [twin if parse_ref(r)[0] == site else r for r in user["in"]]
    return g.d


@kind("duplicate-branch", "warn", [EFFICIENCY_DUPLICATE_BRANCH], bases=("lenet5", "resnet18"),
     doc="a parameter-free layer computed twice from the same operand", apply=_dup_branch_apply)
def _dup_branch_sites(g):
    # a memory view is never a duplicate branch (the check skips it: taking a view twice computes nothing)
    def view(n) -> bool:
        return _memory_view(SimpleNamespace(op=n["op"], args=n.get("args") or {}))

    return [n["id"] for n in g.nodes if n["op"] in PARAMETER_FREE and not view(n)
            and len(g.users(n["id"])) >= 1 and n.get("in")]


"""Corruption kinds: designs that run but train badly."""

from __future__ import annotations

from ...checks.numerics import (
    NUMERICS_ATTENTION_NO_POSITION,
    NUMERICS_ATTENTION_NO_SCALE,
    NUMERICS_BIAS_BEFORE_BATCHNORM,
    NUMERICS_DEEP_NO_NORM,
    NUMERICS_DEEP_SATURATING,
    NUMERICS_DOUBLE_ACTIVATION,
    NUMERICS_DROPOUT_BEFORE_BATCHNORM,
    NUMERICS_HIGH_DROPOUT,
    NUMERICS_LINEAR_COLLAPSE,
    NUMERICS_LOSS_OUTPUT_MISMATCH,
    NUMERICS_NO_NONLINEARITY,
    NUMERICS_POOL_AFTER_GLOBAL,
    NUMERICS_RELU_BEFORE_LOGITS,
    NUMERICS_SOFTMAX_BEFORE_LOSS,
)
from ...graph import parse_ref
from .base import ACTIVATIONS, BNS, GRAPH_SITE, WEIGHTED, _of, kind


def _remove_apply(g, site):
    g.remove(site)
    return g.d


def _bias_bn_apply(g, site):
    g.args(site)["bias"] = True
    return g.d


@kind("bias-before-bn", "warn", [NUMERICS_BIAS_BEFORE_BATCHNORM],
     bases=("resnet18", "mobilenet_v2", "resnet20_cifar"), per_base=1,
     doc="bias switched on in a convolution whose BatchNorm cancels it", apply=_bias_bn_apply)
def _bias_bn_sites(g):
    out = []
    for n in _of(g, WEIGHTED):
        us = g.users(n)
        if len(us) == 1 and us[0]["op"] in BNS and g.args(n).get("bias", True) is False:
            out.append(n)
    return out


def _drop_bn_apply(g, site):
    g.insert_after(g.node(site)["in"][0], "Dropout", {"p": 0.2}, consumer=site, suffix="dropout")
    return g.d


@kind("dropout-before-bn", "warn", [NUMERICS_DROPOUT_BEFORE_BATCHNORM], bases=("resnet18", "vgg11_bn"),
     doc="a Dropout inserted right before a BatchNorm", apply=_drop_bn_apply)
def _drop_bn_sites(g):
    return [n["id"] for n in g.nodes if n["op"] in BNS and n.get("in")]


def _double_act_apply(g, site):
    g.insert_after(site, g.node(site)["op"], {}, suffix="again")
    return g.d


@kind("double-activation", "warn", [NUMERICS_DOUBLE_ACTIVATION], bases=("mlp_mnist", "vgg11"),
     doc="an activation applied twice in a row", apply=_double_act_apply)
def _double_act_sites(g):
    return [n["id"] for n in g.nodes if n["op"] in ACTIVATIONS and len(g.users(n["id"])) == 1]


@kind("linear-collapse", "warn", [NUMERICS_LINEAR_COLLAPSE], bases=("mlp_mnist", "mlp_tabular"),
     doc="the activation between two Linears removed (the two collapse into one)", apply=_remove_apply)
def _collapse_lin_sites(g):
    out = []
    for n in g.nodes:
        if n["op"] in ACTIVATIONS and len(n.get("in", [])) == 1:
            p = parse_ref(n["in"][0])[0]
            us = g.users(n["id"])
            if len(us) == 1 and us[0]["op"] == "Linear" and any(x["id"] == p and x["op"] == "Linear"
                                                               for x in g.nodes) and len(g.users(p)) == 1:
                out.append(n["id"])
    return out


def _high_dropout_apply(g, site):
    g.args(site)["p"] = 0.9
    return g.d


@kind("high-dropout", "warn", [NUMERICS_HIGH_DROPOUT], bases=("char_rnn", "vgg11"),
     doc="a Dropout rate of 0.9", apply=_high_dropout_apply)
def _dropout_sites(g):
    return [n["id"] for n in g.nodes if n["op"] == "Dropout"]


def _ce_classifier(g) -> list:
    loss = str((g.d.get("train") or {}).get("loss", "")).lower()
    s = g.shape(g.d["outputs"][0]) if g.d["outputs"] else None
    return [GRAPH_SITE] if loss == "cross_entropy" and s is not None and len(s) == 2 else []


def _softmax_out_apply(g, site):
    g.append_output_op("Softmax", {"dim": -1})
    return g.d


@kind("softmax-before-loss", "warn", [NUMERICS_SOFTMAX_BEFORE_LOSS], bases=("resnet18", "mlp_mnist", "lenet5"),
     doc="a Softmax appended to logits that cross_entropy normalises again", apply=_softmax_out_apply)
def _where_softmax_before_loss(g):
    return _ce_classifier(g)


def _relu_out_apply(g, site):
    g.append_output_op("ReLU", {})
    return g.d


@kind("relu-before-logits", "warn", [NUMERICS_RELU_BEFORE_LOGITS], bases=("mlp_mnist", "tiny_cnn"),
     doc="a ReLU on the logits", apply=_relu_out_apply)
def _where_relu_before_logits(g):
    return _ce_classifier(g)


def _pool_again_apply(g, site):
    g.insert_after(site, "AdaptiveAvgPool2d", {"output_size": 1}, suffix="again")
    return g.d


@kind("pool-after-global", "warn", [NUMERICS_POOL_AFTER_GLOBAL], bases=("resnet18", "mobilenet_v2"),
     doc="a second global pooling on an already pooled map", apply=_pool_again_apply)
def _global_pool_sites(g):
    return [n["id"] for n in g.nodes if n["op"] == "AdaptiveAvgPool2d" and g.shape(n["id"]) is not None
            and g.shape(n["id"])[-2:] == (1, 1)]


def _relu_sites(g):
    return [GRAPH_SITE] if any(n["op"] == "ReLU" for n in g.nodes) else []


def _saturate_apply(g, site):
    for n in g.nodes:
        if n["op"] == "ReLU":
            n["op"] = "Tanh"
            n["args"] = {}
    return g.d


@kind("deep-saturating", "warn", [NUMERICS_DEEP_SATURATING], bases=("vgg11", "alexnet"),
     doc="every ReLU of a normalisation-free net turned into Tanh", apply=_saturate_apply)
def _where_deep_saturating(g):
    return _relu_sites(g)


def _linearise_apply(g, site):
    for n in g.nodes:
        if n["op"] == "ReLU":
            n["op"] = "Identity"
            n["args"] = {}
    return g.d


@kind("no-nonlinearity", "warn", [NUMERICS_NO_NONLINEARITY], bases=("mlp_mnist", "mlp_tabular"),
     doc="every ReLU replaced by Identity", apply=_linearise_apply)
def _where_no_nonlinearity(g):
    return _relu_sites(g)


def _drop_norms_apply(g, site):
    for n in g.nodes:
        if n["op"] in BNS:
            n["op"] = "Identity"
            n["args"] = {}
    return g.d


@kind("deep-no-norm", "warn", [NUMERICS_DEEP_NO_NORM], bases=("vgg16_bn", "resnet18"),
     doc="every BatchNorm of a deep plain net removed", apply=_drop_norms_apply)
def _bn_sites(g):
    return [GRAPH_SITE] if any(n["op"] in BNS for n in g.nodes) else []


@kind("attention-no-scale", "warn", [NUMERICS_ATTENTION_NO_SCALE], bases=("gpt-nano", "distilbert-base-uncased"),
     doc="the 1/sqrt(d) Scale of hand-built attention removed", apply=_remove_apply)
def _scale_sites(g):
    return [n["id"] for n in g.nodes if n["op"] == "Scale" and
            any(u["op"] == "Softmax" for u in g.users(n["id"]))]


def _pos_apply(g, site):
    # the position term dropped: consumers read the token embedding alone
    g.bypass(site)
    return g.d


@kind("attention-no-position", "warn", [NUMERICS_ATTENTION_NO_POSITION], bases=("tiny_transformer_lm",),
     doc="the position embedding is no longer added to the tokens", apply=_pos_apply)
def _pos_sites(g):
    out = []
    for n in g.nodes:
        if n["op"] == "Add" and len(n.get("in", [])) == 2:
            srcs = [x for x in g.nodes if x["id"] in [parse_ref(r)[0] for r in n["in"]]]
            if len(srcs) == 2 and all(x["op"] == "Embedding" for x in srcs):
                out.append(n["id"])
    return out


def _loss_shape_apply(g, site):
    head = parse_ref(g.d["outputs"][0])[0]
    n = g.node(head)
    if n["op"] != "Linear":
        return None
    n["args"]["out_features"] = 1
    return g.d


@kind("loss-output-mismatch", "warn", [NUMERICS_LOSS_OUTPUT_MISMATCH], bases=("mlp_mnist", "resnet18"),
     doc="a cross_entropy classifier with a single output", apply=_loss_shape_apply)
def _where_loss_output_mismatch(g):
    return _ce_classifier(g)


"""What a corruption kind is, the registry the kind modules fill, and the helpers they share."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ... import dims as D
from ...graph import Design
from ..edit import G

Sites = Callable[[G], list]


Apply = Callable[[G, str], dict | None]


@dataclass(frozen=True)
class Kind:
    name: str
    expect: str  # block | warn
    rules: tuple  # the rule(s) the corruption is about; warn kinds: rules[0] should fire
    sites: Sites
    apply: Apply
    bases: tuple = ()  # zoo designs the deterministic set corrupts
    per_base: int = 1  # sites per base in the deterministic set
    doc: str = ""


KINDS: dict[str, Kind] = {}


def kind(name, expect, rules, *, bases, apply: Apply, per_base=1, doc=""):
    """Declare a kind on its sites function: `@kind("linear-width", "block", [...], bases=..., apply=fn)`."""

    def wrap(sites: Sites) -> Sites:
        if name in KINDS:
            raise RuntimeError(f"corruption kind {name} declared twice")
        KINDS[name] = Kind(name, expect, tuple(rules), sites, apply, tuple(bases), per_base, doc)
        return sites

    return wrap


GRAPH_SITE = "graph"


def _graph_site(g: G) -> list:
    return [GRAPH_SITE]


CONVS = ("Conv1d", "Conv2d", "Conv3d")


CONVS_ALL = CONVS + ("ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d")


POOLS = ("MaxPool1d", "MaxPool2d", "AvgPool1d", "AvgPool2d")


BNS = ("BatchNorm1d", "BatchNorm2d", "BatchNorm3d")


ATTN = ("MultiheadAttention", "TransformerEncoderLayer", "TransformerDecoderLayer")


RNNS = ("LSTM", "GRU", "RNN")


ELEMENTWISE = ("ReLU", "ReLU6", "GELU", "SiLU", "Tanh", "Sigmoid", "Hardswish", "Dropout", "Identity")


def _of(g: G, ops) -> list:
    shared = g.shared()
    return [n["id"] for n in g.nodes if n["op"] in ops and n["id"] not in shared]


def _const(*ds) -> bool:
    return all(D.is_const(d) for d in ds)


def _first_operand_shape(g: G, nid: str):
    ins = g.node(nid).get("in") or []
    return g.shape(ins[0]) if ins else None



def _index_range_sites(g):
    from ...build import declared_id_range

    out = []
    design = Design.from_dict(g.d)
    for n in _of(g, ("Embedding",)):
        ins = g.node(n).get("in") or []
        if ins and ins[0] in design.input_ids and declared_id_range(design, ins[0]):
            out.append(n)
    return out


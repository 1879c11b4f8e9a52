"""What a corruption kind is, the registry the kind modules fill, and the helpers they share."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ... import dims as D
from ...graph import Design
from ...ops import OP_TABLE, ops_of, ops_with
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


# which ops a kind mutates is asked of the op table (core/ops/traits.py), never listed here
CONVS = ops_with("reads-channels", family="conv")
CONVS_ALL = ops_of("conv")
# the windowed pools: a kernel and a padding to push past what the map holds
POOLS = frozenset(p for p in ops_with("pools") if {"kernel_size", "padding"} <= OP_TABLE[p].arg_names)
BNS = ops_with("batchnorm")
ATTN = ops_with("attention-layer")
RNNS = ops_with("reads-width", family="recurrent")
SINGLE_STATE_RNNS = frozenset(r for r in RNNS if OP_TABLE[r].arity[1] == 2)  # a GRU's h, not an LSTM's (h, c)
ACTIVATIONS = ops_with("activation")
WEIGHTED = ops_with("weighted")
# the layers that keep their operand's shape and dtype, one operand in, one result out
ELEMENTWISE = ACTIVATIONS | ops_with("dropout") | ops_with("view", family="activation")


def _of(g: G, ops) -> list:
    shared = g.shared()
    return [n["id"] for n in g.nodes if n["op"] in ops and n["id"] not in shared]


def _const(*ds) -> bool:
    return all(D.is_const(d) for d in ds)


def _first_operand_shape(g: G, nid: str):
    ins = g.node(nid).get("in") or []
    return g.shape(ins[0]) if ins else None



def _index_range_sites(g):
    from ...sizes import declared_id_range

    out = []
    design = Design.from_dict(g.d)
    for n in _of(g, ("Embedding",)):
        ins = g.node(n).get("in") or []
        if ins and ins[0] in design.input_ids and declared_id_range(design, ins[0]):
            out.append(n)
    return out



def branch(g: G, ref: str, op: str, args: dict, extra: tuple = (), suffix: str = "probe") -> str:
    """A new node reading `ref` (and `extra` operands) that nothing reads: a layer the design calls for
    nothing, as a stray line of model code would. torch runs it all the same."""
    from ...graph import parse_ref

    new_id = g.fresh_id(f"{parse_ref(ref)[0]}.{suffix}")
    g.nodes.append({"id": new_id, "op": op, "args": args, "in": [ref, *extra]})
    return new_id


def constant(g: G, shape: list, value, near: str, suffix: str = "const") -> str:
    """A Constant node (a tensor made in forward) of this shape and value."""
    new_id = g.fresh_id(f"{near}.{suffix}")
    g.nodes.append({"id": new_id, "op": "Constant", "args": {"shape": list(shape), "value": value}, "in": []})
    return new_id


def maps(g: G, rank: int, pred=None) -> list:
    """Nodes (and inputs) whose one float result has `rank` dims, all known constants past the batch."""
    out = []
    for spec in g.d["inputs"]:
        s = spec.get("shape")
        if s and len(s) == rank and str(spec.get("dtype", "float32")).startswith("float") and _const(*s[1:]) and \
                (pred is None or pred(s)):
            out.append(spec["id"])
    for n in g.nodes:
        res = g.types().get(n["id"]) or []
        if len(res) != 1 or res[0].shape is None or not res[0].is_float:
            continue
        s = res[0].shape
        if len(s) == rank and _const(*s[1:]) and (pred is None or pred(s)):
            out.append(n["id"])
    return out


def shape_of(g: G, ref: str):
    for spec in g.d["inputs"]:
        if spec["id"] == ref:
            return tuple(spec["shape"])
    return g.shape(ref)

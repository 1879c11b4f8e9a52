"""Connectivity checks that read the wiring (structural faults are declared in shape.py)."""

from __future__ import annotations

from ..graph import parse_ref
from ..ops import OP_TABLE
from ..rule import Rule
from .base import graph_check, node_check

W = "warn"


def _reaches_outputs(ctx) -> set:
    live: set = set()
    stack = [parse_ref(o)[0] for o in ctx.design.outputs]
    operands, add, pop, extend = ctx.operands, live.add, stack.pop, stack.extend
    while stack:
        nid = pop()
        if nid in live:
            continue
        add(nid)
        ops = operands.get(nid)
        if ops:
            extend(ops)
    return live


CONNECTIVITY_DEAD_NODE = Rule("connectivity.dead-node", W, "connectivity", "Node with no path to an output",
    condition="A node whose results never reach any declared output.",
    why="Its compute and parameters are paid for in every step and contribute nothing (and its "
        "parameters get no gradient, which some trainers reject).",
    fix="Wire it into the output path, or delete it.")


@graph_check(CONNECTIVITY_DEAD_NODE)
def _dead_nodes(ctx):
    live = _reaches_outputs(ctx)
    if len(live) >= len(ctx.nodes) and ctx.nodes.keys() <= live:  # every node reaches an output (the usual case)
        return
    dead = [n.id for n in ctx.design.nodes if n.id not in live]
    if dead:
        shown = ", ".join(dead[:5]) + (f" and {len(dead) - 5} more" if len(dead) > 5 else "")
        yield dead, f"{len(dead)} node(s) never reach an output: {shown}"


CONNECTIVITY_UNUSED_INPUT = Rule("connectivity.unused-input", W, "connectivity", "Input that nothing reads",
    condition="A declared input that no node reads and no output names.",
    why="The data loader feeds and transfers a tensor for nothing; often a forgotten branch.",
    fix="Read the input, or remove it from `inputs`.")


@graph_check(CONNECTIVITY_UNUSED_INPUT)
def _unused_inputs(ctx):
    # what any node reads is what the wiring lists users of
    read = ctx.users.keys() | {parse_ref(o)[0] for o in ctx.design.outputs}
    for spec in ctx.design.inputs:
        if spec.id not in read:
            yield [spec.id], f"input {spec.id!r} is never read"


CONNECTIVITY_UNREACHABLE = Rule("connectivity.unreachable", W, "connectivity", "Output not reached from any input",
    condition="An output computed only from learned or constant tensors (Parameter, Constant, Arange), "
              "with no path from any input.",
    why="It is the same for every sample: the model ignores its data there, usually a severed "
        "connection.",
    fix="Feed the branch from the data path.")


@graph_check(CONNECTIVITY_UNREACHABLE)
def _unreachable(ctx):
    fed: set = set(ctx.design.input_ids)
    operands, add, disjoint = ctx.operands, fed.add, fed.isdisjoint
    for node in ctx.inf.order or ctx.design.topo_order():
        ops = operands.get(node.id, ())
        if (ops[0] in fed if len(ops) == 1 else not disjoint(ops)):
            add(node.id)
    for o in dict.fromkeys(parse_ref(o)[0] for o in ctx.design.outputs):
        if o in ctx.nodes and o not in fed:
            yield [o], f"output {o!r} does not depend on any input"


CONNECTIVITY_SHARED_RUNNING_STATS = Rule("connectivity.shared-running-stats", W, "connectivity",
    "Normalisation with running statistics shared",
    condition="A BatchNorm (a module with running statistics) is shared between two call sites via `shares`.",
    why="Both sites update one set of running mean/variance with differently distributed activations; "
        "evaluation then normalises with statistics that fit neither.",
    fix="Give each call site its own BatchNorm (sharing the convolution is fine).")


@node_check(CONNECTIVITY_SHARED_RUNNING_STATS,
            ops=tuple(sorted(name for name, spec in OP_TABLE.items() if spec.running_stats)))
def _shared_bn(node, ctx):
    # a plain function, not a generator: it runs on every BatchNorm and nearly always finds nothing
    if node.shares is not None and node.shares in ctx.nodes:
        return [([node.id, node.shares], (f"{node.op} {node.id!r} shares running statistics with {node.shares!r}; "
                                          "use one BatchNorm per call site"))]
    return None


CONNECTIVITY_DUPLICATE_OUTPUT = Rule("connectivity.duplicate-output", W, "connectivity", "Same output listed twice",
    condition="`outputs` names the same result more than once.",
    why="Losses on a duplicated output count twice; usually a copy-paste slip.",
    fix="List each output once.")


@graph_check(CONNECTIVITY_DUPLICATE_OUTPUT)
def _duplicate_outputs(ctx):
    seen = set()
    for o in ctx.design.outputs:
        if o in seen:
            yield [parse_ref(o)[0]], f"output {o!r} is listed more than once"
        seen.add(o)


PARSE_UNFOLLOWED = Rule("parse.unfollowed", W, "parse", "Parser could not follow a construct",
    condition="The static parser met source it could not follow (it names file:line in the design's "
              "meta.parser_warnings).",
    why="The parsed graph may miss or simplify what the code does there; its findings may be incomplete.",
    fix="Check the named line; rewrite it in a form the parser follows, or judge the design by hand.")


@graph_check(PARSE_UNFOLLOWED)
def _parser_warnings(ctx):
    warnings = (ctx.design.meta or {}).get("parser_warnings")
    if not isinstance(warnings, list) or not warnings:
        return  # meta is free-form: only the parser's list is read
    # one finding (a design's finding is keyed by its rule and nodes, and these name no node) that says every
    # warning, up to SHOWN of them: the first alone hid a TypeError the source raises two lines further on
    said = [f"{_text(w.get('line', '?'))}: {_text(w.get('message', ''))}" if isinstance(w, dict) else _text(w)
            for w in warnings[:SHOWN]]
    if len(warnings) == 1:
        yield [], said[0]
        return
    not_kept = (ctx.design.meta or {}).get("parser_warnings_not_kept")
    total = len(warnings) + (not_kept if type(not_kept) is int and not_kept > 0 else 0)
    more = total - len(said)
    yield [], (f"{total} constructs the parser did not follow: " + "; ".join(said)
               + (f"; and {more} more (meta.parser_warnings keeps {len(warnings)})" if more else ""))


SHOWN = 5


def _text(v, limit: int = 500) -> str:
    """A value of meta (anyone may have written it) as one finding's words, cut short."""
    s = v if isinstance(v, str) else repr(v)
    return s if len(s) <= limit else s[:limit] + "…"

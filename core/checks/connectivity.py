"""Connectivity checks that read the wiring (structural faults are declared in shape.py)."""

from __future__ import annotations

from core.checks.base import graph_check, node_check
from core.graph import parse_ref
from core.ops import OP_TABLE

W = "warn"
SOURCE_OPS = {"Parameter", "Constant", "Arange"}


def _reaches_outputs(ctx) -> set:
    live: set = set()
    stack = [parse_ref(o)[0] for o in ctx.design.outputs]
    while stack:
        nid = stack.pop()
        if nid in live:
            continue
        live.add(nid)
        stack.extend(ctx.operands.get(nid, []))
    return live


@graph_check("connectivity.dead-node", W, "connectivity", "Node with no path to an output",
             condition="A node whose results never reach any declared output.",
             why="Its compute and parameters are paid for in every step and contribute nothing (and its "
                 "parameters get no gradient, which some trainers reject).",
             fix="Wire it into the output path, or delete it.")
def _dead_nodes(ctx):
    live = _reaches_outputs(ctx)
    dead = [n.id for n in ctx.design.nodes if n.id not in live]
    if dead:
        shown = ", ".join(dead[:5]) + (f" and {len(dead) - 5} more" if len(dead) > 5 else "")
        yield dead, f"{len(dead)} node(s) never reach an output: {shown}"


@graph_check("connectivity.unused-input", W, "connectivity", "Input that nothing reads",
             condition="A declared input that no node reads and no output names.",
             why="The data loader feeds and transfers a tensor for nothing; often a forgotten branch.",
             fix="Read the input, or remove it from `inputs`.")
def _unused_inputs(ctx):
    read = {rid for ids in ctx.operands.values() for rid in ids} | {parse_ref(o)[0] for o in ctx.design.outputs}
    for spec in ctx.design.inputs:
        if spec.id not in read:
            yield [spec.id], f"input {spec.id!r} is never read"


@graph_check("connectivity.unreachable", W, "connectivity", "Node not fed by any input",
             condition="A node (other than a learned Parameter, Constant or Arange) with no path from any input.",
             why="It computes the same value for every sample: wasted work, and usually a severed connection.",
             fix="Feed it from the data path, or replace it with a Parameter/Constant.")
def _unreachable(ctx):
    fed: set = set(ctx.design.input_ids)
    for node in ctx.design.topo_order():
        ops = ctx.operands.get(node.id, [])
        if any(o in fed for o in ops):
            fed.add(node.id)
    for node in ctx.design.nodes:
        if node.id in fed or node.op in SOURCE_OPS:
            continue
        spec = OP_TABLE.get(node.op)
        if spec is None or not node.inputs:
            continue
        # only the first node of an unfed stretch is worth naming
        if any(ctx.nodes.get(o) is not None and ctx.nodes[o].op not in SOURCE_OPS and o not in fed
               for o in ctx.operands.get(node.id, [])):
            continue
        yield [node.id], f"{node.op} {node.id!r} is computed only from learned or constant tensors, never from an input"


@node_check("connectivity.shared-running-stats", W, "connectivity", "Normalisation with running statistics shared",
            ops=("BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "InstanceNorm2d"),
            condition="A BatchNorm (a module with running statistics) is shared between two call sites via `shares`.",
            why="Both sites update one set of running mean/variance with differently distributed activations; "
                "evaluation then normalises with statistics that fit neither.",
            fix="Give each call site its own BatchNorm (sharing the convolution is fine).")
def _shared_bn(node, ctx):
    if node.shares is not None and node.shares in ctx.nodes:
        yield [node.id, node.shares], (f"{node.op} {node.id!r} shares running statistics with {node.shares!r}; "
                                       "use one BatchNorm per call site")


@graph_check("connectivity.duplicate-output", W, "connectivity", "Same output listed twice",
             condition="`outputs` names the same result more than once.",
             why="Losses on a duplicated output count twice; usually a copy-paste slip.",
             fix="List each output once.")
def _duplicate_outputs(ctx):
    seen = set()
    for o in ctx.design.outputs:
        if o in seen:
            yield [parse_ref(o)[0]], f"output {o!r} is listed more than once"
        seen.add(o)


@graph_check("parse.unfollowed", W, "parse", "Parser could not follow a construct",
             condition="The static parser met source it could not follow (it names file:line in the design's "
                       "meta.parser_warnings).",
             why="The parsed graph may miss or simplify what the code does there; its findings may be incomplete.",
             fix="Check the named line; rewrite it in a form the parser follows, or judge the design by hand.")
def _parser_warnings(ctx):
    for w in (ctx.design.meta or {}).get("parser_warnings", []) or []:
        if isinstance(w, dict):
            yield [], f"{w.get('line', '?')}: {w.get('message', '')}"
        else:
            yield [], str(w)

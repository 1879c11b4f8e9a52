"""Shape and dtype checks.

Most are requirements of the op table (raised by each op's shape rule,
which already knows the shapes); their words live here. The rest read the
inferred types.
"""

from __future__ import annotations

from .. import dims as D
from ..ops import ops_with
from ..ops.rules import SHAPE_UNKNOWN_DIM
from ..rule import Rule
from ..sizes import declared_id_range
from .base import node_check

B, W = "block", "warn"


LEARNED_TABLES = ops_with("table")


SHAPE_SILENT_BROADCAST = Rule("shape.silent-broadcast", W, "shape", "Residual that broadcasts silently",
    condition="An Add/Sub of two computed tensors (not a learned table such as a position embedding or a "
              "bias Parameter) broadcasts: one operand has fewer dims, or size 1 where the other is larger.",
    why="It runs, but a residual that broadcasts is almost always a wiring slip: the sum is not what the "
        "block meant and the result grows silently.",
    fix="Make both operands the same shape (project or pool the shortcut), or state the broadcast on "
        "purpose with Expand.")


@node_check(SHAPE_SILENT_BROADCAST, ops=tuple(sorted(ops_with("adds"))))
def _silent_broadcast(node, ctx):
    if node.id not in ctx.inf.ok or len(node.inputs) != 2:
        return
    feeders = [ctx.nodes.get(o) for o in ctx.operands.get(node.id, [])]
    if any(f is not None and f.op in LEARNED_TABLES for f in feeders):
        return
    a, b = (ctx.inf.type_of(r) for r in node.inputs)
    if a.shape is None or b.shape is None or a.shape == b.shape:
        return
    if len(a.shape) != len(b.shape):
        if min(len(a.shape), len(b.shape)) > 0 and D.prod(a.shape) != 1 and D.prod(b.shape) != 1:
            yield (f"{node.op} {node.id!r}: {D.fmt_shape(a.shape)} and {D.fmt_shape(b.shape)} have different ranks "
                   "and broadcast")
        return
    grown = [i for i, (u, v) in enumerate(zip(a.shape, b.shape))
             if (u == 1 and v != 1) or (v == 1 and u != 1)]
    if grown:
        yield (f"{node.op} {node.id!r}: {D.fmt_shape(a.shape)} and {D.fmt_shape(b.shape)} broadcast along "
               f"dim(s) {grown}")


UNKNOWN_DIM = SHAPE_UNKNOWN_DIM
READS_WIDTH = ops_with("reads-width")
READS_CHANNELS = ops_with("reads-channels")


def _fault_upstream(node, ctx) -> bool:
    """Whether the node or an ancestor carries a block finding (a failed requirement,
    a dangling read, a cycle), which already explains a lost size."""
    return faults_upstream(ctx).get(node.id, True)


def faults_upstream(ctx) -> dict:
    """node id -> whether it or an ancestor carries a block finding, for every node, in one pass in
    topological order (a walk over the ancestors of each node asking was quadratic). The nodes
    Kahn's walk could not order come last and read operands not yet answered: they sit on a cycle
    or below one, which is a fault."""
    answer = ctx.memo.get("faults_upstream")
    if answer is not None:
        return answer
    answer = {}
    inputs = set(ctx.design.input_ids)
    nodes, faulty, operands = ctx.nodes, ctx.faulty, ctx.operands
    for n in ctx.inf.order or ctx.design.topo_order():
        nid = n.id
        fault = nid in faulty
        if not fault:
            for o in operands.get(nid, ()):
                if o in inputs:
                    continue
                if o not in nodes or answer.get(o, True):
                    fault = True
                    break
        answer[nid] = fault
    ctx.memo["faults_upstream"] = answer
    return answer


def _warned_unknown(ctx) -> set:
    """The nodes whose shape rule warned of a size it could not check."""
    answer = ctx.memo.get("warned_unknown")
    if answer is None:
        answer = {n for v in ctx.inf.violations if v.rule == UNKNOWN_DIM for n in v.nodes}
        ctx.memo["warned_unknown"] = answer
    return answer


@node_check(SHAPE_UNKNOWN_DIM, ops=tuple(sorted(READS_WIDTH | READS_CHANNELS | ops_with("lookup"))))
def _unknown_dim(node, ctx):
    if not node.inputs:
        return
    t = ctx.inf.type_of(node.inputs[0])
    if t.shape is not None and None not in t.shape:
        return
    if _fault_upstream(node, ctx):
        return  # the size was lost at a fault that is already reported
    if node.id in _warned_unknown(ctx):
        return  # the op's own rule already said which requirement went unchecked
    if t.shape is None:
        yield f"{node.op} {node.id!r}: the rank and sizes of its input are unknown; its requirements were not checked"
    elif t.shape and t.shape[-1] is None and node.op in READS_WIDTH:
        yield f"{node.op} {node.id!r}: the width of its input is unknown; the width requirement was not checked"
    elif len(t.shape) > 1 and t.shape[1] is None and node.op in READS_CHANNELS:
        yield f"{node.op} {node.id!r}: the channel count of its input is unknown; it was not checked"


DTYPE_INDEX_RANGE = Rule("dtype.index-range", B, "dtype", "Vocabulary larger than the embedding table",
    condition="An Embedding (or EmbeddingBag) reads ids straight from an input whose declared range (the "
              "input's own "
              "`vocab_size`, else train.vocab_size for the first integer input) exceeds num_embeddings.",
    why="Token ids past the table raise 'index out of range in self' on the first batch that has one.",
    fix="Set num_embeddings to at least the vocabulary size.")


@node_check(DTYPE_INDEX_RANGE, ops=tuple(sorted(ops_with("lookup"))))
def _index_range(node, ctx):
    ops = ctx.operands.get(node.id, [])
    if not ops or ops[0] not in ctx.design.input_ids:
        return
    vocab = declared_id_range(ctx.design, ops[0])
    rows = ctx.args(node).get("num_embeddings")
    if isinstance(vocab, int) and isinstance(rows, int) and vocab > rows:
        yield (f"{node.op} {node.id!r} has {rows} rows but input {ops[0]!r} carries ids up to {vocab - 1} "
               f"(vocab_size={vocab}); set num_embeddings>={vocab}")

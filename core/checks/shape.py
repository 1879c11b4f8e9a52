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
              "bias Parameter) broadcasts: one operand has fewer dims, or size 1 where the other is larger. "
              "Idioms that broadcast on purpose are not warned (each named in BROADCAST_IDIOMS): an outer "
              "difference or sum, where each operand is 1 where the other is not ([1, T] - [T, 1] of two "
              "aranges, a GAT's [B, N, 1] + [B, 1, N]); a statistic of a tensor, taken by a reduction that only "
              "shrinks dims, of the other operand itself or against one no weighted layer made (x - x.amax(-1, "
              "keepdim=True), a norm added to a distance matrix; conv(x) + x.mean(...) is still warned); a "
              "broadcast made "
              "on purpose, by a parameter-free op that only inserts size-1 dims (a time embedding unsqueezed to "
              "[B, C, 1, 1], a [B, 1, 1, T] padding mask); and a tensor computed from no design input (a causal "
              "mask or a bias built from aranges and tables).",
    why="It runs, but a residual that broadcasts is almost always a wiring slip: the sum is not what the "
        "block meant and the result grows silently.",
    fix="Make both operands the same shape (project or pool the shortcut), or state the broadcast on "
        "purpose with Expand.")
REDUCTIONS = ops_with("reduces")
SPLITS = ops_with("split-view")


@node_check(SHAPE_SILENT_BROADCAST, ops=tuple(sorted(ops_with("adds"))))
def _silent_broadcast(node, ctx):
    if node.id not in ctx.inf.ok or len(node.inputs) < 2:
        return
    feeders = [ctx.nodes.get(o) for o in ctx.operands.get(node.id, [])]
    if any(f is not None and f.op in LEARNED_TABLES for f in feeders):
        return
    if len(node.inputs) == 2:
        yield from _pair_broadcast(node, ctx, feeders, *(ctx.inf.type_of(r) for r in node.inputs))
        return
    # an n-ary Add/Mul (a + b + c): each operand against the broadcast result of all of them
    out = ctx.inf.type_of(node.id)
    for feeder, r in zip(feeders, node.inputs):
        yield from _pair_broadcast(node, ctx, [None, feeder], out, ctx.inf.type_of(r))


def _pair_broadcast(node, ctx, feeders, a, b):
    if a.shape is None or b.shape is None or a.shape == b.shape:
        return
    ranks_differ = len(a.shape) != len(b.shape)
    if ranks_differ and (min(len(a.shape), len(b.shape)) == 0 or D.prod(a.shape) == 1 or D.prod(b.shape) == 1):
        return
    r = max(len(a.shape), len(b.shape))
    sa, sb = (1,) * (r - len(a.shape)) + tuple(a.shape), (1,) * (r - len(b.shape)) + tuple(b.shape)
    a_grows = [i for i, (u, v) in enumerate(zip(sa, sb)) if u == 1 and v != 1]
    b_grows = [i for i, (u, v) in enumerate(zip(sa, sb)) if v == 1 and u != 1]
    if not ranks_differ and not a_grows and not b_grows:
        return
    if broadcast_idiom(ctx, feeders, (a, b), (a_grows or ranks_differ and len(a.shape) < r, b_grows or
                                              ranks_differ and len(b.shape) < r)):
        return
    if ranks_differ:
        yield (f"{node.op} {node.id!r}: {D.fmt_shape(a.shape)} and {D.fmt_shape(b.shape)} have different ranks "
               "and broadcast")
        return
    yield (f"{node.op} {node.id!r}: {D.fmt_shape(a.shape)} and {D.fmt_shape(b.shape)} broadcast along "
           f"dim(s) {sorted(a_grows + b_grows)}")


def broadcast_idiom(ctx, feeders, types, grows) -> str | None:
    """The name of the idiom (BROADCAST_IDIOMS) that makes this broadcast deliberate, or None."""
    if grows[0] and grows[1]:
        return "outer"
    for k, (feeder, t, g) in enumerate(zip(feeders, types, grows)):
        if not g:
            continue  # only the operand that broadcasts says why it does
        if feeder is not None and not _data_dependent(ctx).get(feeder.id, True):
            return "from-no-input"
        made = _made_by_shape_only(ctx, feeder, t)
        other = feeders[1 - k] if len(feeders) == 2 else None
        if made == "statistic" and other is not None and feeder.inputs[0] != other.id and \
                ctx.inf.params.get(other.id, 0):
            # a statistic added to a layer's output that is not what it summarises (conv(x) + x.mean(...)):
            # the residual slip the rule is for
            continue
        if made:
            return made
    return None


BROADCAST_IDIOMS = {
    "outer": "each operand is 1 where the other is not: an outer difference or sum (distances, pairwise scores)",
    "statistic": "the broadcasting operand is a statistic of a tensor: a reduction (the 'reduces' trait) "
                 "that only shrinks dims, of the other operand itself or against an operand no layer made",
    "explicit": "the broadcasting operand was made to broadcast: a parameter-free op that only inserts size-1 dims",
    "from-no-input": "the broadcasting operand is computed from no design input: a mask or bias from positions",
}


def _made_by_shape_only(ctx, feeder, t) -> str | None:
    """"statistic" when the node that made `t` is a reduction of the op table (the `reduces` trait) that only
    shrank dims of its operand (to 1 or away: a keepdim max, a Sum over a dim), "explicit" when it only inserted
    size-1 dims
    (an Unsqueeze, a Reshape to [B, C, 1, 1]); else None. Read off shapes, not op names."""
    if feeder is None or ctx.inf.params.get(feeder.id, 0) or not feeder.inputs or t.shape is None:
        return None
    while feeder.op in SPLITS and feeder.inputs:
        # a piece of a split (adaLN's shift, scale and gate chunked from one [B, 1, 6d] projection) keeps
        # the size-1 dims of what was split: the idiom is that tensor's
        whole = ctx.inf.type_of(feeder.inputs[0])
        above = ctx.nodes.get(ctx.operands.get(feeder.id, [None])[0])
        if whole.shape is None or above is None or len(whole.shape) != len(t.shape) or not above.inputs \
                or ctx.inf.params.get(above.id, 0):
            return None
        feeder, t = above, whole
    src = ctx.inf.type_of(feeder.inputs[0]).shape
    out = tuple(t.shape)
    if src is None or tuple(src) == out:
        return None
    src = tuple(src)
    if len(out) > len(src) and [d for d in out if d != 1] == [d for d in src if d != 1]:
        return "explicit"
    if feeder.op not in REDUCTIONS:
        return None  # a pick (Select) or a layer shrinks dims too, without meaning a statistic
    if len(out) == len(src) and all(o == s or o == 1 for o, s in zip(out, src)):
        return "statistic"
    if len(out) < len(src) and _is_subsequence(out, src):
        return "statistic"
    return None


def _is_subsequence(short, long) -> bool:
    it = iter(long)
    return all(any(x == y for y in it) for x in short)


def _data_dependent(ctx) -> dict:
    """node id -> whether its value depends on a design input (one pass in topological order)."""
    answer = ctx.memo.get("data_dependent")
    if answer is not None:
        return answer
    answer = {}
    inputs = set(ctx.design.input_ids)
    for n in ctx.inf.order or ctx.design.topo_order():
        answer[n.id] = any(o in inputs or answer.get(o, True) for o in ctx.operands.get(n.id, ()))
    ctx.memo["data_dependent"] = answer
    return answer


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
    # a plain function with the common answer first (every size known: nothing), a generator only past it: this
    # check runs on every layer that reads a width or channels, and a generator per layer cost more than the test
    if not node.inputs:
        return None
    t = ctx.inf.type_of(node.inputs[0])
    if t.shape is not None and None not in t.shape:
        return None
    return _unknown_dim_words(node, ctx, t)


def _unknown_dim_words(node, ctx, t):
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

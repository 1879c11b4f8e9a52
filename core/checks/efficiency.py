"""Efficiency and cost checks (warns): compute, memory and money spent for nothing.

"Declared" means the design's `train` block (SPEC §1).
"""

from __future__ import annotations

from ..assets import gpu_prices
from ..graph import parse_ref
from ..ops import ops_with
from ..rule import Rule
from ..shapes import _memory_view
from .base import graph_check, node_check

W = "warn"
FLATTENS = ops_with("flattens")
PERMUTES = ops_with("permutes")
# two of these with the same args and operands are not one computation: a source has none, a dropout is random
NEVER_DUPLICATE = ops_with("source") | ops_with("dropout")
BLOWUP = 10.0
GIANT_LINEAR_SHARE = 0.5
GIANT_LINEAR_MIN = 10_000_000
ATTN_MEMORY_SHARE = 0.25


EFFICIENCY_PARAM_BLOWUP = Rule("efficiency.param-blowup", W, "efficiency", "Parameters far above the declared baseline",
    condition=f"Parameters exceed {BLOWUP:g}x the declared train.baseline.params.",
    why="Memory, optimizer state and checkpoint size grow with it; usually a width or a head that "
        "exploded.",
    fix="Compare the widths with the baseline; shrink the layer that grew.")


@graph_check(EFFICIENCY_PARAM_BLOWUP)
def _param_blowup(ctx):
    base = ((ctx.design.train or {}).get("baseline") or {}).get("params")
    p = ctx.cost.get("params")
    if isinstance(base, (int, float)) and base > 0 and p and p > BLOWUP * base:
        yield [], f"{p:,} parameters is {p / base:.1f}x the baseline's {int(base):,}"


EFFICIENCY_FLOP_BLOWUP = Rule("efficiency.flop-blowup", W, "efficiency", "FLOPs far above the declared baseline",
    condition=f"Forward FLOPs per sample exceed {BLOWUP:g}x the declared train.baseline.flops.",
    why="Every step costs that much more GPU time.",
    fix="Find the stage that grew (resolution, width, sequence length) and bring it back.")


@graph_check(EFFICIENCY_FLOP_BLOWUP)
def _flop_blowup(ctx):
    base = ((ctx.design.train or {}).get("baseline") or {}).get("flops")
    f = ctx.cost.get("flops_per_sample")
    if isinstance(base, (int, float)) and base > 0 and f and f > BLOWUP * base:
        yield [], f"{f:,} FLOPs per sample is {f / base:.1f}x the baseline's {int(base):,}"


EFFICIENCY_MEMORY_OVER_DEVICE = Rule("efficiency.memory-over-device", W, "efficiency",
    "Training memory exceeds the declared device",
    condition="Parameters + gradients + optimizer state + activations at the declared batch exceed the "
              "declared device's memory (no device declared: the largest device in the price table).",
    why="The run dies with out-of-memory after the GPU is paid for.",
    fix="Lower the batch size, use gradient checkpointing or mixed precision, or pick a larger device.")


@graph_check(EFFICIENCY_MEMORY_OVER_DEVICE)
def _memory_over(ctx):
    train = ctx.design.train or {}
    dev = train.get("device")
    devices = gpu_prices()["devices"]
    mem = (ctx.cost.get("memory") or {}).get("total_bytes")
    if not mem:
        return
    if not dev:
        # no device named: a design no device in the table holds will not run on any of them
        name, spec = max(devices.items(), key=lambda kv: kv[1]["memory_gb"])
        if mem > spec["memory_gb"] * 1024 ** 3:
            yield [], (f"needs ~{mem / 1024 ** 3:.1f} GiB to train, more than the largest device in the price "
                       f"table ({name}, {spec['memory_gb']} GB)")
        return
    spec = devices.get(dev)
    if spec and mem > spec["memory_gb"] * 1024 ** 3:
        yield [], f"needs ~{mem / 1024 ** 3:.1f} GiB to train, {dev} has {spec['memory_gb']} GB"


EFFICIENCY_UNKNOWN_DEVICE = Rule("efficiency.unknown-device", W, "efficiency", "Declared device not in the price table",
    condition="train.device names a GPU the price table does not list.",
    why="The cost quote falls back to the default GPU, so the quoted dollars may be wrong.",
    fix="Use a device name from assets/gpu_prices.json, or add the device there.")


@graph_check(EFFICIENCY_UNKNOWN_DEVICE)
def _unknown_device(ctx):
    dev = (ctx.design.train or {}).get("device")
    if dev and dev not in gpu_prices()["devices"]:
        yield [], f"device {dev!r} is not in the price table; quoted on {gpu_prices()['default']}"


EFFICIENCY_OVER_BUDGET = Rule("efficiency.over-budget", W, "efficiency", "Run cost over the declared budget",
    condition="The quote for one run exceeds train.budget_usd.",
    why="The run will cost more than was approved for it.",
    fix="Reduce steps, batch or model size, or raise the budget.")


@graph_check(EFFICIENCY_OVER_BUDGET)
def _over_budget(ctx):
    budget = (ctx.design.train or {}).get("budget_usd")
    usd = (ctx.cost.get("quote") or {}).get("usd")
    if isinstance(budget, (int, float)) and usd is not None and usd > budget:
        yield [], f"one run is quoted at ${usd:,.2f}, over the budget of ${budget:,.2f}"


EFFICIENCY_WIDTH_NOT_MULTIPLE_OF_8 = Rule("efficiency.width-not-multiple-of-8", W, "efficiency",
    "Hidden width not a multiple of 8",
    condition="A hidden Linear/convolution of width >= 64 whose output width is not a multiple of 8. A head (a "
              "layer no other weighted layer reads after it: the classes, the vocabulary, the output channels) "
              "has the task's width, not a chosen one, and is not warned.",
    why="Tensor cores work on tiles of 8 (fp16) or 16; odd widths fall back to slower kernels or pad "
        "silently.",
    fix="Round the width to a multiple of 8 (or 64 for the best kernels).")

WEIGHTED = ops_with("weighted")


def _feeds_a_layer(ctx) -> dict:
    """node id -> whether a weighted layer reads its result, directly or through other ops (one pass in
    reverse topological order)."""
    answer: dict[str, bool] | None = ctx.memo.get("feeds_a_layer")
    if answer is None:
        answer = {}
        ctx.memo["feeds_a_layer"] = answer
        nodes, users = ctx.nodes, ctx.users
        for n in reversed(ctx.inf.order or ctx.design.topo_order()):
            feeds = False
            for u in users.get(n.id, ()):  # a loop, not any() over a generator: this runs for every node
                user = nodes.get(u)
                if user is not None and (user.op in WEIGHTED or answer.get(u, False)):
                    feeds = True
                    break
            answer[n.id] = feeds
    return answer


@node_check(EFFICIENCY_WIDTH_NOT_MULTIPLE_OF_8, ops=tuple(sorted(ops_with("weighted"))))
def _width_multiple(node, ctx):
    # a plain function, not a generator: it runs on every weighted layer and nearly always finds nothing
    a = ctx.args(node)
    width = a.get("out_features", a.get("out_channels"))
    if not isinstance(width, int) or width < 64 or width % 8 == 0:
        return None
    if node.id in _output_ids(ctx) or not _feeds_a_layer(ctx).get(node.id, False):
        return None  # a head: its width is the task's
    return [f"{node.op} {node.id!r} outputs {width}, not a multiple of 8"]


def _output_ids(ctx) -> set:
    """The ids of the nodes the design outputs (once per design, not once per layer that asks)."""
    found = ctx.memo.get("output_ids")
    if found is None:
        found = ctx.memo["output_ids"] = {parse_ref(o)[0] for o in ctx.design.outputs}
    return found


EFFICIENCY_GIANT_FLATTEN_LINEAR = Rule("efficiency.giant-flatten-linear", W, "efficiency",
    "Giant Linear after a flatten",
    condition=f"A Linear fed by a Flatten/Reshape holding over {GIANT_LINEAR_SHARE:.0%} of all parameters "
              f"and at least {GIANT_LINEAR_MIN:,}.",
    why="Flattening a large feature map into a dense layer dominates parameters and memory for little "
        "accuracy.",
    fix="Pool first (AdaptiveAvgPool2d to 1x1) so the Linear reads channels only.")


@node_check(EFFICIENCY_GIANT_FLATTEN_LINEAR, ops=("Linear",))
def _giant_linear(node, ctx):
    p = ctx.producer(node)
    if p is None or p.op not in FLATTENS:
        return
    mine = ctx.inf.params.get(node.id, 0)
    total = ctx.cost.get("params") or 0
    if mine >= GIANT_LINEAR_MIN and total and mine > GIANT_LINEAR_SHARE * total:
        yield f"Linear {node.id!r} after {p.op} holds {mine:,} of {total:,} parameters ({mine / total:.0%})"


EFFICIENCY_ATTENTION_QUADRATIC_MEMORY = Rule("efficiency.attention-quadratic-memory", W, "efficiency",
    "Attention scores too large at the declared length",
    condition=f"Attention score matrices (batch x heads x T x T) at the declared seq_len and batch_size take "
              f"over {ATTN_MEMORY_SHARE:.0%} of the declared (or default) device's memory per layer.",
    why="Memory grows with the square of the length; the run goes out of memory or crawls.",
    fix="Shorten the sequence, use a memory-efficient attention kernel, or a sparse/linear attention.")


@node_check(EFFICIENCY_ATTENTION_QUADRATIC_MEMORY, ops=tuple(sorted(ops_with("attention-layer"))))
def _attn_memory(node, ctx):
    train = ctx.design.train or {}
    t = train.get("seq_len")
    if not isinstance(t, int):
        return
    a = ctx.args(node)
    heads = a.get("num_heads", a.get("nhead", 1))
    batch = train.get("batch_size", 32)
    prices = gpu_prices()
    dev = prices["devices"].get(train.get("device") or prices["default"]) or prices["devices"][prices["default"]]
    scores = batch * heads * t * t * 4
    if scores > ATTN_MEMORY_SHARE * dev["memory_gb"] * 1024 ** 3:
        yield (f"{node.op} {node.id!r}: scores at T={t} take {scores / 1024 ** 3:.1f} GiB per layer "
               f"on a {dev['memory_gb']} GB device")


EFFICIENCY_REDUNDANT_TRANSPOSE = Rule("efficiency.redundant-transpose", W, "efficiency", "Transpose undone right away",
    condition="A Transpose/Permute whose input is a Transpose/Permute that it exactly undoes.",
    why="Two copies of the tensor's layout for nothing.",
    fix="Remove both.")


@node_check(EFFICIENCY_REDUNDANT_TRANSPOSE, ops=tuple(sorted(PERMUTES)))
def _redundant_transpose(node, ctx):
    p = ctx.producer(node)
    if p is None or p.op not in PERMUTES or len(ctx.users.get(p.id, [])) != 1:
        return
    t = ctx.inf.type_of(p.inputs[0]) if p.inputs else None
    out = ctx.out_type(node.id)
    if t is None or out is None or t.shape is None or out.shape is None or not t.shape:
        return  # a 0-D tensor's transposes undo nothing
    if node.op == p.op == "Transpose":
        a, b = ctx.args(node), ctx.args(p)
        r = len(t.shape)
        if {a["dim0"] % r, a["dim1"] % r} == {b["dim0"] % r, b["dim1"] % r}:
            yield [p.id, node.id], f"{node.id!r} undoes {p.id!r}"
    elif node.op == p.op == "Permute":
        pd, nd = list(ctx.args(p)["dims"]), list(ctx.args(node)["dims"])
        r = len(t.shape)
        if len(pd) == len(nd) == r and [pd[d % r] % r for d in nd] == list(range(r)):
            yield [p.id, node.id], f"{node.id!r} undoes {p.id!r}"


EFFICIENCY_DUPLICATE_BRANCH = Rule("efficiency.duplicate-branch", W, "efficiency", "Same computation done twice",
    condition="Two nodes with the same op, arguments and operands that do not share weights (parameter-free "
              "ops) — computed twice.",
    why="The second computes exactly what the first did.",
    fix="Compute it once and read the result twice.")


@graph_check(EFFICIENCY_DUPLICATE_BRANCH)
def _duplicate_branch(ctx):
    # nodes grouped by op and operands first: only a node whose op and operands another node has already
    # met needs its arguments written out and asked whether it is a view (most nodes meet none)
    groups: dict = {}
    params = ctx.inf.params
    for node in ctx.design.nodes:
        if not node.inputs or params.get(node.id, 0) or node.op in NEVER_DUPLICATE:
            continue
        entry = groups.get((node.op, tuple(node.inputs)))
        if entry is None:
            groups[(node.op, tuple(node.inputs))] = [node, None]
            continue
        seen = entry[1]
        if seen is None:  # the group's first node, judged now that a second one came
            first = entry[0]
            seen = entry[1] = {} if _memory_view(first) else {repr(sorted(first.args.items())): first.id}
        if _memory_view(node):
            continue  # a view computes nothing: taking it twice (rope tables sliced for q and for k) costs nothing
        key = repr(sorted(node.args.items()))
        if key in seen:
            yield [seen[key], node.id], f"{node.id!r} recomputes {seen[key]!r} ({node.op} of the same operands)"
        else:
            seen[key] = node.id


EFFICIENCY_OVERSIZED_EMBEDDING = Rule("efficiency.oversized-embedding", W, "efficiency",
    "Embedding table far larger than the vocabulary",
    condition="num_embeddings is more than 4x the declared train.vocab_size.",
    why="Rows no id ever reads still take memory and optimizer state.",
    fix="Set num_embeddings to the vocabulary size (rounded up to a multiple of 64).")


@node_check(EFFICIENCY_OVERSIZED_EMBEDDING, ops=("Embedding",))
def _oversized_embedding(node, ctx):
    vocab = (ctx.design.train or {}).get("vocab_size")
    n = ctx.args(node).get("num_embeddings")
    if isinstance(vocab, int) and isinstance(n, int) and vocab > 0 and n > 4 * vocab:
        yield f"Embedding {node.id!r} has {n:,} rows for a vocabulary of {vocab:,}"

"""Numerics and training checks: designs that run but will train badly."""

from __future__ import annotations

from .. import dims as D
from ..graph import parse_ref
from ..ops import ops_with
from ..ops.activation import SATURATING
from ..rule import Rule
from .base import graph_check, node_check
from .shape import _data_dependent

W = "warn"
WEIGHTED = ops_with("weighted")
NORMS = ops_with("normalises")
ACTIVATIONS = ops_with("activation")
RESIDUAL = ops_with("residual")
SHORTCUTS = ops_with("shortcut")
SOFTMAX = ops_with("softmax")
NON_NEGATIVE = ops_with("non-negative")
BATCHNORMS = ops_with("batchnorm")
DROPOUTS = ops_with("dropout")
POOLS = ops_with("pools")
NONLINEAR = ops_with("nonlinear")
DEEP_NO_NORM = 12
DEEP_NO_NORM_JOINS = 8  # residual joins on one path: ResNet-18's eight blocks
DEEP_NO_RESIDUAL = 20
DEEP_SATURATING = 6
# ops a query or key passes through unchanged in kind on its way to the scores: views, splits, dropout
VIEW_OPS = ops_with("view") | ops_with("view-if-contiguous") | ops_with("split-view") | DROPOUTS
CE_LOSSES = {"cross_entropy", "crossentropy", "ce", "nll"}


def weighted_depth(ctx) -> int:
    """Weighted layers (Linear/Conv/recurrent/attention) on the longest path (once per design)."""
    found = ctx.memo.get("weighted_depth")
    if found is None:
        found = ctx.memo["weighted_depth"] = _weighted_depth(ctx)
    return found


def _weighted_depth(ctx) -> int:
    depth: dict = {}
    operands, get = ctx.operands, depth.get
    for node in ctx.inf.order or ctx.design.topo_order():
        ops = operands.get(node.id, ())
        if len(ops) == 1:  # most nodes: no generator for one operand
            best = get(ops[0], 0)
        else:
            best = max([get(o, 0) for o in ops], default=0)
        depth[node.id] = best + 1 if node.op in WEIGHTED else best
    return max(depth.values(), default=0)


NUMERICS_DEEP_NO_NORM = Rule("numerics.deep-no-norm", W, "numerics", "Deep stack without normalisation",
    condition=f"At least {DEEP_NO_NORM} weighted layers on one path and no normalisation layer anywhere; in a "
              f"residual design (Adds joining a branch to its input), at least {DEEP_NO_NORM_JOINS} joins on one "
              "path as well: each join adds its branch's variance to the stream, while a few blocks with identity "
              "shortcuts (a WaveNet's gated layers) train without norms.",
    why="Activations and gradients drift in scale with depth; training needs careful init and low learning "
        "rates, or diverges.",
    fix="Add BatchNorm after convolutions or LayerNorm in MLP/Transformer blocks.")


def _is_join(node) -> bool:
    return node.op in SHORTCUTS and len(set(node.inputs)) >= 2


def _join_depth(ctx) -> int:
    """Joins of two paths (residual Adds, concatenated skips) on the path that holds the most of them."""
    depth: dict = {}
    for node in ctx.inf.order or ctx.design.topo_order():
        best = max((depth.get(o, 0) for o in ctx.operands.get(node.id, [])), default=0)
        depth[node.id] = best + (1 if _is_join(node) else 0)
    return max(depth.values(), default=0)


@graph_check(NUMERICS_DEEP_NO_NORM)
def _deep_no_norm(ctx):
    if not NORMS.isdisjoint(ctx.ops_present()):
        return
    d = weighted_depth(ctx)
    if d < DEEP_NO_NORM:
        return
    if not SHORTCUTS.isdisjoint(ctx.ops_present()) and any(_is_join(n) for n in ctx.design.nodes) and \
            _join_depth(ctx) < DEEP_NO_NORM_JOINS:
        return
    yield [], f"{d} weighted layers deep with no normalisation layer"


NUMERICS_DEEP_NO_RESIDUAL = Rule("numerics.deep-no-residual", W, "numerics", "Very deep without residual connections",
    condition=f"At least {DEEP_NO_RESIDUAL} weighted layers on one path and no Add or Concat joining two "
              "paths.",
    why="Plain networks this deep train worse than shallower ones (the degradation problem); gradients "
        "vanish through the chain.",
    fix="Add identity shortcuts around blocks (x + f(x)).")


@graph_check(NUMERICS_DEEP_NO_RESIDUAL)
def _deep_no_residual(ctx):
    ops = ctx.ops_present()
    if not SHORTCUTS.isdisjoint(ops) and any(n.op in SHORTCUTS and len(set(n.inputs)) >= 2 for n in ctx.design.nodes):
        return  # identity shortcuts, or dense / U-Net style concatenated skips
    if not RESIDUAL.isdisjoint(ops):
        return
    d = weighted_depth(ctx)
    if d >= DEEP_NO_RESIDUAL:
        yield [], f"{d} weighted layers deep with no residual Add"


def _output_nodes(ctx):
    for o in ctx.design.outputs:
        node = ctx.nodes.get(parse_ref(o)[0])
        if node is not None:
            yield node


NUMERICS_SOFTMAX_BEFORE_LOSS = Rule("numerics.softmax-before-loss", W, "numerics",
    "Softmax before a loss that applies it",
    condition="An output is a Softmax/LogSoftmax and the declared loss is cross_entropy (which applies "
              "log-softmax itself).",
    why="Softmax twice flattens the logits: gradients shrink and training stalls.",
    fix="Output raw logits; apply softmax only at inference.")


@graph_check(NUMERICS_SOFTMAX_BEFORE_LOSS)
def _softmax_before_loss(ctx):
    loss = str((ctx.design.train or {}).get("loss", "")).lower()
    if loss not in {"cross_entropy", "crossentropy", "ce"}:
        return
    for node in _output_nodes(ctx):
        if node.op in SOFTMAX:
            yield [node.id], f"output {node.id!r} is a {node.op}, but cross_entropy applies log-softmax itself"


NUMERICS_SIGMOID_BEFORE_LOSS = Rule("numerics.sigmoid-before-loss", W, "numerics",
    "Sigmoid before a loss that applies it",
    condition="An output is a Sigmoid and the declared loss is bce_with_logits.",
    why="The sigmoid is applied twice; gradients vanish for confident predictions.",
    fix="Output logits and keep bce_with_logits, or use plain bce after the Sigmoid.")


@graph_check(NUMERICS_SIGMOID_BEFORE_LOSS)
def _sigmoid_before_loss(ctx):
    loss = str((ctx.design.train or {}).get("loss", "")).lower()
    if loss not in {"bce_with_logits", "binary_cross_entropy_with_logits", "bcewithlogits"}:
        return
    for node in _output_nodes(ctx):
        if node.op == "Sigmoid":
            yield [node.id], f"output {node.id!r} is a Sigmoid, but {loss} applies the sigmoid itself"


NUMERICS_RELU_BEFORE_LOGITS = Rule("numerics.relu-before-logits", W, "numerics", "ReLU on the logits",
    condition="An output passes through ReLU/ReLU6 and the declared loss is a classification loss.",
    why="Negative logits are clipped to 0, so the model cannot express 'not this class'; training "
        "stalls on those classes.",
    fix="Remove the final activation; the last Linear outputs logits.")


@graph_check(NUMERICS_RELU_BEFORE_LOGITS)
def _relu_before_logits(ctx):
    loss = str((ctx.design.train or {}).get("loss", "")).lower()
    if loss not in CE_LOSSES | {"bce_with_logits"}:
        return
    for node in _output_nodes(ctx):
        if node.op in NON_NEGATIVE:
            yield [node.id], f"output {node.id!r} is a {node.op}: logits cannot be negative"


NUMERICS_DROPOUT_BEFORE_BATCHNORM = Rule("numerics.dropout-before-batchnorm", W, "numerics",
    "Dropout right before BatchNorm",
    condition="A BatchNorm whose input comes straight from a Dropout.",
    why="Dropout shifts the variance between training and evaluation, so BatchNorm's running statistics "
        "are wrong at test time (the 'variance shift').",
    fix="Put Dropout after the BatchNorm (and its activation), or drop it.")


@node_check(NUMERICS_DROPOUT_BEFORE_BATCHNORM, ops=tuple(sorted(BATCHNORMS)))
def _dropout_before_bn(node, ctx):
    # plain functions, not generators, for the checks of many layers that nearly always find nothing
    p = ctx.producer(node)
    if p is not None and p.op in DROPOUTS and ctx.args(p).get("p", 0.5) > 0:
        return [([p.id, node.id], f"{p.op} {p.id!r} feeds {node.op} {node.id!r} directly")]
    return None


NUMERICS_BIAS_BEFORE_BATCHNORM = Rule("numerics.bias-before-batchnorm", W, "numerics", "Bias right before BatchNorm",
    condition="A convolution or Linear with bias=True whose only consumer is a BatchNorm.",
    why="BatchNorm subtracts the mean, cancelling the bias: parameters and compute for nothing.",
    fix="Set bias=False on the layer before a BatchNorm.")


@node_check(NUMERICS_BIAS_BEFORE_BATCHNORM, ops=tuple(sorted(WEIGHTED)))
def _bias_before_bn(node, ctx):
    if not ctx.args(node).get("bias", True):
        return None
    user = ctx.only_user(node.id)
    if user is not None and user.op in BATCHNORMS:
        return [([node.id, user.id], f"{node.op} {node.id!r} has a bias that {user.op} {user.id!r} cancels")]
    return None


NUMERICS_DEEP_SATURATING = Rule("numerics.deep-saturating", W, "numerics", "Many saturating activations",
    condition=f"At least {DEEP_SATURATING} Tanh/Sigmoid/Hardtanh activations in the data path (gates that "
              "feed a Mul are not counted) and no normalisation.",
    why="Saturating activations multiply small derivatives layer after layer: gradients vanish.",
    fix="Use ReLU/GELU/SiLU in the hidden layers, or normalise before each activation.")


@graph_check(NUMERICS_DEEP_SATURATING)
def _deep_saturating(ctx):
    if not NORMS.isdisjoint(ctx.ops_present()) or SATURATING.isdisjoint(ctx.ops_present()):
        return
    sat = [n.id for n in ctx.design.nodes if n.op in SATURATING
           and not any(ctx.nodes[u].op == "Mul" for u in ctx.users.get(n.id, []))]
    if len(sat) >= DEEP_SATURATING:
        yield sat, f"{len(sat)} saturating activations and no normalisation"


SOURCES = ops_with("source")


def _walk_up(ctx, node, through: frozenset, marks: frozenset = frozenset()):
    """Walk up from `node` through ops in `through`, following each node's first operand that is
    not a constant or learned table; (the first node met that is not in `through`, or None when
    the walk runs off the graph or round a loop; whether a node walked through has an op in `marks`).

    Every node's answer is kept per (through, marks), so a design's walks together visit each node
    once: walking again from each of many Softmax nodes at the end of one long chain was quadratic,
    and a loop through Add (a cycle the structural pass already refuses) was walked forever."""
    memo = ctx.memo.setdefault(("walk_up", through, marks), {})
    path = []
    on_path = set()
    cur = node
    while True:
        if cur is None or cur.op not in through:
            found = (cur, False)
            break
        hit = memo.get(cur.id)
        if hit is not None:
            found = hit
            break
        if cur.id in on_path:
            found = (None, False)
            break
        path.append(cur)
        on_path.add(cur.id)
        nxt = None
        for o in ctx.operands.get(cur.id, ()):
            cand = ctx.nodes.get(o)
            if cand is not None and cand.op not in SOURCES:
                nxt = cand
                break
        cur = nxt
    src, marked = found
    for c in reversed(path):
        marked = marked or c.op in marks
        memo[c.id] = (src, marked)
    return src, marked


SCALES = ops_with("scales")
SCORE_PATH = ops_with("masks") | SCALES
QUERY_PATH = VIEW_OPS | SCALES
EMBEDDING_PATH = ops_with("adds-no-position")


NUMERICS_ATTENTION_NO_SCALE = Rule("numerics.attention-no-scale", W, "numerics",
    "Hand-built attention without 1/sqrt(d) scaling",
    condition="A Softmax over a product (MatMul, or a two-operand Einsum) of a query and a key, reached through "
              "masks and additive biases, with no scaling (Scale by a factor other than +-1, or Div) between "
              "them or on the query/key on their way from their projections (through views and a rotary "
              "embedding's Mul/Add). Not attention, and not warned: a product with a fixed table (a codebook or "
              "class prototypes the data never reaches and no layer projects: a softmax over negative distances "
              "to a codebook), and cosine attention (both operands normalised).",
    why="Dot products grow with the head width; unscaled scores saturate the softmax and its gradients "
        "vanish.",
    fix="Multiply the scores (or the query) by 1/sqrt(head_dim) with Scale.")

# a rotary embedding rotates q and k by tables (q * cos + rotate_half(q) * sin): walked through on the way
# up from the product to the projection, so a scale applied to q before the rotation is seen
ROTATION_PATH = QUERY_PATH | ops_with("rotary-step")
SCORE_WALK_LIMIT = 64  # nodes looked at per softmax or operand: score and query paths are short


def _is_scaling(node, ctx) -> bool:
    if node.op not in SCALES:
        return False
    if node.op == "Scale":
        v = ctx.args(node).get("value")
        return not isinstance(v, (int, float)) or abs(v) != 1  # a negation (rotate_half's -x2) is no scaling
    return True


def _fed_by(ctx, node, through: frozenset | set, want) -> tuple:
    """Walk up from `node` through ops in `through` along the operands that carry data (a design input
    upstream; any non-source operand when none does), at most SCORE_WALK_LIMIT nodes; return (the nodes met
    outside `through`, whether a node for which want(node) holds was walked through)."""
    dd = _data_dependent(ctx)
    seen: set[str] = set()
    stack, ends, hit = [node], [], False
    while stack and len(seen) < SCORE_WALK_LIMIT:
        cur = stack.pop()
        if cur is None or cur.id in seen:
            continue
        seen.add(cur.id)
        if cur.op not in through:
            ends.append(cur)
            continue
        hit = hit or want(cur)
        cands = [ctx.nodes.get(o) for o in ctx.operands.get(cur.id, ())]
        cands = [c for c in cands if c is not None and c.op not in SOURCES]
        carrying = [c for c in cands if dd.get(c.id, True)]
        stack.extend(carrying or cands)
    return ends, hit


def _projected(ctx) -> dict:
    """node id -> whether a weighted layer lies upstream of it (one pass in topological order)."""
    answer: dict[str, bool] | None = ctx.memo.get("projected")
    if answer is None:
        answer = {}
        ctx.memo["projected"] = answer
        for n in ctx.inf.order or ctx.design.topo_order():
            answer[n.id] = n.op in WEIGHTED or any(answer.get(o, False) for o in ctx.operands.get(n.id, ()))
    return answer


def _fixed_table(ctx, ref) -> bool:
    """A tensor no design input reaches and no layer projects: a codebook, a prototype table (learned
    queries projected by a Linear, as a Perceiver's latents, are still queries)."""
    node = ctx.nodes.get(ref)
    if node is None:
        return False  # a design input
    return not _data_dependent(ctx).get(ref, True) and not _projected(ctx).get(ref, False)


@node_check(NUMERICS_ATTENTION_NO_SCALE, ops=("Softmax",))
def _attention_no_scale(node, ctx):
    products, _ = _fed_by(ctx, ctx.producer(node), SCORE_PATH, lambda n: False)
    for src in products:
        ops = ctx.operands.get(src.id, [])
        if not (src.op == "MatMul" or (src.op == "Einsum" and len(ops) == 2)):
            continue
        # a scaling between the product and the softmax, on the path that reaches this product
        def scales_this(n, src=src):
            return _is_scaling(n, ctx) and _reaches(ctx, n, src)

        if _fed_by(ctx, ctx.producer(node), SCORE_PATH, scales_this)[1]:
            continue
        if any(_fixed_table(ctx, o) for o in ops):
            continue
        walks = [_fed_by(ctx, ctx.nodes.get(o), ROTATION_PATH, lambda n: _is_scaling(n, ctx)) for o in ops]
        if any(hit for _, hit in walks):
            continue
        if walks and all(ends and all(e.op == "Normalize" for e in ends) for ends, _ in walks):
            continue  # cosine attention: the scores are bounded whatever the width
        yield [src.id, node.id], f"scores {src.id!r} reach Softmax {node.id!r} without 1/sqrt(d) scaling"


def _reaches(ctx, node, target) -> bool:
    """Whether `target` is upstream of `node` along the score path (a short walk)."""
    ends, _ = _fed_by(ctx, node, SCORE_PATH, lambda n: False)
    return any(e.id == target.id for e in ends)


NUMERICS_DOUBLE_ACTIVATION = Rule("numerics.double-activation", W, "numerics", "Activation applied twice",
    condition="An activation whose input comes straight from another activation.",
    why="The second one is redundant (ReLU∘ReLU) or squashes twice (Sigmoid∘Tanh): compute for nothing "
        "or weaker gradients.",
    fix="Keep one activation between weighted layers.")


@node_check(NUMERICS_DOUBLE_ACTIVATION, ops=tuple(sorted(ACTIVATIONS)))
def _double_activation(node, ctx):
    p = ctx.producer(node)
    if p is not None and p.op in ACTIVATIONS and len(ctx.users.get(p.id, [])) == 1:
        return [([p.id, node.id], f"{node.op} {node.id!r} follows {p.op} {p.id!r} directly")]
    return None


NUMERICS_LINEAR_COLLAPSE = Rule("numerics.linear-collapse", W, "numerics", "Two Linear layers with nothing between",
    condition="A Linear fed directly by another Linear (no activation, norm or other op between), unless the pair "
              "is a low-rank factorisation: a middle width r with in*r + r*out < in*out (a bottleneck that "
              "holds fewer weights than the one Linear it composes to, as LoRA or a factorised projection).",
    why="Two affine maps compose into one: the extra layer adds parameters and FLOPs but no capacity.",
    fix="Insert a nonlinearity between them, or merge them into one Linear.")


@node_check(NUMERICS_LINEAR_COLLAPSE, ops=("Linear",))
def _linear_collapse(node, ctx):
    p = ctx.producer(node)
    if p is None or p.op != "Linear" or len(ctx.users.get(p.id, [])) != 1:
        return None
    a, b = ctx.args(p), ctx.args(node)
    n_in, r, n_out = a.get("in_features"), a.get("out_features"), b.get("out_features")
    if all(isinstance(v, int) for v in (n_in, r, n_out)) and n_in * r + r * n_out < n_in * n_out:
        return None  # a rank-r factorisation: fewer weights than the merged layer, on purpose
    return [([p.id, node.id], f"Linear {p.id!r} feeds Linear {node.id!r} with no nonlinearity between")]


NUMERICS_HIGH_DROPOUT = Rule("numerics.high-dropout", W, "numerics", "Dropout rate very high",
    condition="A Dropout with p >= 0.8.",
    why="Most activations are zeroed each step: the signal is mostly noise and training is slow or stalls.",
    fix="Use p between 0.1 and 0.5.")


@node_check(NUMERICS_HIGH_DROPOUT, ops=tuple(sorted(DROPOUTS)))
def _high_dropout(node, ctx):
    p = ctx.args(node).get("p", 0.5)
    if isinstance(p, (int, float)) and p >= 0.8:
        yield f"{node.op} {node.id!r} drops {p:.0%} of its inputs"


NUMERICS_SOFTMAX_IMPLICIT_DIM = Rule("numerics.softmax-implicit-dim", W, "numerics", "Softmax without a dim",
    condition="Softmax/LogSoftmax constructed with dim=None.",
    why="torch then guesses the dimension (deprecated); on a batch of sequences it normalises the wrong "
        "axis silently.",
    fix="Pass dim explicitly (usually -1).")


@node_check(NUMERICS_SOFTMAX_IMPLICIT_DIM, ops=tuple(sorted(SOFTMAX)))
def _softmax_dim(node, ctx):
    if ctx.args(node).get("dim") is None:
        yield f"{node.op} {node.id!r} has no dim; torch will guess one"


BN_VALUES_PER_SAMPLE = 16  # values per channel in one sample from which batch statistics are as good as a batch's


NUMERICS_BATCHNORM_BATCH_ONE = Rule("numerics.batchnorm-batch-one", W, "numerics", "BatchNorm with a batch of one",
    condition="The design declares train.batch_size = 1, trains, and a BatchNorm normalises fewer than "
              f"{BN_VALUES_PER_SAMPLE} values per channel in a sample (a [1, C] vector, a small map). A BatchNorm2d "
              "over an HxW map at batch 1 takes its statistics over H*W values per channel, as an instance norm "
              "does, and trains (U-Nets at batch 1): not warned.",
    why="Batch statistics over a handful of values are noise (BatchNorm1d on 2-D input raises in training).",
    fix="Use a larger batch, or GroupNorm/LayerNorm.")


def _values_per_channel(ctx, node):
    """How many values one sample gives each channel of a BatchNorm (the sizes after the channel dim), with
    the declared sizes put in; None when not known."""
    t = ctx.inf.type_of(node.inputs[0]) if node.inputs else None
    if t is None or t.shape is None or len(t.shape) < 2:
        return None
    count = D.prod(t.shape[2:])
    if not D.is_const(count) and ctx.inf.declared:
        count = D.substitute(count, ctx.inf.declared)
    return count if D.is_const(count) else None


@graph_check(NUMERICS_BATCHNORM_BATCH_ONE)
def _bn_batch_one(ctx):
    train = ctx.design.train or {}
    # in eval BatchNorm normalises with its running statistics, so one sample is as good as many
    if train.get("batch_size") != 1 or train.get("mode") == "eval":
        return
    if BATCHNORMS.isdisjoint(ctx.ops_present()):
        return
    bns = [n.id for n in ctx.design.nodes if n.op in BATCHNORMS
           and (_values_per_channel(ctx, n) or 0) < BN_VALUES_PER_SAMPLE]
    if bns:
        yield bns, (f"{len(bns)} BatchNorm layer(s) with batch_size=1 over fewer than {BN_VALUES_PER_SAMPLE} "
                    "values per channel")


NUMERICS_POOL_AFTER_GLOBAL = Rule("numerics.pool-after-global", W, "numerics", "Pooling an already pooled map",
    condition="A pooling layer whose input's spatial size is already 1.",
    why="It does nothing but cost a kernel launch; often a leftover from a changed resolution.",
    fix="Remove the redundant pooling.")


@node_check(NUMERICS_POOL_AFTER_GLOBAL, ops=tuple(sorted(POOLS)))
def _pool_after_global(node, ctx):
    if not node.inputs:
        return
    t = ctx.inf.type_of(node.inputs[0])
    if t.shape is None or len(t.shape) < 3:
        return
    n = int(node.op[-2])  # the pools are named by their spatial rank (MaxPool2d)
    if all(d == 1 for d in t.shape[-n:]):
        yield f"{node.op} {node.id!r} pools a {'x'.join('1' * n)} map"


NUMERICS_NO_NONLINEARITY = Rule("numerics.no-nonlinearity", W, "numerics", "No nonlinearity anywhere",
    condition="Two or more weighted layers and no activation, attention, recurrence or gating op at all.",
    why="The whole network is one affine map however many layers it has.",
    fix="Add activations between the layers.")


@graph_check(NUMERICS_NO_NONLINEARITY)
def _no_nonlinearity(ctx):
    ops = ctx.ops_present()
    if ops & NONLINEAR:
        return
    weighted = [n.id for n in ctx.design.nodes if n.op in WEIGHTED]
    if len(weighted) >= 2 and not (ops & NONLINEAR):
        yield weighted, f"{len(weighted)} weighted layers and no nonlinearity"


NUMERICS_LOSS_OUTPUT_MISMATCH = Rule("numerics.loss-output-mismatch", W, "numerics",
    "Output shape does not suit the declared loss",
    condition="cross_entropy with an output of width 1 or rank 1, or mse with an integer output.",
    why="cross_entropy over one class always has zero loss: nothing is learnt.",
    fix="Give the head one output per class, or choose a loss for regression.")


@graph_check(NUMERICS_LOSS_OUTPUT_MISMATCH)
def _loss_output(ctx):
    loss = str((ctx.design.train or {}).get("loss", "")).lower()
    if loss not in {"cross_entropy", "crossentropy", "ce"}:
        return
    for node in _output_nodes(ctx):
        t = ctx.out_type(node.id)
        if t is None or t.shape is None:
            continue
        if len(t.shape) < 2 or t.shape[-1] == 1:
            yield [node.id], f"output {node.id!r} {list(t.shape)} has one class for cross_entropy"


NUMERICS_ATTENTION_NO_POSITION = Rule("numerics.attention-no-position", W, "numerics",
    "Attention over embeddings with no position",
    condition="An attention layer fed straight from an Embedding (through dropout/norm only), with no "
              "positional term added.",
    why="Self-attention is permutation-invariant: without positions the model cannot tell word order.",
    fix="Add a learned position table (Parameter) or sinusoidal positions to the token embeddings.")


@node_check(NUMERICS_ATTENTION_NO_POSITION, ops=tuple(sorted(ops_with("attention-layer"))))
def _attention_no_position(node, ctx):
    src, _ = _walk_up(ctx, ctx.producer(node), EMBEDDING_PATH)
    if src is not None and src.op == "Embedding":
        yield [src.id, node.id], f"{node.op} {node.id!r} reads Embedding {src.id!r} with no position added"

"""The traits an `OpSpec` declares: what consumers of the table ask of an op instead of keeping lists.

Each trait is a name with its meaning; an op entry declares the traits that hold for it
(`OpSpec(..., traits=("view", "moves-values"))`) and every consumer asks the table
(`ops_with("view")`, `has(op, "dropout")`). A misspelt trait fails when the table is built
or when the consumer's module is imported, never silently at run time.
"""

from __future__ import annotations

TRAITS: dict[str, str] = {
    # memory and values (the inference walk's id ranges, in-place and view tracking)
    "view": "its result is always a view of its first operand (measured: an in-place op on it reaches the operand)",
    "view-if-contiguous": "its result is a view of its first operand or a copy, by strides (Reshape, Flatten)",
    "split-view": "its results are views of pieces of its first operand, each holding values of it only",
    "einops": "an einops op: a pattern and axis lengths (some patterns are views)",
    "moves-values": "its result holds values of its first operand only (an id range passes through it)",
    "picks-values": "its result holds some of its first operand's values only (a pick may drop some)",
    "keeps-max": "its largest result is at least the largest non-negative id it reads",
    "joins-values": "its result holds every value of every operand",
    "starts-values": "the inference walk starts following values or leaves at it: a learned leaf (Parameter), a "
                     "range of ids (Arange), integer bounds (Clamp)",
    "grows-ids": "an element-wise sum or product: ids are never negative, so the result reaches the larger range",
    "sums": "a sum or running sum over dims: a sum of ids reaches each of them",
    "reduces": "a statistic over dims (a sum, mean, max, min): what it gives is meant to broadcast back",
    "wraps-negative": "reads positions and wraps a negative one as Python indexing does",
    "pads": "a padding layer or F.pad",
    "pads-with-fill": "pads with a constant fill value (which may be negative)",
    "first-dtype": "its result takes its first operand's dtype",
    "promotes-operands": "its kernels run on its data operands' promoted dtype (TensorIterator's type promotion): "
                         "the measured row of that dtype decides it",
    "refuses-bool": "refuses a bool data operand whatever the other's dtype (measured: a subtraction)",
    "source": "makes a tensor from no operand (a constant, a learned table, a range)",
    "table": "its result is a learned or constant table (or an Expand), meant to broadcast",
    "takes-target-shape": "its `shape` argument is the target shape of its result (one size may be -1)",
    # what the checks ask
    "dropout": "a dropout: random zeroing in training, the identity in eval mode",
    "weighted": "a dense or convolutional layer with a learned weight (counts in the weighted depth)",
    "normalises": "normalises its activations (a norm layer, or a transformer layer holding one)",
    "batchnorm": "batch normalisation: batch statistics in training, running ones in eval",
    "activation": "a pointwise activation placed between layers",
    "nonlinear": "its result is not an affine function of its inputs",
    "residual": "holds its own residual connections (the transformer layers and stacks)",
    "shortcut": "joins two paths into one (a residual Add or a dense / U-Net Concat)",
    "adds": "adds or subtracts two tensors element-wise (broadcasting)",
    "softmax": "a softmax along a dim (Softmax, LogSoftmax, Softmin)",
    "non-negative": "its result is never negative (the logits it gives cannot say 'not this class')",
    "scales": "scales its operand by a constant (Scale, Div)",
    "masks": "shifts or masks attention scores on their way to a softmax (Add, Sub, MaskedFill)",
    "adds-no-position": "passes tokens on without adding a position to them",
    "attention-layer": "one attention layer: computes batch x heads x T x T scores",
    "rotary-step": "a step of a rotary embedding, q * cos + rotate_half(q) * sin (Mul, Add, Sub, Concat): the "
                   "attention-scale check walks through it from the scores to the query",
    "permutes": "reorders dims (Transpose, Permute)",
    "flattens": "merges dims into one (a Flatten, a Reshape)",
    "lookup": "reads ids as rows of its table (the embeddings)",
    "reads-width": "torch checks its input's last size against an argument (the width)",
    "reads-channels": "torch checks its input's dim 1 against an argument (the channels)",
    "pools": "pools each spatial window of its input (max, average, power-average, adaptive)",
    "transposed": "a transposed convolution",
    "adaptive": "pools to a given output size (its windows follow from the input's size)",
    "parametrizable": "a layer whose `weight` a design's `parametrize` may name (weight_norm, spectral_norm)",
    "affine": "a norm layer whose weight and bias are optional (elementwise_affine, affine)",
    "meta-blind": "its meta kernel skips a check its CPU kernel makes (the grounding study runs it for real)",
    "multi-result": "a call returns several tensors (the parser unpacks them)",
    "stack": "a stack of copies of another op's layer (its args hold that layer's)",
    "factory-kwargs": "its torch.nn constructor takes the factory kwargs dtype and device (for its weights and "
                      "buffers), whether or not these args give it any",
    "weights-any-float": "its torch layer runs on floating values of a dtype other than its weights' (measured: the "
                         "others with floating weights raise, as torch's kernels take one dtype)",
    "functional": "no class of torch.nn: a tensor function or method, an einops layer, one of our own",
}


def check_traits(op: str, traits) -> frozenset:
    """The op's traits as a frozenset; a name that is not a trait fails when the table is built."""
    out = frozenset(traits)
    bad = sorted(out - TRAITS.keys())
    if bad:
        raise ValueError(f"op {op}: unknown trait(s) {', '.join(bad)} (core/ops/traits.py lists them)")
    return out


def known(trait: str) -> str:
    if trait not in TRAITS:
        raise KeyError(f"no trait {trait!r} (core/ops/traits.py lists them)")
    return trait

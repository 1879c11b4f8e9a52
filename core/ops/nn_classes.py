"""torch.nn's classes as their constructors take arguments: the op table's layers, and the classes a
model file may build that are no op of a design (losses, containers).

A reader of model code (the parser) turns `nn.Conv2d(3, 64, 3)` into named arguments with this: an op's
constructor is its `args` (the table keeps them in the constructor's order, with torch's defaults), less
what torch takes at the call rather than at construction (`is_causal`), plus the few constructor
arguments a node does not carry (`Embedding._weight`). tests/test_nn_classes.py holds every entry to
torch's own signatures.
"""

from __future__ import annotations

import functools

from .base import BOOL, Arg

# arguments of an op that torch's forward takes, not its constructor
AT_CALL = {
    "MultiheadAttention": ("is_causal", "need_weights", "average_attn_weights"),
    "TransformerEncoderLayer": ("is_causal",),
    "TransformerDecoderLayer": ("tgt_is_causal",),
    "TransformerEncoder": ("is_causal",),
    "TransformerDecoder": ("tgt_is_causal",),
}

_NORM_BIAS = (Arg("bias", True, BOOL),)  # torch >= 2.10 (keyword only); older torch has no such argument
# constructor arguments torch takes by keyword only (after `*`): a call cannot give them by position. The norms'
# bias by identity (LayerNorm's own bias, equal to it, is positional); a loss's first keyword-only arg by name
_KEYWORD_ONLY = frozenset(map(id, _NORM_BIAS))
KEYWORD_ONLY_FROM = {"GaussianNLLLoss": "full", "TripletMarginWithDistanceLoss": "distance_function",
                     "LinearCrossEntropyLoss": "out_features"}
# classes that are no op whose constructor takes device and dtype (an op says it by its trait factory-kwargs)
FACTORY_NOT_OPS = frozenset({"AdaptiveLogSoftmaxWithLoss", "LinearCrossEntropyLoss"})
POSITIONAL_ONLY_SLOTS = {"RNN": ("proj_size",), "GRU": ("proj_size",)}
# constructor arguments (after the op's own, in torch's order) that a design's node does not carry
CONSTRUCTOR_ONLY = {
    **{op: _NORM_BIAS for op in ("BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm", "InstanceNorm1d",
                                 "InstanceNorm2d", "InstanceNorm3d", "GroupNorm")},
    "Embedding": (Arg("_weight", None), Arg("_freeze", False)),
    "FractionalMaxPool2d": (Arg("_random_samples", None),),
    "FractionalMaxPool3d": (Arg("_random_samples", None),),
    "Hardtanh": (Arg("min_value", None), Arg("max_value", None)),  # deprecated spellings of min_val / max_val
    "Upsample": (Arg("recompute_scale_factor", None),),
}

# torch's `from_pretrained` classmethods: the table first, then the constructor's args in this order
FROM_PRETRAINED = {
    "Embedding": ("embeddings", "freeze", "padding_idx", "max_norm", "norm_type", "scale_grad_by_freq", "sparse"),
    "EmbeddingBag": ("embeddings", "freeze", "max_norm", "norm_type", "scale_grad_by_freq", "mode", "sparse",
                     "include_last_offset", "padding_idx"),
}

def from_pretrained_args(op: str):
    """The names `nn.<op>.from_pretrained(...)` takes, in torch's order; None for a class without one."""
    return FROM_PRETRAINED.get(op)


# ops of the table that are no class of torch.nn: tensor functions and methods, einops' layers, our own
@functools.cache
def _not_nn() -> frozenset:
    from . import ops_with

    return ops_with("functional")


def __getattr__(name: str):
    if name == "NOT_NN":  # asked of the table once it is built (this module is read while it is being built)
        return _not_nn()
    raise AttributeError(name)


def _args(*spec) -> tuple:
    """(name,) for a required argument, (name, default) for one with a default."""
    return tuple(Arg(*s) for s in spec)


_SIZE_REDUCE = (("size_average", None), ("reduce", None), ("reduction", "mean"))
# torch.nn classes a model file may build that are no op: their output is no layer of a design
NOT_OPS = {
    "Module": (),
    "Sequential": (),
    "ModuleList": _args(("modules", None)),
    "ModuleDict": _args(("modules", None)),
    "ParameterList": _args(("values", None)),
    "ParameterDict": _args(("parameters", None)),
    "AdaptiveLogSoftmaxWithLoss": _args(("in_features",), ("n_classes",), ("cutoffs",), ("div_value", 4.0),
                                        ("head_bias", False)),
    "BCELoss": _args(("weight", None), *_SIZE_REDUCE),
    "BCEWithLogitsLoss": _args(("weight", None), *_SIZE_REDUCE, ("pos_weight", None)),
    "CTCLoss": _args(("blank", 0), ("reduction", "mean"), ("zero_infinity", False)),
    "CosineEmbeddingLoss": _args(("margin", 0.0), *_SIZE_REDUCE),
    "CrossEntropyLoss": _args(("weight", None), ("size_average", None), ("ignore_index", -100), ("reduce", None),
                              ("reduction", "mean"), ("label_smoothing", 0.0)),
    "GaussianNLLLoss": _args(("full", False), ("eps", 1e-06), ("reduction", "mean")),
    "HingeEmbeddingLoss": _args(("margin", 1.0), *_SIZE_REDUCE),
    "HuberLoss": _args(("reduction", "mean"), ("delta", 1.0)),
    "KLDivLoss": _args(*_SIZE_REDUCE, ("log_target", False)),
    "L1Loss": _args(*_SIZE_REDUCE),
    "LinearCrossEntropyLoss": _args(("in_features",), ("num_classes",), ("out_features", ()), ("bias", False),
                                    ("reduction", "mean"), ("weight", None), ("ignore_index", None),
                                    ("label_smoothing", 0.0), ("options", None)),
    "MSELoss": _args(*_SIZE_REDUCE),
    "MarginRankingLoss": _args(("margin", 0.0), *_SIZE_REDUCE),
    "MultiLabelMarginLoss": _args(*_SIZE_REDUCE),
    "MultiLabelSoftMarginLoss": _args(("weight", None), *_SIZE_REDUCE),
    "MultiMarginLoss": _args(("p", 1), ("margin", 1.0), ("weight", None), *_SIZE_REDUCE),
    "NLLLoss": _args(("weight", None), ("size_average", None), ("ignore_index", -100), ("reduce", None),
                     ("reduction", "mean")),
    "NLLLoss2d": _args(("weight", None), ("size_average", None), ("ignore_index", -100), ("reduce", None),
                       ("reduction", "mean")),
    "PoissonNLLLoss": _args(("log_input", True), ("full", False), ("size_average", None), ("eps", 1e-08),
                            ("reduce", None), ("reduction", "mean")),
    "SmoothL1Loss": _args(*_SIZE_REDUCE, ("beta", 1.0)),
    "SoftMarginLoss": _args(*_SIZE_REDUCE),
    "TripletMarginLoss": _args(("margin", 1.0), ("p", 2.0), ("eps", 1e-06), ("swap", False), *_SIZE_REDUCE),
    "TripletMarginWithDistanceLoss": _args(("distance_function", None), ("margin", 1.0), ("swap", False),
                                           ("reduction", "mean")),
}

# torch's lazy layers: the op each becomes at its first call, which reads the op's first argument (in_features,
# in_channels, num_features) off that call's input; their constructors take the rest, in the op's order, with
# these defaults of their own where torch's differ from the op's (LazyInstanceNorm is affine and tracks stats)
LAZY = {
    "LazyLinear": "Linear",
    **{f"Lazy{kind}{d}d": f"{kind}{d}d" for kind in ("Conv", "ConvTranspose", "BatchNorm", "InstanceNorm")
       for d in (1, 2, 3)},
}
_LAZY_DEFAULTS = {f"LazyInstanceNorm{d}d": {"affine": True, "track_running_stats": True} for d in (1, 2, 3)}


def lazy_size(name: str, shape: list | tuple):
    """The size lazy layer `name` reads off its first input, as torch's initialize_parameters reads it: a Linear's
    last dim, a conv's channels (dim 1 of a batched input, dim 0 of an unbatched one), a norm's dim 1. Where torch
    raises instead (a conv given an input of another rank), dim 1 or 0: the op's own shape rule then refuses the
    input in its words. None for an input too small to read."""
    op = LAZY[name]
    if op == "Linear":
        return shape[-1] if shape else None
    if op.startswith(("Conv", "ConvTranspose")):
        unbatched = len(shape) == int(op[-2]) + 1
        return shape[0] if unbatched else shape[1] if len(shape) > 1 else None
    return shape[1] if len(shape) > 1 else None


def lazy_defaults(name: str) -> dict:
    """The defaults of lazy layer `name` that differ from those of the op it becomes."""
    return _LAZY_DEFAULTS.get(name, {})


_CONSTRUCTORS: dict[str, tuple] = {}
_DEFAULTS: dict[str, dict] = {}


def is_nn_class(name: str) -> bool:
    """Whether `torch.nn.<name>` is a module class this table knows (an op's layer, a loss, a container)."""
    from . import OP_TABLE

    return name in NOT_OPS or name in LAZY or (name in OP_TABLE and name not in _not_nn())


def constructor_args(name: str) -> tuple | None:
    """The arguments of `torch.nn.<name>(...)` in its order (device and dtype aside), as `Arg`s with
    torch's defaults; None when it is no class this table knows."""
    if not is_nn_class(name):
        return None
    got = _CONSTRUCTORS.get(name)
    if got is None:
        from . import OP_TABLE

        if name in NOT_OPS:
            got = NOT_OPS[name]
        elif name in LAZY:
            own = lazy_defaults(name)
            got = tuple(Arg(a.name, own[a.name], a.kind) if a.name in own else a
                        for a in (constructor_args(LAZY[name]) or ())[1:])
        else:
            at_call = AT_CALL.get(name, ())
            got = tuple(a for a in OP_TABLE[name].args if a.name not in at_call) + CONSTRUCTOR_ONLY.get(name, ())
        _CONSTRUCTORS[name] = got
    return got


def constructor_defaults(name: str) -> dict:
    """torch's defaults of `torch.nn.<name>`'s optional arguments ({} for a class it does not know).
    The same dict on every call: read it, never change it."""
    got = _DEFAULTS.get(name)
    if got is None:
        got = {a.name: a.default for a in constructor_args(name) or () if not a.required}
        if is_nn_class(name):
            _DEFAULTS[name] = got
    return got


def takes_factory_kwargs(name: str) -> bool:
    """Whether `torch.nn.<name>(...)` takes device and dtype (torch raises TypeError for either where not)."""
    from .base import takes_factory_args

    return name in FACTORY_NOT_OPS or (is_nn_class(name) and takes_factory_args(LAZY.get(name, name)))


def positional_args(name: str) -> tuple | None:
    """The names `torch.nn.<name>(...)` takes by position, in torch's order: its constructor args up to those
    it takes by keyword only, torch's slots a node does not carry (RNN's proj_size), then device and dtype
    where its constructor takes them by position. None for a class not known."""
    args = constructor_args(name)
    if args is None:
        return None
    out: list[str] = []
    for a in args:
        if a.name == KEYWORD_ONLY_FROM.get(name):
            return tuple(out)
        if id(a) not in _KEYWORD_ONLY:
            out.append(a.name)
    out += POSITIONAL_ONLY_SLOTS.get(name, ())
    return tuple(out) + (("device", "dtype") if takes_factory_kwargs(name) else ())


PARAMETRIZATIONS = ("weight_norm", "spectral_norm")


def parametrized(shapes: list, parametrize: str) -> list | None:
    """A layer's learned tensors (`OpSpec.param_shapes`) once torch.nn.utils.parametrizations.<parametrize>
    is applied to its `weight` (dim 0): weight_norm holds one magnitude per slice of dim 0 (`original0`) and
    the direction (`original1`); spectral_norm holds the weight itself (`original`; its vectors are buffers).
    Names and order as torch's named_parameters(); None when the layer has no weight to parametrize."""
    weight = next((tuple(s) for n, s in shapes if n == "weight"), None)
    if weight is None or parametrize not in PARAMETRIZATIONS:
        return None
    rest = [(n, s) for n, s in shapes if n != "weight"]
    if parametrize == "spectral_norm":
        return rest + [("parametrizations.weight.original", weight)]
    magnitude = weight[:1] + (1,) * (len(weight) - 1)
    return rest + [("parametrizations.weight.original0", magnitude), ("parametrizations.weight.original1", weight)]

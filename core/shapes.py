"""The inference walk: every node's result types, in topological order.

The walk keeps going past the first error: a node whose requirement fails
yields unknown results, and unknowns never block, so one fault is reported
once, where it happens, instead of cascading downstream.
"""

from __future__ import annotations

from . import dims as D
from .graph import MAX_RANK, MAX_SIZE_TEXT, Design, Node, parse_ref
from .ops import OP_TABLE, ops_with
from .ops.base import (
    ALWAYS_MEASURED,
    FACTORY_ARGS,
    FACTORY_WORDS,
    FLOAT_DTYPES,
    UNKNOWN,
    InferCtx,
    TensorType,
    Violation,
)
from .ops.dtype_support import FLOAT32_KEPT, SINGLE_DATA_OPERAND, data_dtype, promotes, single_data_operands, supported
from .ops.einsum import einops_is_view, einops_keeps_every_axis
from .ops.layout import (
    KEEPS_LAYOUT,
    LAYOUT_MAKERS,
    LAYOUT_READERS,
    NO_WRITE_INPLACE,
    OVERLAP_TOLERANT_INPLACE,
    VIEWS_KEEP_OVERLAP,
    expands_onto_itself,
    permuted,
    refusal,
    view_permutation,
    writes_in_place,
)
from .ops.rules import (
    CONNECTIVITY_BAD_ARG,
    CONNECTIVITY_BAD_RESULT,
    CONNECTIVITY_INPLACE_LEAF,
    CONNECTIVITY_MISSING_ARG,
    CONNECTIVITY_UNKNOWN_OP,
    DTYPE_INT_INTO_FLOAT,
    DTYPE_UNSUPPORTED,
    SHAPE_ARITY,
    SHAPE_INDEX_RANGE,
    SHAPE_MEMORY_LAYOUT,
    SHAPE_SHARES_IGNORED,
    SHAPE_SHARES_MISMATCH,
    SHAPE_UNKNOWN_DIM,
    SHAPE_UNKNOWN_INDEX,
)
from .sizes import declared_id_range, declared_sizes, size_roles
from .valueclass import field, value_class


@value_class
class Inference:
    types: dict = field(default_factory=dict)  # node/input id -> list[TensorType]
    violations: list = field(default_factory=list)
    flops: dict = field(default_factory=dict)  # node id -> Dim (FLOPs for the whole batch)
    params: dict = field(default_factory=dict)  # node id -> int (0 for a node that shares)
    args: dict = field(default_factory=dict)  # node id -> args with torch's defaults
    ok: set = field(default_factory=set)  # node ids whose own requirements all held
    vocab: dict = field(default_factory=dict)  # integer input id -> the declared range of its ids
    declared: dict = field(default_factory=dict)  # symbol -> size the design declares (declared_sizes)
    max_ref: dict = field(default_factory=dict)  # node id -> the highest result index the design reads
    leaves: set = field(default_factory=set)  # Parameter nodes and views of them (autograd leaves)
    grad: set = field(default_factory=set)  # node ids whose results need gradients (training mode)
    split_views: set = field(default_factory=set)  # views of a multi-output view op's results that need gradients
    track_grad: bool = False  # training mode with a Chunk/Split: what needs gradients is followed
    aranges: dict = field(default_factory=dict)  # id -> True: exactly arange(range); False: values from one
    order: list = field(default_factory=list)  # the nodes in the order they were inferred (topological)
    overwritten: set = field(default_factory=set)  # ids whose values an in-place op rewrites (no range kept)
    rewritten: set = field(default_factory=set)  # the same, counting the in-place ops that keep non-negative ids
    negative: dict = field(default_factory=dict)  # id -> a negative value its integer values hold (a pad's fill)
    bounds: dict = field(default_factory=dict)  # symbol -> (least, most, what): sizes known to lie in a range
    # id -> (least, most): integer values known to lie in that range (a Clamp's integer bounds, shifted by a
    # constant): an outer bound, never a claim that the values reach it
    value_bounds: dict = field(default_factory=dict)
    # id -> how far its values may reach (exclusive) when that is past the range they surely reach (a max
    # pool's indices: where the maxima fall depends on the values)
    reach: dict = field(default_factory=dict)
    # id -> the order of its dims in memory, outermost first, for a permuted view (core/ops/layout.py);
    # what is not here is taken as contiguous
    layout: dict = field(default_factory=dict)
    overlap: set = field(default_factory=set)  # ids of expanded tensors: several elements share one location
    split_bases: dict = field(default_factory=dict)  # ref -> the Chunk/Split nodes (needing grad) that view it
    stale: dict = field(default_factory=dict)  # Chunk/Split node id -> the node that rewrote its base in place
    train: dict = field(default_factory=dict)  # the design's train block (its mode decides what writes)
    input_symbols: set = field(default_factory=set)  # the symbols the design's inputs carry (the run binds them)
    roles: dict = field(default_factory=dict)  # symbol -> "batch" | "sequence" | "image" (sizes.size_roles)

    def type_of(self, ref: str) -> TensorType:
        rid, idx = parse_ref(ref)
        results = self.types.get(rid)
        if not results or idx >= len(results):
            return UNKNOWN
        return results[idx]


# repeated layers (same op, arguments and operand types) are inferred once; bench/bench_verify.py turns
# this off to measure the walk on designs that repeat nothing
REPEAT_CACHE = True


def infer_design(design: Design, order: list | None = None, nodes: dict | None = None) -> Inference:
    """`order`: the design's topological order when the caller already has it; `nodes`: its nodes by id."""
    inf = Inference()
    single_data_operands()  # filled once, read by every node's dtype step
    train = design.train or {}
    inf.train = train if type(train) is dict else {}
    for spec in design.inputs:
        inf.types[spec.id] = [TensorType(tuple(spec.shape), spec.dtype)]
    nodes = design.node_map() if nodes is None else nodes  # the caller's map of the same nodes, when it has one
    inf.order = design.topo_order() if order is None else order
    memo: dict | None = {} if REPEAT_CACHE else None
    inf.declared = declared_sizes(design)
    inf.input_symbols = {d for spec in design.inputs for d in spec.shape if isinstance(d, str)}
    inf.roles = size_roles(design)
    inf.max_ref = _max_refs(design)
    inf.leaves = set()
    inf.vocab = _declared_ranges(design)
    inf.vocab[None] = None  # never empty: ranges are followed from Arange too
    # the in-place ops, once for both questions below (most designs have none: neither walks the design again)
    writers = [n for n in inf.order if n.inputs and n.args.get("inplace") is True]
    inf.overwritten = _overwritten(inf.order, nodes, inf.max_ref, mode_of(train), writers)
    for ref in inf.overwritten:
        inf.vocab.pop(ref, None)
    inf.rewritten = _overwritten(inf.order, nodes, inf.max_ref, None, writers)
    inf.track_grad = train.get("mode", "train") != "eval" if type(train) is dict else True
    inf.track_grad = inf.track_grad and any(n.op in SPLIT_VIEWS for n in inf.order)
    if memo is None:
        for node in inf.order:
            _infer_node(node, nodes, inf, train)
        return inf
    # the repeat cache pays only where layers repeat: a window of nodes without one hit turns it off for
    # the next MEMO_REST nodes (a design of distinct layers then pays for keys on a fifth of its nodes),
    # after which it is asked again; what it holds is kept
    tried = hits = 0
    resting = 0
    for node in inf.order:
        if resting:
            resting -= 1
            _infer_node(node, nodes, inf, train)
            continue
        if _infer_node(node, nodes, inf, train, memo):
            hits += 1
        tried += 1
        if tried == MEMO_WINDOW:
            if not hits:
                resting = MEMO_REST
            tried = hits = 0
    return inf


# 32, not 16: a window of 16 rested the cache over gpt2's repeated blocks (measured: gpt2 verified 30% slower,
# for 2% on a chain of distinct layers)
MEMO_WINDOW, MEMO_REST = 32, 128


def _max_refs(design: Design) -> dict:
    out: dict = {}
    for refs in [n.inputs for n in design.nodes] + [design.outputs]:
        for ref in refs:
            if ":" in ref:
                rid, idx = parse_ref(ref)
                if idx > out.get(rid, 0):
                    out[rid] = idx
    return out


def _declared_ranges(design: Design) -> dict:

    out = {}
    for spec in design.inputs:
        if spec.dtype not in ("float32", "float16", "bfloat16", "float64", "float", "bool"):
            v = declared_id_range(design, spec.id)
            if type(v) is int and v > 0:
                out[spec.id] = v
    return out


# args that may name a symbol the run resolves from the inputs
SYMBOL_BOUNDS = {name: spec.symbol_args for name, spec in OP_TABLE.items() if spec.symbol_args}
EINOPS = ops_with("einops")
INDEXED_POOLS = ops_with("pools", "nonlinear")  # the max pools, whose return_indices gives positions
ADAPTIVE_POOLS = ops_with("adaptive")
_ADDS = ops_with("adds")  # an element-wise sum or difference: a constant shift of its first operand


def _stray_symbol(node: Node, args: dict, inf: Inference) -> tuple | None:
    """(name, value) of a Slice bound or an einops axis length written as a symbol that no input carries
    (or as no symbol at all, "(("): the run cannot resolve it and fails, so it is refused here."""
    if node.op in SYMBOL_BOUNDS:
        names = SYMBOL_BOUNDS[node.op]
    elif node.op in EINOPS:
        names = [k for k in args if k not in ("pattern", "reduction")]
    else:
        return None
    for name in names:
        v = args.get(name)
        if isinstance(v, str):
            used = D.symbols_of(v)
            if not used or any(u not in inf.input_symbols for u in used):
                return name, v
    return None


def _follow_layout(node: Node, inf: Inference) -> bool:
    """The memory layout a permuting view gives its result and the element-wise ops keep; an op whose
    kernel reads the layout and refuses its input's blocks here (True)."""
    src = node.inputs[0] if node.inputs else None
    order = inf.layout.get(src) if src is not None else None
    if order is not None and node.op in LAYOUT_READERS:
        t = inf.type_of(src)
        why = refusal(node.op, t.shape, order, inf.declared) if t.shape is not None else None
        if why:
            _fail(inf, node, SHAPE_MEMORY_LAYOUT,
                  f"{node.op} {node.id!r} {why}: its input {src!r} is a permuted view (dims in memory "
                  f"{list(order)}, outermost first); call .contiguous() on it first (a Reshape after the "
                  "permute copies)")
            return True
    if inf.overlap and src in inf.overlap:
        mode = mode_of(inf.train)
        if writes_in_place(node.op, node.args, mode) and node.op not in OVERLAP_TOLERANT_INPLACE:
            _fail(inf, node, SHAPE_MEMORY_LAYOUT,
                  f"{node.op} {node.id!r} works in place (inplace=true) on {src!r}, an expanded tensor whose "
                  "elements share memory; torch refuses to write it ('more than one element of the written-to "
                  "tensor refers to a single memory location') — set inplace=false, or clone it first")
            return True
        if node.op in VIEWS_KEEP_OVERLAP or (node.op == "Dropout" and mode == "eval") or \
                writes_in_place(node.op, node.args, mode):
            inf.overlap.add(node.id)
    if node.op == "Expand" and src is not None:
        t = inf.type_of(src)
        target = node.args.get("shape")
        if t.shape is not None and isinstance(target, list) and expands_onto_itself(t.shape, target, inf.declared):
            inf.overlap.add(node.id)
    if order is not None and (node.op in KEEPS_LAYOUT or node.args.get("inplace") is True):
        inf.layout[node.id] = order
    elif node.op in LAYOUT_MAKERS and src is not None:
        t = inf.type_of(src)
        perm = view_permutation(node.op, node.args, len(t.shape)) if t.shape is not None else None
        if perm is not None:
            out = permuted(order, len(t.shape), perm)
            if out is not None:
                inf.layout[node.id] = out
    return False


def _reads_stale_piece(node: Node, inf: Inference) -> bool:
    """In training, the pieces of a Chunk/Split of values that need gradients are views their base must
    outlive unchanged: an op that then writes the base in place makes every later read of a piece fail
    ('Output 0 of Split is a view and its base ... has been modified inplace', gen-254912). True when this
    node is such a read (it is refused here)."""
    for ref in node.inputs if inf.stale else ():  # nothing rewritten yet: no piece is stale
        writer = inf.stale.get(parse_ref(ref)[0])
        if writer is not None:
            _fail(inf, node, CONNECTIVITY_INPLACE_LEAF,
                  f"{node.op} {node.id!r} reads {ref!r}, a piece of a Chunk/Split of values that need gradients, "
                  f"after {writer!r} rewrote their base in place; in training torch refuses to use such a piece "
                  "then — set inplace=false on the writer, or read the pieces before it")
            return True
    if node.inputs and node.inputs[0] in inf.split_bases and writes_in_place(node.op, node.args, mode_of(inf.train)) \
            and mode_of(inf.train) != "eval":
        for split in inf.split_bases[node.inputs[0]]:
            inf.stale.setdefault(split, node.id)
    return False


def _fail(inf: Inference, node: Node, rule: str, message: str, n_results: int = 1) -> None:  # noqa: D401
    inf.violations.append(Violation(rule, message, [node.id]))
    inf.types[node.id] = [UNKNOWN] * n_results


def _infer_node(node: Node, nodes: dict, inf: Inference, train: dict, memo: dict | None = None,
                laid_out: bool = False) -> bool | None:
    """Infer one node into `inf`; True when its results came from the repeat cache."""
    # a node whose first operand has no layout of its own and is not expanded is left as _follow_layout would
    # leave it: only a layout maker or an Expand starts one (a design with one expanded tensor, a ViT's class
    # token, made every node after it take the call)
    if not laid_out and (((inf.layout or inf.overlap) and node.inputs and
                          (node.inputs[0] in inf.layout or node.inputs[0] in inf.overlap)) or
                         node.op in LAYOUT_MAKERS or node.op == "Expand") and _follow_layout(node, inf):
        return
    if not laid_out and inf.split_bases and _reads_stale_piece(node, inf):
        return
    if memo is not None and node.shares is None and node.inputs:
        key = _memo_key(node, inf)
        hit = memo.get(key) if key is not None else None
        if hit is not None:
            # a repeated layer (same op, arguments and operand types) has the same results, count and FLOPs
            inf.args[node.id], inf.types[node.id], inf.params[node.id], inf.flops[node.id] = hit
            inf.ok.add(node.id)
            if inf.track_grad:
                _track_grad(node, inf)
            return True
        _infer_node(node, nodes, inf, train, laid_out=True)
        if key is not None and node.id in inf.ok and node.id in inf.flops and not _has_violation(inf, node.id):
            memo[key] = (inf.args[node.id], inf.types[node.id], inf.params[node.id], inf.flops[node.id])
        return
    spec = OP_TABLE.get(node.op)
    if spec is None:
        _fail(inf, node, CONNECTIVITY_UNKNOWN_OP,
              f"node {node.id!r} uses op {_short(node.op, 60)}, which the op table does not know; "
              "use a torch.nn class name or a tensor op of archgraph/1")
        return
    own_args = node.args
    other = nodes.get(node.shares) if node.shares is not None else None
    if other is not None and other.op == node.op and other.id != node.id:
        # a module called twice is one module: the shared one's arguments are the ones that run
        own_args = other.args
    args = _valid_guarded(spec, own_args)  # the common node's args, checked and guarded in one pass
    if args is not None:
        inf.args[node.id] = args
    else:  # the long way, which says what is missing, unknown or malformed
        args, missing, unknown = spec.resolve_args(own_args)
        args = inf.args[node.id] = _guarded(args)
        if missing or unknown:
            names = ", ".join(_short(k, 40) for k in unknown[:5]) + (f" and {len(unknown) - 5} more"
                                                                     if len(unknown) > 5 else "")
        if missing:
            # a misspelt name is both: say the one it gave beside the one it lacks (in_dim for in_features)
            _fail(inf, node, CONNECTIVITY_MISSING_ARG,
                  f"{node.op} {node.id!r} is missing required argument(s) {', '.join(missing)}" +
                  (f"; it has argument(s) {names} that torch.nn.{node.op} does not take" if unknown else ""))
            return
        if unknown and set(unknown) <= FACTORY_ARGS and "factory-kwargs" in spec.traits:
            # the op's torch constructor takes these (with or without weights), so "does not take" would be
            # false: the format leaves them out, as every layer is built with float32 weights where the run puts it
            _fail(inf, node, CONNECTIVITY_BAD_ARG, f"{node.op} {node.id!r} has argument(s) {names}: {FACTORY_WORDS}")
            return
        if unknown:
            _fail(inf, node, CONNECTIVITY_BAD_ARG,
                  f"{node.op} {node.id!r} has argument(s) {names} that torch.nn.{node.op} does not take")
            return
        malformed = spec.arg_problems(own_args)
        if malformed:
            # checked against the op's schema before any shape rule, check or cost reads the values
            _fail(inf, node, CONNECTIVITY_BAD_ARG, f"{node.op} {node.id!r}: {'; '.join(malformed)}")
            return
    stray = _stray_symbol(node, own_args, inf) if node.op in SYMBOL_BOUNDS or node.op in EINOPS else None
    if stray is not None:
        _fail(inf, node, CONNECTIVITY_BAD_ARG,
              f"{node.op} {node.id!r}: {stray[0]}={stray[1]!r} names no size of the design's inputs; the run "
              "takes a symbol's size from them")
        return
    lo, hi = spec.arity
    n = len(node.inputs)
    if n < lo or (hi is not None and n > hi):
        want = f"{lo}" if lo == hi else (f"{lo}..{hi}" if hi is not None else f"at least {lo}")
        _fail(inf, node, SHAPE_ARITY, f"{node.op} {node.id!r} takes {want} operand(s), got {n}")
        return
    types = inf.types
    ref = node.inputs[0] if n == 1 else ":"
    results = types.get(ref) if ":" not in ref else None
    if results:  # one whole operand with results (most nodes): result 0 of it, as the loop below reads it
        in_types: list[TensorType] = [results[0]]
        producer = nodes.get(ref)
        producers: list = [producer.op if producer is not None else None]
    else:
        in_types = []
        producers = []
        for ref in node.inputs:
            rid, idx = parse_ref(ref) if ":" in ref else (ref, 0)
            results = types.get(rid)
            if results is not None and idx >= len(results) and not (len(results) == 1 and results[0].shape is None):
                _fail(inf, node, CONNECTIVITY_BAD_RESULT,
                      f"node {node.id!r} reads {ref!r}, but {rid!r} has only {len(results)} result(s)")
                return
            in_types.append(results[idx] if results and idx < len(results) else UNKNOWN)  # = inf.type_of(ref)
            producer = nodes.get(rid)
            producers.append(producer.op if producer is not None else None)
    declared_args = args
    if other is not None and other.op != node.op:
        args = _tied_args(node, other, args, inf)
    mode = train.get("mode", "train") if type(train) is dict else "train"
    first = SINGLE_DATA_OPERAND.get(node.op) if spec.measured_for is ALWAYS_MEASURED else None
    if first is not None:  # one data operand, the table measured for any args: data_dtype's answer, inline
        data = in_types[first].dtype if first < n else None
    else:
        data = data_dtype(node.op, [t.dtype for t in in_types], in_types, spec.traits) if spec.measured_for(args) \
            else None
    row = spec.dtype_key(args) if spec.dtype_key is not None and data is not None else node.op
    # float32 data (nearly every node) on a row that keeps it: taken, never promoted, without the table
    kept = data == "float32" and row in FLOAT32_KEPT
    takes = True if kept else supported(row, data, mode) if data is not None else None
    refused = data if takes is False and not any(t.shape is not None and 0 in t.shape for t in in_types) else None
    if refused is not None:
        integer = refused not in FLOAT_DTYPES
        # its weights are there whatever it is fed: the cost quote counts them (it gave 0 here)
        weights = _params_of_refused(node, nodes, spec, args, declared_args)
        if not integer and not (type(weights) is int and weights == 0):
            # the table measured the layer as archgraph/1 builds it, with float32 weights: torch's layer built in
            # this dtype takes it, so the refusal is of the mix, not of the dtype
            words = (f"{node.op} {node.id!r} receives {refused} values, but archgraph/1 builds its weights in float32 "
                     f"and torch's {node.op} refuses the mix"
                     + (" in training mode" if mode != "eval" and supported(row, refused, "eval") else "")
                     + "; cast them to float32")
        else:
            words = (f"{node.op} {node.id!r} receives {refused} values, which torch's {node.op} does not take"
                     + (" in training mode" if mode != "eval" and supported(row, refused, "eval") else "")
                     + ("; cast them to float (or embed token ids)" if integer else
                        "; cast them to float32 or to a dtype it takes"))
        _fail(inf, node, DTYPE_INT_INTO_FLOAT if integer else DTYPE_UNSUPPORTED, words)
        inf.params[node.id] = weights
        return
    ctx = InferCtx(node, args, in_types, producers, train, inf.declared, bounds=inf.bounds, roles=inf.roles,
                   dtype_ok=takes is True, max_result=inf.max_ref.get(node.id, 0) if inf.max_ref else 0)
    # the learned leaves and the values followed (id ranges, a pad's fill, clamped bounds): a node meets that
    # machinery only where the design already holds some or its op starts some (most designs hold none)
    if inf.leaves or inf.split_views or len(inf.vocab) > 1 or inf.negative or inf.value_bounds or \
            node.op in STARTS_FOLLOWING:
        if node.op == "Parameter" or (node.inputs and node.inputs[0] in inf.leaves and _memory_view(node)):
            inf.leaves.add(node.id)
        if inf.leaves and args.get("inplace") and node.inputs and node.inputs[0] in inf.leaves and mode != "eval" and \
                node.op not in NO_WRITE_INPLACE:
            _fail(inf, node, CONNECTIVITY_INPLACE_LEAF,
                  f"{node.op} {node.id!r} works in place (inplace=true) on {node.inputs[0]!r}, a learned Parameter "
                  "(or a view of one); in training torch refuses to overwrite a leaf that requires grad — set "
                  "inplace=false")
            return
        if inf.split_views and args.get("inplace") and node.inputs and mode != "eval" and \
                node.op not in NO_WRITE_INPLACE and parse_ref(node.inputs[0])[0] in inf.split_views:
            _fail(inf, node, CONNECTIVITY_INPLACE_LEAF,
                  f"{node.op} {node.id!r} works in place (inplace=true) on {node.inputs[0]!r}, a view of one result "
                  "of a Chunk or Split of values that need gradients; in training torch refuses to modify such a view "
                  "in place — set inplace=false")
            return
        if len(inf.vocab) > 1 or node.op == "Arange":  # vocab always holds None: a range is followed from it
            ctx.value_ranges = {i: inf.vocab[r] for i, r in enumerate(node.inputs) if r in inf.vocab}
            if inf.reach:
                ctx.value_reach = {i: inf.reach[r] for i, r in enumerate(node.inputs) if r in inf.reach}
            if node.op == "Arange":
                inf.vocab[node.id] = args.get("end")
                inf.aranges[node.id] = True
            elif node.op in VALUE_JOINS and node.inputs and all(r in inf.vocab for r in node.inputs):
                ranges = [inf.vocab[r] for r in node.inputs]
                if all(type(r) is int for r in ranges):
                    inf.vocab[node.id] = max(ranges)
                    if any(r in inf.aranges for r in node.inputs):
                        inf.aranges[node.id] = False
            elif node.op in GROWS_IDS and len(node.inputs) == 2 and \
                    all(type(inf.vocab.get(r)) is int for r in node.inputs):
                _arithmetic_range(node, inf)
            elif node.inputs and node.inputs[0] in inf.vocab:
                _follow_range(node, args, inf.vocab[node.inputs[0]], inf, mode)
            if node.id in inf.overwritten:
                inf.vocab.pop(node.id, None)
            if node.op in SUMS and node.id in inf.vocab and type(inf.vocab[node.id]) is int:
                _sum_reach(node, args, inf)
            elif inf.reach and node.inputs and node.inputs[0] in inf.reach and node.id in inf.vocab:
                _follow_reach(node, inf)
        if inf.negative or node.op in PADS_WITH_FILL:
            _follow_negative(node, args, in_types, inf, mode, ctx)
        if inf.value_bounds or node.op == "Clamp":
            _follow_value_bounds(node, args, in_types, nodes, inf)
        if node.op in INDEX_READERS and len(node.inputs) > INDEX_READERS[node.op]:
            _unknown_index(node, in_types, nodes, inf, ctx)
    try:
        outs = spec.infer(ctx)
        # a rule that gives its operand back (an activation, a norm) made nothing new to check
        bad = None if type(outs) is list and len(outs) == 1 and in_types and outs[0] is in_types[0] else \
            _bad_results(outs, in_types[0].shape if in_types else None)
    except Exception as exc:  # noqa: BLE001 - any argument a shape rule cannot read is the design's fault
        bad = f"{type(exc).__name__}: {exc}"
    if bad is TOO_LONG:
        bad = None
        outs = [TensorType(None, t.dtype) for t in outs]
        ctx.warn(SHAPE_UNKNOWN_DIM,
                 f"{node.op} {node.id!r}: a result has more than {MAX_RANK} dims, or symbolic sizes too long to write; "
                 "the verifier does not follow it, so sizes after it are unknown")
    if not bad and data is not None and not kept and promotes(row, data, mode):  # the row of the args' kernels
        outs = [TensorType(t.shape, "float32") if t.dtype == data else t for t in outs]
    if bad:
        _fail(inf, node, CONNECTIVITY_BAD_ARG,
              f"{node.op} {node.id!r}: its arguments cannot be read ({bad[:200]}); "
              "use the types torch's constructor takes")
        return
    if not ctx.violations:
        inf.ok.add(node.id)
    else:
        inf.violations.extend(ctx.violations)
        if not any(v.severity == "block" for v in ctx.violations):
            inf.ok.add(node.id)
    inf.types[node.id] = outs
    if node.op in INDEXED_POOLS and args.get("return_indices") and in_types:
        _pool_index_range(node, args, in_types[0], outs, inf)
    if node.shares is not None:
        _check_shares(node, nodes, inf, declared_args)
        inf.params[node.id] = _own_params_when_tied(node, nodes, spec, declared_args)
    else:
        try:
            count = spec.params(args)
        except Exception:  # noqa: BLE001 - reported below as a bad argument
            count = None
        if not (type(count) is int and count >= 0) and not _is_size(count):
            inf.ok.discard(node.id)
            inf.params[node.id] = 0
            _fail(inf, node, CONNECTIVITY_BAD_ARG,
                  f"{node.op} {node.id!r}: its arguments give no valid parameter count; "
                  "use the types torch's constructor takes", len(outs))
            return
        extra = parametrized_params(node, args) if node.extra else 0
        if extra is None:
            inf.ok.discard(node.id)
            inf.params[node.id] = 0
            _fail(inf, node, CONNECTIVITY_BAD_ARG,
                  f"{node.op} {node.id!r}: parametrize must be \"weight_norm\" or \"spectral_norm\" on a layer with "
                  f"a weight (Linear, Bilinear, Conv, ConvTranspose, Embedding), got {node.extra.get('parametrize')!r}",
                  len(outs))
            return
        inf.params[node.id] = count + extra
    if node.id in inf.ok:
        try:
            flops = spec.flops(ctx, outs)
        except Exception:  # noqa: BLE001 - an uncountable node is left out of the quote, and said so
            flops = None
        inf.flops[node.id] = flops if flops is None or isinstance(flops, (int, str)) else None
    if inf.track_grad:
        _track_grad(node, inf)


# multi-output ops whose results are views; ops whose result is a view of their first operand (measured:
# an in-place op on such a view of a Chunk/Split result that needs gradients raises in training mode;
# Reshape and Flatten copy or not by strides, so they are left out)
SPLIT_VIEWS = ops_with("split-view")
VIEW_KEEPERS = ops_with("view")


def _track_grad(node: Node, inf: Inference) -> None:
    """Which results need gradients in training mode (they depend on a learned weight), and which are views
    of a Chunk/Split result that does."""
    results = inf.types.get(node.id) or ()
    if len(results) == 1:  # one result (most nodes): no generator
        if results[0].dtype not in FLOAT_DTYPES:
            return
    elif not any(t.is_float for t in results):
        return
    ins, grad = node.inputs, inf.grad
    if inf.params.get(node.id) or node.shares is not None or node.op == "Parameter" or \
            ((ins[0] if ":" not in ins[0] else parse_ref(ins[0])[0]) in grad if len(ins) == 1 else
             any((r if ":" not in r else parse_ref(r)[0]) in grad for r in ins)):
        inf.grad.add(node.id)
        if node.op in SPLIT_VIEWS or (node.op in VIEW_KEEPERS and node.inputs and
                                      parse_ref(node.inputs[0])[0] in inf.split_views):
            inf.split_views.add(node.id)
        if node.op in SPLIT_VIEWS and node.inputs:
            inf.split_bases.setdefault(node.inputs[0], []).append(node.id)


PARAMETRIZATIONS = ("weight_norm", "spectral_norm")
PARAMETRIZABLE = ops_with("parametrizable")
TRANSPOSED = ops_with("transposed")
# ops whose results hold values of their first operand only: an id range passes through them
VALUE_VIEWS = ops_with("moves-values")


# ops whose result shares its operand's memory (measured on a Parameter: an in-place op on the result is
# refused as on "a view of a leaf"); Tile, Roll, Index, PixelShuffle, ChannelShuffle copy
MEMORY_VIEWS = ops_with("view") | ops_with("view-if-contiguous")


def _memory_view(node) -> bool:
    """Whether the node's result is a view of its first operand: the memory views, and an einops pattern
    that is one (measured: splits, reorders, new axes and merges of axes still in order are views; a merge
    after a reorder, a merge with a new axis and a reduction copy)."""
    if node.op in MEMORY_VIEWS:
        return True
    return node.op in EINOPS and einops_is_view(node.args.get("pattern"))


# ops whose largest result is at least the largest id they read (ids are never negative): ReLU keeps them,
# Amax keeps the largest, a sum or running sum of non-negative ids is at least each of them
RANGE_KEEPERS = ops_with("keeps-max")
# ops whose result holds all the values of all their operands
VALUE_JOINS = ops_with("joins-values")
# ops that pass their first operand's values on unchanged in eval mode only
EVAL_IDENTITIES = ops_with("dropout")
# ops whose every result holds values of their first operand
VALUE_PIECES = ops_with("split-view")
GROWS_IDS = ops_with("grows-ids")  # x + x doubles the largest id, x * x squares it
SUMS = ops_with("sums")


def _follow_range(node, args: dict, ids, inf: Inference, mode: str) -> None:
    """The range of ids a node's results carry, from its first operand's (measured: ReLU keeps
    non-negative ids, ReLU6 clips them at 6, Threshold replaces those at or below it by its value, dropout
    is the identity in eval mode, Amax keeps the largest, sums only grow them). A range is what the checks
    compare against a table: ids reach at least range - 1. A design input's ids may sit anywhere, so a
    pick of them keeps the declared range; an Arange's values are known, so a pick of them (Select, Slice,
    Index, a Chunk/Split piece) gets its exact range where it can be counted, else none."""
    src = node.inputs[0]
    if src in inf.aranges:
        if node.op in VALUE_PICKS:
            exact = _arange_pick(node.op, args, ids) if inf.aranges[src] else None
            if exact is not None:
                inf.vocab[node.id] = exact
                inf.aranges[node.id] = False
            return
        inf.aranges[node.id] = inf.aranges[src] and (node.op == "Identity" or
                                                     (mode == "eval" and node.op in EVAL_IDENTITIES))
    if node.op in VALUE_VIEWS or node.op in RANGE_KEEPERS or (mode == "eval" and node.op in EVAL_IDENTITIES):
        inf.vocab[node.id] = ids
    elif node.op == "Reduce" and (args.get("reduction") in ("max", "sum") or _reduces_nothing(args)):
        inf.vocab[node.id] = ids  # the largest id, or a sum of non-negative ids, or the ids rearranged
    elif _pads_only(node.op, args):  # padding copies the ids and adds its fill (0, or int(value))
        fill = int(args.get("value") or 0)
        if type(ids) is int and fill >= 0:
            inf.vocab[node.id] = max(ids, fill + 1)
        else:  # a negative fill is followed apart (inf.negative); the ids are all still there (gen-168167)
            inf.vocab[node.id] = ids
    elif node.op == "ReLU6" and type(ids) is int:
        inf.vocab[node.id] = min(ids, 7)
    elif node.op == "Threshold":  # ids <= threshold become int(value)
        t, v = node.args.get("threshold"), node.args.get("value")
        if isinstance(t, (int, float)) and isinstance(v, (int, float)):
            if t < 0:
                inf.vocab[node.id] = ids
            elif type(ids) is int and ids - 1 > t and int(v) >= 0:
                inf.vocab[node.id] = max(ids, int(v) + 1)
    elif node.op in VALUE_PIECES:
        inf.vocab[node.id] = ids
        for k in range(inf.max_ref.get(node.id, 0) + 1):
            inf.vocab[f"{node.id}:{k}"] = ids


PADS_WITH_FILL = ops_with("pads-with-fill")
PADS = ops_with("pads")
# ops whose result holds every value of their first operand (no pick that could drop one)
WHOLE_VIEWS = VALUE_VIEWS - ops_with("picks-values")
# ops that read every value of one operand as a position and refuse a negative one (measured: gather,
# index_select and the embedding lookups do not wrap -1 as tensor indexing does): operand index
INDEX_READERS = {name: spec.positions for name, spec in OP_TABLE.items() if spec.positions is not None}
NEGATIVE_REFUSERS = {name: k for name, k in INDEX_READERS.items() if "wraps-negative" not in OP_TABLE[name].traits}
# the ops that start what _infer_node follows of values and leaves when the design holds none of it yet
STARTS_FOLLOWING = frozenset(ops_with("starts-values") | PADS_WITH_FILL | INDEX_READERS.keys())


def _unknown_index(node, in_types: list, nodes: dict, inf: Inference, ctx: InferCtx) -> None:
    """Positions computed by an op whose values are not followed (no range, not a pad's negative fill):
    whether they fit is unknown, and an unknown never blocks; it is said, with what computed them."""
    k = INDEX_READERS[node.op]
    ref = node.inputs[k]
    t = in_types[k] if len(in_types) > k else None
    producer = nodes.get(parse_ref(ref)[0])
    if producer is None or ref in inf.vocab or ref in inf.negative or t is None or not t.is_int or \
            t.dtype in ("bool", "uint8"):
        return
    rows = ctx.args.get("num_embeddings")
    bound = inf.value_bounds.get(ref)
    if bound is not None and bound[0] >= 0 and type(rows) is int and bound[1] < rows:
        return  # clamped into the table: whatever the values, they fit (T5's relative-position buckets)
    ctx.warn(SHAPE_UNKNOWN_INDEX, f"{node.op} {node.id!r} reads positions computed by {producer.op} "
                                    f"{producer.id!r}, whose values the verifier does not follow; it runs only if "
                                    "they all lie within the indexed size")


def _follow_value_bounds(node, args: dict, in_types: list, nodes: dict, inf: Inference) -> None:
    """Integer values known to lie in [least, most] whatever the input's: a Clamp with integer bounds (within
    its input's bounds when those are known), the same shifted by an Add or Sub of a constant integer scalar,
    and carried by the ops that only move values (views, pieces). Only an outer bound: it silences an
    unknown index that cannot leave its table, and never blocks."""
    if not node.inputs or not in_types or in_types[0] is None or not in_types[0].is_int:
        return
    first = inf.value_bounds.get(node.inputs[0])
    if node.op == "Clamp":
        lo, hi = args.get("min"), args.get("max")
        if type(lo) is int and type(hi) is int and lo <= hi:
            if first is not None:
                lo, hi = min(max(first[0], lo), hi), max(min(first[1], hi), lo)
            inf.value_bounds[node.id] = (lo, hi)
        return
    if node.op in _ADDS and len(node.inputs) == 2 and args.get("alpha", 1) == 1:
        other = nodes.get(parse_ref(node.inputs[1])[0])
        if first is None or other is None or other.op != "Constant" or node.inputs[1] in inf.value_bounds:
            return
        c, shape = other.args.get("value"), other.args.get("shape")
        if type(c) is int and isinstance(shape, list) and all(d == 1 for d in shape):
            c = c if node.op == "Add" else -c
            inf.value_bounds[node.id] = (first[0] + c, first[1] + c)
        return
    if first is not None and (node.op in VALUE_VIEWS or node.op in VALUE_PIECES):
        inf.value_bounds[node.id] = first
        for k in range(inf.max_ref.get(node.id, 0) + 1):
            inf.value_bounds[f"{node.id}:{k}"] = first


def _follow_negative(node, args: dict, in_types: list, inf: Inference, mode: str, ctx: InferCtx) -> None:
    """Integer values that hold a negative number: a constant pad that adds a negative fill (torch
    truncates -1.24 to -1 for an integer tensor), through the ops that keep every value; an op that
    reads them as positions fails on it."""
    fill = args.get("value") or 0
    x = in_types[0] if in_types else None
    pad = args.get("pad", args.get("padding"))
    if node.op in PADS_WITH_FILL and args.get("mode", "constant") == "constant" \
            and _pads_only(node.op, args) and any(p > 0 for p in (pad if isinstance(pad, list) else [pad])) \
            and isinstance(fill, (int, float)) and int(fill) < 0 and x is not None and x.is_int \
            and x.dtype not in ("bool", "uint8"):
        inf.negative[node.id] = int(fill)
    elif node.inputs and node.inputs[0] in inf.negative and \
            (node.op in WHOLE_VIEWS or (mode == "eval" and node.op in EVAL_IDENTITIES)):
        inf.negative[node.id] = inf.negative[node.inputs[0]]
    if node.id in inf.rewritten:  # an in-place op may clamp the fill away
        inf.negative.pop(node.id, None)
    k = NEGATIVE_REFUSERS.get(node.op)
    if k is not None and len(node.inputs) > k and node.inputs[k] in inf.negative:
        ctx.violations.append(Violation(
            SHAPE_INDEX_RANGE, f"{node.op} {node.id!r} reads {node.inputs[k]!r} as positions, and it holds "
                                 f"{inf.negative[node.inputs[k]]} (a pad's fill); {node.op} refuses a negative index",
            [node.id]))


def mode_of(train) -> str:
    return train.get("mode", "train") if type(train) is dict else "train"


def _keeps_ids(node, mode: str | None) -> bool:
    """An in-place op that leaves non-negative ids as they are (measured on int64: ReLU, a Threshold below
    0, dropout in eval mode; Hardtanh clamps them)."""
    if mode is None:
        return False
    if node.op == "ReLU" or (mode == "eval" and node.op in EVAL_IDENTITIES):
        return True
    t = node.args.get("threshold")
    return node.op == "Threshold" and isinstance(t, (int, float)) and t < 0


def _overwritten(order: list, nodes: dict, max_ref: dict, mode: str | None, writers: list | None = None) -> set:
    """The tensors an in-place op (inplace=true) rewrites: its operand, what that operand is a view of, and
    the views of them (measured: Hardtanh(inplace) on ids clamps the design input itself, so a later read
    of the input sees -1..1, not its vocab_size). Their values are not followed. `mode`: the design's mode,
    where the ops that keep non-negative ids are not counted (None: every in-place op counts). `writers`: the
    nodes of `order` with inputs and inplace=true, when the caller has them."""
    if writers is None:
        writers = [n for n in order if n.inputs and n.args.get("inplace") is True]
    writes = [n.inputs[0] for n in writers if not _keeps_ids(n, mode)]
    if not writes:
        return set()
    hit = set()
    for ref in writes:
        while ref not in hit:
            hit.add(ref)
            owner = nodes.get(parse_ref(ref)[0])
            if owner is None or owner.op not in VALUE_VIEWS or not owner.inputs:
                break
            ref = owner.inputs[0]
    for n in order:  # topological: a view of a view is reached after its source
        if n.inputs and (n.op in VALUE_VIEWS or n.op in VALUE_PIECES or n.args.get("inplace") is True) and \
                n.inputs[0] in hit:
            hit.add(n.id)
            hit.update(f"{n.id}:{k}" for k in range(max_ref.get(n.id, 0) + 1))
    return hit


def _arithmetic_range(node, inf: Inference) -> None:
    """Ids are never negative, so a sum of two id tensors reaches at least the larger range's last id, and
    a tensor added to or multiplied by itself (measured: x + x, x * x) doubles or squares its largest id."""
    a, b = (inf.vocab[r] for r in node.inputs)
    if node.inputs[0] == node.inputs[1] and a >= 1 and node.args.get("alpha", 1) == 1:
        top = a - 1
        inf.vocab[node.id] = (2 * top if node.op == "Add" else top * top) + 1
    elif node.op == "Add" and node.args.get("alpha", 1) == 1:
        inf.vocab[node.id] = max(a, b)


def _reduces_nothing(args: dict) -> bool:
    """An einops Reduce whose result keeps every input axis (`(a0 p) -> p a0`): it only rearranges."""
    return einops_keeps_every_axis(args.get("pattern"))


def _pads_only(op: str, args: dict) -> bool:
    """A padding layer (or F.pad) that adds on every side and trims none."""
    if op not in PADS:
        return False
    pad = args.get("pad", args.get("padding"))
    pads = pad if isinstance(pad, list) else [pad]
    return all(type(p) is int and p >= 0 for p in pads)


# ops whose result holds some of their first operand's values only
VALUE_PICKS = ops_with("picks-values") | VALUE_PIECES


def _arange_pick(op: str, args: dict, n):
    """The range of a Select or Slice of arange(n) along its one dim, or None when it cannot be counted."""
    if args.get("dim", 0) not in (0, -1):
        return None
    if op == "Select":
        i = args.get("index")
        if type(i) is not int:
            return None
        if i >= 0:
            return i + 1
        return n + i + 1 if type(n) is int and n + i >= 0 else None
    if op == "Slice" and type(n) is int:
        step = args.get("step") or 1
        if type(step) is not int or step <= 0:
            return None
        picked = range(n)[slice(args.get("start"), args.get("end"), step)]
        return picked[-1] + 1 if len(picked) else None
    return None


def _follow_reach(node, inf: Inference) -> None:
    """How far values may reach, through the ops that keep them (views, pieces, ReLU, eval dropout) and
    ReLU6 (which clips at 6; gen-310919: max pool positions through a Chunk and a ReLU6)."""
    reach, why = inf.reach[node.inputs[0]]
    if node.op == "ReLU6":
        reach = min(reach, 7)
    elif inf.vocab[node.id] != inf.vocab.get(node.inputs[0]):
        return  # an op that changed the sure range (a pad's fill, a threshold): its reach is not known
    if type(inf.vocab[node.id]) is int and reach <= inf.vocab[node.id]:
        return
    inf.reach[node.id] = (reach, why)
    if node.op in VALUE_PIECES:
        for k in range(inf.max_ref.get(node.id, 0) + 1):
            inf.reach[f"{node.id}:{k}"] = (reach, why)


def _sum_reach(node, args: dict, inf: Inference) -> None:
    """A (running) sum of ids surely reaches the largest id, and may reach that id times the count summed
    (gen-194296: a Cumsum of 0/1 ids over 3 values reaches 3)."""
    x = inf.type_of(node.inputs[0])
    if x.shape is None:
        return
    dims = args.get("dim")
    rank = len(x.shape)
    if dims is None:
        picked = list(range(rank)) if node.op == "Sum" else None
    else:
        picked = [d % rank for d in (dims if isinstance(dims, list) else [dims])
                  if type(d) is int and -rank <= d < rank]
    if not picked:
        return
    count = 1
    for d in picked:
        size = D.substitute(x.shape[d], inf.declared) if inf.declared else x.shape[d]
        if not D.is_const(size):
            return
        count *= size
    top = (inf.vocab[node.id] - 1) * count + 1
    if top > inf.vocab[node.id]:
        inf.reach[node.id] = (top, f"a {'running ' if node.op == 'Cumsum' else ''}sum of {count} ids; how far it "
                                   "goes depends on the values")


def _pool_index_range(node, args: dict, x: TensorType, outs: list, inf: Inference) -> None:
    """A max pool's indices count positions over the input's spatial dims (flattened): the argmax of its
    last window sits at or after the window's first corner, so its indices reach at least that flat
    position (a lower bound, as a running sum's: the range the index checks compare)."""
    n = int(node.op[-2])
    y = outs[0] if outs else None
    if x.shape is None or y is None or y.shape is None or len(x.shape) < n or len(y.shape) < n:
        return
    sizes, outs_n = x.shape[-n:], y.shape[-n:]
    if inf.declared:  # at the design's declared sizes (gen-228305: a window of 1 over a declared T)
        sizes = tuple(D.substitute(v, inf.declared) for v in sizes)
        outs_n = tuple(D.substitute(v, inf.declared) for v in outs_n)
    if not all(D.is_const(v) and v > 0 for v in tuple(sizes) + tuple(outs_n)):
        return
    flat = 0
    last = 0  # the flat position of the last window's far corner: how far the indices may reach
    for d, (size, o) in enumerate(zip(sizes, outs_n)):
        if node.op in ADAPTIVE_POOLS:
            start = (o - 1) * size // o
            end = -(-o * size // o) - 1
        else:
            k = _pick(args.get("kernel_size"), d, n)
            st = _pick(args.get("stride") or args.get("kernel_size"), d, n)
            pad = _pick(args.get("padding") or 0, d, n)
            dil = _pick(args.get("dilation") or 1, d, n)
            if None in (k, st, pad, dil):
                return
            start = (o - 1) * st - pad
            end = start + (k - 1) * dil
        flat = flat * size + min(max(start, 0), size - 1)
        last = last * size + min(max(end, 0), size - 1)
    inf.vocab[f"{node.id}:1"] = flat + 1
    if last > flat:
        inf.reach[f"{node.id}:1"] = (last + 1, "a max pool's positions; where each maximum falls depends on the "
                                               "values")


def _pick(v, d: int, n: int):
    """Dim d of an int or a list of n (or one) ints."""
    if isinstance(v, int) and not isinstance(v, bool):
        return v
    if isinstance(v, (list, tuple)) and v and all(type(e) is int for e in v):
        return v[d] if len(v) == n else v[0] if len(v) == 1 else None
    return None


def weight_rows(op: str, args: dict):
    """Size of dim 0 of the layer's weight (what weight_norm's magnitude g has one value per)."""
    if op not in PARAMETRIZABLE:
        return None
    if op in TRANSPOSED:  # its weight is (in_channels, out_channels / groups, *kernel)
        return args["in_channels"]
    for rows in ("out_features", "out_channels", "num_embeddings"):  # Linear and Bilinear, Conv, Embedding
        if rows in args:
            return args[rows]
    return None


def parametrized_params(node: Node, args: dict) -> int | None:
    """Parameters a node's `parametrize` adds (torch.nn.utils.parametrizations): weight_norm splits the
    weight into a direction (same size) and a magnitude per row (+ rows); spectral_norm keeps the weight
    as its parameter (its u, v are buffers). None: a parametrization torch cannot apply."""
    par = node.extra.get("parametrize") if node.extra else None
    if par is None:
        return 0
    rows = weight_rows(node.op, args)
    if par not in PARAMETRIZATIONS or rows is None:
        return None
    return rows if par == "weight_norm" else 0


def _memo_key(node: Node, inf: Inference):
    types, vocab, negative = inf.types, inf.vocab, inf.negative
    # the operands as (shape, dtype) pairs, not TensorTypes: plain tuples hash and compare in C, where the
    # dataclass's __hash__ and __eq__ are Python calls (every result is a plain TensorType, so they agree)
    ins = node.inputs
    if len(ins) == 1 and ":" not in ins[0]:  # one whole operand (most nodes): the key without a list
        ref = ins[0]
        results = types.get(ref)
        if not results or ref in vocab or ref in negative:
            return None
        t = results[0]
        try:
            return node.op, repr(node.args), (t.shape, t.dtype)
        except Exception:  # noqa: BLE001 - an argument repr cannot show (too deep, too long): no memo
            return None
    key = [node.op, None]
    for ref in node.inputs:
        if ref in vocab or ref in negative:  # the values it reads are followed: no repeat of another's
            return None
        rid, idx = parse_ref(ref) if ":" in ref else (ref, 0)
        results = types.get(rid)
        if results is None or idx >= len(results):
            return None
        t = results[idx]
        key.append((t.shape, t.dtype))
    try:
        key[1] = repr(node.args)
    except Exception:  # noqa: BLE001 - an argument repr cannot show (too deep, too long): no memo
        return None
    return tuple(key)


def _has_violation(inf: Inference, node_id: str) -> bool:
    v = inf.violations
    return bool(v) and node_id in v[-1].nodes


def _is_size(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


INT64_MAX = 2 ** 63 - 1  # torch keeps sizes and element counts as int64
# MAX_RANK: dims of a result the walk follows (torch takes more; no model needs them);
# MAX_SIZE_TEXT: characters of a result's symbolic sizes together (their products are written out)


# a result too long to follow in time linear in the design (every node after it would copy and
# hash its shape): the walk goes on with its sizes unknown
TOO_LONG = "too long to follow"


class _ArgStr(str):
    """A string argument as the shape rules see it: no count repeats it. The rules multiply
    arguments (`gates * hidden * input_size`); a string or a list where a number belongs would
    otherwise be repeated to gigabytes instead of failing (an input_size of 20,000 "B"s made a
    300 MB list)."""

    __slots__ = ()

    def __mul__(self, other):
        raise TypeError(f"a count times the string {str(self)[:20]!r}")

    __rmul__ = __mul__


class _ArgList(list):
    """A list argument as the shape rules see it: no count repeats it (see `_ArgStr`)."""

    __slots__ = ()

    def __mul__(self, other):
        raise TypeError("a count times a list")

    __rmul__ = __imul__ = __mul__


def _guard(v):
    t = type(v)
    if t is str:
        return _ArgStr(v)
    if t is list:
        return _ArgList(_guard(x) for x in v)
    if t is dict:
        return {k: _guard(x) for k, x in v.items()}
    return v


_GUARD_PLANS: dict = {}  # op name -> (its spec, its defaults guarded, names of list/dict defaults, none needs one)


def _guard_plan(spec) -> tuple:
    """What `_guarded` does to an op's defaults, worked out once per op instead of once per node: a string
    default is guarded once (an _ArgStr never changes); a list or dict default gets a fresh guard per node."""
    defaults = spec._defaults
    fresh = tuple(k for k, v in defaults.items() if type(v) is list or type(v) is dict)
    guarded = {k: _ArgStr(v) if type(v) is str else v for k, v in defaults.items()}
    plain = not fresh and all(type(v) is not str for v in defaults.values())
    plan = _GUARD_PLANS[spec.name] = (spec, guarded, fresh, plain)
    return plan


def _valid_guarded(spec, given: dict) -> dict | None:
    """The node's args with the op's defaults filled, strings and lists guarded as `_guarded` guards them, when
    the op takes them as given (`OpSpec.takes_as_given`); None otherwise (the caller takes the long way, which
    says what is wrong)."""
    if not spec.takes_as_given(given):
        return None
    plan = _GUARD_PLANS.get(spec.name)
    if plan is None or plan[0] is not spec:
        plan = _guard_plan(spec)
    guard = False
    for v in given.values():
        t = type(v)
        if t is str or t is list or t is dict:
            guard = True
            break
    if not guard and plan[3]:  # nothing to guard: _guarded hands the dict back as it is
        out = spec._defaults.copy()
        out.update(given)
        return out
    out = plan[1].copy()
    for k in plan[2]:
        out[k] = _guard(out[k])
    for k, v in given.items():
        t = type(v)
        out[k] = _guard(v) if t is str or t is list or t is dict else v
    return out


def _guarded(args: dict) -> dict:
    """The args with strings and lists (at any depth) that no count can repeat; the dict itself
    when it holds none (most nodes hold only numbers)."""
    for v in args.values():
        t = type(v)
        if t is str or t is list or t is dict:
            return {k: _guard(x) for k, x in args.items()}
    return args
_SMALL = 1 << 15  # dims below this, four or fewer of them, cannot hold more than 2**60 elements


def _bad_results(outs, first_input=None) -> str | None:
    """Why a shape rule's results are not a list of valid types (None when they are): a size that is
    no count, or a tensor torch cannot hold (a size or an element count past int64, which torch
    refuses: 'Storage size calculation overflowed'); TOO_LONG for a result too long to follow."""
    if not isinstance(outs, list) or not outs:
        return "no results"
    long = None
    for t in outs:
        if not isinstance(t, TensorType):
            return "a result is not a tensor"
        shape = t.shape
        if shape is None or shape is first_input:
            continue  # unknown, or the operand's own shape (already checked where it was made)
        if len(shape) > MAX_RANK:
            long = TOO_LONG
            continue
        top = 0
        text = 0
        for d in shape:
            if d is None:
                continue
            if isinstance(d, str):
                text += len(d)
                if text > MAX_SIZE_TEXT:
                    long = TOO_LONG
                continue
            if (type(d) is not int or d < 0) and not _is_size(d):
                return f"size {_short(d)} in {_short(list(shape))}"
            if d > top:
                top = d
                if d > INT64_MAX:
                    return f"size {_short(d)} in {_short(list(shape))} is past torch's int64 sizes"
        if top >= _SMALL or len(shape) > 4:
            numel = 1
            for d in shape:
                if type(d) is int:
                    numel *= d
                    if numel > INT64_MAX:
                        return (f"a tensor of shape {_short(list(shape))} has more elements than torch can hold "
                                "(2**63-1)")
    return long


def _short(v, limit: int = 120) -> str:
    if isinstance(v, (list, str)) and len(v) > limit:
        v = v[:limit]
    text = repr(v)
    return text if len(text) <= limit else text[:limit] + "…"


def _params_of_refused(node: Node, nodes: dict, spec, args: dict, declared_args: dict) -> int:
    """The parameter count of a node refused before its shape rule ran (data of a dtype its kernels refuse):
    the count its arguments give, as for any node; 0 where they give none (nothing more is said: the node
    is already blocked)."""
    if node.shares is not None:
        return _own_params_when_tied(node, nodes, spec, declared_args)
    try:
        count = spec.params(args)
        extra = parametrized_params(node, args) if node.extra else 0
    except Exception:  # noqa: BLE001 - arguments no count can be made of
        return 0
    if extra is None or not ((type(count) is int and count >= 0) or _is_size(count)):
        return 0
    return count + extra


def _own_params_when_tied(node: Node, nodes: dict, spec, args: dict) -> int:
    """A module called twice owns nothing; a tied layer (Linear tied to an Embedding)
    shares only its weight and keeps its own bias."""
    other = nodes.get(node.shares)
    if other is None or other.op == node.op:
        return 0
    try:
        w = weight_shape(node.op, args)
        total = spec.params(args)
        return max(0, total - (w[0] * w[1] if w else total))
    except Exception:  # noqa: BLE001 - arguments no count can be made of: the shape rule said why
        return 0


def weight_shape(op: str, args: dict):
    """The main weight's shape, for checking that tied weights agree."""
    if op == "Embedding":
        names = ("num_embeddings", "embedding_dim")
    elif op == "Linear":
        names = ("out_features", "in_features")
    else:
        return None
    if not all(n in args for n in names):
        return None  # a node missing its arguments (already refused for that): no weight to compare
    return (args[names[0]], args[names[1]])


def _tied_args(node: Node, other: Node, args: dict, inf: Inference) -> dict:
    """A layer tied to another op's weight (a Linear head on an Embedding's table) runs with that
    weight: its sizes are the weight's, whatever it declares."""
    theirs = OP_TABLE[other.op].resolve_args(other.args)[0] if other.op in OP_TABLE else None
    w = weight_shape(other.op, theirs) if theirs is not None else None
    if w is None or not all(type(v) is int for v in w):
        return args
    out = dict(args)
    if node.op == "Linear":
        out["out_features"], out["in_features"] = w
    elif node.op == "Embedding":
        out["num_embeddings"], out["embedding_dim"] = w
    return out


def _check_shares(node: Node, nodes: dict, inf: Inference, declared: dict) -> None:
    """What torch does with a shared weight: the shared one wins. A module called twice runs with the
    first call's arguments; a tied layer with the other's weight. What the sharing node declares
    otherwise is ignored (a warn naming it), unless it cannot run: a tied Linear's own bias must fit the
    tied weight's rows, and tying needs two weights of one kind (Linear / Embedding)."""
    other = nodes.get(node.shares)
    if other is None or other.id == node.id:
        return  # reported by the structural pass
    theirs = inf.args.get(other.id) or (OP_TABLE[other.op].resolve_args(other.args)[0]
                                        if other.op in OP_TABLE else None)
    if theirs is None:
        return
    if other.op == node.op:
        given = node.args
        diff = sorted(k for k in given if k in theirs and given[k] != theirs[k])
        if diff:
            inf.violations.append(Violation(
                SHAPE_SHARES_IGNORED,
                f"{node.op} {node.id!r} shares {other.id!r}, so it runs as {other.id!r}: its own "
                f"{', '.join(f'{k}={given[k]!r}' for k in diff)} "
                f"{'is' if len(diff) == 1 else 'are'} ignored (torch calls the one module twice)",
                [node.id, other.id], "warn"))
        return
    a, b = weight_shape(node.op, declared), weight_shape(other.op, theirs)
    if a is None or b is None:
        inf.violations.append(Violation(
            SHAPE_SHARES_MISMATCH,
            f"{node.op} {node.id!r} ties its weight to {other.op} {other.id!r}; only Linear and Embedding weights "
            "are tied in a design (the other layers' weights do not fit each other's kernels)",
            [node.id, other.id]))
        return
    if node.op == "Linear" and declared.get("bias") and declared["out_features"] not in (b[0], 1):
        inf.violations.append(Violation(
            SHAPE_SHARES_MISMATCH,
            f"Linear {node.id!r} ties its weight to {other.op} {other.id!r} ({b[0]} rows) but keeps its own bias of "
            f"out_features={declared['out_features']}, which cannot be added to {b[0]} outputs; set out_features="
            f"{b[0]} or bias=false",
            [node.id, other.id]))
        return
    if a != b:
        names = ("out_features", "in_features") if node.op == "Linear" else ("num_embeddings", "embedding_dim")
        ignored = [f"{n}={declared[n]}" for n, x, y in zip(names, a, b) if x != y]
        inf.violations.append(Violation(
            SHAPE_SHARES_IGNORED,
            f"{node.op} {node.id!r} ties its weight to {other.op} {other.id!r}, whose weight is {list(b)}: its own "
            f"{', '.join(ignored)} {'is' if len(ignored) == 1 else 'are'} ignored (the tied weight wins)",
            [node.id, other.id], "warn"))

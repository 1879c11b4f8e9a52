"""The design's declared sizes, in one place: what the design says of its symbols (train.batch_size for the
batch symbol, train.seq_len for the sequence symbol), the ids an integer input carries (its vocab_size, or
train.vocab_size), and the sizes a run gives every symbol. The verifier (core/shapes.py, the checks), the
builder (core/build.py), the runs and the cost quote (core/cost.py) all ask here; none imports the torch
builder for them.
"""

from __future__ import annotations

from .graph import Design
from .ops.base import FLOAT_DTYPES

DEFAULT_SYMBOL_SIZE = 8  # a free symbol's size when a design is run or quoted


def declared_sizes(design: Design) -> dict:
    """The sizes the design itself declares for its symbols: train.batch_size for the batch symbol
    (dim 0 of an input), train.seq_len for the sequence symbol (Design.sequence_symbols). Conditions on symbols are
    judged at these (symbol_env runs a design at them)."""
    train = design.train or {}
    batch, seq = train.get("batch_size"), train.get("seq_len")
    seq_symbols = design.sequence_symbols() if type(seq) is int and seq > 0 else set()
    out: dict = {}
    seen: set = set()
    for spec in design.inputs:
        for i, d in enumerate(spec.shape):
            if not isinstance(d, str) or d in seen:
                continue
            seen.add(d)
            if i == 0 and type(batch) is int and batch > 0:
                out[d] = batch
            elif i > 0 and d in seq_symbols:
                out[d] = seq
    return out


def size_roles(design: Design) -> dict:
    """What the design's input symbols size, where a size of 1 or 2 makes the design degenerate: the batch
    (dim 0), a sequence (Design.sequence_symbols, but not the feature width of a 2-D float input nor the
    channels of an image) and an image's spatial sizes (dims 2.. of a 4-D or 5-D float input)."""
    roles: dict = {}
    first: dict = {}
    for spec in design.inputs:
        for i, d in enumerate(spec.shape):
            if isinstance(d, str):
                first.setdefault(d, (i, spec))
    seq = design.sequence_symbols()
    for d, (i, spec) in first.items():
        floating = spec.dtype in FLOAT_DTYPES
        rank = len(spec.shape)
        if i == 0:
            roles[d] = "batch"
        elif floating and rank >= 4:
            if i >= 2:
                roles[d] = "image"
        elif d in seq and not (floating and rank == 2):
            roles[d] = "sequence"
    return roles


def symbol_env(design: Design, batch: int = 2, env: dict | None = None) -> dict:
    """Sizes for the design's symbols when it runs: the batch symbol(s) take `batch`, seq_len where declared,
    any other symbol DEFAULT_SYMBOL_SIZE; `env` overrides."""
    out: dict = {}
    train = design.train or {}
    seq_symbols = design.sequence_symbols() if train.get("seq_len") else set()
    for spec in design.inputs:
        for i, d in enumerate(spec.shape):
            if isinstance(d, str) and d not in out:
                if i == 0:
                    out[d] = batch
                elif d in seq_symbols:
                    out[d] = int(train["seq_len"])
                else:
                    out[d] = DEFAULT_SYMBOL_SIZE
    out.update(env or {})
    return out


def declared_id_range(design: Design, input_id: str) -> int | None:
    """The declared number of distinct ids an integer input carries: the input's own
    `vocab_size`, else train.vocab_size for the design's first integer input."""
    spec = next((i for i in design.inputs if i.id == input_id), None)
    if spec is None:
        return None
    own = spec.extra.get("vocab_size")
    if isinstance(own, int):
        return own
    first_int = next((i.id for i in design.inputs if not str(i.dtype).startswith(("float", "bfloat"))), None)
    vocab = (design.train or {}).get("vocab_size")
    if input_id == first_int and isinstance(vocab, int):
        return vocab
    return None


def id_range(design: Design, input_id: str) -> int:
    """Ids to draw for an integer input: the declared range, else the smallest
    table it feeds, else 16."""
    declared = declared_id_range(design, input_id)
    if declared is not None:
        return declared
    rows = [n.args.get("num_embeddings") for n in design.nodes
            if n.op == "Embedding" and n.inputs and n.inputs[0] == input_id
            and isinstance(n.args.get("num_embeddings"), int)]
    return min(rows) if rows else 16


def quote_env(design: Design, batch: int = 1, seq_default: int = 128,
              other_default: int = DEFAULT_SYMBOL_SIZE) -> tuple[dict, list[str]]:
    """Sizes for the symbols of a cost quote, and a note for each size the design leaves to a default: the batch
    symbol(s) -> `batch`, the sequence symbol -> train.seq_len, the second dim of another input of rank <= 3
    -> seq_len or `seq_default`, anything else -> `other_default`."""
    train = design.train or {}
    env: dict = {}
    notes: list[str] = []
    seq = train.get("seq_len")
    declared_seq = design.sequence_symbols() if _count(seq) else set()
    for spec in design.inputs:
        for i, d in enumerate(spec.shape):
            if not isinstance(d, str) or d in env:
                continue
            if i == 0:
                env[d] = batch
            elif d in declared_seq:
                env[d] = seq
            elif i == 1 and len(spec.shape) <= 3:
                env[d] = seq if _count(seq) else seq_default
                if not _count(seq):
                    notes.append(f"{d}={seq_default} (default seq_len)")
            else:
                env[d] = other_default
                notes.append(f"{d}={other_default} (default size of a free symbol)")
    return env, notes


def _count(v) -> bool:
    return type(v) is int and 0 < v <= 2 ** 63 - 1


# ---- the sizes a run of the design uses (the forward check, the differential runs) ----

RUN_BATCH = 2  # a run's batch when the design declares none


def run_batch(design: Design, batch: int | None = None) -> int:
    """The batch a run of the design uses: `batch` when the caller chose one, else the declared
    train.batch_size (the verifier judges the design at it), else 2."""
    if batch is not None:
        return batch
    declared = (design.train or {}).get("batch_size")
    return declared if type(declared) is int and declared > 0 else RUN_BATCH


def run_sizes(design: Design, batch: int | None = None) -> dict:
    """The sizes a differential run (and the forward check) uses: the design's declared
    train.batch_size and seq_len where it declares them (the verifier judges the design at those),
    else batch 2 and 8; `batch` overrides the batch."""
    return symbol_env(design, batch=run_batch(design, batch))


def run_mode(design: Design) -> str:
    """The mode the design declares (train.mode): "train", the default, or "eval"."""
    return (design.train or {}).get("mode", "train")

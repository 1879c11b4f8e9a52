"""Which dtypes each op's torch kernels take, measured, not guessed.

`SUPPORT[op]` is a string of one letter per (dtype, mode) in DTYPES x MODES
order (`SUPPORT["Op[variant]"]`, measured on `examples.VARIANTS`, is the row
for args that select other kernels, chosen by the op's `dtype_key`):
"." where torch (on the CPU) ran the op's example from
`core.ops.examples` with its data operands in that dtype, "f" where it ran
and gave float32 results (torch promoted the integers), "X" where it
raised. Data operands are the ones the example gives as float32; indices,
masks and ids keep their dtypes. The verifier's first pass blocks an op fed
a dtype its kernels refuse, before its shape rule runs.

`python -m archcurator.core.ops.dtype_support` measures it again and
rewrites the table below; tests/checks/test_op_dtypes.py keeps the two equal.
"""

from __future__ import annotations

from .base import promote

DTYPES = ("float32", "float64", "float16", "bfloat16", "int64", "int32", "uint8", "bool")
MODES = ("train", "eval")
ALIASES = {"float": "float32", "long": "int64", "int": "int32", "int16": "int32", "int8": "int32"}


# a dtype's first letter in a row (its train mode's; eval's is next), aliases included: asked for every node
_COLUMN = {d: i * len(MODES) for i, d in enumerate(DTYPES)}
_COLUMN.update((alias, _COLUMN[d]) for alias, d in ALIASES.items())


def supported(op: str, dtype: str, mode: str) -> bool | None:
    """Whether the op's kernels take data of this dtype in this mode (None: not measured)."""
    row = SUPPORT.get(op)
    at = _COLUMN.get(dtype)
    if row is None or at is None:
        return None
    return row[at + (1 if mode == "eval" else 0)] != "X"


def promotes(op: str, dtype: str, mode: str) -> bool:
    """Whether torch gives float32 results for data of this (integer) dtype."""
    row = SUPPORT.get(op)
    at = _COLUMN.get(dtype)
    if row is None or at is None:
        return False
    return row[at + (1 if mode == "eval" else 0)] == "f"


# ops whose kernels run on the operands' promoted dtype (TensorIterator's type promotion): the row of
# that dtype decides them; other ops given several dtypes are judged by their own rules
PROMOTING = frozenset({"Add", "Sub", "Mul", "Div", "Concat", "Stack", "Where", "CosineSimilarity",
                       "PairwiseDistance"})


BOOL_REFUSERS = frozenset({"Sub", "PairwiseDistance"})


def data_dtype(op: str, dtypes: list, types: list | None = None) -> str | None:
    """The one dtype of the op's data operands, or for a promoting op the dtype torch promotes them to
    (a 0-D operand counts only when its kind, bool < integer < float, is above the others'; `types` are
    the operands' TensorTypes, for their ranks). None: no data operand, or several dtypes not promoted."""
    if not DATA_OPERANDS:
        DATA_OPERANDS.update(_data_operands())
    idx = DATA_OPERANDS.get(op)
    if not idx:
        return None
    if len(idx) == 1:  # one data operand (most ops): its dtype, when the node gives it
        return dtypes[idx[0]] if idx[0] < len(dtypes) else None
    # a node may give fewer data operands than the example (self-attention: one for query, key and value)
    idx = [i for i in idx if i < len(dtypes)]
    seen = {dtypes[i] for i in idx}
    if len(seen) == 1:
        return seen.pop()
    if op in BOOL_REFUSERS and "bool" in seen:
        return "bool"  # measured: subtraction refuses a bool operand whatever the other's dtype
    if op not in PROMOTING or types is None or any(types[i].shape is None for i in idx):
        return None
    ranks = [None if t.shape is None else len(t.shape) for t in types]
    dimensioned = [dtypes[i] for i in idx if ranks[i] > 0]
    scalars = [dtypes[i] for i in idx if ranks[i] == 0]
    out = _promote_all(dimensioned) if dimensioned else None
    for d in scalars:
        if out is None or _kind(d) > _kind(out):
            out = d if out is None or _kind(d) != _kind(out) else promote(out, d)
    return out


def _kind(dtype: str) -> int:
    return 0 if dtype == "bool" else 2 if dtype in ("float16", "bfloat16", "float32", "float64") else 1


def _promote_all(dtypes: list) -> str:
    out = dtypes[0]
    for d in dtypes[1:]:
        out = promote(out, d)
    return out


def _data_operands() -> dict:
    from .examples import EXAMPLES

    return {op: tuple(i for i, (_, dt) in enumerate(operands) if dt == "float32")
            for op, (operands, _) in EXAMPLES.items()}


DATA_OPERANDS: dict = {}


def measure() -> dict[str, str]:
    import warnings

    import torch

    from ..build import build_module
    from ..graph import Design
    from .examples import EXAMPLES, VARIANTS

    warnings.filterwarnings("ignore")
    out = {}
    cases = [(op, op, operands, args) for op, (operands, args) in EXAMPLES.items()]
    cases += [(key, op, operands, args) for key, (op, operands, args) in VARIANTS.items()]
    for key, op, operands, args in sorted(cases):
        inputs = [{"id": f"in{i}", "shape": list(s), "dtype": dt} for i, (s, dt) in enumerate(operands)]
        design = Design.from_dict({"format": "archgraph/1", "name": op, "inputs": inputs,
                                   "nodes": [{"id": "n", "op": op, "args": args, "in": [i["id"] for i in inputs]}],
                                   "outputs": ["n"]})
        row = []
        for dtype in DTYPES:
            for mode in MODES:
                torch.manual_seed(0)
                try:
                    model = build_module(design, "cpu").train(mode == "train")
                    xs = []
                    for shape, dt in operands:
                        if dt != "float32":
                            xs.append(torch.zeros(shape, dtype=getattr(torch, dt)))
                        elif dtype == "bool":
                            xs.append(torch.rand(shape) > 0.5)
                        elif dtype.startswith(("int", "uint")):
                            xs.append(torch.randint(0, 3, shape, dtype=getattr(torch, dtype)))
                        else:
                            xs.append(torch.randn(shape).to(getattr(torch, dtype)))
                    with torch.set_grad_enabled(mode == "train"):
                        res = model(*xs)
                    first = res[0] if isinstance(res, tuple) else res
                    promoted = dtype != "float32" and first.dtype == torch.float32 and \
                        not dtype.startswith(("float", "bfloat"))
                    row.append("f" if promoted else ".")
                except Exception:  # noqa: BLE001 - whatever torch raises, it refused
                    row.append("X")
        out[key] = "".join(row)
    return out


def _write(table: dict) -> None:
    from pathlib import Path

    path = Path(__file__)
    text = path.read_text(encoding="utf-8")
    marker = "\n# generated by `python -m archcurator.core.ops.dtype_support`"
    head = text[: text.index(marker)]
    body = "SUPPORT = {\n" + "".join(f"    {op!r}: {row!r},\n" for op, row in sorted(table.items())) + "}\n"
    path.write_text(head + marker + " (torch on the CPU); do not edit by hand\n" + body, encoding="utf-8")


if __name__ == "__main__":
    _write(measure())

# generated by `python -m archcurator.core.ops.dtype_support` (torch on the CPU); do not edit by hand
SUPPORT = {
    'AdaptiveAvgPool1d': '........XXXXXXXX',
    'AdaptiveAvgPool2d': '........XXXXXXXX',
    'AdaptiveAvgPool3d': '........XXXXXXXX',
    'AdaptiveMaxPool1d': '........XXXXXXXX',
    'AdaptiveMaxPool2d': '........XXXXXXXX',
    'AdaptiveMaxPool3d': '........XXXXXXXX',
    'Add': '................',
    'AlphaDropout': '........X.X.X.X.',
    'Amax': '................',
    'Amin': '................',
    'Arange': '................',
    'AvgPool1d': '..........XXXXXX',
    'AvgPool2d': '..........XXXXXX',
    'AvgPool3d': '....XXXX..XXXXXX',
    'BatchNorm1d': '........XXXXXXXX',
    'BatchNorm2d': '........XXXXXXXX',
    'BatchNorm3d': '........XXXXXXXX',
    'Bilinear': '..XXXXXXXXXXXXXX',
    'CELU': '........XXXXXXXX',
    'ChannelShuffle': '................',
    'Chunk': '................',
    'CircularPad1d': '................',
    'CircularPad2d': '................',
    'CircularPad3d': '................',
    'Clamp': '........ffffffff',
    'Concat': '................',
    'Constant': '........ffffffff',
    'ConstantPad1d': '................',
    'ConstantPad2d': '................',
    'ConstantPad3d': '................',
    'Conv1d': '..XXXXXXXXXXXXXX',
    'Conv2d': '..XXXXXXXXXXXXXX',
    'Conv3d': '..XXXXXXXXXXXXXX',
    'ConvTranspose1d': '..XXXXXXXXXXXXXX',
    'ConvTranspose2d': '..XXXXXXXXXXXXXX',
    'ConvTranspose3d': '..XXXXXXXXXXXXXX',
    'CosineSimilarity': '........XXXXXXXX',
    'CrossMapLRN2d': '........XXXXXXXX',
    'Cumsum': '................',
    'Div': '........ffffffff',
    'Dropout': '........X.X.X.X.',
    'Dropout1d': '........X.X.X.X.',
    'Dropout2d': '........X.X.X.X.',
    'Dropout3d': '........X.X.X.X.',
    'ELU': '........XXXXXXXX',
    'Einsum': '..............XX',
    'Embedding': '........ffffffff',
    'EmbeddingBag': '........ffffffff',
    'Expand': '................',
    'FeatureAlphaDropout': '........X.X.X.X.',
    'Flatten': '................',
    'Fold': '........XXXXXX..',
    'FractionalMaxPool2d': '........XXXXXXXX',
    'FractionalMaxPool3d': '........XXXXXXXX',
    'GELU': '........XXXXXXXX',
    'GLU': '........XXXXXXXX',
    'GRU': '..XXXXXXXXXXXXXX',
    'GRUCell': '..XXXXXXXXXXXXXX',
    'Gather': '................',
    'GroupNorm': '..XX....XXXXXXXX',
    'GroupNorm[no affine]': '........XXXXXXXX',
    'Hardshrink': '........XXXXXXXX',
    'Hardsigmoid': '........XXXXXXXX',
    'Hardswish': '........XXXXXXXX',
    'Hardtanh': '............XXXX',
    'Hardtanh[limits in 0..255]': '..............XX',
    'Identity': '................',
    'Index': '................',
    'IndexSelect': '................',
    'InstanceNorm1d': '........XXXXXXXX',
    'InstanceNorm2d': '........XXXXXXXX',
    'InstanceNorm3d': '........XXXXXXXX',
    'Interpolate': '........XXXXXXXX',
    'Interpolate[bilinear]': '........XXXX..XX',
    'Interpolate[nearest]': '........XXXX..XX',
    'LPPool1d': '........ffffffff',
    'LPPool2d': '........ffffffff',
    'LPPool3d': '....XXXXffffffff',
    'LSTM': '..XXXXXXXXXXXXXX',
    'LSTMCell': '..XXXXXXXXXXXXXX',
    'LayerNorm': '..XX....XXXXXXXX',
    'LayerNorm[no affine]': '........XXXXXXXX',
    'LeakyReLU': '........XXXXXXXX',
    'Linear': '..XXXXXXXXXXXXXX',
    'LocalResponseNorm': '........ffXXXXXX',
    'LogSigmoid': '........XXXXXXXX',
    'LogSoftmax': '........XXXXXXXX',
    'MaskedFill': '............XX..',
    'MatMul': '..............XX',
    'MaxPool1d': '........XXXXXXXX',
    'MaxPool2d': '..............XX',
    'MaxPool3d': '..............XX',
    'MaxUnpool1d': '........XXXXXXXX',
    'MaxUnpool2d': '........XXXXXXXX',
    'MaxUnpool3d': '........XXXXXXXX',
    'Mean': '........XXXXXXXX',
    'Mish': '........XXXXXXXX',
    'Mul': '................',
    'MultiheadAttention': '..XXXXXXXXXXXXXX',
    'Normalize': '........XXXXXXXX',
    'PReLU': '..XXXXXXXXXXXXXX',
    'Pad': '................',
    'PairwiseDistance': '........ffffffXX',
    'Parameter': '........ffffffff',
    'Permute': '................',
    'PixelShuffle': '................',
    'PixelUnshuffle': '................',
    'RMSNorm': '........XXXXXXXX',
    'RNN': '..XXXXXXXXXXXXXX',
    'RNNCell': '..XXXXXXXXXXXXXX',
    'RReLU': '....X...XXXXXXXX',
    'ReLU': '..............XX',
    'ReLU6': '..............XX',
    'Rearrange': '................',
    'Reduce': '................',
    'ReflectionPad1d': '..............XX',
    'ReflectionPad2d': '..............XX',
    'ReflectionPad3d': '..............XX',
    'Repeat': '................',
    'ReplicationPad1d': '..............XX',
    'ReplicationPad2d': '..............XX',
    'ReplicationPad3d': '..............XX',
    'Reshape': '................',
    'Roll': '................',
    'SELU': '........XXXXXXXX',
    'Scale': '........ffffffff',
    'Scale[integer value]': '................',
    'Select': '................',
    'SiLU': '........XXXXXXXX',
    'Sigmoid': '........ffffffff',
    'Slice': '................',
    'Softmax': '........XXXXXXXX',
    'Softmax2d': '........XXXXXXXX',
    'Softmin': '........XXXXXXXX',
    'Softplus': '........XXXXXXXX',
    'Softshrink': '........XXXXXXXX',
    'Softsign': '........ffffffXX',
    'Split': '................',
    'Squeeze': '................',
    'Stack': '................',
    'Sub': '..............XX',
    'Sum': '................',
    'SyncBatchNorm': '........XXXXXXXX',
    'Tanh': '........ffffffff',
    'Tanhshrink': '........ffffffXX',
    'Threshold': '..............XX',
    'Tile': '................',
    'Transformer': '..XXXXXXXXXXXXXX',
    'TransformerDecoder': '..XXXXXXXXXXXXXX',
    'TransformerDecoderLayer': '..XXXXXXXXXXXXXX',
    'TransformerEncoder': '..XXXXXXXXXXXXXX',
    'TransformerEncoderLayer': '..XXXXXXXXXXXXXX',
    'Transpose': '................',
    'Unflatten': '................',
    'Unfold': '........XXXXXX..',
    'Unsqueeze': '................',
    'Upsample': '........XXXX..XX',
    'UpsamplingBilinear2d': '........XXXX..XX',
    'UpsamplingNearest2d': '........XXXX..XX',
    'Where': '................',
    'ZeroPad1d': '................',
    'ZeroPad2d': '................',
    'ZeroPad3d': '................',
}

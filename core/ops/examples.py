"""One example of every op of the table: operands (shape, dtype) and arguments, all valid.

tests/test_ops.py runs each against torch (shapes, parameters, FLOPs);
`dtype_support` measures on them which dtypes each op's kernels take.
An op may instead carry its example in its own `OpSpec(..., example=...)`: EXAMPLES gathers those too.
"""

from __future__ import annotations

F = "float32"
INT = "int64"
# op -> (operand shapes/dtypes, args)
EXAMPLES: dict[str, tuple] = {
    "Linear": ([((4, 7, 16), F)], {"in_features": 16, "out_features": 24}),
    "Bilinear": ([((4, 5), F), ((4, 6), F)], {"in1_features": 5, "in2_features": 6, "out_features": 3}),
    "Embedding": ([((4, 9), INT)], {"num_embeddings": 50, "embedding_dim": 12}),
    "Conv1d": ([((2, 4, 20), F)], {"in_channels": 4, "out_channels": 8, "kernel_size": 3, "stride": 2}),
    "Conv2d": ([((2, 6, 17, 15), F)], {"in_channels": 6, "out_channels": 12, "kernel_size": [3, 5], "stride": 2,
                                       "padding": 1, "groups": 3, "dilation": 2}),
    "Conv3d": ([((1, 2, 6, 7, 8), F)], {"in_channels": 2, "out_channels": 4, "kernel_size": 3, "padding": "same"}),
    "ConvTranspose1d": ([((2, 4, 9), F)], {"in_channels": 4, "out_channels": 6, "kernel_size": 4, "stride": 2,
                                           "padding": 1}),
    "ConvTranspose2d": ([((2, 8, 5, 6), F)], {"in_channels": 8, "out_channels": 4, "kernel_size": 3, "stride": 2,
                                              "padding": 1, "output_padding": 1, "groups": 2}),
    "ConvTranspose3d": ([((1, 2, 3, 4, 5), F)], {"in_channels": 2, "out_channels": 2, "kernel_size": 2,
                                                 "stride": 2}),
    "BatchNorm1d": ([((4, 10), F)], {"num_features": 10, "affine": False, "track_running_stats": False}),
    "BatchNorm2d": ([((2, 6, 5, 5), F)], {"num_features": 6, "affine": False, "track_running_stats": False}),
    "BatchNorm3d": ([((2, 3, 4, 4, 4), F)], {"num_features": 3, "affine": False, "track_running_stats": False}),
    "LayerNorm": ([((2, 5, 8), F)], {"normalized_shape": [5, 8]}),
    "RMSNorm": ([((2, 5, 8), F)], {"normalized_shape": 8}),
    "GroupNorm": ([((2, 8, 4, 4), F)], {"num_groups": 4, "num_channels": 8}),
    "InstanceNorm2d": ([((2, 3, 6, 6), F)], {"num_features": 3}),
    "MultiheadAttention": ([((2, 5, 16), F), ((2, 7, 8), F), ((2, 7, 4), F)],
                           {"embed_dim": 16, "num_heads": 4, "batch_first": True, "kdim": 8, "vdim": 4}),
    "TransformerEncoderLayer": ([((6, 2, 16), F)], {"d_model": 16, "nhead": 2, "dim_feedforward": 32}),
    "TransformerDecoderLayer": ([((2, 5, 16), F), ((2, 7, 16), F)],
                                {"d_model": 16, "nhead": 4, "dim_feedforward": 24, "batch_first": True,
                                 "norm_first": True, "activation": "gelu"}),
    "RNN": ([((2, 5, 6), F)], {"input_size": 6, "hidden_size": 7, "batch_first": True, "num_layers": 2}),
    "LSTM": ([((5, 2, 6), F)], {"input_size": 6, "hidden_size": 8, "bidirectional": True, "proj_size": 3,
                                "num_layers": 2}),
    "GRU": ([((2, 5, 6), F)], {"input_size": 6, "hidden_size": 5, "batch_first": True, "bias": False}),
    "MaxPool1d": ([((2, 3, 11), F)], {"kernel_size": 3, "stride": 2, "ceil_mode": True}),
    "MaxPool2d": ([((2, 3, 13, 13), F)], {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True}),
    "MaxPool3d": ([((1, 2, 6, 6, 6), F)], {"kernel_size": 2}),
    "AvgPool1d": ([((2, 3, 10), F)], {"kernel_size": 4, "stride": 3}),
    "AvgPool2d": ([((2, 3, 9, 9), F)], {"kernel_size": 3, "stride": 2, "ceil_mode": True}),
    "AvgPool3d": ([((1, 2, 6, 6, 6), F)], {"kernel_size": 3, "stride": 1, "padding": 1}),
    "AdaptiveAvgPool1d": ([((2, 3, 10), F)], {"output_size": 4}),
    "AdaptiveAvgPool2d": ([((2, 3, 9, 7), F)], {"output_size": [3, None]}),
    "AdaptiveAvgPool3d": ([((1, 2, 6, 6, 6), F)], {"output_size": 2}),
    "AdaptiveMaxPool1d": ([((2, 3, 10), F)], {"output_size": 2}),
    "AdaptiveMaxPool2d": ([((2, 3, 9, 7), F)], {"output_size": 1}),
    "AdaptiveMaxPool3d": ([((1, 2, 6, 6, 6), F)], {"output_size": 3}),
    "Add": ([((2, 3, 4), F), ((3, 1), F)], {}),
    "Sub": ([((2, 3, 4), F), ((2, 3, 4), F)], {}),
    "Mul": ([((2, 3, 1, 1), F), ((2, 3, 5, 5), F)], {}),
    "Div": ([((2, 4), F), ((4,), F)], {}),
    "MatMul": ([((2, 3, 5, 6), F), ((6, 7), F)], {}),
    "Concat": ([((2, 3, 4), F), ((2, 5, 4), F)], {"dim": 1}),
    "Stack": ([((2, 3), F), ((2, 3), F), ((2, 3), F)], {"dim": -1}),
    "Split": ([((2, 10, 3), F)], {"split_size_or_sections": 4, "dim": 1}),
    "Reshape": ([((2, 3, 4), F)], {"shape": [2, -1, 2]}),
    "Flatten": ([((2, 3, 4, 5), F)], {"start_dim": 1, "end_dim": 2}),
    "Unflatten": ([((2, 12), F)], {"dim": 1, "unflattened_size": [3, -1]}),
    "Permute": ([((2, 3, 4), F)], {"dims": [2, 0, 1]}),
    "Transpose": ([((2, 3, 4), F)], {"dim0": -1, "dim1": 0}),
    "Squeeze": ([((2, 1, 4), F)], {"dim": 1}),
    "Unsqueeze": ([((2, 4), F)], {"dim": -1}),
    "Mean": ([((2, 3, 4, 4), F)], {"dim": [2, 3], "keepdim": True}),
    "Sum": ([((2, 3, 4), F)], {"dim": 1}),
    "Amax": ([((2, 3, 4), F)], {"dim": [1, 2]}),
    "Amin": ([((2, 3, 4), F)], {"dim": -1, "keepdim": True}),
    "Select": ([((2, 5, 4), F)], {"dim": 1, "index": -1}),
    "Slice": ([((2, 9, 4), F)], {"dim": 1, "start": 1, "end": -2, "step": 2}),
    "Expand": ([((1, 1, 8), F)], {"shape": [3, 4, -1]}),
    "Scale": ([((2, 3), F)], {"value": 0.125}),
    "Constant": ([], {"shape": [2, 3], "value": 1.5}),
    "Arange": ([], {"end": 7}),
    "Parameter": ([], {"shape": [1, 4, 8]}),
    "Upsample": ([((2, 3, 4, 5), F)], {"scale_factor": 2, "mode": "nearest"}),
    "Softmax": ([((2, 5), F)], {"dim": -1}),
    "LogSoftmax": ([((2, 5), F)], {"dim": 1}),
    "PReLU": ([((2, 4, 3), F)], {"num_parameters": 4}),
    "Dropout2d": ([((2, 3, 4, 4), F)], {"p": 0.2}),
    "ZeroPad1d": ([((2, 3, 5), F)], {"padding": [1, 2]}),
    "ZeroPad2d": ([((2, 3, 5, 6), F)], {"padding": [1, 2, 0, 3]}),
    "ZeroPad3d": ([((1, 2, 3, 4, 5), F)], {"padding": 1}),
    "ConstantPad1d": ([((2, 3, 5), F)], {"padding": 2, "value": 0.5}),
    "ConstantPad2d": ([((2, 3, 5, 6), F)], {"padding": [0, 1, 2, 3], "value": 1.0}),
    "ConstantPad3d": ([((1, 2, 3, 4, 5), F)], {"padding": [1, 1, 0, 0, 2, 2], "value": 0.0}),
    "ReflectionPad1d": ([((2, 3, 5), F)], {"padding": [2, 1]}),
    "ReflectionPad2d": ([((2, 3, 5, 6), F)], {"padding": 2}),
    "ReflectionPad3d": ([((1, 2, 3, 4, 5), F)], {"padding": 1}),
    "ReplicationPad1d": ([((2, 3, 5), F)], {"padding": 3}),
    "ReplicationPad2d": ([((2, 3, 5, 6), F)], {"padding": [1, 0, 1, 0]}),
    "ReplicationPad3d": ([((1, 2, 3, 4, 5), F)], {"padding": [0, 1, 0, 1, 0, 1]}),
}
ENC = {"d_model": 8, "nhead": 2, "dim_feedforward": 16}
EXAMPLES.update({
    "Threshold": ([((2, 3, 4), F)], {"threshold": 0.1, "value": 0.0}),
    "Softmin": ([((2, 5), F)], {"dim": 0}),
    "GLU": ([((2, 6, 3), F)], {"dim": 1}),
    "Softmax2d": ([((2, 3, 4, 4), F)], {}),
    "RReLU": ([((2, 3, 4), F)], {"lower": 0.1, "upper": 0.2}),
    "InstanceNorm1d": ([((2, 3, 6), F)], {"num_features": 3}),
    "InstanceNorm3d": ([((2, 3, 4, 4, 4), F)], {"num_features": 3}),
    "SyncBatchNorm": ([((2, 3, 4), F)], {"num_features": 3, "affine": False, "track_running_stats": False}),
    "LocalResponseNorm": ([((2, 6, 4), F)], {"size": 3}),
    "CrossMapLRN2d": ([((2, 6, 4, 4), F)], {"size": 3}),
    "PixelShuffle": ([((2, 8, 3, 4), F)], {"upscale_factor": 2}),
    "PixelUnshuffle": ([((2, 2, 4, 6), F)], {"downscale_factor": 2}),
    "ChannelShuffle": ([((2, 6, 3, 3), F)], {"groups": 3}),
    "Unfold": ([((2, 3, 6, 7), F)], {"kernel_size": [2, 3], "stride": 2, "padding": 1}),
    "Fold": ([((2, 12, 20), F)], {"output_size": [5, 6], "kernel_size": 2}),
    "UpsamplingNearest2d": ([((1, 2, 3, 4), F)], {"scale_factor": 2}),
    "UpsamplingBilinear2d": ([((1, 2, 3, 4), F)], {"size": [5, 7]}),
    "CosineSimilarity": ([((4, 6), F), ((1, 6), F)], {"dim": 1}),
    "PairwiseDistance": ([((4, 6), F), ((4, 6), F)], {"keepdim": True}),
    "LPPool1d": ([((2, 3, 9), F)], {"norm_type": 2, "kernel_size": 3, "stride": 2}),
    "LPPool2d": ([((2, 3, 8, 8), F)], {"norm_type": 1.5, "kernel_size": 2}),
    "LPPool3d": ([((1, 2, 4, 4, 4), F)], {"norm_type": 2, "kernel_size": 2}),
    "FractionalMaxPool2d": ([((1, 2, 9, 9), F)], {"kernel_size": 2, "output_size": [4, 5]}),
    "FractionalMaxPool3d": ([((1, 2, 6, 6, 6), F)], {"kernel_size": 2, "output_ratio": 0.5}),
    "MaxUnpool1d": ([((2, 3, 4), F), ((2, 3, 4), INT)], {"kernel_size": 2}),
    "MaxUnpool2d": ([((2, 3, 4, 4), F), ((2, 3, 4, 4), INT)], {"kernel_size": 3, "stride": 2, "padding": 1}),
    "MaxUnpool3d": ([((1, 2, 2, 2, 2), F), ((1, 2, 2, 2, 2), INT)], {"kernel_size": 2}),
    "RNNCell": ([((4, 5), F), ((4, 6), F)], {"input_size": 5, "hidden_size": 6}),
    "GRUCell": ([((4, 5), F)], {"input_size": 5, "hidden_size": 6}),
    "LSTMCell": ([((5,), F)], {"input_size": 5, "hidden_size": 3, "bias": False}),
    "EmbeddingBag": ([((3, 4), INT)], {"num_embeddings": 10, "embedding_dim": 5, "mode": "sum"}),
    "TransformerEncoder": ([((5, 2, 8), F)], {"encoder_layer": ENC, "num_layers": 2,
                                              "norm": {"normalized_shape": 8}}),
    "TransformerDecoder": ([((4, 2, 8), F), ((5, 2, 8), F)], {"decoder_layer": ENC, "num_layers": 2}),
    "Transformer": ([((5, 2, 8), F), ((4, 2, 8), F)], {"d_model": 8, "nhead": 2, "num_encoder_layers": 1,
                                                       "num_decoder_layers": 2, "dim_feedforward": 16}),
    "Gather": ([((3, 5), F), ((3, 2), INT)], {"dim": 1}),
    "IndexSelect": ([((3, 5), F), ((4,), INT)], {"dim": 1}),
    "Index": ([((3, 5, 2), F)], {"dim": 1, "index": [0, 4, 1]}),
    "MaskedFill": ([((3, 5), F), ((1, 5), "bool")], {"value": -1e4}),
    "Where": ([((3, 1), "bool"), ((3, 5), F), ((5,), F)], {}),
    "Clamp": ([((3, 5), F)], {"min": -1.0}),
    "Normalize": ([((3, 5), F)], {"dim": -1}),
    "Roll": ([((3, 5), F)], {"shifts": [1, -2], "dims": [0, 1]}),
    "Cumsum": ([((3, 5), F)], {"dim": 1}),
    "Chunk": ([((7, 2), F)], {"chunks": 3}),
    "Tile": ([((3, 5), F)], {"dims": [2, 1, 2]}),
    "Pad": ([((2, 3, 5), F)], {"pad": [1, 2], "value": 0.5}),
    "Interpolate": ([((1, 2, 5), F)], {"scale_factor": 2, "mode": "linear", "align_corners": False}),
    "Einsum": ([((2, 3, 4), F), ((2, 4, 5), F)], {"equation": "bij,bjk->bik"}),
    "Rearrange": ([((2, 3, 8, 6), F)], {"pattern": "b c (h p1) (w p2) -> b (h w) (p1 p2 c)", "p1": 4, "p2": 3}),
    "Reduce": ([((2, 3, 8, 6), F)], {"pattern": "b c (h p) w -> b c h", "reduction": "max", "p": 2}),
    "Repeat": ([((2, 3), F)], {"pattern": "b d -> b r d", "r": 4}),
    "CircularPad1d": ([((2, 3, 5), F)], {"padding": [1, 2]}),
    "CircularPad2d": ([((2, 3, 5, 6), F)], {"padding": 2}),
    "CircularPad3d": ([((1, 2, 3, 4, 5), F)], {"padding": 1}),
})
# rows of the dtype table for args that select other kernels (OpSpec.dtype_key): key -> (op, operands, args)
VARIANTS = {
    "LayerNorm[no affine]": ("LayerNorm", [((2, 5, 8), F)], {"normalized_shape": [5, 8], "elementwise_affine": False}),
    "GroupNorm[no affine]": ("GroupNorm", [((2, 8, 4, 4), F)], {"num_groups": 4, "num_channels": 8, "affine": False}),
    "Hardtanh[limits in 0..255]": ("Hardtanh", [((2, 3, 4), F)], {"min_val": -0.5, "max_val": 2.0}),
    "Interpolate[nearest]": ("Interpolate", [((1, 2, 5), F)], {"scale_factor": 2, "mode": "nearest"}),
    "Interpolate[bilinear]": ("Interpolate", [((1, 2, 5, 5), F)], {"scale_factor": 2, "mode": "bilinear"}),
    "Scale[integer value]": ("Scale", [((2, 3), F)], {"value": 2}),
    "Clamp[integer bounds]": ("Clamp", [((3, 5), F)], {"min": -1, "max": 2}),
}
for _name in ("ReLU", "ReLU6", "LeakyReLU", "ELU", "SELU", "GELU", "SiLU", "Mish", "Hardswish", "Hardsigmoid",
              "Hardtanh", "Softplus", "Tanh", "Sigmoid", "Dropout", "Dropout1d", "Identity", "CELU", "Hardshrink",
              "Softshrink", "LogSigmoid", "Softsign", "Tanhshrink", "Dropout3d", "AlphaDropout",
              "FeatureAlphaDropout"):
    EXAMPLES[_name] = ([((2, 3, 4), F)], {})



def _gather_entries() -> None:
    from . import OP_TABLE

    for name, spec in OP_TABLE.items():
        if spec.example is None:
            continue
        if name in EXAMPLES:
            raise ValueError(f"{name}: example given twice, in its OpSpec and in core/ops/examples.py")
        EXAMPLES[name] = spec.example


_gather_entries()

"""Names agents write for an op that torch.nn does not have (the grounding study's unknown-op kind swaps an op
for its lookalike; the verifier refuses it as connectivity.unknown-op)."""

LOOKALIKES = {"ReLU": "Swish", "GELU": "GeGLU", "LayerNorm": "ScaleNorm", "Conv2d": "DeformConv2d",
              "Linear": "SparseLinear", "BatchNorm2d": "FrozenBatchNorm2d", "MultiheadAttention": "FlashAttention",
              "LSTM": "MambaBlock", "Embedding": "RotaryEmbedding", "Dropout": "DropPath",
              "MaxPool2d": "BlurPool2d", "Add": "WeightedSum"}

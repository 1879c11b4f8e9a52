"""The rules the op table raises (each op's shape rule, through `ctx.require`), the inference walk
(core/shapes.py) and the structural pass (core/verify.py): declared once here, beside the op modules that
raise them, and imported by name where they are raised (core/checks/README.md: how to add a rule)."""

from __future__ import annotations

from ..rule import Rule

B, W = "block", "warn"


SHAPE_LINEAR_WIDTH = Rule("shape.linear-width", B, "shape", "Linear width does not match its input",
    condition="A Linear's in_features differs from the last dimension of its input.",
    why="torch raises a matmul shape error on the first forward; nothing trains.",
    fix="Set in_features to the input's last dimension, or fix the layer that feeds it.")

SHAPE_FLATTEN_LINEAR_WIDTH = Rule("shape.flatten-linear-width", B, "shape",
    "Flattened size does not match the Linear after it",
    condition="A Linear after a Flatten/Reshape expects a width other than the flattened size.",
    why="The classic CNN-head slip: the forward crashes at the first batch.",
    fix="Set in_features to channels x height x width at that point, or add adaptive pooling first.")

SHAPE_RANK = Rule("shape.rank", B, "shape", "Input has the wrong number of dimensions",
    condition="An op receives a tensor of a rank it does not accept (e.g. 2-D into Conv2d).",
    why="torch refuses the call; the forward pass fails.",
    fix="Reshape, unsqueeze or flatten so the op gets the rank it expects.")

SHAPE_CONV_CHANNELS = Rule("shape.conv-channels", B, "shape", "Convolution channels do not match",
    condition="A convolution's in_channels differs from the channel dimension of its input.",
    why="torch raises a channel mismatch on the first forward.",
    fix="Set in_channels to the input's channel count, or fix the layer before it.")

SHAPE_CONV_GROUPS = Rule("shape.conv-groups", B, "shape", "Channels not divisible by groups",
    condition="in_channels or out_channels of a convolution is not a multiple of groups.",
    why="torch.nn refuses to construct the layer.",
    fix="Choose groups that divide both channel counts (depthwise: groups = in_channels = out_channels).")

SHAPE_KERNEL_TOO_LARGE = Rule("shape.kernel-too-large", B, "shape", "Kernel larger than its input",
    condition="A convolution's (dilated) kernel spans more than the padded input.",
    why="torch raises 'Kernel size can't be greater than actual input size'.",
    fix="Use a smaller kernel, pad, or downsample less before this layer.")

SHAPE_SPATIAL_COLLAPSE = Rule("shape.spatial-collapse", B, "shape", "Spatial size reaches zero",
    condition="A pooling or transposed convolution produces a spatial size of 0 or less.",
    why="torch raises 'output size is too small'; the network is too deep for its input resolution.",
    fix="Remove a downsampling stage, use a larger input, or use adaptive pooling.")

SHAPE_POOL_PADDING = Rule("shape.pool-padding", B, "shape", "Pooling padding larger than half its window",
    condition="A pooling layer's padding exceeds half of its kernel size.",
    why="torch refuses: 'pad should be at most half of effective kernel size'.",
    fix="Use padding <= kernel_size // 2.")

SHAPE_NORM_FEATURES = Rule("shape.norm-features", B, "shape", "Normalisation feature count does not match",
    condition="BatchNorm num_features, GroupNorm num_channels or LayerNorm normalized_shape differs from "
              "the input's channels / trailing dimensions.",
    why="torch raises a size mismatch on the first forward.",
    fix="Set the feature count to the input's channel count (BatchNorm/GroupNorm) or trailing size (LayerNorm).")

SHAPE_GROUPNORM_DIVISIBILITY = Rule("shape.groupnorm-divisibility", B, "shape",
    "GroupNorm channels not divisible by groups",
    condition="GroupNorm's num_channels is not a multiple of num_groups.",
    why="torch.nn refuses to construct the layer.",
    fix="Choose num_groups that divides num_channels (32 and 8 are common).")

SHAPE_HEADS_DIVISIBILITY = Rule("shape.heads-divisibility", B, "shape", "Embedding width not divisible by heads",
    condition="An attention layer's embed_dim (d_model) is not a multiple of num_heads (nhead).",
    why="torch.nn refuses to construct the layer: each head needs an equal slice.",
    fix="Choose a head count that divides the width (e.g. 8 heads of 64 for 512).")

SHAPE_ATTENTION_WIDTH = Rule("shape.attention-width", B, "shape", "Attention input width does not match",
    condition="Query, key or value width differs from embed_dim / kdim / vdim (or d_model of a "
              "Transformer layer).",
    why="The input projection's matmul fails on the first forward.",
    fix="Project inputs to the attention width first, or set kdim / vdim.")

SHAPE_RNN_INPUT_SIZE = Rule("shape.rnn-input-size", B, "shape", "RNN input size does not match",
    condition="An RNN/LSTM/GRU's input_size differs from its input's last dimension.",
    why="torch raises 'input.size(-1) must be equal to input_size'.",
    fix="Set input_size to the feature width of the sequence fed in.")

SHAPE_BROADCAST = Rule("shape.broadcast", B, "shape", "Element-wise operands cannot broadcast",
    condition="An Add/Sub/Mul/Div (a residual, typically) or a batched MatMul combines shapes that do not "
              "broadcast.",
    why="torch raises a size mismatch; usually a residual whose branch changed width or resolution.",
    fix="Project the shortcut (1x1 conv + BatchNorm, or Linear) to the branch's shape.")

SHAPE_MATMUL_INNER = Rule("shape.matmul-inner", B, "shape", "Matrix product inner sizes differ",
    condition="MatMul operands whose inner dimensions differ.",
    why="torch raises 'mat1 and mat2 shapes cannot be multiplied'.",
    fix="Transpose one operand, or fix the width that feeds it.")

SHAPE_CONCAT_SIZES = Rule("shape.concat-sizes", B, "shape", "Joined tensors differ off the joined dimension",
    condition="Concat/Stack operands differ in rank or in any size but the joined one (Stack: any size).",
    why="torch raises 'Sizes of tensors must match except in dimension'.",
    fix="Resize or project branches so they agree on every other dimension.")

SHAPE_SPLIT_SIZES = Rule("shape.split-sizes", B, "shape", "Split sections do not add up",
    condition="Split with a list of sections whose sum differs from the split dimension.",
    why="torch raises 'split_with_sizes expects split_sizes to sum exactly to'.",
    fix="Make the sections sum to the dimension's size.")

SHAPE_RESHAPE_PRODUCT = Rule("shape.reshape-product", B, "shape", "Reshape changes the number of elements",
    condition="Reshape/Unflatten to a shape whose product differs from the input's.",
    why="torch raises 'shape is invalid for input of size'.",
    fix="Make the target's product equal the input's, or use -1 for one dimension.")

SHAPE_DIM_RANGE = Rule("shape.dim-range", B, "shape", "Dimension argument out of range",
    condition="A dim / dims argument names a dimension the input does not have (or is no permutation).",
    why="torch raises 'Dimension out of range'.",
    fix="Use a dim within the input's rank; negative dims count from the end.")

SHAPE_INDEX_RANGE = Rule("shape.index-range", B, "shape", "Index out of range",
    condition="Select picks an index beyond the size of its dimension.",
    why="torch raises an IndexError.",
    fix="Select an index below the size, e.g. 0 for a class token.")

SHAPE_UNKNOWN_INDEX = Rule("shape.unknown-index", W, "shape", "Index values the verifier does not follow",
    condition="Gather, IndexSelect, Index or an embedding lookup reads positions computed by an op whose values "
              "the verifier does not follow (a sum of bools, a product, a difference, an argmax).",
    why="torch raises 'index out of range' when one of them falls outside the indexed size; an unknown never "
        "blocks, so the crash can hide here.",
    fix="Make sure the computed positions lie in 0..size - 1 (clamp them, or take them from an Arange or ids "
        "with a declared vocab_size).")

SHAPE_EXPAND = Rule("shape.expand", B, "shape", "Expand of a non-singleton dimension",
    condition="Expand to a size that differs from a dimension that is not 1.",
    why="torch raises 'The expanded size of the tensor must match the existing size'.",
    fix="Expand only size-1 dimensions; use repeat for the others.")

SHAPE_ARITY = Rule("shape.arity", B, "shape", "Wrong number of operands",
    condition="A node lists more or fewer operands in `in` than its op takes.",
    why="The op cannot be called with those operands.",
    fix="List exactly the operands the op takes, in order.")

SHAPE_SHARES_MISMATCH = Rule("shape.shares-mismatch", B, "shape", "Tied weight that cannot run",
    condition="A node ties its weight (`shares` of another op) where torch cannot use it: a tied Linear whose "
              "own bias (out_features) does not fit the tied weight's rows, or a tie between layers other "
              "than Linear and Embedding.",
    why="The forward adds a bias of the wrong size, or feeds a kernel a weight of the wrong rank: torch raises.",
    fix="Set the tied Linear's out_features to the tied weight's rows (or bias=false); tie only a Linear and "
        "an Embedding (Linear(d, V) with Embedding(V, d)).")

SHAPE_SHARES_IGNORED = Rule("shape.shares-ignored", W, "shape", "Shared weight overrides what the node declares",
    condition="A node that `shares` another declares arguments the shared weight overrides: a module called "
              "twice with other arguments, or a tied Linear / Embedding declared with sizes other than the "
              "tied weight's.",
    why="It runs (the shared weight wins), but the declared sizes are ignored: the design does not say what "
        "runs.",
    fix="Declare the shared layer's own arguments on the sharing node (or drop them).")

SHAPE_SYMBOL_CONDITION = Rule("shape.symbol-condition", W, "shape", "Runs only under a condition on a symbolic size",
    condition="A symbolic size (B, T, ...) meets a constant or another symbol where torch needs them equal "
              "(a Linear(768) fed a width T, q @ k with T against head_dim, a residual of T and S): the design "
              "runs only for the sizes that satisfy the stated condition. When the design's declared sizes "
              "(train.batch_size, train.seq_len) violate it, or no size can satisfy it, the op's own rule "
              "blocks instead.",
    why="It runs at some sizes and crashes at the others: whoever runs it at another length or batch gets the "
        "crash.",
    fix="Make the layer independent of the symbol (e.g. project to a fixed width), or declare the size the "
        "design is meant for in train.")

SHAPE_SIZE_MEETS_WIDTH = Rule("shape.size-meets-width", W, "shape",
                              "A batch or sequence size must equal a feature width",
    condition="A batch, sequence or image size (B, T) meets a constant that torch needs it equal to, and the same "
              "operand holds that constant on another axis: a Linear(176) fed [B, 176, T] runs only when T = 176, "
              "q @ k without the transpose only when T = 64. Listed before the other warns.",
    why="A length equal to a layer's width is a coincidence no real input keeps: almost always a missing "
        "transpose or permute, and the design crashes at every other length.",
    fix="Transpose or permute the operand so that the layer reads its feature axis (x.transpose(1, 2) before a "
        "Linear over channels; k.transpose(-2, -1) in q @ k).",
    likely_defect=True)

SHAPE_MEMORY_LAYOUT = Rule("shape.memory-layout", B, "shape", "Memory layout a kernel refuses",
    condition="A Permute, Transpose or einops reorder (and the element-wise ops after it) feeds a "
              "LocalResponseNorm of 5+ dims, a MaxPool3d of an unbatched 4-D input laid out channels-last, or a "
              "PixelShuffle / PixelUnshuffle of 5 dims laid out channels-last-3d; or an op works in place on an "
              "Expand whose elements share memory (core/ops/layout.py).",
    why="torch raises 'view size is not compatible with input tensor's size and stride', 'Unsupported "
        "memory format' or 'more than one element of the written-to tensor refers to a single memory location'.",
    fix="Call .contiguous() on the permuted tensor (or reshape it), or permute the dims the kernel expects; "
        "set inplace=false after an Expand (or clone it).")

SHAPE_GLU_ODD = Rule("shape.glu-odd", B, "shape", "GLU halves an odd size",
    condition="GLU's dim has an odd size: it cannot be split into two equal halves.",
    why="torch raises 'Halving dimension must be even'.",
    fix="Make the size even (double the projection before the GLU).")

SHAPE_CHANNEL_DIVISIBILITY = Rule("shape.channel-divisibility", B, "shape",
    "Size not divisible by the factor the op splits it by",
    condition="PixelShuffle's channels not divisible by upscale_factor squared, PixelUnshuffle's height or width "
              "not divisible by downscale_factor, ChannelShuffle's channels not divisible by groups, or Fold's "
              "dim -2 not divisible by the kernel's area.",
    why="torch raises on the first forward.",
    fix="Make the size a multiple of the factor (adjust the layer before it).")

SHAPE_FOLD_BLOCKS = Rule("shape.fold-blocks", B, "shape", "Fold gets the wrong number of blocks",
    condition="Fold's last input dim differs from the number of sliding blocks its output_size, kernel, stride, "
              "padding and dilation make.",
    why="torch raises 'Given output_size ..., expected size of input's dimension 2 to match the calculated "
        "number of sliding blocks'.",
    fix="Use the same kernel, stride, padding and dilation as the Unfold that made the blocks.")

SHAPE_SINGLE_VALUE_STATISTICS = Rule("shape.single-value-statistics", B, "shape",
    "Batch statistics over a single value",
    condition="In training mode, a BatchNorm sees one value per channel (batch x spatial = 1) or an "
              "InstanceNorm one spatial value, at the sizes the design has or declares.",
    why="torch raises 'Expected more than 1 value per channel when training'.",
    fix="Train with a batch (or feature map) larger than 1, or declare train.mode = \"eval\".")

SHAPE_RNN_STATE = Rule("shape.rnn-state", B, "shape", "Initial recurrent state of the wrong shape",
    condition="The h_0 / c_0 operand of an RNN, LSTM or GRU (or h / c of a cell) does not have the shape "
              "(layers x directions, batch, hidden) the layer needs.",
    why="torch raises 'Expected hidden size ..., got ...'.",
    fix="Give the state the layer's (num_layers * directions, batch, hidden_size) shape.")

SHAPE_ATTENTION_MASK = Rule("shape.attention-mask", B, "shape", "Attention mask of the wrong shape",
    condition="An attention mask operand is not (L, S) or (batch * heads, L, S), or a key padding mask not "
              "(batch, S).",
    why="torch raises 'The shape of the 2D attn_mask is ..., but should be ...'.",
    fix="Build the mask for the query and key lengths (and the batch times heads for 3-D masks).")

DTYPE_MASK = Rule("dtype.mask", B, "dtype", "Attention mask of a dtype torch does not take",
    condition="An attention mask operand is neither bool nor float, or MultiheadAttention's float mask is not in "
              "the query's dtype.",
    why="torch takes bool and float masks only, and adds a float mask to scores of the query's dtype.",
    fix="Make the mask bool (True = masked) or float (added to the scores) in the query's dtype.")

DTYPE_MIXED = Rule("dtype.mixed", B, "dtype", "Operands of different dtypes where torch needs one",
    condition="An Einsum's operands, or a recurrent layer's input and initial state, have different dtypes.",
    why="torch's matmul kernels raise 'expected scalar type ... but found ...'.",
    fix="Cast the operands to one dtype.")

DTYPE_INDEX_DTYPE = Rule("dtype.index-dtype", B, "dtype", "Index or mask of the wrong dtype",
    condition="Gather / IndexSelect / Index / MaxUnpool indices that are not integers, a MaskedFill mask or a "
              "Where condition that is not bool, EmbeddingBag offsets that are not integers.",
    why="torch raises: indices must be long (or int), masks bool.",
    fix="Cast the index to int64 or the mask to bool.")

SHAPE_GATHER_SIZES = Rule("shape.gather-sizes", B, "shape", "Index larger than the tensor it indexes",
    condition="Gather's index is larger than its input at a dim other than `dim`, or a boolean Index mask "
              "does not match the dims it masks.",
    why="torch raises 'Size does not match at dimension'.",
    fix="Make the index no larger than the input off the gathered dim.")

SHAPE_PAD_SIZE = Rule("shape.pad-size", B, "shape", "Padding too large for its mode",
    condition="Reflect padding not smaller than the padded size, circular padding that wraps more than once, "
              "or a non-constant mode on an empty dim.",
    why="torch raises 'Padding size should be less than the corresponding input dimension'.",
    fix="Pad less, or use mode 'constant' / 'replicate'.")

SHAPE_EINSUM_SIZES = Rule("shape.einsum-sizes", B, "shape", "Einsum equation does not fit its operands",
    condition="An Einsum equation whose terms do not match the operands' ranks, a subscript with two sizes "
              "that do not broadcast, or an output subscript no input has.",
    why="torch raises 'einsum(): ...'.",
    fix="Write one subscript per dim of each operand, the same letter only for equal sizes.")

SHAPE_EINOPS_PATTERN = Rule("shape.einops-pattern", B, "shape", "einops pattern does not fit its input",
    condition="A Rearrange / Reduce / Repeat pattern whose left side does not match the input's rank, a group "
              "whose lengths do not divide its dim, axes that appear on one side only (Rearrange), or new axes "
              "without lengths (Repeat).",
    why="einops raises an EinopsError; the design cannot run.",
    fix="Write one element per input dim and give the lengths of split or new axes.")

CONNECTIVITY_INPLACE_LEAF = Rule("connectivity.inplace-leaf", B, "connectivity", "In-place op that autograd refuses",
    condition="An op with inplace=true works directly on a Parameter node (or a view of one), or on a view of "
              "one result of a Chunk or Split whose values need gradients, in training mode.",
    why="torch raises 'a leaf Variable that requires grad is being used in an in-place operation', or 'Output 0 "
        "of Split is a view and is being modified inplace'.",
    fix="Set inplace=false on that op.")

DTYPE_UNSUPPORTED = Rule("dtype.unsupported", B, "dtype", "A float dtype the op's kernels do not take",
    condition="An op is fed float64, float16 or bfloat16 data its torch kernels refuse (measured per op in "
              "core/ops/dtype_support.py): typically a layer with float32 weights fed another float dtype.",
    why="torch raises 'expected scalar type Float' / 'mat1 and mat2 must have the same dtype' / 'mixed dtype'.",
    fix="Cast the input to float32, or build the layer in the input's dtype.")

DTYPE_INT_INTO_FLOAT = Rule("dtype.int-into-float", B, "dtype", "Integer values into a float layer",
    condition="Integer tensors (e.g. token ids) reach a Linear, convolution, normalisation, attention or "
              "RNN, or another op torch defines on floats only (most activations, Softmax, Mean, dropout, "
              "adaptive pooling, upsampling).",
    why="torch's kernels raise a dtype error; integer ids need an Embedding first.",
    fix="Insert an Embedding for ids, or declare the input as float.")

DTYPE_FLOAT_INTO_EMBEDDING = Rule("dtype.float-into-embedding", B, "dtype", "Float values into an Embedding",
    condition="An Embedding receives floating-point values.",
    why="torch raises: Embedding indices must be integers.",
    fix="Feed integer token ids (int64), or use a Linear for dense features.")

CONNECTIVITY_UNKNOWN_OP = Rule("connectivity.unknown-op", B, "connectivity", "Unknown op",
    condition="A node's op is neither a torch.nn class nor a tensor op of archgraph/1.",
    why="The design cannot be built.",
    fix="Use an op of the table (README lists them), or compose it from known ops.")

CONNECTIVITY_MISSING_ARG = Rule("connectivity.missing-arg", B, "connectivity", "Missing required argument",
    condition="A node leaves out an argument its constructor requires.",
    why="The design cannot be built.",
    fix="Add the argument; the op table lists every required one.")

CONNECTIVITY_BAD_ARG = Rule("connectivity.bad-arg", B, "connectivity", "Argument the op does not take",
    condition="A node passes an argument its torch.nn constructor does not accept, or a value its op's "
              "schema refuses (wrong type, out of range, not finite, not one of the allowed strings).",
    why="torch raises TypeError or ValueError at construction or on the first forward; the design cannot be "
        "built or run.",
    fix="Use the constructor's own argument names, types and ranges (the op table's schema lists them).")

CONNECTIVITY_BAD_RESULT = Rule("connectivity.bad-result", B, "connectivity",
    "Reference to a result that does not exist",
    condition="`id:N` names a result index the node does not produce.",
    why="The design cannot be built.",
    fix="Use 0 for a single-result op; LSTM has 0..2, GRU/RNN 0..1, MultiheadAttention 0..1.")

CONNECTIVITY_DANGLING = Rule("connectivity.dangling", B, "connectivity", "Dangling reference",
    condition="A node reads an id that no input or node defines, or shares weights with no node.",
    why="The design cannot be built.",
    fix="Point `in` / `shares` at an existing id.",
    kind="structure")

CONNECTIVITY_CYCLE = Rule("connectivity.cycle", B, "connectivity", "Cycle",
    condition="Nodes feed each other in a loop.",
    why="A feed-forward graph with a cycle has no order to run in; it cannot be built.",
    fix="Break the loop; recurrence belongs inside an RNN/LSTM/GRU op.",
    kind="structure")

CONNECTIVITY_NO_OUTPUT = Rule("connectivity.no-output", B, "connectivity", "No output",
    condition="The design declares no outputs, or an output names no node.",
    why="Nothing can be trained or evaluated; the design cannot be built.",
    fix="List the final node(s) in `outputs`.",
    kind="structure")

SHAPE_UNKNOWN_DIM = Rule("shape.unknown-dim", W, "shape", "A size could not be followed",
    condition="A layer whose requirement reads a size that is unknown (null, or lost upstream).",
    why="The verifier cannot tell whether it will run; an unknown never blocks, so a crash can hide here.",
    fix="Declare the size (an int or a symbol) in the inputs, or give the op that lost it a known shape.")

"""The parser's model of torch's call surface: which call makes which op.

`names` (external names and dtypes), `modules` (nn.Module state and torch.nn
construction), `calls` (module calls in forward), `refs` (tensors as graph
references, arguments as JSON), `tensors` (tensor operations, indexing, methods),
`constants` (constant tensors), `dispatch` (torch.* and torch.nn.functional.*,
registered with `core.parse.registry`).  What an op *is* (its arguments, shapes,
parameters) is core/ops'.  The standard library's model is `core.parse.stdlib`,
einops' is `core.parse.einops_lib`.  Nothing here imports torch.
"""

from __future__ import annotations

from .. import einops_lib, stdlib  # noqa: E402,F401 - their handlers register on import
from .calls import builtin_forward, call_module, emit_module, settle_pending
from .constants import const_tensor, make_tensor
from .dispatch import call_ext, call_functional, call_torch, f_einsum
from .modules import (
    _user_method,
    all_params,
    clone_module,
    init_module_state,
    make_parameter,
    make_torch_module,
    module_add,
    module_builtin_attr,
    module_getitem,
    module_iter,
    module_setattr,
    module_setitem,
    named_modules,
    say_layer_notes,
    torch_init,
    torch_super_method,
)
from .names import canon, ext, ext_getattr, torch_class_attr
from .refs import jargs, jval, ref_of, shape_arg
from .tensors import (
    concat,
    emit_op,
    expand,
    passthrough,
    permute,
    reduce_op,
    reshape,
    tensor_binop,
    tensor_compare,
    tensor_getattr,
    tensor_getitem,
    tensor_iter,
    tensor_method,
    tensor_setitem,
    tensor_unary,
    tensor_unpack,
    transpose,
    unknown_call,
    unsqueeze,
)

__all__ = [
    "_user_method", "all_params", "builtin_forward", "call_ext", "call_functional", "call_module", "call_torch",
    "canon", "clone_module", "concat", "const_tensor", "emit_module", "emit_op", "expand", "ext", "ext_getattr",
    "f_einsum", "init_module_state", "jargs", "jval", "make_parameter", "make_tensor", "make_torch_module",
    "module_add", "module_builtin_attr", "module_getitem", "module_iter", "module_setattr", "module_setitem",
    "named_modules", "passthrough", "permute", "reduce_op", "ref_of", "reshape", "settle_pending", "shape_arg",
    "tensor_binop", "tensor_compare", "tensor_getattr", "tensor_getitem", "tensor_iter", "tensor_method",
    "tensor_setitem", "tensor_unary", "tensor_unpack", "torch_class_attr", "torch_init", "torch_super_method",
    "say_layer_notes", "transpose", "unknown_call", "unsqueeze",
]

"""archgraph/1 -> torch.nn.Module, so any design can be run for real.

torch is imported inside the functions: importing this module is cheap.
The builder refuses (BuildError) what cannot be built: unknown ops,
missing or foreign arguments, dangling references, cycles, tied weights of
different shapes, and whatever torch's own constructors reject.
"""

from __future__ import annotations

from .graph import Design, parse_ref
from .ops import OP_TABLE
from .ops.base import FACTORY_ARGS, FACTORY_WORDS, canonical_dtype
from .sizes import DEFAULT_SYMBOL_SIZE, declared_id_range, id_range, symbol_env  # noqa: F401 (asked here too)

_KEY_DOT = "\u00b7"  # ModuleDict keys may not contain '.'


#: The attribute a forward pass's exception carries: the id of the node whose module raised it.
FAILED_NODE_ATTR = "archcurator_node"


class BuildError(Exception):
    """The design cannot be built as a torch module; the message says why.

    `origin` is "torch" when one of torch's own constructors refused the arguments (the design would
    fail in torch too), "builder" when this builder refused it (unknown op, missing argument, a
    reference it cannot resolve); `node` names the node at fault, when there is one."""

    def __init__(self, message: str, origin: str = "builder", node: str | None = None):
        super().__init__(message)
        self.origin, self.node = origin, node


def module_key(node_id: str) -> str:
    """The node's key in the model's ModuleDict: '.' is not allowed there, and a name the ModuleDict
    already has as an attribute (`half`, `train`, `forward`, `keys`, ...) is refused ("attribute 'half'
    already exists"), so such an id gets a trailing mark."""
    key = node_id.replace(".", _KEY_DOT)
    if _attribute_names() and (key in _ATTRIBUTES or key.startswith("_")):
        key += _KEY_DOT
    return key


_ATTRIBUTES: set = set()


def _attribute_names() -> set:
    if not _ATTRIBUTES:
        import torch.nn as nn

        _ATTRIBUTES.update(dir(nn.ModuleDict()))
    return _ATTRIBUTES


def build_module(design: Design, device: str = "cpu", sizes: dict | None = None):
    """Build the design; `sizes` gives the symbols' sizes for ops that make tensors
    from nothing (Arange, Constant, Parameter) — by default `symbol_env(design)`."""
    import torch

    problems = design.structural_problems()
    if problems:
        raise BuildError(problems[0].message)
    sizes = symbol_env(design) if sizes is None else sizes
    with torch.device(device):
        return _graph_module_class()(design, sizes)


def _graph_module_class():
    from torch import nn

    global GraphModule
    try:
        return GraphModule
    except NameError:
        pass

    class GraphModule(nn.Module):  # noqa: F811 - defined once, lazily
        """Runs the design's nodes in topological order."""

        def __init__(self, design: Design, sizes: dict):
            super().__init__()
            self.design_name = design.name
            self.input_ids = [i.id for i in design.inputs]
            # symbols take their sizes from the inputs of each run (the same symbol is the same size
            # everywhere); ops that read a symbol (Reshape, Expand) share this dict
            self.sizes = dict(sizes)
            self.symbol_dims = [(k, j, d) for k, spec in enumerate(design.inputs) for j, d in enumerate(spec.shape)
                                if isinstance(d, str)]
            self.outputs = list(design.outputs)
            self.layers = nn.ModuleDict()
            self.plan: list[tuple[str, str, list]] = []  # (node id, module key, refs)
            nodes = design.node_map()
            order = design.topo_order()
            # modules first (as torch builds them in __init__, whatever order forward calls them in): the
            # layers of their own, then the ones that share a weight; then the plan, in forward order
            owners = [n for n in order if n.shares is None or nodes[n.shares].op != n.op]
            for node in sorted(owners, key=lambda n: n.shares is not None):
                spec = OP_TABLE.get(node.op)
                if spec is None:
                    raise BuildError(f"node {node.id!r}: unknown op {node.op!r}", node=node.id)
                args, missing, unknown = spec.resolve_args(node.args)
                if node.op == "Parameter" and any(isinstance(v, str) for v in args.get("shape") or ()):
                    # a learned tensor's size is fixed when the model is built, as verify says
                    # (connectivity.bad-arg): a symbol there would make its count depend on the run
                    raise BuildError(f"node {node.id!r}: a Parameter's shape must be ints, got {args['shape']}",
                                     node=node.id)
                if spec.arity == (0, 0):
                    args = _concrete(args, sizes)  # a source op has no input to take its sizes from
                if missing:
                    raise BuildError(f"node {node.id!r}: {node.op} is missing {', '.join(missing)}", node=node.id)
                if unknown and set(unknown) <= FACTORY_ARGS and "factory-kwargs" in spec.traits:
                    # torch.nn's constructor takes them (factory kwargs): verify's words, not "does not take"
                    raise BuildError(f"node {node.id!r}: {node.op} has argument(s) "
                                     f"{', '.join(map(repr, unknown))}: {FACTORY_WORDS}", node=node.id)
                if unknown:
                    raise BuildError(f"node {node.id!r}: {node.op} does not take {', '.join(unknown)}",
                                     node=node.id)
                mod = self._make(node, spec, args)
                if node.shares is not None:
                    if module_key(node.shares) not in self.layers:
                        raise BuildError(f"node {node.id!r} ties its weight to {node.shares!r}, which ties its own",
                                         node=node.id)
                    self._tie(node, mod, self.layers[module_key(node.shares)])
                if hasattr(mod, "sizes") and isinstance(mod.sizes, dict):
                    mod.sizes = self.sizes
                self.layers[module_key(node.id)] = mod
            for node in order:
                # a module called twice is one module: the second call's own arguments are ignored, as
                # in torch (the verifier warns which)
                owner = node.shares if node.shares is not None and nodes[node.shares].op == node.op else node.id
                if module_key(owner) not in self.layers:
                    raise BuildError(f"node {node.id!r} shares {owner!r}, which shares in turn", node=node.id)
                self.plan.append((node.id, module_key(owner), list(node.inputs)))

        @staticmethod
        def _make(node, spec, args):
            try:
                mod = spec.build(args)
            except Exception as exc:  # torch's constructors assert, raise TypeError, ValueError...
                raise BuildError(f"node {node.id!r}: torch.nn.{node.op}({_fmt(args)}) failed: "
                                 f"{type(exc).__name__}: {exc}", "torch", node.id) from exc
            par = node.extra.get("parametrize") if node.extra else None
            if par is not None:
                from torch.nn.utils import parametrizations

                fn = getattr(parametrizations, par, None) if par in ("weight_norm", "spectral_norm") else None
                if fn is None:
                    raise BuildError(f"node {node.id!r}: unknown parametrization {par!r}", "builder", node.id)
                try:
                    mod = fn(mod)
                except Exception as exc:  # torch refuses a module without the weight it parametrizes
                    raise BuildError(f"node {node.id!r}: {par}({node.op}) failed: {type(exc).__name__}: {exc}",
                                     "torch", node.id) from exc
            return mod

        @staticmethod
        def _tie(node, mod, other):
            # `head.weight = wte.weight`, as model code ties them: the shared weight wins, whatever shape
            # the tied layer was declared with (the forward then shows whether it fits)
            mine = getattr(mod, "weight", None)
            theirs = getattr(other, "weight", None)
            if not isinstance(mine, nn.Parameter) or not isinstance(theirs, nn.Parameter):
                raise BuildError(f"node {node.id!r} ties its weight to {node.shares!r}, but one of them has no "
                                 "weight parameter", "torch", node.id)
            mod.weight = theirs

        def _run(self, inputs):
            if len(inputs) != len(self.input_ids):
                raise TypeError(f"{self.design_name}: expected {len(self.input_ids)} inputs, got {len(inputs)}")
            env: dict[str, tuple] = {i: (t,) for i, t in zip(self.input_ids, inputs)}
            for k, j, sym in self.symbol_dims:
                if j < inputs[k].dim():
                    self.sizes[sym] = int(inputs[k].shape[j])
            for node_id, key, refs in self.plan:
                args = [env[r][i] for r, i in map(parse_ref, refs)]
                try:
                    out = self.layers[key](*args)
                except Exception as exc:
                    # the launcher reports which node failed (runs compare it with the findings)
                    if getattr(exc, FAILED_NODE_ATTR, None) is None:
                        try:
                            setattr(exc, FAILED_NODE_ATTR, node_id)
                        except Exception:  # noqa: BLE001 - an exception that takes no attributes
                            pass
                    raise
                env[node_id] = _flatten(out)
            return env

        def forward(self, *inputs):
            env = self._run(inputs)
            outs = tuple(env[r][i] for r, i in map(parse_ref, self.outputs))
            return outs[0] if len(outs) == 1 else outs

        def forward_all(self, *inputs) -> dict:
            """Every node's results, keyed by node id (a tuple per node)."""
            return self._run(inputs)

    return GraphModule


def _concrete(args: dict, sizes: dict) -> dict:
    """Symbols in a source op's sizes -> ints (a source op has no input to take them from)."""
    def fix(v):
        if isinstance(v, str):
            return sizes.get(v, DEFAULT_SYMBOL_SIZE)
        if isinstance(v, list):
            return [fix(x) for x in v]
        return v

    return {k: (fix(v) if k in ("shape", "end") else v) for k, v in args.items()}


def _flatten(out) -> tuple:
    if isinstance(out, (tuple, list)):
        flat = []
        for o in out:
            flat.extend(_flatten(o))
        return tuple(flat)
    return (out,)


def _fmt(args: dict) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in args.items())


def example_inputs(design: Design, batch: int = 2, device: str = "cpu", env: dict | None = None, seed: int = 0):
    """Random inputs of the declared shapes and dtypes.

    Integer inputs draw ids below the declared vocab_size (else the first
    Embedding's size) and always include the largest id, so an index beyond
    a table shows up in one small forward.
    """
    import torch

    sizes = symbol_env(design, batch, env)
    gen = torch.Generator().manual_seed(seed)
    out = []
    for spec in design.inputs:
        shape = [d if isinstance(d, int) else sizes.get(d, DEFAULT_SYMBOL_SIZE) if isinstance(d, str)
                 else DEFAULT_SYMBOL_SIZE for d in spec.shape]
        dtype = getattr(torch, canonical_dtype(spec.dtype), None)
        if dtype is None:
            raise BuildError(f"input {spec.id!r}: unknown dtype {spec.dtype!r}")
        if dtype.is_floating_point:
            t = torch.randn(shape, generator=gen, dtype=dtype)
        elif dtype == torch.bool:
            t = torch.randint(0, 2, shape, generator=gen).bool()
        else:
            vocab = id_range(design, spec.id)
            t = torch.randint(0, max(1, vocab), shape, generator=gen, dtype=dtype)
            if t.numel():
                t.view(-1)[-1] = max(0, vocab - 1)
        out.append(t.to(device))
    return out



"""archgraph/1 -> torch.nn.Module, so any design can be run for real.

torch is imported inside the functions: importing this module is cheap.
The builder refuses (BuildError) what cannot be built: unknown ops,
missing or foreign arguments, dangling references, cycles, tied weights of
different shapes, and whatever torch's own constructors reject.
"""

from __future__ import annotations

from .graph import Design, parse_ref
from .ops import OP_TABLE

_KEY_DOT = "\u00b7"  # ModuleDict keys may not contain '.'


#: The attribute a forward pass's exception carries: the id of the node whose module raised it.
FAILED_NODE_ATTR = "archcurator_node"


class BuildError(Exception):
    """The design cannot be built as a torch module; the message says why."""


def module_key(node_id: str) -> str:
    return node_id.replace(".", _KEY_DOT)


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
            self.outputs = list(design.outputs)
            self.layers = nn.ModuleDict()
            self.plan: list[tuple[str, str, list]] = []  # (node id, module key, refs)
            nodes = design.node_map()
            for node in design.topo_order():
                spec = OP_TABLE.get(node.op)
                if spec is None:
                    raise BuildError(f"node {node.id!r}: unknown op {node.op!r}")
                args, missing, unknown = spec.resolve_args(node.args)
                if spec.arity == (0, 0) or node.op == "Expand":
                    # Expand's target is not read off its input: a symbol there (the batch of a
                    # class token expanded over the batch) needs its size too
                    args = _concrete(args, sizes)
                if missing:
                    raise BuildError(f"node {node.id!r}: {node.op} is missing {', '.join(missing)}")
                if unknown:
                    raise BuildError(f"node {node.id!r}: {node.op} does not take {', '.join(unknown)}")
                key = module_key(node.id)
                if node.shares is not None:
                    other = nodes[node.shares]
                    okey = module_key(other.id)
                    if okey not in self.layers:
                        raise BuildError(f"node {node.id!r} shares {other.id!r}, which is built later")
                    if other.op == node.op:
                        if node.args != other.args and spec.resolve_args(other.args)[0] != args:
                            raise BuildError(f"node {node.id!r} shares {other.id!r} with different arguments")
                        self.plan.append((node.id, okey, list(node.inputs)))
                        continue
                    mod = self._make(node, spec, args)
                    self._tie(node, mod, self.layers[okey])
                else:
                    mod = self._make(node, spec, args)
                self.layers[key] = mod
                self.plan.append((node.id, key, list(node.inputs)))

        @staticmethod
        def _make(node, spec, args):
            try:
                return spec.build(args)
            except Exception as exc:  # torch's constructors assert, raise TypeError, ValueError...
                raise BuildError(f"node {node.id!r}: torch.nn.{node.op}({_fmt(args)}) failed: "
                                 f"{type(exc).__name__}: {exc}") from exc

        @staticmethod
        def _tie(node, mod, other):
            mine = getattr(mod, "weight", None)
            theirs = getattr(other, "weight", None)
            if mine is None or theirs is None or tuple(mine.shape) != tuple(theirs.shape):
                raise BuildError(
                    f"node {node.id!r} ties its weight to {node.shares!r}, but the shapes "
                    f"{None if mine is None else tuple(mine.shape)} and "
                    f"{None if theirs is None else tuple(theirs.shape)} differ")
            mod.weight = theirs

        def _run(self, inputs):
            if len(inputs) != len(self.input_ids):
                raise TypeError(f"{self.design_name}: expected {len(self.input_ids)} inputs, got {len(inputs)}")
            env: dict[str, tuple] = {i: (t,) for i, t in zip(self.input_ids, inputs)}
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


DEFAULT_SYMBOL_SIZE = 8


def symbol_env(design: Design, batch: int = 2, env: dict | None = None) -> dict:
    """Sizes for the design's symbols: the batch symbol(s) take `batch`, seq_len where declared."""
    out: dict = {}
    train = design.train or {}
    for spec in design.inputs:
        for i, d in enumerate(spec.shape):
            if isinstance(d, str) and d not in out:
                if i == 0:
                    out[d] = batch
                elif train.get("seq_len") and i == 1:
                    out[d] = int(train["seq_len"])
                else:
                    out[d] = DEFAULT_SYMBOL_SIZE
    out.update(env or {})
    return out


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
        dtype = getattr(torch, _TORCH_DTYPES.get(spec.dtype, spec.dtype), None)
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


_TORCH_DTYPES = {"float": "float32", "long": "int64", "int": "int32"}


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

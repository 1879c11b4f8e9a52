"""The op table's traits: every consumer asks the table, none keeps a list of op names (NNSmith's layout).

The scan fails on a new literal collection of op-table names outside core/ops (a set, tuple, list or the
keys of a dict naming two or more ops), and on a family kept by name pattern (`op.startswith("Conv")`,
`"MaxPool" in node.op`); the grounding kinds' choice of which ops to mutate is asked of the table too.
The traits that say what torch does are measured against torch.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from archcurator.core.ops import (
    OP_TABLE,
    by_einops_reduction,
    by_functional,
    by_operator,
    by_tensor_method,
    by_torch_function,
    has,
    ops_of,
    ops_with,
    spellings,
)
from archcurator.core.ops.examples import EXAMPLES
from archcurator.core.ops.traits import TRAITS

ROOT = Path(__file__).resolve().parents[1]
# the application's code; bench/ holds generators that stay blind to the table on purpose (they test it)
SCANNED = ("core", "tui", "store")
OPS_ROOM = ROOT / "core" / "ops"


def _project_files():
    for room in SCANNED:
        for p in sorted((ROOT / room).rglob("*.py")):
            if OPS_ROOM not in p.parents:
                yield p


def _names_in(e) -> list[str]:
    """The op names an element spells: a string, or one level down, the strings of a tuple or list it is (a
    dict's value `("ReLU", ["dim"])`, a record `("encoder", "TransformerEncoder")`)."""
    if isinstance(e, (ast.Tuple, ast.List)):
        return [n for x in e.elts if isinstance(x, ast.Constant) for n in _names_in(x)]
    return [e.value] if isinstance(e, ast.Constant) and isinstance(e.value, str) and e.value in OP_TABLE else []


def _op_names(node) -> list[str]:
    """The op names a literal collection holds: its elements, or a dict's keys and values (a table of torch
    spellings to ops is a hand-kept list of ops as much as a set of them is)."""
    elts = [k for k in node.keys if k is not None] + node.values if isinstance(node, ast.Dict) else node.elts
    return [n for e in elts for n in _names_in(e)]


def _mentions_op(node) -> bool:
    """Whether an expression reads an op name (`node.op`, `n["op"]`, a variable called op / name)."""
    text = ast.unparse(node)
    return "op" in text.replace("ops", "") or text in ("name", "tb")


def _prefix_of_ops(s: str) -> bool:
    return len(s) >= 3 and s[0].isupper() and any(name != s and (name.startswith(s) or name.endswith(s))
                                                  for name in OP_TABLE)


def hand_kept_op_lists(source: str, path: str = "<string>") -> list[str]:
    """Where `source` keeps op names by hand: 'path:line: what'."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Set, ast.Tuple, ast.List, ast.Dict)):
            names = _op_names(node)
            if len(names) >= 2:
                out.append(f"{path}:{node.lineno}: a collection of op names {names[:4]}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                node.func.attr in ("startswith", "endswith") and _mentions_op(node.func.value):
            args = node.args[0].elts if node.args and isinstance(node.args[0], ast.Tuple) else node.args
            pats = [a.value for a in args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            if any(_prefix_of_ops(p) for p in pats):
                out.append(f"{path}:{node.lineno}: a family of ops kept by name pattern {pats}")
        elif isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.In, ast.NotIn)) \
                and isinstance(node.left, ast.Constant) and isinstance(node.left.value, str) and \
                _prefix_of_ops(node.left.value) and _mentions_op(node.comparators[0]):
            out.append(f"{path}:{node.lineno}: a family of ops kept by name pattern {node.left.value!r}")
    return out


def test_no_hand_kept_op_collection_outside_the_table():
    found = []
    for p in _project_files():
        found += hand_kept_op_lists(p.read_text(encoding="utf-8"), str(p.relative_to(ROOT)))
    assert not found, "ask the op table (core/ops: ops_with / has / an OpSpec field) instead:\n" + "\n".join(found)


@pytest.mark.parametrize("source", [
    'VIEWS = {"Reshape", "Flatten"}',
    'if node.op in ("Linear", "Conv2d"):\n    pass',
    'SIZES = {"Embedding": 0, "Linear": 1}',
    'if p.op.startswith("Dropout"):\n    pass',
    'if n["op"].startswith(("Conv", "BatchNorm")):\n    pass',
    'if "MaxPool" in node.op:\n    pass',
    # a table of spellings whose values are ops: the parser's old _REDUCE_OPS, _F_ACT, Transformer parts
    '_REDUCE = {"mean": "Mean", "sum": "Sum"}',
    '_ACT = {"relu": ("ReLU", []), "gelu": ("GELU", ["approximate"])}',
    'name = {ast.Add: "Add", ast.Sub: "Sub"}.get(op)',
    'PARTS = (("encoder", "TransformerEncoder", "n"), ("decoder", "TransformerDecoder", "m"))',
])
def test_the_scan_fails_on_each_way_of_keeping_a_list(source):
    assert hand_kept_op_lists(source)


@pytest.mark.parametrize("source", [
    'if node.op == "Linear":\n    pass',
    'DTYPES = ("float32", "int64")',
    'if path.endswith(".json"):\n    pass',
    'OPS = {"relu": "ReLU"}',
    'SYMBOLS = {ast.Add: "+", ast.Sub: "-"}',
])
def test_the_scan_lets_one_op_and_other_strings_be(source):
    assert not hand_kept_op_lists(source)


def test_every_trait_is_declared_by_some_op_and_every_op_trait_is_known():
    used = set().union(*(spec.traits for spec in OP_TABLE.values()))
    assert used <= TRAITS.keys()
    assert TRAITS.keys() <= used, f"traits no op declares: {sorted(TRAITS.keys() - used)}"


def test_a_misspelt_trait_or_family_fails_where_it_is_asked():
    with pytest.raises(KeyError):
        ops_with("veiw")
    with pytest.raises(KeyError):
        has("Reshape", "veiw")
    with pytest.raises(KeyError):
        ops_of("convs")
    from archcurator.core.ops.base import OpSpec

    with pytest.raises(ValueError, match="unknown trait"):
        OpSpec("X", "tensor", (), lambda ctx: [], lambda a: None, traits=("veiw",))


def test_queries_answer_from_the_entries():
    assert ops_with("dropout") == {"Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout",
                                   "FeatureAlphaDropout"}
    assert ops_with("view", family="activation") == {"Identity"}
    assert has("Reshape", "view-if-contiguous") and not has("Reshape", "view") and not has("NoSuchOp", "view")
    assert ops_of("conv") == {f"Conv{n}d" for n in (1, 2, 3)} | {f"ConvTranspose{n}d" for n in (1, 2, 3)}
    assert OP_TABLE["Index"].positions == 1 and OP_TABLE["Embedding"].positions == 0


def test_the_parser_asks_the_table_for_torch_spellings():
    assert by_functional("relu_").name == "ReLU" and by_functional("max_pool2d_with_indices").name == "MaxPool2d"
    assert by_functional("gelu").functional_args == ("approximate",)
    assert by_functional("max_pool2d").functional_args is None  # lines up with the constructor
    assert by_functional("prelu") is None and by_functional("linear") is None  # read by their own code
    assert by_torch_function("selu") == "SELU" and by_tensor_method("tanh_") == "Tanh"
    assert by_tensor_method("selu") is None
    assert [by_einops_reduction(r) for r in ("mean", "sum", "max", "min", "prod")] == ["Mean", "Sum", "Amax", "Amin",
                                                                                      None]
    assert [by_operator(s) for s in "+-*/@"] == ["Add", "Sub", "Mul", "Div", None]


def test_a_spelling_two_ops_claim_fails_when_the_table_is_built():
    from archcurator.core.ops.base import OpSpec

    a = OpSpec("A", "tensor", (), lambda ctx: [], lambda a: None, functional=("relu",))
    b = OpSpec("B", "tensor", (), lambda ctx: [], lambda a: None, functional=("relu",))
    with pytest.raises(RuntimeError, match="'relu' names both A and B"):
        spellings([a, b], "functional")


# ---- the traits that say what torch does, measured -----------------------------------------------------------


def _run(op: str, train: bool, **over):
    import torch

    from archcurator.core.build import _flatten

    operands, args = EXAMPLES[op]
    spec = OP_TABLE[op]
    mod = spec.build(spec.resolve_args({**args, **over})[0])
    mod.train(train)
    torch.manual_seed(0)
    xs = [(torch.randn(s) if d.startswith("float") else torch.randint(0, 5, s)) for s, d in operands]
    return xs, _flatten(mod(*xs))


@pytest.mark.parametrize("op", sorted(ops_with("view")))
def test_a_view_op_gives_a_view_of_its_operand(op):
    xs, out = _run(op, train=False)
    x = xs[0]
    assert out[0].untyped_storage().data_ptr() == x.untyped_storage().data_ptr(), f"{op} copied"


@pytest.mark.parametrize("op", sorted(ops_with("dropout")))
def test_a_dropout_is_the_identity_in_eval_and_random_in_training(op):
    import torch

    xs, out = _run(op, train=False, p=0.5)
    assert torch.equal(out[0], xs[0])
    xs, out = _run(op, train=True, p=0.5)
    assert not torch.equal(out[0], xs[0])


@pytest.mark.parametrize("op", sorted(ops_with("non-negative")))
def test_a_non_negative_op_gives_no_negative_value(op):
    _, out = _run(op, train=False)
    assert float(out[0].min()) >= 0


@pytest.mark.parametrize("op", sorted(ops_with("moves-values") - ops_with("picks-values")))
def test_an_op_that_moves_values_keeps_the_multiset_of_them(op):
    """Each result value is one of the operand's (an id range passes through)."""
    import torch

    xs, out = _run(op, train=False)
    have = set(torch.unique(xs[0]).tolist())
    assert set(torch.unique(out[0]).tolist()) <= have


def _default_module(op: str):
    spec = OP_TABLE[op]
    mod = spec.build(spec.resolve_args({})[0])
    mod.eval()
    return mod


@pytest.mark.parametrize("op", sorted(name for name, s in OP_TABLE.items() if s.functional_args is not None))
def test_an_activation_functional_computes_its_module_with_the_args_it_names(op):
    """F.<spelling>(x, **the functional_args) gives what the module gives: the spelling and the names are torch's."""
    import torch
    import torch.nn.functional as F

    spec = OP_TABLE[op]
    xs, out = _run(op, train=False)
    args = spec.resolve_args(EXAMPLES[op][1])[0]
    for word in spec.functional:
        got = getattr(F, word)(xs[0].clone(), **{k: args[k] for k in spec.functional_args})
        assert torch.equal(got, out[0]), f"F.{word}"


@pytest.mark.parametrize("op", sorted(name for name, s in OP_TABLE.items() if s.torch_functions or s.tensor_methods))
def test_a_torch_function_or_method_spelling_computes_its_module_with_defaults(op):
    import torch

    spec = OP_TABLE[op]
    x = torch.randn(2, 3, 4)
    want = _default_module(op)(x.clone())
    for word in spec.torch_functions:
        assert torch.equal(getattr(torch, word)(x.clone()), want), f"torch.{word}"
    for word in spec.tensor_methods:
        assert torch.equal(getattr(x.clone(), word)(), want), f".{word}()"


@pytest.mark.parametrize("op", sorted(name for name, s in OP_TABLE.items() if s.functional
                                      and s.functional_args is None))
def test_a_module_like_functional_is_torchs(op):
    import torch.nn.functional as F

    for word in OP_TABLE[op].functional:
        assert callable(getattr(F, word, None)), f"F.{word}"


def _float_inputs(operands):
    import torch

    out = []
    for shape, dtype in operands:
        sizes = [s if isinstance(s, int) else 2 for s in shape]
        out.append(torch.randint(0, 3, sizes) if "int" in dtype else
                   torch.ones(sizes, dtype=torch.bool) if dtype == "bool" else torch.randn(sizes))
    return out


# layers whose torch constructor takes a dtype for their weights and whose first operand is floating values (an
# embedding looks up integer ids: no floating dtype of its input can differ from its weights')
WEIGHTED_LAYERS = sorted(op for op, spec in OP_TABLE.items() if "factory-kwargs" in spec.traits and
                         EXAMPLES[op][0] and EXAMPLES[op][0][0][1].startswith(("float", "bfloat")))


@pytest.mark.parametrize("op", WEIGHTED_LAYERS)
def test_weights_any_float_is_what_torch_does_with_float16_weights_and_float32_values(op):
    """The parser says torch raises where a layer the source cast to float16 meets float32 values, unless the op
    is weights-any-float: each layer of the table with floating weights, run in torch both ways."""
    import torch
    from test_ops import _design

    from archcurator.core.build import build_module

    operands, args = EXAMPLES[op]
    spec = OP_TABLE[op]
    if "affine" in spec.traits:  # the examples leave some norms without weights
        args = {**args, **{k: True for k in ("affine", "elementwise_affine") if any(a.name == k for a in spec.args)}}
    model = build_module(_design(op, operands, args), "cpu").eval()
    if not any(p.is_floating_point() for p in model.parameters()):
        pytest.skip(f"{op} holds no floating weights with these args")
    xs = _float_inputs(operands)
    with torch.no_grad():
        model(*xs)  # float32 weights: it runs
        try:
            model.half()(*xs)
            mixed_runs = True
        except (RuntimeError, ValueError):
            mixed_runs = False
    assert mixed_runs is ("weights-any-float" in spec.traits)

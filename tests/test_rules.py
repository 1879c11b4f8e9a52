"""Rules are typed objects declared once and referenced by name (Ruff's layout).

Each rule id is spelled once in the project's code: as the first argument of its `Rule(...)` declaration.
Everywhere else the rule is imported by name, so a misspelt rule fails at import.
"""

from __future__ import annotations

import ast
import importlib
import pickle
from pathlib import Path

import pytest

from archcurator.core.checks import CATALOGUE, GRAPH_CHECKS, NODE_CHECKS
from archcurator.core.rule import RULES, Rule

ROOT = Path(__file__).resolve().parents[1]
ROOMS = ("core", "tui", "store", "bench")


def _project_files():
    for room in ROOMS:
        for p in sorted((ROOT / room).rglob("*.py")):
            if "corpus" not in p.parts:
                yield p


def literal_rule_ids(source: str, ids, path: str = "<string>") -> list[str]:
    """Where `source` spells a rule id as a string, apart from the rule's own declaration."""
    tree = ast.parse(source)
    declared = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Rule" and node.args:
            declared.add(id(node.args[0]))
    return [f"{path}:{node.lineno}: {node.value!r}" for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in ids
            and id(node) not in declared]


def test_each_rule_id_is_spelled_once_where_it_is_declared():
    found, declarations = [], 0
    for p in _project_files():
        text = p.read_text(encoding="utf-8")
        found += literal_rule_ids(text, RULES, str(p.relative_to(ROOT)))
        declarations += sum(1 for n in ast.walk(ast.parse(text)) if isinstance(n, ast.Call)
                            and isinstance(n.func, ast.Name) and n.func.id == "Rule" and n.args
                            and isinstance(n.args[0], ast.Constant) and n.args[0].value in RULES)
    assert not found, "import the rule by name instead of spelling its id:\n" + "\n".join(found)
    assert declarations == len(RULES) == len(CATALOGUE)


def test_the_scan_finds_a_spelt_id_and_lets_the_declaration_be():
    src = 'R = Rule("shape.rank", "block", "shape", "t", condition="", why="", fix="")\nctx.require(c, "shape.rank", m)'
    assert literal_rule_ids(src, {"shape.rank"}) == ["<string>:2: 'shape.rank'"]


def test_a_misspelt_rule_fails_at_import():
    with pytest.raises(ImportError):
        exec("from archcurator.core.ops.rules import SHAPE_RANKK", {})
    with pytest.raises(ImportError):
        exec("from archcurator.core.checks.numerics import NUMERICS_DOUBLE_ACTIVATOIN", {})


def test_a_rule_is_declared_once_with_a_known_severity_and_category():
    with pytest.raises(RuntimeError, match="twice"):
        Rule("shape.rank", "block", "shape", "again", condition="", why="", fix="")
    with pytest.raises(RuntimeError, match="category"):
        Rule("shape.not-a-rule", "block", "numerics", "t", condition="", why="", fix="")
    assert "shape.not-a-rule" not in RULES


def test_a_check_function_sits_beside_its_rule():
    """A node or graph check is declared in the module of its function (or, when the op table raises it
    too, in core/ops/rules.py beside the ops)."""
    for rule, fn in [pair for pairs in NODE_CHECKS.values() for pair in pairs] + GRAPH_CHECKS:
        assert rule.module in (fn.__module__, "archcurator.core.ops.rules"), (rule, rule.module, fn.__module__)
    for rule in RULES.values():
        assert importlib.import_module(rule.module)
        if rule.kind in ("requirement", "structure"):
            assert rule.module == "archcurator.core.ops.rules", rule


def test_a_rule_is_its_id_in_findings_json_and_across_processes():
    import json

    from archcurator.core.ops.base import Violation
    from archcurator.core.ops.rules import SHAPE_RANK
    from archcurator.core.report import Finding

    assert SHAPE_RANK == "shape.rank" and SHAPE_RANK.severity == "block" and SHAPE_RANK.id == "shape.rank"
    assert type(Violation(SHAPE_RANK, "m", []).rule) is str
    assert type(Finding(SHAPE_RANK, "block", (), "m").rule) is str
    assert json.dumps({SHAPE_RANK: [SHAPE_RANK]}) == '{"shape.rank": ["shape.rank"]}'
    assert pickle.loads(pickle.dumps(SHAPE_RANK)) is SHAPE_RANK

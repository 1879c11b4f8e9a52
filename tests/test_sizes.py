"""The design's declared sizes live in one place (core/sizes.py), and neither the op table, the inference
walk, the checks nor the cost import the torch builder (not even inside a function, where an import hides a
cycle)."""

from __future__ import annotations

import ast
from pathlib import Path

from archcurator.core.graph import Design
from archcurator.core.sizes import declared_id_range, declared_sizes, quote_env, symbol_env

CORE = Path(__file__).resolve().parents[1] / "core"
NO_BUILDER = sorted((CORE / "ops").glob("*.py")) + sorted((CORE / "checks").glob("*.py")) + \
    [CORE / "shapes.py", CORE / "dims.py", CORE / "cost.py", CORE / "verify.py", CORE / "sizes.py"]


def _imports(path: Path) -> set:
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            out.add("." * node.level + (node.module or ""))
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return out


def test_no_import_of_the_torch_builder_from_the_table_the_walk_the_checks_or_the_cost():
    bad = [(str(p.relative_to(CORE)), m) for p in NO_BUILDER for m in _imports(p)
           if m.split(".")[-1] == "build" or m.endswith("core.build")]
    assert not bad, bad


def test_the_declared_sizes_are_defined_once():
    names = {"declared_sizes", "symbol_env", "declared_id_range", "id_range", "quote_env"}
    where = [(str(p.relative_to(CORE)), n.name) for p in CORE.rglob("*.py")
             for n in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
             if isinstance(n, ast.FunctionDef) and n.name in names]
    assert sorted(where) == sorted(("sizes.py", n) for n in names)


def test_declared_sizes_read_the_train_block():
    d = Design.from_dict({"format": "archgraph/1", "name": "s",
                          "inputs": [{"id": "ids", "shape": ["B", "T"], "dtype": "int64"},
                                     {"id": "img", "shape": ["B", 3, "H", "W"], "dtype": "float32"}],
                          "nodes": [{"id": "e", "op": "Embedding", "args": {"num_embeddings": 50, "embedding_dim": 4},
                                     "in": ["ids"]}],
                          "outputs": ["e"], "train": {"batch_size": 16, "seq_len": 12, "vocab_size": 40}})
    assert declared_sizes(d) == {"B": 16, "T": 12}
    assert symbol_env(d, batch=2) == {"B": 2, "T": 12, "H": 8, "W": 8}
    assert declared_id_range(d, "ids") == 40 and declared_id_range(d, "img") is None
    env, notes = quote_env(d, 1)
    assert env == {"B": 1, "T": 12, "H": 8, "W": 8} and len(notes) == 2

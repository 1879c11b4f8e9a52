"""The check catalogue: every check, its words beside its code.

Importing this package registers them all; `CATALOGUE` maps id -> CheckSpec.
`catalogue_document()` is what `assets/checks.json` holds (a test keeps the
shipped file equal to it; `python -m archcurator.core.checks` rewrites it).
"""

from __future__ import annotations

from ..ops import OP_TABLE
from ..ops.rules import DTYPE_INT_INTO_FLOAT, DTYPE_UNSUPPORTED
from . import connectivity, efficiency, numerics, shape  # noqa: F401  (registration)
from .base import CATALOGUE, GRAPH_CHECKS, NODE_CHECKS, CheckCtx, CheckSpec


def _ops_raising(rule_id: str) -> list[str]:
    from ..ops.base import FLOAT_DTYPES
    from ..ops.dtype_support import DTYPES, MODES, SUPPORT

    ops = {name for name, spec in OP_TABLE.items() if rule_id in spec.rules}
    # the measured dtype table raises these two for every op whose kernels refuse some dtype
    by_rule: dict[str, tuple[str, ...]] = {
        DTYPE_UNSUPPORTED: tuple(d for d in DTYPES if d in FLOAT_DTYPES and d != "float32"),
        DTYPE_INT_INTO_FLOAT: tuple(d for d in DTYPES if d not in FLOAT_DTYPES)}
    cols = by_rule.get(rule_id, ())
    for name, row in SUPPORT.items():
        if any(row[DTYPES.index(d) * len(MODES) + m] == "X" for d in cols for m in range(len(MODES))):
            ops.add(name)
    return sorted(ops)


def catalogue_document(grounding: dict | None = None) -> dict:
    grounding = grounding or {}
    checks = []
    for cid in sorted(CATALOGUE):
        spec = CATALOGUE[cid]
        d = spec.to_dict(grounding.get(cid, ()))
        if spec.kind == "requirement":
            d["ops"] = _ops_raising(cid)
        checks.append(d)
    return {"format": "archcurator-checks/1", "generated_by": "python -m archcurator.core.checks", "count": len(checks),
            "checks": checks}


__all__ = ["CATALOGUE", "NODE_CHECKS", "GRAPH_CHECKS", "CheckCtx", "CheckSpec", "catalogue_document"]

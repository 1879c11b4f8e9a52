"""`python -m archcurator.core.checks [--check] [--out PATH]`: write the published catalogue, assets/checks.json.

The file is `catalogue_document(grounding)`: every check's words from the code,
and for each block rule the grounding cases that back it — the corrupted zoo
graphs of the grounding study (core.ground.kinds) that claim block and whose
verification fires the rule, smallest graph first. It is computed statically;
`archcurator ground` runs them all in torch, and tests/checks run the first
ones of every rule.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..assets import asset_path


def document() -> dict:
    from ..ground import grounding_map
    from . import catalogue_document

    return catalogue_document(grounding_map())


def dumps(doc: dict) -> str:
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m archcurator.core.checks", description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=asset_path("checks.json"))
    ap.add_argument("--check", action="store_true", help="write nothing; exit 1 when the file differs")
    args = ap.parse_args(argv)
    text = dumps(document())
    old = args.out.read_text(encoding="utf-8") if args.out.exists() else None
    if args.check:
        if old != text:
            print(f"{args.out} is stale: run python -m archcurator.core.checks", file=sys.stderr)
            return 1
        return 0
    if old != text:
        args.out.write_text(text, encoding="utf-8")
    doc = json.loads(text)
    grounded = sum(1 for c in doc["checks"] if c["grounding"])
    print(f"{doc['count']} checks in {args.out} ({grounded} block rules grounded)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Past the warnings the parser keeps (bounded memory), the rest are counted, and every answer says the total:
20,000 float16 layers said "2000 thing(s) not followed" as if it were all of them (an outside tester's find)."""

from __future__ import annotations

import json

from archcurator.core.graph import Design
from archcurator.core.parse import parse_source
from archcurator.core.parse.interp import MAX_WARNINGS
from archcurator.core.verify import verify_graph
from archcurator.tui.cli import main

N = MAX_WARNINGS + 50


def _source(tmp_path):
    body = "\n".join(f"        self.l{i} = nn.Linear(4, 4, dtype=torch.float16)" for i in range(N))
    src = tmp_path / "many.py"
    src.write_text("import torch\nfrom torch import nn\n\n\nclass M(nn.Module):\n    def __init__(self):\n"
                   f"        super().__init__()\n{body}\n\n    def forward(self, x):\n        return self.l0(x)\n")
    return src


def test_warnings_past_the_cap_are_counted_and_said(tmp_path, capsys):
    src = _source(tmp_path)
    design = parse_source(src, "M", {}, [([2, 4], "float32")]).design
    kept, not_kept = len(design["meta"]["parser_warnings"]), design["meta"]["parser_warnings_not_kept"]
    # each layer: its dtype note; each but l0: never reached by forward; l0: fed float32 values (torch raises)
    assert kept == MAX_WARNINGS and kept + not_kept == 2 * N
    (msg,) = [f.message for f in verify_graph(Design.from_json(json.dumps(design))).findings
              if f.rule == "parse.unfollowed"]
    assert msg.startswith(f"{2 * N} constructs") and msg.endswith(f"(meta.parser_warnings keeps {MAX_WARNINGS})")
    assert main(["parse", str(src), "--entry", "M", "--input", "2,4"]) == 0
    assert f"{2 * N} thing(s) not followed ({MAX_WARNINGS} kept in meta.parser_warnings)" in capsys.readouterr().out

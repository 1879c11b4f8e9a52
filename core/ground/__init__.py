"""The grounding room: the verifier's verdicts against real torch runs.

- `edit`: `G`, the graph edit helper corruptions and mutations share;
- `kinds/`: the corruption kinds, grouped like `core/checks/` (each declared
  with `@kind(...)` on its sites function), and the deterministic study set;
- `mutate`: random mutations of zoo graphs that know nothing of the kinds or
  the checks (the study's out-of-distribution arm);
- `generate`: the differential generator, NNSmith-style: random designs
  drawn from the op table alone, to be run in torch and compared with the
  verdict;
- `study`: verify every case here while `child` runs them all in torch in
  one child process; `summarize` gives the confusion matrix.
"""

from __future__ import annotations

from .kinds import KINDS, Kind, clean_set, corrupt, corruption_set, ground_set, load_zoo
from .mutate import mutation_set
from .study import DEFAULT_TIMEOUT, CaseResult, grounding_map, observe_all, run_study, summarize, verify_case

__all__ = ["mutation_set", "KINDS", "Kind", "clean_set", "corrupt", "corruption_set", "ground_set", "load_zoo",
           "CaseResult",
           "DEFAULT_TIMEOUT", "grounding_map", "observe_all", "run_study", "summarize", "verify_case"]

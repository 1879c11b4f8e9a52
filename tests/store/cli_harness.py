"""`archcurator` for subprocess tests: the real CLI; ARCHCURATOR_TEST_VERIFIER=fake swaps in
the fake verifier (in-process verification only)."""

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE)]

if os.environ.get("ARCHCURATOR_TEST_VERIFIER") == "fake":
    import fake_verifier

    import archcurator.core.imports.verified

    archcurator.core.imports.verified.default_verifier = lambda: fake_verifier.verify

from archcurator.tui.cli import main  # noqa: E402

sys.exit(main())

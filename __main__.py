"""`python -m archcurator`: the same as the `archcurator` command."""

import sys

from .tui.cli import main

if __name__ == "__main__":
    sys.exit(main())

"""The app's screens: queue, design, diff, reports, help, and small dialogs.

Screens for other rooms plug in by module: `tui/screens/runs.py` defining
`RunsScreen` (issue 7) and `tui/screens/kb.py` defining `KnowledgeBaseScreen`
(issue 8). The app opens them from the command palette (`Runs`,
`Knowledge base`) when the module is present; `RunsScreen.launch(app,
design_id)`, when defined, is what the design screen's run key calls.
"""

from __future__ import annotations

import importlib

OPTIONAL_SCREENS = {
    "runs": ("tui.screens.runs", "RunsScreen"),
    "kb": ("tui.screens.kb", "KnowledgeBaseScreen"),
}


def load_optional_screen(name: str):
    """The screen class for `name`, or None when this build does not ship it."""
    module_name, class_name = OPTIONAL_SCREENS[name]
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name == module_name:
            return None
        raise
    return getattr(module, class_name, None)

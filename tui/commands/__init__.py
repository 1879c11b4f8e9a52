"""Subcommands of `archcurator`; each module has register(subparsers) and run(args) -> int.

None of them imports textual or torch at module level.
"""

COMMAND_MODULES = [
    "verify_cmd",
    "parse_cmd",
    "import_cmd",
    "run_cmd",
    "report_cmd",
    "export_cmd",
    "archive_cmd",
    "demote_cmd",
    "ground_cmd",
    "kb_cmd",
    "catalogue_cmd",
    "repair_cmd",
]

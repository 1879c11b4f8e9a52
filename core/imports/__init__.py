"""Importing designs: archgraph files, folders of them, JSONL batches (SPEC §2), `.py` sources.

A pure room: it reads, checks, parses and verifies, and hands each batch's
rows to a sink (`ImportSink`: the ids already kept, and one write per
batch). The store is one such sink (`store.importers`); nothing here opens
a database.

1. **Plan** (`inputs.plan`, nothing written): every named path is checked. A path that
   cannot be read at all (missing, unreadable, not UTF-8, a named `.json`
   that is not a design, an unsupported kind) raises `ImportInputError`
   with one line naming the file: the command exits 2 and the store is
   untouched.
2. **Batches** (`pipeline.import_batches`): each JSONL file is one batch, the loose design
   files named on the command line are one batch, each folder's design files are one
   batch. Each line / file is checked at the door (`records`: hostile text, fields), parsed
   and verified (`rows`, `verified`) outside the store, in a spawn pool of 2 processes
   that die with the import for big batches (`pool`); then the batch is handed to the
   sink in one call. A line whose id is kept adds nothing (skipped); a bad line is
   rejected with its file and line number while the rest import.

Ids: a batch line's `id`; a design file's `name`, else its file stem; a
parsed `.py` design's name, else its entry. Authors: a batch line's
`author`; design files default to `human` (`--author` to change it). A
batch line without `author` is rejected unless `--author` is given.
"""

from .inputs import Batch, Item, plan
from .pipeline import ImportSink, Written, import_batches, import_paths, import_records
from .records import Refused, loads_with_span, plain_text_problem
from .types import BatchSummary, Defaults, ImportInputError, ImportResult, PyOptions, Rejection

__all__ = [
    "Batch", "BatchSummary", "Defaults", "ImportInputError", "ImportResult", "ImportSink", "Item",
    "PyOptions", "Refused", "Rejection", "Written", "import_batches", "import_paths", "import_records",
    "loads_with_span", "plain_text_problem", "plan",
]

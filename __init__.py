"""archcurator: a pre-flight verifier and a curator's workbench for neural-network designs.

The repository's top-level rooms install as subpackages: `archcurator.core`
(graphs, op semantics, verifier, cost, parser, runs, knowledge base),
`archcurator.store` (the DuckDB file), `archcurator.tui` (the app and the
command line) and `archcurator.assets` (shipped data).
"""

__version__ = "0.1.0"

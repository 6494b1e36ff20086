"""recall-tui: a live debugger for the hybrid recall pipelines of agent memory.

Layers, each a sub-package, imported one way only (an import-linter contract in
pyproject.toml, run by the test suite, enforces it):

    cli, tui  ->  agent, tuning, diagnostics  ->  engine  ->  index  ->  vault

Everything below `tui` and `cli` is headless: it never imports textual or rich. See
docs/architecture.md.
"""

__version__ = "0.1.0"

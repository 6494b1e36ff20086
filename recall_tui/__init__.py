"""recall-tui: a live debugger for the hybrid recall pipelines of agent memory.

Layers, each a sub-package, imported one way only (an import-linter contract in
pyproject.toml, run by the test suite, enforces it):

    cli, tui  ->  agent, tuning, diagnostics  ->  engine  ->  index  ->  vault

Everything below `tui` and `cli` is headless: it never imports textual or rich. See
docs/architecture.md.

Importing the package turns off the telemetry of the libraries it loads (`quiet_libraries`),
before any of them is imported: every entry point (`recall-tui`, `python -m recall_tui`, the
hooks, the service and MCP server, worker processes) imports this first, and the processes it
starts inherit the environment. docs/data-safety.md, "No network".
"""

import os as _os

__version__ = "0.1.0"

#: Environment that keeps the libraries we load off the network. Set, not defaulted: a value
#: that re-enables telemetry is overridden. onnxruntime (1DS) otherwise writes a device id
#: under ~/.cache/Microsoft and sends events to an events host seconds after a model loads;
#: only this variable, read when onnxruntime loads, stops both
#: (`onnxruntime.disable_telemetry_events()` does not). The Hugging Face ones are for
#: `tokenizers`' hub client, which recall-tui never calls (the tokenizer ships in the package).
QUIET_ENV: dict[str, str] = {
    "ORT_DISABLE_TELEMETRY": "1",
    "HF_HUB_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
}


def quiet_libraries() -> None:
    """Set QUIET_ENV in this process's environment (and so in every process it starts)."""
    _os.environ.update(QUIET_ENV)


quiet_libraries()

"""recall-tui: a live debugger for the hybrid recall pipelines of agent memory.

The package is two layers. The engine (`model`, `vault`, `index`, `embed`, `config`,
`engine`, `trace`) is headless: it never imports textual or rich. The terminal UI
(`tui`) and the command line (`cli`, `commands`) render what the engine's trace says.
"""

__version__ = "0.1.0"

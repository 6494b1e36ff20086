"""The agent layer: how an agent (Claude Code and others) recalls through recall-tui.

Owns the hooks' recall logic and their cache. The command-line entry points live in
`recall_tui.cli`; this package holds what they call.

May import: `recall_tui.engine`, `recall_tui.index`, `recall_tui.vault`,
`recall_tui.diagnostics`. Never textual, rich or a front end.
"""

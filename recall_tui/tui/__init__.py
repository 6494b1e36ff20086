"""The Textual front end: `make_app` in `app.py`; see docs/tui.md.

May import every layer below it (agent, tuning, diagnostics, engine, index, vault), never
`recall_tui.cli`. Renders what the trace says; computes no score.
"""

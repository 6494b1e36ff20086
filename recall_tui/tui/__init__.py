"""The Textual front end: `make_app` in `app.py`; see docs/tui.md."""

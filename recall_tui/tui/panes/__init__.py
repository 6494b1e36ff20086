"""The side panes, one file per pane; each draws a `UIState` and computes no score.

`base.py` holds `StatePane`, which every pane subclasses. Read `memory.py` first.
"""

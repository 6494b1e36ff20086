"""Widgets of the terminal UI: each draws what it is handed, none computes scores."""

"""The engine never imports textual or rich: each engine module is imported in a fresh
interpreter and sys.modules is checked (harlequin's import-hygiene test)."""

from __future__ import annotations

import pkgutil
import subprocess
import sys
from pathlib import Path

import recall_tui

PKG = Path(recall_tui.__file__).parent
FRONT_END = ("recall_tui.tui", "recall_tui.cli", "recall_tui.__main__")


def engine_modules() -> list[str]:
    mods = []
    for info in pkgutil.walk_packages([str(PKG)], prefix="recall_tui."):
        if not info.name.startswith(FRONT_END):
            mods.append(info.name)
    return sorted(mods)


def test_engine_modules_are_found():
    mods = engine_modules()
    for expected in ("recall_tui.engine.pipeline", "recall_tui.engine.stages.graph",
                     "recall_tui.config", "recall_tui.text", "recall_tui.engine.why"):
        assert expected in mods


def test_no_ui_library_imported():
    """One fresh interpreter imports the engine modules one by one and reports, after each,
    whether textual or rich arrived (so the module that brought it is named)."""
    code = (
        "import sys, importlib\n"
        f"for name in {engine_modules()!r}:\n"
        "    importlib.import_module(name)\n"
        "    bad = [m for m in ('textual', 'rich') if m in sys.modules]\n"
        "    if bad:\n"
        "        print(name, 'imports', ','.join(bad)); break\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == ""

"""The architecture is a contract: import-linter (configured in pyproject.toml) checks that
dependencies flow one way (cli -> tui -> agent -> tuning | diagnostics -> engine -> index ->
vault), that nothing below the front ends imports textual or rich, and that no package has
an import cycle. The second test proves the check can fail."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "recall_tui"
RUN = "import sys; from importlinter.cli import lint_imports_command as c; sys.exit(c())"


def lint_imports(cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(cwd)}
    return subprocess.run([sys.executable, "-c", RUN, "--no-cache"], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


def test_import_contracts_are_kept():
    r = lint_imports(ROOT)
    assert r.returncode == 0, r.stdout + r.stderr
    for contract in ("Layers:", "Headless:", "No import cycles"):
        assert any(contract in line and "KEPT" in line for line in r.stdout.splitlines()), r.stdout


def test_a_broken_layer_is_caught(tmp_path):
    """A copy of the package where the engine imports rich and the vault imports the engine:
    both contracts must break, naming the offending modules."""
    shutil.copytree(PKG, tmp_path / "recall_tui", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    text = tmp_path / "recall_tui" / "engine" / "text.py"
    text.write_text(text.read_text() + "\nimport rich  # noqa\n")
    model = tmp_path / "recall_tui" / "vault" / "model.py"
    model.write_text(model.read_text() + "\nimport recall_tui.engine.config  # noqa\n")
    r = lint_imports(tmp_path)
    assert r.returncode != 0, r.stdout
    assert "recall_tui.engine.text -> rich" in r.stdout, r.stdout
    assert "recall_tui.vault.model -> recall_tui.engine.config" in r.stdout, r.stdout



LONG_MODULE = 800
"""Lines past which a module must say why it is one module. Cohesion is the rule, not length:
a module is split along responsibilities, never only to pass this number."""


def test_no_module_is_too_long_without_a_reason():
    """A module over LONG_MODULE lines says at its top why it is one module (`Long module:`)."""
    long = []
    for path in sorted(PKG.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if text.count("\n") > LONG_MODULE and "Long module:" not in text[:3000]:
            long.append(f"{path.relative_to(ROOT)} ({text.count(chr(10))} lines)")
    assert not long, (f"modules over {LONG_MODULE} lines with no reason given: "
                      + ", ".join(long))

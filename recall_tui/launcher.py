"""Start `recall-tui` without `site`: what `recall-tui hook install` writes for each hook.

    PYTHON -S /path/to/recall_tui/launcher.py hook prompt-submit --vault VAULT ...

is `recall-tui hook prompt-submit --vault VAULT ...`, minus most of Python's start-up. Python
compiles this file on every run (a script's bytecode is not cached), so it stays this short:
it loads `recall_tui/agent/hook_wire.py` (bytecode cached beside it; imports nothing) by file,
with the import system's own loader and without the package's `__init__` modules, registered
under its package name, and runs its `fast_path`. When that hands over (no service, another
command, `--no-serve`, a bad option), `hook_wire.prepare_full_start` puts the folder holding
the package first on `sys.path` (for `recall_tui.cli`), then runs `site` in this process as a
normal start would have, and the full command runs. docs/agents.md, "Install the hooks".
"""

import sys

if __name__ == "__main__":
    import _frozen_importlib as _bootstrap  # the import system: loaded by every start
    import _frozen_importlib_external as _external

    _name = "recall_tui.agent.hook_wire"
    _loader = _external.SourceFileLoader(_name, (__file__.rpartition("/")[0] or ".")
                                         + "/agent/hook_wire.py")
    _spec = _bootstrap.spec_from_loader(_name, _loader)
    assert _spec is not None  # (a loader given: never None)
    _wire = sys.modules[_name] = _bootstrap.module_from_spec(_spec)
    _loader.exec_module(_wire)
    _code = _wire.fast_path(sys.argv[1:], __file__)
    if _code is not None:
        _wire.exit_now(_code)
    _wire.prepare_full_start(__file__)
    import recall_tui.cli

    _wire.enable_site()
    sys.exit(recall_tui.cli.main(sys.argv[1:], fast=False))  # (the fast path was tried)

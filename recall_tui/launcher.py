"""Start `recall-tui` without `site`: what `recall-tui hook install` writes for each hook.

    PYTHON -S /path/to/recall_tui/launcher.py hook prompt-submit --vault VAULT ...

is `recall-tui hook prompt-submit --vault VAULT ...`, minus most of Python's start-up. Claude
Code starts a fresh process for every prompt, and `site` (site-packages, `.pth` files; in an
editable install the import finder setuptools writes, which imports pathlib, re, urllib ...)
is most of a warm hook's time; the fast path (`recall_tui.cli.hook_fast`, answered by the warm
service) needs none of it. This file puts the folder holding the package first on `sys.path`
(its own folder, which Python put there, would shadow nothing useful and is dropped) and runs
the fast path (below). When the fast path hands over to the full
command (no service, a bad option, `--no-serve`, any other command), it first runs `site` in
this process (`site.main()`: site-packages, `.pth` files, user site, sitecustomize), takes its
own folder off `sys.path` again, and runs `recall_tui.cli.main`: numpy, apsw, onnxruntime and
the rest resolve exactly as in a normal start. Works for a normal install (the folder is
site-packages) and an editable one (the folder is the source checkout).

Only `-S`: not `-E` or `-I`, so the environment is honoured as by the `recall-tui` script
(PYTHONPATH, and RECALL_TUI_*, XDG_*, HOME, which our code reads whatever the flags). One
difference stays: `sys.flags.no_site` is 1, which `multiprocessing`'s spawn passes on to its
children; recall-tui starts its workers with `sys.executable` and no flags
(recall_tui/vault/parallel.py) or by fork, so none is affected.

The fast path runs before anything is imported: this file loads `recall_tui/agent/hook_wire.py`
(which imports nothing; the bytecode cached beside it is used as by any import) with the
import system's own loader and registers it under its package name, without running the
package's `__init__` modules (`recall_tui` imports `os`: with `stat`, `posixpath` and
`_collections_abc` ~3 ms of CPU a prompt). `os` is imported only when handing over.
"""

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only
    from types import ModuleType

_site_done = False
_WIRE = "recall_tui.agent.hook_wire"


def __getattr__(name: str) -> str:
    if name == "HOME":  # computed when asked: the fast path needs no `os`
        return home()
    raise AttributeError(name)


def home() -> str:
    """The folder holding the package (site-packages, or the checkout of an editable install)."""
    import os

    return os.path.dirname(os.path.dirname(os.path.realpath(__file__)))


def load_wire(package_dir: str) -> "ModuleType":
    """`recall_tui.agent.hook_wire` loaded from `package_dir` (the package's folder) without
    importing the package; registered in `sys.modules`, so a later import gets this module."""
    got = sys.modules.get(_WIRE)
    if got is not None:
        return got
    import _frozen_importlib as bootstrap  # both loaded by every start: the import system
    import _frozen_importlib_external as external

    loader = external.SourceFileLoader(_WIRE, f"{package_dir}/agent/hook_wire.py")
    module = bootstrap.module_from_spec(bootstrap.spec_from_loader(_WIRE, loader))
    sys.modules[_WIRE] = module
    try:
        loader.exec_module(module)
    except BaseException:
        del sys.modules[_WIRE]
        raise
    return module


def enable_site() -> None:
    """Run `site` as a normal start would have (once; nothing when Python ran it). The folder
    this file put first on `sys.path` comes off it before: the modules imported from there
    stay, the rest resolve as in a normal start (in a normal install `site` adds the same
    folder back in its own place, with its `.pth` files)."""
    global _site_done
    if _site_done or not sys.flags.no_site:
        return
    _site_done = True
    if sys.path and sys.path[0] == home():
        del sys.path[0]
    import site

    site.main()


def fast_path(argv: list[str]) -> int | None:
    """The hook fast path (`hook_wire.try_service`) when ARGV is a hook event: its exit code
    when the warm service answered, else None (the full command takes over)."""
    if not (len(argv) > 1 and argv[0] == "hook" and argv[1] in ("session-start", "prompt-submit")):
        return None
    here = __file__.rpartition("/")[0] or "."
    first = sys.path[0] if sys.path else None
    if first == here and "/" in here:  # this file's folder, as Python put it: its parent
        sys.path[0] = here.rpartition("/")[0] or "/"  # (for a warning's import)
    try:
        code = load_wire(here).try_service(argv[1:])
    except BrokenPipeError:
        return 0
    if code is None and first is not None:
        sys.path[0] = first  # as Python put it: `_set_path` decides
    return code


def run(argv: list[str], *, fast: bool = True) -> int:
    """`recall-tui ARGV`: the hook fast path first (`fast`: not tried yet), then the full
    command with `site`."""
    if fast:
        code = fast_path(argv)
        if code is not None:
            return code
    _set_path()
    enable_site()
    from recall_tui.cli import main

    return main(argv, fast=False)  # (the fast path, tried above or not one, is not tried again)


def _exit_now(code: int) -> None:
    """Leave at once once the fast path answered: its output flushed, nothing else to finish
    (no thread, no file, no `atexit`), so the interpreter's teardown (~3 ms of CPU under
    `-S`, as much as the rest of the hook's own work) is skipped."""
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            pass
    import posix

    posix._exit(code)


def _set_path() -> None:
    """The folder holding the package first on `sys.path`, in place of this file's own folder
    (the package itself), which Python put there when it ran this file."""
    import os

    top = home()
    if sys.path and os.path.realpath(sys.path[0] or ".") == os.path.join(top, "recall_tui"):
        sys.path[0] = top
    elif not sys.path or sys.path[0] != top:
        sys.path.insert(0, top)


if __name__ == "__main__":
    answered = fast_path(sys.argv[1:])
    if answered is not None:
        _exit_now(answered)
    sys.exit(run(sys.argv[1:], fast=False))

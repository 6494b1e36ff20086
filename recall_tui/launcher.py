"""Start `recall-tui` without `site`: what `recall-tui hook install` writes for each hook.

    PYTHON -S /path/to/recall_tui/launcher.py hook prompt-submit --vault VAULT ...

is `recall-tui hook prompt-submit --vault VAULT ...`, minus most of Python's start-up. Claude
Code starts a fresh process for every prompt, and `site` (site-packages, `.pth` files; in an
editable install the import finder setuptools writes, which imports pathlib, re, urllib ...)
is most of a warm hook's time; the fast path (`recall_tui.cli.hook_fast`, answered by the warm
service) needs none of it. This file puts the folder holding the package first on `sys.path`
(its own folder, which Python put there, would shadow nothing useful and is dropped), imports
the package from there and runs the fast path. When the fast path hands over to the full
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

Standard library only, and only `os` and `sys` before the fast path (both loaded already).
"""

import os
import sys

#: The folder holding the package (site-packages, or the checkout of an editable install).
HOME = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
_site_done = False


def enable_site() -> None:
    """Run `site` as a normal start would have (once; nothing when Python ran it). The folder
    this file put first on `sys.path` comes off it before: the modules imported from there
    stay, the rest resolve as in a normal start (in a normal install `site` adds the same
    folder back in its own place, with its `.pth` files)."""
    global _site_done
    if _site_done or not sys.flags.no_site:
        return
    _site_done = True
    if sys.path and sys.path[0] == HOME:
        del sys.path[0]
    import site

    site.main()


def run(argv: list[str]) -> int:
    """`recall-tui ARGV`: the hook fast path first, then the full command with `site`."""
    if len(argv) > 1 and argv[0] == "hook" and argv[1] in ("session-start", "prompt-submit"):
        from recall_tui.cli.hook_fast import try_service

        try:
            code = try_service(argv[1:])  # None: the full command takes over
        except BrokenPipeError:
            return 0
        if code is not None:
            return code
    enable_site()
    from recall_tui.cli import main

    return main(argv, fast=False)  # (the fast path, tried above or not one, is not tried again)


if __name__ == "__main__":
    if sys.path and os.path.realpath(sys.path[0] or ".") == os.path.join(HOME, "recall_tui"):
        sys.path[0] = HOME  # Python put this file's folder (the package itself) there
    else:
        sys.path.insert(0, HOME)
    sys.exit(run(sys.argv[1:]))

"""The vault's `.recall/` folder stays out of version control: it gets a `.gitignore` of `*`.

`.recall/` holds what is private to this machine: the index, the reading cache, the service's
socket and lock, and the agent log, which records every prompt the agent saw (pasted secrets
included). In a vault kept in git, `git add -A` would commit all of it. Every place that makes
or writes in `.recall/` calls `keep_out_of_git` (the reading cache, the index, the agent log,
the active configuration), so a folder made before this rule, or whose `.gitignore` was
deleted, gets one the next time any of them runs. A `.gitignore` already there, the user's
own, is never touched. Headless.
"""

from __future__ import annotations

import contextlib
import os
import tempfile

GITIGNORE_NAME = ".gitignore"
GITIGNORE_TEXT = (
    "# Written by recall-tui: nothing in this folder belongs in version control (the index,\n"
    "# caches, and the agent log of every prompt the agent saw). recall-tui never rewrites\n"
    "# this file; to version the vault's presets, add the lines `!presets/` and\n"
    "# `!presets/*.toml` below.\n"
    "*\n"
)


def keep_out_of_git(folder: str | os.PathLike[str]) -> bool:
    """Give `folder` (a vault's `.recall/`) a `.gitignore` of `*` when it has none; True when
    one was written. Never overwrites (the file appears whole or not at all: written aside,
    then hard-linked into place) and never raises: a read-only folder simply keeps none."""
    path = os.path.join(folder, GITIGNORE_NAME)
    if os.path.lexists(path):
        return False
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".gitignore-", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(GITIGNORE_TEXT)
        os.chmod(tmp, 0o644)
        os.link(tmp, path)  # fails when a .gitignore appeared meanwhile: that one stays
        return True
    except OSError:
        return False
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)

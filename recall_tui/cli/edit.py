"""`recall-tui edit ID --recall-when PHRASE... | --add PHRASE | --remove PHRASE [--vault V]`.

Changes one memory's recall_when list through `recall_tui.vault.edit` (byte-preserving, atomic,
refused on a concurrent change), shows the diff, then re-reads the vault and brings the
vault's index up to date so the next recall sees the new phrases.
"""

from __future__ import annotations

import argparse
import difflib
import os
import sys

from recall_tui.vault.literal import literal, safe_print

HELP = "change a memory's recall_when phrases safely"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("id", metavar="ID", help="id of the memory to change")
    p.add_argument("--vault", metavar="V", help="the vault folder (default: $RECALL_TUI_VAULT or .)")
    p.add_argument("--recall-when", nargs="*", metavar="PHRASE", dest="set_to", default=None,
                   help="replace the list with exactly these phrases (none given: empty the list)")
    p.add_argument("--add", action="append", default=[], metavar="PHRASE",
                   help="add a phrase if it is not there (repeatable)")
    p.add_argument("--remove", action="append", default=[], metavar="PHRASE",
                   help="remove a phrase (repeatable)")
    p.add_argument("--dry-run", action="store_true", help="show the change, write nothing")
    p.add_argument("--no-index", action="store_true", help="do not update the index afterwards")


def _err(msg: str) -> None:
    safe_print(f"recall-tui edit: {msg}", file=sys.stderr)


def _diff(old: str, new: str, path: str) -> str:
    lines = difflib.unified_diff(
        old.splitlines(keepends=True), new.splitlines(keepends=True),
        fromfile=f"a/{path}", tofile=f"b/{path}", n=1,
    )
    return "".join(ln if ln.endswith("\n") else ln + "\n" for ln in lines)


def _reindex(vault) -> str:  # a Vault; imported lazily
    """Bring an existing index up to date with the embedder its vectors were made with.

    Never raises: the file is already written when this runs, so a failure here is a warning
    (the next open of the index re-indexes the memory), never a failed edit.
    """
    try:
        return _reindex_or_raise(vault)
    except Exception as exc:  # reported as a warning, the edit stands
        return (f"warning: the edit is saved but the index was not updated ({type(exc).__name__}: "
                f"{exc}); the next `recall-tui index` or open re-indexes it")


def _reindex_or_raise(vault) -> str:  # a Vault; imported lazily
    from recall_tui.index.embed import EmbedderUnavailable, make_embedder
    from recall_tui.index.schema import default_index_path
    from recall_tui.index.store import Index

    if not default_index_path(vault.root).exists():
        return "no index yet (`recall-tui index` builds it; the UI builds it on start)"
    none, _ = make_embedder("none")
    probe = Index.open(vault, none, read_only=True)
    try:
        info = probe.embedder_info
    finally:
        probe.close()
    kind = info.get("name") or "none"
    try:
        embedder, _ = make_embedder(kind, model=info.get("model") or None) if kind != "none" else (none, "")
    except (EmbedderUnavailable, ValueError) as exc:
        return f"index not updated: the {kind} embedder its vectors were made with is unavailable ({exc})"
    idx = Index.open(vault, embedder)
    try:
        r = idx.report
    finally:
        idx.close()
    return f"index updated: {r.updated} changed, {r.added} added, {r.removed} removed, {r.embedded} embedded"


def run(args: argparse.Namespace) -> int:
    from recall_tui.cli._common import vault_root
    from recall_tui.vault.edit import (
        EditConflict,
        EditError,
        apply_changes,
        rewrite_recall_when,
        set_recall_when,
    )
    from recall_tui.vault.reader import read_vault

    args.vault = str(vault_root(args.vault))
    if args.set_to is None and not args.add and not args.remove:
        _err("nothing to do: give --recall-when PHRASE..., --add PHRASE or --remove PHRASE")
        return 2
    try:
        vault = read_vault(args.vault)
    except (FileNotFoundError, NotADirectoryError) as exc:
        _err(f"{args.vault}: {exc.strerror or exc}")
        return 2
    memory = vault.get(args.id)
    if memory is None:
        close = difflib.get_close_matches(args.id, list(vault.memories), n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        _err(f"no memory with id {args.id!r} in {args.vault}{hint}")
        return 2
    new, missing = apply_changes(memory.recall_when, set_to=args.set_to, add=args.add, remove=args.remove)
    for p in missing:
        safe_print(f"recall-tui edit: warning: {p!r} is not one of the phrases; nothing to remove", file=sys.stderr)
    path = os.path.join(vault.root, memory.path)
    try:
        with open(path, "rb") as fh:
            old_text = fh.read().decode("utf-8")
        new_text = rewrite_recall_when(old_text, new)
    except (OSError, UnicodeDecodeError, EditError) as exc:
        _err(f"{memory.path}: {exc}; nothing was written")
        return 1
    if args.dry_run:
        sys.stdout.write(literal(_diff(old_text, new_text, memory.path) or "no change\n"))
        return 0
    try:
        result = set_recall_when(path, new, expected_hash=memory.content_hash)
    except EditConflict as exc:
        _err(str(exc))
        if exc.intended_text is not None:
            sys.stderr.write("the edit applied to the current file would be:\n")
            sys.stderr.write(literal(_diff(exc.disk_text, exc.intended_text, memory.path)))
        _err("run the command again to apply it to the current version")
        return 1
    except (OSError, EditError) as exc:
        _err(f"{exc}")
        return 1
    if not result.changed:
        safe_print(f"{args.id}: recall_when already {list(new)}; nothing written")
        return 0
    sys.stdout.write(literal(_diff(old_text, new_text, memory.path)))
    safe_print(f"{args.id}: recall_when {list(result.old_phrases)} -> {list(result.new_phrases)}")
    after = read_vault(vault.root)
    again = after.get(args.id)
    if again is None or list(again.recall_when) != list(new):
        if again is not None and again.content_hash != result.new_hash:
            # Someone changed the file again after our write: our edit was made, theirs is newer.
            safe_print(f"recall-tui edit: warning: {memory.path} changed again after this edit "
                       f"(now {list(again.recall_when)})", file=sys.stderr)
        else:
            _err(f"{memory.path}: written, but the vault reader now sees "
                 f"{again.recall_when if again else 'no memory'}")
            return 1
    for p in after.problems:
        if p.path == memory.path:
            safe_print(f"recall-tui edit: warning: {p}", file=sys.stderr)
    if not args.no_index:
        note = _reindex(after)
        if note.startswith("warning:"):
            safe_print(f"recall-tui edit: {note}", file=sys.stderr)
        else:
            safe_print(note)
    return 0

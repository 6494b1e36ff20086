"""`recall-tui load ID`: bastra's load_memory. Lean (default): essential frontmatter and the
body without its generated `## Related` section; full: the complete frontmatter and the raw
body."""

from __future__ import annotations

import argparse
import sys

import yaml

from recall_tui.cli._common import is_folder_or_say, vault_root
from recall_tui.vault.literal import dump_json, literal, safe_print

HELP = "print one memory (load_memory, lean or full)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("id", help="the memory id")
    p.add_argument("--vault", help="the vault folder (default: $RECALL_TUI_VAULT or .)")
    p.add_argument("--verbosity", choices=("lean", "full"), default="lean")
    p.add_argument("--json", action="store_true", help="print {id, path, verbosity, frontmatter, body}")


def run(args: argparse.Namespace) -> int:
    from recall_tui.engine import Engine
    from recall_tui.engine.config import Config
    from recall_tui.vault.reader import read_vault

    root = vault_root(args.vault)
    if not is_folder_or_say("recall-tui load", root):
        return 2
    engine = Engine(read_vault(root), None, Config().with_value("keyword.enabled", False))
    try:
        doc = engine.load_memory(args.id, args.verbosity)
    except KeyError as exc:
        safe_print(f"recall-tui load: {exc.args[0]}", file=sys.stderr)
        return 1
    if args.json:
        dump_json(doc, indent=2)
    else:  # YAML escapes controls in the frontmatter itself; the body is made literal
        text = "---\n" + yaml.safe_dump(doc["frontmatter"], sort_keys=False,
                                        allow_unicode=True) + "---\n" + doc["body"]
        sys.stdout.write(literal(text))
        if not text.endswith("\n"):
            sys.stdout.write("\n")
    return 0

"""`recall-tui [VAULT]`: open the live recall debugger on a vault (the default command)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from recall_tui.cli._common import is_folder_or_say, iso_time
from recall_tui.vault.literal import safe_print

HELP = "open the live recall debugger on a vault (the default command)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("vault", nargs="?", default=".", help="the vault folder (default: .)")
    p.add_argument("--preset", help="preset to start with (default: the vault's active one, "
                   "set by `preset use` or S in the UI; else the config's; else default)")
    p.add_argument("--now", type=iso_time, help="pin the clock, e.g. 2026-11-21T09:00Z")
    p.add_argument("--embedder", help="auto | local | ollama | none (default: the vault's "
                   "active one, else the config's)")
    p.add_argument("--query", default="", help="start with this query typed in")


def run(args: argparse.Namespace) -> int:
    from recall_tui.tui.settings import SettingsError, load_settings

    vault = Path(args.vault)
    if not is_folder_or_say("recall-tui", vault):
        return 2
    try:
        settings = load_settings()
    except SettingsError as exc:
        safe_print(f"recall-tui: {exc}", file=sys.stderr)
        return 2
    if args.preset:
        from recall_tui.engine.config import find_preset

        try:
            find_preset(args.preset, vault)
        except ValueError as exc:
            safe_print(f"recall-tui: {exc}", file=sys.stderr)
            return 2
    preset, embedder = _active_or_flags(vault, args.preset, args.embedder)
    from recall_tui.tui.app import make_app

    app = make_app(vault, settings=settings, preset=preset, now=args.now,
                   embedder=embedder, query=args.query)
    app.run()
    return int(app.return_code or 0)


def _active_or_flags(vault: Path, preset: str | None,
                     embedder: str | None) -> tuple[str | None, str | None]:
    """The flags, else the vault's active configuration (`.recall/active.json`, what the
    agent recalls with), else None (the config file decides). An active preset that no longer
    exists is left out with a warning."""
    from recall_tui.agent.active import read_active_set
    from recall_tui.engine.config import find_preset

    active_preset, active_embedder = read_active_set(vault)
    if preset is None and active_preset is not None:
        try:
            find_preset(active_preset, vault)
            preset = active_preset
        except ValueError as exc:
            safe_print(f"recall-tui: the vault's active preset is not usable ({exc}); "
                       "starting with the config's", file=sys.stderr)
    return preset, embedder or active_embedder

"""The `recall-tui` command line.

`recall-tui [VAULT]` opens the terminal UI. Every other command lives in its own module under
`recall_tui.cli`, which exposes `HELP` (one line), `add_arguments(parser)` and
`run(args) -> int`. Modules are imported only when their command runs, so `--help` is fast
and the engine commands never import textual. A hook event answered by the warm service
imports not even argparse (`recall_tui.cli.hook_fast`): it runs once per prompt.
"""

from __future__ import annotations

import sys

from recall_tui import __version__

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only (see hook_fast: every import costs each prompt)
    import argparse

#: command name -> module under recall_tui.cli (in the order `--help` lists them)
COMMANDS: dict[str, str] = {
    "tui": "tui_cmd",
    "demo": "demo",
    "check": "check",
    "index": "index_cmd",
    "query": "query",
    "load": "load",
    "eval": "eval_cmd",
    "errors": "errors_cmd",
    "tune": "tune",
    "snapshot": "snapshot_cmd",
    "diff": "diff_cmd",
    "gate": "gate_cmd",
    "hook": "hook",
    "edit": "edit",
    "report": "report",
    "replay": "replay",
    "synth": "synth",
    "bench": "bench_cmd",
    "preset": "preset_cmd",
    "serve": "serve",
    "mcp": "mcp_cmd",
    "log": "log_cmd",
}

#: One-line help per command, kept here so `--help` imports no command module.
HELP: dict[str, str] = {
    "tui": "open the live recall debugger on a vault (the default command)",
    "demo": "open the debugger on a private copy of the bundled sample vault",
    "check": "read a vault, print a summary and every problem; exit 1 on problems",
    "index": "build or update the vault's index (.recall/index.sqlite)",
    "query": "run one recall and print its hits and trace",
    "load": "print one memory (load_memory, lean or full)",
    "eval": "score presets on judged queries: recall@k, MRR, nDCG@k",
    "errors": "questions where the default loses to a seed preset, side by side",
    "tune": "search knobs by cross-validation on judged vaults; save the result as a preset",
    "snapshot": "freeze a query set's rankings and scores (for diff and gate)",
    "diff": "compare two ranking snapshots, or one with the active preset: gains, losses, overlap",
    "gate": "exit 1 when the active preset is significantly worse than a baseline snapshot",
    "hook": "Claude Code hooks: session-start, prompt-submit, install, uninstall",
    "edit": "change a memory's recall_when phrases safely",
    "report": "write a bug report (Markdown + JSON) for one query",
    "replay": "open a recorded trace or a report's JSON in the UI, read only",
    "synth": "write a deterministic synthetic vault of N memories",
    "bench": "benchmark the pipeline, the index and the UI",
    "preset": "set or show the vault's active preset and embedder (used by query, hooks, MCP)",
    "serve": "keep a vault warm and answer recalls over a Unix socket (hooks use it)",
    "mcp": "serve recall, load_memory and why_not to an agent over MCP (stdio)",
    "log": "list the recalls served to agents (hooks, MCP), newest first",
}


def build_parser(available: dict[str, object] | None = None) -> argparse.ArgumentParser:
    import argparse

    parser = argparse.ArgumentParser(
        prog="recall-tui",
        description="See why your agent's memory recalls what it recalls. "
        "Run `recall-tui VAULT` to open the debugger, or a command below.",
    )
    parser.add_argument("--version", action="version", version=f"recall-tui {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    # with a command's module given, only its sub-parser: building all ~20 costs a hook
    # (a fresh process per prompt) several ms, and parsing that command needs none of them
    for name in (available if available is not None else COMMANDS):
        mod = (available or {}).get(name)
        p = sub.add_parser(name, help=HELP[name], description=HELP[name])
        if mod is not None:
            mod.add_arguments(p)  # type: ignore[attr-defined]
    return parser


def _load(name: str):
    import importlib

    try:
        return importlib.import_module(f"recall_tui.cli.{COMMANDS[name]}")
    except ModuleNotFoundError as exc:
        if exc.name == f"recall_tui.cli.{COMMANDS[name]}":
            return None
        raise


def main(argv: list[str] | None = None, *, fast: bool = True) -> int:
    """Run `recall-tui ARGV`; `fast=False`: the hook fast path was tried already
    (recall_tui/launcher.py)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    # `recall-tui VAULT [options]` is `recall-tui tui VAULT [options]`.
    if not argv or (argv[0] not in COMMANDS and not argv[0].startswith("-")):
        argv = ["tui", *argv]
    if fast and len(argv) > 1 and argv[0] == "hook" and argv[1] in ("session-start", "prompt-submit"):
        from recall_tui.cli.hook_fast import try_service

        try:
            code = try_service(argv[1:])  # None: the full command below takes over
        except BrokenPipeError:
            return 0
        if code is not None:
            return code
    if argv and argv[0] in COMMANDS:
        name = argv[0]
        mod = _load(name)
        if mod is None:
            print(f"recall-tui: the `{name}` command is not built yet", file=sys.stderr)
            return 2
        parser = build_parser({name: mod})
        args = parser.parse_args(argv)
        try:
            return int(mod.run(args) or 0)
        except KeyboardInterrupt:
            return 130
        except BrokenPipeError:
            return 0
    parser = build_parser()
    parser.parse_args(argv)
    parser.print_help()
    return 0

"""`recall-tui hook session-start | prompt-submit | install | uninstall`: Claude Code's hooks.

The two events read Claude Code's JSON payload on stdin (`session_id`, `transcript_path`,
`cwd`, `hook_event_name`, `source`, `prompt`), recall with the vault's active configuration
(`recall-tui preset use`; `--preset`/`--embedder` override it) and print
`{"hookSpecificOutput": {"hookEventName": ..., "additionalContext": ...}}`. They ask the warm
service (`recall-tui serve`) when it is up, start it when it is not, and meanwhile recall in
this process. They always exit 0, even for an unknown or bad option (a warning on stderr):
Claude Code reads exit 2 as "block the prompt". `stop` (Claude Code's Stop event) records
weak labels and prints nothing. `install` prints the settings block (SessionStart,
UserPromptSubmit and Stop; `--no-stop` leaves Stop out), or puts it into `--write PATH`
editing only recall-tui's own entries; `uninstall` removes them (one
vault's, or `--all`). Logic: recall_tui/agent/ (install.py, settings_file.py for the file).

A warm service's answer is printed by `recall_tui.cli.hook_fast` before this module (or
argparse) is imported; this module runs when that path hands over (see its docstring).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from recall_tui.cli.hook_fast import (
    BUDGET_MS,
    EMBEDDERS,
    EVENTS,
    HOOK_EVENTS,
    ask_service,
    hook_options,
    read_stdin,
    started,
    take_stdin,
)
from recall_tui.cli.hook_fast import payload as _payload
from recall_tui.vault.literal import json_text, safe_print

if TYPE_CHECKING:
    from recall_tui.agent.settings_file import SettingsFile

HELP = "Claude Code hooks: session-start, prompt-submit, stop, install, uninstall"
#: The events Claude Code runs (an argument error is a warning there, never exit 2: for
#: UserPromptSubmit that blocks the prompt, for Stop it keeps the agent going).
RUN_EVENTS = (*HOOK_EVENTS, "stop")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("event", choices=(*HOOK_EVENTS, "stop", "install", "uninstall"))
    p.add_argument("--vault", help="the vault folder (default: $RECALL_TUI_VAULT)")
    p.add_argument("--preset", help="preset (default: the vault's active preset)")
    p.add_argument("--k", type=_k_or_none, help="entries injected by prompt-submit (default: the "
                   "preset's k; a value under 1 is ignored with a warning: a hook never blocks)")
    p.add_argument("--embedder", choices=EMBEDDERS,
                   help="query embedder (default: the vault's active embedder)")
    p.add_argument("--sources", default=None,
                   help="SessionStart sources that inject _always-load/ (default: "
                        "startup,clear,compact; add resume to inject on resume too)")
    p.add_argument("--repeat-window", type=int, default=None, metavar="N",
                   help="prompt-submit: a memory injected at prompt P of a session is not "
                        "injected again before prompt P+N (default 3; 0: off); compaction re-arms")
    p.add_argument("--transparency", action="store_true",
                   help="also send a systemMessage line (shown to the user) naming what was injected")
    p.add_argument("--budget-ms", type=float,
                   help="warn on stderr when the hook takes longer (default 500/300 ms)")
    p.add_argument("--no-serve", action="store_true",
                   help="never use or start the warm service; recall in this process")
    p.add_argument("--warm", action="store_true",
                   help="start the vault's warm service, wait until it answers, and exit")
    p.add_argument("--write", "--settings", dest="write", metavar="PATH",
                   help="install/uninstall: edit this settings file (e.g. ~/.claude/settings.json, "
                        ".claude/settings.local.json); a numbered backup is kept")
    p.add_argument("--dry-run", action="store_true",
                   help="install/uninstall with --write: print the file as it would be; write nothing")
    p.add_argument("--all", action="store_true",
                   help="uninstall: remove recall-tui's hooks for every vault, not only --vault's")
    p.add_argument("--plugin-dir", metavar="DIR",
                   help="install: write a Claude Code plugin folder (hooks + MCP server) to DIR "
                        "instead; use it with `claude --plugin-dir DIR`")
    p.add_argument("--no-stop", action="store_true",
                   help="install: leave out the Stop hook (`hook stop`, weak labels of whether the "
                        "agent used what it was given); a re-install with it removes ours")
    p.add_argument("--timeout", type=int, default=30, metavar="S",
                   help="install: Claude Code's timeout for each hook, in seconds (default 30)")
    _never_exit_2(p)


class _HookArgError(Exception):
    pass


def _never_exit_2(p: argparse.ArgumentParser) -> None:
    """Make an argument error of a hook event a warning: Claude Code reads exit 2 from a hook
    as "block the prompt and erase it". The offending option is dropped (with its value) and
    the rest is parsed again; unknown options are ignored. `install`/`uninstall` keep the
    usual errors (a person typed them)."""
    parse, error = p.parse_known_args, p.error

    def raise_error(message: str) -> NoReturn:
        raise _HookArgError(message)

    def lenient(args: Sequence[str] | None = None,
                namespace: argparse.Namespace | None = None) -> tuple[argparse.Namespace, list[str]]:
        words = list(sys.argv[1:] if args is None else args)
        if not any(w in RUN_EVENTS for w in words):
            return parse(words, namespace)
        p.exit_on_error = False
        p.error = raise_error  # type: ignore[method-assign]  # on this parser only, while parsing
        try:
            for _ in range(len(words) + 1):
                try:
                    ns, extra = parse(words, namespace)
                    break
                except (argparse.ArgumentError, _HookArgError) as exc:
                    _warn_arg(str(exc))
                    words = _without(words, getattr(exc, "argument_name", None))
            else:
                ns, extra = parse([next(w for w in words if w in RUN_EVENTS)], namespace)
        finally:
            p.exit_on_error = True
            p.error = error  # type: ignore[method-assign]  # restored
        if extra:
            _warn_arg(f"unrecognized arguments: {' '.join(extra)}")
        return ns, []

    p.parse_known_args = lenient  # type: ignore[method-assign, assignment]  # the hook's parser only


def _warn_arg(message: str) -> None:
    safe_print(f"recall-tui hook: {message}; going on without it (a hook never blocks the prompt)",
               file=sys.stderr)


def _without(words: list[str], option: str | None) -> list[str]:
    """`words` without `option` and its value; without the last option when it is not named."""
    opts = [w for w in words if w.startswith("--")]
    names = [o for o in (option or "").split("/") if o] or opts[-1:]
    out: list[str] = []
    skip = False
    for w in words:
        if skip:
            skip = False
            if not w.startswith("-"):
                continue
        if any(w == n for n in names):
            skip = True
            continue
        if any(w.startswith(n + "=") for n in names):
            continue
        out.append(w)
    return out if out != words else [w for w in words if w in RUN_EVENTS][:1]


def _k_or_none(text: str) -> int | None:
    """argparse type for the hook's --k. Claude Code reads exit code 2 from a prompt hook as
    "block the prompt", so a bad value is not a usage error here: it is reported on stderr and
    the preset's k is used instead (None)."""
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        safe_print(f"recall-tui hook: argument --k: must be at least 1, got {text!r}; "
                   "using the preset's k", file=sys.stderr)
        return None
    return n


def _print(obj: dict) -> None:
    sys.stdout.write(json_text(obj) + "\n")  # exact text; no raw control character
    sys.stdout.flush()


def _empty(event: str) -> dict:
    return {"hookSpecificOutput": {"hookEventName": EVENTS[event], "additionalContext": ""}}


def _hook_flags(args: argparse.Namespace) -> list[str]:
    """The hook options given to `install`, passed through to the hooks it writes."""
    out: list[str] = []
    for flag, value in (("--preset", args.preset), ("--embedder", args.embedder),
                        ("--k", args.k), ("--sources", args.sources),
                        ("--repeat-window", args.repeat_window), ("--budget-ms", args.budget_ms)):
        if value is not None:
            out += [flag, f"{value:g}" if isinstance(value, float) else str(value)]
    out += [f for f, on in (("--transparency", args.transparency), ("--no-serve", args.no_serve)) if on]
    return out


def _install(args: argparse.Namespace) -> int:
    """`install` / `uninstall`: print the block, write a plugin folder, or edit --write PATH."""
    from recall_tui.agent.install import merge_hooks, remove_hooks, settings_block
    from recall_tui.cli._common import is_folder_or_say

    name = f"recall-tui hook {args.event}"
    root: Path | None = None
    if args.vault or os.environ.get("RECALL_TUI_VAULT"):
        root = Path(args.vault or os.environ["RECALL_TUI_VAULT"]).expanduser().resolve()
    if args.event == "uninstall":
        if root is None and not args.all:
            safe_print(f"{name}: pass --vault (or set RECALL_TUI_VAULT), or --all", file=sys.stderr)
            return 2
        if not args.write:
            safe_print(f"{name}: pass --write PATH (the settings file to remove the hooks from)",
                       file=sys.stderr)
            return 2
        gone = None if args.all else root
        return _edit(args, name, lambda sf: remove_hooks(sf.data, gone, sf.path),
                     "no recall-tui hook to remove", "recall-tui hook(s) removed from")
    if root is None:
        safe_print(f"{name}: pass --vault (or set RECALL_TUI_VAULT)", file=sys.stderr)
        return 2
    if not is_folder_or_say(name, root):
        return 2
    block = settings_block(root, extra=_hook_flags(args), timeout=args.timeout,
                           stop=not args.no_stop)
    if args.plugin_dir:
        return _plugin(args, name, root, block)
    if not args.write:
        print(json_text(block, indent=2))
        return 0
    vault = root
    def merge(sf: Any) -> int:
        merge_hooks(sf.data, block, vault, sf.path)
        return 0

    return _edit(args, name, merge,
                 "already has these hooks", "hooks written to")


def _edit(args: argparse.Namespace, name: str, change: Callable[[SettingsFile], int],
          unchanged: str, done: str) -> int:
    """Apply `change` to the settings file --write PATH: print it (--dry-run) or write it."""
    from recall_tui.agent.settings_file import SettingsError, SettingsFile

    try:
        sf = SettingsFile.read(Path(args.write))
        n = change(sf)
        if args.dry_run:
            sys.stdout.write(sf.text())
            return 0
        if not sf.changed():
            safe_print(f"{args.write}: {unchanged}; nothing changed")
            return 0
        backup = sf.write()
    except (SettingsError, OSError) as exc:
        safe_print(f"{name}: {exc}", file=sys.stderr)
        return 2
    safe_print((f"{n} " if n else "") + f"{done} {args.write}"
               + (f" (previous file kept as {backup})" if backup else ""))
    return 0


def _plugin(args: argparse.Namespace, name: str, root: Path, block: dict[str, Any]) -> int:
    from recall_tui.agent.install import write_plugin
    from recall_tui.agent.settings_file import SettingsError

    mcp_extra = [*(["--preset", args.preset] if args.preset else []),
                 *(["--embedder", args.embedder] if args.embedder else [])]
    try:
        written = write_plugin(Path(args.plugin_dir), root, block, mcp_extra)
    except (SettingsError, OSError) as exc:
        safe_print(f"{name}: {exc}", file=sys.stderr)
        return 2
    safe_print(f"plugin written to {args.plugin_dir} ({', '.join(written) or 'nothing changed'}); "
               f"run: claude --plugin-dir {args.plugin_dir}")
    return 0


def run(args: argparse.Namespace) -> int:
    if args.event in ("install", "uninstall"):
        return _install(args)
    if args.event == "stop":
        return _stop(args)
    t0 = started(time.perf_counter())  # the fast path's start, when it handed over
    event = args.event
    try:
        code = _run(args, event, t0)
    except BaseException as exc:  # never fail the prompt
        if isinstance(exc, KeyboardInterrupt):
            raise
        safe_print(f"recall-tui hook {event}: {type(exc).__name__}: {exc}", file=sys.stderr)
        _print(_empty(event))
        code = 0
    return code


def _stop(args: argparse.Namespace) -> int:
    """Claude Code's Stop hook: record weak labels (recall_tui/agent/weak.py); prints nothing
    Claude Code acts on and always exits 0 (it never blocks the agent from stopping)."""
    try:
        from recall_tui.agent.weak import label_stop

        root = args.vault or os.environ.get("RECALL_TUI_VAULT")
        obj = json.loads(read_stdin() or "{}")
        if root and Path(root).is_dir() and isinstance(obj, dict):
            label_stop(root, obj)
    except Exception as exc:  # a guess is never worth failing the agent's stop
        safe_print(f"recall-tui hook stop: {type(exc).__name__}: {exc}", file=sys.stderr)
    return 0


def _run(args: argparse.Namespace, event: str, t0: float) -> int:
    from recall_tui.agent import client
    from recall_tui.cli._common import is_folder_or_say

    text = take_stdin()  # read by the fast path when it handed over
    root_arg = args.vault or os.environ.get("RECALL_TUI_VAULT")
    if not root_arg:
        safe_print("recall-tui hook: no vault: pass --vault or set RECALL_TUI_VAULT", file=sys.stderr)
        _print(_empty(event))
        return 0
    root = Path(root_arg)
    if not is_folder_or_say("recall-tui hook", root):
        _print(_empty(event))
        return 0
    if args.warm:
        client.start_detached(root)
        if client.wait_ready(root) is None:
            safe_print(f"recall-tui hook: the service for {root} did not come up", file=sys.stderr)
        return 0
    payload = _payload(text)
    opts = hook_options(event, args.preset, args.embedder, args.k, args.sources,
                        args.transparency, args.repeat_window)
    out = None
    warning = ""  # the active preset missing: the service says so; in-process, resolve_active
    if not args.no_serve and client.recently_unresponsive(root):
        safe_print(f"recall-tui hook {event}: the service did not answer in the last "
                   f"{client.UNRESPONSIVE_SKIP_S:.0f} s; recalling in this process", file=sys.stderr)
    elif not args.no_serve:
        try:
            ans = ask_service(root, {"op": "hook", "options": opts, "payload": payload})
            if ans.get("ok"):
                out = ans["output"]
                warning = str(ans.get("warning") or "") if args.preset is None else ""
            else:
                safe_print(f"recall-tui hook {event}: service: {ans.get('error')}; "
                           "recalling in this process", file=sys.stderr)
        except client.ServiceUnavailable as exc:
            if str(exc) != "not running":
                safe_print(f"recall-tui hook {event}: service: {exc}; recalling in this process",
                           file=sys.stderr)
            if "no answer within" in str(exc):
                client.mark_unresponsive(root)  # the next prompts do not wait for it
            client.start_detached(root)  # for the next prompt; this one recalls here
    if out is None:
        out = _in_process(root, opts, payload)
        from recall_tui.agent.active import resolve_active

        warning = resolve_active(root, args.preset, args.embedder)[1]
    if warning:
        safe_print(f"recall-tui hook {event}: {warning}", file=sys.stderr)
    _print(out)
    budget = args.budget_ms if args.budget_ms is not None else BUDGET_MS[event]
    elapsed = (time.perf_counter() - t0) * 1000
    if elapsed > budget:
        safe_print(f"recall-tui hook {event}: over the {budget:.0f} ms budget ({elapsed:.0f} ms); "
              "results are complete", file=sys.stderr)
    return 0


def _in_process(root: Path, opts: dict, payload: dict) -> dict:
    """Recall in this process, in the main thread (no thread may be left inside the embedder
    at exit): the index read-only when there is one (never embeds the vault here; the
    service does), else without an index."""
    from recall_tui.agent.core import RecallCore
    from recall_tui.agent.hooks import HookOptions, HookPayload

    o = HookOptions.from_dict(opts)
    has_index = (root / ".recall" / "index.sqlite").exists()
    mode = "read-only" if has_index and o.event == "prompt-submit" else "none"
    core = RecallCore(root, preset=o.preset, embedder=o.embedder, index=mode)
    try:
        out, _rec = core.hook(o, HookPayload.from_obj(payload))
    finally:
        core.close()
    return out

"""`recall-tui hook session-start | prompt-submit | install`: Claude Code's hooks.

The two events read Claude Code's JSON payload on stdin (`session_id`, `transcript_path`,
`cwd`, `hook_event_name`, `source`, `prompt`), recall with the vault's active configuration
(`recall-tui preset use`; `--preset`/`--embedder` override it) and print
`{"hookSpecificOutput": {"hookEventName": ..., "additionalContext": ...}}`. They ask the warm
service (`recall-tui serve`) when it is up, start it when it is not, and meanwhile recall in
this process. They always exit 0: a hook never blocks the prompt. `install` prints the
settings.json block (or merges it into `--write PATH`). Logic: recall_tui/agent/.

This module imports only the standard library and recall_tui.agent's client on the fast path.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from recall_tui.vault.literal import json_text, safe_print

HELP = "Claude Code hooks: session-start, prompt-submit, install"
BUDGET_MS = {"session-start": 500.0, "prompt-submit": 300.0}


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("event", choices=("session-start", "prompt-submit", "install"))
    p.add_argument("--vault", help="the vault folder (default: $RECALL_TUI_VAULT)")
    p.add_argument("--preset", help="preset (default: the vault's active preset)")
    p.add_argument("--k", type=_k_or_none, help="entries injected by prompt-submit (default: the "
                   "preset's k; a value under 1 is ignored with a warning: a hook never blocks)")
    p.add_argument("--embedder", choices=("auto", "local", "ollama", "none"),
                   help="query embedder (default: the vault's active embedder)")
    p.add_argument("--sources", default="startup,clear,compact",
                   help="SessionStart sources that inject _always-load/ (default: "
                        "startup,clear,compact; add resume to inject on resume too)")
    p.add_argument("--transparency", action="store_true",
                   help="also send a systemMessage line (shown to the user) naming what was injected")
    p.add_argument("--budget-ms", type=float,
                   help="warn on stderr when the hook takes longer (default 500/300 ms)")
    p.add_argument("--no-serve", action="store_true",
                   help="never use or start the warm service; recall in this process")
    p.add_argument("--warm", action="store_true",
                   help="start the vault's warm service, wait until it answers, and exit")
    p.add_argument("--write", metavar="PATH",
                   help="install: merge the hooks into this settings.json (a .bak copy first)")


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


def _stdin() -> str:
    try:
        return sys.stdin.read() if sys.stdin is not None and not sys.stdin.isatty() else ""
    except (OSError, ValueError):
        return ""


def _print(obj: dict) -> None:
    sys.stdout.write(json_text(obj) + "\n")  # exact text; no raw control character
    sys.stdout.flush()


EVENTS = {"session-start": "SessionStart", "prompt-submit": "UserPromptSubmit"}
PAYLOAD_KEYS = ("session_id", "transcript_path", "cwd", "hook_event_name", "source", "prompt")


def _empty(event: str) -> dict:
    return {"hookSpecificOutput": {"hookEventName": EVENTS[event], "additionalContext": ""}}


def _payload(text: str) -> dict:
    """Claude Code's payload, the keys the hook reads (strings; missing ones empty)."""
    try:
        obj = json.loads(text) if text.strip() else {}
    except ValueError:
        obj = {}
    obj = obj if isinstance(obj, dict) else {}
    return {k: str(obj.get(k) or "") for k in PAYLOAD_KEYS}


def _install(args: argparse.Namespace) -> int:
    from recall_tui.agent.hooks import merge_settings, settings_block

    if not args.vault and not os.environ.get("RECALL_TUI_VAULT"):
        safe_print("recall-tui hook install: pass --vault (or set RECALL_TUI_VAULT)", file=sys.stderr)
        return 2
    root = Path(args.vault or os.environ["RECALL_TUI_VAULT"]).resolve()
    if not root.is_dir():
        safe_print(f"recall-tui hook install: {root}: no such vault folder", file=sys.stderr)
        return 2
    extra = [*(["--transparency"] if args.transparency else []),
             *(["--preset", args.preset] if args.preset else []),
             *(["--embedder", args.embedder] if args.embedder else [])]
    block = settings_block(root, extra=extra)
    if not args.write:
        print(json_text(block, indent=2))
        return 0
    try:
        changed, backup = merge_settings(Path(args.write), block)
    except (ValueError, OSError) as exc:
        safe_print(f"recall-tui hook install: {exc}", file=sys.stderr)
        return 2
    if changed:
        safe_print(f"hooks written to {args.write}" + (f" (previous file kept as {backup})" if backup else ""))
    else:
        safe_print(f"{args.write} already has these hooks; nothing changed")
    return 0


def run(args: argparse.Namespace) -> int:
    if args.event == "install":
        return _install(args)
    t0 = time.perf_counter()
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


def _run(args: argparse.Namespace, event: str, t0: float) -> int:
    from recall_tui.agent import client

    text = _stdin()
    root_arg = args.vault or os.environ.get("RECALL_TUI_VAULT")
    if not root_arg:
        safe_print("recall-tui hook: no vault: pass --vault or set RECALL_TUI_VAULT", file=sys.stderr)
        _print(_empty(event))
        return 0
    root = Path(root_arg)
    if not root.is_dir():
        safe_print(f"recall-tui hook: {root}: no such vault folder", file=sys.stderr)
        _print(_empty(event))
        return 0
    if args.warm:
        client.start_detached(root)
        if client.wait_ready(root) is None:
            safe_print(f"recall-tui hook: the service for {root} did not come up", file=sys.stderr)
        return 0
    payload = _payload(text)
    opts = {"event": event, "preset": args.preset, "embedder": args.embedder, "k": args.k,
            "sources": [s.strip() for s in args.sources.split(",") if s.strip()],
            "transparency": args.transparency}
    out = None
    if not args.no_serve:
        try:
            ans = client.request(root, {"op": "hook", "options": opts, "payload": payload})
            if ans.get("ok"):
                out = ans["output"]
            else:
                safe_print(f"recall-tui hook {event}: service: {ans.get('error')}; recalling here",
                      file=sys.stderr)
        except client.ServiceUnavailable:
            client.start_detached(root)  # for the next prompt; this one recalls here
    if out is None:
        out = _in_process(root, opts, payload)
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

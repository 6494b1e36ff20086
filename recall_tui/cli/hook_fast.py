"""The fast path of `recall-tui hook session-start | prompt-submit`: a warm service answers.

Claude Code starts a fresh process for every prompt, so what this process imports is most of
what the prompt waits for once the service is warm. This module, `recall_tui.cli` and
`recall_tui.agent.client` import only small standard-library modules (no argparse, pathlib,
socket, typing, json; no numpy, apsw, onnxruntime, yaml, textual, rich: tests/test_serve.py
checks `sys.modules`). An installed hook runs it without `site` (recall_tui/launcher.py). `try_service` reads the usual hook options itself and asks the service; it
returns None to hand the hook to the full command (recall_tui/cli/hook.py: argparse with its
warnings, `--no-serve`, `--warm`, a bad vault, no service or a failing one), which then takes
the stdin already read and the service's answer or failure from here (`take_stdin`,
`ask_service`) instead of reading or asking again.
"""

from __future__ import annotations

import os
import sys
import time

from recall_tui.agent import client

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs every prompt a millisecond
    from typing import Any

HOOK_EVENTS = ("session-start", "prompt-submit")
DEFAULT_SOURCES = "startup,clear,compact"
EMBEDDERS = ("auto", "local", "ollama", "none")
BUDGET_MS = {"session-start": 500.0, "prompt-submit": 300.0}
EVENTS = {"session-start": "SessionStart", "prompt-submit": "UserPromptSubmit"}
PAYLOAD_KEYS = ("session_id", "transcript_path", "cwd", "hook_event_name", "source", "prompt")

#: The options this path reads (each with its value's type); anything else goes to argparse.
_VALUED = {"--vault": str, "--preset": str, "--k": int, "--embedder": str, "--sources": str,
           "--repeat-window": int, "--budget-ms": float}
_FLAGS = ("--transparency",)

#: What this process already did before handing over: the stdin it read, and the service's
#: answer (a dict) or failure (ServiceUnavailable), or None when it did not ask.
_taken: tuple[str, dict[str, Any] | BaseException | None] | None = None
#: When `try_service` started (the hook's budget counts from there, a wait for the service too).
_started: float | None = None


def _options(words: list[str]) -> dict[str, Any] | None:
    """`EVENT [--option value | --option=value | --transparency]...` as {option: value}; None
    for anything argparse should judge (another option, an abbreviation, a value that is
    missing, looks like an option, or is invalid)."""
    got: dict[str, Any] = {"event": words[0]}
    i = 1
    while i < len(words):
        name, eq, value = words[i].partition("=")
        if name in _FLAGS and not eq:
            got[name] = True
            i += 1
            continue
        kind = _VALUED.get(name)
        if kind is None:
            return None
        if not eq:
            if i + 1 >= len(words) or words[i + 1].startswith("-"):
                return None
            value = words[i + 1]
        i += 1 if eq else 2
        try:
            got[name] = kind(value)
        except ValueError:
            return None
    if got.get("--k", 1) < 1 or got.get("--embedder", "auto") not in EMBEDDERS:
        return None
    return got


def hook_options(event: str, preset: str | None, embedder: str | None, k: int | None,
                 sources: str | None, transparency: bool, repeat_window: int | None) -> dict[str, Any]:
    """The `options` of a hook request (`recall_tui.agent.hooks.HookOptions.from_dict`)."""
    return {"event": event, "preset": preset, "embedder": embedder, "k": k,
            "sources": [s.strip() for s in (sources or DEFAULT_SOURCES).split(",") if s.strip()],
            "transparency": transparency, "repeat_window": repeat_window}


def read_stdin() -> str:
    try:
        return sys.stdin.read() if sys.stdin is not None and not sys.stdin.isatty() else ""
    except (OSError, ValueError):
        return ""


def _no_lone_surrogate(text: str) -> str:
    """A lone surrogate (JSON allows "\\ud800") cannot be encoded as UTF-8: it would fail the
    socket request and the log line. It becomes U+FFFD; pairs were joined by json.loads."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in text)


def payload(text: str) -> dict[str, str]:
    """Claude Code's payload, the keys the hook reads (strings; missing ones empty)."""
    try:
        obj = client.loads(text) if text.strip() else {}
    except ValueError:
        obj = {}
    obj = obj if isinstance(obj, dict) else {}
    return {k: _no_lone_surrogate(str(obj.get(k) or "")) for k in PAYLOAD_KEYS}


def _warn(message: str) -> None:
    from recall_tui.vault.literal import safe_print

    safe_print(message, file=sys.stderr)


def try_service(words: list[str]) -> int | None:
    """Answer the hook `words` (`EVENT [options]`) from the warm service: print its output and
    return 0; None to let the full command run (see the module docstring)."""
    global _taken, _started
    t0 = _started = time.perf_counter()
    o = _options(words)
    root = (o or {}).get("--vault") or os.environ.get("RECALL_TUI_VAULT")
    if o is None or not root or not os.path.isdir(root) or client.recently_unresponsive(root):
        return None
    event = o["event"]
    text = read_stdin()
    _taken = (text, None)  # from here on, the full command gets the stdin read
    opts = hook_options(event, o.get("--preset"), o.get("--embedder"), o.get("--k"),
                        o.get("--sources"), bool(o.get("--transparency")), o.get("--repeat-window"))
    req = {"op": "hook", "options": opts, "payload": payload(text)}
    try:
        ans = client.request(root, req, timeout=client.hook_timeout())
    except client.ServiceUnavailable as exc:
        _taken = (text, exc)
        return None
    except Exception:  # anything unforeseen: the full command copes (a hook never fails)
        return None
    out = ans.get("text")
    if not ans.get("ok") or not isinstance(out, str):  # an error, or a service without "text"
        _taken = (text, ans)
        return None
    warning = ans.get("warning") if o.get("--preset") is None else ""
    if warning:
        _warn(f"recall-tui hook {event}: {warning}")
    sys.stdout.write(out + "\n")  # json_text of the output, made by the service
    sys.stdout.flush()
    budget = o.get("--budget-ms", BUDGET_MS[event])
    elapsed = (time.perf_counter() - t0) * 1000
    if elapsed > budget:
        _warn(f"recall-tui hook {event}: over the {budget:.0f} ms budget ({elapsed:.0f} ms); "
              "results are complete")
    return 0


def started(default: float) -> float:
    """When the hook started: `try_service`'s start, else `default`."""
    return _started if _started is not None else default


def take_stdin() -> str:
    """The hook's stdin: what the fast path read, else read now."""
    return _taken[0] if _taken is not None else read_stdin()


def ask_service(root: str | os.PathLike[str], req: dict[str, Any]) -> dict[str, Any]:
    """The service's answer to the hook request `req` (ServiceUnavailable when none): the one
    the fast path already got, if it asked (a second wait for a hung service would double a
    prompt's delay)."""
    global _taken
    got = _taken[1] if _taken is not None else None
    _taken = None
    if isinstance(got, BaseException):
        raise got
    if got is not None:
        return got
    return client.request(root, req, timeout=client.hook_timeout())

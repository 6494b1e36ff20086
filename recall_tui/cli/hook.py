"""`recall-tui hook session-start | prompt-submit`: MemoryVault's two Claude Code hooks.

Both read the hook's JSON payload on stdin (`session_id`, `cwd`, and for prompt-submit
`prompt`), find the vault in `--vault` or `$RECALL_TUI_VAULT`, and print

    {"hookSpecificOutput": {"hookEventName": "...", "additionalContext": "..."},
     "systemMessage": "<transparency line>"}

- session-start injects every memory under `_always-load/` ("Loaded N MemoryVault
  always-load entries"); budget 500 ms.
- prompt-submit recalls the top-K memories for the prompt with the `memoryvault` preset
  (by default), drops the ones already injected from `_always-load/`, and injects the rest
  ("Loaded N relevant entries: ..."); budget 300 ms.

Budgets are measured from the start of the command (after Python has started). The work runs
in a worker thread; at the deadline the hook prints what it has and logs a warning to stderr,
and it never fails the prompt (exit 0, empty context when nothing is ready). The embedder is
used only when `--embedder` asks for one *and* it answers within the budget; otherwise the
keyword channels answer alone. To stay inside 300 ms on a warm vault, the parsed vault and its
keyword index are kept in the user's cache folder (`$XDG_CACHE_HOME/recall-tui/hook/`, one
file per vault), keyed by every file's path, size and modification time.
"""

from __future__ import annotations

import argparse
import copyreg
import hashlib
import json
import os
import pickle
import sys
import threading
import time
import types
from pathlib import Path
from typing import Any

from recall_tui.cli._common import positive_int, vault_root
from recall_tui.engine import Engine
from recall_tui.engine.bm25 import KeywordIndex
from recall_tui.engine.config import load_preset
from recall_tui.vault.literal import json_text, safe_print
from recall_tui.vault.model import Role
from recall_tui.vault.reader import read_vault

HELP = "Claude Code hooks: session-start and prompt-submit"
BUDGET_MS = {"session-start": 500.0, "prompt-submit": 300.0}
EVENT = {"session-start": "SessionStart", "prompt-submit": "UserPromptSubmit"}
CACHE_VERSION = 2

def _proxy(d: dict) -> types.MappingProxyType:
    """Rebuild a read-only mapping from the plain dict pickle stored."""
    return types.MappingProxyType(d)


# Memory records hold read-only mappings; let pickle store them as plain dicts.
copyreg.pickle(types.MappingProxyType, lambda m: (_proxy, (dict(m),)))


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("event", choices=("session-start", "prompt-submit"))
    p.add_argument("--vault", help="the vault folder (default: $RECALL_TUI_VAULT)")
    p.add_argument("--preset", default="memoryvault", help="preset for prompt-submit (default: memoryvault)")
    p.add_argument("--k", type=positive_int, help="entries injected by prompt-submit (default: the preset's k)")
    p.add_argument("--embedder", default="none", choices=("auto", "local", "ollama", "none"),
                   help="query embedder for prompt-submit, used only if ready within the budget")
    p.add_argument("--budget-ms", type=float, help="override the time budget")
    p.add_argument("--warm", action="store_true",
                   help="only build the prompt-submit cache for the vault and exit (what the "
                        "hooks start in the background)")


def _payload() -> dict[str, Any]:
    try:
        data = sys.stdin.read() if not sys.stdin.isatty() else ""
        obj = json.loads(data) if data.strip() else {}
        return obj if isinstance(obj, dict) else {}
    except (ValueError, OSError):
        return {}


def _emit(event: str, context: str, line: str) -> None:
    out = {"hookSpecificOutput": {"hookEventName": EVENT[event], "additionalContext": context}}
    if line:
        out["systemMessage"] = line
    sys.stdout.write(json_text(out) + "\n")  # exact text; no raw control character
    sys.stdout.flush()


def _format(m, body: bool = True) -> str:
    text = m.body_without_related.strip() if body else m.summary
    return f"### {m.title} ({m.id})\n{text}\n"


def _file_key(root: Path) -> str:
    """Fingerprint of every Markdown file's path, size and mtime (cheap: stat only)."""
    h = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for f in sorted(filenames):
            if f.endswith((".md", ".jsonl")):
                p = os.path.join(dirpath, f)
                st = os.stat(p)
                h.update(f"{p}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return h.hexdigest()


def _cache_path(root: Path) -> Path:
    """The hook cache lives in the user's own cache folder, not in the vault: a pickle is
    code, and a vault folder may come from elsewhere (a git checkout, a sync)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    name = hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:24]
    return Path(base) / "recall-tui" / "hook" / f"{name}.pickle"


def _cache_fresh(root: Path) -> bool:
    """Whether the hook cache matches the vault's files right now."""
    try:
        with open(_cache_path(root), "rb") as fh:
            ver, ck, _params = pickle.load(fh)  # the header only
        return ver == CACHE_VERSION and ck == _file_key(root)
    except (OSError, pickle.PickleError, EOFError, ValueError, TypeError, AttributeError):
        return False


def _warm_in_background(root: Path, preset: str) -> None:
    """Build the cache in a detached process, so this hook returns at once and the next
    prompt finds the cache ready."""
    import subprocess

    try:
        subprocess.Popen(
            [sys.executable, "-m", "recall_tui", "hook", "prompt-submit", "--warm",
             "--vault", str(root), "--preset", preset],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True)
    except OSError as exc:
        safe_print(f"recall-tui hook: could not start the cache warmer: {exc}", file=sys.stderr)


def _lean_config(preset: str, root: Path):
    """The preset without the channels that need the index (they cannot answer in time)."""
    lean = load_preset(preset, root)
    for path in ("fuzzy.enabled", "signature.enabled", "turns.enabled", "consolidation.enabled",
                 "cache.enabled", "tracking.enabled"):
        lean = lean.with_value(path, False)
    return lean


def _load_vault_cached(root: Path, cfg):
    """(vault, keyword index) from the hook cache when no file changed, else read, build
    and store them."""
    key = _file_key(root)
    kw_params = (cfg.keyword.k1, cfg.keyword.b, cfg.keyword.epsilon, cfg.parse.stem,
                 cfg.parse.stop_words)
    cache = _cache_path(root)
    try:
        with open(cache, "rb") as fh:
            ver, ck, params = pickle.load(fh)  # header first: no payload read on a miss
            if ver == CACHE_VERSION and ck == key and params == kw_params:
                vault, kidx = pickle.load(fh)
                return vault, kidx, kw_params
    except (OSError, pickle.PickleError, EOFError, ValueError, TypeError, AttributeError):
        pass
    vault = read_vault(root)
    kidx = KeywordIndex(list(vault.memories.values()), k1=kw_params[0], b=kw_params[1],
                        epsilon=kw_params[2], stem=kw_params[3], stop_words=kw_params[4])
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        tmp = cache.with_suffix(".tmp")
        with open(tmp, "wb") as fh:
            pickle.dump((CACHE_VERSION, key, kw_params), fh, protocol=pickle.HIGHEST_PROTOCOL)
            pickle.dump((vault, kidx), fh, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, cache)
    except OSError:
        pass  # a read-only vault: no cache, just slower
    return vault, kidx, kw_params


def _session_start(root: Path, result: dict) -> None:
    folder = root / "_always-load"
    if not folder.is_dir():
        result["entries"] = []
        return
    vault = read_vault(folder)  # only the always-load files, not the whole vault
    result["entries"] = [m for m in vault.memories.values() if m.role in (Role.NORMAL, Role.ALWAYS_LOAD)]


def _prompt_submit(root: Path, args, prompt: str, result: dict) -> None:
    cfg = load_preset(args.preset, root)
    lean = _lean_config(args.preset, root)
    vault, kidx, params = _load_vault_cached(root, lean)
    result["stage"] = "vault read"
    engine = Engine(vault, None, lean.with_value("keyword.enabled", False), preset=args.preset)
    engine.config = lean
    engine._kw[params] = kidx  # the cached keyword index of this vault
    always = {m.id for m in vault.memories.values() if m.role is Role.ALWAYS_LOAD}
    k = args.k or cfg.k
    trace = engine.recall(prompt, k=k + len(always))
    result["keyword_hits"] = [h for h in trace.hits if h.id not in always][:k]
    result["stage"] = "keyword recall"
    if args.embedder != "none":
        from recall_tui.index.embed import make_embedder
        from recall_tui.index.store import Index

        emb, _ = make_embedder(args.embedder)
        index = Index.open(vault, emb, read_only=False)
        full = Engine(vault, index, cfg.with_value("cache.enabled", False), preset=args.preset)
        trace = full.recall(prompt, k=k + len(always))
        result["full_hits"] = [h for h in trace.hits if h.id not in always][:k]
        index.close()
    result["vault"] = vault


def run(args: argparse.Namespace) -> int:
    t0 = time.perf_counter()
    event = args.event
    budget = args.budget_ms if args.budget_ms is not None else BUDGET_MS[event]
    payload = _payload()
    root_arg = args.vault or os.environ.get("RECALL_TUI_VAULT")
    if not root_arg:
        safe_print("recall-tui hook: no vault: pass --vault or set RECALL_TUI_VAULT", file=sys.stderr)
        _emit(event, "", "")
        return 0
    root = vault_root(root_arg)
    if not root.is_dir():
        safe_print(f"recall-tui hook: {root}: no such vault folder", file=sys.stderr)
        _emit(event, "", "")
        return 0
    if args.warm:
        _load_vault_cached(root, _lean_config(args.preset, root))
        return 0
    if not _cache_fresh(root):  # session-start warms it for the session's first prompt
        _warm_in_background(root, args.preset)
    result: dict[str, Any] = {}
    errors: list[str] = []

    def work() -> None:
        try:
            if event == "session-start":
                _session_start(root, result)
            else:
                _prompt_submit(root, args, str(payload.get("prompt") or ""), result)
        except Exception as exc:  # a hook must never block the agent: report and go on
            errors.append(f"{type(exc).__name__}: {exc}")

    worker = threading.Thread(target=work, daemon=True)
    worker.start()
    remaining = budget / 1000 - (time.perf_counter() - t0)
    worker.join(max(0.0, remaining))
    elapsed = (time.perf_counter() - t0) * 1000
    if worker.is_alive():
        safe_print(f"recall-tui hook {event}: over the {budget:.0f} ms budget after {elapsed:.0f} ms "
                   f"(reached: {result.get('stage', 'start')}); returning partial results",
              file=sys.stderr)
    elif elapsed > budget:
        safe_print(f"recall-tui hook {event}: over the {budget:.0f} ms budget ({elapsed:.0f} ms); "
                   "results are complete", file=sys.stderr)
    for e in errors:
        safe_print(f"recall-tui hook {event}: {e}", file=sys.stderr)
    if event == "session-start":
        entries = list(result.get("entries", []))
        line = f"Loaded {len(entries)} MemoryVault always-load entries"
        context = line + "\n\n" + "\n".join(_format(m) for m in entries)
        _emit(event, context.strip() + "\n", line)
        return 0
    hits = result.get("full_hits")
    if hits is None:
        hits = result.get("keyword_hits", [])
        if args.embedder != "none" and "keyword_hits" in result:
            safe_print(f"recall-tui hook {event}: embedder not ready within the budget; "
                       "keyword channels only", file=sys.stderr)
    vault = result.get("vault")
    line = f"Loaded {len(hits)} relevant entries: " + ", ".join(h.id for h in hits)
    blocks = []
    for h in hits:
        m = vault.memories.get(h.id) if vault is not None else None
        blocks.append(_format(m, body=False) if m is not None else f"### {h.title} ({h.id})\n{h.summary}\n")
    _emit(event, (line + "\n\n" + "\n".join(blocks)).strip() + "\n", line)
    return 0

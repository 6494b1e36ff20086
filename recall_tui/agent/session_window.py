"""Which memories a Claude Code session got at which prompt, so the prompt hook does not inject
the same memory again within a few prompts (`--repeat-window N`, default 3: a memory injected
at prompt P is not injected again before prompt P + N). A SessionStart with source `compact`
or `clear` re-arms it (the conversation lost what was injected).

One small JSON file per session under `.recall/sessions/` (the name is a hash of the session
id), written atomically. Files untouched for two days are removed. A vault that cannot be
written simply has no window. Standard library only.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

KEEP_S = 2 * 24 * 3600


def _path(root: Path, session_id: str) -> Path:
    name = hashlib.sha256(session_id.encode("utf-8", "surrogatepass")).hexdigest()[:24]
    return root / ".recall" / "sessions" / f"{name}.json"


@dataclass
class SessionWindow:
    """A session's prompt count and the prompt at which each memory was last injected."""

    root: Path
    session_id: str
    prompt: int = 0
    injected: dict[str, int] = field(default_factory=dict)

    @classmethod
    def load(cls, root: Path, session_id: str) -> SessionWindow:
        w = cls(Path(root), session_id)
        try:
            d = json.loads(_path(w.root, session_id).read_text(encoding="utf-8"))
            w.prompt = int(d.get("prompt") or 0)
            w.injected = {str(k): int(v) for k, v in dict(d.get("injected") or {}).items()}
        except (OSError, ValueError, TypeError, AttributeError):
            pass
        return w

    def recent(self, window: int) -> dict[str, int]:
        """The memories injected fewer than `window` prompts before the current one
        (id -> the prompt number it was injected at)."""
        return {mid: p for mid, p in self.injected.items() if 0 < self.prompt - p < window}

    def record(self, ids: list[str]) -> None:
        for mid in ids:
            self.injected[mid] = self.prompt

    def rearm(self) -> None:
        self.injected.clear()

    def save(self) -> bool:
        """Write the file (atomically); False when the vault cannot be written."""
        p = _path(self.root, self.session_id)
        try:
            p.parent.mkdir(parents=True, exist_ok=True)
            tmp = p.with_name(f".{p.name}.{os.getpid()}.tmp")
            tmp.write_text(json.dumps({"prompt": self.prompt, "injected": self.injected}),
                           encoding="utf-8")
            os.replace(tmp, p)
            _prune(p.parent)
            return True
        except OSError:
            return False


def _prune(folder: Path) -> None:
    cutoff = time.time() - KEEP_S
    try:
        for e in os.scandir(folder):
            if e.name.endswith(".json") and e.stat().st_mtime < cutoff:
                os.unlink(e.path)
    except OSError:
        pass

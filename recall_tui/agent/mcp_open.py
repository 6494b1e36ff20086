"""The vault of `recall-tui mcp`, opened on a background thread as the server starts.

Standard library only at import: `recall-tui mcp` starts this thread *before* it imports the
MCP SDK and pydantic (seconds of imports on a busy machine), so the vault's text channels are
usually open by the time the client's `initialize` is answered, and the first `recall` waits
for little or nothing. The thread imports the engine itself (`RecallCore`), opens the vault
with the vectors deferred (`defer_vectors=True`), then makes the vectors behind it
(`RecallCore.fill_vectors`) and starts watching the vault. See `mcp_server`'s docstring.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from recall_tui.agent.core import RecallCore


class VaultLoader:
    """The vault opened in the background as the server starts (see the module docstring)."""

    def __init__(self, root: Path, preset: str | None, embedder: str | None, watch: bool):
        self.root, self.preset, self.embedder, self.watch = root, preset, embedder, watch
        self.core: RecallCore | None = None
        self.error: str = ""
        self.usable = threading.Event()
        self.closed = False
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._run, name="mcp-open", daemon=True)

    def start(self) -> VaultLoader:
        self.thread.start()
        return self

    def _open(self) -> RecallCore:
        from recall_tui.agent.core import RecallCore

        return RecallCore(self.root, preset=self.preset, embedder=self.embedder, index="open",
                          path="mcp", defer_vectors=True)

    def _run(self) -> None:
        try:
            core = self._open()
        except Exception as exc:
            self.error = f"cannot open the vault {self.root}: {type(exc).__name__}: {exc}"
            self.usable.set()
            return
        core.warm_up()  # while the handshake runs: the first recall finds it built
        with self.lock:
            self.core = core
        self.usable.set()
        try:
            core.fill_vectors(self.stop)
        except Exception:
            pass
        with self.lock:
            if self.closed or self.stop.is_set() or self.core is not core:
                return
            if self.watch:
                core.watch()  # (it reads the folder again first: what changed meanwhile)

    def get(self) -> RecallCore:
        self.usable.wait()
        with self.lock:
            core = self.core
        if core is None:
            from mcp.server.mcpserver.exceptions import ToolError

            raise ToolError(self.error or "the vault is not open")
        core.refresh_config()
        if not core.embedder_changed():
            return core
        from recall_tui.agent.core import RecallCore

        with self.lock:  # the active embedder changed: a new core (vectors made in the open)
            old = self.core
            self.core = RecallCore(self.root, preset=self.preset, embedder=self.embedder,
                                   index="open", path="mcp")
            if self.watch:
                self.core.watch()
            new = self.core
        if old is not None:
            old.close()
        return new

    def close(self) -> None:
        self.stop.set()
        if self.thread.is_alive():
            self.thread.join(60)  # ends after its current batch: no thread left in the embedder
        with self.lock:
            self.closed = True
            core, self.core = self.core, None
        if core is not None:
            core.close()

"""`RecallCore`: one vault, its index, its engines and embedder, kept loaded; what the warm
service, the MCP server and a hook's in-process fallback all recall through.

Every recall served to an agent goes through `hook()` or `recall_for_agent()`, which record
it in the flight recorder (`recall_tui.agent.log`). Recalls are serialised by one lock (each
takes milliseconds; the index connection and the engine cache are shared).

No thread is ever left running inside the embedder: `close()` stops the watcher, closes the
index and drops the ONNX session, so a process may exit right after (the hook used to abort
with exit 134 when onnxruntime was still busy in a daemon thread at interpreter exit).
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from recall_tui.agent import hooks as H
from recall_tui.agent.active import resolve
from recall_tui.agent.log import AgentRecall, append_recall, new_id, now_iso
from recall_tui.engine import Engine, Filters
from recall_tui.engine.config import load_preset
from recall_tui.engine.stages.parse import parse_time
from recall_tui.vault.model import Role
from recall_tui.vault.reader import read_vault


class RecallCore:
    """A vault kept loaded. `index="open"` builds/updates the index (the service),
    `"read-only"` uses it as it is (a hook's fallback: never writes, never embeds the vault),
    `"none"` recalls without one (keyword, fuzzy, topic, graph channels)."""

    def __init__(self, root: str | Path, *, preset: str | None = None,
                 embedder: str | None = None, index: str = "open", path: str = "in-process"):
        self.root = Path(root)
        act = resolve(self.root, preset, embedder)
        self.preset, self.embedder_kind, self.config_source = act
        self.path = path
        self.lock = threading.RLock()
        self.vault = read_vault(self.root, cache=(index == "open"))  # a hook never writes
        self.cfg = load_preset(self.preset, self.root)
        self.embedder = None
        self.index = None
        if index != "none" and act.embedder != "none":
            from recall_tui.index.embed import EmbedderUnavailable, make_embedder
            try:
                self.embedder, _ = make_embedder(act.embedder)
            except EmbedderUnavailable:
                self.embedder = None
        if index != "none":
            from recall_tui.index.embed import NoEmbedder
            from recall_tui.index.store import Index
            emb = self.embedder or NoEmbedder()
            try:
                self.index = Index.open(self.vault, emb, read_only=(index == "read-only"))
            except Exception:  # no usable index: recall without it
                self.index = None
        self.engines: dict[str, Engine] = {}
        self.engine = self.engine_for(self.preset)
        self.watcher = None

    # --- engines -------------------------------------------------------------------------

    def engine_for(self, preset: str | None) -> Engine:
        """The engine for a preset (the active one by default), sharing vault and index.
        Raises ValueError for an unknown preset."""
        name = preset or self.preset
        eng = self.engines.get(name)
        if eng is None:
            cfg = self.cfg if name == self.preset else load_preset(name, self.root)
            eng = self.engines[name] = Engine(self.vault, self.index, cfg, preset=name)
        return eng

    def watch(self) -> None:
        """Follow changes on disk (as the TUI does): re-read, re-index, swap into every engine."""
        from recall_tui.index.watch import VaultWatcher

        def changed(summary) -> None:
            with self.lock:
                self.vault = self.engine.vault
                for eng in self.engines.values():
                    if eng is not self.engine:
                        eng.set_vault(self.vault, self.index)

        self.watcher = VaultWatcher(self.engine, changed).start()

    def reload_if_changed(self) -> None:
        """Without a watcher: pick up changed files before a recall (cheap stat walk)."""
        from recall_tui.index.watch import refresh

        with self.lock:
            refresh(self.engine)
            self.vault = self.engine.vault
            for eng in self.engines.values():
                if eng is not self.engine:
                    eng.set_vault(self.vault, self.index)

    def close(self) -> None:
        if self.watcher is not None:
            self.watcher.stop()
            self.watcher = None
        with self.lock:
            if self.index is not None:
                try:
                    self.index.close()
                except Exception:
                    pass
                self.index = None
            emb = self.embedder
            if emb is not None and hasattr(emb, "_session"):
                with getattr(emb, "_lock", threading.Lock()):
                    emb._session = None  # release the ONNX session (and its threads) now

    # --- recalls -------------------------------------------------------------------------

    def always_load(self) -> list[Any]:
        return sorted((m for m in self.vault.memories.values() if m.role is Role.ALWAYS_LOAD),
                      key=lambda m: m.path)

    def recall(self, query: str, *, k: int | None = None, preset: str | None = None,
               include_superseded: bool | None = None, as_of: str | None = None,
               types: tuple[str, ...] = (), why: tuple[str, ...] = ()):
        """One recall; raises ValueError for a bad preset or as_of."""
        at = parse_time(as_of) if as_of else None
        with self.lock:
            eng = self.engine_for(preset)
            filters = Filters(types=tuple(types), include_superseded=include_superseded)
            return eng.recall(query, k=k, as_of=at, why=list(why), filters=filters)

    def hook(self, opts: H.HookOptions, payload: H.HookPayload) -> tuple[dict[str, Any], AgentRecall]:
        """Run a hook event: the JSON to print and the flight-recorder record (appended)."""
        t0 = time.perf_counter()
        rec = AgentRecall(id=new_id(), time=now_iso(), served_by="hook",
                          event=H.EVENTS.get(opts.event, opts.event), session_id=payload.session_id,
                          prompt=payload.prompt, source=payload.source, cwd=payload.cwd,
                          transcript_path=payload.transcript_path, path=self.path,
                          preset=opts.preset or self.preset,
                          embedder=self.embedder.name if self.embedder is not None else "none")
        line = ""
        if opts.event == "session-start":
            if payload.source and payload.source not in opts.sources:
                rec.skipped = f"source {payload.source!r} not injected (injects on {', '.join(opts.sources)})"
                out = H.output(opts.event, "")
            else:
                with self.lock:
                    entries = self.always_load()
                blocks = [H.memory_block(m, body=True) for m in entries]
                text, ids, left = H.fit(H.session_start_head, blocks, opts.max_context)
                line = f"Loaded {len(ids)} MemoryVault always-load entries"
                rec.injected_ids, rec.left_out_ids, rec.injected_text = ids, left, text
                out = H.output(opts.event, text, line if opts.transparency else "")
        else:
            with self.lock:
                eng = self.engine_for(opts.preset)
                always = {m.id for m in self.always_load()}
                k = opts.k or eng.config.k
                trace = eng.recall(payload.prompt, k=k + len(always))
                rec.config_hash = trace.config_hash
                rec.trace_dict = trace.to_dict()
                hits = [h for h in trace.hits if h.id not in always][:k]
                blocks = []
                for h in hits:
                    m = self.vault.memories.get(h.id)
                    blocks.append(H.memory_block(m, body=False) if m is not None
                                  else H.Block(h.id, f"### {h.title} ({h.id})\n{h.summary}\n"))
            text, ids, left = H.fit(H.prompt_head, blocks, opts.max_context)
            line = f"Loaded {len(ids)} relevant entries: " + ", ".join(ids)
            rec.injected_ids, rec.left_out_ids, rec.injected_text = ids, left, text
            out = H.output(opts.event, text, line if opts.transparency else "")
        rec.ms = round((time.perf_counter() - t0) * 1000, 2)
        append_recall(self.root, rec)
        return out, rec

    def recall_for_agent(self, query: str, *, served_by: str = "mcp", event: str = "recall",
                         session_id: str = "", **kw: Any):
        """A recall an agent asked for (MCP): recorded, returns (trace, record)."""
        t0 = time.perf_counter()
        trace = self.recall(query, **kw)
        rec = AgentRecall(id=new_id(), time=now_iso(), served_by=served_by, event=event,
                          session_id=session_id, prompt=query, path=self.path,
                          preset=trace.preset, config_hash=trace.config_hash,
                          embedder=self.embedder.name if self.embedder is not None else "none",
                          injected_ids=[h.id for h in trace.hits], trace_dict=trace.to_dict())
        rec.ms = round((time.perf_counter() - t0) * 1000, 2)
        append_recall(self.root, rec)
        return trace, rec

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
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from recall_tui.agent import hooks as H
from recall_tui.agent.active import ConfigWatch, resolve_active
from recall_tui.agent.log import AgentRecall, append_recall, clean_text, new_id, now_iso
from recall_tui.agent.session_window import SessionWindow
from recall_tui.engine import Engine, Filters
from recall_tui.engine.config import load_preset
from recall_tui.engine.engines import EngineSet
from recall_tui.engine.pipeline import settle_heap
from recall_tui.engine.stages.parse import parse_time
from recall_tui.vault.model import Role, Vault
from recall_tui.vault.reader import read_vault

if TYPE_CHECKING:
    from recall_tui.index.watch import VaultWatcher

#: The query of `RecallCore.warm_up` (its last word is in no vault's vocabulary).
WARM_UP_QUERY = "warm-up recall qzxjvk"


def _embed_ms(trace: Any) -> float:
    """The query embedding's milliseconds, as the vector stage reported them (0 without it,
    and for a recall answered from the engine's cache, whose trace keeps the first one's)."""
    if getattr(trace, "cache_hit", False):
        return 0.0
    st = trace.stage("vector")
    try:
        return float(dict(st.info).get("embed_ms", 0.0)) if st is not None else 0.0
    except ValueError:
        return 0.0


class _Stopped(Exception):
    """Raised inside `fill_vectors` when asked to stop."""


class RecallCore:
    """A vault kept loaded. `index="open"` builds/updates the index (the service),
    `"read-only"` uses it as it is (a hook's fallback: never writes, never embeds the vault),
    `"none"` recalls without one (keyword, fuzzy, topic, graph channels)."""

    def __init__(self, root: str | Path, *, preset: str | None = None,
                 embedder: str | None = None, index: str = "open", path: str = "in-process",
                 defer_vectors: bool = False):
        self.root = Path(root)
        self.flags = (preset, embedder)
        self.config_watch = ConfigWatch(self.root, preset, embedder)
        act, self.warning = resolve_active(self.root, preset, embedder)
        """`warning`: the active preset is missing and `default` is used (else "")."""
        self.preset, self.embedder_kind, self.config_source = act
        self.path = path
        self.lock = threading.RLock()
        vault = read_vault(self.root, cache=(index == "open"))  # a hook never writes
        try:
            self.cfg = load_preset(self.preset, self.root)
        except ValueError as exc:  # the active preset is broken (a flag's is the caller's error)
            if preset is not None:
                raise
            self.warning = f"active preset {self.preset!r} cannot be loaded ({exc}); recalling with 'default'"
            self.preset = "default"
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
                self.index = Index.open(vault, emb, read_only=(index == "read-only"),
                                        defer_vectors=defer_vectors and index == "open")
            except Exception:  # no usable index: recall without it
                self.index = None
        self._always: tuple[weakref.ref[Vault], tuple[Any, ...]] | None = None
        self.engines = EngineSet(vault, self.index, root=self.root, lock=self.lock)
        """One engine per preset asked for, sharing the vault and the index (and `lock`)."""
        self.engine = self.engines.for_preset(self.preset, self.cfg)
        settle_heap(vault)  # the open vault and index out of the collector's full passes

    # --- engines -------------------------------------------------------------------------

    @property
    def vault(self) -> Vault:
        """The vault as last read (the engine set swaps a re-read one in)."""
        return self.engines.vault

    @property
    def watcher(self) -> VaultWatcher | None:
        """The running watcher (`watch()`), else None."""
        return self.engines.watcher

    def engine_for(self, preset: str | None) -> Engine:
        """The engine for a preset (the active one by default), sharing vault and index.
        Raises ValueError for an unknown preset."""
        name = preset or self.preset
        return self.engines.for_preset(name, self.cfg if name == self.preset else None)

    def refresh_config(self) -> bool:
        """Follow the vault's active configuration by content (`ConfigWatch`): when
        `.recall/active.json` or the active preset's file changed, reload the presets of every
        engine (the vault and index stay). True when it did. Cheap when nothing changed (a few
        stats). A changed embedder needs a new core: see `embedder_changed()`."""
        if not self.config_watch.changed():
            return False
        act, warning = resolve_active(self.root, *self.flags)
        try:
            cfg = load_preset(act.preset, self.root)
        except ValueError as exc:  # e.g. half-edited TOML: keep recalling as before, and say so
            self.warning = f"preset {act.preset!r} cannot be loaded ({exc}); still recalling with {self.preset!r}"
            return False
        with self.lock:
            self.preset, self.config_source, self.warning = act.preset, act.source, warning
            self.cfg = cfg
            self.engines.reload_configs({self.preset: cfg})
            self.engine = self.engine_for(self.preset)
        return True

    def embedder_changed(self) -> bool:
        """The active embedder is no longer the one this core loaded (a new core is needed)."""
        act, _ = resolve_active(self.root, *self.flags)
        return act.embedder != self.embedder_kind

    def fill_vectors(self, stop: threading.Event | None = None) -> None:
        """Make the vectors an `open(defer_vectors=True)` left out (slow: embeds the vault),
        then let every engine use them. Recalls go on meanwhile without the vector channel.
        `stop` set ends it after the batch being embedded (so `close()` never races a thread
        inside the embedder)."""
        idx = self.index
        if idx is None or idx.embedding_progress() is None:
            return

        def progress(_done: int, _total: int, _phase: str) -> None:
            if stop is not None and stop.is_set():
                raise _Stopped

        try:
            idx.fill_vectors(progress=progress)
        except _Stopped:
            return
        if stop is not None and stop.is_set():
            return
        self.engines.vectors_changed()
        self.release_model_memory()  # the bulk embedding's arena: most of an idle service
        self.warm_up()  # the model loaded again now, for one query, not at the next prompt

    def release_model_memory(self) -> None:
        """Drop the embedder's ONNX session. onnxruntime's memory arena grows to the largest
        batch the session ran and never shrinks: after embedding the sample vault in batches
        the process held ~570 MB, ~90 MB before. The next query embedding loads the model
        again (a fraction of a second, once), with an arena sized for one query."""
        if self.embedder is not None:
            self.embedder.release()

    def warm_up(self) -> None:
        """Build now what the first recall would build lazily (the floor's calibration, the
        fuzzy vocabulary, the query embedder's session): a query with a word no vault has
        (so the fuzzy stage looks for a correction). Not logged. Never raises."""
        try:
            self.recall(WARM_UP_QUERY, k=1)
        except Exception:
            pass

    @staticmethod
    def vector_note(trace: Any) -> str:
        """What to tell the agent when this recall ran without the vector channel because the
        vectors are still being made (read from the trace: "" otherwise)."""
        st = trace.stage("vector")
        if st is None or not st.skipped or not st.reason.startswith("embedding "):
            return ""
        return (f"vector channel still building ({st.reason}): these results come from the "
                "keyword, fuzzy, topic and graph channels")

    def watch(self) -> None:
        """Follow changes on disk (as the TUI does): re-read, re-index, swap into every engine
        (the engine set's watcher). Nothing when it watches already."""
        if self.engines.watcher is None:
            self.engines.watch(lambda _summary: None)

    def close(self) -> None:
        self.engines.stop_watching()
        with self.lock:
            if self.index is not None:
                try:
                    self.index.close()
                except Exception:
                    pass
                self.index = None
            if self.embedder is not None:
                self.embedder.release()  # the ONNX session (and its threads) go now

    # --- recalls -------------------------------------------------------------------------

    def always_load(self) -> list[Any]:
        """The `_always-load/` memories by path: worked out once per vault read, not per
        prompt (every prompt hook excludes them: a pass over all memories, ~100k on a large
        vault). Kept with a weak reference to the vault it came from, so a re-read vault
        is never held in memory for it."""
        vault = self.vault
        got = self._always
        if got is None or got[0]() is not vault:
            got = self._always = (weakref.ref(vault), tuple(sorted(
                (m for m in vault.memories.values() if m.role is Role.ALWAYS_LOAD),
                key=lambda m: m.path)))
        return list(got[1])

    def recall(self, query: str, *, k: int | None = None, preset: str | None = None,
               include_superseded: bool | None = None, as_of: str | None = None,
               types: tuple[str, ...] = (), why: tuple[str, ...] = ()):
        """One recall; raises ValueError for a bad preset or as_of."""
        at = parse_time(as_of) if as_of else None
        query = clean_text(query)  # lone surrogates (invalid UTF-16 from a client) -> U+FFFD
        with self.lock:
            eng = self.engine_for(preset)
            filters = Filters(types=tuple(types), include_superseded=include_superseded)
            return eng.recall(query, k=k, as_of=at, why=list(why), filters=filters)

    def hook(self, opts: H.HookOptions, payload: H.HookPayload,
             phases: dict[str, float] | None = None) -> tuple[dict[str, Any], AgentRecall]:
        """Run a hook event: the JSON to print and the flight-recorder record (appended).
        `phases` (the service's request timing) gets the milliseconds of `recall` (the
        pipeline, `embed` of it the query embedding), `format` (the text injected) and
        `record` (the trace's dict and the log line)."""
        out, rec, record = self.hook_then_record(opts, payload, phases)
        record()
        return out, rec

    def hook_then_record(self, opts: H.HookOptions, payload: H.HookPayload,
                         phases: dict[str, float] | None = None
                         ) -> tuple[dict[str, Any], AgentRecall, Callable[[], bool]]:
        """`hook` without its last step: the JSON to print, the record, and `record()`, which
        saves the session's repeat window, completes the record (the trace's dict) and
        appends it to the flight recorder. The
        service calls it once the answer is sent, so the prompt never waits for the log
        (RecallService keeps the count of those pending and writes them before it exits)."""
        t0 = time.perf_counter()
        t_recall = t_format = t0
        made: Any = None  # the prompt's trace (a SessionStart runs no recall)
        window: SessionWindow | None = None  # the session's repeat window, to save
        rec = AgentRecall(id=new_id(), time=now_iso(), served_by="hook",
                          event=H.EVENTS.get(opts.event, opts.event), session_id=payload.session_id,
                          prompt=payload.prompt, source=payload.source, cwd=payload.cwd,
                          transcript_path=payload.transcript_path, path=self.path,
                          preset=opts.preset or self.preset,
                          embedder=self.embedder.name if self.embedder is not None else "none")
        line = ""
        if opts.event == "session-start":
            if payload.source in ("compact", "clear") and payload.session_id:
                win = SessionWindow.load(self.root, payload.session_id)  # the context was reset:
                win.rearm()                                              # re-arm the repeat window
                win.save()
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
            win = None
            if opts.repeat_window > 0 and payload.session_id:
                win = SessionWindow.load(self.root, payload.session_id)
                win.prompt += 1
            with self.lock:
                eng = self.engine_for(opts.preset)
                k = opts.k or eng.config.k
                trace = eng.recall(payload.prompt, k=k, filters=self._hook_filters(win, opts.repeat_window))
                t_recall = time.perf_counter()
                made = trace
                if phases is not None:
                    phases["embed"] = _embed_ms(trace)
                rec.config_hash = trace.config_hash
                blocks = []
                for h in trace.hits[:k]:
                    m = self.vault.memories.get(h.id)
                    blocks.append(H.memory_block(m, body=False) if m is not None
                                  else H.Block(h.id, f"### {h.title} ({h.id})\n{h.summary}\n"))
            text, ids, left = H.fit(H.prompt_head, blocks, opts.max_context)
            if win is not None:
                win.record(ids)
                window = win  # saved with the record, off the answer's path
            line = f"Loaded {len(ids)} relevant entries: " + ", ".join(ids)
            rec.injected_ids, rec.left_out_ids, rec.injected_text = ids, left, text
            out = H.output(opts.event, text, line if opts.transparency else "")
            t_format = time.perf_counter()
        rec.ms = round((time.perf_counter() - t0) * 1000, 2)
        rec.warning = self.warning  # the active preset missing: `default` used (mcp18's line)
        if phases is not None and t_recall > t0:
            phases["recall"] = round((t_recall - t0) * 1000, 3)
            phases["format"] = round((t_format - t_recall) * 1000, 3)

        def record() -> bool:
            t1 = time.perf_counter()
            if window is not None:
                window.save()
            if made is not None:
                rec.trace_dict = made.to_dict()
            done = append_recall(self.root, rec)
            if phases is not None:
                phases["record"] = round((time.perf_counter() - t1) * 1000, 3)
            return done

        return out, rec, record

    def _hook_filters(self, win: SessionWindow | None, window: int) -> Filters:
        """The prompt hook's exclusions, each with its reason (the filter stage's drop reason,
        kept in the trace the log records): the always-load entries (SessionStart injected
        them) and what this session got within the repeat window. The hook then asks the
        engine for exactly the k it injects."""
        ids: dict[str, str] = {m.id: "always-load (injected at session start)"
                               for m in self.always_load()}
        if win is not None:
            for mid, p in sorted(win.recent(window).items(), key=lambda kv: kv[1]):
                ids.setdefault(mid, f"injected at prompt {p} of this session (repeat window "
                                    f"{window}; this is prompt {win.prompt})")
        return Filters(exclude=tuple(ids), exclude_why=tuple(ids.values()))

    def recall_for_agent(self, query: str, *, served_by: str = "mcp", event: str = "recall",
                         session_id: str = "", **kw: Any):
        """A recall an agent asked for (MCP): returns (trace, record). The record is not
        appended yet: the caller sets what the agent got (`injected_text`, the exact bytes it
        received; `injected_ids` for a recall only) and calls `record()`."""
        t0 = time.perf_counter()
        trace = self.recall(query, **kw)
        rec = AgentRecall(id=new_id(), time=now_iso(), served_by=served_by, event=event,
                          session_id=session_id, prompt=clean_text(query), path=self.path,
                          preset=trace.preset, config_hash=trace.config_hash,
                          embedder=self.embedder.name if self.embedder is not None else "none",
                          trace_dict=trace.to_dict(), warning=self.warning)
        rec.ms = round((time.perf_counter() - t0) * 1000, 2)
        return trace, rec

    def record(self, rec: AgentRecall) -> bool:
        """Append a record to the vault's flight recorder (never raises)."""
        return append_recall(self.root, rec)

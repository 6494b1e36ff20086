"""The warm recall service behind `recall-tui serve`: one vault kept loaded (vault, index,
keyword structures, embedder) and watched for changes, answering recalls over a Unix socket
(see `recall_tui.agent.client` for the protocol and where the socket lives).

- One service per vault: it holds an exclusive lock on `.recall/serve.lock` for its life; a
  second one started at the same time sees the lock and exits 0.
- Several clients at once: one thread per connection; recalls share one lock in the core.
- Follows the vault's active configuration by content, not by name: before each request a
  `ConfigWatch` stats `.recall/active.json` and the active preset's file(s) (hashing them again
  only when a stat changed); a changed preset (`preset use`, or `tune --save mine --overwrite`)
  reloads the engines' configuration, a changed embedder reloads the core.
- Text from a client may hold lone surrogates (`"\ud800"` is valid JSON): they become U+FFFD
  in the request before the recall (and in the answer), so the recall runs and is logged.
- Answers as soon as the vault's text is indexed: the vectors of a fresh vault are made on a
  background thread (`Index.open(defer_vectors=True)`, `RecallCore.fill_vectors`), recalls
  meanwhile run without the vector channel (their trace says `embedding N / M`); then the
  vault is watched.
- Drops the local model's ONNX session after `model_idle_s` seconds without a request
  (default `DEFAULT_MODEL_IDLE_S`, `RECALL_TUI_MODEL_IDLE`; 0: never), which takes an idle
  service on the sample vault from ~205 to ~117 MB; the next recall that embeds a query loads
  it again (the same vectors; that one prompt pays the model load).
- Answers a hook first and writes its flight-recorder record after the answer is sent
  (`RecallCore.hook_then_record`); a stopping service waits for the records still pending,
  so the log holds every recall answered. Times each hook request by phase (`{"op":
  "stats"}`, `phase_stats`).
- Exits after `idle_s` seconds without a request (default 30 minutes), on SIGTERM, or on a
  `{"op": "stop"}` request; removes its socket on the way out.
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import socketserver
import statistics
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

from recall_tui.agent import hooks as H
from recall_tui.agent.active import read_active
from recall_tui.agent.client import DEFAULT_IDLE_S, lock_path, socket_path
from recall_tui.agent.core import RecallCore
from recall_tui.agent.log import clean_text
from recall_tui.vault.literal import json_text

#: How many hook requests' phases the service keeps for `{"op": "stats"}`.
PHASES_KEPT = 256
#: Seconds without a request after which the service drops the local model's session.
DEFAULT_MODEL_IDLE_S = 300.0


def model_idle_from_env() -> float:
    """`RECALL_TUI_MODEL_IDLE` (seconds; 0 or less: never release), else the default."""
    try:
        return float(os.environ.get("RECALL_TUI_MODEL_IDLE") or DEFAULT_MODEL_IDLE_S)
    except ValueError:
        return DEFAULT_MODEL_IDLE_S


class _Handler(socketserver.StreamRequestHandler):
    def handle(self) -> None:
        svc: RecallService = self.server.service  # type: ignore[attr-defined]
        start = self.server.accepted.pop(self.request.fileno(), None)  # type: ignore[attr-defined]
        t_open = time.perf_counter()
        start = start if start is not None else t_open
        for raw in self.rfile:
            t_read = time.perf_counter()
            if not raw.strip():
                continue
            phases = {"wait": _ms(t_open - start), "read": _ms(t_read - t_open)}
            req: Any = None
            after: list[Callable[[], object]] = []  # the log record, written once answered
            try:
                try:
                    req = _clean(json.loads(raw))
                    phases["parse"] = _ms(time.perf_counter() - t_read)
                    ans = svc.answer(req if isinstance(req, dict) else {}, phases, after)
                except ValueError as exc:
                    ans = {"ok": False, "error": f"bad request: {exc}"}
                except Exception as exc:  # one bad request never ends the service
                    ans = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
                t_encode = time.perf_counter()
                line = clean_text(json.dumps(ans, ensure_ascii=False)).encode() + b"\n"
                t_send = time.perf_counter()
                self.wfile.write(line)
                self.wfile.flush()
                t_sent = time.perf_counter()
            finally:  # the agent got it (or left): either way the record is written
                svc.run_after(after)
            if isinstance(req, dict) and req.get("op") == "hook" and ans.get("ok"):
                phases.update(encode=_ms(t_send - t_encode), send=_ms(t_sent - t_send),
                              total=_ms(t_sent - start))
                svc.note_phases(phases)
            start = t_open = time.perf_counter()


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 3)


def _clean(obj: Any) -> Any:
    """A parsed request with every string's lone surrogates replaced (see `clean_text`)."""
    if isinstance(obj, str):
        return clean_text(obj)
    if isinstance(obj, dict):
        return {clean_text(k) if isinstance(k, str) else k: _clean(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_clean(v) for v in obj]
    return obj


class _Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128  # many hooks at once: a full backlog makes connect() fail with EAGAIN

    def __init__(self, *args: Any, **kw: Any):
        self.accepted: dict[int, float] = {}  # socket fd -> when it was accepted (`wait`)
        super().__init__(*args, **kw)

    def process_request(self, request: Any, client_address: Any) -> None:
        self.accepted[request.fileno()] = time.perf_counter()
        super().process_request(request, client_address)


class RecallService:
    def __init__(self, root: str | Path, *, idle_s: float = DEFAULT_IDLE_S, watch: bool = True,
                 log=None, model_idle_s: float | None = None):
        self.root = Path(root).resolve()
        self.idle_s = idle_s
        self.model_idle_s = model_idle_from_env() if model_idle_s is None else model_idle_s
        self.watch = watch
        self.log = log or (lambda msg: print(f"recall-tui serve: {msg}", file=sys.stderr, flush=True))
        self.core: RecallCore | None = None
        self.active = read_active(self.root)
        self.last = time.monotonic()
        self.last_use = self.last  # the last request other than a ping (the model's idle clock)
        self.busy = 0  # requests being answered (the model is never released under one)
        self.served = 0
        self.server: _Server | None = None
        self._lock_fd: int | None = None
        self._core_lock = threading.Lock()
        self._busy_lock = threading.Lock()
        self._stopping = threading.Event()
        self._filler: threading.Thread | None = None
        #: The phases of the last hook requests answered (`{"op": "stats"}`, `bench --hook`).
        self.phases: deque[dict[str, float]] = deque(maxlen=PHASES_KEPT)
        self._after_pending = 0  # records of answered recalls not written yet
        self._after_done = threading.Condition()

    # --- life ----------------------------------------------------------------------------

    def acquire(self) -> bool:
        """Take the vault's serve lock; False when another service holds it."""
        p = lock_path(self.root)
        p.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(p, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return False
        self._lock_fd = fd
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())  # who holds it (for `serve --stop`)
        return True

    def _load(self, *, defer_vectors: bool = False) -> RecallCore:
        core = RecallCore(self.root, index="open", path="service", defer_vectors=defer_vectors)
        if self.watch and not defer_vectors:
            core.watch()
        return core

    def _finish_open(self, core: RecallCore) -> None:
        """Make the vectors the first open deferred, then watch the vault (what changed in
        the meantime is read first). Recalls meanwhile run without the vector channel (their
        trace says `embedding N / M`)."""
        core.warm_up()  # what the first hook would build lazily (a hook meanwhile waits for it)
        try:
            core.fill_vectors(self._stopping)
        except Exception as exc:
            self.log(f"making the vectors failed: {type(exc).__name__}: {exc}")
        with self._core_lock:
            if self.core is not core or self.server is None or self._stopping.is_set():
                return  # replaced or stopped meanwhile
            if self.watch:
                core.watch()  # (it reads the folder again first: what changed meanwhile)

    def _bind(self) -> _Server:
        path = socket_path(self.root)
        folder = path.parent
        if folder.name.startswith("recall-tui-"):  # the temp-folder fallback
            folder.mkdir(mode=0o700, exist_ok=True)
            st = os.lstat(folder)
            if st.st_uid != os.getuid() or not os.path.isdir(folder):
                raise PermissionError(f"{folder}: owned by another user; not used")
            os.chmod(folder, 0o700)
        try:
            path.unlink()  # a stale socket from a killed service (we hold the lock)
        except FileNotFoundError:
            pass
        old = os.umask(0o077)
        try:
            srv = _Server(str(path), _Handler)
        finally:
            os.umask(old)
        os.chmod(path, 0o600)
        srv.service = self  # type: ignore[attr-defined]
        return srv

    def run(self) -> int:
        """Load, bind, serve until idle/stop/SIGTERM. Returns the exit code."""
        if not self.acquire():
            self.log(f"a service already runs for {self.root}")
            return 0
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, self._sigterm)
        try:
            # Answer as soon as the text is indexed: on a fresh vault, embedding it takes
            # seconds to minutes, and every hook meanwhile would recall in its own process.
            self.core = self._load(defer_vectors=True)
            self.server = self._bind()
            self._filler = threading.Thread(target=self._finish_open, args=(self.core,),
                                            name="serve-vectors", daemon=True)
            self._filler.start()
            self.log(f"serving {self.root} on {socket_path(self.root)} (preset {self.core.preset}, "
                     f"embedder {self.core.embedder.name if self.core.embedder else 'none'}, "
                     f"idle exit after {self.idle_s:.0f} s)")
            threading.Thread(target=self._idle_watch, name="serve-idle", daemon=True).start()
            self.server.serve_forever(poll_interval=0.2)
            return 0
        finally:
            self._cleanup()

    def _sigterm(self, *_: object) -> None:
        if self.server is None:
            raise SystemExit(0)  # still loading: leave now (cleanup runs in `run`)
        self.stop()

    def stop(self) -> None:
        if self.server is not None:
            threading.Thread(target=self.server.shutdown, daemon=True).start()

    def _idle_watch(self) -> None:
        span = min(self.idle_s, self.model_idle_s) if self.model_idle_s > 0 else self.idle_s
        while self.server is not None:
            time.sleep(min(1.0, max(0.05, span / 4)))
            now = time.monotonic()
            if self.busy:
                continue
            if now - self.last > self.idle_s:
                self.log(f"idle for {self.idle_s:.0f} s; exiting")
                self.stop()
                return
            if 0 < self.model_idle_s < now - self.last_use:
                with self._busy_lock:  # a request arriving meanwhile waits for the release
                    if not self.busy:
                        self._release_model()

    def _release_model(self) -> None:
        """Drop the embedder's session when it is loaded and no bulk embedding needs it (the
        first fill of a fresh vault runs for minutes without a request)."""
        core = self.core
        emb = core.embedder if core is not None else None
        if emb is None or not getattr(emb, "loaded", False):
            return
        if self._filler is not None and self._filler.is_alive():
            return
        if emb.release():
            self.log(f"no request for {self.model_idle_s:g} s: model released "
                     "(loaded again by the next recall)")

    def _cleanup(self) -> None:
        self._stopping.set()
        with self._after_done:  # the records of recalls already answered (a few ms each)
            self._after_done.wait_for(lambda: self._after_pending <= 0, timeout=30)
        if self._filler is not None:
            self._filler.join(60)  # ends after its current batch: no thread left in the embedder
        srv, self.server = self.server, None
        if srv is not None:
            srv.server_close()
            try:
                os.unlink(socket_path(self.root))
            except OSError:
                pass
        if self.core is not None:
            self.core.close()
            self.core = None
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    # --- requests ------------------------------------------------------------------------

    def _current_core(self) -> RecallCore:
        with self._core_lock:
            assert self.core is not None
            if self.core.embedder_changed():
                act = read_active(self.root)
                self.log(f"active embedder changed to {act.embedder}; reloading")
                old = self.core
                self.core = self._load()
                self.active = act
                old.close()
            elif self.core.refresh_config():
                self.active = read_active(self.root)
                self.log(f"active configuration changed (preset {self.core.preset}"
                         + (f"; {self.core.warning}" if self.core.warning else "") + "); reloaded")
            return self.core

    def run_after(self, after: list[Callable[[], object]]) -> None:
        """Run what an answer left for after it was sent (its log record), counted as pending
        until done: `_cleanup` waits for them, so a stop never loses a recall's record."""
        try:
            for fn in after:
                try:
                    fn()
                except Exception as exc:  # the log never fails a service
                    self.log(f"writing a recall's record failed: {type(exc).__name__}: {exc}")
        finally:
            with self._after_done:
                self._after_pending -= len(after)
                self._after_done.notify_all()

    def _defer(self, after: list[Callable[[], object]] | None, fn: Callable[[], object]) -> None:
        """`fn` now, or (`after` given: the socket handler's) once the answer is sent."""
        if after is None:
            fn()
            return
        with self._after_done:
            self._after_pending += 1
        after.append(fn)

    def note_phases(self, phases: dict[str, float]) -> None:
        """Keep one hook request's phases (milliseconds; see `phase_stats`)."""
        self.phases.append(phases)

    def phase_stats(self) -> dict[str, dict[str, float]]:
        """Per phase of the last hook requests answered, n / p50 / p95 / max in ms: `wait`
        (accepted to its thread running), `read` (the request line arriving), `parse`,
        `config` (following the active configuration), `recall` (the pipeline; `embed` of it
        the query embedding, ~0 when cached), `format` (the text injected), `record` (the
        trace's dict and the log line), `text` (the line the hook prints), `encode` (the
        answer's JSON), `send`, and `total` (accepted to sent)."""
        out: dict[str, dict[str, float]] = {}
        for name in {k for p in list(self.phases) for k in p}:
            xs = sorted(p[name] for p in list(self.phases) if name in p)
            out[name] = {"n": len(xs), "p50": round(statistics.median(xs), 3),
                         "p95": xs[min(len(xs) - 1, round(0.95 * (len(xs) - 1)))], "max": xs[-1]}
        return dict(sorted(out.items()))

    def answer(self, req: dict[str, Any], phases: dict[str, float] | None = None,
               after: list[Callable[[], object]] | None = None) -> dict[str, Any]:
        """One request's answer. `phases` gets its timing; with `after`, what can wait until
        the answer is sent (a hook's log record) is put there (see `run_after`), else done
        before returning."""
        with self._busy_lock:
            self.busy += 1
        try:
            return self._answer(req, phases, after)
        finally:
            with self._busy_lock:
                self.busy -= 1
                self.last = time.monotonic()
                if req.get("op") not in ("ping", "stats"):  # nor does `serve --status` keep the model
                    self.last_use = self.last

    def _answer(self, req: dict[str, Any], phases: dict[str, float] | None = None,
                after: list[Callable[[], object]] | None = None) -> dict[str, Any]:
        self.last = time.monotonic()
        op = req.get("op")
        if op == "ping":
            core = self.core
            progress = core.index.embedding_progress() if core and core.index else None
            return {"ok": True, "pid": os.getpid(), "root": str(self.root), "served": self.served,
                    "embedding": list(progress) if progress else None,
                    "model_loaded": bool(getattr(core.embedder, "loaded", False)) if core else False,
                    "preset": core.preset if core else None,
                    "warning": core.warning if core else "",
                    "embedder": core.embedder.name if core and core.embedder else "none"}
        if op == "stop":
            self.stop()
            return {"ok": True}
        if op == "stats":
            return {"ok": True, "hook_phases": self.phase_stats()}
        t0 = time.perf_counter()
        core = self._current_core()
        if phases is not None:
            phases["config"] = _ms(time.perf_counter() - t0)
        if op == "hook":
            opts = H.HookOptions.from_dict(req.get("options") or {})
            actual = core.embedder.name if core.embedder is not None else "none"
            if opts.embedder and opts.embedder not in (core.embedder_kind, actual):
                return {"ok": False, "error": f"this service recalls with {core.embedder_kind!r}, "
                                              f"not {opts.embedder!r}"}
            out, rec, record = core.hook_then_record(opts, H.HookPayload.from_obj(req.get("payload") or {}),
                                                     phases)
            self._defer(after, record)
            self.served += 1
            # "text": the line the hook prints, so the hook's process needs no JSON escaping
            t0 = time.perf_counter()
            text = json_text(out)
            if phases is not None:
                phases["text"] = _ms(time.perf_counter() - t0)
            return {"ok": True, "output": out, "text": text, "record": rec.id,
                    "warning": core.warning}
        if op == "recall":
            trace = core.recall(str(req.get("query") or ""), k=req.get("k"), preset=req.get("preset"),
                                include_superseded=req.get("include_superseded"),
                                as_of=req.get("as_of"), types=tuple(req.get("types") or ()))
            self.served += 1
            return {"ok": True, "trace": trace.to_dict(), "warning": core.warning}
        return {"ok": False, "error": f"unknown op {op!r}"}

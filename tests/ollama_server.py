"""A small real HTTP server speaking the part of Ollama's API recall-tui uses.

It runs on 127.0.0.1 on a free port in a daemon thread, so tests exercise the real `ollama`
client, real sockets and real timeouts instead of a mock. Vectors are deterministic: a hashed
bag of words of dimension `dim`, L2-normalised, so texts sharing words are similar.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def hashed_vector(text: str, dim: int) -> list[float]:
    """A bag of words hashed into `dim` buckets with signs, L2-normalised (zeros stay zeros)."""
    vec = [0.0] * dim
    for word in re.findall(r"\w+", text.lower()):
        h = hashlib.blake2b(word.encode(), digest_size=8).digest()
        vec[h[0] % dim] += 1.0 if h[1] & 1 else -1.0
    norm = math.sqrt(sum(v * v for v in vec)) or 1.0
    return [v / norm for v in vec]


class FakeOllama:
    """Start with `with FakeOllama() as srv:`; `srv.host` is the URL to hand to the client."""

    def __init__(
        self,
        models: tuple[str, ...] = ("embeddinggemma:latest",),
        dim: int = 16,
        latency: float = 0.0,
        malformed: bool = False,
    ):
        self.models = models
        self.dim = dim
        self.latency = latency
        """Seconds every answer waits before it is sent (to test timeouts)."""
        self.malformed = malformed
        """Answer /api/embed with a wrong number of vectors."""
        self.embed_calls: list[list[str]] = []
        """The inputs of every /api/embed request, in order."""
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def host(self) -> str:
        assert self._server is not None, "server not started"
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def embedded_texts(self) -> int:
        return sum(len(c) for c in self.embed_calls)

    def _known(self, name: str) -> bool:
        return name in self.models or f"{name}:latest" in self.models

    def start(self) -> FakeOllama:
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep pytest output clean
                pass

            def _send(self, status: int, payload: dict) -> None:
                if outer.latency:
                    time.sleep(outer.latency)
                body = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)

            def do_GET(self):
                if self.path == "/api/version":
                    self._send(200, {"version": "0.12.0"})
                elif self.path == "/api/tags":
                    self._send(
                        200,
                        {"models": [{"name": m, "model": m, "size": 1} for m in outer.models]},
                    )
                else:
                    self._send(404, {"error": "not found"})

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                try:
                    req = json.loads(self.rfile.read(length) or b"{}")
                except json.JSONDecodeError:
                    self._send(400, {"error": "invalid JSON"})
                    return
                if self.path != "/api/embed":
                    self._send(404, {"error": "not found"})
                    return
                model = req.get("model", "")
                if not outer._known(model):
                    self._send(404, {"error": f'model "{model}" not found, try pulling it first'})
                    return
                inp = req.get("input", "")
                texts = [inp] if isinstance(inp, str) else list(inp)
                outer.embed_calls.append(texts)
                vectors = [hashed_vector(t, outer.dim) for t in texts]
                if outer.malformed:
                    vectors = vectors[:-1]
                self._send(
                    200,
                    {
                        "model": model,
                        "embeddings": vectors,
                        "total_duration": 1000,
                        "load_duration": 10,
                        "prompt_eval_count": sum(len(t.split()) for t in texts),
                    },
                )

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeOllama:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

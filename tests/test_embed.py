"""Embedders: the real local ONNX model, and the real ollama client against a real HTTP server."""

from __future__ import annotations

import socket

import numpy as np
import pytest

from recall_tui.index.embed import (
    LOCAL_DIM,
    LOCAL_MODEL,
    EmbedderUnavailable,
    LocalEmbedder,
    NoEmbedder,
    OllamaEmbedder,
    make_embedder,
)
from tests.ollama_server import FakeOllama, hashed_vector


@pytest.fixture(scope="module")
def local() -> LocalEmbedder:
    return LocalEmbedder()


def _closed_port() -> int:
    """A port nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ------------------------------------------------------------------ local


def test_local_is_lazy_and_normalised(local):
    fresh = LocalEmbedder()
    assert not fresh.loaded, "the ONNX session must not load before the first embed"
    vecs = local.embed(["the billing database runs Postgres 16", "Maya likes oat milk"])
    assert vecs.shape == (2, LOCAL_DIM) and vecs.dtype == np.float32
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    assert local.loaded


def test_local_ranks_meaning(local):
    q, near, far = local.embed(
        [
            "which database does the billing service use?",
            "billing-service stores invoices in PostgreSQL",
            "my favourite hiking trail is in the Alps",
        ]
    )
    assert float(q @ near) > float(q @ far) + 0.2


def test_local_batch_padding_does_not_change_vectors(local):
    texts = ["short", "a considerably longer sentence about database migrations " * 5]
    batch = local.embed(texts)
    single = np.vstack([local.embed([t]) for t in texts])
    assert np.allclose(batch, single, atol=1e-4)


def test_local_truncates_long_text(local):
    long = "word " * 5000
    (v,) = local.embed([long])
    assert np.isfinite(v).all() and abs(float(np.linalg.norm(v)) - 1.0) < 1e-5


def test_local_rejects_other_models():
    with pytest.raises(EmbedderUnavailable, match="needs ollama"):
        make_embedder("local", model="nomic-embed-text")


def test_none_embedder():
    emb, why = make_embedder("none")
    assert isinstance(emb, NoEmbedder) and emb.dim == 0 and "keyword-only" in why
    with pytest.raises(EmbedderUnavailable):
        emb.embed(["x"])


def test_unknown_kind():
    with pytest.raises(ValueError, match="unknown embedder 'bert'"):
        make_embedder("bert")


# ------------------------------------------------------------------ ollama


def test_ollama_happy_path():
    with FakeOllama(dim=16) as srv:
        emb, why = make_embedder("ollama", host=srv.host)
        assert emb.name == "ollama" and emb.model == "embeddinggemma"
        assert srv.host in why
        vecs = emb.embed(["postgres upgrade runbook", "oat milk"])
        assert emb.dim == 16 and vecs.shape == (2, 16) and vecs.dtype == np.float32
        assert np.allclose(vecs[0], hashed_vector("postgres upgrade runbook", 16), atol=1e-6)
        assert srv.embed_calls[-1] == ["postgres upgrade runbook", "oat milk"]


def test_ollama_model_missing_says_how_to_fix():
    with FakeOllama(models=("nomic-embed-text:latest",)) as srv:
        with pytest.raises(EmbedderUnavailable) as exc:
            make_embedder("ollama", host=srv.host)
        assert "ollama pull embeddinggemma" in exc.value.reason
        assert "nomic-embed-text:latest" in exc.value.reason
        # and a direct embed call gets the server's 404 as a clear reason too
        with pytest.raises(EmbedderUnavailable, match="not found, try pulling it first"):
            OllamaEmbedder("embeddinggemma", host=srv.host).embed(["x"])


def test_ollama_unreachable_fails_fast():
    host = f"http://127.0.0.1:{_closed_port()}"
    with pytest.raises(EmbedderUnavailable, match="not reachable.*connection refused"):
        make_embedder("ollama", host=host, timeout=2.0)


def test_ollama_slow_server_times_out_within_bound():
    with FakeOllama(latency=3.0) as srv:
        with pytest.raises(EmbedderUnavailable, match="timed out"):
            make_embedder("ollama", host=srv.host, timeout=0.4)
        emb = OllamaEmbedder(host=srv.host, timeout=0.4)
        with pytest.raises(EmbedderUnavailable, match="timed out"):
            emb.embed(["one query"])


def test_ollama_malformed_answer():
    with FakeOllama(malformed=True) as srv:
        emb = OllamaEmbedder(host=srv.host)
        with pytest.raises(EmbedderUnavailable, match="malformed answer"):
            emb.embed(["a", "b"])


def test_ollama_host_from_environment(monkeypatch):
    with FakeOllama() as srv:
        monkeypatch.setenv("OLLAMA_HOST", srv.host)
        emb, _ = make_embedder("ollama")
        assert emb.host == srv.host and emb.dim == 16


# ------------------------------------------------------------------ auto


def test_auto_prefers_a_reachable_ollama():
    with FakeOllama() as srv:
        emb, why = make_embedder("auto", host=srv.host)
        assert emb.name == "ollama"
        assert why == f"ollama embeddinggemma answered at {srv.host}"


def test_auto_falls_back_to_local_and_says_why():
    host = f"http://127.0.0.1:{_closed_port()}"
    emb, why = make_embedder("auto", host=host)
    assert emb.name == "local" and emb.model == LOCAL_MODEL
    assert why == (
        f"ollama not reachable at {host} (connection refused); using local {LOCAL_MODEL}"
    )


def test_auto_falls_back_when_the_model_is_not_pulled():
    with FakeOllama(models=("llama3:latest",)) as srv:
        emb, why = make_embedder("auto", host=srv.host)
        assert emb.name == "local"
        assert "no model 'embeddinggemma'" in why and "using local" in why


def test_auto_does_not_wait_for_a_slow_ollama():
    with FakeOllama(latency=3.0) as srv:
        emb, why = make_embedder("auto", host=srv.host)
        assert emb.name == "local" and "timed out" in why


def test_auto_with_nothing_listening_does_not_load_the_http_client():
    """A bare TCP connect answers `auto` when no server listens: the ollama and httpx imports
    (about half a second of every first open without Ollama) are not paid."""
    import subprocess
    import sys

    host = f"127.0.0.1:{_closed_port()}"
    code = (
        "import sys\n"
        "from recall_tui.index.embed import make_embedder\n"
        f"emb, why = make_embedder('auto', host={host!r})\n"
        "print(emb.name, 'ollama' in sys.modules, 'httpx' in sys.modules)\n"
        "print(why)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.splitlines()
    assert out[0] == "local False False"
    assert out[1].startswith(f"ollama not reachable at {host} (connection refused)")

"""The calibrated floor's probe vectors as shipped for the local embedder.

The floor (`calibration.probe_bests`) needs the vector of each off-topic probe. Embedding
them costs one model run per probe (about a third of a second on a 2-core machine) in every
process that recalls: a one-shot `recall-tui query`, an MCP server's first recall, a hook
without a warm service. For the local model the vectors never change, so the package ships
them (`data/probe-vectors.json`, written by `scripts/make_probe_vectors.py`, made one text
per run exactly as a query is embedded). They are used only when the index's embedder is
that model and the file was made from today's probe texts; otherwise the probes are
embedded as before.
"""

from __future__ import annotations

import base64
import importlib.resources
import json
from functools import lru_cache

import numpy as np

from recall_tui.index.embed import LOCAL_DIM, LOCAL_MODEL

FILE = "probe-vectors.json"


def encode_vector(vec: np.ndarray) -> str:
    """A vector as base64 of its little-endian float32 bytes."""
    return base64.b64encode(np.asarray(vec, dtype="<f4").tobytes()).decode("ascii")


def decode_vector(text: str) -> np.ndarray:
    """`encode_vector`'s inverse (a read-only float32 array)."""
    vec = np.frombuffer(base64.b64decode(text), dtype="<f4").astype(np.float32)
    vec.setflags(write=False)
    return vec


@lru_cache(maxsize=4)
def shipped(model: str, probes_sha256: str) -> tuple[np.ndarray, ...] | None:
    """The shipped probe vectors when they were made by `model` from the probe texts whose
    digest is `probes_sha256`; None otherwise (another model, changed probes, no file)."""
    if model != LOCAL_MODEL:
        return None
    try:
        raw = (importlib.resources.files("recall_tui") / "data" / FILE).read_text("utf-8")
        data = json.loads(raw)
        if data.get("model") != model or data.get("probes_sha256") != probes_sha256:
            return None
        vectors = tuple(decode_vector(v) for v in data["vectors"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if any(v.shape != (LOCAL_DIM,) for v in vectors):
        return None
    return vectors

"""Messages the app's workers post back to the UI thread.

Each is stamped: `seq` orders recalls so a late answer to an old query is dropped, and the
elapsed wall time is carried for the status line and the tests.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message

from recall_tui.engine import Engine
from recall_tui.engine.trace import Trace
from recall_tui.vault.model import Vault


@dataclass
class EngineReady(Message):
    """The vault was read and the engine (with its index) is open."""

    engine: Engine
    """The engine of the request's preset, open."""
    vault: Vault
    elapsed_ms: float
    vectors_pending: bool = False
    """The text is indexed and the engine answers; the vectors are still being made (a
    progressive first open): `VectorsReady` follows."""


@dataclass
class VectorsReady(Message):
    """The progressive open finished: every memory has its vector (or the embedder failed,
    said in `error`); the engine's vector channels now run."""

    elapsed_ms: float
    error: str | None = None


@dataclass
class EngineFailed(Message):
    """Opening the vault or the engine failed; `reason` names the file and the cause."""

    reason: str


@dataclass
class RecallDone(Message):
    """A recall finished. Applied only if `seq` is the latest one asked for."""

    seq: int
    trace: Trace
    elapsed_ms: float


@dataclass
class RecallFailed(Message):
    """The engine raised (it should not); shown instead of hiding the bug."""

    seq: int
    error: str


@dataclass
class RecallFinished(Message):
    """A recall thread ended, whatever its outcome (posted after its `RecallDone` or
    `RecallFailed`, if any): the app may start the request that waited for it."""

    seq: int

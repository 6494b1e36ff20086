"""Shared fixtures. Each test module owns its own specific fixtures; only common ones live here."""

from __future__ import annotations

import os
import shutil
from datetime import datetime, timezone
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_VAULT = ROOT / "sample-vault"
FIXTURES = Path(__file__).resolve().parent / "fixtures"

#: The `now` every time-dependent test pins (the sample vault's story ends 2026-11-20).
PINNED_NOW = datetime(2026, 11, 21, 9, 0, tzinfo=timezone.utc)

# Never let a developer's real Ollama server or config leak into tests.
os.environ.setdefault("OLLAMA_HOST", "http://127.0.0.1:9")


@pytest.fixture(autouse=True)
def _isolated_user_dirs(tmp_path_factory, monkeypatch):
    """XDG folders point into a temp dir so no test reads or writes the user's config."""
    base = tmp_path_factory.mktemp("xdg")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(base / "config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(base / "cache"))
    monkeypatch.setenv("XDG_DATA_HOME", str(base / "data"))


@pytest.fixture(scope="session")
def sample_vault_path() -> Path:
    return SAMPLE_VAULT


@pytest.fixture()
def vault_copy(tmp_path) -> Path:
    """A private copy of the sample vault (without any .recall/ index) a test may change."""
    dst = tmp_path / "vault"
    shutil.copytree(SAMPLE_VAULT, dst, ignore=shutil.ignore_patterns(".recall"))
    return dst


@pytest.fixture(scope="session")
def session_vault_copy(tmp_path_factory) -> Path:
    """One copy of the sample vault shared by a whole test session, for read-only tests that
    need a built index (building it once keeps the suite fast)."""
    dst = tmp_path_factory.mktemp("shared") / "vault"
    shutil.copytree(SAMPLE_VAULT, dst, ignore=shutil.ignore_patterns(".recall"))
    return dst

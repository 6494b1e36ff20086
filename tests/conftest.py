"""Shared fixtures. Each test module owns its own specific fixtures; only common ones live here."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from datetime import datetime, timezone
from pathlib import Path

import pytest

from tests.netguard import sitecustomize as netguard

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_VAULT = ROOT / "sample-vault"
FIXTURES = Path(__file__).resolve().parent / "fixtures"

#: The `now` every time-dependent test pins (the sample vault's story ends 2026-11-20).
PINNED_NOW = datetime(2026, 11, 21, 9, 0, tzinfo=timezone.utc)

# Never let a developer's real Ollama server or config leak into tests.
os.environ.setdefault("OLLAMA_HOST", "http://127.0.0.1:9")

# No process of the suite may reach beyond this machine (tests/netguard/sitecustomize.py):
# this one, and every Python process it starts (PYTHONPATH), log each attempt here.
# (Idempotent: this module is imported both as `conftest` and as `tests.conftest`.) Under
# pytest-xdist each worker keeps its own log: a worker inherits the controller's environment,
# and one shared log would charge one worker's attempt to another worker's test.
_LOG_OWNER_ENV = "RECALL_TUI_NETGUARD_OWNER"
_owner = os.environ.get("PYTEST_XDIST_WORKER", "controller")
if not os.environ.get(netguard.LOG_ENV) or os.environ.get(_LOG_OWNER_ENV) != _owner:
    _fd, _log = tempfile.mkstemp(prefix="recall-tui-netguard-", suffix=".log")
    os.close(_fd)
    atexit.register(Path(_log).unlink, missing_ok=True)
    os.environ[netguard.LOG_ENV] = _log
    os.environ[_LOG_OWNER_ENV] = _owner
    _guard_dir = str(Path(netguard.__file__).parent)
    _paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    os.environ["PYTHONPATH"] = os.pathsep.join([_guard_dir, *(p for p in _paths if p != _guard_dir)])
netguard.install()


@pytest.fixture(autouse=True)
def _no_network():
    """Fail the test during which any process of the suite tried a non-local connection."""
    log = Path(os.environ[netguard.LOG_ENV])
    start = log.stat().st_size
    yield
    with log.open(encoding="utf-8") as fh:
        fh.seek(start)
        tried = fh.read()
    if tried:
        pytest.fail(f"a process tried to reach the network:\n{tried}")


@pytest.fixture(autouse=True)
def _isolated_user_dirs(tmp_path_factory, monkeypatch):
    """XDG folders point into a temp dir so no test reads or writes the user's config."""
    base = tmp_path_factory.mktemp("xdg")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(base / "config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(base / "cache"))
    monkeypatch.setenv("XDG_DATA_HOME", str(base / "data"))
    # A recall service a hook starts on demand for a test's vault exits soon after the test.
    monkeypatch.setenv("RECALL_TUI_SERVE_IDLE", "20")


@pytest.fixture(scope="session")
def sample_vault_path() -> Path:
    return SAMPLE_VAULT


@pytest.fixture(scope="session")
def prebuilt_index(tmp_path_factory) -> Path:
    """The sample vault's `.recall/` folder, built once per test session with the real local
    embedder. Copying it into a vault copy makes `Index.open` reuse every vector (it embeds
    nothing), so a full build of the sample vault is paid once per session, not per module."""
    from recall_tui.index.embed import make_embedder
    from recall_tui.index.store import Index
    from recall_tui.vault.reader import read_vault

    dst = tmp_path_factory.mktemp("prebuilt") / "vault"
    shutil.copytree(SAMPLE_VAULT, dst, ignore=shutil.ignore_patterns(".recall"))
    embedder, _ = make_embedder("local")
    Index.open(read_vault(dst), embedder).close()
    return dst / ".recall"


def _copy_sample_vault(dst: Path, recall_dir: Path) -> Path:
    shutil.copytree(SAMPLE_VAULT, dst, ignore=shutil.ignore_patterns(".recall"))
    shutil.copytree(recall_dir, dst / ".recall", ignore=shutil.ignore_patterns("*-wal", "*-shm"))
    return dst


@pytest.fixture()
def vault_copy(tmp_path, prebuilt_index) -> Path:
    """A private copy of the sample vault a test may change, with an up-to-date index
    (local embedder) already in its `.recall/`."""
    return _copy_sample_vault(tmp_path / "vault", prebuilt_index)


@pytest.fixture()
def bare_vault_copy(tmp_path) -> Path:
    """A private copy of the sample vault with no `.recall/` at all (no index yet)."""
    dst = tmp_path / "vault"
    shutil.copytree(SAMPLE_VAULT, dst, ignore=shutil.ignore_patterns(".recall"))
    return dst


@pytest.fixture(scope="session")
def session_vault_copy(tmp_path_factory, prebuilt_index) -> Path:
    """One copy of the sample vault (with its index) shared by a whole test session, for
    read-only tests."""
    return _copy_sample_vault(tmp_path_factory.mktemp("shared") / "vault", prebuilt_index)


# --- engines -------------------------------------------------------------------------------------
# One `engine` fixture for the suite. By default it is the real engine (default preset, local
# embedder) on the session's shared read-only copy, opened once per module: a test that only
# reads gets it for free. A test (or a whole module, with `pytestmark`) marked `own_vault`
# writes into its vault (presets, judgements, edits, an agent log) and gets an engine on its
# own `vault_copy` instead; one marked `fusion_max` reads scores on the fusion_max scale; one
# marked `untouched` (screenshots) gets a module's own copy no other test's hook writes to.


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "own_vault: the test writes into its vault; `engine` runs on its own "
        "`vault_copy` (default preset, local embedder)")
    config.addinivalue_line(
        "markers", "fusion_max: `engine` is the shared one with `floor.scale = fusion_max` "
        "(scores on the scale these tests read; tests/test_engine_floor.py checks the default)")
    config.addinivalue_line(
        "markers", "untouched: `engine` is a module's own copy of the sample vault that no "
        "other test's hook writes to (screenshots)")


def _default_engine(root: Path, **kw):
    from recall_tui.engine import open_engine

    return open_engine(root, preset="default", embedder="local", **kw)


@pytest.fixture(scope="module")
def shared_engine(session_vault_copy):
    """The real engine (default preset, local embedder) on the shared read-only copy, opened
    once per module. Tests that share it call `engine.clear_cache()` before each app."""
    return _default_engine(session_vault_copy)


@pytest.fixture(scope="module")
def fusion_max_engine(session_vault_copy):
    """`shared_engine` reporting scores on the fusion_max scale."""
    from recall_tui.engine.config import load_preset

    cfg = load_preset("default").with_value("floor.scale", "fusion_max")
    return _default_engine(session_vault_copy, config=cfg)


@pytest.fixture()
def engine(request: pytest.FixtureRequest):
    """The engine a test runs against: see the markers `own_vault`, `fusion_max` and
    `untouched` above."""
    if request.node.get_closest_marker("own_vault"):
        return _default_engine(request.getfixturevalue("vault_copy"))
    if request.node.get_closest_marker("fusion_max"):
        return request.getfixturevalue("fusion_max_engine")
    if request.node.get_closest_marker("untouched"):
        return request.getfixturevalue("untouched_engine")
    return request.getfixturevalue("shared_engine")


@pytest.fixture(scope="module")
def untouched_engine(tmp_path_factory, prebuilt_index):
    """The real engine (default preset, local embedder) on a module's own copy of the sample
    vault, untouched by the hooks other tests run on the session's shared copy (an agent log
    or an active preset would show in a screenshot's status line and Agent pane)."""
    return _default_engine(_copy_sample_vault(tmp_path_factory.mktemp("untouched") / "vault",
                                              prebuilt_index))

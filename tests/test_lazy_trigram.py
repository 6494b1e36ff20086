"""The content trigram table is built only when `fuzzy.trigram_mode = "scan"` first needs it
(issue 13: it was a third of the index on disk), then kept up to date by every sync; the
`original` trigram table is always there (the default preset's fallback reads it).

Real apsw SQLite, the bench's deterministic stand-in embedder (vectors play no part here)."""

from __future__ import annotations

import shutil

import pytest

from recall_tui.diagnostics.engine_bench_child import StandinEmbedder
from recall_tui.engine import Engine
from recall_tui.engine.config import load_preset
from recall_tui.index.store import Index
from recall_tui.vault.reader import read_vault
from tests.conftest import PINNED_NOW, SAMPLE_VAULT


@pytest.fixture()
def vault_dir(tmp_path):
    dst = tmp_path / "vault"
    shutil.copytree(SAMPLE_VAULT, dst, ignore=shutil.ignore_patterns(".recall"))
    return dst


def _trigram_rows(idx: Index) -> int:
    return idx.core.conn.execute("SELECT count(*) FROM memories_trigram_docsize").fetchone()[0]


def _holding(idx: Index, text: str) -> list[str]:
    """Ids of the memories whose content trigrams hold `text` as a substring."""
    rows = idx.core.conn.execute(
        "SELECT m.id FROM memories_trigram JOIN memories m ON m.rowid = memories_trigram.rowid"
        " WHERE memories_trigram MATCH ?", (f'"{text}"',)).fetchall()
    return [r[0] for r in rows]


def _fuzzy_info(trace) -> dict[str, str]:
    return dict(next(s for s in trace.stages if s.name == "fuzzy").info)


def test_built_on_the_first_scan_then_kept_up_to_date(vault_dir):
    vault = read_vault(vault_dir)
    path = vault_dir / ".recall" / "index.sqlite"
    idx = Index.open(vault, StandinEmbedder(), path=path)
    assert _trigram_rows(idx) == 0 and idx.core.meta("trigram") is None
    # the default preset (corrected terms) never builds it; its original fallback works
    default = Engine(vault, idx, load_preset("default", vault.root), preset="default")
    info = _fuzzy_info(default.recall("postgress upgrad", now=PINNED_NOW))
    assert "trigram index" not in info and _trigram_rows(idx) == 0
    assert idx.fts_trigram_sql("zzzz", 5, column="original") == []

    scan = Engine(vault, idx, load_preset("abmind", vault.root), preset="abmind")
    trace = scan.recall("postgress upgrad", now=PINNED_NOW)
    info = _fuzzy_info(trace)
    assert info["trigram index"].startswith("built now"), info
    assert _trigram_rows(idx) == len(vault.memories)
    assert not info["trigram"].startswith("failed") and trace.hits
    assert idx.fts_trigram("postgress upgrad", 20) == idx.fts_trigram_sql("postgress upgrad", 20)
    again = _fuzzy_info(scan.recall("homelab backup", now=PINNED_NOW))
    assert "trigram index" not in again
    assert idx.ensure_trigram() is None

    # a memory edited afterwards gets its trigrams from the next sync
    target = next(m for m in vault.memories.values() if m.body.strip())
    file = vault_dir / target.path
    file.write_text(file.read_text(encoding="utf-8") + "\nqwertzuiopish gadget\n",
                    encoding="utf-8")
    vault2 = read_vault(vault_dir)
    idx.update_files(vault2)
    assert _holding(idx, "qwertzuiopish") == [target.id]
    idx.close()

    # another connection (another process) sees it built and does not build it again
    other = Index.open(vault2, StandinEmbedder(), path=path)
    assert other.ensure_trigram() is None and _trigram_rows(other) == len(vault2.memories)
    # a rebuild empties it and builds it lazily again
    other.close()
    rebuilt = Index.open(vault2, StandinEmbedder(), path=path, rebuild=True)
    assert _trigram_rows(rebuilt) == 0 and rebuilt.core.meta("trigram") is None
    assert rebuilt.fts_trigram("qwertzuiopish", 5)[0][0] == target.id
    assert _holding(rebuilt, "qwertzuiopish") == [target.id]
    rebuilt.close()


def test_a_row_the_vault_does_not_match_is_reindexed_by_the_next_sync(vault_dir):
    vault = read_vault(vault_dir)
    path = vault_dir / ".recall" / "index.sqlite"
    idx = Index.open(vault, StandinEmbedder(), path=path)
    # another process indexed a newer text of this memory; this one builds from its older view
    target = next(m for m in vault.memories.values() if m.body.strip())
    file = vault_dir / target.path
    file.write_text(file.read_text(encoding="utf-8") + "\nzyxwvutsrq marker\n", encoding="utf-8")
    newer = read_vault(vault_dir)
    writer = Index.open(newer, StandinEmbedder(), path=path)
    writer.close()
    assert idx.ensure_trigram(vault) is not None
    assert _holding(idx, "zyxwvutsrq") == []  # not from the older text
    assert _trigram_rows(idx) == len(vault.memories) - 1
    idx.update_files(newer)
    assert _holding(idx, "zyxwvutsrq") == [target.id]
    assert _trigram_rows(idx) == len(newer.memories)
    idx.close()


def test_a_read_only_index_says_why_the_scan_cannot_run(vault_dir):
    vault = read_vault(vault_dir)
    path = vault_dir / ".recall" / "index.sqlite"
    Index.open(vault, StandinEmbedder(), path=path).close()
    ro = Index.open(vault, StandinEmbedder(), path=path, read_only=True)
    scan = Engine(vault, ro, load_preset("abmind", vault.root), preset="abmind")
    info = _fuzzy_info(scan.recall("postgress upgrad", now=PINNED_NOW))
    assert "read-only" in info["trigram index"] and info["trigram"].startswith("failed")
    ro.close()

"""A first index of many turns loads them without the turns' text-hash index and makes it
again in the same transaction (`sync.bulk_turns`): the file ends with the schema's index, the
same rows and vectors as a row-by-row load, and a later sync keeps it."""

from __future__ import annotations

import shutil
from pathlib import Path

from recall_tui.diagnostics.engine_bench_child import StandinEmbedder
from recall_tui.index import sync as sync_module
from recall_tui.index.schema import TURNS_NOVEC_INDEX, TURNS_TEXT_INDEX
from recall_tui.index.store import Index
from recall_tui.vault.reader import read_vault

ROOT = Path(__file__).resolve().parents[1]


def _state(idx: Index) -> tuple[list[tuple[str, str, bytes]], list[tuple[str]]]:
    conn = idx.core.conn
    rows = conn.execute("SELECT id, text_hash, vector FROM turns ORDER BY id").fetchall()
    schema = conn.execute(
        "SELECT sql FROM sqlite_schema WHERE name IN ('turns_text', 'turns_novec')"
        " ORDER BY name DESC").fetchall()
    return rows, schema


def test_a_bulk_turn_load_ends_with_the_index_and_the_same_rows(tmp_path, monkeypatch):
    vault_dir = tmp_path / "vault"
    shutil.copytree(ROOT / "sample-vault", vault_dir,
                    ignore=shutil.ignore_patterns(".recall"))
    vault = read_vault(vault_dir)
    assert len(vault.turns) >= 2
    emb = StandinEmbedder()
    row_by_row = Index.open(vault, emb, path=tmp_path / "a.sqlite")
    expected = _state(row_by_row)
    row_by_row.close()
    dropped: list[str] = []
    monkeypatch.setattr(sync_module, "BULK_TURNS", 2)  # this small vault is a bulk load
    real = sync_module.bulk_turns

    def spy(conn, incoming):  # type: ignore[no-untyped-def]  # test spy around the real one
        dropped.append(str(incoming))
        return real(conn, incoming)

    monkeypatch.setattr(sync_module, "bulk_turns", spy)
    bulk = Index.open(vault, emb, path=tmp_path / "b.sqlite")
    rows, schema = _state(bulk)
    assert rows == expected[0]
    assert schema == expected[1] == [(TURNS_TEXT_INDEX,), (TURNS_NOVEC_INDEX,)]
    plan = " ".join(str(r) for r in bulk.core.conn.execute(
        "EXPLAIN QUERY PLAN SELECT rowid FROM turns WHERE text_hash=?", ("x",)).fetchall())
    assert "turns_text" in plan
    # The turns still without a vector are found in the partial index, not by a scan.
    plan = " ".join(str(r) for r in bulk.core.conn.execute(
        "EXPLAIN QUERY PLAN SELECT rowid, text_hash FROM turns WHERE vector IS NULL").fetchall())
    assert "turns_novec" in plan
    # A second sync finds the turns stored: no bulk load, the index stays.
    bulk.update_files(read_vault(vault_dir))
    assert _state(bulk) == (rows, schema)
    assert dropped and all(int(n) == len(vault.turns) for n in dropped)
    bulk.close()

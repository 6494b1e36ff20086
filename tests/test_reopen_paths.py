"""What a re-open of an unchanged vault reads instead of recomputing (issue 24's "re-open
<= 5 s"), and that it is the same: the memory vector matrix from the vec0 table's chunks."""

from __future__ import annotations

import numpy as np

from recall_tui.diagnostics.engine_bench_child import StandinEmbedder
from recall_tui.index.store import Index
from recall_tui.vault.reader import read_vault


def _rows_read(index: Index) -> tuple[list[str], np.ndarray, list[int]]:
    """The matrix as the vec0 virtual table's rows give it (the path before the chunks)."""
    rows = index.vector_store._conn.execute(
        "SELECT m.id, v.embedding, m.rowid FROM memory_vectors v"
        " JOIN memories m ON m.rowid = v.rowid ORDER BY m.path").fetchall()
    return ([r[0] for r in rows], np.stack([np.frombuffer(r[1], dtype=np.float32) for r in rows]),
            [r[2] for r in rows])


def test_vector_matrix_from_the_chunks_is_the_rows_read(bare_vault_copy):
    """Built, then memories deleted (holes in the chunks) and one changed (its vector moves
    to a later chunk slot): the chunk read gives the very ids, float32 rows and rowids."""
    root = bare_vault_copy
    index = Index.open(read_vault(root), StandinEmbedder())
    try:
        paths = sorted(root.rglob("*.md"))
        memories = [p for p in paths if p.read_text(encoding="utf-8").startswith("---")]
        for p in memories[3:40:4]:
            p.unlink()
        changed = memories[50]
        changed.write_text(changed.read_text(encoding="utf-8") + "\nOne more line.\n",
                           encoding="utf-8")
        report = index.update_files(read_vault(root))
        assert report.removed >= 5 and report.embedded >= 1
        store = index.vector_store
        dim = StandinEmbedder.dim
        got = store._vectors_from_chunks(dim)
        assert got is not None
        (ids, mat), rowids, ties = got
        want_ids, want_mat, want_rowids = _rows_read(index)
        assert ids == want_ids and rowids.tolist() == want_rowids
        assert mat.dtype == np.float32 and np.array_equal(mat, want_mat)
        assert not mat.flags.writeable
        # the tie keys taken from the chunk read are the ones `_tie_order` scans the map for
        store._vectors, store._vec_rowids, store._vec_ties = (ids, mat), rowids, None
        assert store._tie_order().tolist() == ties.tolist()
        # `vectors()` takes this path and the kNN built on it answers as sqlite-vec does
        store._vectors = None
        v_ids, v_mat = index.vectors()
        assert v_ids == want_ids and np.array_equal(v_mat, want_mat)
        q = want_mat[7]
        assert ([i for i, _ in index.vector_search(q, 5)]
                == [i for i, _ in index.vector_search_sqlite(q, 5)])
    finally:
        index.close()


def test_turn_lookup_is_the_dict_of_every_turn(tmp_path):
    """`Engine.turns_by_id` (no dict of every turn) answers as `{t.id: t}` did, for every
    turn of the vaults with turns, and refuses what is not a turn id of the vault."""
    from pathlib import Path

    from recall_tui.diagnostics.synth import write_synth_vault
    from recall_tui.engine.turn_lookup import TurnLookup

    synth = tmp_path / "synth"
    write_synth_vault(synth, 40, turns=600)  # session logs of many turns each
    for root in (Path(__file__).resolve().parents[1] / "sample-vault", synth):
        turns = read_vault(root).turns
        name = root.name
        assert len({t.session_id for t in turns}) > 1, name
        want = {t.id: t for t in turns}
        got = TurnLookup(turns)
        for tid, t in want.items():
            assert got[tid] is t and got.get(tid) is t and tid in got
        assert dict(got) == want and len(got) == len(want)
        first = turns[0]
        for missing in (f"turn:{first.session_id}#{first.seq + 10**6}",
                        f"turn:{first.session_id}#0{first.seq}", f"turn:no-such#{first.seq}",
                        first.session_id, f"turn:{first.session_id}#x", "turn:"):
            assert got.get(missing) is None and missing not in got, missing

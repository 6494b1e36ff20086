"""The index layer: what is kept on disk about a vault, and how it is searched.

Owns the apsw store (`store.py`: the `Index` facade, opening, meta, recall stats), its file
and schema (`schema.py`), the incremental update (`sync.py`), the FTS5 porter and trigram
search with the in-memory bm25 (`fts.py`), the vectors (`vectors.py`: sqlite-vec, the numpy
kNN over cached vectors, the embedding cache), the embedders
(`embed.py`: local MiniLM ONNX, ollama, none), SimHash signatures (`signature.py`) and the
watcher that re-indexes what changed on disk (`watch.py`).

May import: `recall_tui.vault`. Never the engine, tuning, diagnostics, agent or a front end.
Start with `store.py` (`Index.open`).
"""

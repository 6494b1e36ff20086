"""The vault layer: reading a folder of Markdown memories, and nothing else below it.

Owns the frozen records (`model.py`: `Memory`, `Problem`, `Chain`, `EntityGraph`, `Vault`),
the reader (`reader.py`: fast-path and YAML frontmatter, problems, supersession chains, the
entity graph, digests and turns) and the byte-preserving, atomic `recall_when` editor
(`edit.py`).

May import: the standard library, PyYAML. Nothing else of recall_tui. Start with `model.py`.
"""

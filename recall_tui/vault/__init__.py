"""The vault layer: reading a folder of Markdown memories, and nothing else below it.

Owns the frozen records (`model.py`: `Memory`, `Problem`, `Chain`, `EntityGraph`, `Vault`),
the reader (`reader.py`: `read_vault`, building memories; `frontmatter.py`: fast-path and YAML
frontmatter; `fields.py`: per-key checks and defaults; `walk.py`: the folder walk;
`chains.py`: links and supersession chains; `digests.py`: digests and turns) and the
byte-preserving, atomic `recall_when` editor (`edit.py`).

May import: the standard library, PyYAML. Nothing else of recall_tui. Start with `model.py`.
"""

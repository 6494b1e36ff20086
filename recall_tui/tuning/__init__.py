"""The tuning layer: judging and comparing rankings.

Owns the metrics (`metrics.py`: recall@k, MRR, nDCG, overlap, RBO), golden sets and their runs
(`golden.py`), side-by-side ranking diffs (`compare.py`), the `recall_when` preview on a
scratch index (`preview.py`) and saved presets (`presets_io.py`).

May import: `recall_tui.engine`, `recall_tui.index`, `recall_tui.vault`. Not `diagnostics`,
`agent` or a front end. Start with `golden.py`.
"""

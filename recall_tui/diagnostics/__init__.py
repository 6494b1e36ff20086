"""The diagnostics layer: what is measured and kept about recalls.

Owns trace recordings and the reading of any replayable file (`recording.py`), bug reports
(`report.py`), benchmarks (`engine_bench.py`; the child's measurements in `engine_bench_child.py`, targets
and the table in `engine_bench_report.py`) and the synthetic vault generator (`synth.py`; its
vocabulary in `synth_words.py`, records and text in `synth_text.py`).

May import: `recall_tui.engine`, `recall_tui.index`, `recall_tui.vault`. Not `tuning`,
`agent` or a front end. Start with `recording.py`.
"""

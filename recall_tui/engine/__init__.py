"""The engine layer: every stage of pipeline.md, traced. Headless (no textual, no rich).

Owns configuration and presets (`config.py`, its knob sections in `config_sections.py`),
text analysis (`text.py`), the trace (`trace.py`), the in-memory keyword index (`bm25.py`),
the pipeline (`pipeline.py`), one module per stage (`stages/`), why-not (`why.py`) and
the per-preset engines of one vault, refreshed when it changes (`engines.py`, `EngineSet`).

May import: `recall_tui.index`, `recall_tui.vault`. Start with `pipeline.py`.

    engine = open_engine("sample-vault", preset="default")
    trace = engine.recall("postgres upgrade", why=["billing-db-postgres14"])
"""

from recall_tui.engine.pipeline import Engine, open_engine
from recall_tui.engine.stages.rerank import Reranker
from recall_tui.engine.state import Cancelled, Filters

__all__ = ["Cancelled", "Engine", "Filters", "Reranker", "open_engine"]

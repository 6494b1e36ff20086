"""The recall engine: every stage of pipeline.md, traced. Headless (no textual, no rich).

    engine = open_engine("sample-vault", preset="default")
    trace = engine.recall("postgres upgrade", why=["billing-db-postgres14"])
"""

from recall_tui.engine.pipeline import Engine, open_engine
from recall_tui.engine.stages.rerank import Reranker
from recall_tui.engine.state import Cancelled, Filters

__all__ = ["Cancelled", "Engine", "Filters", "Reranker", "open_engine"]

"""The Entities pane: a memory's edges, its neighbours, the graph stage's scores.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical

from recall_tui.tui.panes.base import StatePane
from recall_tui.tui.safe import lit
from recall_tui.tui.state import UIState
from recall_tui.tui.widgets.table import VimTable


class EntitiesPane(StatePane):
    """The current memory's entity edges and neighbours, and the graph stage's candidates."""

    def compose(self) -> ComposeResult:
        with Horizontal():
            with Vertical(id="entities-left"):
                yield VimTable(id="entity-edges", flex=("object", "subject"))
                yield VimTable(id="entity-neighbours", flex=("neighbours", "memories"))
            yield VimTable(id="graph-candidates", flex=("id", "note"))

    def on_mount(self) -> None:
        edges = self.query_one("#entity-edges", VimTable)
        edges.border_title = "edges of this memory"
        for label in ("subject", "relation", "object"):
            edges.add_column(label)
        nb = self.query_one("#entity-neighbours", VimTable)
        nb.border_title = "neighbours"
        for label in ("entity", "neighbours", "memories"):
            nb.add_column(label)
        g = self.query_one("#graph-candidates", VimTable)
        g.border_title = "graph stage"
        for label in ("rank", "id", "score", "note"):
            g.add_column(label)

    def show_state(self, state: UIState) -> None:
        vault, mid, trace = state.vault, state.current_id, state.trace
        edges = self.query_one("#entity-edges", VimTable)
        nb = self.query_one("#entity-neighbours", VimTable)
        g = self.query_one("#graph-candidates", VimTable)
        edges.clear()
        nb.clear()
        g.clear()
        memory = vault.get(mid) if (vault and mid) else None
        edges.border_subtitle = None
        if memory is None:
            edges.border_subtitle = lit("no memory selected: highlight a hit or open one",
                                        single_line=True)
        elif not memory.edges:
            edges.border_subtitle = lit(f"{memory.id} has no entity edges", single_line=True)
        if memory is not None and vault is not None:
            entities: list[str] = []
            for e in memory.edges:
                edges.add_row(lit(e.subject, single_line=True), lit(e.relation, "cyan", single_line=True),
                              lit(e.object, single_line=True))
                for name in (e.subject, e.object):
                    if name not in entities:
                        entities.append(name)
            for name in entities:
                key = name.lower()
                nb.add_row(lit(name, "bold", single_line=True),
                           lit(", ".join(vault.graph.neighbours(key)), single_line=True),
                           lit(", ".join(vault.memories_with_entity(key)), "dim", single_line=True))
        stage = trace.stage("graph") if trace is not None else None
        if stage is None:
            g.border_subtitle = None
            return
        if stage.skipped:
            g.border_subtitle = lit(f"skipped: {stage.reason}", single_line=True)
        else:
            g.border_subtitle = lit("  ".join(f"{k}={v}" for k, v in stage.info)[:90],
                                    single_line=True) if stage.info else None
        for c in stage.candidates:
            g.add_row(Text(str(c.rank), justify="right"), lit(c.id, single_line=True),
                      Text(f"{c.score:.4f}", justify="right"), lit(c.note, "dim", single_line=True))

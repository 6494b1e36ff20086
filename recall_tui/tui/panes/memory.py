"""The Memory pane: one memory in full (frontmatter, stats, Markdown body).
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Markdown, Static

from recall_tui.tui.panes.base import StatePane, frontmatter_value, safe_markdown_parser
from recall_tui.tui.safe import clean, lit, one_line
from recall_tui.tui.state import UIState
from recall_tui.tui.widgets.table import VimTable


class MemoryPane(StatePane):
    """One memory in full: frontmatter (every key, unknown ones too), stats, Markdown body."""

    def compose(self) -> ComposeResult:
        with Horizontal():
            with VerticalScroll(id="memory-meta"):
                yield Static(id="memory-head")
                yield VimTable(id="memory-frontmatter", flex=("value",))
                yield Static(id="memory-stats")
            with VerticalScroll(id="memory-body-scroll"):
                yield Markdown("", id="memory-body", open_links=False,
                               parser_factory=safe_markdown_parser)

    def on_mount(self) -> None:
        table = self.query_one("#memory-frontmatter", VimTable)
        table.add_column("key", key="key")
        table.add_column("value", key="value")
        self._shown: str | None = None

    def on_markdown_link_clicked(self, event: Markdown.LinkClicked) -> None:
        """Links in a memory body do nothing: the target is shown, never opened."""
        event.stop()
        self.notify(Text(f"link not opened: {one_line(event.href, 80)}"), timeout=3)

    def show_state(self, state: UIState) -> None:
        mid = state.current_id
        memory = state.vault.get(mid) if (state.vault and mid) else None
        head = self.query_one("#memory-head", Static)
        table = self.query_one("#memory-frontmatter", VimTable)
        stats = self.query_one("#memory-stats", Static)
        body = self.query_one("#memory-body", Markdown)
        if memory is None:
            head.update(Text("no memory selected — highlight a hit or open one from the vault "
                             "browser (7)" if not mid else f"unknown memory id: {one_line(mid)}",
                             style="dim"))
            table.clear()
            stats.update("")
            body.update("")
            self._shown = None
            return
        t = Text()
        t.append_text(lit(memory.title, "bold", single_line=True))
        t.append("\n")
        t.append_text(lit(f"{memory.id}  ·  {memory.path}", "dim", single_line=True))
        head.update(t)
        if self._shown != memory.id:
            table.clear()
            loaded = state.load_memory(memory.id) or {}
            front = loaded.get("frontmatter") or dict(memory.frontmatter)
            for key, value in front.items():
                unknown = key in memory.extra
                table.add_row(lit(key, "magenta" if unknown else "", single_line=True),
                              lit(one_line(frontmatter_value(value), 300), single_line=True))
            body.update(clean(loaded.get("body", memory.body)))
            self._shown = memory.id
        st = state.recall_stats(memory.id)
        if st is None:
            stats.update(Text("recall stats: no index", style="dim"))
        else:
            s = Text("recall stats  ", style="bold")
            last = st.last_recalled.isoformat(timespec="minutes") if st.last_recalled else "never"
            s.append(f"recalled {st.count}×  last {last}")
            if st.times:
                s.append("\n" + ", ".join(t.strftime("%Y-%m-%d %H:%M") for t in st.times[-5:]),
                         style="dim")
            stats.update(s)

"""The vault browser: every memory by folder or by topic, narrowed by a filter as you type."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.timer import Timer
from textual.widgets import Input, Label, Tree

from recall_tui.tui.panes.base import StatePane
from recall_tui.tui.safe import lit, one_line
from recall_tui.tui.state import UIState
from recall_tui.tui.widgets.table import VimTree
from recall_tui.vault.model import Memory, Vault


def _matches(m: Memory, needle: str) -> bool:
    if not needle:
        return True
    hay = " ".join((m.id, m.title, m.path, m.topic_path, m.type, *m.tags)).lower()
    return all(part in hay for part in needle.lower().split())


class VaultTree(VimTree):
    """Folders (or topics) as branches, memories as leaves whose data is the memory id."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("p", "pin", "Pin", id="vault.pin"),
        Binding("b", "toggle_group", "By folder/topic", id="vault.group"),
        Binding("s", "cycle_sort", "Sort by title/date/path", id="vault.sort"),
    ]

    SORTS: ClassVar[tuple[str, ...]] = ("title", "date", "path")

    @dataclass
    class Pin(Message):
        """Pin the memory under the cursor."""

        id: str

    @dataclass
    class Open(Message):
        """Open the memory under the cursor in the memory pane."""

        id: str

    @dataclass
    class Cursor(Message):
        """The cursor moved onto a memory."""

        id: str

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(Text("vault"), id=id)
        self.group_by = "folder"
        self.sort_by = "title"
        self.vault: Vault | None = None
        self.needle = ""

    def rebuild(self) -> None:
        """Fill the tree from the vault, grouped and filtered as currently set."""
        self.clear()
        if self.vault is None:
            return
        groups: dict[str, list[Memory]] = {}
        for m in self.vault.memories.values():
            if not _matches(m, self.needle):
                continue
            key = m.path.rsplit("/", 1)[0] if "/" in m.path else "."
            if self.group_by == "topic":
                key = m.topic_path or "(no topic)"
            groups.setdefault(key, []).append(m)
        total = sum(len(v) for v in groups.values())
        self.root.set_label(Text(f"{total} memories by {self.group_by}, sorted by "
                                 f"{self.sort_by} (s changes)", style="bold"))
        order = {"title": lambda x: (x.title.lower(), x.id),
                 "date": lambda x: (-x.updated.timestamp(), x.id),  # newest first
                 "path": lambda x: (x.path, x.id)}[self.sort_by]
        for key in sorted(groups):
            branch = self.root.add(lit(f"{key} ({len(groups[key])})", "bold", single_line=True),
                                   expand=bool(self.needle) or len(groups) <= 6)
            for m in sorted(groups[key], key=order):
                label = Text(m.updated.date().isoformat() + "  ", style="dim")
                label.append_text(lit(one_line(m.title, 60),
                                      "" if m.is_recallable_by_default else "dim",
                                      single_line=True))
                label.append("  ")  # outside lit(): its one-line folding strips the ends
                label.append_text(lit(m.type, "dim cyan", single_line=True))
                label.append("  ")
                label.append_text(lit(m.id, "dim", single_line=True))
                if m.status != "active":
                    label.append(f" [{m.status}]", style="yellow")
                branch.add_leaf(label, data=m.id)
        self.root.expand()

    def _cursor_id(self) -> str | None:
        node = self.cursor_node
        return node.data if node is not None and isinstance(node.data, str) else None

    def action_pin(self) -> None:
        mid = self._cursor_id()
        if mid:
            self.post_message(self.Pin(mid))

    def action_cycle_sort(self) -> None:
        self.sort_by = self.SORTS[(self.SORTS.index(self.sort_by) + 1) % len(self.SORTS)]
        self.rebuild()

    def action_toggle_group(self) -> None:
        self.group_by = "topic" if self.group_by == "folder" else "folder"
        self.rebuild()

    def on_tree_node_selected(self, event: Tree.NodeSelected) -> None:
        event.stop()
        if isinstance(event.node.data, str):
            self.post_message(self.Open(event.node.data))

    def on_tree_node_highlighted(self, event: Tree.NodeHighlighted) -> None:
        event.stop()
        if isinstance(event.node.data, str):
            self.post_message(self.Cursor(event.node.data))


class VaultPane(StatePane):
    """The filter input above the vault tree."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,down", "to_tree", "Leave the filter for the tree", show=False,
                id="vault.to_tree"),
    ]

    def action_to_tree(self) -> None:
        self.query_one(VaultTree).focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Only from the filter: `escape` in the tree goes on to the screen (the query) and
        `down` moves the tree's cursor."""
        if action == "to_tree":
            return self.query_one("#vault-filter").has_focus
        return True

    def compose(self) -> ComposeResult:
        with Vertical():
            with Horizontal(id="vault-filter-row"):
                yield Label("filter ", id="vault-filter-label")
                yield Input(placeholder="words in id, title, path, topic, tags (↓ or esc: "
                            "to the tree)", id="vault-filter", compact=True,
                            select_on_focus=False)
            yield VaultTree(id="vault-tree")

    def show_state(self, state: UIState) -> None:
        tree = self.query_one(VaultTree)
        if tree.vault is not state.vault:
            tree.vault = state.vault
            tree.rebuild()

    _filter_timer: Timer | None = None

    @on(Input.Changed, "#vault-filter")
    def _filter(self, event: Input.Changed) -> None:
        """Rebuild the tree once typing pauses (a rebuild per key would lag on big vaults)."""
        event.stop()
        if self._filter_timer is not None:
            self._filter_timer.stop()
        self._filter_timer = self.set_timer(0.1, lambda: self._apply_filter(event.value))

    def _apply_filter(self, value: str) -> None:
        self._filter_timer = None
        tree = self.query_one(VaultTree)
        tree.needle = value.strip()
        tree.rebuild()

    @on(Input.Submitted, "#vault-filter")
    def _to_tree(self, event: Input.Submitted) -> None:
        event.stop()
        self.query_one(VaultTree).focus()

"""The side panes: memory, supersession, entities, MMR, timings, problems.

Each pane draws a `UIState` in `show_state`; none computes anything about scores (the timings
pane summarises recorded latencies: p50, p95 and a sparkline of the ms the trace reported).
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from markdown_it import MarkdownIt
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Markdown, Static

from recall_tui.engine.trace import STAGE_ORDER
from recall_tui.tui.safe import clean, lit, one_line
from recall_tui.tui.state import UIState
from recall_tui.tui.widgets.vim import VimTable
from recall_tui.tui.widgets.waterfall import ordered_stages
from recall_tui.vault.model import Memory

SPARKS = "▁▂▃▄▅▆▇█"


def _safe_markdown_parser() -> MarkdownIt:
    """CommonMark with raw HTML disabled: HTML in a memory body is shown as text, not run."""
    return MarkdownIt("gfm-like", {"html": False})


def _value(v: Any) -> str:
    """A frontmatter value on one line, as YAML-ish text."""
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    if isinstance(v, Mapping):
        return "{" + ", ".join(f"{k}: {_value(x)}" for k, x in v.items()) + "}"
    if hasattr(v, "isoformat"):
        return v.isoformat()
    return str(v)


def _when(m: Memory | None, attr: str) -> str:
    v = getattr(m, attr, None) if m is not None else None
    return v.strftime("%Y-%m-%d") if v is not None else "—"


class StatePane(Widget):
    """A pane that draws the app's state. Once built it asks for the state (`NeedsState`)."""

    @dataclass
    class NeedsState(Message):
        """The pane was just built and has nothing to show yet."""

        pane: StatePane

    def on_mount(self) -> None:
        self.call_after_refresh(lambda: self.post_message(self.NeedsState(self)))

    def show_state(self, state: UIState) -> None:  # pragma: no cover - interface
        raise NotImplementedError


class MemoryPane(StatePane):
    """One memory in full: frontmatter (every key, unknown ones too), stats, Markdown body."""

    def compose(self) -> ComposeResult:
        with Horizontal():
            with VerticalScroll(id="memory-meta"):
                yield Static(id="memory-head")
                yield VimTable(id="memory-frontmatter")
                yield Static(id="memory-stats")
            with VerticalScroll(id="memory-body-scroll"):
                yield Markdown("", id="memory-body", open_links=False,
                               parser_factory=_safe_markdown_parser)

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
                              lit(one_line(_value(value), 300), single_line=True))
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


class SupersessionPane(StatePane):
    """The current memory's supersession chain, oldest to newest, and the trace's warnings."""

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(id="chain-head")
            yield VimTable(id="chain-table")
            yield Static(id="chain-warnings")

    def on_mount(self) -> None:
        t = self.query_one("#chain-table", VimTable)
        for label in ("#", "id", "title", "created", "updated", "status", "in this recall"):
            t.add_column(label)

    def show_state(self, state: UIState) -> None:
        head = self.query_one("#chain-head", Static)
        table = self.query_one("#chain-table", VimTable)
        warn = self.query_one("#chain-warnings", Static)
        table.clear()
        vault, mid, trace = state.vault, state.current_id, state.trace
        chain = vault.chain_of(mid) if (vault and mid) else None
        if chain is None:
            head.update(Text("no supersession chain for the current memory"
                             if mid else "no memory selected", style="dim"))
        else:
            h = Text("chain (oldest → newest), head: ", style="bold")
            h.append_text(lit(chain.head, single_line=True))
            head.update(h)
            for i, cid in enumerate(chain.ids, 1):
                m = vault.get(cid)
                status = m.status if m else "missing"
                where = Text("—", style="dim")
                if trace is not None:
                    hit = trace.hit(cid)
                    why = trace.why_of(cid)
                    if hit is not None:
                        where = Text(f"hit #{hit.rank}", style="green")
                    elif why is not None:
                        where = lit(f"out at {why.stage}: {why.reason}", "yellow", single_line=True)
                    else:
                        where = Text("not recalled", style="dim")
                mark = "▶ " if cid == mid else ""
                table.add_row(Text(f"{mark}{i}"), lit(cid, single_line=True),
                              lit(one_line(m.title if m else "", 40), single_line=True),
                              _when(m, "created"), _when(m, "updated"),
                              Text(status, style="green" if status == "active" else "yellow"),
                              where)
        lines = Text()
        if trace is not None:
            for hit in trace.hits:
                for w in hit.warnings:
                    lines.append("⚠ ", style="bold red")
                    lines.append_text(lit(f"{hit.id}: {w}", single_line=True))
                    lines.append("\n")
        warn.update(lines if lines.plain else Text("no warnings in this recall", style="dim"))


class EntitiesPane(StatePane):
    """The current memory's entity edges and neighbours, and the graph stage's candidates."""

    def compose(self) -> ComposeResult:
        with Horizontal():
            with Vertical(id="entities-left"):
                yield VimTable(id="entity-edges")
                yield VimTable(id="entity-neighbours")
            yield VimTable(id="graph-candidates")

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


class MMRPane(StatePane):
    """The MMR stage's decision log, pick by pick, as the trace recorded it."""

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(id="mmr-head")
            yield VimTable(id="mmr-table")

    def on_mount(self) -> None:
        t = self.query_one("#mmr-table", VimTable)
        for label in ("pick", "id", "relevance", "penalty", "λ", "mmr", "closest", "runner-up"):
            t.add_column(label)

    def show_state(self, state: UIState) -> None:
        head = self.query_one("#mmr-head", Static)
        table = self.query_one("#mmr-table", VimTable)
        table.clear()
        trace = state.trace
        stage = trace.stage("mmr") if trace is not None else None
        if trace is None or stage is None:
            head.update(Text("no recall yet", style="dim"))
            return
        if stage.skipped:
            head.update(lit(f"mmr skipped: {stage.reason}", "dim", single_line=True))
        else:
            info = "  ".join(f"{k}={v}" for k, v in stage.info)
            head.update(lit(f"mmr: {len(stage.candidates)} candidates, "
                            f"{len(stage.dropped)} dropped  {info}", single_line=True))
        steps = sorted((h.explain.mmr for h in trace.hits if h.explain.mmr is not None),
                       key=lambda s: s.step)
        for s in steps:
            table.add_row(Text(str(s.step), justify="right"), lit(s.id, single_line=True),
                          Text(f"{s.relevance:.4f}", justify="right"),
                          Text(f"{s.penalty:.4f}", justify="right",
                               style="yellow" if s.penalty > 0.5 else ""),
                          Text(f"{s.lam:g}"), Text(f"{s.mmr:.4f}", justify="right"),
                          lit(s.closest_id or "", single_line=True),
                          lit(s.runner_up or "", "dim", single_line=True))
        for d in stage.dropped:
            table.add_row(Text("✗", style="red"), lit(d.id, "red", single_line=True), "", "", "",
                          "", lit(d.reason, "red", single_line=True), "")


def sparkline(values: Sequence[float], width: int = 24) -> str:
    """The last `width` values as block characters scaled to their own maximum."""
    vals = list(values)[-width:]
    top = max(vals, default=0.0)
    if top <= 0:
        return "▁" * len(vals)
    return "".join(SPARKS[min(7, int(v / top * 7.999))] for v in vals)


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile of recorded latencies (q in 0..100)."""
    ordered = sorted(values)
    idx = max(0, min(len(ordered) - 1, round(q / 100 * len(ordered) + 0.5) - 1))
    return ordered[idx]


class TimingsPane(StatePane):
    """Per-stage latency over the session: runs, last, p50, p95, and a sparkline."""

    def compose(self) -> ComposeResult:
        yield Static(id="timings-head")
        yield VimTable(id="timings-table")

    def on_mount(self) -> None:
        t = self.query_one("#timings-table", VimTable)
        for label in ("stage", "runs", "last ms", "p50 ms", "p95 ms", "history"):
            t.add_column(label)

    def show_state(self, state: UIState) -> None:
        table = self.query_one("#timings-table", VimTable)
        table.clear()
        runs = max((len(v) for v in state.timings.values()), default=0)
        head = f"{runs} recalls this session"
        if state.stable_timings:
            head += " (stable-timings mode: live ms hidden)"
        self.query_one("#timings-head", Static).update(Text(head, style="bold"))
        names = [n for n in STAGE_ORDER if n in state.timings]
        names += [n for n in state.timings if n not in STAGE_ORDER]
        if state.trace is not None:
            names += [s.name for s in ordered_stages(state.trace) if s.name not in names]
        for name in names:
            ms = list(state.timings.get(name, ()))
            if state.stable_timings or not ms:
                cells = ["—", "—", "—", ""]
            else:
                cells = [f"{ms[-1]:.2f}", f"{statistics.median(ms):.2f}",
                         f"{percentile(ms, 95):.2f}", sparkline(ms)]
            table.add_row(Text(name), Text(str(len(ms)), justify="right"),
                          *(Text(c, justify="right") for c in cells[:3]),
                          Text(cells[3], style="cyan"))


class ProblemsPane(StatePane):
    """Everything the reader reported about the vault: path, line, severity, reason."""

    def compose(self) -> ComposeResult:
        yield Static(id="problems-head")
        yield VimTable(id="problems-table")

    def on_mount(self) -> None:
        t = self.query_one("#problems-table", VimTable)
        for label in ("severity", "path", "line", "reason"):
            t.add_column(label)
        self._count = -1

    def show_state(self, state: UIState) -> None:
        problems = state.vault.problems if state.vault is not None else ()
        if len(problems) == self._count:
            return
        self._count = len(problems)
        table = self.query_one("#problems-table", VimTable)
        table.clear()
        head = self.query_one("#problems-head", Static)
        head.update(Text(f"{len(problems)} problem(s) in the vault" if state.vault else
                         "vault not loaded", style="bold red" if problems else "bold green"))
        for p in problems:
            table.add_row(Text(p.severity, style="red" if p.severity == "error" else "yellow"),
                          lit(p.path, single_line=True), Text(str(p.line or "")),
                          lit(p.reason, single_line=True))

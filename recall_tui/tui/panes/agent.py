"""The Agent pane: every recall an agent got (the flight recorder of `recall_tui.agent.log`),
newest first and live, and what the configuration on screen would have given it instead.

The list is read once (in a thread) when the pane is first shown, then a half-second timer
asks `LogTail.poll()` for what was appended since (a `stat` and a read of the new bytes, so
nothing happens when nothing changed). `enter` hands the highlighted record to the app's
`AgentFeed` (`app.agent`), which shows its recorded trace in the usual panes, read as the
agent got it; the compare key re-runs that prompt under the preset and knobs on screen and draws both rankings
side by side (`recall_tui.tuning.compare.diff_rankings`, the tuning pane's machinery). Nothing
here computes a score.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.timer import Timer
from textual.widgets import Static
from textual.worker import get_current_worker

from recall_tui.agent.log import AgentRecall, LogTail, log_dir, read_agent_log
from recall_tui.engine.trace import Trace, trace_time
from recall_tui.tui.panes.base import StatePane
from recall_tui.tui.panes.tuning import movement_text
from recall_tui.tui.safe import lit, one_line
from recall_tui.tui.state import UIState
from recall_tui.tui.widgets.table import VimTable
from recall_tui.tuning.compare import RankingDiff, diff_rankings
from recall_tui.tuning.golden import JUDGED
from recall_tui.tuning.metrics import GoldenQuery

#: How often the pane asks the log for new records (seconds).
POLL_S = 0.5
#: Rows kept in the list (the log itself keeps more; `recall-tui log` reads them all).
MAX_ROWS = 1000

EVENT_NAMES = {"UserPromptSubmit": "prompt", "SessionStart": "session start"}


def time_text(rec: AgentRecall) -> str:
    """A record's time as `YYYY-MM-DD HH:MM:SS` (UTC, as written: no local clock involved)."""
    return rec.time.replace("T", " ")[:19] if rec.time else "?"


def event_text(rec: AgentRecall) -> str:
    name = EVENT_NAMES.get(rec.event, rec.event)
    if rec.served_by == "mcp":
        name = f"mcp {name}"
    if rec.source:
        name += f" ({rec.source})"
    return name


def recall_query(rec: AgentRecall) -> str:
    """The query a record's recall ran on (its trace's; the prompt for older records): what a
    judgement of it is keyed by, and what `eval` re-runs."""
    q = (rec.trace_dict or {}).get("query")
    return q if isinstance(q, str) and q.strip() else rec.prompt


def served_text(rec: AgentRecall) -> str:
    return f"{rec.served_by}·{rec.path}" if rec.path else rec.served_by


@dataclass(frozen=True)
class AgentCompare:
    """One agent recall next to the same prompt re-run under the configuration on screen."""

    record: AgentRecall
    agent: Trace
    """The trace the agent got (as recorded)."""
    now: Trace
    """The prompt re-run under the preset and knobs on screen."""
    label: str
    """What `now` ran under (e.g. `preset default, tuned: 2 knobs`)."""
    diff: RankingDiff
    """`diff_rankings(agent, now)`: each id's move from what the agent got to what it gets now."""


class AgentPane(StatePane):
    """The agent's recalls, live, with an on-demand side-by-side re-run of one of them."""

    DEFAULT_CSS = """
    AgentPane { layout: vertical; }
    AgentPane #agent-head { height: auto; max-height: 3; }
    AgentPane #agent-table { height: auto; max-height: 1fr; min-height: 4; }
    AgentPane #agent-text { height: auto; max-height: 8; border: round $primary 40%; }
    AgentPane #agent-figures { height: auto; max-height: 4; }
    AgentPane #agent-compare { height: 2fr; min-height: 5; }
    AgentPane #agent-compare VimTable { width: 1fr; border: round $primary 40%; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("c", "compare", "Re-run side by side", id="agent.compare"),
        Binding("O", "open_recall", "Open the agent's recall", show=False, id="agent.open"),
        Binding("a", "app.judge_agent_recall", "Judge what the agent got", id="agent.judge"),
        Binding("Q", "app.judge_query_set", "Judge a query set",
                id="agent.judge_set"),
    ]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.recalls: list[AgentRecall] = []
        """The records shown, newest first."""
        self.loaded = False
        """The log has been read once (tests wait for it)."""
        self.compare: AgentCompare | None = None
        self.busy = False
        """A compare run is under way (tests wait for False)."""
        self.compare_error: str | None = None
        self._tail: LogTail | None = None
        self._timer: Timer | None = None
        self.judged: dict[str, GoldenQuery] = {}
        """The judged-queries file's lines by query text (the judged column reads them)."""
        self._judged_stamp: tuple[str, int, int] | None = None
        self.weak: dict[str, dict[str, str]] = {}
        """The Stop hook's weak labels: log id -> {memory id: `used 0.67`} (never judgements)."""
        self._weak_stamp: tuple[int, int] | None = None

    def compose(self) -> ComposeResult:
        yield Static(id="agent-head")
        yield VimTable(id="agent-table")
        with VerticalScroll(id="agent-text"):
            yield Static(id="agent-injected")
        yield Static(id="agent-figures")
        with Horizontal(id="agent-compare"):
            yield VimTable(id="agent-a")
            yield VimTable(id="agent-b")

    def on_mount(self) -> None:
        super().on_mount()
        t = self.query_one("#agent-table", VimTable)
        for label in ("time (UTC)", "event", "session", "prompt", "injected", "served by",
                      "judged"):
            t.add_column(label, width={"prompt": 32, "injected": 26}.get(label))
        for side in ("#agent-a", "#agent-b"):
            st = self.query_one(side, VimTable)
            for label in ("#", "move", "id"):
                st.add_column(label)
        self._draw_head()
        self._draw_compare()
        root = self.vault_root
        self._tail = LogTail(root)  # at the end now: the first read below covers the rest
        self.read_judged()
        self._load(root)
        self._timer = self.set_interval(POLL_S, self.poll)

    @property
    def vault_root(self) -> Path:
        return Path(self.app.vault_path)  # type: ignore[attr-defined]

    def show_state(self, state: UIState) -> None:
        """The list does not depend on the recall on screen; nothing to redraw."""

    # --- the list --------------------------------------------------------------------------------

    @work(thread=True, exclusive=True, group="agent-log")
    def _load(self, root: Path) -> None:
        records = read_agent_log(root, limit=MAX_ROWS)
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(self._loaded, records)

    def _loaded(self, records: list[AgentRecall]) -> None:
        seen = {r.id for r in self.recalls}  # arrived through poll() while the log was read
        self.recalls = [*self.recalls, *(r for r in records if r.id not in seen)][:MAX_ROWS]
        self.loaded = True
        self._draw_table()

    def poll(self) -> None:
        """Add what the log gained since the last poll (nothing to do when nothing changed)."""
        if self._tail is None:
            return
        if self.read_judged() | self.read_weak():
            self._draw_table()
        new = self._tail.poll()
        if not new:
            return
        seen = {r.id for r in self.recalls}
        fresh = [r for r in reversed(new) if r.id not in seen]  # poll gives oldest first
        if fresh:
            self.recalls = (fresh + self.recalls)[:MAX_ROWS]
            self._draw_table()

    def _draw_head(self) -> None:
        head = self.query_one("#agent-head", Static)
        if not self.recalls:
            t = Text()
            if not self.loaded:
                t.append("reading the agent log…", style="dim")
            else:
                t.append("no agent recalls yet", style="bold yellow")
                t.append(" in ", style="dim")
                t.append_text(lit(str(log_dir(self.vault_root)), "dim", single_line=True))
                t.append("\ninstall the hooks: ")
                t.append(f"recall-tui hook install --vault {one_line(self.vault_root, 80)}",
                         style="bold")
                t.append(" (see docs/agents.md); every prompt your agent sends then shows "
                         "here as it arrives", style="dim")
            head.update(t)
            return
        keys = self._keys()
        t = Text()
        t.append(f"{len(self.recalls)} agent recalls", style="bold")
        t.append(" · live, newest first · ", style="dim")
        t.append(f"enter opens one as the agent got it · {keys.get('agent.judge', 'a')} "
                 f"judges what it got · {keys.get('agent.compare', 'c')} "
                 f"re-runs it with the knobs on screen · {keys.get('app.judge', 'J')} judges "
                 "the hit under the cursor", style="dim")
        head.update(t)

    def _keys(self) -> dict[str, str]:
        from recall_tui.tui.keymap import all_bindings, display_keys

        settings = getattr(self.app, "settings", None)
        return {b.id: display_keys(b.keys)
                for b in all_bindings(getattr(settings, "keymap", None))}

    def _draw_table(self) -> None:
        table = self.query_one("#agent-table", VimTable)
        key = self.selected_recall_id()
        table.clear()
        for rec in self.recalls:
            injected = ", ".join(rec.injected_ids) if rec.injected_ids else (
                rec.skipped or "nothing")
            table.add_row(time_text(rec), event_text(rec), one_line(rec.session_id, 12),
                          lit(one_line(rec.prompt, 200), single_line=True),
                          Text(one_line(injected, 200),
                               style="" if rec.injected_ids else "dim"),
                          served_text(rec), self.judged_text(rec), key=rec.id)
        if key is not None and table.row_count:
            try:
                table.move_cursor(row=table.get_row_index(key), animate=False)
            except Exception:  # the row is gone (past MAX_ROWS)
                pass
        self._draw_head()

    # --- judging -------------------------------------------------------------------------------------

    def judged_file(self) -> Path:
        """The one file the Agent pane judges into: the vault's `.recall/golden.jsonl`."""
        return self.vault_root / JUDGED

    def read_judged(self) -> bool:
        """Re-read the judgements shown in the judged column when their file changed (a `stat`
        otherwise): `.recall/golden.jsonl`, or before it exists the vault's golden.jsonl it
        will continue. True when they changed. A bad line shows no judgements (the golden tab
        and `eval` name it)."""
        from recall_tui.tuning.metrics import read_golden

        path = self.judged_file()
        if not path.exists():
            path = self.vault_root / "golden.jsonl"
        try:
            st = path.stat()
            stamp: tuple[str, int, int] | None = (str(path), st.st_mtime_ns, st.st_size)
        except OSError:
            stamp = None
        if stamp == self._judged_stamp:
            return False
        self._judged_stamp = stamp
        self.read_weak()
        try:
            lines = read_golden(path) if stamp is not None else []
        except (OSError, ValueError, UnicodeDecodeError):
            lines = []
        self.judged = {q.query: q for q in lines}
        return True

    def read_weak(self) -> bool:
        """Re-read the Stop hook's weak labels when their file changed; True when they did."""
        from recall_tui.agent.weak import read_weak, weak_path

        try:
            st = weak_path(self.vault_root).stat()
            stamp: tuple[int, int] | None = (st.st_mtime_ns, st.st_size)
        except OSError:
            stamp = None
        if stamp == self._weak_stamp:
            return False
        self._weak_stamp = stamp
        self.weak = read_weak(self.vault_root) if stamp is not None else {}
        return True

    def weak_labels(self, rec: AgentRecall) -> dict[str, str]:
        return self.weak.get(rec.id, {})

    def judged_text(self, rec: AgentRecall) -> Text:
        q = self.judged.get(recall_query(rec))
        if q is None:
            weak = self.weak_labels(rec)
            if not weak:
                return Text("")
            used = sum(1 for v in weak.values() if v.startswith("used"))
            return Text(f"weak: {used} of {len(weak)} used", style="dim italic")
        if q.off_topic:
            return Text("nothing needed", style="yellow")
        good = sum(1 for g in q.relevant.values() if g > 0)
        return Text(f"{len(q.relevant)} graded, {good} relevant", style="green" if good else "")

    def judge_closed(self, _: object = None) -> None:
        """After the judge screen: show what it wrote in the judged column."""
        if self.read_judged():
            self._draw_table()

    @on(VimTable.RowHighlighted, "#agent-table")
    def _show_injected(self, event: VimTable.RowHighlighted) -> None:
        event.stop()
        self.draw_injected()

    def draw_injected(self) -> None:
        """The exact text the highlighted recall put in the agent's context (literally), or
        why nothing was."""
        rec = self.selected_recall()
        box = self.query_one("#agent-text", VerticalScroll)
        if rec is None:
            box.border_title = "what the agent got"
            self.query_one("#agent-injected", Static).update("")
            return
        box.border_title = (f"the exact text the agent got ({len(rec.injected_text):,} "
                            "characters)" if rec.injected_text else "what the agent got")
        if rec.injected_text:
            text = lit(rec.injected_text)
        elif rec.injected_ids:  # an older record: the ids, without the text itself
            text = Text(f"injected {len(rec.injected_ids)}: {', '.join(rec.injected_ids)} "
                        "(this record did not keep the text itself)", style="dim")
        else:
            text = Text(f"nothing injected: {rec.skipped or 'no hit'}", style="dim")
        self.query_one("#agent-injected", Static).update(text)

    def selected_recall_id(self) -> str | None:
        return self.query_one("#agent-table", VimTable).cursor_key()

    def selected_recall(self) -> AgentRecall | None:
        rid = self.selected_recall_id()
        return next((r for r in self.recalls if r.id == rid), None)

    @on(VimTable.RowSelected, "#agent-table")
    def _open(self, event: VimTable.RowSelected) -> None:
        event.stop()
        self.action_open_recall()

    def action_open_recall(self) -> None:
        rec = self.selected_recall()
        if rec is None:
            self.app.notify("no agent recall to open yet")
            return
        self.recall_app.agent.open_recall(rec)

    # --- side by side ----------------------------------------------------------------------------

    def action_compare(self) -> None:
        """Re-run the highlighted recall's prompt under the preset and knobs on screen."""
        rec = self.selected_recall()
        if rec is None:
            self.app.notify("no agent recall to compare yet")
            return
        app = self.recall_app
        trace = app.agent.open_recall(rec, show=False)
        if trace is None:
            return
        if app.engine is None:
            app.notify("the vault is not open yet")
            return
        config, label = app.agent.config_on_screen()
        request = app.request
        self.busy = True
        self.compare_error = None
        # As deep as the agent's list (the hook asks for the preset's k plus the always-load
        # memories it leaves out), or deeper when the knobs on screen ask for more.
        k = max(trace.k, config.k)
        self._run_compare(rec, trace, app.recalls.engine_for(request.preset), config, label,
                          app.recalls.recall_filters(request), k, tuple(app.pinned))

    @work(thread=True, exclusive=True, group="agent-compare")
    def _run_compare(self, rec: AgentRecall, agent: Trace, engine: Any, config: Any,
                     label: str, filters: Any, k: int, why: tuple[str, ...]) -> None:
        from recall_tui.engine import Cancelled

        worker = get_current_worker()
        try:
            now = engine.recall(agent.query, k=k, now=trace_time(agent.now),
                                as_of=trace_time(agent.as_of), why=list(why),
                                verbosity=agent.verbosity, filters=filters, config=config,
                                cancel=lambda: worker.is_cancelled)
        except Cancelled:
            return
        except Exception as exc:  # shown in the pane, never raised into the app
            self.app.call_from_thread(self._compare_failed, f"{type(exc).__name__}: {exc}")
            return
        result = AgentCompare(rec, agent, now, label, diff_rankings(agent, now))
        if not worker.is_cancelled:
            self.app.call_from_thread(self._compare_done, result)

    def _compare_failed(self, error: str) -> None:
        self.busy = False
        self.compare_error = error
        self._draw_compare()

    def _compare_done(self, result: AgentCompare) -> None:
        self.busy = False
        self.compare = result
        self._draw_compare()
        self.query_one("#agent-b", VimTable).focus()

    def _draw_compare(self) -> None:
        a, b = self.query_one("#agent-a", VimTable), self.query_one("#agent-b", VimTable)
        a.clear()
        b.clear()
        figures = self.query_one("#agent-figures", Static)
        if self.compare_error:
            figures.update(Text(f"re-run failed: {self.compare_error}", style="bold red"))
            return
        cmp = self.compare
        if cmp is None:
            key = self._keys().get("agent.compare", "c")
            figures.update(Text(f"{key} on a recall: the agent's ranking (A) beside the same "
                                "prompt under the preset and knobs on screen (B)", style="dim"))
            a.border_title, b.border_title = "A: what the agent got", "B: on screen now"
            return
        d, rec = cmp.diff, cmp.record
        a.border_title = f"A: the agent got (preset {cmp.agent.preset}, {time_text(rec)})"
        b.border_title = f"B: on screen now ({cmp.label})"
        injected = set(rec.injected_ids)
        t = Text()
        t.append("prompt ", style="dim")
        t.append_text(lit(one_line(cmp.agent.query, 90), "bold", single_line=True))
        t.append(f"\nboth at k={cmp.now.k}  overlap@{d.k} {d.overlap:.2f}  RBO {d.rbo:.3f}  up {d.count('up')}  "
                 f"down {d.count('down')}  same {d.count('same')}  ")
        t.append(f"new {d.count('new')}", style="bold cyan" if d.count("new") else "")
        t.append(f"  dropped {d.count('dropped')}", style="red" if d.count("dropped") else "")
        new = [m.id for m in d.movements if m.kind == "new"]
        if new:
            t.append("\nnew now: ", style="bold cyan")
            t.append(one_line(", ".join(new), 160))
        for w in cmp.now.why:
            was = cmp.agent.hit(w.id)
            t.append("\npinned ", style="magenta")
            t.append(one_line(w.id, 40), style="bold")
            t.append(f": agent {'#' + str(was.rank) if was else 'missed it'}, now ")
            t.append(f"#{w.rank}" if w.found else f"out at {w.stage}: {one_line(w.reason, 60)}")
        figures.update(t)
        for i, mid in enumerate(d.a, start=1):
            m = d.by_id[mid]
            mark = Text("dropped", style="red") if m.kind == "dropped" else Text("")
            a.add_row(Text(str(i), justify="right"), mark,
                      lit(one_line(mid, 50) + (" ✓" if mid in injected else ""),
                          single_line=True), key=mid)
        for i, mid in enumerate(d.b, start=1):
            b.add_row(Text(str(i), justify="right"), movement_text(d.by_id[mid]),
                      lit(one_line(mid, 50), single_line=True), key=mid)

    def selected_hit(self) -> str | None:
        """The id under the cursor of the focused side (B when neither is focused)."""
        if self.compare is None:
            return None
        a, b = self.query_one("#agent-a", VimTable), self.query_one("#agent-b", VimTable)
        table = a if a.has_focus else b
        if not table.row_count:
            table = a if table is b else b
        return table.cursor_key()

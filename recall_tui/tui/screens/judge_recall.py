"""Judging one recall the agent got (the Agent pane's judge key): grade each memory it was
given, add one that should have come, or mark that the prompt needed none.

Every key writes at once into the vault's one judged-queries file, `.recall/golden.jsonl`
(the format `eval`, `tune` and the golden tab read), through the same writer as the `J`
dialog (`recall_tui.tuning.golden.judge_query`, which `mark_relevant` is built on): only the
prompt's line changes, atomically, and nothing is written when the file changed on disk
since this screen read it (the conflict view shows both versions and the screen re-reads).
The line keeps who judged (`judged_by: user`), when (`judged_at`, UTC), the prompt as the
agent sent it and the flight recorder's record ids (`log_ids`). The vault's own files are
never written (a first judgement copies the vault's golden.jsonl into `.recall/`, as `J`
does, so the set continues).

Judging a query set (the Agent pane's `Q`, on a `recall-tui log sample` file): the screen
walks the set's queries that have a logged recall, one after another (`]` next, `[`
previous), each judged under the set's own query text (what `snapshot`, `eval` and the
coverage re-run), and a coverage line says how many of the top-k results of the whole set,
under the agent's active preset, are still unjudged (`tuning.snapshot.coverage`: the set is
recalled once in a worker, then re-counted after every judgement).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, cast

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, Static
from textual.worker import get_current_worker

from recall_tui.agent.log import AgentRecall
from recall_tui.tui.safe import lit, one_line
from recall_tui.tui.widgets.table import VimTable

if TYPE_CHECKING:
    from recall_tui.tui.app import RecallApp

#: Who a judgement made by a key press is recorded as (weak labels say `stop-hook`).
JUDGED_BY = "user"


class JudgeRecallScreen(ModalScreen[None]):
    """The memories one agent recall injected (and any judged for its prompt), each with its
    grade; keys grade the highlighted one, add a memory, or mark "nothing was needed"."""

    BINDINGS: ClassVar[list[BindingType]] = [
        *(Binding(str(g), f"grade({g})", f"Grade {g}", id=f"judge_recall.grade{g}")
          for g in range(4)),
        Binding("x", "grade(None)", "Remove the judgement", id="judge_recall.remove"),
        Binding("a", "add", "Add a memory that should have come", id="judge_recall.add"),
        Binding("n", "nothing", "Nothing was needed (on/off)", id="judge_recall.nothing"),
        Binding("right_square_bracket", "step(1)", "Next query of the set",
                id="judge_recall.next"),
        Binding("left_square_bracket", "step(-1)", "Previous query of the set",
                id="judge_recall.previous"),
        Binding("escape", "close", "Close", id="judge_recall.close"),
    ]

    DEFAULT_CSS = """
    JudgeRecallScreen { align: center middle; }
    JudgeRecallScreen #judge-recall-table { height: auto; max-height: 16; }
    """

    def __init__(self, rec: AgentRecall, query: str, path: Path,
                 titles: Mapping[str, str], weak: Mapping[str, str] | None = None, *,
                 queue: Sequence[tuple[AgentRecall, str]] = (),
                 weak_of: Callable[[AgentRecall], Mapping[str, str]] | None = None,
                 coverage_of: CoverageJob | None = None) -> None:
        super().__init__()
        self.queue = list(queue) or [(rec, query)]
        """The (recall, query) pairs walked with `]` / `[` (one for a single recall)."""
        self.position = 0
        self.weak_of = weak_of
        self.coverage_job = coverage_of
        self.snapshot: Any = None
        """The set recalled under the active preset (the coverage's rankings)."""
        self.coverage: Any = None
        """`tuning.snapshot.Coverage` as last counted (tests wait for it)."""
        self.rec = rec
        self.query_text = query
        """The recall's query (the trace's): the judged line's `query`, what `eval` re-runs."""
        self.path = path
        """Where judgements go: the vault's `.recall/golden.jsonl`."""
        self.titles = titles
        self.weak = dict(weak or {})
        """id -> the Stop hook's weak label for this recall (shown, never written here)."""
        self.grades: dict[str, int] = {}
        """The judgements of the query as last read."""
        self.off_topic = False
        self.expected: str | None = None
        """sha256 of the file as last read (None: no file): writes refuse when it moved."""
        self.error: str | None = None
        """Why the file cannot be judged into (a bad line): writes are refused."""
        self.writes = 0
        """Judgements written (tests wait for it)."""

    def compose(self) -> ComposeResult:
        with Vertical(id="judge-recall-box", classes="edit-box wide"):
            yield Static(self._head(), id="judge-recall-head")
            yield VimTable(id="judge-recall-table")
            yield Static(id="judge-recall-state")
            if self.coverage_job is not None:
                yield Static(Text("coverage: recalling the set under the agent's preset…",
                                  style="dim"), id="judge-recall-coverage")
            yield Static(self._help(), id="judge-recall-help")

    def _head(self) -> Text:
        head = Text("Judge what the agent got for ", style="bold")
        head.append_text(lit(one_line(self.query_text, 160), single_line=True))
        if len(self.queue) > 1:
            head.append(f"  ({self.position + 1} of {len(self.queue)})", style="dim")
        return head

    def _help(self) -> Text:
        keys = self._keys()
        walk = (f" · {keys['next']} next · {keys['previous']} previous" if len(self.queue) > 1
                else "")
        return Text(f"{keys['grade3']} must come back · {keys['grade2']} relevant · "
                    f"{keys['grade1']} somewhat · {keys['grade0']} not relevant · {keys['remove']} "
                    f"remove\n{keys['add']} add a memory that should have come · "
                    f"{keys['nothing']} nothing was needed{walk} · {keys['close']} close",
                    style="dim")

    def _keys(self) -> dict[str, str]:
        from recall_tui.tui.keymap import all_bindings, display_keys

        settings = getattr(self.app, "settings", None)
        return {b.id.removeprefix("judge_recall."): display_keys(b.keys)
                for b in all_bindings(getattr(settings, "keymap", None))
                if b.id.startswith("judge_recall.")}

    def on_mount(self) -> None:
        t = self.query_one("#judge-recall-table", VimTable)
        for label in ("grade", "id", "title", "how it came"):
            t.add_column(label)
        self.read()
        t.focus()
        if self.coverage_job is not None:
            self._recall_set(self.coverage_job)

    # --- the file ----------------------------------------------------------------------------

    def _source(self) -> Path:
        return cast("RecallApp", self.app).tuning.judged_source(self.path)

    def read(self) -> None:
        """(Re-)read the query's judgements and the file's hash, then redraw."""
        from recall_tui.tuning.golden import file_hash
        from recall_tui.tuning.metrics import read_golden

        source = self._source()
        self.grades, self.off_topic, self.error = {}, False, None
        try:
            self.expected = file_hash(source)
            if self.expected is not None:
                for q in read_golden(source):
                    if q.query == self.query_text:
                        self.grades = dict(q.relevant)
                        self.off_topic = q.off_topic and not any(
                            g > 0 for g in q.relevant.values())
                        break
        except (OSError, ValueError, UnicodeDecodeError) as exc:
            self.error = str(exc)
        self.draw()

    def write(self, grades: Mapping[str, int | None], off_topic: bool | None = None) -> bool:
        """One judgement into the file (the `J` dialog's writer and conflict view)."""
        from recall_tui.tui.screens.edit import ConflictScreen
        from recall_tui.tuning.golden import judge_query
        from recall_tui.vault.edit import EditConflict

        app = cast("RecallApp", self.app)
        if self.error is not None:
            app.notify(self.error, title="not judged", severity="error", markup=False)
            return False
        # (stable output, screenshots and snapshot tests: the app's pinned clock, so the
        # judged file, whose hash the tuning panes show, is the same on every run)
        when = (app.request.now if app.stable_timings and app.request.now is not None
                else datetime.now(timezone.utc))
        meta = {"prompt": self.rec.prompt, "judged_by": JUDGED_BY,
                "judged_at": when.astimezone(timezone.utc).isoformat(timespec="seconds")
                .replace("+00:00", "Z")}
        try:
            app.tuning.seed_judged(self.path)
            judge_query(self.path, self.query_text, grades, expected_hash=self.expected,
                        off_topic=off_topic, meta=meta, log_id=self.rec.id)
        except EditConflict as exc:
            app.push_screen(ConflictScreen(exc))
            self.read()
            return False
        except (ValueError, OSError) as exc:
            app.notify(str(exc), title="not judged", severity="error", markup=False)
            return False
        self.writes += 1
        self.read()
        self.count_coverage()
        return True

    # --- the view ----------------------------------------------------------------------------

    def rows(self) -> list[str]:
        """The ids listed: what the agent was given, in its order, then the others judged."""
        injected = list(self.rec.injected_ids)
        return injected + [m for m in self.grades if m not in injected]

    def draw(self) -> None:
        t = self.query_one("#judge-recall-table", VimTable)
        key = t.cursor_key()
        injected = list(self.rec.injected_ids)
        rows = []
        for mid in self.rows():
            g = self.grades.get(mid)
            how = f"injected #{injected.index(mid) + 1}" if mid in injected else "added"
            if mid in self.weak:
                how += f" · weak: {self.weak[mid]}"
            rows.append((mid, [Text("—" if g is None else str(g), justify="right",
                                    style="dim" if g is None else "bold"),
                               lit(one_line(mid, 50), single_line=True),
                               lit(one_line(self.titles.get(mid, ""), 60), single_line=True),
                               Text(how, style="dim")]))
        t.set_rows(rows)
        if key is not None and t.row_count:
            try:
                t.move_cursor(row=t.get_row_index(key), animate=False)
            except Exception:  # the row is gone (its judgement removed)
                pass
        state = Text()
        if self.error is not None:
            state.append(f"cannot judge into this file: {self.error}", style="bold red")
        else:
            shown = self.path.name if self.path.parent.name != ".recall" else ".recall/" + self.path.name
            state.append(f"{len(self.grades)} judged in {shown}", style="dim")
            if self.off_topic:
                state.append("  · nothing was needed (off-topic)", style="bold yellow")
            if not self.rows():
                state.append("  · the agent was given nothing: add what should have come, "
                             "or mark that nothing was needed", style="dim")
        self.query_one("#judge-recall-state", Static).update(state)

    # --- the query set ----------------------------------------------------------------------

    @work(thread=True, exclusive=True, group="judge-coverage")
    def _recall_set(self, job: CoverageJob) -> None:
        """Recall the whole set once under the agent's preset (the rankings the coverage
        counts); a closed screen cancels it between queries."""
        from recall_tui.engine import Cancelled
        from recall_tui.tuning.snapshot import take

        worker = get_current_worker()
        try:
            snap = take(job.engine, job.queries, k=job.engine.config.k, now=job.now,
                        preset=job.preset, cancel=lambda: worker.is_cancelled)
        except Cancelled:
            return
        except Exception as exc:  # shown in the coverage line
            self.app.call_from_thread(self._coverage_text,
                                      Text(f"coverage: {type(exc).__name__}: {exc}", style="red"))
            return
        if not worker.is_cancelled:
            self.app.call_from_thread(self._set_recalled, snap)

    def _set_recalled(self, snap: Any) -> None:
        self.snapshot = snap
        self.count_coverage()

    def count_coverage(self) -> None:
        """Re-count the set's unjudged top-k results against the judged file as it is now."""
        from recall_tui.tuning.snapshot import coverage, judged_queries

        if self.snapshot is None:
            return
        try:
            judged = judged_queries(self._source())
        except (OSError, ValueError, UnicodeDecodeError) as exc:
            self._coverage_text(Text(f"coverage: {exc}", style="red"))
            return
        self.coverage = coverage(self.snapshot, judged)
        self._coverage_text(Text(self.coverage.line(), style="bold" if self.coverage.unjudged
                                 else "bold green"))

    def _coverage_text(self, text: Text) -> None:
        for w in self.query("#judge-recall-coverage"):
            if isinstance(w, Static):
                w.update(text)

    def action_step(self, delta: int) -> None:
        """The next (1) or previous (-1) query of the set, with its logged recall."""
        if len(self.queue) < 2:
            self.app.notify("one recall on screen: Q in the Agent pane judges a query set")
            return
        self.position = (self.position + delta) % len(self.queue)
        self.rec, self.query_text = self.queue[self.position]
        self.weak = dict(self.weak_of(self.rec)) if self.weak_of is not None else {}
        self.query_one("#judge-recall-head", Static).update(self._head())
        self.query_one("#judge-recall-table", VimTable).move_cursor(row=0, animate=False)
        self.read()

    # --- keys --------------------------------------------------------------------------------

    def selected(self) -> str | None:
        return self.query_one("#judge-recall-table", VimTable).cursor_key()

    def action_grade(self, grade: int | None) -> None:
        mid = self.selected()
        if mid is None:
            self.app.notify("no memory to grade: add one first")
            return
        self.write({mid: grade})

    def action_nothing(self) -> None:
        """Mark (or unmark) the prompt as needing no memory; the injected ones become 0."""
        if self.off_topic:
            self.write({}, off_topic=False)
        else:
            self.write(dict.fromkeys(self.rec.injected_ids, 0), off_topic=True)

    def action_add(self) -> None:
        """Search the vault by id or title (the pin dialog) and judge the chosen memory 3."""
        from recall_tui.tui.screens.dialogs import PinScreen

        def chosen(mid: str | None) -> None:
            if mid and self.write({mid: 3}):
                t = self.query_one("#judge-recall-table", VimTable)
                t.move_cursor(row=t.get_row_index(mid), animate=False)

        self.app.push_screen(PinScreen(sorted(self.titles), dict(self.titles),
                                       prompt="Add a memory that should have come: it is "
                                              "judged 3 (must come back). Type part of its id "
                                              "or title."), chosen)

    def action_close(self) -> None:
        self.workers.cancel_group(self, "judge-coverage")
        self.dismiss(None)


class CoverageJob:
    """What the coverage line recalls: the whole set, on the agent's active preset's engine,
    at the app's clock."""

    def __init__(self, engine: Any, preset: str, queries: Sequence[Any], now: datetime) -> None:
        self.engine = engine
        self.preset = preset
        self.queries = list(queries)
        self.now = now


class QuerySetScreen(ModalScreen[str | None]):
    """Asks for the query set to judge (a `recall-tui log sample --out` file)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="query_set.cancel"),
    ]

    def __init__(self, default: str) -> None:
        super().__init__()
        self.default = default

    def compose(self) -> ComposeResult:
        with Vertical(id="query-set-box", classes="edit-box wide"):
            yield Label("Judge a query set one after another: its file (a `recall-tui log "
                        "sample --out` file; relative to the vault)")
            yield Input(self.default, id="query-set-path")
            yield Label(Text("enter: open · esc: cancel", style="dim"))

    def on_mount(self) -> None:
        self.query_one("#query-set-path", Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip() or None)

    def action_cancel(self) -> None:
        self.dismiss(None)


#: The query set `Q` offers first (where docs/tuning.md has `log sample --out` write).
DEFAULT_SET = ".recall/sample.jsonl"


def judge_query_set(app: Any, pane: Any, text: str | None) -> JudgeRecallScreen | None:
    """Open the judge screen on a query set's logged recalls (the Agent pane's `Q`): each
    query with a logged recall, one after another, and the coverage line under the agent's
    active preset. Says why when nothing can be judged; returns the screen pushed."""
    from recall_tui.agent.sample import judge_queue
    from recall_tui.tuning.snapshot import read_query_set

    if not text:
        return None
    root = Path(app.vault_path)
    path = Path(text).expanduser()
    path = path if path.is_absolute() else root / path
    try:
        items = judge_queue(root, path)
        queries = read_query_set(path)
    except FileNotFoundError:
        app.notify(f"{path}: no such file (write one: recall-tui log sample --out "
                   f"{DEFAULT_SET})", title="no query set", severity="error", markup=False)
        return None
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        app.notify(str(exc), title="no query set", severity="error", markup=False)
        return None
    queue = [(it.recall, it.query) for it in items if it.recall is not None]
    if not queue:
        app.notify(f"none of the {len(items)} queries of {path.name} has a logged recall to "
                   "judge (the log was pruned, or the set was written by hand): judge them with "
                   "J on the recall pane", title="nothing to judge", markup=False)
        return None
    if len(queue) < len(items):
        app.notify(f"{len(items) - len(queue)} of the {len(items)} queries of {path.name} have "
                   "no logged recall and are left out (J on the recall pane judges them)",
                   markup=False)
    active = getattr(app, "agent_active", None)
    preset = active.preset if active is not None else app.request.preset
    try:
        engine = app.recalls.engine_for(preset)
    except (ValueError, OSError):  # the active preset is gone: the one on screen
        preset, engine = app.request.preset, app.engine
    job = CoverageJob(engine, preset, queries, app.request.now or datetime.now(timezone.utc))
    titles = {mid: m.title for mid, m in app.engine.vault.memories.items()}
    pane.read_weak()
    rec, query = queue[0]
    screen = JudgeRecallScreen(rec, query, pane.judged_file(), titles, pane.weak_labels(rec),
                               queue=queue, weak_of=pane.weak_labels, coverage_of=job)
    app.push_screen(screen, pane.judge_closed)
    return screen

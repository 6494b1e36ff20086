"""The error-analysis view (issue 21): the judged questions where the active preset loses to
a seed preset, grouped by category, and one question side by side.

`ErrorsScreen` scores the judged set under the active preset and the compared presets in a
thread (`recall_tui.tuning.errors.score_presets`, the scoring loop of `recall-tui eval`) and
lists what `errors.losses` returns, grouped as `recall-tui errors` prints it. `enter` on a row
opens `LossScreen`: both presets' top hits, the expected (judged relevant) memories with each
side's answer to "why is it (not) here?" (`errors.why_expected`: the engine's own `WhyNot`),
and the highlighted expected memory's explanation under each preset. Every number shown is a
field of what those functions return; the screens compute none.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Footer, Static
from textual.worker import get_current_worker

from recall_tui.tui.safe import lit
from recall_tui.tui.widgets.explain import ExplanationTree
from recall_tui.tui.widgets.table import VimTable
from recall_tui.tui.widgets.whynot import why_text

#: Hits shown per side: the whole top k the losses are judged at.
TOP = 10

_CSS = """
ErrorsScreen, LossScreen { layout: vertical; }
#errors-head, #loss-head { height: auto; max-height: 5; padding: 0 1; }
#errors-table { height: 1fr; }
.loss-row { height: 1fr; }
.loss-row > * { width: 1fr; }
#loss-expected { height: auto; max-height: 8; }
"""


@dataclass(frozen=True)
class ErrorsRequest:
    """What one error analysis runs on (built by `open_errors` from the app's state)."""

    baseline: str
    """The active preset: the one whose losses are listed."""
    names: tuple[str, ...]
    """The baseline, then the presets it is compared with."""
    engine_for: Callable[[str], Any]
    """Preset name -> its engine (the app's, sharing one vault and index)."""
    queries: Path
    """The judged queries file."""
    now: datetime
    k: int


def _fig(x: float | None) -> str:
    return "—" if x is None else f"{x:.2f}"


def _side_title(side: Any, k: int) -> str:
    return f"{side.preset}  R@{k} {_fig(side.recall)}  MRR {_fig(side.mrr)}"


class ErrorsScreen(Screen[None]):
    """The losses of the active preset, by category; `enter` opens one side by side."""

    DEFAULT_CSS = _CSS
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close", id="errors.close"),
    ]

    def __init__(self, request: ErrorsRequest) -> None:
        super().__init__()
        self.request = request
        self.golden: list[Any] = []
        self.grouped: dict[str, list[Any]] | None = None
        """category -> losses, as `errors.losses` returned them (None while scoring)."""
        self.error: str | None = None
        self.rows: dict[str, Any] = {}
        """Row key -> the loss on that row (category rows are not in it)."""

    def compose(self) -> ComposeResult:
        yield Static(id="errors-head")
        yield VimTable(id="errors-table", flex=("query",))
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one("#errors-table", VimTable)
        table.border_title = f"where {self.request.baseline} loses"
        for label in ("category", "line", "query", "lost to", "on", "this R / MRR",
                      "other R / MRR"):
            table.add_column(label, key=label)
        self._say(Text(f"scoring the judged queries of {self.request.queries.name}…",
                       style="dim"))
        table.focus()
        self._score()

    def action_close(self) -> None:
        self.dismiss(None)

    def _say(self, text: Text) -> None:
        self.query_one("#errors-head", Static).update(text)

    # --- scoring ---------------------------------------------------------------------------------

    @work(thread=True, exclusive=True, group="errors")
    def _score(self) -> None:
        from recall_tui.engine import Cancelled
        from recall_tui.tuning import errors
        from recall_tui.tuning.metrics import GoldenError, read_golden

        req = self.request
        worker = get_current_worker()
        try:
            golden = read_golden(req.queries)
        except FileNotFoundError:
            self._from_thread(self._failed, f"{req.queries}: no such file (add judged "
                              "queries, one JSON object a line; see docs/evaluation.md)")
            return
        except (GoldenError, UnicodeDecodeError, OSError) as exc:
            self._from_thread(self._failed, str(exc))
            return
        if not golden:
            self._from_thread(self._failed, f"{req.queries}: no judged queries in it")
            return
        try:
            engines = {name: req.engine_for(name) for name in req.names}
            results = errors.score_presets(
                engines, golden, k=req.k, now=req.now, cancel=lambda: worker.is_cancelled,
                on_preset=lambda name: self._from_thread(self._progress, name, len(golden)))
            grouped = errors.losses(golden, results, req.baseline, top=TOP,
                                    text=errors.hit_text(engines[req.baseline].vault))
        except Cancelled:
            return
        except Exception as exc:  # a preset that cannot load, an engine error: shown
            self._from_thread(self._failed, f"{type(exc).__name__}: {exc}")
            return
        self._from_thread(self._done, golden, grouped)

    def _from_thread(self, fn: Callable[..., None], *args: Any) -> None:
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(fn, *args)

    def _progress(self, name: str, n: int) -> None:
        i = self.request.names.index(name) + 1
        self._say(Text(f"scoring {n} judged queries of {self.request.queries.name} under "
                       f"{name} ({i} of {len(self.request.names)})…", style="dim"))

    def _failed(self, error: str) -> None:
        self.error = error
        self._say(lit(error, "bold red"))

    def _done(self, golden: list[Any], grouped: dict[str, list[Any]]) -> None:
        from recall_tui.tuning.errors import summary

        req = self.request
        self.golden, self.grouped = golden, grouped
        head = lit(summary(grouped, req.names, len(golden), req.k), "bold")
        head.append_text(lit(f"\nfrom {req.queries}; enter opens a question side by side",
                             "dim"))
        self._say(head)
        table = self.query_one("#errors-table", VimTable)
        table.clear()
        self.rows = {}
        if not grouped:
            table.set_subtitle(f"no losses: {req.baseline} is at or above every compared "
                               "preset on every question")
        for cat, losses in grouped.items():
            table.add_row(lit(f"{cat}: {len(losses)}", "bold", single_line=True),
                          *([Text("")] * 6), key=f"cat:{cat}")
            for x in losses:
                key = f"loss{len(self.rows)}"
                self.rows[key] = x
                table.add_row(Text(""), Text(str(x.line), justify="right"),
                              lit(x.query, single_line=True), lit(x.other.preset),
                              Text(x.metric),
                              Text(f"{_fig(x.baseline.recall)} / {_fig(x.baseline.mrr)}"),
                              Text(f"{_fig(x.other.recall)} / {_fig(x.other.mrr)}"), key=key)
        if self.rows:  # the cursor on the first loss, not on its category's row
            table.move_cursor(row=1)

    @on(VimTable.RowSelected, "#errors-table")
    def _open(self, event: VimTable.RowSelected) -> None:
        event.stop()
        loss = self.rows.get(str(event.row_key.value))
        if loss is None:
            return
        query = next(q for q in self.golden if q.line == loss.line)
        self.app.push_screen(LossScreen(loss, query, self.request))


class LossScreen(Screen[None]):
    """One lost question side by side: what came back under each preset, what was expected,
    and why each expected memory ranked where it did (the engine's answers)."""

    DEFAULT_CSS = _CSS
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Back to the losses", id="loss.close"),
    ]

    def __init__(self, loss: Any, query: Any, request: ErrorsRequest) -> None:
        super().__init__()
        self.loss = loss
        self.golden_query = query
        self.request = request
        self.traces: tuple[Any, Any] | None = None
        """(baseline's, other's) recall of the question, asked why about each expected id."""
        self.expected: list[str] = sorted((m for m, g in loss.relevant.items() if g > 0),
                                          key=lambda m: (-loss.relevant[m], m))
        """The relevant ids (grade >= 1), highest grade first."""

    def compose(self) -> ComposeResult:
        yield Static(id="loss-head")
        with Horizontal(classes="loss-row"):
            yield VimTable(id="loss-base", flex=("text",))
            yield VimTable(id="loss-other", flex=("text",))
        yield VimTable(id="loss-expected", flex=("answer",))
        with Horizontal(classes="loss-row"):
            yield ExplanationTree(id="loss-explain-base")
            yield ExplanationTree(id="loss-explain-other")
        yield Footer()

    def on_mount(self) -> None:
        x, k = self.loss, self.request.k
        head = lit(x.query, "bold")
        head.append_text(lit(f"\nline {x.line} · {x.category} · {x.baseline.preset} lost to "
                             f"{x.other.preset} on {x.metric} · relevant: "
                             + ", ".join(f"{m} ({x.relevant[m]})" for m in self.expected),
                             "dim"))
        self.query_one("#loss-head", Static).update(head)
        for sel, side in (("#loss-base", x.baseline), ("#loss-other", x.other)):
            table = self.query_one(sel, VimTable)
            table.border_title = _side_title(side, k)
            for label in ("#", "grade", "id", "text"):
                table.add_column(label, key=label)
            for i, (mid, grade, text) in enumerate(side.hits, start=1):
                table.add_row(Text(str(i), justify="right"),
                              Text("·" if grade < 0 else f"* {grade}" if grade > 0 else "0",
                                   style="bold green" if grade > 0 else "dim"),
                              lit(mid, single_line=True), lit(text, single_line=True), key=mid)
            if not side.hits:
                table.set_subtitle("no hits")
        expected = self.query_one("#loss-expected", VimTable)
        expected.border_title = "expected: why each ranked where it did"
        for label in ("id", "grade", "preset", "answer"):
            expected.add_column(label, key=label)
        for mid in self.expected:
            for i, side in enumerate((x.baseline, x.other)):
                expected.add_row(lit(mid, single_line=True), Text(str(x.relevant[mid])),
                                 lit(side.preset, single_line=True),
                                 Text("asking the engine…", style="dim"), key=f"{i}:{mid}")
        expected.focus()
        self._explain()

    def action_close(self) -> None:
        self.dismiss(None)

    @work(thread=True, exclusive=True, group="loss")
    def _explain(self) -> None:
        from recall_tui.tuning.errors import why_expected

        req, x, q = self.request, self.loss, self.golden_query
        try:
            traces = tuple(why_expected(req.engine_for(name), q, k=req.k, now=req.now)
                           for name in (x.baseline.preset, x.other.preset))
        except Exception as exc:  # shown in the table
            if not get_current_worker().is_cancelled:
                self.app.call_from_thread(self._failed, f"{type(exc).__name__}: {exc}")
            return
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(self._answered, traces)

    def _failed(self, error: str) -> None:
        self.query_one("#loss-expected", VimTable).set_subtitle(lit(error, "bold red"))

    def _answered(self, traces: tuple[Any, Any]) -> None:
        self.traces = traces
        table = self.query_one("#loss-expected", VimTable)
        for mid in self.expected:
            for i, trace in enumerate(traces):
                w = trace.why_of(mid)
                table.update_cell(f"{i}:{mid}", "answer", why_text(w) if w is not None else
                                  Text("no answer in the trace", style="dim"),
                                  update_width=True)
        self._show_explanations(_expected_id(table.cursor_key()))

    def _show_explanations(self, mid: str | None) -> None:
        if self.traces is None:
            return
        mid = mid or (self.expected[0] if self.expected else None)
        for sel, trace in (("#loss-explain-base", self.traces[0]),
                           ("#loss-explain-other", self.traces[1])):
            tree = self.query_one(sel, ExplanationTree)
            tree.border_title = f"{trace.preset}: {mid or ''}"
            hit = trace.hit(mid) if mid else None
            tree.show(hit)
            if hit is None:  # not a hit: the tree's root says where it was lost
                w = trace.why_of(mid) if mid else None
                tree.root.set_label(why_text(w) if w is not None else
                                    Text("nothing expected", style="dim"))

    @on(VimTable.RowHighlighted, "#loss-expected")
    def _highlighted(self, event: VimTable.RowHighlighted) -> None:
        event.stop()
        self._show_explanations(_expected_id(event.row_key.value))


def _expected_id(key: str | None) -> str | None:
    """The memory id of an expected row's key (`side:id`)."""
    return None if key is None else key.partition(":")[2]


def open_errors(app: Any) -> None:
    """Push the error analysis for the app's active preset, on the judged queries the golden
    tab scores (`default_queries_file`, or the file loaded there), at the app's clock."""
    from recall_tui.tui.panes.tuning.common import GOLDEN_K
    from recall_tui.tuning.errors import compared
    from recall_tui.tuning.golden import default_queries_file

    if isinstance(app.screen, ErrorsScreen | LossScreen):
        return
    if app.engine is None:
        app.notify("the error analysis needs the live engine: wait for the vault to open "
                   "(a replay has none)", severity="warning", markup=False)
        return
    pane = app.tuning.pane()
    queries = (pane.queries_file() if pane is not None
               else default_queries_file(Path(app.engine.vault.root)))
    baseline = app.request.preset
    app.push_screen(ErrorsScreen(ErrorsRequest(
        baseline=baseline, names=tuple(compared(baseline)), engine_for=app.recalls.engine_for,
        queries=queries, now=app.request.now or datetime.now(timezone.utc), k=GOLDEN_K)))


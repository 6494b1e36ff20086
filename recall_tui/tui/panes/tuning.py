"""The tuning pane: live knobs, the same query side by side under two configurations, and the
golden set scored under the tuned and the starting configuration.

Nothing here computes a score. Every figure comes from the headless modules: the engine runs
the query under each `Config` (`Engine.recall(config=...)`), `recall_tui.tuning.compare` says how each
hit moved (`rank_deltas`, `diff_rankings`), `recall_tui.tuning.golden` scores the judged queries
(`run_golden`, `compare_runs`: the figures `recall-tui eval` prints). The engine work runs in
exclusive thread workers that pass their cancel flag down, so moving a knob again drops the
run in flight.

Long module: one pane with three tabs (knobs, side by side, golden) that share the tuned
configuration, its workers and their cancel flags; split it by tab when a fourth arrives.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.timer import Timer
from textual.widgets import Input, Label, Select, Static, TabbedContent, TabPane
from textual.worker import get_current_worker

from recall_tui.engine.config import (
    PRESET_DIR,
    Config,
    find_preset,
    knobs,
    list_presets,
    load_preset,
)
from recall_tui.engine.trace import Trace
from recall_tui.tui.panes.base import StatePane
from recall_tui.tui.safe import lit, one_line
from recall_tui.tui.state import UIState
from recall_tui.tui.widgets.vim import VimTable
from recall_tui.tuning.compare import Movement, RankingDiff, diff_rankings, rank_deltas

#: Cut-off of the golden figures: the same default as `recall-tui eval --k`.
GOLDEN_K = 10
#: Wait this long after the last knob change before re-scoring the whole golden set.
GOLDEN_DEBOUNCE_S = 0.4
#: Knobs not worth a row: free text that changes no ranking.
HIDDEN_KNOBS = frozenset({"description"})

#: Side-by-side choices that are not a preset file: the knobs on screen, and where they started.
TUNED, START = "@tuned", "@start"

MOVE_STYLE = {"up": "green", "down": "red", "same": "dim", "new": "bold cyan", "dropped": "red"}
BADGE_STYLE = {"better": "bold green", "worse": "bold red", "same": "dim", "unscored": "dim"}


def parse_knob(type_name: str, text: str) -> Any:
    """The value typed for a knob of `type_name`, or ValueError saying what is expected.
    `Config.with_value` checks the result again against the field's type."""
    s = text.strip()
    if type_name == "bool":
        if s.lower() in ("true", "on", "yes", "1"):
            return True
        if s.lower() in ("false", "off", "no", "0"):
            return False
        raise ValueError(f"expected on/off (true/false), got {s!r}")
    if type_name == "int":
        try:
            return int(s)
        except ValueError:
            raise ValueError(f"expected a whole number, got {s!r}") from None
    if type_name == "float":
        try:
            return float(s)
        except ValueError:
            raise ValueError(f"expected a number, got {s!r}") from None
    if type_name.startswith("tuple[str"):
        return tuple(p.strip() for p in s.split(",") if p.strip())
    if type_name.startswith("dict["):
        try:
            return json.loads(s)
        except json.JSONDecodeError as exc:
            raise ValueError(f"expected JSON like {{\"task\": [7, 30, 90]}}: {exc.msg}") from None
    return s


def knob_text(value: Any) -> str:
    """A knob's value as the edit field shows it (and `parse_knob` reads it back)."""
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, tuple):
        return ", ".join(value)
    if isinstance(value, dict):
        return json.dumps(value)
    return str(value)


def knob_group(path: str) -> str:
    """The stage a knob belongs to: its path without the last part (`general` at the top)."""
    return path.rsplit(".", 1)[0] if "." in path else "general"


def movement_text(m: Movement | None) -> Text:
    """`▲2` green, `▼1` red, `=`, `new`, `dropped` — the label `recall_tui.tuning.compare` gives."""
    if m is None:
        return Text("")
    return Text(m.label, style=MOVE_STYLE.get(m.kind, ""))


def preset_label(name: str, vault_root: Any) -> str:
    """A preset's name in the side-by-side choices; a saved one says where it was saved."""
    try:
        where = find_preset(name, vault_root).parent
    except ValueError:
        return name
    if where == PRESET_DIR:
        return name
    return f"{name} (saved in the vault)" if vault_root is not None and where == (
        Path(vault_root) / ".recall" / "presets") else f"{name} (saved, user config)"


def side_label(choice: str, base_name: str | None) -> str:
    """What a side of the comparison is, for its box title and the figures line."""
    if choice == TUNED:
        return "tuned configuration"
    if choice == START:
        return f"start ({base_name})"
    return f"preset {choice}"


@dataclass(frozen=True)
class TunedRuns:
    """One query under the starting and the tuned configuration (and the compared preset)."""

    baseline: Trace
    """The query under the configuration tuning started from."""
    current: Trace
    """The query under the tuned configuration."""
    deltas: dict[str, Movement]
    """`compare.rank_deltas(baseline, current)`: each current hit's movement."""
    side_name: str
    """What is shown on the left (A) of the side-by-side view: a preset name, TUNED or START."""
    side: Trace
    """The query under A."""
    side_diff: RankingDiff
    """`compare.diff_rankings(side, side_b)`."""
    side_b_name: str = TUNED
    """What is shown on the right (B): a preset name, TUNED (the default) or START."""
    side_b: Trace | None = None
    """The query under B (None: the tuned run, `current`)."""


class TuningPane(StatePane):
    """Knobs (grouped by stage, editable), the hits with their rank change against the starting
    configuration, a side-by-side view and the golden figures, in three tabs."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.base_name: str | None = None
        """The preset tuning started from (a new preset in the query bar starts over)."""
        self.base: Config | None = None
        self.base_k: int | None = None
        """The settings bar's k when tuning started (None: the preset's k)."""
        self.config: Config | None = None
        self.side_name: str | None = None
        self.side_b_name: str = TUNED
        self.runs: TunedRuns | None = None
        self.run_key: tuple[Any, ...] | None = None
        self.busy = False
        """A query run is under way (tests wait for False)."""
        self.golden_busy = False
        """A golden run is waiting for its debounce or under way."""
        self.golden_path: Path | None = None
        self.golden_source: Path | None = None
        """Another queries file loaded in the golden tab (None: the vault's golden.jsonl)."""
        self.golden_hash: str | None = None
        """sha256 of golden.jsonl as last read (the stamp `mark_relevant` checks)."""
        self.golden_queries: list[Any] = []
        self.golden_current: Any = None
        self.golden_baseline: Any = None
        self.golden_error: str | None = None
        self._baseline_cache: dict[tuple[str, str, str | None], Any] = {}
        self._golden_timer: Timer | None = None
        self._golden_key: tuple[Any, ...] | None = None

    def compose(self) -> ComposeResult:
        with TabbedContent(id="tuning-tabs", initial="tune-knobs"):
            with TabPane("knobs", id="tune-knobs"), Horizontal():
                with Vertical(id="knob-side"):
                    yield VimTable(id="knob-table", flex=("value", "start"))
                    yield Input(id="knob-input", placeholder="select a knob, enter to edit")
                    yield Label("", id="knob-msg")
                with Vertical(id="tuned-side"):
                    yield Static(id="tuned-head")
                    yield VimTable(id="tuned-hits", flex=("title",))
            with TabPane("side by side", id="tune-side"), Vertical():
                with Horizontal(id="side-choices"):
                    yield Select([], id="side-preset", prompt="A: compare", allow_blank=True)
                    yield Select([], id="side-b-preset", prompt="B: with", allow_blank=True)
                yield Static(id="side-figures")
                with Horizontal():
                    yield VimTable(id="side-a", flex=("title", "id"))
                    yield VimTable(id="side-b", flex=("title", "id"))
            with TabPane("golden", id="tune-golden"), Vertical():
                yield Input(id="golden-file", placeholder="another queries file (JSONL): type "
                            "its path, enter; empty + enter: the vault's golden.jsonl")
                yield Static(id="golden-summary")
                yield VimTable(id="golden-table", flex=("query",))

    def on_mount(self) -> None:
        super().on_mount()
        kt = self.query_one("#knob-table", VimTable)
        for label, key in (("stage", "group"), ("knob", "knob"), ("value", "value"),
                           ("start", "start")):
            kt.add_column(label, key=key)
        th = self.query_one("#tuned-hits", VimTable)
        for label, key in (("#", "rank"), ("Δ start", "delta"), ("score", "score"),
                           ("judged", "judged"), ("title", "title")):
            th.add_column(label, key=key)
        for side in ("#side-a", "#side-b"):
            t = self.query_one(side, VimTable)
            for label, key in (("#", "rank"), ("move", "move"), ("score", "score"),
                               ("title", "title"), ("id", "id")):
                t.add_column(label, key=key)
        gt = self.query_one("#golden-table", VimTable)
        for label in ("line", "badge", "nDCG start→now", "recall", "unjudged", "query"):
            gt.add_column(label)

    # --- state ---------------------------------------------------------------------------------

    @property
    def recall_app(self) -> Any:
        """The app (typed loosely: this pane only reads its engine, request and presets)."""
        return self.app

    def show_state(self, state: UIState) -> None:
        app = self.recall_app
        if app.engine is None:
            return
        preset, k = app.request.preset, app.request.k
        if self.base_name != preset or self.base_k != k:
            # One k rule: the preset's k, or the k typed in the settings bar, which then is the
            # starting value of the `k` knob (so the knob, the bar and the hits agree).
            self.base_name, self.base_k = preset, k
            config = app._engine_for(preset).config
            self.base = config if k is None or k == config.k else config.with_value("k", k)
            self.config = self.base
            self._draw_knobs()
        if self.side_name is None:
            self.side_name = preset
            self._fill_side_select()
        self.rerun()
        self.schedule_golden()

    def _fill_side_select(self) -> None:
        """Both sides' choices: the tuned knobs, the starting configuration, and every preset
        the vault can see (presets saved since the app opened included, marked saved)."""
        root = self.recall_app.vault_path
        names = list_presets(root) or list(self.recall_app.presets)
        options = [("tuned (the knobs on screen)", TUNED),
                   (f"start ({self.base_name}, as tuning started)", START),
                   *((preset_label(n, root), n) for n in names)]
        for sel_id, value in (("#side-preset", self.side_name),
                              ("#side-b-preset", self.side_b_name)):
            sel = self.query_one(sel_id, Select)
            with sel.prevent(Select.Changed):
                sel.set_options(options)
                if value in {v for _label, v in options}:
                    sel.value = value

    def set_config(self, config: Config) -> None:
        """Make `config` the tuned configuration and re-run the query and the golden set."""
        self.config = config
        self._draw_knobs()
        self.rerun(force=True)
        self.schedule_golden()

    def reset(self) -> None:
        """Back to the configuration tuning started from."""
        if self.base is not None:
            self.set_config(self.base)

    # --- knobs ---------------------------------------------------------------------------------

    def _draw_knobs(self) -> None:
        if self.config is None or self.base is None:
            return
        kt = self.query_one("#knob-table", VimTable)
        row = kt.cursor_row
        kt.clear()
        start = {p: v for p, _t, v, _d in knobs(self.base)}
        last_group = None
        for path, _type, value, _doc in knobs(self.config):
            if path in HIDDEN_KNOBS:
                continue
            group = knob_group(path)
            changed = start.get(path) != value
            kt.add_row(Text(group if group != last_group else "", style="bold"),
                       Text(path.rsplit(".", 1)[-1]),
                       Text(one_line(knob_text(value), 40), style="bold yellow" if changed else ""),
                       Text(one_line(knob_text(start.get(path)), 30), style="dim"),
                       key=path)
            last_group = group
        if kt.row_count:
            kt.move_cursor(row=min(row, kt.row_count - 1), animate=False)

    def knob_info(self, path: str) -> tuple[str, Any, str]:
        """(type name, current value, documentation) of a knob."""
        assert self.config is not None
        for p, t, v, d in knobs(self.config):
            if p == path:
                return t, v, d
        raise KeyError(path)

    def selected_knob(self) -> str | None:
        kt = self.query_one("#knob-table", VimTable)
        if not kt.row_count:
            return None
        return kt.coordinate_to_cell_key(kt.cursor_coordinate).row_key.value

    @on(VimTable.RowHighlighted, "#knob-table")
    def _knob_cursor(self, event: VimTable.RowHighlighted) -> None:
        event.stop()
        path = event.row_key.value
        if path is None or self.config is None:
            return
        type_name, value, doc = self.knob_info(path)
        field = self.query_one("#knob-input", Input)
        field.value = knob_text(value)
        field.border_title = f"{path} ({type_name})"
        self.query_one("#knob-msg", Label).update(Text(one_line(doc, 200), style="dim"))

    @on(VimTable.RowSelected, "#knob-table")
    def _knob_enter(self, event: VimTable.RowSelected) -> None:
        """Enter on a switch flips it; on any other knob it moves to the edit field."""
        event.stop()
        path = event.row_key.value
        if path is None:
            return
        type_name, value, _doc = self.knob_info(path)
        if type_name == "bool":
            self.edit_knob(path, knob_text(not value))
        else:
            self.query_one("#knob-input", Input).focus()

    @on(Input.Submitted, "#knob-input")
    def _knob_submit(self, event: Input.Submitted) -> None:
        event.stop()
        path = self.selected_knob()
        if path is not None and self.edit_knob(path, event.value):
            self.query_one("#knob-table", VimTable).focus()

    def edit_knob(self, path: str, text: str) -> bool:
        """Set one knob from typed text; a bad value leaves the configuration as it was and
        says why under the field. True when the value was taken."""
        assert self.config is not None
        msg = self.query_one("#knob-msg", Label)
        type_name, _value, _doc = self.knob_info(path)
        try:
            config = self.config.with_value(path, parse_knob(type_name, text))
        except (ValueError, TypeError) as exc:
            msg.update(Text(f"{path}: {exc}", style="bold red"))
            return False
        msg.update(Text(f"{path} = {knob_text(config.get(path))}", style="green"))
        self.set_config(config)
        return True

    # --- the query under both configurations -----------------------------------------------------

    def rerun(self, *, force: bool = False) -> None:
        """Run the current query under the starting, the tuned and the compared configuration
        (skipped when nothing they depend on changed)."""
        app = self.recall_app
        request = app.request
        if self.config is None or self.base is None or not request.query.strip():
            self.runs = None
            self._draw_runs()
            return
        engine = app._engine_for(request.preset)
        key = (request, self.config.hash(), self.side_name, self.side_b_name, engine.fingerprint)
        if key == self.run_key and not force:
            return
        self.run_key = key
        self.busy = True
        self._run_query(engine, request, app._recall_filters(request), self.base, self.config,
                        self.side_name or request.preset, self.side_b_name)

    @work(thread=True, exclusive=True, group="tuning")
    def _run_query(self, engine: Any, request: Any, filters: Any, base: Config, config: Config,
                   side_name: str, side_b_name: str = TUNED) -> None:
        from recall_tui.engine import Cancelled

        worker = get_current_worker()

        def recall(cfg: Config, k: int | None = None) -> Trace:
            return engine.recall(request.query, k=k, now=request.now,
                                 as_of=request.as_of, verbosity=request.verbosity,
                                 filters=filters, config=cfg, cancel=lambda: worker.is_cancelled)

        def under(choice: str) -> Trace:
            if choice == TUNED:
                return current
            if choice == START:
                return baseline
            # a preset (or a saved configuration) with the bar's k
            return recall(load_preset(choice, self.recall_app.vault_path), request.k)

        try:
            baseline, current = recall(base), recall(config)
            side, side_b = under(side_name), under(side_b_name)
        except Cancelled:
            return
        except Exception as exc:  # shown, not raised: a bad knob value must not kill the app
            self.app.call_from_thread(self._failed, f"{type(exc).__name__}: {exc}")
            return
        runs = TunedRuns(baseline, current, rank_deltas(baseline, current), side_name, side,
                         diff_rankings(side, side_b), side_b_name, side_b)
        if not worker.is_cancelled:
            self.app.call_from_thread(self._done, runs)

    def _failed(self, error: str) -> None:
        self.busy = False
        self.query_one("#knob-msg", Label).update(Text(f"recall failed: {error}", style="bold red"))

    def _done(self, runs: TunedRuns) -> None:
        self.busy = False
        self.runs = runs
        self._draw_runs()

    def judgement_for(self, query: str) -> dict[str, int] | None:
        """The golden judgements of `query`, None when the golden set does not hold it."""
        for q in self.golden_queries:
            if q.query == query:
                return dict(q.relevant)
        return None

    def _draw_runs(self) -> None:
        th = self.query_one("#tuned-hits", VimTable)
        row = th.cursor_row
        th.clear()
        head = self.query_one("#tuned-head", Static)
        runs = self.runs
        if runs is None:
            head.update(Text("type a query: its hits show here with their rank change against "
                             "the starting configuration", style="dim"))
            self._draw_side()
            return
        judged = self.judgement_for(runs.current.query)
        dropped = [h for h in runs.baseline.hits if runs.current.hit(h.id) is None]
        t = Text()
        t.append(f"tuned from {self.base_name}", style="bold")
        t.append(f"  {len(runs.current.hits)} hits")
        if dropped:
            t.append(f"  dropped since start: {', '.join(one_line(h.id, 30) for h in dropped)}",
                     style="red")
        if judged is None:
            t.append("  (query not in golden.jsonl)", style="dim")
        head.update(t)
        for h in runs.current.hits:
            if judged is None:
                j = Text("—", style="dim")
            elif h.id in judged:
                j = Text(f"grade {judged[h.id]}", style="green" if judged[h.id] else "red")
            else:
                j = Text("unjudged", style="yellow")
            th.add_row(Text(str(h.rank), justify="right"), movement_text(runs.deltas.get(h.id)),
                       Text(f"{h.score:.3f}", justify="right"), j,
                       lit(one_line(h.title, 60), single_line=True), key=h.id)
        if th.row_count:
            th.move_cursor(row=min(row, th.row_count - 1), animate=False)
        self._draw_side()

    def selected_hit(self) -> str | None:
        """The hit under the cursor of the tuned results list, if that list has one."""
        th = self.query_one("#tuned-hits", VimTable)
        if not th.row_count:
            return None
        return th.coordinate_to_cell_key(th.cursor_coordinate).row_key.value

    # --- side by side ----------------------------------------------------------------------------

    @on(Select.Changed, "#side-preset")
    def _side_changed(self, event: Select.Changed) -> None:
        event.stop()
        if isinstance(event.value, str) and event.value != self.side_name:
            self.side_name = event.value
            self.rerun(force=True)

    @on(Select.Changed, "#side-b-preset")
    def _side_b_changed(self, event: Select.Changed) -> None:
        event.stop()
        if isinstance(event.value, str) and event.value != self.side_b_name:
            self.side_b_name = event.value
            self.rerun(force=True)

    def _draw_side(self) -> None:
        a, b = self.query_one("#side-a", VimTable), self.query_one("#side-b", VimTable)
        a.clear()
        b.clear()
        figures = self.query_one("#side-figures", Static)
        runs = self.runs
        if runs is None:
            figures.update("")
            return
        d = runs.side_diff
        name_a = side_label(runs.side_name, self.base_name)
        name_b = side_label(runs.side_b_name, self.base_name)
        a.border_title, b.border_title = f"A: {name_a}", f"B: {name_b}"
        t = Text()
        t.append(f"A {name_a} vs B {name_b}  ", style="bold")
        t.append(f"overlap@{d.k} {d.overlap:.2f}  RBO {d.rbo:.3f}  ")
        t.append(f"up {d.count('up')}  down {d.count('down')}  same {d.count('same')}  "
                 f"new {d.count('new')}  dropped {d.count('dropped')}")
        figures.update(t)
        trace_b = runs.side_b if runs.side_b is not None else runs.current
        for table, ids, trace, is_a in ((a, d.a, runs.side, True), (b, d.b, trace_b, False)):
            for i, mid in enumerate(ids, start=1):
                m, hit = d.by_id[mid], trace.hit(mid)
                table.add_row(
                    Text(str(i), justify="right"),
                    movement_text(m) if not is_a or m.kind == "dropped" else Text(""),
                    Text("—" if hit is None else f"{hit.score:.3f}", justify="right"),
                    lit("" if hit is None else hit.title, single_line=True),
                    lit(mid, "dim", single_line=True), key=mid)

    # --- golden ------------------------------------------------------------------------------------

    def schedule_golden(self, *, force: bool = False) -> None:
        """Re-score the golden set after a short pause (a burst of knob changes runs once)."""
        if force:
            self._golden_key = None
        if self._golden_timer is not None:
            self._golden_timer.stop()
        self.golden_busy = True
        self._golden_timer = self.set_timer(GOLDEN_DEBOUNCE_S, self._start_golden)

    def _start_golden(self) -> None:
        from recall_tui.tuning.golden import file_hash
        from recall_tui.tuning.metrics import read_golden

        self._golden_timer = None
        app = self.recall_app
        if app.engine is None or self.config is None or self.base is None:
            self.golden_busy = False
            return
        engine = app._engine_for(app.request.preset)
        path = self.golden_source or Path(engine.vault.root) / "golden.jsonl"
        self.golden_path = path
        try:
            digest = file_hash(path)
            if digest is None and self.golden_source is not None:
                raise FileNotFoundError("no such file")
        except OSError as exc:  # a chosen file that is missing, a folder, unreadable
            reason = exc.strerror or str(exc)
            self._golden_unusable(f"{path}: cannot read it: {reason}")
            return
        key = (self.config.hash(), self.base.hash(), engine.fingerprint, digest, app.request.now)
        if key == self._golden_key:
            self.golden_busy = False
            return
        self.golden_hash = digest
        self.golden_error = None
        if digest is None:
            self.golden_queries = []
            self.golden_current = self.golden_baseline = None
            self.golden_busy = False
            self._draw_golden()
            return
        try:
            self.golden_queries = read_golden(path)
        except UnicodeDecodeError as exc:
            self._golden_unusable(f"{path}: not UTF-8 text (byte {exc.start})")
            return
        except ValueError as exc:  # GoldenError: file:line: reason
            self._golden_unusable(str(exc))
            return
        if not self.golden_queries:
            self._golden_unusable(f"{path}: no judged queries in it (one JSON object a line: "
                                  '{"query": ..., "relevant": {id: grade}})')
            return
        self._draw_runs()  # the judged column depends on the golden set
        if not self.golden_visible():  # scored when the golden tab is shown
            self.golden_busy = False
            return
        self._golden_key = key
        now = app.request.now or datetime.now(timezone.utc)
        self._run_golden(engine, list(self.golden_queries), self.base, self.config, now,
                         (self.base.hash(), engine.fingerprint, digest))

    @work(thread=True, exclusive=True, group="golden")
    def _run_golden(self, engine: Any, queries: list[Any], base: Config, config: Config,
                    now: datetime, base_key: tuple[str, str, str | None]) -> None:
        from recall_tui.engine import Cancelled
        from recall_tui.tuning.golden import run_golden

        worker = get_current_worker()
        cancel = lambda: worker.is_cancelled  # noqa: E731 - handed down to the engine
        try:
            baseline = self._baseline_cache.get(base_key)
            if baseline is None:
                baseline = run_golden(engine, queries, base, k=GOLDEN_K, now=now,
                                      label=f"start ({self.base_name})", cancel=cancel)
            current = baseline if config.hash() == base.hash() else run_golden(
                engine, queries, config, k=GOLDEN_K, now=now, label="tuned", cancel=cancel)
        except Cancelled:
            return
        except Exception as exc:  # shown in the pane
            self.app.call_from_thread(self._golden_failed, f"{type(exc).__name__}: {exc}")
            return
        if not worker.is_cancelled:
            self.app.call_from_thread(self._golden_done, base_key, baseline, current)

    def _golden_unusable(self, error: str) -> None:
        self.golden_queries = []
        self.golden_current = self.golden_baseline = None
        self._golden_key = None
        self.golden_error = error
        self.golden_busy = False
        self._draw_golden()

    @on(Input.Submitted, "#golden-file")
    def _golden_file(self, event: Input.Submitted) -> None:
        """Load another queries file (a path, `~` allowed; relative to the working folder,
        else to the vault); an empty field goes back to the vault's golden.jsonl."""
        event.stop()
        self.load_golden_file(event.value)

    def load_golden_file(self, text: str) -> None:
        """Score the golden set of the file at `text` (empty: the vault's golden.jsonl)."""
        text = text.strip()
        if not text:
            self.golden_source = None
        else:
            path = Path(text).expanduser()
            if not path.is_absolute() and not path.exists():
                path = Path(self.recall_app.vault_path) / path
            self.golden_source = path
        self.schedule_golden(force=True)

    def golden_visible(self) -> bool:
        """The golden tab is on screen (the set is only re-scored then: it is ~2 recalls per
        judged query)."""
        main = self.recall_app.main()
        return (main is not None and main.active_pane() == "tuning"
                and self.query_one("#tuning-tabs", TabbedContent).active == "tune-golden")

    @on(TabbedContent.TabActivated, "#tuning-tabs")
    def _inner_tab(self, event: TabbedContent.TabActivated) -> None:
        event.stop()
        if event.pane.id == "tune-side":  # a preset saved (S) since is a choice now
            self._fill_side_select()
        if event.pane.id == "tune-golden":
            self.schedule_golden()

    def _golden_failed(self, error: str) -> None:
        self.golden_busy = self._golden_timer is not None
        self.golden_error = error
        self._draw_golden()

    def _golden_done(self, base_key: tuple[str, str, str | None], baseline: Any,
                     current: Any) -> None:
        self._baseline_cache = {base_key: baseline}
        self.golden_baseline, self.golden_current = baseline, current
        self.golden_busy = self._golden_timer is not None
        self._draw_golden()

    def _draw_golden(self) -> None:
        from recall_tui.tuning.golden import compare_runs

        summary = self.query_one("#golden-summary", Static)
        table = self.query_one("#golden-table", VimTable)
        table.clear()
        if self.golden_error:
            summary.update(Text(self.golden_error, style="bold red"))
            return
        if self.golden_hash is None:
            summary.update(Text("no golden.jsonl in this vault: add judged queries (one JSON "
                                "object a line, see docs/evaluation.md), or judge a hit with J",
                                style="yellow"))
            return
        cur, base = self.golden_current, self.golden_baseline
        if cur is None or base is None:
            summary.update(Text("scoring the golden set…", style="dim"))
            return
        cmp = compare_runs(cur, base)
        t = Text()
        t.append(f"{len(cur.queries)} judged queries, k={cur.k}, start = {self.base_name}, "
                 f"from {self.golden_source or 'golden.jsonl'}\n", style="bold")
        for name, label in (("recall", f"recall@{cur.k}"), ("mrr", "MRR"),
                            ("ndcg", f"nDCG@{cur.k}")):
            b, c, d = base.means.get(name), cur.means.get(name), cmp.mean_deltas.get(name)
            t.append(f"{label} {_fig(b)} → {_fig(c)} ")
            t.append(f"({'' if d is None or d < 0 else '+'}{_fig(d)})  ",
                     style="green" if d and d > 0 else "red" if d and d < 0 else "dim")
        t.append(f"\nbetter {cmp.better}  worse {cmp.worse}  same {cmp.same}")
        summary.update(t)
        for q, badge in zip(cur.queries, cmp.badges, strict=True):
            nb, nc = badge.baseline.metrics.get("ndcg"), badge.current.metrics.get("ndcg")
            table.add_row(Text(str(q.line), justify="right"),
                          Text(badge.badge, style=BADGE_STYLE.get(badge.badge, "")),
                          Text(f"{_fig(nb)} → {_fig(nc)}"),
                          Text(_fig(badge.current.metrics.get("recall"))),
                          Text(str(len(badge.current.unjudged)), justify="right"),
                          lit(q.query, single_line=True), key=f"line{q.line}")

    @on(VimTable.RowSelected, "#golden-table")
    def _run_golden_query(self, event: VimTable.RowSelected) -> None:
        """Enter on a golden query runs it in the Recall pane."""
        event.stop()
        for q in self.golden_queries:
            if f"line{q.line}" == event.row_key.value:
                self.recall_app.run_query(q.query)
                return


def _fig(v: float | None) -> str:
    return "—" if v is None else f"{v:.3f}"

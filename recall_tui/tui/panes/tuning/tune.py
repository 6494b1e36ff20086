"""The tune tab of the tuning pane: `recall-tui tune` from the UI.

The tune key (`T` by default) starts `recall_tui.tuning.tune.tune` on the vault open in the
app and the queries file of the golden tab, from the knobs on screen, with the budget, folds
and seed typed in the tab (`recall-tui tune`'s defaults) and, if given, the knobs field's glob
patterns restricting the search (`--knobs`: `fuse.*, vector.threshold`; empty: every knob). It runs in a thread worker; the tab
shows its progress (the recalls done out of the total and what runs now, the pool's query
or the fold and configuration being tried: what the command's progress bar shows) and `escape` cancels it between two recalls. The result is drawn from the
`TuneResult` alone, as the command prints it: the held-out figures per fold, the paired test
against the base, the configuration chosen on all queries, and the best configurations tried;
enter on one of them applies it to the knobs on screen (`S` then saves it as a preset).

Nothing here computes a score: every figure on screen is a field of the `TuneResult`.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.timer import Timer
from textual.widgets import Button, Input, Static
from textual.worker import Worker, get_current_worker

from recall_tui.engine.config import Config
from recall_tui.tui.figures import change_figures
from recall_tui.tui.panes.tuning.common import GOLDEN_K, _fig
from recall_tui.tui.safe import lit, one_line
from recall_tui.tui.widgets.table import VimTable

if TYPE_CHECKING:
    from recall_tui.tui.panes.tuning.pane import TuningPane

#: The defaults of `recall-tui tune` (--budget, --folds, --seed; a test checks they agree), so
#: the tab and the command give the same result for the same vault, queries and `now`.
TUNE_BUDGET, TUNE_FOLDS, TUNE_SEED = 80, 5, 0
#: How often the progress line is redrawn while a tune runs (seconds).
PROGRESS_S = 0.25
#: The tab's layout (`TuningPane` carries it as its DEFAULT_CSS).
TUNE_CSS = """
#tune-settings { height: 1; margin: 0 1; }
#tune-settings .tune-label { width: auto; padding: 0 1 0 0; color: $text-muted; }
#tune-settings Input { width: 8; margin-right: 2; }
#tune-settings #tune-globs { width: 28; }
#tune-start { min-width: 18; }
#tune-status, #tune-summary { height: auto; padding: 0 1; }
#tune-compare { height: auto; max-height: 6; }
#tune-board { height: 1fr; min-height: 4; }
#tune-folds-table { height: auto; max-height: 9; }
"""


@dataclass(frozen=True)
class TuneRequest:
    """What one tune runs on, fixed when it starts."""

    engine: Any
    """The engine of the preset in the query bar (its index is reused for every configuration)."""
    queries_file: Path
    queries: Sequence[Any]
    """The judged queries read from `queries_file`."""
    base: Config
    """The knobs on screen when the tune started."""
    base_name: str
    budget: int
    folds: int
    seed: int
    k: int
    now: datetime
    label: str
    """The vault's folder name, as `recall-tui tune` names it."""
    knobs: tuple[str, ...] = ()
    """Glob patterns restricting the knobs searched (empty: every knob)."""


def parse_settings(budget: str, folds: str, seed: str) -> tuple[int, int, int]:
    """The tab's three fields as numbers, or ValueError saying which one is wrong (the same
    bounds as `recall-tui tune`: budget 1 or more, folds 2 or more, any whole seed)."""
    out = []
    for name, text, low in (("budget", budget, 1), ("folds", folds, 2), ("seed", seed, None)):
        try:
            value = int(text.strip())
        except ValueError:
            raise ValueError(f"{name}: expected a whole number, got {text.strip()!r}") from None
        if low is not None and value < low:
            raise ValueError(f"{name} must be at least {low}")
        out.append(value)
    return out[0], out[1], out[2]


class TuneTab(Vertical):
    """The tune settings, its progress, and the result's tables. The tab owns the tune's
    state; the pane's escape binding cancels it (`cancel`), wherever the focus is in the pane."""

    def __init__(self, pane: TuningPane, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.pane = pane
        self.busy = False
        """A tune is running (tests wait for False)."""
        self.result: Any = None
        """The last `TuneResult` (None before the first tune ends)."""
        self.request: TuneRequest | None = None
        """What the tune running, or the last one, ran on."""
        self.state = "idle"
        """idle, running, cancelling, cancelled, failed or done."""
        self.error: str | None = None
        self.progress: tuple[int, int, str] = (0, 0, "")
        """(done, total, what) as the worker last reported it (read by the progress timer)."""
        self.wanted = False
        """The tune key was pressed before the pane had its state: start once it has."""
        self._worker: Worker[None] | None = None
        self._started = 0.0
        self._timer: Timer | None = None

    # --- the tab's widgets ---------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        with Horizontal(id="tune-settings"):
            yield Static("budget", classes="tune-label")
            yield Input(str(TUNE_BUDGET), id="tune-budget", compact=True, type="integer")
            yield Static("folds", classes="tune-label")
            yield Input(str(TUNE_FOLDS), id="tune-folds", compact=True, type="integer")
            yield Static("seed", classes="tune-label")
            yield Input(str(TUNE_SEED), id="tune-seed", compact=True, type="integer")
            yield Static("knobs", classes="tune-label")
            yield Input("", id="tune-globs", compact=True, placeholder="all (e.g. fuse.*)")
            yield Button("start", id="tune-start", compact=True)
        yield Static(id="tune-status")
        yield Static(id="tune-summary")
        yield VimTable(id="tune-compare")
        yield VimTable(id="tune-board", flex=("changes",))
        yield VimTable(id="tune-folds-table", flex=("chosen",))

    def on_mount(self) -> None:
        """Columns of the tab's tables."""
        k = GOLDEN_K
        cmp = self.query_one("#tune-compare", VimTable)
        for col in ("metric", "base", "tuned", "Δ mean", "wins", "losses", "ties", "sign p",
                    "rand. p"):
            cmp.add_column(col, key=col)
        board = self.query_one("#tune-board", VimTable)
        for col in ("#", "objective", f"R@{k}", "MRR", "chosen by", "changes"):
            board.add_column(col, key=col)
        folds = self.query_one("#tune-folds-table", VimTable)
        for col in ("fold", "train", "test", f"R@{k} base", f"R@{k} tuned", "MRR base",
                    "MRR tuned", "chosen"):
            folds.add_column(col, key=col)
        self._draw_tune()

    def _keys(self) -> dict[str, str]:
        from recall_tui.tui.keymap import all_bindings, display_keys

        settings = getattr(self.app, "settings", None)
        return {b.id: display_keys(b.keys)
                for b in all_bindings(getattr(settings, "keymap", None))}

    # --- starting, progress, cancelling -------------------------------------------------------

    def start(self) -> None:
        """Start a tune with the tab's settings on the knobs on screen (the tune key, the
        start button). Says why when it cannot."""
        from recall_tui.tuning.metrics import read_golden
        from recall_tui.tuning.presets_io import changed_knobs
        from recall_tui.tuning.tune_space import knob_patterns, restrict, search_space

        if self.busy:
            key = self._keys().get("tuning.cancel_tune", "esc")
            self.app.notify(f"a tune is running: {key} cancels it", markup=False)
            return
        app = self.pane.recall_app
        config, base = self.pane.config, self.pane.base
        if app.engine is None or config is None or base is None:
            self.wanted = True  # started by the pane's show_state once it has its state
            return
        self.wanted = False
        try:
            budget, folds, seed = parse_settings(
                *(self.query_one(f"#tune-{n}", Input).value for n in ("budget", "folds", "seed")))
            knobs = knob_patterns([self.query_one("#tune-globs", Input).value])
            restrict(search_space(config), knobs)  # a pattern matching nothing: refused
        except ValueError as exc:
            self._tune_failed(str(exc))
            return
        path = self.pane.queries_file()  # the golden tab's file
        try:
            queries = read_golden(path)
        except FileNotFoundError:
            self._tune_failed(f"{path}: no such file: judge hits with J, or load a queries "
                              "file in the golden tab")
            return
        except (OSError, ValueError) as exc:  # GoldenError (file:line: reason), not UTF-8
            self._tune_failed(f"{path}: {exc}")
            return
        if not queries:
            self._tune_failed(f"{path}: no judged queries in it")
            return
        changed = changed_knobs(base, config)
        base_name = self.pane.base_name or "base"
        if changed:
            base_name += f" + {len(changed)} knob{'s' if len(changed) != 1 else ''}"
        engine = app.recalls.engine_for(app.request.preset)
        root = Path(engine.vault.root)
        request = TuneRequest(engine, path, queries, config, base_name, budget, folds,
                              seed, GOLDEN_K, app.request.now or datetime.now(timezone.utc),
                              root.resolve().name or str(root), knobs)
        self.request = request
        self.busy, self.state, self.error = True, "running", None
        self.progress = (0, 0, "starting")
        self._started = time.monotonic()
        if self._timer is not None:
            self._timer.stop()
        self._timer = self.set_interval(PROGRESS_S, self._draw_tune_status)
        self._worker = self._run_tune(request)
        self._draw_tune_status()
        self.pane.refresh_bindings()  # escape cancels now (the footer shows it)

    @work(thread=True, exclusive=True, group="tune")
    def _run_tune(self, req: TuneRequest) -> None:
        from recall_tui.engine import Cancelled
        from recall_tui.tuning.tune import TuneVault, tune

        worker = get_current_worker()

        def progress(done: int, total: int, what: str) -> None:
            self.progress = (done, total, what)  # one assignment: read by the UI timer

        try:
            result = tune([TuneVault(req.engine, req.queries, req.label)], req.base,
                          base_name=req.base_name, budget=req.budget, folds=req.folds,
                          seed=req.seed, k=req.k, now=req.now, knobs=req.knobs,
                          progress=progress,
                          cancel=lambda: worker.is_cancelled)
        except Cancelled:
            if self.state == "cancelling":  # the user's cancel, not the app closing
                self.app.call_from_thread(self._tune_done, None)
            return
        except Exception as exc:  # shown in the tab: a bad setting must not kill the app
            if not worker.is_cancelled:
                self.app.call_from_thread(self._tune_failed, f"{type(exc).__name__}: {exc}")
            return
        if not worker.is_cancelled:
            self.app.call_from_thread(self._tune_done, result)

    def cancel(self) -> None:
        """Cancel the running tune (it stops before its next recall)."""
        if self._worker is not None and self.busy:
            self.state = "cancelling"
            self._worker.cancel()
            self._draw_tune_status()

    def _stop_timer(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        self.pane.refresh_bindings()  # escape goes back to the app

    def _tune_failed(self, error: str) -> None:
        self._stop_timer()
        self.busy, self.state, self.error = False, "failed", error
        self._draw_tune_status()

    def _tune_done(self, result: Any) -> None:
        """The worker ended: with a result, or None when the user cancelled it."""
        self._stop_timer()
        self.busy = False
        if result is None:
            self.state = "cancelled"
        else:
            self.state, self.result = "done", result
            self._draw_tune()
            if not self.pane.tab_shown("tune-tune"):  # a long search: say it ended where the user is
                key = self._keys().get("pane.tuning", "9")
                self.app.notify(f"tune done ({result.evaluated} configurations run): the "
                                f"Tuning pane ({key}), tune tab, shows the result", markup=False)
        self._draw_tune_status()

    @on(Button.Pressed, "#tune-start")
    def _start_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if self.busy:
            self.cancel()
        else:
            self.start()

    def shown(self) -> None:
        """The tab was just shown (the golden tab may have loaded another file)."""
        self._draw_tune_status()
        if not isinstance(self.screen.focused, Input):
            self.query_one("#tune-board", VimTable).focus()

    @on(Input.Submitted, "#tune-budget, #tune-folds, #tune-seed, #tune-globs")
    def _setting_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.start()

    # --- drawing ---------------------------------------------------------------------------------

    def _draw_tune_status(self) -> None:
        from recall_tui.tui.opening import progress_bar

        keys = self._keys()
        start_key, cancel_key = keys.get("app.tune", "T"), keys.get("tuning.cancel_tune", "esc")
        button = self.query_one("#tune-start", Button)
        button.label = f"cancel ({cancel_key})" if self.busy else f"start ({start_key})"
        t = Text()
        req = self.request
        if self.state == "failed":
            t.append(f"tune not run: {one_line(self.error or '', 300)}", style="bold red")
        elif self.busy:
            done, total, what = self.progress
            t.append("cancelling… " if self.state == "cancelling" else "tuning ",
                     style="bold yellow")
            t.append("▕")
            t.append(progress_bar(done, total), style="cyan")
            t.append(f"▏ {done:,} / {total:,} recalls" if total else "▏ starting")
            if not getattr(self.app, "stable_timings", False):
                t.append(f"  {time.monotonic() - self._started:.0f} s", style="dim")
            t.append("  ")
            t.append_text(lit(one_line(what, 60), "dim", single_line=True))
            t.append(f"  ({cancel_key} cancels)", style="dim")
        elif self.state == "cancelled":
            done, total, _what = self.progress
            t.append(f"tune cancelled after {done:,} of {total:,} recalls; nothing changed",
                     style="yellow")
        elif self.state == "idle":
            t.append(f"{start_key} (or the start button) searches the knobs by "
                     "cross-validation on ", style="dim")
            t.append_text(lit(str(self.pane.queries_file()), "bold", single_line=True))
            t.append(" (the golden tab's queries), from the knobs on screen; the same search "
                     "as recall-tui tune (docs/tuning.md)", style="dim")
        if req is not None and self.state not in ("idle", "failed"):
            if t.plain:
                t.append("\n")
            t.append(f"from {req.base_name} on {req.label}, queries ", style="dim")
            t.append_text(lit(str(req.queries_file), "dim", single_line=True))
            t.append(f", budget {req.budget}, {req.folds} folds, seed {req.seed}, k={req.k}",
                     style="dim")
            if req.knobs:
                t.append(", knobs ", style="dim")
                t.append_text(lit(",".join(req.knobs), "dim", single_line=True))
        self.query_one("#tune-status", Static).update(t)

    def _draw_tune(self) -> None:
        """The result's tables, every figure a field of the `TuneResult`."""
        from recall_tui.tuning.tune_space import describe

        summary = self.query_one("#tune-summary", Static)
        cmp_t = self.query_one("#tune-compare", VimTable)
        board = self.query_one("#tune-board", VimTable)
        folds = self.query_one("#tune-folds-table", VimTable)
        for table in (cmp_t, board, folds):
            table.clear()
        r = self.result
        if r is None:
            summary.update("")
            cmp_t.border_title = board.border_title = folds.border_title = None
            return
        k = r.k
        nq = sum(v["scored"] for v in r.vaults)
        skipped = sum(v["skipped"] for v in r.vaults)
        t = Text()
        t.append(f"{nq} judged queries", style="bold")
        if skipped:
            t.append(f" ({skipped} without a relevant id left out)")
        t.append(f", {r.evaluated} configurations run · ")
        if r.knobs:
            t.append_text(lit(f"knobs {','.join(r.knobs)} only · ", single_line=True))
        t.append(f"chosen on all queries: {describe(r.changes)}\n", style="bold")
        ins, insb = r.insample, r.insample_base
        t.append(f"in-sample (the queries chose it; the held-out figures are the honest ones): "
                 f"recall@{k} {_fig(insb['recall'])} → {_fig(ins['recall'])}, "
                 f"MRR {_fig(insb['mrr'])} → {_fig(ins['mrr'])}", style="dim")
        summary.update(t)

        cmp_t.border_title = (f"held-out vs base {r.base_name}, paired per query "
                              "(each query held out once)")
        for name in ("recall", "mrr", "ndcg"):
            mc = r.comparison.metrics[name]
            d = mc.mean_delta
            fb, fc, fd = change_figures(mc.baseline_mean, mc.candidate_mean, d)
            cmp_t.add_row(name, fb, fc,
                          Text(fd, style="green" if d and d > 0 else "red" if d and d < 0 else ""),
                          str(mc.wins), str(mc.losses), str(mc.ties), f"{mc.sign_p:.3g}",
                          f"{mc.randomisation_p:.3g}", key=name)

        board.border_title = ("best configurations tried (in-sample, all queries) · enter "
                              "applies one to the knobs")
        for i, c in enumerate(r.leaderboard, 1):
            by = [str(f.index) for f in r.folds if f.changes == c.changes]
            board.add_row(str(i), f"{c.objective:.3f}", _fig(c.means["recall"]),
                          _fig(c.means["mrr"]), ", ".join(by) or "—",
                          Text(describe(c.changes)), key=str(i - 1))

        folds.border_title = "held-out figures per fold (chosen on the other folds)"
        for f in r.folds:
            folds.add_row(str(f.index), str(f.train), str(f.test), _fig(f.base["recall"]),
                          _fig(f.heldout["recall"]), _fig(f.base["mrr"]),
                          _fig(f.heldout["mrr"]), Text(describe(f.changes)), key=str(f.index))
        fm, fb = r.fold_mean, r.fold_mean_base
        folds.add_row("mean", "", "", _fig(fb["recall"]), _fig(fm["recall"]), _fig(fb["mrr"]),
                      _fig(fm["mrr"]), "", key="mean")

    # --- applying a configuration ------------------------------------------------------------------

    def tuned_config(self, row: int) -> Config:
        """Configuration `row` of the best-configurations table, as a `Config`: the tune's base
        with that row's changes (`recall_tui.tuning.tune_space.apply_changes`)."""
        from recall_tui.tuning.tune_space import apply_changes

        r = self.result
        return apply_changes(r.base, r.leaderboard[row].changes)

    def apply_tuned(self, row: int) -> None:
        """Make configuration `row` of the table the knobs on screen."""
        from recall_tui.tuning.tune_space import describe

        r = self.result
        if r is None or not 0 <= row < len(r.leaderboard):
            return
        self.pane.set_config(self.tuned_config(row))
        keys = self._keys()
        self.app.notify(f"configuration #{row + 1} is on the knobs now "
                        f"({describe(r.leaderboard[row].changes)}); "
                        f"{keys.get('app.tuning', 't')} shows them, "
                        f"{keys.get('app.save_preset', 'S')} saves them as a preset",
                        markup=False)

    @on(VimTable.RowSelected, "#tune-board")
    def _board_enter(self, event: VimTable.RowSelected) -> None:
        event.stop()
        if event.row_key.value is not None:
            self.apply_tuned(int(event.row_key.value))

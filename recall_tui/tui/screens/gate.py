"""The regression gate before a tuned preset becomes the agent's (the Tuning pane's `S`).

Saving a preset and making it the agent's active one are two decisions (the save dialog's
"also make it the agent's active preset" box). When both are asked and the gate box stays
ticked, `GateScreen` runs the gate first: the judged queries the golden tab scores, recalled
under the agent's active preset (the baseline, read before the save, so overwriting that very
preset still compares against what the agent had) and under the tuned knobs, on the same
vault, index, embedder and clock, compared with the paired test `recall-tui gate` uses
(`recall_tui.tuning.snapshot.gate_configs`). The preset is made active only when nothing got
significantly worse; the screen shows the verdict either way, as `recall-tui gate` prints it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Label, Static
from textual.worker import get_current_worker

from recall_tui.tui.safe import lit, one_line

if TYPE_CHECKING:
    from recall_tui.engine.config import Config
    from recall_tui.engine.pipeline import Engine
    from recall_tui.tuning.snapshot import GateResult, SetQuery


@dataclass(frozen=True)
class GateSetup:
    """What the gate compares, fixed when the save dialog opens."""

    baseline_name: str
    """The agent's active preset."""
    baseline: Config
    """Its `Config`, loaded before anything is saved."""
    queries_file: Path
    queries: tuple[SetQuery, ...]
    """`SetQuery`s of the file."""
    judged: int
    """How many of them are judged (the gate tests only those)."""

    def label(self, root: Path) -> str:
        try:
            shown = str(self.queries_file.relative_to(root))
        except ValueError:
            shown = str(self.queries_file)
        return (f"first run the gate against the agent's preset {self.baseline_name} on "
                f"{shown} ({self.judged} judged); activate only if it passes")


def gate_setup(vault_path: Path, queries_file: Path | None) -> GateSetup | str:
    """The gate for a save from the Tuning pane: the active preset (`.recall/active.json`) as
    the baseline, `queries_file` (the golden tab's; default: the vault's judged queries) as the
    set. A string says why there is none (shown in the dialog instead of the box)."""
    from recall_tui.agent.active import resolve_active
    from recall_tui.engine.config import load_preset
    from recall_tui.tuning.golden import default_queries_file
    from recall_tui.tuning.snapshot import read_query_set

    root = Path(vault_path)
    path = queries_file or default_queries_file(root)
    try:
        active, _warning = resolve_active(root)
        baseline = load_preset(active.preset, root)
        queries = read_query_set(path)
    except FileNotFoundError:
        return f"no gate: {path.name} does not exist (judge a query first)"
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        return f"no gate: {exc}"
    judged = sum(1 for q in queries if q.relevant is not None)
    if not judged:
        return f"no gate: {path.name} has no judged query"
    return GateSetup(active.preset, baseline, path, tuple(queries), judged)


class GateScreen(ModalScreen[bool]):
    """Runs the gate (tuned knobs against the active preset) and shows its verdict; calls
    `on_pass` when nothing got significantly worse. Dismissed with whether it passed."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,enter", "close", "Close", id="gate.close"),
    ]

    def __init__(self, engine: Engine, setup: GateSetup, candidate: Config, candidate_name: str,
                 on_pass: Callable[[], None], now: datetime | None = None) -> None:
        super().__init__()
        self.engine = engine
        self.setup = setup
        self.candidate = candidate
        self.candidate_name = candidate_name
        self.on_pass = on_pass
        self.now = now or datetime.now(timezone.utc)
        self.result: GateResult | None = None
        """The `GateResult` once the gate ran (tests wait for it)."""
        self.error: str | None = None

    def compose(self) -> ComposeResult:
        with Vertical(id="gate-box", classes="edit-box wide"):
            yield Static(Text(f"Gate: preset {self.candidate_name} against the agent's "
                              f"{self.setup.baseline_name}", style="bold"))
            with VerticalScroll(id="gate-scroll"):
                yield Static(Text(f"running {len(self.setup.queries)} queries under both "
                                  "configurations…", style="dim"), id="gate-verdict")
            yield Label(Text("enter / esc: close", style="dim"))

    def on_mount(self) -> None:
        self._run()

    @work(thread=True, exclusive=True, group="gate")
    def _run(self) -> None:
        from recall_tui.engine import Cancelled
        from recall_tui.tuning.snapshot import gate_configs

        worker = get_current_worker()
        try:
            res = gate_configs(self.engine, self.setup.baseline, self.candidate,
                               list(self.setup.queries), k=int(self.candidate.k), now=self.now,
                               baseline_name=self.setup.baseline_name,
                               candidate_name=self.candidate_name,
                               cancel=lambda: worker.is_cancelled)
        except Cancelled:
            return
        except Exception as exc:  # shown on the screen; nothing is activated
            self.app.call_from_thread(self._failed, f"{type(exc).__name__}: {exc}")
            return
        if not worker.is_cancelled:
            self.app.call_from_thread(self._done, res)

    def _failed(self, error: str) -> None:
        self.error = error
        t = Text("the gate could not run: ", style="bold red")
        t.append_text(lit(one_line(error, 300), single_line=True))
        t.append(f"\npreset {self.candidate_name} not made the agent's", style="bold")
        self.query_one("#gate-verdict", Static).update(t)

    def _done(self, res: GateResult) -> None:
        from recall_tui.tuning.snapshot import gate_lines

        self.result = res
        t = Text()
        for note in res.diff.notes:
            t.append_text(lit(f"note: {note}\n"))
        for line in gate_lines(res):
            if line.startswith("gate "):
                t.append(line, style="bold green" if res.passed else "bold red")
            elif line.endswith("  WORSE"):
                t.append_text(lit(line.removesuffix("WORSE"), single_line=True))
                t.append("WORSE\n", style="bold red")
            else:
                t.append_text(lit(line, single_line=True))
                t.append("\n")
        if res.passed:
            t.append(f": the agent now recalls with preset {self.candidate_name}", style="bold")
        else:
            t.append(f": preset {self.candidate_name} saved, not made the agent's "
                     f"(it keeps {self.setup.baseline_name})", style="bold")
        self.query_one("#gate-verdict", Static).update(t)
        if res.passed:
            self.on_pass()

    def action_close(self) -> None:
        self.workers.cancel_group(self, "gate")
        self.dismiss(bool(self.result is not None and self.result.passed))

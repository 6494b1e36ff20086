"""Modal screens that write into the vault: save a tuned preset, judge a hit for the golden
set, edit a memory's `recall_when` phrases (with a preview before saving).

Every write goes through the headless modules (`presets_io.save_preset`, `golden.mark_relevant`,
`preview.apply_recall_when`): atomic, and refused with `EditConflict` when the file changed
since it was read; the screens then show both versions side by side and write nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, Input, Label, Select, Static, TextArea
from textual.worker import get_current_worker

from recall_tui.tui.safe import lit, one_line
from recall_tui.vault.edit import EditConflict, EditError, content_hash, read_phrases


@dataclass(frozen=True)
class PresetChoice:
    """What the save-preset dialog returns."""

    name: str
    """The preset name (a file stem)."""
    where: str
    """`vault` (VAULT/.recall/presets) or `user` (the user's config folder)."""
    overwrite: bool
    """Replace an existing preset of that name."""
    activate: bool = False
    """Also make it the vault's active preset (what the agent recalls with): a separate
    decision, off unless ticked."""
    gate: bool = False
    """With `activate`: run the regression gate against the active preset first and activate
    only if it passes (`recall_tui.tui.screens.gate`)."""


class SavePresetScreen(ModalScreen[PresetChoice | None]):
    """Asks for a preset name and where to save it, shows what is known of how the
    configuration does on queries it was not tuned on, and asks separately whether the
    agent should start using it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="save_preset.cancel"),
    ]

    def __init__(self, changed: list[str], verdict: Text | None = None,
                 gate: str | None = None, no_gate: str = "") -> None:
        super().__init__()
        self.changed = changed
        self.verdict = verdict
        self.gate = gate
        """The gate box's label (None: no gate can run; `no_gate` says why)."""
        self.no_gate = no_gate

    def compose(self) -> ComposeResult:
        with Vertical(id="save-preset-box", classes="edit-box"):
            n = len(self.changed)
            yield Label(f"Save the tuned configuration as a preset ({n} knob"
                        f"{'' if n == 1 else 's'} changed from the start)")
            yield Static(Text(", ".join(self.changed) or "no knob changed", style="dim"))
            yield Static(self.verdict or Text(""), id="preset-verdict")
            yield Input(placeholder="preset name", id="preset-name")
            yield Select([("in the vault (.recall/presets)", "vault"),
                          ("for every vault (user config folder)", "user")],
                         value="vault", allow_blank=False, id="preset-where")
            yield Checkbox("overwrite an existing preset", id="preset-overwrite")
            yield Checkbox("also make it the agent's active preset (.recall/active.json)",
                           False, id="preset-activate")
            if self.gate is not None:
                yield Checkbox(self.gate, True, id="preset-gate")
            elif self.no_gate:
                yield Static(Text(self.no_gate, style="dim"), id="preset-no-gate")
            yield Label("", id="preset-error")

    def on_mount(self) -> None:
        self.query_one("#preset-name").focus()

    @on(Input.Submitted, "#preset-name")
    def _submit(self, event: Input.Submitted) -> None:
        name = event.value.strip()
        if not name:
            self.show_error("give the preset a name")
            return
        self.dismiss(PresetChoice(name, str(self.query_one("#preset-where", Select).value),
                                  self.query_one("#preset-overwrite", Checkbox).value,
                                  self.query_one("#preset-activate", Checkbox).value,
                                  self.gate is not None
                                  and self.query_one("#preset-gate", Checkbox).value))

    def show_error(self, text: str) -> None:
        self.query_one("#preset-error", Label).update(Text(text, style="bold red"))

    def action_cancel(self) -> None:
        self.dismiss(None)


def heldout_verdict(result: Any, config: Any) -> Text:
    """What the last tune's paired held-out test says (`TuneResult.comparison`: each fold's
    choice against the base on the fold's own queries), as the save dialog shows it; or that
    no held-out test covers these knobs."""
    if result is None:
        return Text("no held-out test of these knobs: T runs one (a tune tests each fold's "
                    "choice on queries it was not tuned on)", style="yellow")
    t = Text("held-out test of the last tune (vs ", style="bold")
    t.append(one_line(result.base_name, 40), style="bold")
    t.append("):", style="bold")
    worse = better = False
    for name, mc in result.comparison.metrics.items():
        delta = mc.mean_delta
        if delta is None:
            continue
        significant = mc.randomisation_p < 0.05
        style = ("bold red" if delta < 0 else "bold green") if significant else ""
        worse |= significant and delta < 0
        better |= significant and delta > 0
        t.append(f"  {name} {delta:+.3f} (p {mc.randomisation_p:.3g})", style=style)
    if worse:
        t.append("  significantly worse on held-out queries", style="bold red")
    elif not better:
        t.append("  no significant difference", style="dim")
    if config is not None and config != result.best:
        t.append("\nthe knobs on screen are not the tune's chosen configuration: the test "
                 "does not cover them", style="yellow")
    return t


#: What the grade dialog returns: a grade 0..3, or None to remove the judgement.
REMOVE = "remove"


class GradeScreen(ModalScreen[int | str | None]):
    """Judge a hit for the current query: 1-3 relevant, 0 not relevant, x removes it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        *(Binding(str(g), f"grade({g})", f"Grade {g}", id=f"judge.grade{g}") for g in range(4)),
        Binding("x", f"grade('{REMOVE}')", "Remove the judgement", id="judge.remove"),
        Binding("escape", "cancel", "Cancel", id="judge.cancel"),
    ]

    def __init__(self, memory_id: str, query: str, grade: int | None) -> None:
        super().__init__()
        self.memory_id = memory_id
        self.query_text = query
        self.grade = grade

    def compose(self) -> ComposeResult:
        with Vertical(id="grade-box", classes="edit-box"):
            head = Text("Judge ", style="bold")
            head.append_text(lit(self.memory_id, "bold cyan", single_line=True))
            head.append(" for the query ", style="bold")
            head.append_text(lit(repr(self.query_text), single_line=True))
            yield Static(head)
            now = "unjudged" if self.grade is None else f"grade {self.grade}"
            yield Static(Text(f"now: {now}"))
            # a line each, so nothing is clipped in the 80-column box (issue 22)
            yield Static(Text("3 must come back · 2 relevant · 1 somewhat · 0 not relevant\n"
                              "x remove the judgement · esc cancel", style="dim"))

    def action_grade(self, grade: int | str) -> None:
        self.dismiss(grade)

    def action_cancel(self) -> None:
        self.dismiss(None)


def conflict_view(exc: EditConflict) -> Horizontal:
    """The file as it is on disk now next to the edit the user asked for (nothing written)."""
    return Horizontal(
        VerticalScroll(Static(Text("on disk now", style="bold red")),
                       Static(Text(exc.disk_text)), classes="conflict-side"),
        VerticalScroll(Static(Text("your edit (not written)", style="bold yellow")),
                       Static(Text(exc.intended_text if exc.intended_text is not None
                                   else "(this edit cannot be applied to the disk version)")),
                       classes="conflict-side"),
        id="conflict", classes="conflict")


class ConflictScreen(ModalScreen[None]):
    """Shows an EditConflict: both versions side by side; esc closes."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss", "Close", id="conflict.close"),
    ]

    def __init__(self, exc: EditConflict) -> None:
        super().__init__()
        self.exc = exc

    def compose(self) -> ComposeResult:
        with Vertical(id="conflict-box", classes="edit-box wide"):
            yield Label(Text(str(self.exc), style="bold red"))
            yield conflict_view(self.exc)
            yield Label("nothing was written; esc closes")

    async def action_dismiss(self, result: None = None) -> None:
        self.dismiss(result)


class RecallWhenScreen(ModalScreen[Any]):
    """Edit one memory's `recall_when` phrases: preview the rank and golden figures on a
    scratch index, then save only that key. Dismisses with the `AppliedEdit` after a save."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="recall_when.cancel"),
        Binding("ctrl+t", "preview", "Preview", id="recall_when.preview"),
        Binding("ctrl+s", "save", "Save", id="recall_when.save"),
    ]

    def __init__(self, engine: Any, memory_id: str, query: str, *, config: Any, now: Any,
                 k: int, golden: list[Any] | None, golden_baseline: Any,
                 config_label: str = "") -> None:
        super().__init__()
        self.config_label = config_label
        """Which configuration the preview measures (said above its figures)."""
        self.engine = engine
        self.memory_id = memory_id
        self.query_text = query
        self.config = config
        self.now = now
        self.k = k
        self.golden = golden
        self.golden_baseline = golden_baseline
        memory = engine.vault.get(memory_id)
        self.path = Path(engine.vault.root) / memory.path
        raw = self.path.read_bytes()
        self.expected_hash = content_hash(raw)
        """sha256 of the file when the editor opened: Save refuses if it changed since."""
        self.phrases = read_phrases(raw.decode("utf-8"))
        self.preview: Any = None
        self.conflict: EditConflict | None = None
        """The conflict shown under the editor, if the last save was refused."""
        self.busy = False
        """A preview is running (tests wait for False)."""

    def compose(self) -> ComposeResult:
        with Vertical(id="recall-when-box", classes="edit-box wide"):
            yield Static(Text.assemble(("recall_when of ", "bold"), (self.memory_id, "bold cyan"),
                                       ("  one phrase a line", "dim")))
            yield TextArea("\n".join(self.phrases), id="rw-text")
            with Horizontal(id="rw-buttons"):
                yield Button("Preview (ctrl+t)", id="rw-preview")
                yield Button("Save (ctrl+s)", id="rw-save", variant="primary")
                yield Button("Cancel", id="rw-cancel")
            yield Static(id="rw-result")

    def on_mount(self) -> None:
        self.query_one("#rw-text").focus()

    def new_phrases(self) -> list[str]:
        """The phrases as typed, blank lines dropped."""
        text = self.query_one("#rw-text", TextArea).text
        return [line.strip() for line in text.splitlines() if line.strip()]

    @on(Button.Pressed, "#rw-preview")
    def action_preview(self) -> None:
        self.busy = True
        self.query_one("#rw-result", Static).update(Text("previewing on a scratch index…",
                                                         style="dim"))
        self._preview(self.new_phrases())

    @work(thread=True, exclusive=True, group="recall-when-preview")
    def _preview(self, phrases: list[str]) -> None:
        from recall_tui.tuning.preview import preview_recall_when

        worker = get_current_worker()
        try:
            result = preview_recall_when(self.engine, self.memory_id, phrases, self.query_text,
                                         golden=self.golden, config=self.config, now=self.now,
                                         k=self.k, golden_baseline=self.golden_baseline)
        except (EditError, KeyError, ValueError) as exc:
            self.app.call_from_thread(self._show_error, str(exc))
            return
        if not worker.is_cancelled:
            self.app.call_from_thread(self._show_preview, result)

    def _show_error(self, text: str) -> None:
        self.busy = False
        self.query_one("#rw-result", Static).update(Text(text, style="bold red"))

    def _show_preview(self, p: Any) -> None:
        self.busy = False
        self.preview = p
        t = Text()
        if self.config_label:
            t.append(f"measured under {self.config_label}, at k {p.k}\n", style="dim")
        t.append(f"query {self.query_text!r} (top {p.k}): ", style="bold")
        t.append(f"rank before {_rank(p.before.rank)} → after {_rank(p.after.rank)}\n")
        if p.golden_before is not None and p.golden_after is not None:
            for name in ("recall", "mrr", "ndcg"):
                b, a = p.golden_before.means.get(name), p.golden_after.means.get(name)
                t.append(f"{name} {_fig(b)} → {_fig(a)}  ")
            if p.golden_change is not None:
                t.append(f"\nbetter {p.golden_change.better}  worse {p.golden_change.worse}  "
                         f"same {p.golden_change.same}")
                worse = worse_queries(p.golden_change)
                if worse:
                    t.append("\ngot worse:", style="bold red")
                for line in worse:
                    t.append(f"\n  {line}", style="red")
        else:
            t.append("no golden.jsonl: no golden figures", style="dim")
        self.query_one("#rw-result", Static).update(t)

    @on(Button.Pressed, "#rw-save")
    def action_save(self) -> None:
        from recall_tui.tuning.preview import apply_recall_when

        try:
            applied = apply_recall_when(self.engine, self.memory_id, self.new_phrases(),
                                        expected_hash=self.expected_hash)
        except EditConflict as exc:
            for old in self.query("#conflict"):
                old.remove()
            self.conflict = exc
            t = Text(str(exc), style="bold red")
            t.append("\nyour phrases are kept: esc closes this comparison, then ctrl+s writes "
                     "them onto the version on disk", style="yellow")
            self.query_one("#rw-result", Static).update(t)
            self.query_one("#recall-when-box").mount(conflict_view(exc))
            return
        except (EditError, ValueError) as exc:
            self._show_error(str(exc))
            return
        self.dismiss(applied)

    @on(Button.Pressed, "#rw-cancel")
    def on_cancel_button(self) -> None:
        self.dismiss(None)

    def action_cancel(self) -> None:
        """Escape: with a conflict shown, close only the comparison and keep the typed
        phrases (the next save is checked against the version just shown); else cancel."""
        if self.conflict is not None:
            self.expected_hash = self.conflict.disk_hash
            self.conflict = None
            for old in self.query("#conflict"):
                old.remove()
            self.query_one("#rw-result", Static).update(Text(
                "comparison closed; your phrases are kept: ctrl+s saves them onto the file as "
                "it is on disk now, esc cancels", style="yellow"))
            self.query_one("#rw-text").focus()
            return
        self.dismiss(None)


def worse_queries(change: Any) -> list[str]:
    """One line per golden query the proposed phrases make worse: the query, the metric that
    decided the badge and its value before → after (the figures `golden.compare_runs` gave;
    nothing recomputed)."""
    out = []
    for b in change.badges:
        if b.badge != "worse":
            continue
        metric = b.metric or "score"
        before, after = b.baseline.metrics.get(metric), b.current.metrics.get(metric)
        line = f'"{one_line(b.query, 70)}"  {metric} {_fig(before)} → {_fig(after)}'
        out.append(line)
    return out


def _rank(rank: int | None) -> str:
    return "—" if rank is None else str(rank)


def _fig(v: float | None) -> str:
    return "—" if v is None else f"{v:.3f}"

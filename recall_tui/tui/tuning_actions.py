"""The app's tuning and editing actions, kept out of app.py: show the tuning pane, save or
reset the tuned configuration, judge a hit, edit `recall_when`, open a memory in `$EDITOR`,
and watch the vault for changes made outside the tool.

`RecallApp` mixes `TuningActions` in; the bindings that call these actions are declared on
`RecallApp` (so the help screen, the palette and the keymap see them).
"""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any

from recall_tui.tui.panes.tuning import GOLDEN_K, TuningPane
from recall_tui.tui.panes.tuning.golden import JUDGED
from recall_tui.tui.safe import one_line
from recall_tui.tui.screens.edit import (
    REMOVE,
    ConflictScreen,
    GradeScreen,
    PresetChoice,
    RecallWhenScreen,
    SavePresetScreen,
    heldout_verdict,
)
from recall_tui.tui.screens.gate import GateScreen, GateSetup, gate_setup

if TYPE_CHECKING:
    from recall_tui.index.watch import ChangeSummary, VaultWatcher
    from recall_tui.tui.recalling import RecallController


class TuningActions:
    """Actions of the tuning pane and the editors, mixed into `RecallApp`."""

    recalls: RecallController
    """The app's recall controller (`RecallApp.recalls`): its engines are watched here."""

    watch_vault: bool | None = None
    """Watch the vault for outside changes: None = only when the app opened the vault itself
    (the command line), not when it was handed an engine (tests, snapshots) or replays."""

    @property
    def watcher(self) -> VaultWatcher | None:
        """The running `VaultWatcher` (the engine set's), if any."""
        engines = self.recalls.engines
        return engines.watcher if engines is not None else None

    # --- the pane --------------------------------------------------------------------------------

    def tuning_pane(self) -> TuningPane | None:
        """The tuning pane once it has been shown (None before, and in a replay, where a
        stand-in stands there). Reading or updating its state never builds it: a hidden pane
        mounted by a vault refresh once crashed an exit. `action_tuning` builds it."""
        main = self.main()  # type: ignore[attr-defined]
        pane = main.pane_widget("tuning", build=False) if main is not None else None
        return pane if isinstance(pane, TuningPane) else None

    def action_tuning(self, tab: str = "tune-knobs") -> None:
        """Show the tuning pane on one of its tabs (knobs, side by side, golden)."""
        main = self.main()  # type: ignore[attr-defined]
        if main is None:
            return
        main.action_show_pane("tuning")
        before = main.focused  # None, or the query when the palette ran this from the bar
        pane = main.pane_widget("tuning")  # built here, on first use
        if not isinstance(pane, TuningPane):
            return

        def switch() -> None:
            from textual.widgets import TabbedContent

            pane.query_one("#tuning-tabs", TabbedContent).active = tab
            # focus the tab's list (not the tab strip), once the tab is shown
            main.focus_main_later("tuning", before)

        if pane.is_mounted and pane.query("#tuning-tabs"):
            switch()
        else:
            pane.call_after_refresh(switch)

    def action_tune(self) -> None:
        """Show the tune tab and, once confirmed (a stray key must not start minutes of
        work), start a cross-validated knob search there (on the vault, the golden tab's
        queries and the knobs on screen; one at a time). The tab's start button and `enter`
        in its fields start at once."""
        from textual.widgets import Input

        from recall_tui.tui.screens.dialogs import ConfirmScreen

        self.action_tuning("tune-tune")
        pane = self.tuning_pane()
        if pane is None:
            return
        if pane.tune.busy:
            pane.start_tune()  # says a tune is running and how to cancel it
            return
        fields = {n: pane.query_one(f"#tune-{n}", Input).value
                  for n in ("budget", "folds", "seed")} if pane.query("#tune-budget") else {}
        detail = (f"budget {fields.get('budget') or '?'} configurations, "
                  f"{fields.get('folds') or '?'} folds, seed {fields.get('seed') or '?'}, on "
                  f"{pane.queries_file().name}; it runs in the background (esc in the pane "
                  "cancels it)")

        def answered(yes: bool | None) -> None:
            if yes:
                pane.start_tune()

        self.push_screen(ConfirmScreen("Start a tune (a cross-validated knob search)?",  # type: ignore[attr-defined]
                                       detail), answered)

    def action_reset_knobs(self) -> None:
        pane = self.tuning_pane()
        if pane is not None and pane.base is not None:
            pane.reset()
            self.notify(f"knobs reset to preset {pane.base_name}", markup=False)  # type: ignore[attr-defined]

    def action_save_preset(self) -> None:
        """Ask for a name and save the tuned configuration as a preset."""
        from recall_tui.tuning.presets_io import changed_knobs

        pane = self.tuning_pane()
        if pane is None or pane.config is None or pane.base is None:
            self.notify("open the tuning pane (t) and change a knob first")  # type: ignore[attr-defined]
            return
        changed = [c.path for c in changed_knobs(pane.base, pane.config)]
        gate = gate_setup(self, pane.golden.source)  # the active preset, read before the save
        screen = SavePresetScreen(changed, heldout_verdict(pane.tune.result, pane.config),
                                  *((gate.label(self.vault_path), "") if isinstance(gate, GateSetup)  # type: ignore[attr-defined]
                                    else (None, gate)))
        self.push_screen(screen, lambda choice: self._save_preset(pane, choice, gate))  # type: ignore[attr-defined]

    def _save_preset(self, pane: TuningPane, choice: PresetChoice | None,
                     gate: GateSetup | str = "") -> None:
        from recall_tui.tuning.presets_io import save_preset

        if choice is None or pane.config is None:
            return
        try:
            path = save_preset(pane.config, choice.name, where=choice.where,
                               vault_root=self.vault_path, base=pane.base,  # type: ignore[attr-defined]
                               base_name=pane.base_name, overwrite=choice.overwrite)
        except (ValueError, FileExistsError, OSError) as exc:
            self.notify(str(exc), title="preset not saved", severity="error", markup=False)  # type: ignore[attr-defined]
            return
        if self.recalls.engines is not None:
            self.recalls.engines.forget([choice.name])
        self.reload_presets()  # type: ignore[attr-defined]
        self.notify(f"saved preset {choice.name} to {path.parent.name}/{path.name}; "  # type: ignore[attr-defined]
                    "choose it with o or the palette", markup=False)
        if choice.activate and choice.gate and isinstance(gate, GateSetup):  # gate, then deploy
            self.push_screen(GateScreen(self.engine, gate, pane.config, choice.name,  # type: ignore[attr-defined]
                                        lambda: self.make_active(choice.name), self.request.now))  # type: ignore[attr-defined]
        elif choice.activate:  # a separate decision: saving never deploys by itself
            self.make_active(choice.name)

    def make_active(self, name: str) -> None:
        """Make preset `name` the vault's active one (`.recall/active.json`): what the hooks,
        the MCP server and `query` recall with from now on."""
        from recall_tui.agent.active import write_active

        try:
            write_active(self.vault_path, preset=name, set_by="tui")  # type: ignore[attr-defined]
        except (OSError, ValueError) as exc:
            self.notify(f"preset {name} saved, but not made the agent's: {exc}",  # type: ignore[attr-defined]
                        title="active preset", severity="warning", markup=False)
            return
        self.notify(f"the agent now recalls with preset {name} (.recall/active.json)",  # type: ignore[attr-defined]
                    markup=False)
        self.agent.check_active()  # type: ignore[attr-defined]  # RecallApp owns `agent`

    # --- judging a hit ---------------------------------------------------------------------------

    def _selected_hit(self) -> str | None:
        """The hit the user sees highlighted: the tuned list's cursor on the Tuning pane, the
        results cursor on the Recall pane, else the current memory (Memory, Vault panes)."""
        from recall_tui.tui.widgets.results import ResultsTable

        main = self.main()  # type: ignore[attr-defined]
        active = main.active_pane() if main is not None else None
        if active == "tuning":
            pane = self.tuning_pane()
            hit = pane.selected_hit() if pane is not None else None
            if hit is not None:
                return hit
        elif active == "recall":
            hit = main.query_one(ResultsTable).current_id()
            if hit is not None:
                return hit
        return self.current_id  # type: ignore[attr-defined]

    def judge_file(self) -> Path:
        """Where `J` writes: a queries file loaded in the golden tab (the one it scores and
        the judged column reads), else `.recall/golden.jsonl`: the tool writes nothing in a
        vault outside `.recall/`, so the vault's own golden.jsonl is read, never written
        (its judgements are carried over by `_seed_judged`). Asking builds no pane."""
        main = self.main()  # type: ignore[attr-defined]
        found = main.query(TuningPane) if main is not None else None
        if found and found.first().golden.source is not None:
            return found.first().golden.source
        return Path(self.engine.vault.root) / JUDGED  # type: ignore[attr-defined]

    def _judged_source(self, path: Path) -> Path:
        """The file whose judgements `path` continues: itself, or, for a `.recall/`
        golden.jsonl not written yet, the vault's golden.jsonl."""
        root = Path(self.engine.vault.root)  # type: ignore[attr-defined]
        if path == root / JUDGED and not path.exists():
            return root / "golden.jsonl"
        return path

    def _seed_judged(self, path: Path) -> None:
        """Start `.recall/golden.jsonl` as a copy of the vault's golden.jsonl (atomic), so the
        first judgement continues the set the golden tab showed."""
        from recall_tui.vault.edit import atomic_write

        source = self._judged_source(path)
        if source == path or not source.exists():
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, source.read_bytes(), 0o644)

    def action_judge(self) -> None:
        """Grade the selected hit for the current query in the queries file on screen."""
        from recall_tui.tuning.golden import file_hash
        from recall_tui.tuning.metrics import read_golden

        mid, query = self._selected_hit(), self.request.query.strip()  # type: ignore[attr-defined]
        if not mid or not query or self.engine is None:  # type: ignore[attr-defined]
            self.notify("judge a hit: type a query and highlight one of its hits")  # type: ignore[attr-defined]
            return
        path = self.judge_file()
        source = self._judged_source(path)
        try:
            expected = file_hash(source)
        except OSError as exc:  # a loaded file that became a folder, unreadable
            self.notify(f"{path}: {exc.strerror or exc}", title="not judged", severity="error",  # type: ignore[attr-defined]
                        markup=False)
            return
        grade = None
        if expected is not None:
            try:
                for q in read_golden(source):
                    if q.query == query:
                        grade = q.relevant.get(mid)
                        break
            except (ValueError, UnicodeDecodeError) as exc:
                self.notify(str(exc), title=path.name, severity="error", markup=False)  # type: ignore[attr-defined]
                return
        self.push_screen(GradeScreen(mid, query, grade),  # type: ignore[attr-defined]
                         lambda g: self._judge(path, query, mid, g, expected))

    def _judge(self, path: Path, query: str, mid: str, grade: int | str | None,
               expected: str | None) -> None:
        from recall_tui.tuning.golden import mark_relevant
        from recall_tui.vault.edit import EditConflict

        if grade is None:
            return
        value = None if grade == REMOVE else int(grade)
        try:
            self._seed_judged(path)
            mark_relevant(path, query, mid, value, expected_hash=expected)
        except EditConflict as exc:
            self.push_screen(ConflictScreen(exc))  # type: ignore[attr-defined]
            return
        except (ValueError, OSError) as exc:
            self.notify(str(exc), title="not judged", severity="error", markup=False)  # type: ignore[attr-defined]
            return
        what = "removed the judgement of" if value is None else f"graded {value}:"
        shown = _shown_path(path, Path(self.engine.vault.root))  # type: ignore[attr-defined]
        self.notify(f"{shown}: {what} {mid} for {query!r}", markup=False)  # type: ignore[attr-defined]
        # the status line keeps it (the notice fades): which file the judgement went to
        grade_text = "removed" if value is None else str(value)
        self.status_text = f"judged {one_line(mid, 40)} ({grade_text}) in {shown}"  # type: ignore[attr-defined]
        self._set_status()  # type: ignore[attr-defined]
        pane = self.tuning_pane()
        if pane is not None and pane.is_mounted:
            pane.schedule_golden(force=True)

    # --- recall_when -----------------------------------------------------------------------------

    def action_edit_recall_when(self) -> None:
        """Edit the selected hit's recall_when phrases, with a preview before saving."""
        mid = self._selected_hit()
        if not mid or self.engine is None or self.engine.vault.get(mid) is None:  # type: ignore[attr-defined]
            self.notify("edit recall_when: highlight a hit first")  # type: ignore[attr-defined]
            return
        from recall_tui.tuning.presets_io import changed_knobs

        pane = self.tuning_pane()
        preset = self.request.preset  # type: ignore[attr-defined]
        config = pane.config if pane is not None and pane.config is not None \
            and pane.base_name == preset else None
        if config is not None and pane is not None and pane.base is not None:
            n = len(changed_knobs(pane.base, config))
            label = f"the Tuning pane's knobs (preset {preset}" + (
                f" + {n} knob{'s' if n != 1 else ''})" if n else ")")
        else:  # the Recall pane's preset, not the one the app opened with
            config = self.recalls.engine_for(preset).config
            label = f"preset {preset} (the Recall pane's)"
        golden, baseline = None, None
        if pane is not None:
            golden = list(pane.golden.queries) or None
            cur = pane.golden.current
            if cur is not None and config is not None and cur.config_hash == config.hash():
                baseline = cur
        try:
            screen = RecallWhenScreen(self.engine, mid, self.request.query,  # type: ignore[attr-defined]
                                      config=config, now=self.request.now, k=GOLDEN_K,  # type: ignore[attr-defined]
                                      golden=golden, golden_baseline=baseline,
                                      config_label=label)
        except OSError as exc:
            self.notify(str(exc), severity="error", markup=False)  # type: ignore[attr-defined]
            return
        self.push_screen(screen, self._recall_when_saved)  # type: ignore[attr-defined]

    def _recall_when_saved(self, applied: Any) -> None:
        if applied is None:
            return
        phrases = ", ".join(applied.edit.new_phrases) if hasattr(applied.edit, "new_phrases") \
            else ""
        self.notify(f"recall_when saved {phrases}".strip(), markup=False)  # type: ignore[attr-defined]
        self.vault_changed(applied.refresh, quiet=True)

    # --- $EDITOR ---------------------------------------------------------------------------------

    def action_open_editor(self) -> None:
        """Open the selected memory in $VISUAL / $EDITOR, then pick up what changed."""
        from textual.app import SuspendNotSupported

        mid = self._selected_hit()
        memory = self.vault.get(mid) if (self.vault and mid) else None  # type: ignore[attr-defined]
        if memory is None:
            self.notify("open in $EDITOR: highlight a hit or a memory first")  # type: ignore[attr-defined]
            return
        editor = os.environ.get("VISUAL") or os.environ.get("EDITOR")
        if not editor:
            self.notify("$EDITOR is not set: set it (e.g. EDITOR=vim) to edit memories from here",  # type: ignore[attr-defined]
                        severity="warning", markup=False)
            return
        path = Path(self.vault.root) / memory.path  # type: ignore[attr-defined]
        try:
            with self.suspend():  # type: ignore[attr-defined]
                subprocess.run([*shlex.split(editor), str(path)], check=False)
        except SuspendNotSupported:
            self.notify("cannot hand the terminal to $EDITOR here", severity="warning")  # type: ignore[attr-defined]
            return
        except OSError as exc:
            self.notify(f"$EDITOR {editor!r}: {exc}", severity="error", markup=False)  # type: ignore[attr-defined]
            return
        engines = self.recalls.engines
        if engines is not None:
            self.vault_changed(engines.refresh())

    # --- watching --------------------------------------------------------------------------------

    def start_watching(self) -> None:
        """Start the vault watcher when this app should watch (see `watch_vault`): the engine
        set's, which refreshes every preset's engine in its thread and tells the app."""
        want = self.watch_vault
        if want is None:
            want = self._given_engine is None and not getattr(self, "replaying", False)  # type: ignore[attr-defined]
        engines = self.recalls.engines
        if not want or engines is None or engines.watcher is not None:
            return

        def on_change(summary: ChangeSummary) -> None:
            # quiet: the watcher seeing a file the app just saved says nothing a second time
            self.call_from_thread(self.vault_changed, summary, quiet=True)  # type: ignore[attr-defined]

        engines.watch(on_change)

    def stop_watching(self) -> None:
        engines = self.recalls.engines
        if engines is not None:
            engines.stop_watching()

    def vault_changed(self, summary: ChangeSummary, *, quiet: bool = False) -> None:
        """After a refresh: every preset's engine reads the new vault (a refresh of the app's
        engine alone, as saving `recall_when` does, hands it to the others here), say what
        changed, re-run the query and re-score the golden set."""
        engine = self.engine  # type: ignore[attr-defined]
        if summary.error:
            self.notify(summary.describe(), severity="warning", markup=False)  # type: ignore[attr-defined]
            return
        if self.recalls.engines is not None:
            self.recalls.engines.set_vault(engine.vault)
        self.vault = engine.vault  # type: ignore[attr-defined]
        if not quiet or not summary.empty:
            self.notify(summary.describe(), markup=False, timeout=4)  # type: ignore[attr-defined]
        self.launch_recall()  # type: ignore[attr-defined]
        pane = self.tuning_pane()
        if pane is not None and pane.is_mounted:
            pane.rerun(force=True)
            pane.schedule_golden(force=True)

    def on_unmount(self) -> None:
        """Textual calls every class's handler along the MRO: stop the watch thread on exit."""
        self.stop_watching()


def _shown_path(path: Path, vault_root: Path) -> str:
    """A queries file as the status line names it: relative to the vault when inside it."""
    try:
        shown = str(path.resolve().relative_to(vault_root.resolve()))
    except ValueError:
        shown = str(path)
    return one_line(shown, 80)

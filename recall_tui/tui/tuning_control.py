"""The tuning session of the live app, kept out of app.py: the Tuning pane, saving or resetting
the tuned configuration, judging a hit, editing `recall_when`, opening a memory in `$EDITOR`,
and watching the vault for changes made outside the tool.

`TuningController` is a controller the app owns (`app.tuning`); its own state is whether the
app watches the vault (`watch_vault`). The bindings that start these actions are declared on
`RecallApp`, whose `action_*` methods call the controller in one line (so the help screen, the
palette and the keymap see them); the app's `on_unmount` calls `stop_watching`.
"""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

from recall_tui.tui.panes.tuning import GOLDEN_K, TuningPane
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
from recall_tui.tuning.golden import JUDGED

if TYPE_CHECKING:
    from recall_tui.index.watch import ChangeSummary, VaultWatcher
    from recall_tui.tui.app import RecallApp
    from recall_tui.tuning.preview import AppliedEdit


class TuningController:
    """The tuning pane's and the editors' actions: a controller `RecallApp` owns
    (`app.tuning`)."""

    def __init__(self, app: RecallApp) -> None:
        self.app = app
        self.watch_vault: bool | None = None
        """Watch the vault for outside changes: None = only when the app opened the vault
        itself (the command line), not when it was handed an engine (tests, snapshots) or
        replays. Set it before the app starts."""

    @property
    def watcher(self) -> VaultWatcher | None:
        """The running `VaultWatcher` (the engine set's), if any."""
        engines = self.app.recalls.engines
        return engines.watcher if engines is not None else None

    # --- the pane --------------------------------------------------------------------------------

    def pane(self) -> TuningPane | None:
        """The tuning pane once it has been shown (None before, and in a replay, where a
        stand-in stands there). Reading or updating its state never builds it: a hidden pane
        mounted by a vault refresh once crashed an exit. `show` builds it."""
        main = self.app.main()
        pane = main.pane_widget("tuning", build=False) if main is not None else None
        return pane if isinstance(pane, TuningPane) else None

    def show(self, tab: str = "tune-knobs") -> None:
        """Show the tuning pane on one of its tabs (knobs, side by side, golden)."""
        main = self.app.main()
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

    def tune(self) -> None:
        """Show the tune tab and, once confirmed (a stray key must not start minutes of
        work), start a cross-validated knob search there (on the vault, the golden tab's
        queries and the knobs on screen; one at a time). The tab's start button and `enter`
        in its fields start at once."""
        from textual.widgets import Input

        from recall_tui.tui.screens.dialogs import ConfirmScreen

        self.show("tune-tune")
        pane = self.pane()
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

        self.app.push_screen(ConfirmScreen("Start a tune (a cross-validated knob search)?",
                                           detail), answered)

    def reset_knobs(self) -> None:
        pane = self.pane()
        if pane is not None and pane.base is not None:
            pane.reset()
            self.app.notify(f"knobs reset to preset {pane.base_name}", markup=False)

    def save_preset(self) -> None:
        """Ask for a name and save the tuned configuration as a preset."""
        from recall_tui.tuning.presets_io import changed_knobs

        app = self.app
        pane = self.pane()
        if pane is None or pane.config is None or pane.base is None:
            app.notify("open the tuning pane (t) and change a knob first")
            return
        changed = [c.path for c in changed_knobs(pane.base, pane.config)]
        gate = gate_setup(app.vault_path, pane.golden.source)  # the active preset, read before the save
        screen = SavePresetScreen(changed, heldout_verdict(pane.tune.result, pane.config),
                                  *((gate.label(app.vault_path), "") if isinstance(gate, GateSetup)
                                    else (None, gate)))
        app.push_screen(screen, lambda choice: self._save_preset(pane, choice, gate))

    def _save_preset(self, pane: TuningPane, choice: PresetChoice | None,
                     gate: GateSetup | str = "") -> None:
        from recall_tui.tuning.presets_io import save_preset

        app = self.app
        if choice is None or pane.config is None:
            return
        try:
            path = save_preset(pane.config, choice.name, where=choice.where,
                               vault_root=app.vault_path, base=pane.base,
                               base_name=pane.base_name, overwrite=choice.overwrite)
        except (ValueError, FileExistsError, OSError) as exc:
            app.notify(str(exc), title="preset not saved", severity="error", markup=False)
            return
        if app.recalls.engines is not None:
            app.recalls.engines.forget([choice.name])
        app.reload_presets()
        app.notify(f"saved preset {choice.name} to {path.parent.name}/{path.name}; "
                   "choose it with o or the palette", markup=False)
        if choice.activate and choice.gate and isinstance(gate, GateSetup):  # gate, then deploy
            if app.engine is None:  # the gate recalls on the open vault
                app.notify(f"the vault is not open, so the gate cannot run: preset {choice.name} "
                           "not made the agent's", severity="warning", markup=False)
                return
            app.push_screen(GateScreen(app.engine, gate, pane.config, choice.name,
                                       lambda: self.make_active(choice.name), app.request.now))
        elif choice.activate:  # a separate decision: saving never deploys by itself
            self.make_active(choice.name)

    def make_active(self, name: str) -> None:
        """Make preset `name` the vault's active one (`.recall/active.json`): what the hooks,
        the MCP server and `query` recall with from now on."""
        from recall_tui.agent.active import write_active

        app = self.app
        try:
            write_active(app.vault_path, preset=name, set_by="tui")
        except (OSError, ValueError) as exc:
            app.notify(f"preset {name} saved, but not made the agent's: {exc}",
                       title="active preset", severity="warning", markup=False)
            return
        app.notify(f"the agent now recalls with preset {name} (.recall/active.json)",
                   markup=False)
        app.agent.check_active()  # the status line names the agent's preset at once

    # --- judging a hit ---------------------------------------------------------------------------

    def hit_on_screen(self) -> str | None:
        """The hit the user sees highlighted: the tuned list's cursor on the Tuning pane, the
        results cursor on the Recall pane, else the current memory (Memory, Vault panes).
        The app's `selected_hit` asks the Agent pane first."""
        from recall_tui.tui.widgets.results import ResultsTable

        main = self.app.main()
        active = main.active_pane() if main is not None else None
        if active == "tuning":
            pane = self.pane()
            hit = pane.selected_hit() if pane is not None else None
            if hit is not None:
                return hit
        elif active == "recall" and main is not None:
            hit = main.query_one(ResultsTable).current_id()
            if hit is not None:
                return hit
        return self.app.current_id

    def judge_file(self) -> Path:
        """Where `J` writes: a queries file loaded in the golden tab (the one it scores and
        the judged column reads), else `.recall/golden.jsonl`: the tool writes nothing in a
        vault outside `.recall/`, so the vault's own golden.jsonl is read, never written
        (its judgements are carried over by `seed_judged`). Asking builds no pane."""
        main = self.app.main()
        found = main.query(TuningPane) if main is not None else None
        if found:
            source = found.first().golden.source
            if source is not None:
                return source
        return self._vault_root() / JUDGED

    def _vault_root(self) -> Path:
        """The open vault's folder (the judging actions run only once the engine is open)."""
        engine = self.app.engine
        return Path(engine.vault.root) if engine is not None else self.app.vault_path

    def judged_source(self, path: Path) -> Path:
        """The file whose judgements `path` continues: itself, or, for a `.recall/`
        golden.jsonl not written yet, the vault's golden.jsonl."""
        root = self._vault_root()
        if path == root / JUDGED and not path.exists():
            return root / "golden.jsonl"
        return path

    def seed_judged(self, path: Path) -> None:
        """Start `.recall/golden.jsonl` as a copy of the vault's golden.jsonl (atomic), so the
        first judgement continues the set the golden tab showed."""
        from recall_tui.vault.edit import atomic_write

        source = self.judged_source(path)
        if source == path or not source.exists():
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, source.read_bytes(), 0o644)

    def judge(self) -> None:
        """Grade the selected hit for the current query in the queries file on screen."""
        from recall_tui.tuning.golden import file_hash
        from recall_tui.tuning.metrics import read_golden

        app = self.app
        mid, query = app.selected_hit(), app.request.query.strip()
        if not mid or not query or app.engine is None:
            app.notify("judge a hit: type a query and highlight one of its hits")
            return
        path = self.judge_file()
        source = self.judged_source(path)
        try:
            expected = file_hash(source)
        except OSError as exc:  # a loaded file that became a folder, unreadable
            app.notify(f"{path}: {exc.strerror or exc}", title="not judged", severity="error",
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
                app.notify(str(exc), title=path.name, severity="error", markup=False)
                return
        app.push_screen(GradeScreen(mid, query, grade),
                        lambda g: self._judge(path, query, mid, g, expected))

    def _judge(self, path: Path, query: str, mid: str, grade: int | str | None,
               expected: str | None) -> None:
        from recall_tui.tuning.golden import mark_relevant
        from recall_tui.vault.edit import EditConflict

        app = self.app
        if grade is None:
            return
        value = None if grade == REMOVE else int(grade)
        try:
            self.seed_judged(path)
            mark_relevant(path, query, mid, value, expected_hash=expected)
        except EditConflict as exc:
            app.push_screen(ConflictScreen(exc))
            return
        except (ValueError, OSError) as exc:
            app.notify(str(exc), title="not judged", severity="error", markup=False)
            return
        what = "removed the judgement of" if value is None else f"graded {value}:"
        shown = _shown_path(path, self._vault_root())
        app.notify(f"{shown}: {what} {mid} for {query!r}", markup=False)
        # the status line keeps it (the notice fades): which file the judgement went to
        grade_text = "removed" if value is None else str(value)
        app.status_text = f"judged {one_line(mid, 40)} ({grade_text}) in {shown}"
        app.update_status()
        pane = self.pane()
        if pane is not None and pane.is_mounted:
            pane.schedule_golden(force=True)

    # --- recall_when -----------------------------------------------------------------------------

    def edit_recall_when(self) -> None:
        """Edit the selected hit's recall_when phrases, with a preview before saving."""
        app = self.app
        mid = app.selected_hit()
        engine = app.engine
        if not mid or engine is None or engine.vault.get(mid) is None:
            app.notify("edit recall_when: highlight a hit first")
            return
        from recall_tui.tuning.presets_io import changed_knobs

        pane = self.pane()
        preset = app.request.preset
        config = pane.config if pane is not None and pane.config is not None \
            and pane.base_name == preset else None
        if config is not None and pane is not None and pane.base is not None:
            n = len(changed_knobs(pane.base, config))
            label = f"the Tuning pane's knobs (preset {preset}" + (
                f" + {n} knob{'s' if n != 1 else ''})" if n else ")")
        else:  # the Recall pane's preset, not the one the app opened with
            config = app.recalls.engine_for(preset).config
            label = f"preset {preset} (the Recall pane's)"
        golden, baseline = None, None
        if pane is not None:
            golden = list(pane.golden.queries) or None
            cur = pane.golden.current
            if cur is not None and config is not None and cur.config_hash == config.hash():
                baseline = cur
        try:
            screen = RecallWhenScreen(engine, mid, app.request.query,
                                      config=config, now=app.request.now, k=GOLDEN_K,
                                      golden=golden, golden_baseline=baseline,
                                      config_label=label)
        except OSError as exc:
            app.notify(str(exc), severity="error", markup=False)
            return
        app.push_screen(screen, self._recall_when_saved)

    def _recall_when_saved(self, applied: AppliedEdit | None) -> None:
        if applied is None:
            return
        phrases = ", ".join(applied.edit.new_phrases)
        self.app.notify(f"recall_when saved {phrases}".strip(), markup=False)
        self.vault_changed(applied.refresh, quiet=True)

    # --- $EDITOR ---------------------------------------------------------------------------------

    def open_editor(self) -> None:
        """Open the selected memory in $VISUAL / $EDITOR, then pick up what changed."""
        from textual.app import SuspendNotSupported

        app = self.app
        mid = app.selected_hit()
        vault = app.vault
        memory = vault.get(mid) if (vault and mid) else None
        if vault is None or memory is None:
            app.notify("open in $EDITOR: highlight a hit or a memory first")
            return
        editor = os.environ.get("VISUAL") or os.environ.get("EDITOR")
        if not editor:
            app.notify("$EDITOR is not set: set it (e.g. EDITOR=vim) to edit memories from here",
                       severity="warning", markup=False)
            return
        path = Path(vault.root) / memory.path
        try:
            with app.suspend():
                subprocess.run([*shlex.split(editor), str(path)], check=False)
        except SuspendNotSupported:
            app.notify("cannot hand the terminal to $EDITOR here", severity="warning")
            return
        except OSError as exc:
            app.notify(f"$EDITOR {editor!r}: {exc}", severity="error", markup=False)
            return
        engines = app.recalls.engines
        if engines is not None:
            self.vault_changed(engines.refresh())

    # --- watching --------------------------------------------------------------------------------

    def start_watching(self) -> None:
        """Start the vault watcher when this app should watch (see `watch_vault`): the engine
        set's, which refreshes every preset's engine in its thread and tells the app."""
        app = self.app
        want = self.watch_vault
        if want is None:
            want = app.given_engine is None and not app.replaying
        engines = app.recalls.engines
        if not want or engines is None or engines.watcher is not None:
            return

        def on_change(summary: ChangeSummary) -> None:
            # quiet: the watcher seeing a file the app just saved says nothing a second time
            app.call_from_thread(self.vault_changed, summary, quiet=True)

        engines.watch(on_change)

    def stop_watching(self) -> None:
        """Stop the watch thread (the app's `on_unmount`: on exit)."""
        engines = self.app.recalls.engines
        if engines is not None:
            engines.stop_watching()

    def vault_changed(self, summary: ChangeSummary, *, quiet: bool = False) -> None:
        """After a refresh: every preset's engine reads the new vault (a refresh of the app's
        engine alone, as saving `recall_when` does, hands it to the others here), say what
        changed, re-run the query and re-score the golden set."""
        app = self.app
        engine = app.engine
        if summary.error:
            app.notify(summary.describe(), severity="warning", markup=False)
            return
        if engine is None:  # a refresh comes from an open engine: nothing to show otherwise
            return
        if app.recalls.engines is not None:
            app.recalls.engines.set_vault(engine.vault)
        app.vault = engine.vault
        if not quiet or not summary.empty:
            app.notify(summary.describe(), markup=False, timeout=4)
        app.launch_recall()
        pane = self.pane()
        if pane is not None and pane.is_mounted:
            pane.rerun(force=True)
            pane.schedule_golden(force=True)


def _shown_path(path: Path, vault_root: Path) -> str:
    """A queries file as the status line names it: relative to the vault when inside it."""
    try:
        shown = str(path.resolve().relative_to(vault_root.resolve()))
    except ValueError:
        shown = str(path)
    return one_line(shown, 80)

"""The app's side of the agent's recalls, kept out of app.py: open a recorded recall in the
usual panes exactly as the agent got it, name the configuration on screen for the Agent pane's
side-by-side re-run, judge from there, and say in the status line which preset the agent uses
(from `.recall/active.json`, re-read when the file changes) and what the trace warns about.

Opening a recorded recall works as replay does: the recorded `Trace` becomes the app's trace
(nothing re-runs) and the query bar shows its prompt without asking for a recall. The
recorded trace stays on screen until something asks for a live recall (an edit of the query,
a setting, a pin, a change in the vault); the status line is led by `AGENT RECALL <time>`
while it is the one shown.

`AgentFeed` is a controller the app owns (`app.agent`): its state is the recall opened and the
active configuration as last read. The app's `selected_hit` and `action_judge` ask it first
(the Agent pane judges what it highlights); the Agent pane's own keys are declared on
`AgentPane`.
"""

from __future__ import annotations

import os
import re
from dataclasses import replace
from typing import TYPE_CHECKING

from rich.text import Text
from textual.widgets import Input

from recall_tui.agent.active import Active, active_path, resolve_active
from recall_tui.agent.log import AgentRecall
from recall_tui.engine.config import Config
from recall_tui.engine.trace import Trace
from recall_tui.tui.panes.agent import AgentPane, time_text
from recall_tui.tui.safe import one_line
from recall_tui.tui.widgets.query_bar import QueryBar

if TYPE_CHECKING:
    from recall_tui.tui.app import RecallApp

#: How often the app looks at `.recall/active.json` (a `stat`; read only when it changed).
ACTIVE_POLL_S = 1.0


class AgentFeed:
    """The agent's recalls in the app: a controller `RecallApp` owns (`app.agent`)."""

    def __init__(self, app: RecallApp) -> None:
        self.app = app
        self.opened: tuple[AgentRecall, Trace] | None = None
        """The agent recall last opened and its rebuilt trace (shown while `app.trace` is it)."""
        self.active: Active | None = None
        """`resolve_active(vault)` as last read (`default` when the active preset is missing)."""
        self.warning = ""
        """`resolve_active`'s warning: the active preset named in active.json does not exist."""
        self._active_stamp: tuple[int, int] | None = None

    def start(self) -> None:
        """Read the active configuration now and watch its file (the app's `on_mount`)."""
        self.check_active()
        self.app.set_interval(ACTIVE_POLL_S, self.check_active)

    # --- the active configuration ------------------------------------------------------------------

    def check_active(self) -> bool:
        """Re-read the vault's active configuration when its file changed (a `stat` otherwise);
        True when it changed (the status line is redrawn)."""
        vault_path = self.app.vault_path
        try:
            st = os.stat(active_path(vault_path))
            stamp: tuple[int, int] | None = (st.st_mtime_ns, st.st_size)
        except OSError:
            stamp = None
        # resolved at every poll (a few `stat`s): deleting the active preset's file changes
        # the configuration without touching active.json
        active, warning = resolve_active(vault_path)
        if (self.active is not None and stamp == self._active_stamp
                and warning == self.warning):
            return False
        self._active_stamp = stamp
        self.active, self.warning = active, warning
        self.app.update_status()
        return True

    def status_head(self, status: Text) -> None:
        """Lead the status line with the agent recall shown, when the trace is one."""
        opened = self.opened
        if opened is None or self.app.trace is not opened[1]:
            return
        rec = opened[0]
        status.append(f" AGENT RECALL {time_text(rec)} ", style="bold reverse")
        status.append(f" {rec.served_by} · session {one_line(rec.session_id, 12) or '—'} · "
                      f"{one_line(rec.preset, 30)}/{one_line(rec.embedder, 20)} · read only  ",
                      style="dim")

    def status_tail(self, status: Text) -> None:
        """The preset the agent uses when it is not the one on screen; the trace's warnings."""
        active = self.active
        on_screen = self.app.request.preset
        if active is not None and active.preset != on_screen:
            status.append(f"  agent uses preset {one_line(active.preset, 30)}", style="yellow")
        if self.warning:  # without "(set in PATH)": the vault on screen is that vault
            short = re.sub(r" \(set in [^)]*\)", "", self.warning)
            status.append(f"  ⚠ {one_line(short, 120)}", style="bold yellow")
        trace = self.app.trace
        for warning in trace.warnings() if trace is not None else ():
            status.append(f"  ⚠ {one_line(warning, 80)}", style="bold yellow")

    # --- opening a recorded recall -----------------------------------------------------------------

    def pane(self) -> AgentPane | None:
        """The Agent pane once it is built (None before)."""
        main = self.app.main()
        pane = main.pane_widget("agent") if main is not None else None
        return pane if isinstance(pane, AgentPane) else None

    def open_recall(self, rec: AgentRecall, *, show: bool = True) -> Trace | None:
        """Show `rec`'s recorded trace in every pane (nothing re-runs) with its prompt in the
        query bar; with `show`, switch to the recall view. Returns the trace (None for a record
        without one: a SessionStart lists `_always-load/` and runs no recall)."""
        app = self.app
        if self.opened is not None and self.opened[0].id == rec.id:
            trace = self.opened[1]
        else:
            try:
                trace = rec.trace
            except (ValueError, TypeError, KeyError) as exc:
                app.notify(f"agent recall {rec.id}: its trace cannot be read: {exc}",
                           severity="error", markup=False)
                return None
        if trace is None:
            what = rec.skipped or f"injected {len(rec.injected_ids)} always-load memories"
            app.notify(f"{rec.event} runs no recall ({one_line(what, 120)}): nothing to open",
                       markup=False)
            return None
        self.opened = (rec, trace)
        app.show_recorded(trace)  # any recall on its way is dropped: it would replace this
        app.request = replace(app.request, query=trace.query)
        main = app.main()
        if main is not None:
            field = main.query_one("#query", Input)
            if field.value != trace.query:
                with field.prevent(Input.Changed):  # show the prompt; do not re-run it
                    field.value = trace.query
            main.query_one(QueryBar).request = app.request
            if show:
                main.action_show_pane("recall")
                main.query_one("#results").focus()
        app.refresh_views()
        for warning in trace.warnings():
            app.notify(warning, title="the agent's query", severity="warning", markup=False)
        return trace

    def config_on_screen(self) -> tuple[Config, str]:
        """The configuration the screen shows: the tuning pane's knobs when they were tuned from
        the preset in the query bar, else that preset's. With a label for the side-by-side."""
        from recall_tui.tuning.presets_io import changed_knobs

        app = self.app
        preset = app.request.preset
        pane = app.tuning.pane() if app.main() is not None else None
        base = app.recalls.engine_for(preset).config
        if pane is not None and pane.config is not None and pane.base_name == preset:
            changed = changed_knobs(pane.base, pane.config) if pane.base is not None else []
            if changed:
                return pane.config, (f"preset {preset}, tuned: {len(changed)} "
                                     f"knob{'s' if len(changed) != 1 else ''}")
        return base, f"preset {preset}"

    # --- judging from the Agent pane ---------------------------------------------------------------

    def pane_shown(self) -> AgentPane | None:
        """The Agent pane when it is the one on screen."""
        main = self.app.main()
        if main is None or main.active_pane() != "agent":
            return None
        return self.pane()

    def ready_to_judge(self) -> bool:
        """Before the app's judge key: from the Agent pane, grade the id under the cursor of
        its side-by-side view for the agent's prompt (its recall is put back in the query bar
        when another is there). False when there is nothing to judge there (said)."""
        pane = self.pane_shown()
        if pane is None:
            return True
        if pane.compare is None or pane.selected_hit() is None:
            self.app.notify("judge from the Agent pane: re-run a recall first "
                            "(c), then highlight a memory on either side")
            return False
        if self.app.request.query != pane.compare.agent.query:
            self.open_recall(pane.compare.record, show=False)
        return True

    def judge_recall(self) -> None:
        """The Agent pane's judge key: grade what the highlighted recall injected, add what
        should have come, or mark that nothing was needed (`JudgeRecallScreen`, writing into
        the vault's `.recall/golden.jsonl`)."""
        from recall_tui.tui.panes.agent import event_text, recall_query
        from recall_tui.tui.screens.judge_recall import JudgeRecallScreen

        app = self.app
        pane = self.pane()
        rec = pane.selected_recall() if pane is not None else None
        if pane is None or rec is None:
            app.notify("no agent recall to judge yet")
            return
        if rec.trace_dict is None:
            app.notify(f"{event_text(rec)} runs no recall: nothing to judge", markup=False)
            return
        if app.engine is None:
            app.notify("the vault is not open yet")
            return
        titles = {mid: m.title for mid, m in app.engine.vault.memories.items()}
        pane.read_weak()
        app.push_screen(JudgeRecallScreen(rec, recall_query(rec), pane.judged_file(), titles,
                                          pane.weak_labels(rec)), pane.judge_closed)

    def judge_query_set(self) -> None:
        """The Agent pane's `Q`: judge a query set's logged recalls one after another
        (`recall_tui.tui.screens.judge_recall.judge_query_set`)."""
        from recall_tui.tui.screens.judge_recall import DEFAULT_SET, QuerySetScreen, judge_query_set

        app = self.app
        pane = self.pane()
        if pane is None or app.engine is None:
            app.notify("the vault is not open yet")
            return
        def chosen(text: str | None) -> None:
            judge_query_set(app, pane, text)

        app.push_screen(QuerySetScreen(DEFAULT_SET), chosen)

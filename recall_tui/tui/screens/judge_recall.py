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
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, cast

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, Static

from recall_tui.agent.log import AgentRecall
from recall_tui.tui.safe import lit, one_line
from recall_tui.tui.widgets.vim import VimTable

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
        Binding("escape", "close", "Close", id="judge_recall.close"),
    ]

    DEFAULT_CSS = """
    JudgeRecallScreen { align: center middle; }
    JudgeRecallScreen #judge-recall-table { height: auto; max-height: 16; }
    """

    def __init__(self, rec: AgentRecall, query: str, path: Path,
                 titles: Mapping[str, str], weak: Mapping[str, str] | None = None) -> None:
        super().__init__()
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
            head = Text("Judge what the agent got for ", style="bold")
            head.append_text(lit(one_line(self.query_text, 160), single_line=True))
            yield Static(head)
            yield VimTable(id="judge-recall-table")
            yield Static(id="judge-recall-state")
            yield Label(self._help(), id="judge-recall-help")

    def _help(self) -> Text:
        keys = self._keys()
        return Text(f"{keys['grade3']} must come back · {keys['grade2']} relevant · "
                    f"{keys['grade1']} somewhat · {keys['grade0']} not relevant · {keys['remove']} "
                    f"remove · {keys['add']} add a memory that should have come · "
                    f"{keys['nothing']} nothing was needed · {keys['close']} close", style="dim")

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

    # --- the file ----------------------------------------------------------------------------

    def _source(self) -> Path:
        return self.app._judged_source(self.path)  # type: ignore[attr-defined,no-any-return]

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
        meta = {"prompt": self.rec.prompt, "judged_by": JUDGED_BY,
                "judged_at": datetime.now(timezone.utc).isoformat(timespec="seconds")
                .replace("+00:00", "Z")}
        try:
            app._seed_judged(self.path)
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
        self.dismiss(None)

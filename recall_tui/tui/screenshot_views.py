"""Named, reproducible views of the app, for the SVG snapshot tests and `scripts/screenshots.py`.

Each view drives a running app (through a Textual `Pilot`) to one screen: a query typed, a pane
shown, a memory opened. Run the app with `stable_timings=True` so the image does not depend on
how fast the machine was: live milliseconds are hidden and cursors do not blink.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from textual.pilot import Pilot
from textual.widgets import Input

QUERY = "postgres upgrade"
#: The agent's prompt of the `agent` view (a recorded hook recall under preset `default`).
AGENT_PROMPT = "upgrade the billing database to postgres 16"


async def wait_until_idle(pilot: Pilot, timeout: float = 60.0) -> None:
    """Wait for the pending recall, the workers, and then for the screen to stop changing
    (some widgets, like Markdown, render a moment after they are updated)."""
    app = pilot.app
    deadline = time.monotonic() + timeout
    await pilot.pause(0.05)
    while getattr(app, "recall_pending", False):
        if time.monotonic() > deadline:
            raise TimeoutError("the recall did not finish")
        await pilot.pause(0.05)
    await app.workers.wait_for_complete()
    previous, stable = None, 0
    while stable < 3 and time.monotonic() < deadline:
        await pilot.pause(0.1)
        current = app.export_screenshot()
        stable = stable + 1 if current == previous else 0
        previous = current


async def type_query(pilot: Pilot, text: str = QUERY) -> None:
    """Put `text` in the query bar (one edit) and wait for its recall."""
    await wait_until_idle(pilot)
    field = pilot.app.screen.query_one("#query", Input)
    field.focus()
    field.insert_text_at_cursor(text)
    await wait_until_idle(pilot)


def _pane(name: str, focus: str, memory_id: str | None = None, query: str = QUERY):
    """Show pane `name` (on `memory_id`) with the widget `focus` focused, so the image does not
    depend on when focus settled."""

    async def setup(pilot: Pilot) -> None:
        await type_query(pilot, query)
        app = pilot.app
        app.screen.query_one("#results").focus()
        await pilot.pause(0.05)
        if memory_id is not None:
            app.follow_results = False  # type: ignore[attr-defined]
            app.set_current(memory_id)  # type: ignore[attr-defined]
        app.screen.action_show_pane(name)  # type: ignore[attr-defined]
        await wait_until_idle(pilot)
        app.screen.query_one(focus).focus()
        await wait_until_idle(pilot)
        # a table that shares its width fairly (the knobs list) may lay out once more: wait
        # until every column width holds still (one full run under load caught it mid-way)
        await _widths_settled(pilot, time.monotonic() + 60)

    return setup


async def _main(pilot: Pilot) -> None:
    await type_query(pilot)
    pilot.app.screen.query_one("#results").focus()
    await pilot.press("j")  # the second hit's explanation
    await wait_until_idle(pilot)


async def _stage(pilot: Pilot) -> None:
    await type_query(pilot)
    await pilot.press("escape", "w", "j", "j")  # the keyword stage's candidates
    await wait_until_idle(pilot)


async def _help(pilot: Pilot) -> None:
    await type_query(pilot)
    await pilot.press("escape", "question_mark")
    await wait_until_idle(pilot)


def record_sample_agent_recall(app) -> None:
    """Append to the vault's agent log one hook recall of `AGENT_PROMPT` under preset
    `default` at the app's pinned `now`, as `recall-tui hook prompt-submit` records it (fixed
    id, time and session, so the image is the same every run; written once)."""
    from recall_tui.agent.log import read_agent_log

    rid = "a9e1c0de5ample01"
    if any(r.id == rid for r in read_agent_log(app.vault_path)):
        return
    _log_hook_recall(app, rid, AGENT_PROMPT, app.request.now)


def _log_hook_recall(app, rid: str, prompt: str, when) -> None:
    """Append to the vault's agent log the recall of `prompt` under preset `default` at
    `when`, as `recall-tui hook prompt-submit` records it (id `rid`, a fixed session)."""
    from recall_tui.agent.log import AgentRecall, append_recall

    trace = app.recalls.engine_for("default").recall(prompt, now=when)
    stamp = when.isoformat(timespec="milliseconds").replace("+00:00", "Z") if when else ""
    append_recall(app.vault_path, AgentRecall(
        id=rid, time=stamp, served_by="hook", event="UserPromptSubmit",
        session_id="5f1c2e0a-9d4b", prompt=prompt, cwd=str(app.vault_path),
        preset="default", embedder=str(trace.vault.get("embedder") or "none"),
        config_hash=trace.config_hash, injected_ids=[h.id for h in trace.hits[:5]],
        path="service", trace_dict=trace.to_dict()))


async def _agent(pilot: Pilot) -> None:
    """The Agent pane with the recorded recall re-run side by side under the preset on
    screen."""
    app = pilot.app
    await wait_until_idle(pilot)
    record_sample_agent_recall(app)
    app.screen.query_one("#results").focus()
    await pilot.pause(0.05)
    app.screen.action_show_pane("agent")  # type: ignore[attr-defined]
    await wait_until_idle(pilot)
    deadline = time.monotonic() + 60
    while not app.screen.query("#agent-table") or not app.screen.query_one(
            "#agent-table").row_count:
        if time.monotonic() > deadline:
            raise TimeoutError("the Agent pane did not list the recorded recall")
        await pilot.pause(0.05)
    app.screen.query_one("#agent-table").focus()
    await pilot.press("c")
    await wait_until_idle(pilot)
    while app.screen.query_one("#pane-agent").busy:  # type: ignore[attr-defined]
        if time.monotonic() > deadline:
            raise TimeoutError("the side-by-side re-run did not finish")
        await pilot.pause(0.05)
    await wait_until_idle(pilot)
    # the tables share their width once laid out: wait until every column width holds still
    await _widths_settled(pilot, deadline)


async def _widths_settled(pilot: Pilot, deadline: float) -> None:
    from textual.widgets import DataTable

    def widths() -> list[tuple[int, ...]]:
        return [tuple(c.get_render_width(t) for c in t.columns.values())
                for t in pilot.app.screen.query(DataTable)]

    last = widths()
    while True:
        await wait_until_idle(pilot)
        now = widths()
        if now == last:
            break
        if time.monotonic() > deadline:
            raise TimeoutError("the tables' column widths did not settle")
        last = now
    # A tab strip's underline is placed after the refresh that follows its tab's activation;
    # a layout after that (the shared widths above) leaves it where it was until the next
    # resize. Place it again on the final layout, so the image does not depend on the load.
    from textual.widgets import Tabs

    for tabs in pilot.app.screen.query(Tabs):
        tabs._highlight_active(animate=False)  # Textual's own re-placement (as on a resize)
    await wait_until_idle(pilot)


#: The other prompts of the walkthrough's sampled query set (docs/tuning.md), logged before
#: `AGENT_PROMPT` as the hook records them.
SET_PROMPTS = ("who owns the billing database", "what is the capital of portugal")


def record_sample_set(app) -> None:
    """The walkthrough's query set: two more hook recalls (fixed ids, an hour and two before
    `AGENT_PROMPT`'s) and `.recall/sample.jsonl` as `recall-tui log sample --out` writes it
    from the log (written once)."""
    from datetime import timedelta

    from recall_tui.agent.log import read_agent_log
    from recall_tui.agent.sample import sample_prompts
    from recall_tui.vault.edit import atomic_write
    from recall_tui.vault.literal import json_text

    record_sample_agent_recall(app)
    have = {r.id for r in read_agent_log(app.vault_path)}
    now = app.request.now
    for n, prompt in enumerate(SET_PROMPTS, start=1):
        rid = f"a9e1c0de5ample0{n + 1}"
        if rid in have:
            continue
        _log_hook_recall(app, rid, prompt, now - timedelta(hours=len(SET_PROMPTS) + 1 - n))
    res = sample_prompts(read_agent_log(app.vault_path), n=10)
    atomic_write(app.vault_path / ".recall" / "sample.jsonl",
                 "".join(json_text(q.to_dict()) + "\n" for q in res.queries).encode("utf-8"), 0o600)


async def _until(pilot: Pilot, condition: Callable[[], object], what: str) -> None:
    deadline = time.monotonic() + 120
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(what)
        await pilot.pause(0.05)


async def _judge_set(pilot: Pilot) -> None:
    """The Agent pane's `Q` on the sampled set: the judge screen on its first prompt's logged
    recall, one memory graded, and the coverage line under the active preset."""
    app = pilot.app
    await wait_until_idle(pilot)
    record_sample_set(app)
    app.screen.query_one("#results").focus()
    await pilot.pause(0.05)
    app.screen.action_show_pane("agent")  # type: ignore[attr-defined]
    await wait_until_idle(pilot)
    from textual.widgets import DataTable

    await _until(pilot, lambda: app.screen.query("#agent-table")
                 and app.screen.query_one("#agent-table", DataTable).row_count >= 3,
                 "the logged recalls")
    app.screen.query_one("#agent-table").focus()
    await pilot.press("Q")
    await _until(pilot, lambda: app.screen.query("#query-set-path"), "the query-set dialog")
    await pilot.press("enter")
    await _until(pilot, lambda: getattr(app.screen, "coverage", None) is not None,
                 "the coverage line")
    await pilot.press("j", "0")  # the second memory the agent got: not relevant
    await _until(pilot, lambda: getattr(app.screen, "writes", 0) >= 1, "the judgement")
    await wait_until_idle(pilot)


async def _recency_on(pilot: Pilot, key: str) -> Any:
    """The agent's prompt typed, the Tuning pane opened with `key` (`t`, `D`) and the recency
    boost switched on there; the pane."""
    app = pilot.app
    await type_query(pilot, AGENT_PROMPT)
    app.screen.query_one("#results").focus()
    await pilot.press(key)
    await _until(pilot, lambda: app.tuning.pane() is not None  # type: ignore[attr-defined]
                 and app.tuning.pane().config is not None, "the tuning pane")  # type: ignore[attr-defined]
    await wait_until_idle(pilot)
    pane = app.tuning.pane()  # type: ignore[attr-defined]
    pane.knobs.edit_knob("boosts.recency.enabled", "true")
    await wait_until_idle(pilot)
    return pane


async def _gate(pilot: Pilot) -> None:
    """The Tuning pane's `S` with "make it the agent's" ticked: the gate against the active
    preset on the judged queries, and its verdict (the recency boost costs MRR: it fails)."""
    app = pilot.app
    await _recency_on(pilot, "t")
    await pilot.press("S")
    await _until(pilot, lambda: app.screen.query("#preset-gate"), "the save dialog")
    from textual.widgets import Checkbox

    app.screen.query_one("#preset-activate", Checkbox).value = True
    field = app.screen.query_one("#preset-name", Input)
    field.value = "recency"
    field.focus()
    await pilot.press("enter")
    await _until(pilot, lambda: getattr(app.screen, "result", None) is not None
                 or getattr(app.screen, "error", None), "the gate's verdict")
    await wait_until_idle(pilot)


async def _side_set(pilot: Pilot) -> None:
    """The side-by-side tab's query-set view (`s`): the judged set under the active preset
    and the knobs with the recency boost on, the cursor on the first query that got worse."""
    pane = await _recency_on(pilot, "D")
    pane.side.action_toggle_set()
    view = pane.side.set_view
    await _until(pilot, lambda: view.run is not None and not view.busy
                 and view.run.b.config_hash == pane.config.hash(), "the set's diff")
    rows = [n for n, q in enumerate(view.run.diff.queries) if q.verdict == "worse"]
    view.query_one("#side-set-table").move_cursor(row=rows[0] + 1 if rows else 0)
    await _widths_settled(pilot, time.monotonic() + 60)


@dataclass(frozen=True)
class View:
    """One named screen of the app."""

    name: str
    """File stem of the snapshot / screenshot."""
    setup: Callable[[Pilot], Awaitable[None]]
    """Drives the app to the view."""
    preset: str = "default"
    """Preset the app starts with."""


VIEWS: tuple[View, ...] = (
    View("main", _main),
    View("stage", _stage),
    View("memory", _pane("memory", "#memory-frontmatter", "billing-db-postgres16")),
    View("supersession", _pane("supersession", "#chain-table", "billing-db-postgres15")),
    View("entities", _pane("entities", "#entity-edges", "ingrid-sorensen"), preset="memoria"),
    View("mmr", _pane("mmr", "#mmr-table"), preset="abmind"),
    View("timings", _pane("timings", "#timings-table")),
    View("vault", _pane("vault", "#vault-tree")),
    View("problems", _pane("problems", "#problems-table")),
    View("knobs", _pane("tuning", "#knob-table")),
    View("help", _help),
    View("agent", _agent, preset="memoria"),
)

#: The screens of docs/tuning.md's walkthrough (from the agent's wrong memory to a gate):
#: `scripts/screenshots.py` writes them after `VIEWS` (they log recalls, judge and save a
#: preset in the vault copy, which the views above must not see). Not snapshot-tested.
WALKTHROUGH: tuple[View, ...] = (
    View("judge-set", _judge_set),
    View("gate", _gate),
    View("side-set", _side_set),
)

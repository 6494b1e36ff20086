"""Judging what the agent got, in the Agent pane (issue 23, item 1): on a logged recall, keys
grade each injected memory, add one that should have come (searched by title), and mark a
prompt that needed no memory; the judgements land in the vault's `.recall/golden.jsonl`, the
file `eval` reads (checked with `read_golden` and the scoring `eval` runs), and a file changed
on disk since the screen read it is not overwritten.

The log records are written the way the agent's recall core writes them (`append_recall` of a
real engine's trace), in process: no hook subprocess, one engine for the whole test."""

from __future__ import annotations

import json

import pytest

from recall_tui.agent.log import AgentRecall, append_recall, new_id, now_iso
from recall_tui.tui.app import make_app
from recall_tui.tui.screens.dialogs import PinScreen
from recall_tui.tui.screens.edit import ConflictScreen
from recall_tui.tui.screens.judge_recall import JudgeRecallScreen
from recall_tui.tui.widgets.table import VimTable
from recall_tui.tuning.golden import file_hash, run_golden
from recall_tui.tuning.metrics import read_golden
from tests.conftest import PINNED_NOW
from tests.test_tui_agent import cells, show_agent_pane
from tests.test_tui_app import SIZE
from tests.waiting import wait_until

ON_TOPIC = "upgrade the billing database to postgres 16"
OFF_TOPIC = "what is the capital of portugal"


def log_recall(engine, prompt: str, n: int = 3) -> AgentRecall:
    """One prompt recall as the hook records it: the real trace, its top `n` injected."""
    trace = engine.recall(prompt, k=engine.config.k, now=PINNED_NOW)
    rec = AgentRecall(id=new_id(), time=now_iso(), served_by="hook", event="UserPromptSubmit",
                      session_id="judge-1", prompt=prompt, preset=trace.preset,
                      config_hash=trace.config_hash, embedder="local",
                      injected_ids=[h.id for h in trace.hits[:n]],
                      trace_dict=trace.to_dict())
    assert append_recall(engine.vault.root, rec)
    return rec


#: The tests write into the vault: each gets an engine on its own copy (tests/conftest.py).
pytestmark = pytest.mark.own_vault


def stop_hook(vault, answer: str, session: str = "judge-1") -> int:
    """Claude Code's Stop hook, in process: `recall-tui hook stop` with the payload on stdin."""
    import io
    import sys

    from recall_tui.cli import main

    payload = {"session_id": session, "transcript_path": "/tmp/t.jsonl", "cwd": str(vault),
               "hook_event_name": "Stop", "stop_hook_active": False,
               "last_assistant_message": answer}
    old = sys.stdin
    sys.stdin = io.StringIO(json.dumps(payload))
    try:
        return main(["hook", "stop", "--vault", str(vault)])
    finally:
        sys.stdin = old


async def test_judging_an_agent_recall_writes_the_file_eval_reads(vault_copy, engine, capsys):
    from recall_tui.agent.weak import read_weak, weak_path

    off = log_recall(engine, OFF_TOPIC)
    on = log_recall(engine, ON_TOPIC)
    # the agent's answer quotes the first injected memory's title: a weak "used" for it only,
    # against the session's newest prompt recall; kept apart from the judged file
    first_title = engine.vault.get(on.injected_ids[0]).title
    assert stop_hook(vault_copy, f"Done. Following {first_title}, I ran the upgrade.") == 0
    assert capsys.readouterr().out == ""
    weak = read_weak(vault_copy)[on.id]
    assert weak[on.injected_ids[0]].startswith("used") and set(weak) == set(on.injected_ids)
    assert weak_path(vault_copy).parent.name == "agent"
    assert stop_hook(vault_copy, "") == 0  # no answer in the payload: nothing recorded
    assert len(weak_path(vault_copy).read_text().splitlines()) == 1
    assert len(on.injected_ids) == 3
    golden = vault_copy / ".recall" / "golden.jsonl"
    vault_golden = (vault_copy / "golden.jsonl").read_bytes()
    before = len(read_golden(vault_copy / "golden.jsonl"))
    # a memory the agent did not get, found by a word of its title
    missing = next(m for m in sorted(engine.vault.memories, reverse=True)
                   if m not in on.injected_ids and m.startswith("billing")
                   and engine.vault.get(m).title.strip())
    title_word = max(engine.vault.get(missing).title.split(), key=len)

    app = make_app(vault_copy, now=PINNED_NOW, engine=engine)
    async with app.run_test(size=SIZE) as pilot:
        pane = await show_agent_pane(pilot, app)
        table = pane.query_one("#agent-table", VimTable)
        await wait_until(pilot, lambda: table.row_count == 2, "both logged recalls")
        row_on = [r.id for r in pane.recalls].index(on.id)
        used = sum(1 for v in weak.values() if v.startswith("used"))
        assert cells(table)[row_on][6] == f"weak: {used} of 3 used"
        table.focus()
        table.move_cursor(row=[r.id for r in pane.recalls].index(on.id))

        await pilot.press("a")
        await wait_until(pilot, lambda: isinstance(app.screen, JudgeRecallScreen),
                         "the judge screen")
        screen = app.screen
        rows = screen.query_one("#judge-recall-table", VimTable)
        await wait_until(pilot, lambda: rows.row_count == 3, "the injected memories listed")
        assert [r[1] for r in cells(rows)] == on.injected_ids
        assert cells(rows)[0][3] == f"injected #1 · weak: {weak[on.injected_ids[0]]}"
        await pilot.press("2")  # the first injected: relevant
        await wait_until(pilot, lambda: screen.writes == 1, "the first judgement written")
        await pilot.press("j", "0")  # the second: not relevant
        await wait_until(pilot, lambda: screen.writes == 2, "the second judgement written")
        await pilot.press("a")  # add the one that should have come, searched by title
        await wait_until(pilot, lambda: isinstance(app.screen, PinScreen), "the search box")
        await pilot.press(*title_word)
        app.screen.query_one("#pin-input").value = missing  # the exact id: enter takes it
        await pilot.press("enter")
        await wait_until(pilot, lambda: screen.writes == 3, "the added memory written")
        assert screen.selected() == missing
        assert [r[0] for r in cells(rows)] == ["2", "0", "—", "3"]
        await pilot.press("k")  # up to the third injected one

        # a file changed on disk since the screen read it is not overwritten
        edited = golden.read_bytes() + b'{"query": "by hand", "relevant": {"x": 1}}\n'
        golden.write_bytes(edited)
        await pilot.press("1")
        await wait_until(pilot, lambda: isinstance(app.screen, ConflictScreen),
                         "the conflict view")
        assert golden.read_bytes() == edited and screen.writes == 3
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is screen, "back on the judge screen")
        await pilot.press("1")  # re-read: now it writes
        await wait_until(pilot, lambda: screen.writes == 4, "the judgement after re-reading")
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, JudgeRecallScreen),
                         "the judge screen to close")
        await wait_until(pilot, lambda: "4 graded, 3 relevant" in cells(table)[
            [r.id for r in pane.recalls].index(on.id)][6], "the judged column")

        # the off-topic prompt: nothing was needed
        table.move_cursor(row=[r.id for r in pane.recalls].index(off.id))
        await pilot.press("a")
        await wait_until(pilot, lambda: isinstance(app.screen, JudgeRecallScreen),
                         "the judge screen for the off-topic prompt")
        screen = app.screen
        await pilot.press("n")
        await wait_until(pilot, lambda: screen.writes == 1 and screen.off_topic,
                         "nothing-needed written")
        await pilot.press("escape")
        await wait_until(pilot, lambda: "nothing needed" in cells(table)[
            [r.id for r in pane.recalls].index(off.id)][6], "the judged column says so")

    assert len(weak_path(vault_copy).read_text().splitlines()) == 1  # judging wrote none
    # exactly the file eval reads: the vault's own lines carried over, then ours
    assert (vault_copy / "golden.jsonl").read_bytes() == vault_golden  # never written
    queries = read_golden(golden)
    assert len(queries) == before + 3
    by = {q.query: q for q in queries}
    third = on.injected_ids[2]
    assert dict(by[ON_TOPIC].relevant) == {on.injected_ids[0]: 2, on.injected_ids[1]: 0,
                                           missing: 3, third: 1}
    assert not by[ON_TOPIC].off_topic
    assert by[OFF_TOPIC].off_topic and dict(by[OFF_TOPIC].relevant) == dict.fromkeys(
        off.injected_ids, 0)
    lines = {json.loads(ln)["query"]: json.loads(ln) for ln in golden.read_text().splitlines()
             if ln.strip() and not ln.startswith("#")}
    for rec, q in ((on, ON_TOPIC), (off, OFF_TOPIC)):
        line = lines[q]
        assert line["log_ids"] == [rec.id] and line["prompt"] == rec.prompt
        assert line["judged_by"] == "user" and line["judged_at"].endswith("Z")
    # eval's scoring on the two judged prompts: the added memory counts as relevant
    run = run_golden(engine, [by[ON_TOPIC], by[OFF_TOPIC]], k=10, now=PINNED_NOW)
    result = run.result_for(ON_TOPIC)
    assert result is not None and result.metrics["recall"] is not None
    assert run.off_topic is not None and run.off_topic["queries"] == 1
    assert file_hash(golden) is not None

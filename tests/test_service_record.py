"""The warm service answers a hook first and writes its flight-recorder record after
(`RecallCore.hook_then_record`, `RecallService.run_after`), and never loses one: a stop waits
for the records of recalls already answered. Also its request phases (`{"op": "stats"}`).
One in-process service (a thread, no model: embedder none), a few requests."""

from __future__ import annotations

import threading

from recall_tui.agent import client
from recall_tui.agent import core as core_mod
from recall_tui.agent.active import write_active
from recall_tui.agent.log import read_agent_log
from recall_tui.agent.service import RecallService
from tests.waiting import wait_until_sync


def _hook(vault, session: str) -> dict:
    req = {"op": "hook", "payload": {"session_id": session, "prompt": "postgres major upgrade analyze"},
           "options": {"event": "prompt-submit", "repeat_window": 0}}
    return client.request(vault, req, timeout=60)


def test_records_follow_the_answer_and_a_stop_waits_for_them(vault_copy, monkeypatch):
    write_active(vault_copy, embedder="none")
    gate = threading.Event()
    events: list[str] = []
    append = core_mod.append_recall
    close = core_mod.RecallCore.close

    def held(root, rec):  # the log write of session "held" waits until the test lets it go
        if rec.session_id == "held":
            gate.wait(60)
        done = append(root, rec)
        if rec.session_id == "held":
            events.append("written")
        return done

    def closing(self):
        events.append("closed")
        close(self)

    monkeypatch.setattr(core_mod, "append_recall", held)
    monkeypatch.setattr(core_mod.RecallCore, "close", closing)
    svc = RecallService(vault_copy, watch=False, log=lambda _m: None, model_idle_s=0)
    waiting = threading.Event()

    class Watched(threading.Condition):  # says when the stopping service waits for records
        def wait_for(self, predicate, timeout=None):
            waiting.set()
            return super().wait_for(predicate, timeout)

    svc._after_done = Watched()
    t = threading.Thread(target=svc.run, daemon=True)
    t.start()
    try:
        assert client.wait_ready(vault_copy, timeout=120)
        answers = [_hook(vault_copy, f"s{i}") for i in range(3)]
        assert all(a["ok"] and "(lesson-pg-upgrade-analyze)" in a["text"] for a in answers)
        recs = wait_until_sync(lambda: len(read_agent_log(vault_copy)) == 3 and read_agent_log(vault_copy),
                               "the three records", 30)
        assert {r.id for r in recs} == {a["record"] for a in answers}
        assert all(r.path == "service" and r.trace is not None and r.injected_ids for r in recs)
        stats = client.request(vault_copy, {"op": "stats"})["hook_phases"]
        assert stats["total"]["n"] == 3 and stats["record"]["n"] == 3
        assert {"wait", "read", "parse", "config", "recall", "embed", "format", "text", "encode",
                "send"} <= set(stats)

        held_ans = _hook(vault_copy, "held")  # answered while its record is still held back
        assert held_ans["ok"] and not read_agent_log(vault_copy, session="held")
        svc.stop()
        wait_until_sync(waiting.is_set, "the stopping service to wait for the held record", 60)
        assert events == [] and t.is_alive()  # nothing closed while a record is pending
    finally:
        gate.set()
        svc.stop()
        t.join(60)
    assert not t.is_alive() and events == ["written", "closed"]
    (rec,) = read_agent_log(vault_copy, session="held")
    assert rec.id == held_ans["record"] and rec.trace is not None

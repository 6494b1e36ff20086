"""`recall-tui log sample`'s choice of prompts (recall_tui.agent.sample): secrets never
sampled, near-duplicates merged and counted, long prompts cut to their question, the three
orders."""

from __future__ import annotations

import pytest

from recall_tui.agent.log import AgentRecall
from recall_tui.agent.sample import question_of, sample_prompts


def _rec(n: int, prompt: str, event: str = "prompt-submit") -> AgentRecall:
    return AgentRecall(id=f"r{n:03d}", time=f"2026-11-{n:02d}T10:00:00Z", served_by="hook",
                       event=event, prompt=prompt)


LOG = [
    _rec(1, "How do we deploy billing?"),
    _rec(2, "how do we deploy billing"),            # the same words: merged
    _rec(3, "How do we deploy the billing?"),       # Jaccard 4/5: merged
    _rec(4, "my key is sk-abcdefghijklmnopqrstuv please use it"),
    _rec(5, "what postgres version does billing run"),
    _rec(6, "why_not", event="why_not"),
    _rec(7, "password: hunter2 for staging"),
    _rec(8, "internal project ZEBRA status"),
    _rec(9, ""),
]


def test_secrets_dropped_duplicates_merged_and_counted():
    res = sample_prompts(LOG, n=10)
    assert res.prompts == 7 and res.secret == 2 and res.merged == 2
    qs = {s.query: s for s in res.queries}
    assert set(qs) == {"How do we deploy billing?", "what postgres version does billing run",
                       "internal project ZEBRA status"}
    deploy = qs["How do we deploy billing?"]
    assert deploy.count == 3 and deploy.log_ids == ["r001", "r002", "r003"]
    assert deploy.last == "2026-11-03T10:00:00Z"
    assert not any("sk-" in s.query or "hunter2" in s.query for s in res.queries)


def test_orders_and_exclusions():
    recent = sample_prompts(LOG, n=2, by="recent")
    assert [s.query for s in recent.queries] == ["internal project ZEBRA status",
                                                 "what postgres version does billing run"]
    frequent = sample_prompts(LOG, n=1, by="frequent")
    assert frequent.queries[0].count == 3
    a = sample_prompts(LOG, n=3, by="random", seed=7)
    b = sample_prompts(LOG, n=3, by="random", seed=7)
    assert [s.query for s in a.queries] == [s.query for s in b.queries]
    ex = sample_prompts(LOG, n=10, exclude=[r"ZEBRA"])
    assert ex.excluded == 1 and all("ZEBRA" not in s.query for s in ex.queries)
    with pytest.raises(ValueError, match=r"--exclude '\(' is not a regular expression"):
        sample_prompts(LOG, n=1, exclude=["("])
    with pytest.raises(ValueError, match="--by 'often'"):
        sample_prompts(LOG, n=1, by="often")


def test_long_prompts_cut_to_their_question():
    text = ("Here is a long stack trace " + "frame " * 80 + ". Which memory says how to "
            "restart the worker? Thanks a lot for looking.")
    q, cut = question_of(text, 120)
    assert cut and q == "Which memory says how to restart the worker?"
    q, cut = question_of("word " * 100, 50)
    assert cut and len(q) <= 50 and not q.endswith(" ")
    assert question_of("short\nprompt", 50) == ("short prompt", False)


def test_log_sample_command_writes_a_query_set_snapshot_reads(tmp_path):
    import json
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    from recall_tui.agent.log import append_recall
    from recall_tui.tuning.snapshot import read_query_set
    from tests.conftest import SAMPLE_VAULT

    vault = tmp_path / "vault"
    shutil.copytree(SAMPLE_VAULT, vault, ignore=shutil.ignore_patterns(".recall"))
    for rec in LOG:
        append_recall(vault, rec)
    out = tmp_path / "sampled.jsonl"
    bin_ = Path(sys.executable).with_name("recall-tui")
    r = subprocess.run([str(bin_), "log", "--vault", str(vault), "sample", "--n", "5",
                        "--by", "frequent", "--out", str(out)],
                       capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stderr
    assert "3 queries from 7 logged prompts (2 near-duplicates merged, 2 dropped" in r.stdout
    lines = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert lines[0]["query"] == "How do we deploy billing?" and lines[0]["count"] == 3
    assert "relevant" not in lines[0]  # unjudged until someone judges it
    assert [q.query for q in read_query_set(out)] == [x["query"] for x in lines]
    bad = subprocess.run([str(bin_), "log", "--vault", str(vault), "sample", "--exclude", "("],
                         capture_output=True, text=True, check=False)
    assert bad.returncode == 2 and "is not a regular expression" in bad.stderr

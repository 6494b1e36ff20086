"""speaker, window and hop2: the raw-turn stages, on hand-built turn vaults with hand-computed
expectations (keyword channel only, no index), and the error-analysis arrangement."""

from __future__ import annotations

import pytest

from recall_tui.engine import Engine
from recall_tui.engine.config import Config
from recall_tui.engine.stages.hop2 import seed_terms
from recall_tui.engine.stages.speaker import query_dates
from recall_tui.engine.stages.turn_layout import build, speaker_of
from recall_tui.engine.stages.window import spread
from recall_tui.tuning.errors import lost_on
from tests.conftest import PINNED_NOW
from tests.engine_vaults import write_vault


def turn(mid: str, sid: str, at: str, text: str, **fm) -> tuple[str, tuple[dict, str]]:
    return f"{sid}/{mid}.md", ({"id": mid, "created": at, "session_id": sid, **fm}, text + "\n")


@pytest.fixture(scope="module")
def vault(tmp_path_factory):
    return write_vault(tmp_path_factory.mktemp("turns") / "v", dict([
        turn("t1", "s1", "2025-03-01T10:00:00Z", "Lena: where did you go in the end?"),
        turn("t2", "s1", "2025-03-01T10:01:00Z", "Tomas: Lisbon, the trip was lovely"),
        turn("t3", "s1", "2025-03-01T10:02:00Z", "Lena: nice"),
        turn("t4", "s1", "2025-03-01T10:03:00Z", "Tomas: also I adopted a greyhound"),
        turn("u1", "s2", "2025-04-05T18:00:00Z", "Lena: how is the greyhound settling in?"),
        turn("u2", "s2", "2025-04-05T18:01:00Z", "Tomas: Pepper the greyhound hates the stairs"),
        turn("x1", "s3", "2025-05-01T09:00:00Z", "well hello", tags=["speaker-ana"]),
    ]))


def cfg(**knobs) -> Config:
    c = Config().with_value("signature.enabled", False).with_value("graph.enabled", False)
    c = c.with_value("hops.enabled", False)
    for k, v in knobs.items():
        c = c.with_value(k.replace("__", "."), v)
    return c


def fused(tr, mid: str) -> float:
    return {c.id: c.score for c in tr.stage("fuse").candidates}[mid]


# --- the layout ------------------------------------------------------------------------

def test_layout_orders_sessions_and_reads_speakers(vault):
    lay = build(vault)
    assert lay.sessions["s1"] == ("t1", "t2", "t3", "t4")
    assert lay.place["u2"] == ("s2", 1)
    assert lay.speaker["t2"] == "tomas" and lay.speaker["x1"] == "ana"  # tag fallback
    assert speaker_of("Mary Ann: hi", []) == "mary ann"
    assert speaker_of("note: lower case is not a speaker", []) is None


# --- window ------------------------------------------------------------------------------

def test_spread_hand_computed():
    sessions = {"s": ("a", "b", "c", "d")}
    place = {m: ("s", i) for i, m in enumerate(sessions["s"])}
    got = spread({"b": 1.0, "d": 0.2}, sessions, place, size=2, weight=0.5, decay=0.5)
    # a, c: 0.5 x 1.0 at distance 1; d: 0.5 x 0.5 x 1.0 at distance 2 (beats 0 from itself);
    # b: from d at distance 2 is 0.05, less than nothing else -> 0.05
    assert got == {"a": (0.5, "b", 1), "c": (0.5, "b", 1), "d": (0.25, "b", 2),
                   "b": (pytest.approx(0.05), "d", 2)}


def test_window_brings_in_the_answer_turn(vault):
    q = "lisbon trip"
    off = Engine(vault, None, cfg()).recall(q, now=PINNED_NOW, k=5)
    assert [h.id for h in off.hits] == ["t2"] and off.stage("window").skipped
    tr = Engine(vault, None, cfg(window__enabled=True)).recall(q, now=PINNED_NOW, k=5)
    f = fused(tr, "t2")
    win = {c.id: c.score for c in tr.stage("window").candidates}
    assert win == {"t1": pytest.approx(0.5 * f), "t3": pytest.approx(0.5 * f)}
    assert {h.id for h in tr.hits} == {"t1", "t2", "t3"}
    assert any(n.startswith("window: +") and "from t2" in n for n in tr.hit("t1").explain.notes)
    assert dict(tr.stage("window").info)["added"] == "2"


def test_window_leaves_memories_that_are_not_turns_alone(tmp_path):
    # a session_id without a speaker is an extracted memory of a session, not a turn
    v = write_vault(tmp_path / "v", {"a.md": ({"id": "a", "session_id": "s"}, "lisbon trip\n"),
                                     "b.md": ({"id": "b", "session_id": "s"}, "porto\n")})
    tr = Engine(v, None, cfg(window__enabled=True)).recall("lisbon", now=PINNED_NOW)
    assert tr.stage("window").skipped and "no turns" in tr.stage("window").reason


# --- speaker -----------------------------------------------------------------------------

def test_query_dates():
    assert query_dates(["march", "2025"]) == ({3}, {2025})
    assert query_dates(["may", "come"]) == (set(), set())  # "may" alone is a verb
    assert query_dates(["may", "2024"]) == ({5}, {2024})
    assert query_dates(["1850s", "12345"]) == (set(), set())


def test_speaker_named_in_the_query_weighs_their_turns(vault):
    q = "what did Lena say about the greyhound"
    base = Engine(vault, None, cfg()).recall(q, now=PINNED_NOW, k=10)
    tr = Engine(vault, None, cfg(speaker__enabled=True)).recall(q, now=PINNED_NOW, k=10)
    got = {c.id: c.score for c in tr.stage("speaker").candidates}
    lena = {"t1", "t3", "u1"} & {c.id for c in base.stage("fuse").candidates}
    assert "u1" in lena and set(got) == lena  # Tomás's turns are not raised
    for mid in lena:
        assert got[mid] == pytest.approx(1.25 * fused(base, mid))
    assert dict(tr.stage("speaker").info)["speakers named"] == "lena"
    assert "said by lena x1.25" in " ".join(tr.hit("u1").explain.notes)


def test_date_named_in_the_query_weighs_that_month(vault):
    q = "greyhound in April 2025"
    c = cfg(speaker__enabled=True, speaker__date_weight=0.5)
    tr = Engine(vault, None, c).recall(q, now=PINNED_NOW, k=10)
    base = Engine(vault, None, cfg()).recall(q, now=PINNED_NOW, k=10)
    got = {c.id: c.score for c in tr.stage("speaker").candidates}
    assert set(got) == {"u1", "u2"}  # t4 (March) is not raised
    assert got["u1"] == pytest.approx(1.5 * fused(base, "u1"))
    assert [h.id for h in tr.hits][:2] != ["t4"]


def test_speaker_stage_without_names_or_dates(vault):
    tr = Engine(vault, None, cfg(speaker__enabled=True)).recall("greyhound", now=PINNED_NOW)
    assert tr.stage("speaker").candidates == () and "no speaker" in tr.stage("speaker").reason
    assert dict(tr.stage("speaker").info)["asks when"] == "no"


# --- hop2 --------------------------------------------------------------------------------

def test_seed_terms_hand_computed():
    idf = {"alpha": 1.0, "beta": 2.0, "gamma": 3.0, "delta": 9.0}
    df = {"alpha": 4, "beta": 2, "gamma": 5, "delta": 1}
    got = seed_terms(["alpha beta gamma delta"], {"alpha"}, idf, df, 5, stem=False,
                     stop_words=False)
    assert got == ["gamma", "beta"]  # alpha excluded, delta only in the seed itself


def test_hop2_follows_the_seed_terms_to_another_session(vault):
    q = "pepper stairs"
    c = cfg(hop2__enabled=True, hop2__from_top=1, hop2__factor=0.3)
    tr = Engine(vault, None, c).recall(q, now=PINNED_NOW, k=10)
    info = dict(tr.stage("hop2").info)
    assert info["seeds"] == "u2" and info["terms"] == "greyhound"  # pepper/stairs: query; hates: df 1
    cands = {c.id: c.score for c in tr.stage("hop2").candidates}
    assert set(cands) == {"t4", "u1"}
    top = fused(tr, "u2")
    # the best BM25 of the hop gets exactly factor x the seed's score
    assert max(cands.values()) == pytest.approx(0.3 * top)
    assert min(cands.values()) < 0.3 * top
    assert any(n.startswith("hop2: +") for n in tr.hit("t4").explain.notes)
    off = Engine(vault, None, cfg()).recall(q, now=PINNED_NOW, k=10)
    assert off.hit("t4") is None and off.stage("hop2").skipped


# --- errors ------------------------------------------------------------------------------

def test_lost_on():
    assert lost_on({"recall": 0.5, "mrr": 1.0}, {"recall": 1.0, "mrr": 0.2}) == "recall"
    assert lost_on({"recall": 1.0, "mrr": 0.5}, {"recall": 1.0, "mrr": 1.0}) == "mrr"
    assert lost_on({"recall": 1.0, "mrr": 1.0}, {"recall": 0.5, "mrr": 1.0}) is None
    assert lost_on({"recall": None, "mrr": None}, {"recall": 1.0, "mrr": 1.0}) is None


def test_why_names_the_turn_stages(vault):
    tr = Engine(vault, None, cfg(window__enabled=True)).recall("lisbon trip", now=PINNED_NOW,
                                                              k=5, why=["t1", "t4"])
    got = {w.id: w for w in tr.why}
    assert got["t1"].found and "brought in by window" in got["t1"].reason
    assert any(d.startswith("window: +") for d in got["t1"].details)
    assert not got["t4"].found and got["t4"].stage == "fuse"  # two turns away: not reached


def test_when_questions_weigh_turns_that_state_a_time(tmp_path):
    from recall_tui.engine.stages.speaker import asks_when, states_time

    assert asks_when("When did Lena move?") and asks_when("what year did they marry")
    assert not asks_when("Where did Lena go when it rained?")
    assert states_time("we went last week") and states_time("on the 24th of September")
    assert states_time("back in 2019") and not states_time("we went to the 24 hour shop")
    v = write_vault(tmp_path / "v", dict([
        turn("a", "s", "2025-01-01T10:00:00Z", "Lena: the move was stressful"),
        turn("b", "s", "2025-01-01T10:01:00Z", "Lena: the move is done, since last Tuesday"),
    ]))
    c = cfg(speaker__enabled=True, speaker__weight=0.0, speaker__when_weight=1.0)
    tr = Engine(v, None, c).recall("when did the move happen", now=PINNED_NOW)
    got = {x.id: x.score for x in tr.stage("speaker").candidates}
    assert set(got) == {"b"} and got["b"] == pytest.approx(2 * fused(tr, "b"))
    assert "states a time x2" in " ".join(tr.hit("b").explain.notes)


def test_time_forms_of_chat_count_as_stating_a_time():
    """The forms raw chat uses for a day (found by the held-out turn vault's temporal misses):
    today / last night, a short month with a day number, May after a preposition, a clock
    time; and the verb "may", a score like 10/10 or a bare number do not."""
    from recall_tui.engine.stages.speaker import asks_when, states_time

    said = ["first market day was today!!", "Kickstarter ended last night", "Feb 23 to 25",
            "leave on May 27", "on 14 Dec", "it's in Lagos in May, yes?", "online at 9am sharp",
            "the call is at 18:30", "saw her the other day", "Dec 13-15?"]
    assert [t for t in said if not states_time(t)] == []
    not_said = ["you may go now", "10/10 would freeze again", "section 12 may apply",
                "we went to the 24 hour shop", "mayday mayday", "a feb-ruary typo"]
    assert [t for t in not_said if states_time(t)] == []
    assert asks_when("By when does Lotte have to submit her abstract?")
    assert asks_when("since when has he kept bees")
    assert not asks_when("What did he say when it rained?")


def test_hop2_stays_below_the_weakest_seed(tmp_path):
    v = write_vault(tmp_path / "v", dict([
        turn("a", "s", "2025-01-01T10:00:00Z", "Lena: apple pie with cinnamon"),
        turn("b", "s", "2025-01-01T10:01:00Z", "Lena: apple tart with cinnamon"),
        turn("c", "s", "2025-01-01T10:02:00Z", "Tomas: apple crumble, cinnamon"),
        turn("d", "s", "2025-01-01T10:03:00Z", "Tomas: cinnamon rolls"),
    ]))
    c = cfg(hop2__enabled=True, hop2__from_top=2, hop2__factor=1.0)
    tr = Engine(v, None, c).recall("apple pie", now=PINNED_NOW, k=10)
    seeds = dict(tr.stage("hop2").info)["seeds"].split()
    assert len(seeds) == 2 and dict(tr.stage("hop2").info)["terms"] == "cinnamon"
    scores = {x.id: x.score for x in tr.stage("hop2").candidates}
    weakest = min({x.id: x.score for x in tr.stage("fuse").candidates}[s] for s in seeds)
    assert scores and all(s < weakest for s in scores.values())
    assert [h.id for h in tr.hits][:2] == [h for h in seeds]
    assert any("capped under the weakest seed" in n for h in tr.hits for n in h.explain.notes)
    free = Engine(v, None, c.with_value("hop2.below_seeds", False)).recall("apple pie",
                                                                          now=PINNED_NOW, k=10)
    assert max(x.score for x in free.stage("hop2").candidates) > weakest


def test_per_vault_memos_follow_a_vault_change(tmp_path):
    """speaker's names and 'states a time', hop2's seed and speaker terms and the floor's
    calibration are kept per vault: a changed vault is seen by the next recall."""
    from recall_tui.engine import calibration
    from recall_tui.engine.text import analyze

    def vault(root, a_text: str, b_text: str):
        return write_vault(tmp_path / root, dict([
            turn("a", "s", "2025-01-01T10:00:00Z", a_text),
            turn("b", "s", "2025-01-01T10:01:00Z", b_text),
            turn("c", "t", "2025-02-01T10:00:00Z", "Lena: the heron nest by the quay"),
        ]))

    v1 = vault("v1", "Lena: the move was stressful", "Lena: the move is done, since last Tuesday")
    c = cfg(speaker__enabled=True, speaker__when_weight=1.0, hop2__enabled=True,
            hop2__from_top=1)
    eng = Engine(v1, None, c)
    tr = eng.recall("when did the move happen", now=PINNED_NOW)
    assert {x.id for x in tr.stage("speaker").candidates} == {"b"}
    assert dict(eng.recall("what did Mira say about the move", now=PINNED_NOW).stage("speaker").info)[
        "speakers named"] == "(none)"
    cal = calibration.for_engine(eng)
    assert cal.doc_freq.get("heron") == 1
    assert set(analyze("Lena: the heron nest by the quay")) <= cal.terms["c"]
    # a's body now states a time and names a heron, b's no longer does; Mira speaks a
    eng.set_vault(vault("v2", "Mira: the move was stressful, the heron left last Friday",
                        "Lena: the move is done"))
    tr = eng.recall("when did the move happen", now=PINNED_NOW)
    assert {x.id for x in tr.stage("speaker").candidates} == {"a"}
    assert dict(eng.recall("what did Mira say about the move", now=PINNED_NOW).stage("speaker").info)[
        "speakers named"] == "mira"
    hop = dict(eng.recall("stressful move", now=PINNED_NOW).stage("hop2").info)
    assert hop["seeds"] == "a" and hop["terms"] == "heron"  # shared with c; mira is a speaker
    cal = calibration.for_engine(eng)
    assert cal.doc_freq.get("heron") == 2 and "heron" in cal.terms["a"]
    assert "tuesdai" not in cal.doc_freq and "tuesdai" not in cal.terms["b"]

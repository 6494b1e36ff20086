"""boosts: every factor against the seed formulas, computed by hand."""

from __future__ import annotations

import dataclasses
import re
from datetime import datetime, timedelta, timezone

import pytest

from recall_tui.engine import Engine
from recall_tui.engine.config import Config
from recall_tui.engine.config_sections import BoostsConfig
from recall_tui.engine.stages.boosts import BoostContext, apply, compute
from tests.conftest import PINNED_NOW
from tests.engine_vaults import mem, write_vault


@pytest.fixture(scope="module")
def vault(tmp_path_factory):
    root = tmp_path_factory.mktemp("boost") / "v"
    return write_vault(root, dict([
        mem("task-old", "Old task", type="task", updated="2026-09-22T09:00:00Z",
            created="2026-09-01T09:00:00Z"),  # 60 days: stale for a task (30..90)
        mem("lesson", "A lesson", type="lesson", updated="2026-05-25T09:00:00Z",
            created="2026-05-25T09:00:00Z", trust=3, credibility=2, tier="core", emotion=-4,
            confidence=0.9),
        mem("fact", "A fact", type="fact", created="2026-11-20T09:00:00Z", trust=0, credibility=4),
        mem("gone", "Expired", type="fact", created="2026-11-01T09:00:00Z",
            expires="2026-11-10T00:00:00Z"),
    ]))


def all_on() -> BoostsConfig:
    b = BoostsConfig()
    return dataclasses.replace(b, **{f.name: dataclasses.replace(getattr(b, f.name), enabled=True)
                                     for f in dataclasses.fields(b)})


def factors(m, ctx, cfg=None) -> dict[str, float]:
    fs, _ = compute(m, cfg or all_on(), ctx)
    return {f.name: f.value for f in fs}


def test_each_factor_by_hand(vault):
    m = vault.memories["lesson"]
    age = (PINNED_NOW - m.updated).total_seconds() / 86400  # 180 days
    times = (PINNED_NOW - timedelta(days=30), PINNED_NOW - timedelta(days=16),
             PINNED_NOW - timedelta(days=2))  # mean interval 14 days
    ctx = BoostContext(PINNED_NOW, frozenset({"keyword"}), True, 3, times, hour=10,
                       weekday=PINNED_NOW.weekday(), topic=None)
    f = factors(m, ctx)
    assert f["staleness"] == 1.0  # a lesson is fresh for 365 days
    assert f["recency"] == pytest.approx(max(0.3, 1 - age / 365) * (1 + 4 * 0.1))
    assert f["trust"] == pytest.approx(0.5 + 0.5 * 3 / 3)
    assert f["credibility"] == 1.25  # credibility 2 <= 2
    assert f["tier"] == 1.3
    assert f["emotion"] == pytest.approx(1 + 4 * 0.02)
    assert f["recall"] == pytest.approx(1 + 0.1 * 3)
    assert f["relevance"] == pytest.approx(1.2)  # confidence 0.9 > 0
    assert f["spacing"] == 1.3  # mean interval 14 d >= 7
    assert f["cross_channel"] == 0.5  # keyword-only while vectors ran
    # created 2026-05-25 09:00 UTC, a Monday morning; now is Saturday 09:00
    assert m.created.weekday() == 0 and PINNED_NOW.weekday() == 5
    assert f["context"] == pytest.approx(1 + 0.02)  # morning bucket, weekday vs weekend: nothing


def test_staleness_windows_and_expires(vault):
    ctx = BoostContext(PINNED_NOW)
    cfg = all_on()
    fs, label = compute(vault.memories["task-old"], cfg, ctx)
    assert label == "stale" and {f.name: f.value for f in fs}["staleness"] == 0.5
    fs, label = compute(vault.memories["gone"], cfg, ctx)
    assert label == "expired" and {f.name: f.value for f in fs}["staleness"] == 0.2
    fs, label = compute(vault.memories["fact"], cfg, ctx)
    assert label == "fresh"


def test_low_trust_and_high_credibility(vault):
    f = factors(vault.memories["fact"], BoostContext(PINNED_NOW, frozenset({"keyword", "vector"}), True))
    assert f["trust"] == pytest.approx(0.5)
    assert f["credibility"] == 1.0
    assert f["cross_channel"] == 1.0  # confirmed by vector
    assert f["spacing"] == 1.0 and f["recall"] == 1.0


def test_spacing_day_and_context_same_weekday():
    cfg = all_on()
    # spacing: mean interval 2 days -> 1.15
    t = datetime(2026, 11, 21, tzinfo=timezone.utc)
    times = (t - timedelta(days=4), t - timedelta(days=2), t)
    from recall_tui.engine.stages.boosts import compute as c
    class M:  # the factors read only these attributes
        type = "fact"; updated = created = datetime(2026, 11, 21, 20, tzinfo=timezone.utc)  # noqa: E702
        expires = None; emotion = 0.0; trust = 2.0; credibility = 3.0; tier = "normal"  # noqa: E702
        extra = {}; confidence = None; topic_key = "user.diet"; topic_path = "personal"  # noqa: E702
    ctx = BoostContext(t, frozenset({"vector"}), True, 3, times, hour=21, weekday=5, topic="user.diet")
    f = {x.name: x.value for x in c(M(), cfg, ctx)[0]}
    assert f["spacing"] == 1.15
    assert f["context"] == pytest.approx(1 + 0.02 + 0.015 + 0.03)  # evening, Saturday, topic


def test_apply_multiplies_every_factor():
    from recall_tui.engine.trace import BoostFactor
    fs = [BoostFactor("a", 0.5, ""), BoostFactor("b", 1.3, ""), BoostFactor("c", 0.1, "", "add")]
    assert apply(2.0, fs) == pytest.approx(2.0 * 0.5 * 1.3 + 0.1)


def test_engine_records_boosts_and_reorders(vault):
    cfg = Config().with_value("boosts.staleness.enabled", True).with_value("hops.enabled", False)
    tr = Engine(vault, None, cfg).recall("old task lesson fact", now=PINNED_NOW)
    for h in tr.hits:
        names = [b.name for b in h.explain.boosts]
        assert names == ["staleness"]
        assert h.explain.boosted == pytest.approx(h.explain.fused * h.explain.boosts[0].value)
    assert tr.hit("task-old").staleness == "stale"
    scores = [h.explain.boosted for h in tr.hits]
    assert scores == sorted(scores, reverse=True)


def test_recency_of_a_memory_dated_after_now_is_clamped_and_says_so(tmp_path):
    """A memory dated after `now` gets recency clamped to age 0 with a note saying so, and no
    negative age in its staleness."""
    future = PINNED_NOW + timedelta(days=37)
    vault = write_vault(tmp_path / "v", dict([
        mem("later", "Dated later", type="event", emotion=2,
            created=future.isoformat().replace("+00:00", "Z")),
    ]))
    factors, label = compute(vault.memories["later"], all_on(),
                             BoostContext(PINNED_NOW, frozenset({"vector"}), True))
    f = {x.name: x for x in factors}
    recency = f["recency"]
    formula, _, note = recency.reason.partition(";")
    assert "clamped" in note and "after now" in note
    expr = formula.split("=")[0].replace(" x ", " * ")
    assert eval(expr, {"max": max}) == pytest.approx(recency.value, rel=1e-3)
    assert label == "fresh"
    assert not re.search(r"-\d+d old", f["staleness"].reason), f["staleness"].reason
    assert "after now" in f["staleness"].reason

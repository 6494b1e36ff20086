"""filter: every drop reason, and bi-temporal as-of (supersession judged as of t)."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from recall_tui.engine import Engine, Filters
from recall_tui.engine.config import Config
from tests.conftest import PINNED_NOW
from tests.engine_vaults import mem, write_vault

Q = "widget"


@pytest.fixture(scope="module")
def vault(tmp_path_factory):
    w = "widget"
    return write_vault(tmp_path_factory.mktemp("filter") / "v", dict([
        mem("ok", f"{w} ok", tags=["t1"], source="claude-code", session_id="s1", scope="global"),
        mem("arch", f"{w} archived file", folder="_archive"),
        mem("inbox", f"{w} inbox note", folder="_inbox"),
        mem("stat-arch", f"{w} status archived", status="archived"),
        mem("exp", f"{w} expired", expires="2026-11-01T00:00:00Z"),
        mem("dec", f"{w} decision", type="decision", scope="project:x"),
        mem("v1", f"{w} version one", created="2026-01-01T00:00:00Z",
            ingested_at="2026-01-01T00:00:00Z"),
        mem("v2", f"{w} version two", created="2026-06-01T00:00:00Z",
            ingested_at="2026-06-01T00:00:00Z", supersedes="v1"),
        mem("future", f"{w} valid later", valid_from="2026-12-01T00:00:00Z"),
        mem("ended", f"{w} valid until", valid_to="2026-02-01T00:00:00Z",
            created="2026-01-01T00:00:00Z"),
        mem("f1", "filler one"), mem("f2", "filler two"), mem("f3", "filler three"),
        mem("f4", "filler four"), mem("f5", "filler five"), mem("f6", "filler six"),
        mem("f7", "filler seven"), mem("f8", "filler eight"),
    ]))


def plain() -> Config:
    return (Config().with_value("k", 20).with_value("signature.enabled", False)
            .with_value("hops.enabled", False).with_value("graph.enabled", False))


def run(vault, **kw):
    tr = Engine(vault, None, plain()).recall(Q, now=PINNED_NOW, **kw)
    return tr, {d.id: d.reason for d in tr.stage("filter").dropped}


def test_default_drops_with_reasons(vault):
    tr, dropped = run(vault)
    assert dropped["arch"] == "in _archive/ (never recalled)"
    assert dropped["inbox"] == "in _inbox/ (include_inbox is off)"
    assert dropped["stat-arch"] == "status archived"
    assert dropped["exp"] == "expired 2026-11-01T00:00:00Z"
    assert dropped["v1"].startswith("superseded by v2")
    hits = {h.id for h in tr.hits}
    assert {"ok", "dec", "v2", "future", "ended"} <= hits
    assert not hits & set(dropped)


def test_includes(vault):
    _, dropped = run(vault, filters=Filters(include_inbox=True, include_superseded=True,
                                            include_expired=True))
    assert "inbox" not in dropped and "v1" not in dropped and "exp" not in dropped
    assert "arch" in dropped  # _archive/ always


def test_call_filters(vault):
    _, d = run(vault, filters=Filters(types=("decision",)))
    assert d["ok"] == "type fact not in the type filter (decision)" and "dec" not in d
    _, d = run(vault, filters=Filters(scopes=("project:x",)))
    assert d["ok"].startswith("scope global not in") and "dec" not in d
    _, d = run(vault, filters=Filters(tags=("t1",)))
    assert "ok" not in d and d["dec"].startswith("no tag")
    _, d = run(vault, filters=Filters(session_id="s1"))
    assert "ok" not in d and d["dec"] == "session (none) is not s1"
    _, d = run(vault, filters=Filters(source="claude-code"))
    assert "ok" not in d and d["dec"] == "source (none) is not claude-code"


def test_inline_filters(vault):
    tr = Engine(vault, None, plain()).recall(f"{Q} type:decision", now=PINNED_NOW)
    assert [h.id for h in tr.hits] == ["dec"]
    assert ("inline type", "decision") in tr.stage("query.parse").info


def test_as_of_supersession_and_validity(vault):
    t = datetime(2026, 3, 1, tzinfo=timezone.utc)
    tr, d = run(vault, as_of=t)
    hits = {h.id for h in tr.hits}
    assert "v1" in hits, "v1 was the current version on 2026-03-01"
    assert d["v2"].startswith("not ingested as of 2026-03-01")
    assert d["ended"] == "not valid as of 2026-03-01T00:00:00Z (valid_to 2026-02-01T00:00:00Z)"
    assert tr.as_of == "2026-03-01T00:00:00Z"


def test_as_of_inline_and_valid_from(vault):
    tr = Engine(vault, None, plain()).recall(f"{Q} as_of:2026-11-15", now=PINNED_NOW,
                                             why=["future"])
    w = tr.why_of("future")
    assert w.stage == "filter" and w.reason.startswith("not valid as of 2026-11-15")

"""recall_when preview on a scratch index, then apply: a real miss of the sample vault fixed.

The case (sample-vault/golden.jsonl, a paraphrase query): "what fee do we pay for family
pictures sitting offsite" should bring back homelab-backup-restic-b2, and under the default
preset it does not come back at all (no channel matches it). Adding the phrase "what do we pay
for offsite backups" brings it to the top.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from recall_tui.engine import open_engine
from recall_tui.tuning.metrics import read_golden
from recall_tui.tuning.preview import apply_recall_when, preview_recall_when
from recall_tui.vault.edit import EditConflict, read_phrases
from tests.conftest import PINNED_NOW

MEMORY = "homelab-backup-restic-b2"
QUERY = "what fee do we pay for family pictures sitting offsite"
PHRASE = "what fee do we pay for family pictures kept offsite"
K = 10


def _tree_hashes(root: Path) -> dict[str, str]:
    """sha256 of every file under the vault, `.recall/` (the index) included, but the
    engine's files kept beside the index (the probes' bests, written on the first recall
    that needs them: index.md, "Where the file lives")."""
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*")) if p.is_file() and not p.name.endswith(".probe-bests")
    }


@pytest.fixture()
def engine(vault_copy):
    e = open_engine(vault_copy, embedder="local")
    yield e
    e.index.close()


def test_preview_finds_the_new_rank_without_touching_the_vault_then_apply_matches(engine, vault_copy):
    golden = read_golden(vault_copy / "golden.jsonl")
    subset = [q for q in golden if q.query == QUERY] + golden[:8]
    path = vault_copy / engine.vault.get(MEMORY).path
    old_phrases = engine.vault.get(MEMORY).recall_when
    before_files = _tree_hashes(vault_copy)

    p = preview_recall_when(engine, MEMORY, [*old_phrases, PHRASE], QUERY, golden=subset,
                            now=PINNED_NOW, k=K)

    assert _tree_hashes(vault_copy) == before_files  # the real vault and index are untouched
    assert p.before.rank is None
    assert p.before.why is not None and not p.before.why.found
    assert p.after.rank is not None and p.after.rank <= K
    assert p.after.why is not None and p.after.why.found
    assert p.new_phrases == (*old_phrases, PHRASE) and p.old_phrases == old_phrases
    assert read_phrases(p.new_text) == p.new_phrases
    # golden figures: the fixed query goes from recall 0 to 1; nothing else gets worse
    assert p.golden_before.results[0].metrics["recall"] == 0.0
    assert p.golden_after.results[0].metrics["recall"] == 1.0
    assert p.golden_change.badges[0].badge == "better"
    assert p.golden_change.worse == 0
    assert p.golden_change.mean_deltas["recall"] > 0
    # the engine itself still ranks with the saved phrases
    assert engine.recall(QUERY, k=K, now=PINNED_NOW).hit(MEMORY) is None

    applied = apply_recall_when(engine, MEMORY, p.new_phrases, expected_hash=p.expected_hash)

    assert applied.edit.changed and applied.refresh.changed == (MEMORY,)
    assert applied.refresh.index.updated == 1 and applied.refresh.index.embedded == 1
    assert path.read_text(encoding="utf-8") == p.new_text  # what the preview showed is what was saved
    changed_files = {f for f, h in _tree_hashes(vault_copy).items()
                     if before_files.get(f) != h and not f.startswith(".recall/")}
    assert changed_files == {path.relative_to(vault_copy).as_posix()}
    trace = engine.recall(QUERY, k=K, now=PINNED_NOW)
    hit = trace.hit(MEMORY)
    assert hit is not None and hit.rank == p.after.rank
    assert hit.score == pytest.approx(p.after.score)
    assert [h.id for h in trace.hits] == list(p.after.hits)


def test_apply_refuses_when_the_file_changed_since_the_preview(engine, vault_copy):
    m = engine.vault.get(MEMORY)
    p = preview_recall_when(engine, MEMORY, [PHRASE], QUERY, now=PINNED_NOW, k=K)
    path = vault_copy / m.path
    path.write_text(path.read_text(encoding="utf-8") + "\nEdited elsewhere.\n", encoding="utf-8")
    on_disk = path.read_bytes()
    with pytest.raises(EditConflict) as err:
        apply_recall_when(engine, MEMORY, [PHRASE], expected_hash=p.expected_hash)
    assert path.read_bytes() == on_disk
    assert "Edited elsewhere." in err.value.disk_text


def test_preview_of_an_unknown_memory_is_a_clear_error(engine):
    with pytest.raises(KeyError, match="no-such-memory"):
        preview_recall_when(engine, "no-such-memory", ["x"], QUERY, now=PINNED_NOW)

"""The fast paths of the index and the keyword stage give exactly what the slow, reference
paths give: the in-memory bm25 against FTS5's own `bm25()` (porter and trigram tables, both
trigram columns, before and after an incremental update), the numpy kNN against sqlite-vec's
kNN over the same stored vectors, and the keyword stage's partial ranking against a full sort.
Run on a copy of the sample vault with its real index (local embedder vectors)."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from recall_tui.engine import Engine
from recall_tui.engine.config import load_preset
from recall_tui.engine.stages.keyword import field_weights
from recall_tui.engine.stages.parse import parse_query
from recall_tui.engine.trace import MatchedTerms
from recall_tui.index.embed import LocalEmbedder
from recall_tui.index.fts import match_any
from recall_tui.index.store import Index
from recall_tui.vault.reader import read_vault
from tests.conftest import PINNED_NOW


def _queries(root) -> list[str]:
    """The golden queries, each also with a typo, and some title words: real user text."""
    qs = [json.loads(line)["query"] for line in (root / "golden.jsonl").read_text().splitlines()
          if line.strip()]
    rng = random.Random(7)
    typos = []
    for q in qs:
        if len(q) > 4:
            i = rng.randrange(1, len(q) - 1)
            typos.append(q[:i] + q[i + 1] + q[i] + q[i + 2:])
    return qs + typos + ["the and of", "running runs run", "café zürich", "x", "postgress upgrde"]


@pytest.fixture(scope="module")
def opened(session_vault_copy):
    vault = read_vault(session_vault_copy)
    idx = Index.open(vault, LocalEmbedder())
    yield session_vault_copy, vault, idx
    idx.close()


def _fts_pairs(idx: Index, queries: list[str], limit: int):
    cfg = load_preset("default")
    for q in queries:
        words = list(parse_query(q, cfg).words)
        if not words:
            continue
        fast = idx.fts_any(words, limit)
        ref = idx.fts(match_any(words), limit)
        yield q, fast, ref


@pytest.mark.parametrize("limit", [1, 10, 50, 1000])
def test_porter_bm25_in_memory_equals_fts5(opened, limit):
    root, _, idx = opened
    n = 0
    for q, fast, ref in _fts_pairs(idx, _queries(root), limit):
        assert fast == ref, q  # same ids, same order, the same doubles
        n += bool(ref)
    assert n > 30  # most queries matched something: the comparison was not vacuous


@pytest.mark.parametrize("column", ["content", "original"])
@pytest.mark.parametrize("limit", [10, 1000])
def test_trigram_bm25_in_memory_equals_fts5(opened, column, limit):
    root, _, idx = opened
    matched = 0
    for q in _queries(root):
        fast = idx.fts_trigram(q, limit, column=column)
        assert fast == idx.fts_trigram_sql(q, limit, column=column), q
        matched += bool(fast)
    assert matched > 10


def test_a_phrase_of_two_tokens_falls_back_to_fts5(opened):
    _, _, idx = opened
    # "e-mail" is two porter tokens ("e" "mail" as a phrase): the in-memory path cannot
    # score a phrase, so the SQL path answers, with its own result.
    assert idx.fts_any(["e-mail", "billing"], 20) == idx.fts('"e-mail" OR "billing"', 20)


def test_in_memory_bm25_follows_an_incremental_update(vault_copy):
    vault = read_vault(vault_copy)
    idx = Index.open(vault, LocalEmbedder())
    try:
        before = idx.fts_trigram("postgres upgrade", 50)
        assert before == idx.fts_trigram_sql("postgres upgrade", 50)
        # Edit one memory and delete another: rows are deleted and re-inserted (tombstones
        # in the contentless FTS5 tables), and the totals and lengths change.
        paths = sorted(vault_copy / m.path for m in vault.memories.values())
        edited = paths[3]
        text = edited.read_text(encoding="utf-8")
        end = text.index("\n---\n", 4) + 5  # just after the frontmatter
        edited.write_text(text[:end] + "Postgres upgrade notes.\n" + text[end:],
                          encoding="utf-8")
        paths[5].unlink()
        vault2 = read_vault(vault_copy)
        rep = idx.update_files(vault2)
        assert rep.updated >= 1 and rep.removed >= 1
        for q in _queries(vault_copy)[:60] + ["postgres upgrade"]:
            assert idx.fts_trigram(q, 50) == idx.fts_trigram_sql(q, 50), q
            words = list(parse_query(q, load_preset("default")).words)
            if words:
                assert idx.fts_any(words, 50) == idx.fts(match_any(words), 50), q
        assert idx.fts_trigram("postgres upgrade", 50) != before  # the update was seen
    finally:
        idx.close()


@pytest.mark.parametrize("k", [1, 10, 40, 100000])
def test_numpy_knn_equals_sqlite_vec(opened, k):
    _, _, idx = opened
    ids, mat = idx.vectors()
    assert len(ids) > 100
    rng = np.random.default_rng(0)
    queries = [mat[i] for i in range(0, len(ids), 7)]  # each memory's own vector: exact ties at 1
    for _ in range(20):
        v = rng.standard_normal(mat.shape[1]).astype(np.float32)
        queries.append(v / np.linalg.norm(v))
    for i in range(10):  # between two memories: near-ties among the top
        v = mat[i] + mat[i + 1]
        queries.append((v / np.linalg.norm(v)).astype(np.float32))
    for q in queries:
        assert idx.vector_search(q, k) == idx.vector_search_sqlite(q, k)


def test_numpy_knn_rejects_a_foreign_dimension(opened):
    _, _, idx = opened
    with pytest.raises(ValueError, match="dimension"):
        idx.vector_search(np.ones(7, dtype=np.float32), 5)


def test_keyword_partial_ranking_equals_the_full_sort(opened):
    root, vault, idx = opened
    cfg = load_preset("default")
    engine = Engine(vault, idx, cfg)
    kidx = engine.keyword_index(cfg)
    weights = field_weights(cfg)
    for q in _queries(root):
        terms = parse_query(q, cfg).terms
        if not terms:
            continue
        res = kidx.search(terms, weights)
        full = kidx.ranked(res).tolist()
        for limit in (0, 1, 5, 50, len(full) + 3):
            assert kidx.ranked(res, limit).tolist() == full[:limit], (q, limit)
        scores = kidx.scores_of(res)
        assert len(scores) == len(full)
        assert dict(scores) == {kidx.ids[d]: float(res.total[d]) for d in full}


def test_recall_scores_do_not_depend_on_the_fast_paths(opened, monkeypatch):
    """Whole recalls with the fast paths and with the reference paths forced: same traces."""
    root, vault, idx = opened
    cfg = load_preset("default")
    queries = _queries(root)[:40]

    def run() -> list:
        engine = Engine(vault, idx, cfg)
        out = []
        for q in queries:
            t = engine.recall(q, now=PINNED_NOW)
            out.append([(h.id, h.score) for h in t.hits])
            out.append([(s.name, [(c.id, c.score, c.rank) for c in s.candidates])
                        for s in t.stages])
        return out

    fast = run()
    monkeypatch.setattr(Index, "vector_search", Index.vector_search_sqlite)
    monkeypatch.setattr(Index, "fts_trigram", Index.fts_trigram_sql)
    monkeypatch.setattr(Index, "fts_any",
                        lambda self, words, limit, weights=None:
                        self.fts(match_any(words), limit, weights))
    assert run() == fast


def test_too_many_unseen_postings_go_to_fts5(opened, monkeypatch):
    """Above FTS_COLD_MAX postings of unseen terms a query is answered by FTS5 (same rows),
    and nothing is loaded for it."""
    import recall_tui.index.fts as index_mod

    _, _, idx = opened
    monkeypatch.setattr(index_mod, "FTS_COLD_MAX", 0)
    with idx.core.lock:
        idx.core.invalidate()
    q = "postgres upgrade"
    assert idx.fts_trigram(q, 20) == idx.fts_trigram_sql(q, 20) != []
    assert idx.keyword.replicas["memories_trigram"]._held == 0
    monkeypatch.setattr(index_mod, "FTS_COLD_MAX", 10**9)
    assert idx.fts_trigram(q, 20) == idx.fts_trigram_sql(q, 20)
    assert idx.keyword.replicas["memories_trigram"]._held > 0


def test_best_evidence_equals_visiting_every_memory(opened):
    """The floor's probe calibration takes each probe's best evidence over every memory at
    once (term masks and one vectorised V); it must be the very number the per-memory
    `evidence` maximum gives, with vectors, with some, without them, without a vector scale,
    and for typos (one-edit corrections), on the golden queries and the probes."""
    from recall_tui.engine import calibration as cal_mod
    from recall_tui.engine.text import analyze
    from recall_tui.engine.text import words as text_words

    root, vault, idx = opened
    engine = Engine(vault, idx, load_preset("default", root))
    cal = cal_mod.for_engine(engine)
    vecs = engine.memory_vectors()
    ids = [i for i in vecs if i in cal.terms]
    mat = np.stack([vecs[i] for i in ids])
    flat = cal_mod.Calibration(cal.memories, cal.doc_freq, cal.terms, None, None)
    some = ids[: len(ids) // 2]
    checked = 0
    for text in [*_queries(root), *cal_mod.PROBES]:
        words = list(dict.fromkeys(text_words(text)))
        qt = cal_mod.query_terms(cal, tuple(analyze(text)), tuple(words),
                                 cal_mod.one_edit_corrections(engine, words))
        sims = dict(zip(ids, (mat @ idx.embed_query(text)).tolist(), strict=True))
        for c, sub in ((cal, sims), (cal, {i: sims[i] for i in some}), (cal, {}),
                       (flat, sims)):
            want = max((cal_mod.evidence(c, qt, mid, sub.get(mid)).value for mid in c.terms),
                       default=0.0)
            assert cal_mod.best_evidence(c, qt, sub) == want, text
            checked += 1
    assert checked > 100
    assert 0 < cal_mod.quantile(cal_mod.probe_bests(engine), 0.5)


@pytest.mark.parametrize("seed", range(6))
def test_turn_order_by_partition_equals_the_full_stable_sort(seed):
    """The turn channel sorts only the turns it can take (a partial sort, every tie at the cut
    kept); what it takes must be what the full stable sort of every turn gives, ties (many,
    here: rounded similarities) and turns the vault no longer holds included."""
    from recall_tui.engine.stages.turns import _take
    from recall_tui.engine.topk import best_first
    from recall_tui.vault.model import Turn

    rng = np.random.default_rng(seed)
    n = 5000
    sims = np.round(rng.uniform(-1, 1, n), 2).astype(np.float32)  # ties everywhere
    ids = [f"turn:s{i % 7}#{i}" for i in range(n)]
    held = {tid: Turn(f"s{i % 7}", i, "user", "x", None, "sessions/s.jsonl", i)
            for i, tid in enumerate(ids) if rng.random() > (0.9 if seed % 2 else 0.05)}
    full = np.argsort(-sims, kind="stable")
    for threshold in (-2.0, 0.0, 0.5, 0.99):
        for limit in (1, 5, 20):
            for session in (None, "s3"):
                margin = None if session else 4 * limit + 16
                order = best_first(sims, sims >= threshold, margin)
                want = _take(full, sims, ids, held, limit, threshold, session)
                got = _take(order, sims, ids, held, limit, threshold, session)
                if margin is not None and len(got) < limit and len(order) == margin:
                    got = _take(best_first(sims, sims >= threshold, None), sims, ids, held,
                                limit, threshold, session)
                assert got == want, (threshold, limit, session)
                # and the shared helper's first entries are the full stable sort's
                eligible = sims >= threshold
                assert best_first(sims, eligible, limit).tolist() == \
                    [i for i in full.tolist() if eligible[i]][:limit]


def test_keyword_matched_terms_by_mask_equal_the_per_document_lists(opened):
    """The keyword stage builds each candidate's matched terms and note once per pattern of
    matches (`matched_masks`); they must be what the per-document lists give, field order,
    term order and weights included, and the stage must fall back to those lists when a
    query has more distinct terms than a mask holds."""
    from recall_tui.engine.stages import keyword as kw

    root, vault, idx = opened
    cfg = load_preset("default")
    engine = Engine(vault, idx, cfg)
    kidx = engine.keyword_index(cfg)
    weights = field_weights(cfg)
    long_query = " ".join(f"word{i}" for i in range(70)) + " postgres upgrade"
    checked = 0
    for q in [*_queries(root), long_query]:
        parsed = parse_query(q, cfg)
        if not parsed.terms:
            continue
        top = kidx.ranked(kidx.search(parsed.terms, weights), 50).tolist()
        want = [kw._written(tuple(MatchedTerms(f, tuple(parsed.term_words.get(t, t)
                                                           for t in ts), weights[f])
                                  for f, ts in per.items()))
                for per in kidx.matched_terms(top, parsed.terms, weights)]
        assert kw._matched(kidx, top, parsed.terms, parsed.term_words, weights) == want, q
        checked += len(top)
    assert kidx.matched_masks([0], tuple(long_query.split()), weights) is None
    assert checked > 500


def test_boost_factors_written_on_demand_equal_compute(opened):
    """The boosts stage multiplies every candidate's factor values and writes the reasons
    for the memories whose factors are read (the hits): every candidate's factors, read
    from the stage's mapping, must be `compute`'s, and its boosted score `apply`'s, with
    every boost on and the context boost matching."""
    from datetime import timedelta

    from recall_tui.engine.stages import boosts
    from recall_tui.engine.state import Filters, ParsedQuery, RecallState

    root, vault, idx = opened
    cfg = load_preset("default")
    for name in ("staleness", "recency", "trust", "credibility", "tier", "emotion", "recall",
                 "relevance", "spacing", "context", "cross_channel"):
        cfg = cfg.with_value(f"boosts.{name}.enabled", True)
    engine = Engine(vault, idx, cfg)
    ids = sorted(vault.memories)
    some = next(iter(vault.memories.values()))
    for now in (PINNED_NOW, PINNED_NOW - timedelta(days=4000)):  # the second dates some after now
        st = RecallState(ParsedQuery("q", "q", (), ()), cfg, 10, now, None,
                         Filters(context_topic=some.topic_path[:3] or None), None, (), "lean")
        st.order = list(ids)
        st.score = {mid: 1.0 + i / 7 for i, mid in enumerate(ids)}
        st.vector_ran = True
        before = dict(st.score)
        boosts.run(engine, st)
        t = st.now
        for mid in ids:
            rs = idx.recall_stats(mid)
            ctx = boosts.BoostContext(t, frozenset(), True, int(rs.count), tuple(rs.times),
                                      t.hour, t.weekday(), st.filters.context_topic)
            want, label = boosts.compute(vault.memories[mid], cfg.boosts, ctx)
            assert st.boosts[mid] == tuple(want) and st.staleness[mid] == label
            assert st.boosted[mid] == boosts.apply(before[mid], want)
        assert list(st.boosts) == ids and "no-such-id" not in st.boosts


def test_the_shared_tie_break_sort_equals_sorting_by_timestamp(opened):
    """fuse, hops, boosts and the turn stages order by `topk.by_score`, which keeps each
    memory's `-updated.timestamp()` per vault: the order must be the per-key sort's, ties on
    the score (many here) and on `updated` included."""
    from recall_tui.engine.topk import by_score

    _, vault, idx = opened
    engine = Engine(vault, idx, load_preset("default"))
    rng = random.Random(3)
    ids = sorted(vault.memories)
    for _ in range(20):
        some = rng.sample(ids, min(len(ids), 60))
        score = {mid: float(rng.choice((0.5, 1.0, rng.random()))) for mid in some}
        want = sorted(score, key=lambda mid: (-score[mid],
                                              -vault.memories[mid].updated.timestamp(), mid))
        assert by_score(engine, score, score) == want


def test_settle_heap_freezes_only_a_large_vault(opened, monkeypatch):
    """`settle_heap` (the service's and the bench's gc.freeze) leaves a small vault's process
    as it is and freezes the heap from FREEZE_MIN_MEMORIES on."""
    import gc

    from recall_tui.engine import pipeline

    _, vault, _ = opened
    gc.unfreeze()
    try:
        assert len(vault.memories) < pipeline.FREEZE_MIN_MEMORIES
        assert pipeline.settle_heap(vault) is False and gc.get_freeze_count() == 0
        monkeypatch.setattr(pipeline, "FREEZE_MIN_MEMORIES", len(vault.memories))
        assert pipeline.settle_heap(vault) is True and gc.get_freeze_count() > 1000
    finally:
        gc.unfreeze()


def test_sequential_dots_by_rows_equal_the_running_sum():
    """The vector stage's exact re-score sums each candidate's products in float32, left to
    right, as sqlite-vec does (`_seq_sum_f32`, a cumsum); `_seq_dots_f32` adds them one
    dimension after another with `add.reduce` over axis 0: the same bits for every shape
    (one row, one dimension and none included) and scale."""
    from recall_tui.index.vectors import _seq_dots_f32, _seq_sum_f32

    rng = np.random.default_rng(5)
    for _ in range(400):
        rows = int(rng.integers(0, 200))
        dim = int(rng.choice([0, 1, 2, 7, 8, 9, 128, 129, 384]))
        mat = (rng.standard_normal((rows, dim)) * rng.choice([1e-4, 1.0, 1e4])).astype(np.float32)
        q = rng.standard_normal(dim).astype(np.float32)
        want = _seq_sum_f32(mat * q)
        got = _seq_dots_f32(mat, q)
        assert got.dtype == want.dtype and np.array_equal(got, want), (rows, dim)


def test_hop2_rarest_by_merged_seed_lists_equals_rarest_over_the_union(opened):
    """hop2 keeps each seed's pickable body terms sorted by rarity and merges the seeds'
    lists (`merged_rarest`): the terms must be `rarest`'s over the union of the seeds'
    terms, for any seeds, exclusions (query terms, speaker names) and count."""
    from recall_tui.engine.stages import hop2

    _, vault, idx = opened
    cfg = load_preset("default")
    engine = Engine(vault, idx, cfg)
    kidx = engine.keyword_index(cfg)
    body = kidx.fields["body"]
    stem, stop = cfg.parse.stem, cfg.parse.stop_words
    rng = random.Random(11)
    ids = sorted(vault.memories)
    for _ in range(150):
        seeds = rng.sample(ids, rng.randint(1, 6))
        seen = set().union(*(hop2.body_terms(engine, s, stem=stem, stop_words=stop)
                             for s in seeds))
        exclude = set(rng.sample(sorted(seen), min(len(seen), rng.randint(0, 8))))
        df = {t: body.span[t][1] - body.span[t][0] for t in seen if t in body.span}
        lists = [hop2.rare_terms(engine, kidx, "k", s, stem=stem, stop_words=stop)
                 for s in seeds]
        for n in (1, 3, 6, 40):
            assert hop2.merged_rarest(lists, exclude, n) == \
                hop2.rarest(seen, exclude, body.idf, df, n), (seeds, n)


def test_a_recall_leaves_no_cyclic_garbage(opened):
    """A recall's state is freed by reference counting when its trace and cache entry go: no
    stage keeps a closure over the `RecallState` on the state itself (such a cycle made every
    recall's ~600 objects wait for the cyclic collector: its young passes promoted them and
    a generation-1 pass cost ~5 ms at 10k memories). Every preset, `why` questions, both
    verbosities."""
    import gc

    root, vault, idx = opened
    queries = _queries(root)[:8]
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        for preset in ("default", "abmind", "bastra", "memoria", "memoryvault", "memoturn"):
            engine = Engine(vault, idx, load_preset(preset))
            for i, q in enumerate(queries):
                engine.clear_cache()
                trace = engine.recall(q, now=PINNED_NOW, why=sorted(vault.memories)[:2],
                                      verbosity=("lean", "full")[i % 2])
                assert trace.stages
            engine.clear_cache()
            del engine, trace
            gc.collect()
            ours = [type(o).__qualname__ for o in gc.garbage
                    if type(o).__module__.startswith("recall_tui.engine")]
            assert not ours, (preset, sorted(set(ours)))
            gc.garbage.clear()
    finally:
        gc.set_debug(0)
        gc.garbage.clear()


@pytest.mark.parametrize("cls_name,args", [
    ("Candidate", ("m1", 0.5, 3)), ("Candidate", ("m1", 0.5, 3, "cos 0.500")),
    ("Dropped", ("m1", "floor")),
    ("ChannelScore", ("vector", 0.81, 2)), ("ChannelScore", ("keyword", 7.5, 1, 0.4, 0.0066)),
    ("HopInfo", ("m2", "follows", 0.8, 0.7)),
])
def test_trace_records_with_their_own_init_equal_the_dataclass_init(cls_name, args):
    """Candidate, Dropped, ChannelScore and HopInfo set their fields straight into the
    instance dict (made per candidate per recall); each must equal what the frozen
    dataclass's generated `__init__` makes: the same fields and defaults, equality, hash,
    repr, `replace`, still frozen."""
    import dataclasses

    from recall_tui.engine import trace

    cls = getattr(trace, cls_name)
    fields = dataclasses.fields(cls)
    ref_cls = dataclasses.make_dataclass(
        "Ref", [(f.name, f.type, f.default) if f.default is not dataclasses.MISSING
                else (f.name, f.type) for f in fields], frozen=True)
    got, ref = cls(*args), ref_cls(*args)
    assert dataclasses.astuple(got) == dataclasses.astuple(ref)
    assert got == cls(**{f.name: getattr(ref, f.name) for f in fields})
    assert hash(got) == hash(cls(*args)) and repr(got) == repr(ref).replace("Ref", cls_name, 1)
    assert dataclasses.replace(got, **{fields[0].name: "other"}) != got
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(got, fields[0].name, "x")


def _postings_by_rows(conn, rep, term, column, weights):
    """A term's contributions the way `_load` made them before: a row per (doc, column)."""
    import math

    from recall_tui.index.fts import FTS5_K1

    col_w = dict(zip(rep.columns, weights or (1.0,) * len(rep.columns), strict=True))
    sql = (f"SELECT doc, col, count(*) FROM temp.{rep.table}_vocab_instance WHERE term = ?"
           + (" AND col = ?" if column else "") + " GROUP BY doc, col ORDER BY doc")
    docs: list[int] = []
    freqs: list[float] = []
    for doc, col, count in conn.execute(sql, [term] + ([column] if column else [])):
        if docs and docs[-1] == doc:
            freqs[-1] += count * col_w[col]
        else:
            docs.append(doc)
            freqs.append(count * col_w[col])
    pos = np.searchsorted(rep.rowids, np.array(docs, dtype=np.int64)).astype(np.int32)
    idf = math.log((rep.nrow - len(docs) + 0.5) / (len(docs) + 0.5))
    idf = idf if idf > 0 else 1e-6
    f = np.array(freqs, dtype=np.float64)
    return pos, idf * ((f * (FTS5_K1 + 1.0)) / (f + rep._norm[pos]))


def test_postings_loaded_from_one_text_equal_the_rows_per_doc_and_column(opened):
    """`Bm25Replica._load` parses a term's instances from one `group_concat` text: for every
    term of the porter table (default weights and other whole weights) and of the original
    trigram column, the same positions and the very same doubles as a row per (doc, column)."""
    from recall_tui.index.fts import DEFAULT_FTS_WEIGHTS, FTS_COLUMNS

    _, _, idx = opened
    idx.fts_any(["billing"], 5)
    idx.fts_trigram("billing", 5, column="original")
    default = tuple(float(DEFAULT_FTS_WEIGHTS[c]) for c in FTS_COLUMNS)
    odd = (1.0, 7.0, 2.0, 1.0, 3.0, 1.0, 5.0)
    checked = 0
    for table, column, weights in (("memories_fts", None, default), ("memories_fts", None, odd),
                                   ("memories_original", "original", None)):
        rep = idx.keyword.replicas[table]
        assert rep is not None
        with idx.core.lock:
            terms = [t for (t,) in idx.core.conn.execute(
                f"SELECT term FROM temp.{table}_vocab_row")]
            assert terms
            rep._postings.clear()
            rep._held = 0
            rep.hold(terms, column, weights)
            for t in terms:
                pos, contrib = rep._postings[(t, column, weights)]
                ref_pos, ref = _postings_by_rows(idx.core.conn, rep, t, column, weights)
                assert pos.tolist() == ref_pos.tolist(), t
                assert contrib.tolist() == ref.tolist(), t
                checked += 1
    assert checked > 500


def test_warmed_postings_answer_like_fts5(opened):
    """`FtsSearch.warm` loads the most frequent words' postings (within its budget, most
    frequent first); the answers after it are FTS5's."""
    root, _, idx = opened
    idx.keyword.reset()
    assert idx.keyword.warm(postings=0) == 0
    loaded = idx.keyword.warm(postings=2000)
    rep = idx.keyword.replicas["memories_fts"]
    assert rep is not None and 0 < loaded and 0 < rep._held <= 2000
    with idx.core.lock:
        top = [t for (t,) in idx.core.conn.execute(
            "SELECT term FROM temp.memories_fts_vocab_row ORDER BY doc DESC, term LIMIT ?",
            (loaded,))]
    assert {k[0] for k in rep._postings} == set(top)
    for _q, fast, ref in _fts_pairs(idx, _queries(root), 20):
        assert fast == ref


@pytest.mark.parametrize("sizes", [(3, 4), (900, 800, 5), (0, 60)])
def test_calibration_postings_union_equals_unique(sizes):
    """The calibration's union of a term's field postings (a mask when they are many) is
    `np.unique` of them, dtype kept."""
    from recall_tui.engine.calibration import KeywordTermSets

    rng = np.random.default_rng(len(sizes))
    sets = KeywordTermSets.__new__(KeywordTermSets)
    sets.ids = [f"m{i}" for i in range(1000)]
    parts = [np.sort(rng.choice(1000, n, replace=False)).astype(np.int32) for n in sizes]
    got = sets._union(parts)
    want = np.unique(np.concatenate(parts))
    assert got.dtype == want.dtype and got.tolist() == want.tolist()


def _field_state(f) -> tuple:
    return (list(f.idf.items()), list(f.span.items()), f.n, f.avgdl, f.post_docs.dtype,
            f.post_tf.dtype, f.post_docs.tolist(), f.post_tf.tolist(), f.doc_len.tolist(),
            f._norm.tolist())


def test_keyword_index_from_its_kept_postings_equals_a_build(opened, tmp_path):
    """`kwstore` writes a build's analysed postings and reads them back: the index made from
    them (under other k1 / b / epsilon too) is the built one, bit for bit; another key, a
    document count that differs or a damaged file give None (build again)."""
    from recall_tui.engine import kwstore
    from recall_tui.engine.bm25 import FIELDS, KeywordIndex

    _root, vault, _idx = opened
    mems = list(vault.memories.values())
    built = KeywordIndex(mems)
    target = tmp_path / "kw"
    key = kwstore.store_key("fp", mems, True, True)
    assert key != kwstore.store_key("fp2", mems, True, True)
    assert key != kwstore.store_key("fp", mems, True, False)
    assert kwstore.save(target, key, {n: f.parts() for n, f in built.fields.items()})
    assert kwstore.load(target, b"x" * 32, len(mems)) is None
    assert kwstore.load(target, key, len(mems) + 1) is None
    parts = kwstore.load(target, key, len(mems))
    assert parts is not None
    for k1, b, eps in ((1.5, 0.75, 0.25), (1.2, 0.3, 0.5)):
        ref = built if k1 == 1.5 else KeywordIndex(mems, k1=k1, b=b, epsilon=eps)
        back = KeywordIndex(mems, k1=k1, b=b, epsilon=eps, parts=parts)
        for name in FIELDS:
            assert _field_state(back.fields[name]) == _field_state(ref.fields[name]), name
        w = {name: 1.0 for name in FIELDS}
        for q in ("postgres upgrade", "backup restic", "the and of"):
            terms = parse_query(q, load_preset("default")).terms
            a, c = ref.search(terms, w), back.search(terms, w)
            assert a.total.tolist() == c.total.tolist()
            assert ref.ranked(a).tolist() == back.ranked(c).tolist()
    data = bytearray(target.read_bytes())
    target.write_bytes(bytes(data[: len(data) // 2]))  # cut short
    assert kwstore.load(target, key, len(mems)) is None


def test_an_engine_reading_kept_keyword_postings_recalls_as_one_that_built_them(
        opened, monkeypatch):
    """Engine over the index with the keyword postings built (no file) and read back from
    the file an earlier engine wrote beside the index: the same hits and stage candidates."""
    from recall_tui.engine import kwstore

    root, vault, idx = opened
    queries = _queries(root)[:30]
    loads: list[bool] = []
    real_load = kwstore.load

    def spy(*a, **kw):
        got = real_load(*a, **kw)
        loads.append(got is not None)
        return got

    def run(cfg) -> list:
        engine = Engine(vault, idx, cfg)
        out = []
        for q in queries:
            t = engine.recall(q, now=PINNED_NOW)
            out.append([(h.id, h.score, h.explain.matched_terms) for h in t.hits])
            out.append([(s.name, [(c.id, c.score, c.rank) for c in s.candidates])
                        for s in t.stages])
        return out

    for cfg in (load_preset("default"), load_preset("bastra").with_value("parse.stem", False)):
        with monkeypatch.context() as m:
            m.setattr(kwstore, "store_path", lambda *a: None)
            built = run(cfg)
        Engine(vault, idx, cfg)  # writes the file when none is there yet
        monkeypatch.setattr(kwstore, "load", spy)
        assert run(cfg) == built
        assert loads and loads[-1]
        monkeypatch.setattr(kwstore, "load", real_load)


def test_kept_probe_bests_equal_computed_ones_and_follow_the_vectors(opened, monkeypatch):
    """The probes' best evidence kept beside the index (`calibration._kept_bests_at`) is the
    computed one, exactly; a matrix with one value changed has another key (computed again)."""
    from recall_tui.engine import calibration

    _root, vault, idx = opened
    cfg = load_preset("default")
    with monkeypatch.context() as m:
        m.setattr(calibration, "_kept_bests_at", lambda engine: None)
        computed = calibration.probe_bests(Engine(vault, idx, cfg))
    first = Engine(vault, idx, cfg)
    assert calibration.probe_bests(first) == computed  # computed (or read) and kept
    again = Engine(vault, idx, cfg)
    again.memory_vectors()
    at = calibration._kept_bests_at(again)
    assert at is not None and calibration._load_bests(*at) == computed
    assert calibration.probe_bests(again) == computed
    ids, mat = again._derived["vector_matrix"]
    changed = mat.copy()
    changed[0, 0] += 1e-3
    again._derived["vector_matrix"] = (ids, changed)
    assert calibration._kept_bests_at(again)[1] != at[1]

"""The side-by-side tab's query-set view: every query of a set under A and B, one row each.

The set is the judged queries the golden tab scores (`TuningPane.queries_file`), or the query
set of a snapshot file loaded with `L` (then A is that snapshot, frozen, and B is re-run at its
k and clock, as `recall-tui diff S1` does). Each side is frozen with
`recall_tui.tuning.snapshot.take` in a thread worker (progress on screen, escape cancels) and the
two are compared by `recall_tui.tuning.snapshot.diff`: the table shows that diff's figures and
computes none. The foot names both sides' preset and configuration hash, k, clock and the
queries file with its hash, so every figure can be traced; `ctrl+e` writes the diff as
`recall-tui diff --json` prints it, beside the two snapshots it compares.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static
from textual.worker import get_current_worker

from recall_tui.tui.safe import lit
from recall_tui.tui.widgets.table import VimTable
from recall_tui.tuning import snapshot as S

if TYPE_CHECKING:
    from recall_tui.tui.panes.tuning.side import SideTab

#: A query's diff verdict (B against A) as the set view names it.
VERDICT = {"better": ("win", "bold green"), "worse": ("loss", "bold red"),
           "same": ("tie", "dim"), "unjudged": ("—", "dim")}
SUMMARY_KEY = "@summary"
#: Rank moves shown per query (the largest first).
MOVES_SHOWN = 2


@dataclass(frozen=True)
class SetRun:
    """A query set under A and B, and how `snapshot.diff` compares them."""

    a: S.Snapshot
    b: S.Snapshot
    diff: S.SnapshotDiff
    source: str
    """What the set was read from: the queries file, or the snapshot file of A."""


def _f(x: float | None) -> str:
    return "—" if x is None else f"{x:.3f}"


def biggest_moves(q: S.QueryDiff, n: int = MOVES_SHOWN) -> str:
    """The `n` largest rank moves of `q.moved` (as `snapshot.diff` gives them): `id 5→1`."""
    moved = sorted(q.moved, key=lambda m: -abs(m[1] - m[2]))[:n]
    return ", ".join(f"{i} {ra}→{rb}" for i, ra, rb in moved)


class SetView(Vertical):
    """The set's rows (a summary row first), the run's progress and what the figures are of."""

    DEFAULT_CSS = """
    SetView { height: 1fr; }
    #side-set-head, #side-set-foot { height: auto; padding: 0 1; }
    #side-set-table { height: 1fr; }
    """

    def __init__(self, tab: SideTab) -> None:
        super().__init__(id="side-set")
        self.tab = tab
        self.run: SetRun | None = None
        """The set last compared (None: not run yet, or the run failed)."""
        self.busy = False
        self.error: str | None = None
        self.snapshot: S.Snapshot | None = None
        """A, when a snapshot file is loaded (`L`); None: A is the A choice, run live."""
        self.snapshot_path: Path | None = None
        self.exported: Path | None = None
        """The last file `ctrl+e` wrote."""
        self._key: tuple[Any, ...] | None = None
        self._cache: dict[tuple[Any, ...], S.Snapshot] = {}

    def compose(self) -> ComposeResult:
        yield Static(id="side-set-head")
        yield VimTable(id="side-set-table", flex=("query", "gained", "lost", "moves"),
                       fair=True)
        yield Static(id="side-set-foot")

    def on_mount(self) -> None:
        t = self.query_one("#side-set-table", VimTable)
        for label, key in (("line", "line"), ("B vs A", "verdict"), ("Jaccard", "jaccard"),
                           ("RBO", "rbo"), ("query", "query"), ("gained", "gained"),
                           ("lost", "lost"), ("biggest moves", "moves")):
            t.add_column(label, key=key)

    # --- running the set --------------------------------------------------------------------

    def refresh_set(self, *, force: bool = False) -> None:
        """Run the set under the choices on screen unless nothing it depends on changed."""
        pane = self.tab.pane
        app = pane.recall_app
        if app.engine is None or pane.config is None or pane.base is None:
            return
        engine = app.recalls.engine_for(app.request.preset)
        snap = self.snapshot
        try:
            if snap is not None:
                queries = S.query_set_of(snap)
                source, sha = str(self.snapshot_path), snap.queries_sha256
                k, now = snap.k, _parse_now(snap.now)
            else:
                path = pane.queries_file()
                queries = S.read_query_set(path)
                source, sha = str(path), S.file_sha256(path)
                k, now = pane.config.k, app.request.now
            cfg_a = None if snap is not None else self.tab.config_for(self.tab.side_name)
            cfg_b = self.tab.config_for(self.tab.side_b_name)
        except FileNotFoundError as exc:
            self._unusable(f"{exc.filename}: no such file (the golden tab's queries file; "
                           "load another there, or a snapshot with L)")
            return
        except (ValueError, OSError) as exc:  # GoldenError (file:line: reason), a bad preset
            self._unusable(str(exc))
            return
        if not queries:
            self._unusable(f"{source}: no queries in it")
            return
        key = (cfg_a.hash() if cfg_a is not None else id(snap), cfg_b.hash(), self.tab.side_name,
               self.tab.side_b_name, engine.fingerprint, sha, k, now)
        if key == self._key and not force and (self.run is not None or self.busy):
            return
        self._key = key
        self.busy, self.error = True, None
        self._head(Text(f"running {len(queries)} queries under A and B…", style="yellow"))
        names = (self.tab.side_label(self.tab.side_name), self.tab.side_label(self.tab.side_b_name))
        self._run_set(engine, queries, snap, cfg_a, cfg_b, names, k,
                      now or datetime.now(timezone.utc), source, sha, key)

    @work(thread=True, exclusive=True, group="side-set")
    def _run_set(self, engine: Any, queries: list[S.SetQuery], snap: S.Snapshot | None,
                 cfg_a: Any, cfg_b: Any, names: tuple[str, str], k: int, now: datetime,
                 source: str, sha: str, key: tuple[Any, ...]) -> None:
        from recall_tui.engine import Cancelled

        worker = get_current_worker()

        def cancel() -> bool:
            return worker.is_cancelled

        def side(label: str, cfg: Any, name: str) -> S.Snapshot:
            ck = (cfg.hash(), name, *key[4:])
            cached = self._cache.get(ck)
            if cached is not None:
                return cached

            def progress(done: int, total: int) -> None:
                if not worker.is_cancelled:
                    self.app.call_from_thread(self._progress, label, done, total)

            out = S.take(engine, queries, k=k, now=now, queries_file=source,
                         queries_sha256=sha, cancel=cancel, config=cfg, preset=name,
                         progress=progress)
            self._cache[ck] = out
            return out

        try:
            a = snap if snap is not None else side("A", cfg_a, names[0])
            b = side("B", cfg_b, names[1])
            d = S.diff(a, b)
        except Cancelled:
            return
        except Exception as exc:  # shown in the view: a bad preset must not kill the app
            self.app.call_from_thread(self._failed, f"{type(exc).__name__}: {exc}")
            return
        if not worker.is_cancelled:
            self.app.call_from_thread(self._done, SetRun(a, b, d, source))

    def _progress(self, side: str, done: int, total: int) -> None:
        if self.busy:
            self._head(Text(f"running the set under {side}: {done}/{total} queries "
                            "(escape cancels)", style="yellow"))

    def _done(self, run: SetRun) -> None:
        if len(self._cache) > 4:  # keep the latest few sides: A is re-used while B is tuned
            for ck in list(self._cache)[:-4]:
                del self._cache[ck]
        self.busy = False
        self.run = run
        self.draw()

    def _failed(self, error: str) -> None:
        self.busy = False
        self._key = None
        self._unusable(error)

    def _unusable(self, error: str) -> None:
        self.run, self.error = None, error
        self.draw()

    def cancel(self) -> None:
        """Stop the set's run (it stops before its next recall)."""
        self.workers.cancel_group(self, "side-set")
        self.busy = False
        self._key = None
        self._head(Text("the set's run was cancelled: s twice, or a knob change, runs it "
                        "again", style="yellow"))

    # --- drawing ------------------------------------------------------------------------------

    def _head(self, text: Text) -> None:
        self.query_one("#side-set-head", Static).update(text)

    def draw(self) -> None:
        table = self.query_one("#side-set-table", VimTable)
        foot = self.query_one("#side-set-foot", Static)
        row = table.cursor_row
        table.clear()
        run = self.run
        if run is None:
            self._head(Text(self.error, style="bold red") if self.error else
                       Text("the query set is not run yet", style="dim"))
            foot.update("")
            return
        d = run.diff
        s = d.summary()
        head = Text()
        head.append(f"A {d.a}  vs  B {d.b}, at k {d.k}\n", style="bold")
        head.append(f"{s['queries']} queries, {s['changed']} changed; B against A: "
                    f"{s['better']} wins, {s['worse']} losses, {s['same']} ties, "
                    f"{s['unjudged']} unjudged")
        if d.only_a or d.only_b:
            head.append(f"; not compared: {len(d.only_a)} only in A, {len(d.only_b)} only in B")
        for note in d.notes:
            head.append_text(lit(f"\nnote: {note}", "yellow"))
        self._head(head)
        table.add_row(Text("", style="bold"),
                      Text(f"W{s['better']} L{s['worse']} T{s['same']}", style="bold"),
                      Text(_f(s["mean_jaccard"]), style="bold"),
                      Text(_f(s["mean_rbo"]), style="bold"),
                      Text(f"all {s['queries']} (means)", style="bold"),
                      Text(f"{s['changed']} changed", style="bold"), Text(""), Text(""),
                      key=SUMMARY_KEY)
        for n, q in enumerate(d.queries):
            label, style = VERDICT.get(q.verdict, (q.verdict, ""))
            table.add_row(Text(str(q.line), justify="right"), Text(label, style=style),
                          Text(_f(q.jaccard), justify="right"), Text(_f(q.rbo), justify="right"),
                          lit(q.query, single_line=True),
                          lit(", ".join(q.gained), "green", single_line=True),
                          lit(", ".join(q.lost), "red", single_line=True),
                          lit(biggest_moves(q), single_line=True), key=f"q{n}")
        if table.row_count:
            table.move_cursor(row=min(max(row, 0), table.row_count - 1), animate=False)
        a, b = run.a, run.b
        app = self.tab.pane.recall_app
        root = Path(app.engine.vault.root if app.engine is not None else app.vault_path)
        source = Path(run.source)  # in the vault: its path there (the footer is reproducible)
        shown = source.relative_to(root) if source.is_relative_to(root) else source
        foot.update(lit(
            f"A {a.preset} config {a.config_hash[:12]} · B {b.preset} config "
            f"{b.config_hash[:12]} · k {d.k} · now {b.now} · set {shown} (sha256 "
            f"{(b.queries_sha256 or '-')[:12]}) · figures: tuning.snapshot.diff", "dim"))

    def query_diff(self, row_key: str | None) -> tuple[S.QueryDiff, S.Entry, S.Entry] | None:
        """The diff of the query on row `row_key`, and its A and B entries (None: no query)."""
        run = self.run
        if run is None or not row_key or not row_key.startswith("q"):
            return None
        q = run.diff.queries[int(row_key[1:])]
        ea = next(e for e in run.a.entries if e.query == q.query and e.line == q.line)
        eb = next(e for e in run.b.entries if e.key == ea.key)
        return q, ea, eb

    # --- a snapshot as A, and the export ------------------------------------------------------

    def load_snapshot(self, text: str) -> None:
        """Make the snapshot file at `text` side A (empty: back to the A choice). A path is
        relative to the working folder, else to the vault."""
        text = text.strip()
        if not text:
            self.snapshot = self.snapshot_path = None
            self.refresh_set(force=True)
            return
        path = Path(text).expanduser()
        if not path.is_absolute() and not path.exists():
            path = Path(self.tab.pane.recall_app.vault_path) / path
        try:
            self.snapshot = S.load(path)
        except S.SnapshotError as exc:
            self._unusable(str(exc))
            return
        self.snapshot_path = path
        self.refresh_set(force=True)

    def export(self) -> Path | None:
        """Write the diff on screen to `.recall/diff-STAMP.json` as `recall-tui diff --json`
        prints it, and the two snapshots it compares beside it (`-a.snapshot.json`,
        `-b.snapshot.json`: `recall-tui diff` on them prints the same JSON)."""
        from recall_tui.vault.edit import atomic_write

        run = self.run
        if run is None:
            return None
        folder = Path(self.tab.pane.recall_app.vault_path) / ".recall"
        folder.mkdir(parents=True, exist_ok=True)
        stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
        path = folder / f"diff-{stamp}.json"
        n = 1
        while path.exists():
            n += 1
            path = folder / f"diff-{stamp}-{n}.json"
        stem = path.name.removesuffix(".json")
        S.save(run.a, folder / f"{stem}-a.snapshot.json")
        S.save(run.b, folder / f"{stem}-b.snapshot.json")
        atomic_write(path, S.diff_json(run.diff).encode("utf-8"), 0o644)
        self.exported = path
        return path


def _parse_now(text: str) -> datetime | None:
    from recall_tui.tuning.metrics import parse_time

    return parse_time(text) if text else None

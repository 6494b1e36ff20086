"""Detail views: a hit's Explanation as a tree, and one stage's candidates and drops.

Both render trace fields as they are; numbers are formatted, never recomputed.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text

from recall_tui.engine.trace import Hit, StageRecord
from recall_tui.tui.safe import lit, one_line
from recall_tui.tui.widgets.table import SteadyBox, VimTable, VimTree
from recall_tui.vault.model import Vault


def _kv(key: str, value: object, style: str = "") -> Text:
    """`key: value` with the value literal (it may come from a memory)."""
    out = Text(f"{key}: ", style="bold")
    out.append_text(lit(value, style, single_line=True))
    return out


#: What an ExplanationTree shows before its first `show` (differs from any hit and None).
_NOTHING = object()


def _num(x: float | None, digits: int = 4) -> str:
    return "—" if x is None else f"{x:.{digits}f}"


class ExplanationTree(SteadyBox, VimTree):
    """The full story of one hit's score: channels, RRF, terms, hop, boosts, rerank, MMR."""

    _building = False
    """`show` is adding the nodes (see `refresh`)."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(Text("explanation"), id=id)
        self.show_root = True
        self.guide_depth = 2
        self._shown: object = _NOTHING

    def refresh(self, *regions: Any, repaint: bool = True, layout: bool = False,
                recompose: bool = False) -> ExplanationTree:
        """While `show` builds the tree, Tree asks for a layout of the whole screen on every
        node added. The box's size is set by the CSS, not by its nodes; what the nodes change
        is the tree's virtual size (its scrollbars), a reactive that asks for a layout itself
        when it changes (on the tree's next idle). So the build repaints the tree only."""
        if self._building:
            layout = False
        return super().refresh(*regions, repaint=repaint, layout=layout, recompose=recompose)

    def show(self, hit: Hit | None) -> None:
        """Rebuild the tree for `hit` (or an empty tree); nothing to do (no repaint, folds
        kept) when it shows an equal hit already."""
        if hit == self._shown:
            return
        self._shown = hit
        self._building = True
        try:
            self._build_for(hit)
        finally:
            self._building = False

    def _build_for(self, hit: Hit | None) -> None:
        self.clear()
        if hit is None:
            self.root.set_label(Text("select a hit to see why it ranked", style="dim"))
            return
        ex = hit.explain
        label = Text(f"#{hit.rank} ", style="bold")
        label.append_text(lit(hit.title, single_line=True))
        label.append("  ")  # outside lit(): its one-line folding strips the ends
        label.append_text(lit(hit.type, "dim cyan", single_line=True))
        label.append(f"  score {hit.score:.4f}", style="bold cyan")
        self.root.set_label(label)

        ch = self.root.add(Text(f"channels → fused {_num(ex.fused)}", style="bold"), expand=True)
        for c in ex.channels:
            ch.add_leaf(Text(
                f"{c.channel:<10} rank {c.rank:<3} raw {_num(c.raw)}  "
                f"w {c.weight:g}  contribution {_num(c.contribution, 5)}"))
        if not ex.channels and ex.hop is not None:
            ch.add_leaf(Text("found by no channel: a hop brought it in (see hop below)",
                             style="dim"))
        elif not ex.channels:
            ch.add_leaf(Text("no channel scores recorded", style="dim"))
        if ex.fusion:  # the engine's formula, with its k (older traces have none)
            rule, *rest = ex.fusion.split("; ")
            fz = ch.add(lit(rule, "cyan", single_line=True), expand=True)
            for part in rest:
                fz.add_leaf(lit(part, "cyan", single_line=True))

        if ex.matched_terms:
            mt = self.root.add(Text("matched terms", style="bold"), expand=True)
            for m in ex.matched_terms:
                t = Text(f"{m.field} (×{m.weight:g}): ")
                t.append_text(lit(", ".join(m.terms), "green", single_line=True))
                mt.add_leaf(t)

        if ex.hop is not None:
            hp = self.root.add(Text("hop", style="bold magenta"), expand=True)
            hp.add_leaf(_kv("from", ex.hop.from_id))
            hp.add_leaf(_kv("relation", ex.hop.relation))
            hp.add_leaf(Text(f"link score {_num(ex.hop.link_score, 3)}  factor "
                             f"{_num(ex.hop.factor, 3)}"))

        bs = self.root.add(Text(f"boosts → {_num(ex.boosted)}", style="bold"), expand=True)
        for b in ex.boosts:
            sign = "×" if b.mode == "mul" else "+"
            t = Text(f"{b.name:<14} {sign}{b.value:.3f}  ", style="yellow" if
                     (b.mode == "mul" and b.value < 1) else "")
            t.append_text(lit(b.reason, "dim", single_line=True))
            bs.add_leaf(t)
        if not ex.boosts:
            bs.add_leaf(Text("no boosts recorded", style="dim"))

        if ex.rerank is not None:
            self.root.add_leaf(Text(f"rerank: {_num(ex.rerank)}", style="bold"))

        if ex.mmr is not None:
            m = ex.mmr
            mm = self.root.add(Text(f"mmr pick {m.step}", style="bold"), expand=True)
            mm.add_leaf(Text(f"relevance {_num(m.relevance)}  penalty {_num(m.penalty)}  "
                             f"λ {m.lam:g}  mmr {_num(m.mmr)}"))
            if m.closest_id:
                mm.add_leaf(_kv("closest", m.closest_id))
            if m.runner_up:
                mm.add_leaf(_kv("runner-up", m.runner_up))

        final = self.root.add(Text(f"final: {_num(ex.final)}", style="bold cyan"), expand=True)
        if ex.scaling:  # the engine's scaling step, part by part (`; ` between parts)
            first, *rest = ex.scaling.split("; ")
            sc = final.add(lit(f"scale: {first}", "cyan", single_line=True), expand=True)
            for part in rest:
                sc.add_leaf(lit(part, "yellow" if part.startswith("over 100") else "dim",
                                single_line=True))
        else:
            final.add_leaf(Text("scale: not recorded in this trace", style="dim"))
        for note in ex.notes:
            self.root.add_leaf(lit(note, "dim", single_line=True))
        if hit.warnings:
            wn = self.root.add(Text("warnings", style="bold red"), expand=True)
            for w in hit.warnings:
                wn.add_leaf(lit(w, "red", single_line=True))
        self.root.expand()


class StageDetail(SteadyBox, VimTable):
    """One stage's candidates (id, title, raw score, rank, note) and what it dropped."""

    FLEX = ("id", "note", "title")
    _shown: object = None

    def on_mount(self) -> None:
        for label, key in (("rank", "rank"), ("id", "id"), ("title", "title"),
                           ("raw", "raw"), ("note", "note")):
            self.add_column(label, key=key)

    def on_data_table_row_selected(self, event: VimTable.RowSelected) -> None:
        """Enter on a candidate or a dropped row shows it in full (the whole reason)."""
        event.stop()
        self.action_full_row()

    def show(self, stage: StageRecord | None, vault: Vault | None) -> None:
        """Replace the rows with `stage`'s candidates followed by its dropped list (nothing to
        do when an equal stage of the same vault is shown already)."""
        if (stage, id(vault)) == self._shown:
            return
        self._shown = (stage, id(vault))
        self.clear()
        if stage is None:
            self.border_title = "stage"
            return
        self.border_title = f"stage {stage.name}: {len(stage.candidates)} candidates, " \
                            f"{len(stage.dropped)} dropped"
        info = "  ".join(f"{k}={one_line(v, 40)}" for k, v in stage.info)
        self.border_subtitle = lit(one_line(info, 80), single_line=True) if info else None
        for i, c in enumerate(stage.candidates):
            m = vault.get(c.id) if vault is not None else None
            self.add_row(Text(str(c.rank), justify="right"), lit(c.id, single_line=True),
                         lit(m.title if m else "", single_line=True),
                         Text(f"{c.score:.4f}", justify="right"),
                         lit(c.note, "dim", single_line=True), key=f"c{i}")
        for i, d in enumerate(stage.dropped):
            m = vault.get(d.id) if vault is not None else None
            self.add_row(Text("✗", style="red", justify="right"), lit(d.id, "red", single_line=True),
                         lit(m.title if m else "", single_line=True),
                         Text(""), lit(d.reason, "red", single_line=True), key=f"d{i}")

"""The evidence distribution over a judged-query run: what `eval --plot`, `eval --json` and
the Tuning pane's evidence chart show, computed once here so they cannot disagree.

Read from each recall's trace: the floor stage's `evidence` info line (every hit kept at k
with its evidence E, before the calibrated decision) and its `decision` line. Four groups:
the evidence of hits judged relevant, of the other hits (on-topic queries), and the best
evidence of each on-topic and each off-topic query; plus the floor. Headless.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

#: Histogram bins over the evidence scale E = lexical + vector (0..2).
BINS = 10
SCALE_MAX = 2.0


def trace_evidence(trace: Any) -> dict[str, float] | None:
    """{memory id: evidence} from the floor stage's `evidence` line; None when the trace has
    no calibrated decision (a preset without `floor.calibrated`)."""
    for stage in trace.stages:
        if stage.name != "floor":
            continue
        for key, value in stage.info:
            if key == "evidence":
                out: dict[str, float] = {}
                if value == "(none)":
                    return out
                for part in value.split("; "):
                    mid, _, num = part.rpartition(" ")
                    out[mid] = float(num)
                return out
    return None


def trace_floor(trace: Any) -> float | None:
    """The calibrated floor the trace's floor stage applied (its `calibrated floor` line),
    None when the trace has none."""
    for stage in trace.stages:
        if stage.name == "floor":
            for key, value in stage.info:
                if key == "calibrated floor":
                    return float(value.split(":", 1)[0])
    return None


def histogram(values: Sequence[float]) -> list[int]:
    """Counts in BINS equal bins over 0..SCALE_MAX (the last bin holds SCALE_MAX)."""
    counts = [0] * BINS
    for v in values:
        i = min(BINS - 1, max(0, int(v / SCALE_MAX * BINS)))
        counts[i] += 1
    return counts


def distribution(queries: Sequence[Any], traces: Sequence[Any]) -> dict[str, Any] | None:
    """The four evidence groups with their histograms and the floor; None when the run's
    traces carry no calibrated decision. `queries` (GoldenQuery) and `traces` pair up."""
    groups: dict[str, list[float]] = {"relevant": [], "other": [], "on_topic_best": [],
                                      "off_topic_best": []}
    floor = None
    for q, tr in zip(queries, traces, strict=True):
        ev = trace_evidence(tr)
        if ev is None:
            return None
        floor = trace_floor(tr)
        best = max(ev.values(), default=0.0)
        if q.off_topic:
            groups["off_topic_best"].append(best)
            groups["other"].extend(ev.values())
            continue
        groups["on_topic_best"].append(best)
        for mid, e in ev.items():
            (groups["relevant"] if q.relevant.get(mid, 0) > 0 else groups["other"]).append(e)
    return {
        "floor": floor,
        "bins": [round(SCALE_MAX * i / BINS, 4) for i in range(BINS + 1)],
        "groups": {name: {"values": [round(v, 4) for v in vals], "histogram": histogram(vals),
                          "below_floor": sum(1 for v in vals if floor is not None and v < floor)}
                   for name, vals in groups.items()},
    }


#: Group labels, in display order.
LABELS: dict[str, str] = {"relevant": "relevant hits", "other": "non-relevant hits",
                          "on_topic_best": "on-topic queries (best)",
                          "off_topic_best": "off-topic queries (best)"}


def chart_lines(dist: dict[str, Any], width: int = 40) -> list[str]:
    """A plain-text chart of `distribution`'s histograms: one row per bin and group, the bar
    scaled to the group's largest bin, the floor marked on the bin holding it."""
    floor = dist["floor"]
    bins = dist["bins"]
    lines = []
    for name, label in LABELS.items():
        g = dist["groups"][name]
        hist = g["histogram"]
        top = max(hist, default=0) or 1
        lines.append(f"{label}: {len(g['values'])}, {g['below_floor']} under the floor")
        for i, count in enumerate(hist):
            lo, hi = bins[i], bins[i + 1]
            mark = " ◀ floor" if floor is not None and lo <= floor < hi else ""
            bar = "█" * round(count / top * width)
            lines.append(f"  {lo:4.1f}-{hi:3.1f} {count:4d} {bar}{mark}")
    return lines


#: Eight heights of a one-line bar chart.
SPARKS = " ▁▂▃▄▅▆▇█"


def spark_lines(dist: dict[str, Any]) -> list[str]:
    """The compact chart (the Tuning pane's): one line per group, one character per bin
    (height relative to the group's largest bin), the count and how many are under the floor;
    a first line with the scale and the floor's position (`┃` under the bin holding it)."""
    floor = dist["floor"]
    bins = dist["bins"]
    mark = "".join("┃" if floor is not None and bins[i] <= floor < bins[i + 1] else "─"
                   for i in range(len(bins) - 1))
    label_w = max(len(v) for v in LABELS.values())
    shown = "none" if floor is None else f"{floor:.2f}"
    lines = [f"{'evidence E 0..2, floor ' + shown:<{label_w}} {mark}"]
    for name, label in LABELS.items():
        g = dist["groups"][name]
        top = max(g["histogram"], default=0) or 1
        bar = "".join(SPARKS[0] if c == 0 else SPARKS[max(1, round(c / top * 8))]
                      for c in g["histogram"])
        lines.append(f"{label:<{label_w}} {bar} {len(g['values'])}, "
                     f"{g['below_floor']} under the floor")
    return lines

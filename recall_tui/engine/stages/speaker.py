"""speaker: who said a turn and when, as evidence of its own.

"What did Lena say about ..." names a speaker; "in March" or "in 2024" names a time. For every
scored candidate this stage multiplies the score by `1 + weight` when the query names the
turn's speaker (the `Name:` that opens the body, else a `speaker-x` tag), and by
`1 + date_weight` when the query names the month or the year the memory was created in, and
by `1 + when_weight` when the query asks when (`when ...`, `by/until/since when ...`, `what
date/day/month/year`, `how long ago`) and the memory's text states a time (a month or weekday,
`yesterday`, `today`, `last night`, `last week`, `next month`, `ago`, a day like `24th` or
`Feb 23`, May after a preposition of time, a clock time like `9am`, a year). Memories with
no speaker are only looked at for the dates. Each factor is in the trace."""

from __future__ import annotations

import re

from recall_tui.engine.stages import StageContext
from recall_tui.engine.stages.turn_layout import layout, note, resort
from recall_tui.engine.state import Out, RecallState
from recall_tui.engine.text import fold
from recall_tui.engine.trace import Candidate

MONTHS = {name: i for i, names in enumerate((
    ("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",),
    ("june", "jun"), ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"),
    ("october", "oct"), ("november", "nov"), ("december", "dec")), 1) for name in names}


def query_dates(words: tuple[str, ...] | list[str]) -> tuple[set[int], set[int]]:
    """(months 1-12, years) named by the query's words. `may` and the short forms count only
    beside a year or another month name, since they are also ordinary words."""
    years = {int(w) for w in words if len(w) == 4 and w.isdigit() and 1900 <= int(w) <= 2100}
    full = {MONTHS[w] for w in words if w in MONTHS and len(w) > 3 and w != "may"}
    short = {MONTHS[w] for w in words if w in MONTHS and (len(w) <= 3 or w == "may")}
    months = full | (short if (years or full) else set())
    return months, years


_WHEN_Q = re.compile(r"^\s*(?:(?:by|until|till|since|from) )?when\b|"
                     r"\bwhat (?:date|day|month|year|time)\b|\bhow long ago\b|"
                     r"\bwhich (?:date|day|month|year)\b", re.I)
_TIME = re.compile(
    r"\b(?:january|february|march|april|june|july|august|september|october|november|december|"
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday|yesterday|tomorrow|tonight|"
    r"weekend|ago|(?:last|next|this|in (?:a|two|three|four|\d+)) (?:week|month|year|summer|"
    r"winter|spring|autumn|weeks|months|years|days)|\d{1,2}(?:st|nd|rd|th)|(?:19|20)\d\d|"
    r"(?:mid|end of|start of|early|late) (?:january|february|march|april|may|june|july|"
    r"august|september|october|november|december)|"
    # the day itself, said the way chat says it
    r"today|last night|this (?:morning|afternoon|evening)|the other day|"
    # a short month name (or May) with a day number: "Feb 23", "May 27", "14 Dec" (not
    # "12 may": a number before the verb)
    r"(?:jan|feb|mar|apr|may|jun|jul|aug|sept?|oct|nov|dec)\.? \d{1,2}|"
    r"\d{1,2} (?:jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec)|"
    # May as a month, not the verb: after a preposition of time
    r"(?:in|since|until|till|by|before|after|early|late|mid) may|"
    # a clock time: "9am", "7 pm", "18:30"
    r"\d{1,2}(?::\d\d)? ?[ap]m|\d{1,2}:\d\d)\b", re.I)


def asks_when(query: str) -> bool:
    """The query asks for a time ("When did ...", "what year ...", "how long ago ...")."""
    return bool(_WHEN_Q.search(query))


def states_time(text: str) -> bool:
    """The text states a time: a month or weekday name, a relative day or period, a
    day-of-month ordinal or a year."""
    return bool(_TIME.search(text))


def time_stated(engine: StageContext, mid: str) -> bool:
    """`states_time` of a memory's body (without `## Related`), kept per vault: a candidate
    of many "when" questions is searched once."""
    cache: dict[str, bool] = engine.memo("speaker.states_time", dict)
    stated = cache.get(mid)
    if stated is None:
        stated = cache[mid] = states_time(engine.vault.memories[mid].body_without_related)
    return stated


def run(engine: StageContext, st: RecallState) -> Out:
    cfg = st.cfg.speaker
    if not cfg.enabled:
        return Out(skipped=True, reason="disabled by the configuration")
    if not st.order:
        return Out(skipped=True, reason="no candidates")
    lay = layout(engine)
    qwords = set(st.query.words)
    named = sorted(qwords & lay.names)
    months, years = query_dates(st.query.words)
    info = [("speakers named", " ".join(named) or "(none)"),
            ("months", " ".join(str(m) for m in sorted(months)) or "(none)"),
            ("years", " ".join(str(y) for y in sorted(years)) or "(none)"),
            ("weight", f"{cfg.weight:g}"), ("date_weight", f"{cfg.date_weight:g}")]
    when = bool(cfg.when_weight) and asks_when(st.query.text)
    info.append(("asks when", "yes" if when else "no"))
    if not named and not months and not years and not when:
        return Out(info=info, reason="the query names no speaker and no date, and asks no when")
    out = Out(info=info)
    mems = engine.vault.memories
    rank = 0
    for mid in list(st.order):
        factor, why = 1.0, []
        who = lay.speaker.get(mid)
        if who is not None and fold(who) in named and cfg.weight:
            factor *= 1 + cfg.weight
            why.append(f"said by {who} x{1 + cfg.weight:g}")
        c = mems[mid].created
        if cfg.date_weight and ((months and c.month in months and (not years or c.year in years))
                                or (not months and years and c.year in years)):
            factor *= 1 + cfg.date_weight
            why.append(f"created {c:%Y-%m} x{1 + cfg.date_weight:g}")
        if when and time_stated(engine, mid):
            factor *= 1 + cfg.when_weight
            why.append(f"states a time x{1 + cfg.when_weight:g}")
        if factor != 1.0:
            st.score[mid] *= factor
            text = "speaker: " + ", ".join(why)
            note(st, mid, text)
            rank += 1
            out.candidates.append(Candidate(mid, st.score[mid], rank, text))
    resort(engine, st)
    out.info.append(("raised", str(rank)))
    return out

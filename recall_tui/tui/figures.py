"""A before, an after and their difference shown so that the figures agree.

The means and their delta come from the tuning modules (`golden.compare_runs`,
`tuning.tune`); rounded on their own to three decimals they can contradict each other:
`0.652 → 0.652 (-0.001)`. Here the three are shown at one precision, the first (from 3 up to
6 decimals) at which the shown delta is the shown after minus the shown before, and a delta
that is not zero is not shown as `0.000`. Nothing is computed but that check.
"""

from __future__ import annotations

from decimal import Decimal

#: Decimals a figure starts with, and the most it is given to make the three agree.
DIGITS, MOST_DIGITS = 3, 6


def change_figures(before: float | None, after: float | None,
                   delta: float | None) -> tuple[str, str, str]:
    """(before, after, signed delta) as shown: `—` for a missing one; the delta signed (`+`
    for zero and gains)."""
    if before is None or after is None or delta is None:
        return _plain(before), _plain(after), _signed(delta, DIGITS)
    for n in range(DIGITS, MOST_DIGITS + 1):
        b, a, d = f"{before:.{n}f}", f"{after:.{n}f}", _signed(delta, n)
        shown_zero = Decimal(d) == 0
        if Decimal(a) - Decimal(b) == Decimal(d) and (delta == 0 or not shown_zero):
            break
    return b, a, d


def _plain(v: float | None) -> str:
    return "—" if v is None else f"{v:.{DIGITS}f}"


def _signed(v: float | None, digits: int) -> str:
    return "—" if v is None else f"{v:+.{digits}f}"

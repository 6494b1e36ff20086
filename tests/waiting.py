"""Waiting for conditions, never for a fixed time.

A UI test waits for what it is about to check (the recall on screen, the pane built, the
message handled), polling at a short interval up to a generous timeout, and fails with a
message naming what never happened. A loaded machine makes such a test slower, never wrong.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

#: Generous (a tune under load ~14 on 2 cores once took over 60 s to report progress): CI
#: machines are shared, and a test that waits for a condition only pays for the
#: time the condition takes.
TIMEOUT = 180.0


def _holds(condition: Callable[[], Any]) -> bool:
    try:
        return bool(condition())
    except Exception:  # a widget not mounted yet, a table not filled yet: keep waiting
        return False


async def wait_until(pilot: Any, condition: Callable[[], Any], what: str,
                     timeout: float = TIMEOUT) -> None:
    """Poll `condition` between UI ticks until it is true; fail naming `what` after `timeout`."""
    deadline = time.monotonic() + timeout
    while not _holds(condition):
        if time.monotonic() > deadline:
            condition()  # re-raise what the condition raised, if anything, for the report
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")
        await pilot.pause(0.02)


def wait_until_sync(condition: Callable[[], Any], what: str, timeout: float = TIMEOUT,
                    interval: float = 0.05) -> Any:
    """The same, for tests that drive a real terminal (tmux) or another process; returns what
    the condition returned once it held."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            value = condition()
        except Exception:
            value = None
        if value:
            return value
        if time.monotonic() > deadline:
            condition()
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(interval)

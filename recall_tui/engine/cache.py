"""The recall cache (bastra): an LRU of recent recalls with a time to live. Keys hold
everything that changes the answer (query, configuration hash, k, pinned now / as_of,
filters, topic key, entity hints, verbosity, vault fingerprint); the engine clears it on
any vault change."""

from __future__ import annotations

import time
from collections import OrderedDict
from typing import Any


class RecallCache:
    """LRU with TTL, sized and timed per call (the configuration may change between calls)."""

    def __init__(self) -> None:
        self._data: OrderedDict[tuple[Any, ...], tuple[float, Any]] = OrderedDict()

    def get(self, key: tuple[Any, ...], ttl_s: float) -> Any | None:
        item = self._data.get(key)
        if item is None:
            return None
        stamp, value = item
        if time.monotonic() - stamp > ttl_s:
            del self._data[key]
            return None
        self._data.move_to_end(key)
        return value

    def put(self, key: tuple[Any, ...], value: Any, max_entries: int) -> None:
        self._data[key] = (time.monotonic(), value)
        self._data.move_to_end(key)
        while len(self._data) > max(0, max_entries):
            self._data.popitem(last=False)

    def clear(self) -> None:
        self._data.clear()

    def __len__(self) -> int:
        return len(self._data)

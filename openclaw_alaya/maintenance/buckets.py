"""Introspect's time-buckets step: the daily, weekly and monthly buckets (`recall/buckets.py`)
of the last `introspect.keep_days` days, `keep_weeks` ISO weeks and `keep_months` months before
`now`, cached in `state/buckets.json` for `alaya summary`, with the graph's `freshness` they were
computed at (a summary computes its bucket afresh once the graph has changed).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from ..recall.buckets import cache_path, compute, read
from ..store.fsutil import atomic_write
from .common import as_datetime

if TYPE_CHECKING:
    from ..memory import Memory


def refresh(memory: "Memory", *, now: Any = None, dry_run: bool = False) -> dict[str, Any]:
    moment = as_datetime(now)
    with memory.reading("introspect time buckets") as graph:
        sessions, cards = read(graph)
        fresh = graph.freshness()
    buckets = {**compute(sessions, cards, moment, memory.config.introspect), "freshness": fresh}
    if not dry_run:
        atomic_write(cache_path(memory), json.dumps(buckets, ensure_ascii=False, indent=1))
    return {kind: len(buckets[kind]) for kind in ("daily", "weekly", "monthly")}

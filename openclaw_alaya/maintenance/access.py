"""Fold the access log into the graph: recall is a read and only appends one line per recall
to `state/access.jsonl` (docs/architecture.md, "The lock protocol"); here those lines become
`access_count` and `last_accessed` on the cards.

A line: `{"ts": <POSIX seconds on the memory's clock>, "cards": [<card ids returned, best
first; empty when the recall found nothing>], "q": <models.query_key of the query and its
concepts: the same question asked twice has the same key; null for a walk from given cards>}`.
Lines written before issue 31 have no `q` and no empty `cards`.

Safe against recalls appending meanwhile: under the write lock the log is renamed to
`state/access.folding-<stamp>.jsonl` (a recall that opens the log afterwards creates a new one;
appends are single O_APPEND writes), it is read outside the lock, and the counts are applied and
the renamed file removed in one short write-lock hold. A crash in between leaves the renamed
file, which the next run folds; a file another introspect folded meanwhile is gone by then and
is not counted again (`still_pending`).
"""

from __future__ import annotations

import os
import time
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..recall.usage_now import NONE, tally
from ..store.raw import read_log
from . import usage
from .common import iso

if TYPE_CHECKING:
    from ..memory import Memory
    from ..store.ports.upkeep import UpkeepGraph

_FOLDING = "access.folding-"


def pending(memory: "Memory") -> list[Path]:
    return sorted(memory.dirs.state.glob(f"{_FOLDING}*.jsonl"))


def aggregate(paths: list[Path]) -> tuple[Counter, dict[str, float], int]:
    total, lines = NONE, 0
    for path in paths:
        found, n = tally(read_log(path))
        total, lines = total.merged(found), lines + n
    return total.counts, total.last, lines


def rotate(memory: "Memory") -> list[Path]:
    """Under a short write-lock hold (no store opened): the log becomes a folding file; returns
    every folding file waiting (this one and any a crashed run left)."""
    log = memory.dirs.access_log
    if log.exists():
        with memory.writing("introspect fold-access (rotate log)"):
            if log.exists():
                os.replace(log, memory.dirs.state / f"{_FOLDING}{time.time_ns()}.jsonl")
    return pending(memory)


def still_pending(paths: list[Path]) -> list[Path]:
    """Under the write lock: the rotated logs no other introspect has folded since they were
    read (a fold removes its files in the hold that applies them; counting one twice would
    inflate every card's usage in it)."""
    return [path for path in paths if path.exists()]


def retire(memory: "Memory", paths: list[Path]) -> None:
    """Under the write lock, once their counts are applied: the folded logs go into the usage
    history (usage.py) and are removed."""
    usage.record(memory, paths)
    for path in paths:
        path.unlink(missing_ok=True)


def apply_counts(graph: "UpkeepGraph", counts: Counter, last: dict[str, float]) -> int:
    """Under the write lock: add the counts; returns how many cards matched (a card merged or
    forgotten since it was recalled matches nothing)."""
    return graph.add_accesses(counts, {cid: iso(datetime.fromtimestamp(last[cid], timezone.utc)) for cid in counts})


def fold(memory: "Memory", *, now: Any = None, dry_run: bool = False) -> dict[str, Any]:
    log = memory.dirs.access_log
    if dry_run:
        counts, _last, lines = aggregate([*pending(memory), log] if log.exists() else pending(memory))
        return {"lines": lines, "cards": len(counts), "accesses": sum(counts.values()), "dry_run": True}
    paths = rotate(memory)
    if not paths:
        return {"lines": 0, "cards": 0, "accesses": 0}
    counts, last, lines = aggregate(paths)
    with memory.writing("introspect fold-access") as graph:
        unfolded = still_pending(paths)
        if unfolded != paths:
            counts, last, lines = aggregate(unfolded)
        with graph:
            found = apply_counts(graph, counts, last)
        retire(memory, unfolded)
    return {"lines": lines, "cards": found, "accesses": sum(counts.values()), "unknown_cards": len(counts) - found}

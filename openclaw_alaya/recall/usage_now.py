"""The recalls introspect has not folded yet (issue 31): ranking counts a card's use as of now,
not as of the last fold.

A card's `access_count` and `last_accessed` change only when introspect folds the access log
(maintenance/access.py has the line shape); the recalls since are lines of `state/access.jsonl`
and of any `access.folding-*.jsonl` a fold has renamed and not yet applied. Read here without
the write lock: the log is append-only (one O_APPEND write per line) and a rename keeps the
file's content, so a reader sees whole lines, at worst a torn last one (skipped), and at worst
a line both in a folding file and already on the cards in the short moment a fold applies and
removes it (one recall counted twice, once).

Cheap on every recall: each file's counts are cached per process by (size, mtime), so a resident
daemon re-reads a log only once it grew, and only its last `MAX_BYTES` are read (a log grown past
that, introspect not run for a long time, counts its latest recalls).
"""

from __future__ import annotations

import json
import os
import threading
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..store.trust import problem

MAX_BYTES = 4 << 20  # ~40k recalls of 10 cards
_FILES = ("access.jsonl", "access.folding-*.jsonl")


@dataclass(frozen=True)
class Unfolded:
    """Recalls per card and the last one's POSIX time, not yet on the cards."""

    counts: Counter = field(default_factory=Counter)
    last: dict[str, float] = field(default_factory=dict)

    def count(self, card_id: str) -> int:
        return self.counts.get(card_id, 0)

    def merged(self, other: "Unfolded") -> "Unfolded":
        last = dict(self.last)
        for cid, ts in other.last.items():
            last[cid] = max(ts, last.get(cid, ts))
        return Unfolded(self.counts + other.counts, last)


NONE = Unfolded()
_cache: dict[Path, tuple[tuple[int, int], Unfolded]] = {}
_lock = threading.Lock()


def unfolded(state: Path) -> Unfolded:
    """The recalls in the state folder's access logs not yet folded into the cards."""
    paths = [path for pattern in _FILES for path in sorted(state.glob(pattern))]
    with _lock:  # a folded log is gone for good: forget its counts
        for gone in [p for p in _cache if p.parent == state and p not in paths]:
            del _cache[gone]
    total = NONE
    for path in paths:
        total = total.merged(_read(path))
    return total


def _read(path: Path) -> Unfolded:
    """One log's counts, from the cache while its size and mtime are unchanged. A file gone,
    unreadable or not safely ours counts nothing: ranking without it is the old ranking."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return NONE
    with os.fdopen(fd, "rb") as handle:
        st = os.fstat(handle.fileno())
        key = (st.st_size, st.st_mtime_ns)
        with _lock:
            known = _cache.get(path)
        if known and known[0] == key:
            return known[1]
        if problem(path, st):
            return NONE
        start = max(0, st.st_size - MAX_BYTES)
        handle.seek(start)
        data = handle.read(st.st_size - start)
    lines = data.split(b"\n")
    if start:
        lines = lines[1:]  # the first is cut
    found, _ = tally(_records(lines))
    with _lock:
        _cache[path] = (key, found)
    return found


def _records(lines: list[bytes]) -> Iterator[dict]:
    for line in lines:
        try:
            record = json.loads(line)
        except ValueError:
            continue  # a torn last line
        if isinstance(record, dict):
            yield record


def tally(records: Iterable[dict]) -> tuple[Unfolded, int]:
    """Recalls per card and the last one's time in access-log records, and how many records
    were well-formed (introspect's fold counts with it too)."""
    counts: Counter = Counter()
    last: dict[str, float] = {}
    lines = 0
    for record in records:
        cards, ts = record.get("cards"), record.get("ts")
        if not isinstance(cards, list) or not isinstance(ts, (int, float)):
            continue
        lines += 1
        for cid in cards:
            if isinstance(cid, str):
                counts[cid] += 1
                last[cid] = max(last.get(cid, 0.0), float(ts))
    return Unfolded(counts, last), lines

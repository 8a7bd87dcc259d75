"""Fold the access log into the graph: recall is a read and only appends
`{"ts", "cards": [...]}` lines to `state/access.jsonl` (DESIGN.md §2); here those lines become
`access_count` and `last_accessed` on the cards.

Safe against recalls appending meanwhile: under the write lock the log is renamed to
`state/access.folding-<stamp>.jsonl` (a recall that opens the log afterwards creates a new one;
appends are single O_APPEND writes), it is read outside the lock, and the counts are applied and
the renamed file removed in one short write-lock hold. A crash in between leaves the renamed
file, which the next run folds.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .common import iso, parse_time, read_log

if TYPE_CHECKING:
    from ..engine import Alaya

_FOLDING = "access.folding-"


def _pending(memory: "Alaya") -> list[Path]:
    return sorted(memory.dirs.state.glob(f"{_FOLDING}*.jsonl"))


def aggregate(paths: list[Path]) -> tuple[Counter, dict[str, float], int]:
    counts: Counter = Counter()
    last: dict[str, float] = {}
    lines = 0
    for path in paths:
        for record in read_log(path):
            cards, ts = record.get("cards"), record.get("ts")
            if not isinstance(cards, list) or not isinstance(ts, (int, float)):
                continue
            lines += 1
            for cid in cards:
                if isinstance(cid, str):
                    counts[cid] += 1
                    last[cid] = max(last.get(cid, 0.0), float(ts))
    return counts, last, lines


def fold(memory: "Alaya", *, now: Any = None, dry_run: bool = False) -> dict[str, Any]:
    log = memory.dirs.access_log
    if dry_run:
        counts, _last, lines = aggregate([*_pending(memory), log] if log.exists() else _pending(memory))
        return {"lines": lines, "cards": len(counts), "accesses": sum(counts.values()), "dry_run": True}
    if log.exists():
        with memory.lock.write("introspect fold-access (rotate log)"):
            if log.exists():
                os.replace(log, memory.dirs.state / f"{_FOLDING}{time.time_ns()}.jsonl")
    paths = _pending(memory)
    if not paths:
        return {"lines": 0, "cards": 0, "accesses": 0}
    counts, last, lines = aggregate(paths)
    unknown = 0
    with memory.lock.write("introspect fold-access"):
        with memory.graph(write=True) as graph:
            current = {
                cid: (n or 0, seen)
                for cid, n, seen in graph.query(
                    "MATCH (c:Card) WHERE c.id IN $ids RETURN c.id, c.access_count, c.last_accessed",
                    {"ids": list(counts)},
                )
            }
            rows = []
            for cid, n in counts.items():
                if cid not in current:
                    unknown += 1  # merged or forgotten since it was recalled
                    continue
                old_n, old_seen = current[cid]
                seen = datetime.fromtimestamp(last[cid], timezone.utc)
                previous = parse_time(old_seen)
                if previous is not None and previous > seen:
                    seen = previous
                rows.append({"id": cid, "n": int(old_n) + n, "seen": iso(seen)})
            if rows:
                graph.query(
                    "UNWIND $rows AS r MATCH (c:Card {id: r.id}) SET c.access_count = r.n, c.last_accessed = r.seen",
                    {"rows": rows},
                )
        for path in paths:
            path.unlink(missing_ok=True)
    return {"lines": lines, "cards": len(rows), "accesses": sum(counts.values()), "unknown_cards": unknown}

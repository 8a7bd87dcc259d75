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
is not counted again (`Folding.settle`).

Each log is read once (issue 31): the records read outside the lock are the ones counted on the
cards and the ones the usage history (usage.py) merges, and under the lock only the bytes
appended since are read — a recall that opened the log just before its rename writes its line
into the renamed file, and that line is then counted on both or (appended after the hold's read,
a window of microseconds) on neither, never on one only. Reading the files again for the history
could see such a line the counts had not.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..recall.usage_now import tally
from ..store.raw import log_records
from ..store.trust import read_trusted
from . import usage
from .common import iso

if TYPE_CHECKING:
    from ..memory import Memory
    from ..store.ports.upkeep import UpkeepGraph

_FOLDING = "access.folding-"


def pending(memory: "Memory") -> list[Path]:
    return sorted(memory.dirs.state.glob(f"{_FOLDING}*.jsonl"))


@dataclass
class _Read:
    """One log and the records read from it so far: its first `read_to` bytes."""

    path: Path
    records: list[dict[str, Any]] = field(default_factory=list)
    read_to: int = 0

    def read_on(self, *, whole: bool) -> int:
        """Read the bytes after `read_to`: only whole lines unless `whole` (under the lock, when
        what has no newline yet is a torn line); how many records that added."""
        try:
            data = read_trusted(self.path, self.read_to)
        except FileNotFoundError:  # folded and removed by another introspect meanwhile
            return 0
        end = len(data) if whole else data.rfind(b"\n") + 1
        added = log_records(data[:end])
        self.records += added
        self.read_to += end
        return len(added)


@dataclass
class Folding:
    """The logs being folded and what was read from them, each byte once."""

    reads: list[_Read]

    @classmethod
    def read(cls, paths: list[Path]) -> "Folding":
        """Outside the lock: every whole line of the logs."""
        folding = cls([_Read(path) for path in paths])
        for read in folding.reads:
            read.read_on(whole=False)
        return folding

    @property
    def paths(self) -> list[Path]:
        return [read.path for read in self.reads]

    def records(self) -> list[dict[str, Any]]:
        return [record for read in self.reads for record in read.records]

    def tally(self) -> tuple[Counter, dict[str, float], int]:
        """Recalls per card, the last one's time, and how many records were recalls."""
        found, lines = tally(self.records())
        return found.counts, found.last, lines

    def settle(self) -> bool:
        """Under the write lock, before the counts are applied: leave out the logs another
        introspect folded since they were read (it removed them in the hold that applied them;
        counting one twice would inflate every card's usage in it), read the lines recalls
        appended to the others meanwhile. True when that changed the records."""
        kept = [read for read in self.reads if read.path.exists()]
        changed = len(kept) != len(self.reads)
        self.reads = kept
        return sum(read.read_on(whole=True) for read in kept) > 0 or changed


def rotate(memory: "Memory") -> list[Path]:
    """Under a short write-lock hold (no store opened): the log becomes a folding file; returns
    every folding file waiting (this one and any a crashed run left)."""
    log = memory.dirs.access_log
    if log.exists():
        with memory.writing("introspect fold-access (rotate log)"):
            if log.exists():
                os.replace(log, memory.dirs.state / f"{_FOLDING}{time.time_ns()}.jsonl")
    return pending(memory)


def retire(memory: "Memory", folding: Folding) -> None:
    """Under the write lock, once their counts are applied: the records the counts came from go
    into the usage history (usage.py) and the folded logs are removed."""
    usage.record(memory, folding.records())
    for path in folding.paths:
        path.unlink(missing_ok=True)


def apply_counts(graph: "UpkeepGraph", counts: Counter, last: dict[str, float]) -> int:
    """Under the write lock: add the counts; returns how many cards matched (a card merged or
    forgotten since it was recalled matches nothing)."""
    return graph.add_accesses(counts, {cid: iso(datetime.fromtimestamp(last[cid], timezone.utc)) for cid in counts})


def fold(memory: "Memory", *, now: Any = None, dry_run: bool = False) -> dict[str, Any]:
    log = memory.dirs.access_log
    if dry_run:
        counts, _last, lines = Folding.read([*pending(memory), *([log] if log.exists() else [])]).tally()
        return {"lines": lines, "cards": len(counts), "accesses": sum(counts.values()), "dry_run": True}
    paths = rotate(memory)
    if not paths:
        return {"lines": 0, "cards": 0, "accesses": 0}
    folding = Folding.read(paths)
    counts, last, lines = folding.tally()
    with memory.writing("introspect fold-access") as graph:
        if folding.settle():
            counts, last, lines = folding.tally()
        with graph:
            found = apply_counts(graph, counts, last)
        retire(memory, folding)
    return {"lines": lines, "cards": found, "accesses": sum(counts.values()), "unknown_cards": len(counts) - found}

"""Crash safety (docs/architecture.md, "Crash safety"; the data directory's `journal/`): a write
that was cut off is finished or undone by the next command, so the layers agree again and no
acknowledged session is lost.

Every write-lock hold is recorded before it changes anything: `journal/<pid>-<ns>.json` with
the operation and its start time (atomic, fsynced); the record is removed when the hold ends,
whatever the outcome. A record left behind means its process died inside the write (kill -9,
OOM, power loss). What such a death can leave:

- L3 (raw sessions, contexts) written, L2 not: L3 files are atomic and are the truth;
- L2 half-applied: never, a write-mode `GraphStore` runs in one Kuzu transaction (Kuzu rolls an
  uncommitted one back, and replays its own WAL on the next read-write open);
- L2 committed, L1 not (or only partly): LanceDB commits are atomic, but L2 and L1 are two
  stores.

`ingest/recovery.py` runs under the write lock at the start of the next write hold (`alaya
init`, the daemon's warm-up, any write; a read writes nothing: until then it may miss what the
dead write left half done, and refuses a swap or checkpoint cut off), and reconciles:

1. L3 → L2 sessions: every session file without a `Session` node, and every session file
   changed since the oldest dead write began, gets its node from the file (turn count, path;
   distilled progress kept). A session whose ingest was cut off after L3 is kept, not lost.
2. L2 → L1 cards: rows for cards that are not COLD and have none are re-embedded and added;
   rows for cards that are gone or COLD are deleted.

Then the records are removed. `recovery.check(memory)` lists the same disagreements without
fixing them (for `alaya verify` and the crash tests). This module keeps the records and the
cheap test for "a write died here" that every lock hold makes (`store/lock.py`).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from .datadir import DataDir
from .embedded import swap
from .fsutil import atomic_write


PURGE_SUFFIX = ".purge"  # a purge intent (`Journal.intend`), apart from the write holds' `.json` records


class Journal:
    """The write-ahead records of one data directory."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    @classmethod
    def of(cls, root: Path) -> "Journal":
        """The journal of the data directory `root`."""
        return cls(DataDir(root).journal)

    def begin(self, operation: str) -> Path | None:
        if not self.folder.is_dir():  # before `alaya init` made it (init itself)
            return None
        path = self.folder / f"{os.getpid()}-{time.time_ns()}.json"
        atomic_write(path, json.dumps({"operation": operation, "pid": os.getpid(), "since": time.time()}))
        return path

    def end(self, path: Path | None) -> None:
        if path is not None:
            path.unlink(missing_ok=True)

    def pending(self) -> list[Path]:
        try:
            return sorted(p for p in self.folder.iterdir() if p.suffix == ".json" and not p.name.startswith("."))
        except OSError:
            return []

    def intend(self, doc: dict[str, Any]) -> str:
        """Record a purge before any of it is done (`journal/<pid>-<ns>.purge`, atomic and
        fsynced): whoever takes the store next carries it out to the end (roll forward,
        curate/purge.py), so a kill at any step ends as if it had not happened. Returns its name."""
        path = self.folder / f"{os.getpid()}-{time.time_ns()}{PURGE_SUFFIX}"
        atomic_write(path, json.dumps(doc, ensure_ascii=False))
        return path.name

    def intents(self) -> list[tuple[str, dict[str, Any]]]:
        """The purges recorded and not yet carried out, oldest first (an unreadable one is
        left out: `atomic_write` never leaves one half written)."""
        try:
            paths = sorted(p for p in self.folder.iterdir() if p.suffix == PURGE_SUFFIX and not p.name.startswith("."))
        except OSError:
            return []
        found = []
        for path in paths:
            try:
                found.append((path.name, json.loads(path.read_text(encoding="utf-8"))))
            except (OSError, ValueError):
                continue
        return found

    def fulfilled(self, name: str) -> None:
        """The purge `name` is carried out to its end."""
        (self.folder / name).unlink(missing_ok=True)

    def records(self) -> list[dict[str, Any]]:
        out = []
        for path in self.pending():
            try:
                record = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                record = {}
            out.append({"path": path, "operation": str(record.get("operation", "?")),
                        "since": float(record.get("since") or path.stat().st_mtime)})
        return out


def needs_recovery(root: Path) -> bool:
    """Cheap (one directory listing, two stats): a dead write's record, a purge not carried
    out to its end, a swap of rebuilt stores cut off between its renames (store/embedded/swap.py),
    or a Kuzu checkpoint that was cut off (a read-only open cannot replay it)."""
    return (bool(Journal.of(root).pending()) or purge_pending(root) or swap.pending(root)
            or checkpoint_cut_off(root))


def purge_pending(root: Path) -> bool:
    """A forget was cut off before its end (`Journal.intend`): one directory listing."""
    try:
        return any(p.suffix == PURGE_SUFFIX for p in DataDir(root).journal.iterdir())
    except OSError:
        return False


def checkpoint_cut_off(root: Path) -> bool:
    """Kuzu left its checkpoint shadow file behind: a checkpoint was cut off."""
    return (root / "graph.kuzu.shadow").exists()

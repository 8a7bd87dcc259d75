"""Crash safety (DESIGN.md §1 `journal/`, issue 6): a write that was cut off is finished or
undone by the next command, so the layers agree again and no acknowledged session is lost.

Every write-lock hold is recorded before it changes anything: `journal/<pid>-<ns>.json` with
the operation and its start time (atomic, fsynced); the record is removed when the hold ends,
whatever the outcome. A record left behind means its process died inside the write (kill -9,
OOM, power loss). What such a death can leave:

- L3 (raw sessions, contexts) written, L2 not: L3 files are atomic and are the truth;
- L2 half-applied: never, a write-mode `GraphStore` runs in one Kuzu transaction (Kuzu rolls an
  uncommitted one back, and replays its own WAL on the next read-write open);
- L2 committed, L1 not (or only partly): LanceDB commits are atomic, but L2 and L1 are two
  stores.

`recover` runs under the write lock at the start of the next write, or before the next read
when a record is waiting (a read never sees the layers disagree), and reconciles:

1. L3 → L2 sessions: every session file without a `Session` node, and every session file
   changed since the oldest dead write began, gets its node from the file (turn count, path;
   distilled progress kept). A session whose ingest was cut off after L3 is kept, not lost.
2. L2 → L1 cards: rows for cards that are not COLD and have none are re-embedded and added;
   rows for cards that are gone or COLD are deleted.

Then the records are removed. `check(memory)` lists the same disagreements without fixing
them (for `alaya verify` and the crash tests).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .datadir import DataDir
from .fsutil import atomic_write

if TYPE_CHECKING:
    from ..engine import Alaya
    from .graph import GraphStore


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
    """Cheap (one directory listing, one stat): a dead write's record, or a Kuzu checkpoint
    that was cut off (a read-only open cannot replay it)."""
    return bool(Journal.of(root).pending()) or _checkpoint_cut_off(root)


def _checkpoint_cut_off(root: Path) -> bool:
    """Kuzu left its checkpoint shadow file behind: a checkpoint was cut off."""
    return (root / "graph.kuzu.shadow").exists()


def recover(memory: "Alaya") -> dict[str, Any]:
    """Reconcile after dead writes (the caller holds the write lock). Returns what was fixed."""
    journal = Journal(memory.dirs.journal)
    records = journal.records()
    if not records and not _checkpoint_cut_off(memory.dirs.root):
        return {}
    if not memory.dirs.graph.exists():
        for record in records:
            journal.end(record["path"])
        return {}
    since = min((r["since"] for r in records), default=time.time()) - 2.0
    with memory.graph(write=True) as graph:  # a read-write open also replays Kuzu's WAL
        sessions = _reconcile_sessions(memory, graph, since)
        cards = graph.query("MATCH (c:Card) RETURN c.id, c.tier")
    rows = _reconcile_index(memory, {cid: tier or "WARM" for cid, tier in cards})
    for record in records:
        journal.end(record["path"])
    report = {"interrupted": [r["operation"] for r in records], "sessions": sessions, **rows}
    from .fsutil import append_line

    append_line(memory.dirs.state / "recoveries.jsonl", json.dumps({"ts": time.time(), **report}))
    return report


def _reconcile_sessions(memory: "Alaya", graph: "GraphStore", since: float) -> list[str]:
    known = {row["id"]: row for row in graph.sessions()}
    fixed = []
    for path in memory.raw._session_files():
        sid = path.stem
        row = known.get(sid)
        try:
            changed = path.stat().st_mtime >= since
        except OSError:
            continue
        if row is not None and not changed:
            continue
        session = memory.raw.load_file(path)
        if session is None:
            continue
        if row is not None and row.get("turn_count") == len(session.turns) and row.get("path") == str(path):
            continue
        from ..ingest.batch import session_row
        from ..distill.plan import now_iso

        row = row or {}
        graph.upsert_session(session_row(memory, session, path, row, row.get("ingested_at") or now_iso()))
        fixed.append(sid)
    return fixed


def _reconcile_index(memory: "Alaya", tiers: dict[str, str]) -> dict[str, int]:
    indexed = set(memory.index.card_ids())
    want = {cid for cid, tier in tiers.items() if tier != "COLD"}
    stale = sorted(indexed - want)
    missing = sorted(want - indexed)
    if stale:
        memory.index.delete_cards(stale)
    if missing:
        import numpy as np

        from ..distill.plan import index_row, index_text

        with memory.graph(write=False) as graph:
            cards = list(graph.get_cards(missing).values())
        try:
            vectors = memory.embedder.embed([index_text(c) for c in cards])
        except Exception:  # noqa: BLE001 - an embedder that is down: full-text still finds them
            vectors = np.zeros((len(cards), memory.embedder.dim), dtype=np.float32)
        memory.index.upsert_cards([index_row(c) for c in cards], vectors)
    return {"l1_added": len(missing), "l1_removed": len(stale)}


def check(memory: "Alaya") -> list[dict[str, Any]]:
    """What `recover` would fix, as verify-style problems: sessions in L3 without a node or with
    a stale turn count, and dead writes still waiting (caller holds at least the read lock)."""
    problems = []
    with memory.graph(write=False) as graph:
        known = {row["id"]: row for row in graph.sessions()}
    for path in memory.raw._session_files():
        row = known.get(path.stem)
        if row is None:
            problems.append({"kind": "session_not_in_l2", "session": path.stem,
                             "detail": f"session {path.stem} is in raw/sessions but has no Session node"})
            continue
        session = memory.raw.load_file(path)
        if session is not None and (row.get("turn_count") or 0) != len(session.turns):
            problems.append({"kind": "stale_session", "session": path.stem,
                             "detail": f"Session node says {row.get('turn_count')} turns, raw/sessions has {len(session.turns)}"})
        if session is not None and (row.get("distilled_turns") or 0) > len(session.turns):
            problems.append({"kind": "stale_session", "session": path.stem,
                             "detail": "more turns distilled than the session has"})
    for record in Journal(memory.dirs.journal).records():
        problems.append({"kind": "interrupted_write", "detail": f"{record['operation']} did not finish (journal/{record['path'].name})"})
    return problems

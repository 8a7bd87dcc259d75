"""Finish what a killed writer left (the crash-safety record is in `store/journal.py`): the
lock runs `recover` under the write lock at the start of the next write hold (a read writes
nothing: it reads the layers as they are, or refuses a store it cannot read as it is), and
`check` lists the same disagreements without fixing them (`alaya verify`, the crash tests).

First, a swap of rebuilt stores cut off between its renames is finished (store/ports/scratch.py),
and the work folders of killed rebuilds, reembeds, introspects and backups are removed
(store/workdirs.py: they hold copies of the store, so text forgotten since would outlive the
forget). Then two reconciliations, in write order:

1. L3 → L2 sessions: every session file without a `Session` node, and every session file
   changed since the oldest dead write began, gets its node from the file (turn count, path;
   distilled progress kept). A session whose ingest was cut off after L3 is kept, not lost.
2. L2 → L1 cards: rows for cards that are not COLD and have none are re-embedded and added;
   rows for cards that are gone or COLD are deleted.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import DamagedStoreError
from ..models import index_row, index_text, now_iso
from ..store import workdirs
from ..store.fsutil import append_line
from ..store import tombstones
from ..store.journal import Journal, checkpoint_cut_off
from .sessions import session_row

if TYPE_CHECKING:
    from ..memory import Memory
    from ..store.ports.graph import CardGraph


def recover(memory: "Memory", finish_purges: "Callable[[Memory], int] | None" = None) -> dict[str, Any]:
    """Reconcile after dead writes (the caller holds the write lock). Returns what was fixed.
    A damaged graph or index is left as it is, with the records: the command's own open of it
    names `alaya rebuild`, which derives both again from L3. `finish_purges` carries out the
    forgets a dead process left (curate/purge.py, handed down by the engine), after a cut-off
    swap and before the sessions are reconciled (a session it deletes is not brought back)."""
    scratch = memory.storage.scratch()
    swapped = scratch.roll_forward()
    if swapped:
        memory.reopen_index()  # the tables this process may have open were just replaced
    scratch.clear_leftovers()  # killed builds aside: copies of the store, forgotten text included
    workdirs.sweep(memory.config.backup.folder(memory.dirs.root), workdirs.BACKUP)  # and killed backups
    purges = finish_purges(memory) if finish_purges is not None else 0
    journal = Journal(memory.dirs.journal)
    records = journal.records()
    if not records and not checkpoint_cut_off(memory.dirs.root):
        done = {"swap_finished": swapped} if swapped else {}
        return _logged(memory, {**done, "purges_finished": purges}) if swapped or purges else {}
    if not memory.dirs.graph.exists():
        for record in records:
            journal.end(record["path"])
        return {}
    since = min((r["since"] for r in records), default=time.time()) - 2.0
    try:
        with memory.writing("recovery") as graph:  # a read-write open also replays Kuzu's WAL
            sessions = _reconcile_sessions(memory, graph, since)
            want = set(graph.l1_card_ids())
        rows = _reconcile_index(memory, want)
    except DamagedStoreError:
        return {}
    for record in records:
        journal.end(record["path"])
    return _logged(memory, {"swap_finished": swapped, "purges_finished": purges,
                            "interrupted": [r["operation"] for r in records],
                    "sessions": sessions, **rows})


def _logged(memory: "Memory", report: dict[str, Any]) -> dict[str, Any]:
    """`report`, also appended to `state/recoveries.jsonl`."""
    append_line(memory.dirs.state / "recoveries.jsonl", json.dumps({"ts": time.time(), **report}))
    return report


def _reconcile_sessions(memory: "Memory", graph: "CardGraph", since: float) -> list[str]:
    known = {row["id"]: row for row in graph.sessions()}
    forgotten = tombstones.forgotten(memory.raw, "session")
    fixed = []
    for path in memory.raw.session_files():
        sid = path.stem
        row = known.get(sid)
        if sid in forgotten:
            continue  # forgotten on purpose (its file stays without --purge-raw): no node again
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
        row = row or {}
        graph.upsert_session(session_row(memory, session, path, row, row.get("ingested_at") or now_iso()))
        fixed.append(sid)
    return fixed


def _reconcile_index(memory: "Memory", want: set[str]) -> dict[str, int]:
    """L1 rows for the cards of `want` (those that belong in L1) and for no other card."""
    indexed = set(memory.index.card_ids())
    stale = sorted(indexed - want)
    missing = sorted(want - indexed)
    if stale:
        memory.index.delete_cards(stale)
    if missing:
        import numpy as np

        with memory.writing("recovery (cards to re-index)", change_graph=False) as graph:
            cards = list(graph.get_cards(missing).values())
        try:
            vectors = memory.embedder.embed([index_text(c) for c in cards])
        except Exception:  # noqa: BLE001 - an embedder that is down: full-text still finds them
            vectors = np.zeros((len(cards), memory.embedder.dim), dtype=np.float32)
        memory.index.upsert_cards([index_row(c) for c in cards], vectors)
    return {"l1_added": len(missing), "l1_removed": len(stale)}


def check(memory: "Memory") -> list[dict[str, Any]]:
    """What `recover` would fix, as verify-style problems: sessions in L3 without a node or with
    a stale turn count, and dead writes still waiting (caller holds at least the read lock)."""
    problems = []
    with memory.reading("verify (sessions)") as graph:
        known = {row["id"]: row for row in graph.sessions()}
    forgotten = tombstones.forgotten(memory.raw, "session")
    for path in memory.raw.session_files():
        row = known.get(path.stem)
        if path.stem in forgotten:
            continue
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

"""Bulk ingest: many sessions per write-lock hold (`Alaya.ingest_many`, `alaya ingest A B C`
or `alaya ingest DIR`).

`Alaya.ingest` pays, per session, a lock hold with its journal record and holder note, a Kuzu
read-write open and a close that checkpoints (about 80 ms), and six fsyncs. Here a chunk of
sessions is parsed and redacted outside the lock, then applied under one hold: L3 files with
one batched sync (`RawStore.write_many`), then every Session node in one transaction and one
statement. Same order (L3 → L2), same crash safety: the journal record covers the hold, L3
files are atomic, the Kuzu transaction is all or nothing (journal.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import redact
from ..errors import InputError
from ..store import tombstones
from .repair import warn
from .sessions import parse_source, session_row

if TYPE_CHECKING:
    from ..memory import Memory
    from ..models import IngestResult

CHUNK = 200  # sessions per write-lock hold
SESSION_SUFFIXES = (".json", ".jsonl")


def _linked(file: Path, folder: Path) -> bool:
    if file.is_symlink():
        warn(f"{file.relative_to(folder).as_posix()}: a symbolic link, not followed; skipped")
        return True
    return False


def session_files(paths: Iterable[str | Path]) -> list[Path]:
    """Files as given, and directories expanded to their session files (`*.json`, `*.jsonl`,
    recursively, hidden ones skipped), in a stable order. Inside a directory a linked file is
    skipped with a warning, as linked folders are never entered: it may lead anywhere outside
    the folder given (issue 30 class 8)."""
    out: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found = sorted(
                p for p in path.rglob("*")
                if p.suffix in SESSION_SUFFIXES and not any(part.startswith(".") for part in p.relative_to(path).parts)
                and not _linked(p, path) and p.is_file()
            )
            if not found:
                raise InputError(f"{path}: no session files (*.json, *.jsonl) in this directory")
            out += found
        else:
            out.append(path)
    return out


def ingest_many(memory: "Memory", sources: Iterable[Any], *, agent_id: str | None = None,
                include_tools: bool = False, chunk: int = CHUNK,
                on_bad: Callable[[Any, InputError], None] | None = None, origin: str | None = None) -> list["IngestResult"]:
    """Ingest every source (path, bytes or Session), `chunk` sessions per lock hold. A source
    that cannot be parsed stops everything (nothing of its chunk is stored), unless `on_bad`
    is given: then it is handed the source and the error, and the others are stored."""
    memory.dirs.require()
    results: list["IngestResult"] = []
    pending: list[Any] = []
    for source in sources:
        pending.append(source)
        if len(pending) >= chunk:
            results += _ingest_chunk(memory, pending, agent_id, include_tools, on_bad, origin)
            pending = []
    if pending:
        results += _ingest_chunk(memory, pending, agent_id, include_tools, on_bad, origin)
    return results


def _ingest_chunk(memory: "Memory", sources: list[Any], agent_id: str | None, include_tools: bool,
                  on_bad: Callable[[Any, InputError], None] | None, origin: str | None) -> list["IngestResult"]:
    sessions = []
    for source in sources:  # parse and redact outside the lock
        try:
            session = parse_source(source, agent_id=agent_id, session_id=None, include_tools=include_tools,
                                   max_turn_chars=memory.config.ingest.max_turn_chars, origin=origin)
        except InputError as exc:
            if on_bad is None:
                raise
            on_bad(source, exc)
            continue
        sessions.append(redact.for_ingest(memory, session))
    results: list["IngestResult"] = []
    start = 0
    while start < len(sessions):
        # a session id seen twice in a chunk: the second copy goes in the next hold, merged
        # with what the first one stored
        seen: set[str] = set()
        end = start
        while end < len(sessions) and sessions[end].id not in seen:
            seen.add(sessions[end].id)
            end += 1
        results += _apply(memory, sessions[start:end])
        start = end
    return results


def _apply(memory: "Memory", sessions: list[Any]) -> list["IngestResult"]:
    from ..models import IngestResult, now_iso

    gone = tombstones.forgotten(memory.raw, "session")  # forgotten on purpose: never stored again
    skipped = [s for s in sessions if s.id in gone]
    sessions = [s for s in sessions if s.id not in gone]
    results = [IngestResult(session_id=s.id, new_turns=0, total_turns=0, path="", forgotten=True) for s in skipped]
    if not sessions:
        return results
    with memory.writing(f"ingest {len(sessions)} sessions ({sessions[0].id} …)") as graph:
        merged_all, fresh_all = [], []
        for session in sessions:
            merged, new_turns = memory.raw.merge(session)
            merged_all.append(merged)
            fresh_all.append(new_turns)
        unchanged = memory.raw.find_many([m.id for m, f in zip(merged_all, fresh_all) if not f])
        paths = {sid: path for sid, path in unchanged.items() if path is not None}
        to_write = [m for m in merged_all if m.id not in paths]
        if to_write:
            paths.update(zip((s.id for s in to_write), memory.raw.write_many(to_write)))
        stamp = now_iso()
        with graph:
            stored = graph.get_sessions([m.id for m in merged_all])
            graph.upsert_sessions([
                session_row(memory, merged, paths[merged.id], stored.get(merged.id) or {}, stamp)
                for merged in merged_all
            ])
        redact.record_new_turns(memory, [t for fresh in fresh_all for t in fresh])
    return results + [
        IngestResult(session_id=m.id, new_turns=len(f), total_turns=len(m.turns), path=str(paths[m.id]))
        for m, f in zip(merged_all, fresh_all)
    ]

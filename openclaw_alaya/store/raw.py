"""L3, the raw session store: the truth every other layer is derived from.

Layout under the data directory (docs/architecture.md, "Data layout"):

    raw/sessions/YYYY-MM/<session-id>.json   the session as ingested (Session model, JSON)
    raw/sessions/YYYY-MM/<session-id>.md     a readable rendering, regenerated on every write
    raw/sessions/index.json                  session id -> path relative to raw/sessions
    raw/contexts/<card-id>.json              the turns a card was distilled from, per session
    raw/links.jsonl, raw/curation.jsonl      append-only logs of what no distiller can re-derive
                                             (manual links; merges, forgets, supersedes), which
                                             `alaya rebuild` replays

Every file is written atomically with owner-only permissions (fsutil), so a crash leaves the
old version or the new one, never half of either. The index is only a shortcut: it may be
missing or stale (two writers racing, a crash between writes), and `find` then falls back to
looking in the month folders and repairs it.

The store does no locking of its own: callers hold the data directory's write lock
(docs/architecture.md, "The lock protocol") around merge + write.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import timezone
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from .. import clock
from ..errors import AlayaError, InputError
from ..models import Session, Turn, check_id
from .fsutil import append_line, atomic_write, atomic_write_many, ensure_dir, link_refused, refuse_links
from .trust import read_trusted

# A turn that reuses a stored id with different content is kept as `<id>+2`, `<id>+3`...
# ("+" rather than "~" because models.ID_PATTERN does not allow "~").
REVISION_SEP = "+"
_MAX_ID_LEN = 128
_MONTH = re.compile(r"^(\d{4})-(0[1-9]|1[0-2])")
_MONTH_DIR = re.compile(r"\d{4}-(0[1-9]|1[0-2])")
# L3 logs (raw/ is the truth; these are never rewritten, only appended to)
LINKS_LOG = "links.jsonl"  # links made with `alaya link` / Alaya.link
FORGOTTEN = "[forgotten]"  # what a purged turn says instead (RawStore.blank_turns)
CURATION_LOG = "curation.jsonl"  # merges, forgets, supersedes and SIMILAR_TO links made by distill and introspect


class RawStore:
    """Sessions and card contexts as files under `root/raw`."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.sessions_dir = self.root / "raw" / "sessions"
        self.contexts_dir = self.root / "raw" / "contexts"
        self.index_path = self.sessions_dir / "index.json"

    # ------------------------------------------------------------------ sessions

    def find(self, session_id: str) -> Path | None:
        """Path of the session's .json, or None. Trusts the index, verifies, falls back to a scan."""
        return self.find_many([session_id])[session_id]

    def find_many(self, session_ids: list[str]) -> dict[str, Path | None]:
        """`find` for many sessions: the index is read once (and repaired at most once)."""
        for session_id in session_ids:
            _check_id(session_id, "session id")
        index = self._read_index()
        found: dict[str, Path | None] = {}
        repairs: dict[str, Path | None] = {}
        for session_id in session_ids:
            path, stale = self._locate(session_id, index)
            found[session_id] = path
            if stale:
                repairs[session_id] = path
        if repairs:
            try:
                self._update_index(repairs)
            except OSError:
                pass  # repairing the index is a courtesy; a read must not fail on it
        return found

    def load(self, session_id: str) -> Session | None:
        """The stored session, or None when it was never ingested."""
        path = self.find(session_id)
        return None if path is None else _read_session(path)

    def load_file(self, path: Path) -> Session | None:
        """The session stored at `path` (one of `session_files()`), or None when it is gone;
        no index lookup, for callers that already walk the month folders."""
        _check_id(path.stem, "session id")
        return _read_session(path) if path.is_file() else None

    def merge(self, incoming: Session) -> tuple[Session, list[Turn]]:
        """Combine `incoming` with the stored version; return (merged, turns that are new)
        (`merge_sessions`)."""
        return merge_sessions(self.load(incoming.id), incoming)

    def write(self, session: Session) -> Path:
        """Write the session's .json and .md atomically; return the .json path.

        A session keeps the path it was first written to, so a later merge that learns an
        earlier `started_at` does not leave a copy behind in another month.
        """
        return self.write_many([session])[0]

    def write_many(self, sessions: list[Session]) -> list[Path]:
        """`write` for many sessions (bulk ingest): the same files, one batched sync, one
        index read and one index update."""
        for session in sessions:
            _check_id(session.id, "session id")
        index = self._read_index()
        paths = [self._locate(s.id, index)[0] or self._new_path(s) for s in sessions]
        refuse_links([p for path in paths for p in (path, path.with_suffix(".md"))], self.root)
        items: list[tuple[Path, str]] = []
        for session, path in zip(sessions, paths):
            items.append((path, json.dumps(_dump(session), indent=1, ensure_ascii=False) + "\n"))
            items.append((path.with_suffix(".md"), render_markdown(session)))
        atomic_write_many(items)
        self._update_index({s.id: p for s, p in zip(sessions, paths)})
        return paths

    def iter_sessions(self) -> Iterator[Session]:
        """Every stored session, month by month (for rebuild and verify)."""
        for path in self.session_files():
            yield _read_session(path)

    def session_ids(self) -> list[str]:
        """Ids of all stored sessions, from the files themselves (not the index)."""
        return [p.stem for p in self.session_files()]

    # ------------------------------------------------------------------ forgetting on purpose

    def remove_session(self, session_id: str) -> bool:
        """Delete a session's files (`alaya forget --session … --purge-raw`); False if none."""
        path = self.find(session_id)
        if path is None:
            return False
        refuse_links([path.with_suffix(".md")], self.root)  # unlinking a link would leave the text in its target
        path.with_suffix(".md").unlink(missing_ok=True)
        path.unlink(missing_ok=True)
        self._update_index({session_id: None})
        return True

    def blank_turns(self, session_id: str, turn_ids: list[str]) -> int:
        """Replace these turns' text with FORGOTTEN in the session's files (`--purge-raw`):
        the turns keep their place, so the ids of the others still line up. Returns how many."""
        session = self.load(session_id)
        if session is None:
            return 0
        blanked, count = blank(session, turn_ids)
        if count:
            self.write(blanked)
        return count

    def refuse_linked(self, session_ids: list[str], cards: list[Any]) -> None:
        """Refuse (LinkRefusedError) before a forget when a file it would rewrite or delete is a
        symbolic link: the sessions' files, those the cards came from, their context copies.
        Removing a link leaves the text in its target (issue 30 class 14)."""
        sessions = [*session_ids, *(s.session_id for card in cards for s in card.sources)]
        found = [p for p in self.find_many(list(dict.fromkeys(sessions))).values() if p is not None]
        refuse_links([*found, *(p.with_suffix(".md") for p in found), *(self._context_path(c.id) for c in cards)],
                     self.root)

    def remove_context(self, card_id: str) -> None:
        """The copy of a forgotten card's source turns."""
        _check_id(card_id, "card id")
        refuse_links([self._context_path(card_id)], self.root)
        self._context_path(card_id).unlink(missing_ok=True)

    # ------------------------------------------------------------------ append-only logs

    def log_path(self, name: str) -> Path:
        return self.root / "raw" / name

    def append_log(self, name: str, records: list[dict[str, Any]]) -> None:
        self.append_lines(name, log_lines(records))

    def read_log(self, name: str) -> list[dict[str, Any]]:
        """The records of the log `name`, in order (a torn last line skipped)."""
        return read_log(self.log_path(name))

    def append_lines(self, name: str, lines: str) -> None:
        """One O_APPEND write for all the lines (introspect logs thousands; an open and a write
        each took tens of milliseconds under the write lock); a crash can tear only the last
        line, which read_log skips."""
        if lines:
            refuse_links([self.log_path(name).parent], self.root)
            append_line(self.log_path(name), lines)

    # ------------------------------------------------------------------ card contexts

    def write_context(self, card_id: str, session_id: str, turns: list[Turn]) -> Path:
        """Record the turns a card was distilled from in one session.

        A card can be distilled from several sessions (it is updated when a later session
        says more), so the file keeps one entry per session; writing again for the same
        session replaces that session's entry only.
        """
        self.write_contexts([(card_id, session_id, turns)])
        return self._context_path(card_id)

    def write_contexts(self, items: list[tuple[str, str, list[Turn]]]) -> None:
        """`write_context` for many (card id, session id, turns) at once, one batched sync."""
        docs: dict[str, dict[str, list[Turn]]] = {}
        for card_id, session_id, turns in items:
            _check_id(card_id, "card id")
            _check_id(session_id, "session id")
            if card_id not in docs:
                docs[card_id] = self.load_context(card_id) or {}
            docs[card_id][session_id] = list(turns)
        self._write_context_docs(docs)

    def forget_in_context(self, card_id: str, session_id: str, turn_ids: list[str] | None) -> None:
        """What a purge takes out of a card's copy of its source turns (another card distilled
        from the same session keeps one too): those turns' text, or (`turn_ids` None: the
        session is forgotten) the session's entry, and the file once no entry is left."""
        contexts = self.load_context(card_id)
        if not contexts or session_id not in contexts:
            return
        if turn_ids is None:
            del contexts[session_id]
        else:
            wanted = set(turn_ids)
            turns = contexts[session_id]
            if not any(t.id in wanted and t.content != FORGOTTEN for t in turns):
                return
            contexts[session_id] = [t.model_copy(update={"content": FORGOTTEN}) if t.id in wanted else t for t in turns]
        if contexts:
            self._write_context_docs({card_id: contexts})
        else:
            self.remove_context(card_id)

    def _write_context_docs(self, docs: dict[str, dict[str, list[Turn]]]) -> None:
        refuse_links([self._context_path(card_id) for card_id in docs], self.root)
        stamp = _now_iso()
        atomic_write_many([
            (self._context_path(card_id), json.dumps({
                "card_id": card_id,
                "updated_at": stamp,
                "sessions": [{"session_id": sid, "turns": [t.model_dump() for t in ts]} for sid, ts in contexts.items()],
            }, indent=1, ensure_ascii=False) + "\n")
            for card_id, contexts in docs.items()
        ])

    def load_context(self, card_id: str) -> dict[str, list[Turn]] | None:
        """session id -> the card's source turns in that session; None if none were recorded."""
        _check_id(card_id, "card id")
        path = self._context_path(card_id)
        refuse_links([path], self.root)
        if not path.is_file():
            return None
        try:
            doc = json.loads(read_trusted(path).decode("utf-8"))
            return {
                entry["session_id"]: [Turn.model_validate(t) for t in entry["turns"]]
                for entry in doc["sessions"]
            }
        except (ValueError, KeyError, TypeError, ValidationError) as exc:
            raise AlayaError(f"card context {path} is damaged: {_first_line(exc)}") from None

    # ------------------------------------------------------------------ internals

    def _context_path(self, card_id: str) -> Path:
        return self.contexts_dir / f"{card_id}.json"

    def _new_path(self, session: Session) -> Path:
        return self.sessions_dir / month_of(session) / f"{session.id}.json"

    def session_files(self) -> list[Path]:
        """Every session file, month by month; a link among them (or above them) is refused,
        not followed: rebuild and verify derive only from what is in raw/ itself."""
        refuse_links([self.sessions_dir], self.root)
        if not self.sessions_dir.is_dir():
            return []
        files: list[Path] = []
        for month in sorted(self.sessions_dir.iterdir()):
            if _MONTH_DIR.fullmatch(month.name) and (month.is_symlink() or month.is_dir()):
                found = [p for p in sorted(month.glob("*.json")) if not p.name.startswith(".")]
                refuse_links([month, *found], self.root)
                files.extend(found)
        return files

    def _locate(self, session_id: str, index: dict[str, str]) -> tuple[Path | None, bool]:
        """(path or None, whether the index entry needs repair) from an already-read index:
        the indexed path if it is a file inside raw/sessions, else a scan of the month folders."""
        rel = index.get(session_id)
        if rel:
            path = self.sessions_dir / rel
            if _is_inside(path, self.sessions_dir) and path.is_file():
                refuse_links([path], self.root)
                return path, False
        path = self._scan_for(session_id)
        if path is not None:
            refuse_links([path], self.root)
        return path, path is not None or bool(rel)

    def _scan_for(self, session_id: str) -> Path | None:
        if not self.sessions_dir.is_dir():
            return None
        for month in sorted(self.sessions_dir.iterdir()):
            candidate = month / f"{session_id}.json"
            if _MONTH_DIR.fullmatch(month.name) and (candidate.is_symlink() or candidate.is_file()):
                return candidate
        return None

    def _read_index(self) -> dict[str, str]:
        """The id -> relative path map; an unreadable index is treated as missing."""
        refuse_links([self.index_path], self.root)
        try:
            data = json.loads(self.index_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict):
            return {}
        return {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, str)}

    def _update_index(self, entries: dict[str, Path | None]) -> None:
        """Record (or drop, where the path is None) entries. Re-reads first to lose as little
        as possible of what another writer added; a lost entry is found again by the scan."""
        index = self._read_index()
        changed = False
        for session_id, path in entries.items():
            if path is None:
                changed |= index.pop(session_id, None) is not None
            else:
                rel = path.relative_to(self.sessions_dir).as_posix()
                changed |= index.get(session_id) != rel
                index[session_id] = rel
        if not changed:
            return
        ensure_dir(self.sessions_dir)
        refuse_links([self.index_path], self.root)
        atomic_write(self.index_path, json.dumps(index, indent=1, sort_keys=True) + "\n")


# ---------------------------------------------------------------------- helpers


def merge_sessions(stored: Session | None, incoming: Session) -> tuple[Session, list[Turn]]:
    """Combine `incoming` with the stored version of the session (None: never stored); return
    (merged, turns that are new). Every backend's L3 merges the same way (store/postgres/raw.py).

    A turn is already stored when a stored turn has its id (or one of its revisions
    `<id>+N`) and the same role and content, or, for turns with a timestamp, when a
    stored turn has the same role, content and timestamp (the same message reached us
    through the hook and through the transcript file under different ids).
    A turn that reuses a stored id with different content is new and is stored as the
    next free revision `<id>+2`, `<id>+3`..., so both versions are kept.
    Re-ingesting the same session gives no new turns; a longer version gives the extra
    ones. Order: stored turns, then new turns in incoming order.
    """
    if stored is None:
        return incoming.model_copy(deep=True), [t.model_copy() for t in incoming.turns]
    by_id = {t.id: t for t in stored.turns}
    by_stamp = {(t.role, t.content, t.timestamp) for t in stored.turns if t.timestamp}
    used = set(by_id)
    new: list[Turn] = []
    for turn in incoming.turns:
        if _already_stored(turn, by_id, by_stamp):
            continue
        turn_id = turn.id if turn.id not in used else _next_revision(turn.id, used)
        fresh = turn.model_copy(update={"id": turn_id})
        used.add(turn_id)
        by_id[turn_id] = fresh
        if fresh.timestamp:
            by_stamp.add((fresh.role, fresh.content, fresh.timestamp))
        new.append(fresh)
    merged = stored.model_copy(
        update={
            "turns": [*stored.turns, *new],
            "started_at": stored.started_at or incoming.started_at,
            "title": stored.title or incoming.title,
            "kind": stored.kind or incoming.kind,
            "channel": stored.channel or incoming.channel,
            "metadata": stored.metadata or incoming.metadata,
            "parent": stored.parent or incoming.parent,
        },
        deep=True,
    )
    return merged, new


def blank(session: Session, turn_ids: list[str]) -> tuple[Session, int]:
    """The session with these turns' text replaced by FORGOTTEN (a title taken from one of them
    goes too), and how many turns changed: what every backend's `blank_turns` stores."""
    wanted = set(turn_ids)
    turns = [t.model_copy(update={"content": FORGOTTEN}) if t.id in wanted and t.content != FORGOTTEN else t
             for t in session.turns]
    gone = [a.content for a, b in zip(session.turns, turns) if a is not b]
    if not gone:
        return session, 0
    title = session.title
    if title and any(text.startswith(title.rstrip("…")) for text in gone):
        title = FORGOTTEN
    return session.model_copy(update={"turns": turns, "title": title}), len(gone)


def log_lines(records: list[dict[str, Any]]) -> str:
    """The records as lines of an L3 log: serialised apart from the append, so that a caller
    can do it before taking the lock (thousands of records take about 10 ms)."""
    return "\n".join(json.dumps(record, ensure_ascii=False, sort_keys=True) for record in records)


def read_log(path: Path) -> list[dict[str, Any]]:
    """Records of an append-only log; a torn last line (crash mid-append) is skipped."""
    if path.is_symlink():
        raise link_refused(path)
    if not path.is_file():
        return []
    return log_records(read_trusted(path))


def log_records(data: bytes) -> list[dict[str, Any]]:
    """The records in a log's bytes (all of it, or the part read since an earlier read); a line
    that is not a whole JSON object is skipped."""
    records = []
    for line in data.decode("utf-8").splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            records.append(record)
    return records


def month_of(session: Session) -> str:
    """YYYY-MM folder for a session: started_at, else the first dated turn, else now (UTC)."""
    candidates = [session.started_at, *(t.timestamp for t in session.turns)]
    for value in candidates:
        match = _MONTH.match(value or "")
        if match:
            return f"{match.group(1)}-{match.group(2)}"
    return clock.now().astimezone(timezone.utc).strftime("%Y-%m")


_SESSION_PROVENANCE = ("kind", "channel", "parent")
_TURN_PROVENANCE = ("origin", "kind", "sender", "tokens", "tool_calls")  # and the seed format's optional keys


def _dump(session: Session) -> dict[str, Any]:
    """The session's JSON; provenance keys only where known (files stay as they were for
    sessions without it, and lean: a turn's three keys are mostly empty)."""
    doc = session.model_dump()
    for key in _SESSION_PROVENANCE:
        if doc.get(key) is None:
            doc.pop(key, None)
    for turn in doc["turns"]:
        for key in _TURN_PROVENANCE:
            if turn.get(key) is None:
                turn.pop(key, None)
    return doc


def render_markdown(session: Session) -> str:
    """A human-readable view of the session; turn ids are shown so `trace` output can be
    looked up in it by eye."""
    lines = [f"# {_heading(session.title) or session.id}", ""]
    lines.append(f"- session: `{session.id}`")
    lines.append(f"- agent: `{session.agent_id}`")
    if session.started_at:
        lines.append(f"- started: {session.started_at}")
    lines.append(f"- format: {session.source_format}")
    for key in _SESSION_PROVENANCE:
        if getattr(session, key):
            lines.append(f"- {key}: {_heading(getattr(session, key))}")
    lines.append(f"- turns: {len(session.turns)}")
    lines.append("")
    for turn in session.turns:
        who = _heading(turn.name) or turn.role
        stamp = f" · {turn.timestamp}" if turn.timestamp else ""
        known = [_heading(v) for v in (turn.origin, turn.kind if turn.kind != session.kind else None, turn.sender) if v]
        where = f" ({', '.join(known)})" if known else ""
        lines.extend([f"### [{turn.id}] {who}{where}{stamp}", "", turn.content.rstrip(), ""])
    return "\n".join(lines)


def _already_stored(turn: Turn, by_id: dict[str, Turn], by_stamp: set) -> bool:
    for candidate_id in _revisions(turn.id, by_id):
        existing = by_id[candidate_id]
        if existing.role == turn.role and existing.content == turn.content:
            return True
    return bool(turn.timestamp) and (turn.role, turn.content, turn.timestamp) in by_stamp


def _revisions(turn_id: str, by_id: dict[str, Turn]) -> Iterator[str]:
    """`id`, `id+2`, `id+3`... as long as they exist in the store."""
    if turn_id not in by_id:
        return
    yield turn_id
    n = 2
    while (rid := _revision_id(turn_id, n)) in by_id:
        yield rid
        n += 1


def _next_revision(turn_id: str, used: set[str]) -> str:
    n = 2
    while (rid := _revision_id(turn_id, n)) in used:
        n += 1
    return rid


def _revision_id(turn_id: str, n: int) -> str:
    suffix = f"{REVISION_SEP}{n}"
    return turn_id[: _MAX_ID_LEN - len(suffix)] + suffix


def _read_session(path: Path) -> Session:
    try:
        return Session.model_validate_json(read_trusted(path))
    except (OSError, ValidationError) as exc:
        raise AlayaError(f"raw session file {path} is damaged: {_first_line(exc)}") from None


def _check_id(value: str, what: str) -> None:
    try:
        check_id(value, what)
    except ValueError as exc:
        raise InputError(str(exc)) from None


def _is_inside(path: Path, folder: Path) -> bool:
    """Guard against an index entry like "../../x" pointing outside raw/sessions."""
    try:
        path.resolve().relative_to(folder.resolve())
    except ValueError:
        return False
    return True


def _heading(text: str | None) -> str:
    return " ".join((text or "").split())


def _first_line(exc: Exception) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def _now_iso() -> str:
    return clock.now().astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")

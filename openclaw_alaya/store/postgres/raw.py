"""L3 on PostgreSQL (issue 34): sessions and turns as rows, append-only (a stored turn is never
rewritten by a write; only a purge blanks its text or removes its session), the turns behind
each card, and the logs rebuild replays (tombstones among them) as ordered rows.

Sessions merge exactly as on the embedded backend (store/raw.py, `merge_sessions`). The port
still speaks of paths (`find`, `session_files`, `log_path`): here they are locators,
`postgres:<store>/sessions/<id>.json`, whose stem is the session id (`load_file`), never files."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...models import Session, Turn, check_id
from ..raw import FORGOTTEN, blank, log_records, merge_sessions, month_of

if TYPE_CHECKING:
    from .db import Database

_TURN_COLUMNS = ("id", "role", "name", "content", "timestamp", "origin", "kind", "sender", "tokens", "tool_calls")
_SESSION_COLUMNS = ("started_at", "title", "source_format", "kind", "channel", "parent", "metadata")
_PAGE = 500  # sessions loaded per query by iter_sessions


class PostgresRaw:
    """One memory's L3 in the database; every statement runs on the hold's connection when
    there is one (db.py), so a write hold's L3 rows commit with its L2 and L1 rows or not at all."""

    def __init__(self, db: "Database", root: Path) -> None:
        self.db = db
        self.root = Path(root)
        self.contexts_dir = self.root / "raw" / "contexts"  # empty: contexts are rows here

    # --- sessions ---------------------------------------------------------------------------

    def find(self, session_id: str) -> Path | None:
        return self.find_many([session_id])[session_id]

    def find_many(self, session_ids: list[str]) -> dict[str, Path | None]:
        for session_id in session_ids:
            check_id(session_id, "session id")
        with self.db.connection() as conn:
            have = {r[0] for r in conn.execute("SELECT id FROM sessions WHERE store_id = %s AND id = ANY(%s)",
                                               (self.db.store_id, list(session_ids)))}
        return {s: self._locator("sessions", f"{s}.json") if s in have else None for s in session_ids}

    def load(self, session_id: str) -> Session | None:
        check_id(session_id, "session id")
        return next(iter(self._load([session_id])), None)

    def load_file(self, path: Path) -> Session | None:
        return self.load(path.stem)

    def merge(self, incoming: Session) -> tuple[Session, list[Turn]]:
        return merge_sessions(self.load(incoming.id), incoming)

    def write(self, session: Session) -> Path:
        return self.write_many([session])[0]

    def write_many(self, sessions: list[Session]) -> list[Path]:
        """Each session's header (a merge may have learnt a title or a start), and the turns
        not stored yet after the stored ones, in one transaction."""
        for session in sessions:
            check_id(session.id, "session id")
        store = self.db.store_id
        with self.db.connection() as conn, conn.transaction():
            stored: dict[str, dict[str, int]] = {}
            for sid, tid, seq in conn.execute("SELECT session_id, id, seq FROM turns WHERE store_id = %s "
                                              "AND session_id = ANY(%s)", (store, [s.id for s in sessions])):
                stored.setdefault(sid, {})[tid] = seq
            with conn.cursor() as cur:
                cur.executemany(
                    "INSERT INTO sessions (store_id, id, scope, month, started_at, title, source_format, kind,"
                    " channel, parent, metadata) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
                    " ON CONFLICT (store_id, id) DO UPDATE SET started_at = EXCLUDED.started_at,"
                    " title = EXCLUDED.title, kind = EXCLUDED.kind, channel = EXCLUDED.channel,"
                    " parent = EXCLUDED.parent, metadata = EXCLUDED.metadata",
                    [(store, s.id, s.agent_id, month_of(s), *self._header(s)) for s in sessions])
                rows = []
                for s in sessions:
                    have = stored.get(s.id, {})
                    nxt = max(have.values(), default=-1) + 1
                    for turn in s.turns:
                        if turn.id not in have:
                            rows.append((store, s.id, nxt, s.agent_id, *self._turn(turn)))
                            have[turn.id] = nxt
                            nxt += 1
                cur.executemany(
                    f"INSERT INTO turns (store_id, session_id, seq, scope, {', '.join(_quoted(_TURN_COLUMNS))})"
                    f" VALUES ({', '.join(['%s'] * (4 + len(_TURN_COLUMNS)))})", rows)
        return [self._locator("sessions", f"{s.id}.json") for s in sessions]

    def iter_sessions(self) -> Iterator[Session]:
        ids = self.session_ids()
        for start in range(0, len(ids), _PAGE):
            yield from self._load(ids[start:start + _PAGE])

    def session_ids(self) -> list[str]:
        """In the embedded store's order: month of the first write, then id."""
        with self.db.connection() as conn:
            return [r[0] for r in conn.execute("SELECT id FROM sessions WHERE store_id = %s ORDER BY month, id",
                                               (self.db.store_id,))]

    def session_files(self) -> list[Path]:
        return [self._locator("sessions", f"{s}.json") for s in self.session_ids()]

    def remove_session(self, session_id: str) -> bool:
        check_id(session_id, "session id")
        with self.db.connection() as conn:
            return conn.execute("DELETE FROM sessions WHERE store_id = %s AND id = %s",
                                (self.db.store_id, session_id)).rowcount > 0

    def blank_turns(self, session_id: str, turn_ids: list[str]) -> int:
        """The one rewrite of L3 (`--purge-raw`): these turns' text, in place."""
        session = self.load(session_id)
        if session is None:
            return 0
        blanked, count = blank(session, turn_ids)
        if count:
            with self.db.connection() as conn, conn.transaction():
                conn.execute("UPDATE turns SET content = %s WHERE store_id = %s AND session_id = %s AND id = ANY(%s)",
                             (FORGOTTEN, self.db.store_id, session_id, list(turn_ids)))
                conn.execute("UPDATE sessions SET title = %s WHERE store_id = %s AND id = %s",
                             (blanked.title, self.db.store_id, session_id))
        return count

    # --- card contexts ----------------------------------------------------------------------

    def write_context(self, card_id: str, session_id: str, turns: list[Turn]) -> Path:
        self.write_contexts([(card_id, session_id, turns)])
        return self._locator("contexts", f"{card_id}.json")

    def write_contexts(self, items: list[tuple[str, str, list[Turn]]]) -> None:
        """One row per (card, session): writing again replaces that session's turns only."""
        from psycopg.types.json import Jsonb

        for card_id, session_id, _ in items:
            check_id(card_id, "card id")
            check_id(session_id, "session id")
        self.db.many("INSERT INTO card_contexts (store_id, card_id, session_id, turns) VALUES (%s, %s, %s, %s)"
                     " ON CONFLICT (store_id, card_id, session_id) DO UPDATE SET turns = EXCLUDED.turns,"
                     " updated_at = now()",
                     [(self.db.store_id, c, s, Jsonb([t.model_dump() for t in ts])) for c, s, ts in items])

    def load_context(self, card_id: str) -> dict[str, list[Turn]] | None:
        check_id(card_id, "card id")
        with self.db.connection() as conn:
            rows = conn.execute("SELECT session_id, turns FROM card_contexts WHERE store_id = %s AND card_id = %s"
                                " ORDER BY seq", (self.db.store_id, card_id)).fetchall()
        return {sid: [Turn.model_validate(t) for t in turns] for sid, turns in rows} or None

    def remove_context(self, card_id: str) -> None:
        check_id(card_id, "card id")
        with self.db.connection() as conn:
            conn.execute("DELETE FROM card_contexts WHERE store_id = %s AND card_id = %s", (self.db.store_id, card_id))

    def forget_in_context(self, card_id: str, session_id: str, turn_ids: list[str] | None) -> None:
        """The session's row (`turn_ids` None), or these turns' text in it."""
        contexts = self.load_context(card_id) or {}
        if session_id not in contexts:
            return
        with self.db.connection() as conn:
            if turn_ids is None:
                conn.execute("DELETE FROM card_contexts WHERE store_id = %s AND card_id = %s AND session_id = %s",
                             (self.db.store_id, card_id, session_id))
                return
        wanted = set(turn_ids)
        turns = contexts[session_id]
        if any(t.id in wanted and t.content != FORGOTTEN for t in turns):
            self.write_contexts([(card_id, session_id, [t.model_copy(update={"content": FORGOTTEN})
                                                        if t.id in wanted else t for t in turns])])

    # --- logs -------------------------------------------------------------------------------

    def log_path(self, name: str) -> Path:
        return self._locator("logs", name)

    def append_log(self, name: str, records: list[dict[str, Any]]) -> None:
        from psycopg.types.json import Jsonb

        self.db.many("INSERT INTO l3_logs (store_id, name, record) VALUES (%s, %s, %s)",
                     [(self.db.store_id, name, Jsonb(r)) for r in records])

    def append_lines(self, name: str, lines: str) -> None:
        """Ready lines (`raw.log_lines`), one record a line."""
        self.append_log(name, log_records(lines.encode("utf-8")))

    def read_log(self, name: str) -> list[dict[str, Any]]:
        with self.db.connection() as conn:
            return [r[0] for r in conn.execute("SELECT record FROM l3_logs WHERE store_id = %s AND name = %s"
                                               " ORDER BY seq", (self.db.store_id, name))]

    # --- internals --------------------------------------------------------------------------

    def _locator(self, kind: str, name: str) -> Path:
        return Path(f"postgres:{self.db.store_id}") / kind / name

    def _load(self, session_ids: list[str]) -> list[Session]:
        """These sessions with their turns in order, in the order asked for (missing ones left out)."""
        store = self.db.store_id
        with self.db.connection() as conn:
            heads = conn.execute(f"SELECT id, scope, {', '.join(_SESSION_COLUMNS)} FROM sessions"
                                 " WHERE store_id = %s AND id = ANY(%s)", (store, session_ids)).fetchall()
            turns: dict[str, list[Turn]] = {}
            for sid, *values in conn.execute(f"SELECT session_id, {', '.join(_quoted(_TURN_COLUMNS))} FROM turns"
                                             " WHERE store_id = %s AND session_id = ANY(%s) ORDER BY session_id, seq",
                                             (store, session_ids)):
                turns.setdefault(sid, []).append(Turn.model_validate(
                    {k: v for k, v in zip(_TURN_COLUMNS, values) if v is not None}))
        found = {sid: Session.model_validate({"id": sid, "agent_id": scope, "turns": turns.get(sid, []),
                                              **{k: v for k, v in zip(_SESSION_COLUMNS, values) if v is not None}})
                 for sid, scope, *values in heads}
        return [found[s] for s in session_ids if s in found]

    @staticmethod
    def _header(session: Session) -> tuple[Any, ...]:
        from psycopg.types.json import Jsonb

        return (session.started_at, session.title, session.source_format, session.kind, session.channel,
                session.parent, None if session.metadata is None else Jsonb(session.metadata))

    @staticmethod
    def _turn(turn: Turn) -> tuple[Any, ...]:
        from psycopg.types.json import Jsonb

        return (turn.id, turn.role, turn.name, turn.content, turn.timestamp, turn.origin, turn.kind, turn.sender,
                turn.tokens, None if turn.tool_calls is None else Jsonb(turn.tool_calls))


def _quoted(columns: tuple[str, ...]) -> list[str]:
    return [f'"{c}"' for c in columns]

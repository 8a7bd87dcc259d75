"""The coordinator on PostgreSQL (issue 34): the database's advisory locks instead of a lock
file, so that hosts which share no disk still exclude each other. Readers take the memory's
lock shared, a writer alone (`pg_advisory_lock(ALAYA, hashtext(store))`, held by the hold's
pinned connection, db.py); a write hold is one transaction, so a host killed mid-write leaves
nothing half-written and no journal is needed. What must run on one host at a time (introspect's
steps, rebuild) runs under the write hold. A wait that runs out is one line naming the holder
(its `application_name`: host, pid and operation)."""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from ...errors import LockTimeoutError
from .connect import shown

if TYPE_CHECKING:
    import psycopg

    from .db import Database

# pg_advisory_lock(key1, key2)'s first key: alaya's (the second is the store id's hashtext)
ALAYA = 0x616C61  # "ala"


class PostgresCoordinator:
    """Shared/exclusive hold over one memory in the database, reentrant within a thread."""

    def __init__(self, db: "Database", timeout: float, recover: Callable[[], object] | None = None) -> None:
        self.db = db
        self.timeout = timeout
        self._recover = recover  # the engine's: carries out a purge a dead hold recorded
        self._local = threading.local()
        self.write_holds: list[tuple[str, float]] = []

    @contextmanager
    def read(self, operation: str, *, timeout: float | None = None) -> Iterator[None]:
        if self.holding():
            yield
            return
        with self._held(operation, shared=True, timeout=timeout):
            yield

    @contextmanager
    def write(self, operation: str) -> Iterator[None]:
        """The exclusive lock and one transaction around the hold; the generation moves with it."""
        if getattr(self._local, "mode", None) == "write":
            yield
            return
        started = time.perf_counter()
        with self._held(operation, shared=False) as conn, conn.transaction():
            conn.execute("UPDATE stores SET generation = generation + 1 WHERE id = %s", (self.db.store_id,))
            if self._recover is not None and self.needs_recovery():
                self._recover()
            yield
        self.write_holds.append((operation, time.perf_counter() - started))

    def holding(self) -> bool:
        return getattr(self._local, "mode", None) is not None

    def needs_recovery(self) -> bool:
        """Only a purge a dead hold recorded waits: every other write commits whole or not at all."""
        return bool(self.pending_purges())

    def record_purge(self, doc: dict[str, Any]) -> str:
        from psycopg.types.json import Jsonb

        name = f"purge-{time.time_ns()}-{os.getpid()}"
        with self.db.connection() as conn:
            conn.execute("INSERT INTO purges (store_id, name, doc) VALUES (%s, %s, %s)",
                         (self.db.store_id, name, Jsonb(doc)))
        return name

    def pending_purges(self) -> list[tuple[str, dict[str, Any]]]:
        with self.db.connection() as conn:
            return [(n, d) for n, d in conn.execute("SELECT name, doc FROM purges WHERE store_id = %s"
                                                    " ORDER BY recorded_at, name", (self.db.store_id,))]

    def purge_done(self, name: str) -> None:
        with self.db.connection() as conn:
            conn.execute("DELETE FROM purges WHERE store_id = %s AND name = %s", (self.db.store_id, name))

    def generation(self) -> Any:
        with self.db.connection() as conn:
            row = conn.execute("SELECT generation FROM stores WHERE id = %s", (self.db.store_id,)).fetchone()
        return None if row is None else row[0]

    # --- internals --------------------------------------------------------------------------

    @contextmanager
    def _held(self, operation: str, *, shared: bool, timeout: float | None = None) -> Iterator["psycopg.Connection"]:
        timeout = self.timeout if timeout is None else timeout
        kind = "_shared" if shared else ""
        with self.db.pinned() as conn:
            conn.execute("SELECT set_config('application_name', %s, false)",
                         (f"alaya {operation} ({socket.gethostname()} pid {os.getpid()})"[:63],))
            self._acquire(conn, kind, operation, timeout)
            self._local.mode = "read" if shared else "write"
            try:
                yield conn
            finally:
                self._local.mode = None
                if not conn.broken:
                    conn.execute(f"SELECT pg_advisory_unlock{kind}(%s, hashtext(%s))", (ALAYA, self.db.store_id))

    def _acquire(self, conn: "psycopg.Connection", kind: str, operation: str, timeout: float) -> None:
        """The advisory lock within `timeout` seconds (0: only if free now), else one line
        naming who holds it."""
        import psycopg

        key = (ALAYA, self.db.store_id)
        if timeout <= 0:
            got = conn.execute(f"SELECT pg_try_advisory_lock{kind}(%s, hashtext(%s))", key).fetchone()[0]
        else:
            try:
                with conn.transaction():  # SET LOCAL: the wait's limit ends with the wait
                    conn.execute("SELECT set_config('lock_timeout', %s, true)", (f"{int(timeout * 1000)}ms",))
                    conn.execute(f"SELECT pg_advisory_lock{kind}(%s, hashtext(%s))", key)
                got = True
            except psycopg.errors.LockNotAvailable:
                got = False
        if not got:
            raise LockTimeoutError(f"{shown(self.db.url)} (store {self.db.store_id}): could not get the lock for "
                                   f"{operation} within {timeout:g}s; held by {self._holders(conn)}")

    def _holders(self, conn: "psycopg.Connection") -> str:
        rows = conn.execute(
            "SELECT DISTINCT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid"
            " WHERE l.locktype = 'advisory' AND l.granted AND l.classid = %s"
            " AND l.objid = (hashtext(%s)::bigint & 4294967295) AND l.pid <> pg_backend_pid()",
            (ALAYA, self.db.store_id)).fetchall()
        return ", ".join(sorted(r[0] or "another client" for r in rows)) or "another client (gone now)"

"""One backend's connections (issue 34): a pool (psycopg-pool), and the connection a hold pins
to its thread, so that everything inside one write hold (L3, then L2, then L1) runs in that
hold's one transaction and a host that dies mid-write leaves nothing half-written."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cached_property
from typing import TYPE_CHECKING, Any

from ...errors import DatabaseError
from .connect import CONNECT_TIMEOUT, connect, driver, first_line, shown

if TYPE_CHECKING:
    import psycopg
    from psycopg_pool import ConnectionPool

# a one-shot command uses one or two connections; the daemon answers one command at a time
POOL_SIZE = 4
# the pool logs each failed attempt as a warning, which Python prints when nothing is configured:
# the DatabaseError's one line says it instead (an application that configures logging still sees them)
logging.getLogger("psycopg.pool").addHandler(logging.NullHandler())


class Database:
    """The database at `url`, for the memory `store_id` in it."""

    def __init__(self, url: str, store_id: str) -> None:
        self.url = url
        self.store_id = store_id
        self._local = threading.local()

    @cached_property
    def pool(self) -> "ConnectionPool":
        """Opened on first use, after one direct connection: a server that cannot be reached
        or refuses is a `DatabaseError` that says why at once (the pool would retry for
        CONNECT_TIMEOUT seconds and then only say it timed out)."""
        driver()
        from psycopg_pool import ConnectionPool, PoolTimeout

        connect(self.url).close()

        # check: each connection is tried (an empty query) as it is handed out, so one the
        # server dropped while idle (a restart, a failover) is replaced, not failed on
        pool = ConnectionPool(self.url, min_size=1, max_size=POOL_SIZE, open=False, name="alaya",
                              kwargs={"autocommit": True, "connect_timeout": CONNECT_TIMEOUT},
                              reconnect_timeout=CONNECT_TIMEOUT, check=ConnectionPool.check_connection)
        try:
            pool.open(wait=True, timeout=CONNECT_TIMEOUT)
        except PoolTimeout as exc:
            pool.close()
            raise DatabaseError(f"storage: cannot connect to {shown(self.url)}: {first_line(exc)}") from None
        return pool

    @contextmanager
    def connection(self) -> Iterator["psycopg.Connection"]:
        """The connection of the hold this thread is in, else one from the pool."""
        held = getattr(self._local, "conn", None)
        if held is not None:
            yield held
            return
        with self._reachable(), self.pool.connection() as conn:
            yield conn

    @contextmanager
    def pinned(self) -> Iterator["psycopg.Connection"]:
        """A connection this thread's `connection()` hands out until the block ends (a hold)."""
        with self._reachable(), self.pool.connection() as conn:
            self._local.conn = conn
            try:
                yield conn
            finally:
                self._local.conn = None

    def many(self, sql: str, rows: list[tuple[Any, ...]]) -> None:
        """One statement for each row, in one transaction (the hold's, inside a write hold)."""
        if rows:
            with self.connection() as conn, conn.transaction(), conn.cursor() as cur:
                cur.executemany(sql, rows)

    @contextmanager
    def _reachable(self) -> Iterator[None]:
        """A server lost mid-command (restarted, failed over, the network gone) as one line."""
        psycopg = driver()
        from psycopg_pool import PoolTimeout

        try:
            yield
        except (psycopg.OperationalError, PoolTimeout) as exc:
            if not _connection_lost(exc):
                raise
            raise DatabaseError(f"storage: lost the connection to {shown(self.url)}: {first_line(exc)}") from None

    def close(self) -> None:
        if "pool" in self.__dict__:
            self.pool.close()
            del self.__dict__["pool"]


def _connection_lost(exc: Exception) -> bool:
    """The client's own connection failures (no SQLSTATE), class 08 (connection exception) and
    57P (the server shutting down); not a lock wait or a statement timeout, which say themselves."""
    state = getattr(exc, "sqlstate", None)
    return state is None or state.startswith(("08", "57P"))

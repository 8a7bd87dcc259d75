"""The postgres backend (issue 34), as far as it is built: the connection, the versioned schema,
L3 (raw.py) and the coordinator (coordinator.py). The graph (L2) and the index (L1) have their
tables (migrations/0001_initial.sql) but no code yet: asking for them is a one-line error, so a
data directory pointed at PostgreSQL today holds its raw sessions there and nothing else."""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property
from typing import TYPE_CHECKING, Any, NoReturn

from ...errors import AlayaError, StaleStoreError
from . import schema
from .connect import database_url, shown
from .coordinator import PostgresCoordinator
from .db import Database
from .raw import PostgresRaw

if TYPE_CHECKING:
    from ...config import Config
    from ...embedding import Embedder
    from ..datadir import DataDir


class PostgresBackend:
    """One memory (`storage.store`) in the database at `ALAYA_DATABASE_URL` or `storage.url`;
    the data directory keeps config.json and the per-host state."""

    name = "postgres"

    def __init__(self, dirs: "DataDir", config: "Config", *, embedder: "Callable[[], Embedder] | None" = None,
                 recover: Callable[[], object] | None = None) -> None:
        self.dirs = dirs
        self.config = config
        self._embedder = embedder
        self._recover = recover

    @cached_property
    def db(self) -> Database:
        return Database(database_url(self.config), self.config.storage.store)

    @cached_property
    def lock(self) -> PostgresCoordinator:
        return PostgresCoordinator(self.db, self.config.lock.timeout_seconds, recover=self._recover)

    @cached_property
    def raw(self) -> PostgresRaw:
        return PostgresRaw(self.db, self.dirs.root)

    # --- schema ---------------------------------------------------------------------------

    def create(self) -> None:
        """The schema (migrations), this memory's row and its embedder's vector index; a memory
        made for another embedder is refused, as the embedded index refuses one."""
        with self.db.connection() as conn:
            schema.migrate(conn)
            with conn.transaction():
                schema.ensure_store(conn, self.db.store_id)
                if self._embedder is not None:
                    self._claim_embedder(conn, self._embedder())

    def current(self) -> bool:
        with self.db.connection() as conn:
            return schema.applied(conn) == schema.latest() and not self.lock.needs_recovery()

    def upgrade(self) -> None:
        with self.db.connection() as conn:
            if schema.applied(conn) < schema.latest():
                schema.migrate(conn)
        if self.lock.needs_recovery():
            with self.lock.write("upgrade"):  # the outermost write hold carries out a recorded purge
                pass

    def check_readable(self) -> None:
        """What a read checks first (reads never migrate): the schema is this version's."""
        with self.db.connection() as conn:
            schema.check_readable(conn, f"{shown(self.db.url)} (store {self.db.store_id})")

    def _claim_embedder(self, conn: Any, embedder: "Embedder") -> None:
        conn.execute("INSERT INTO index_meta (store_id, embedder, dim) VALUES (%s, %s, %s)"
                     " ON CONFLICT (store_id) DO NOTHING", (self.db.store_id, embedder.id, embedder.dim))
        have = conn.execute("SELECT embedder, dim FROM index_meta WHERE store_id = %s", (self.db.store_id,)).fetchone()
        if tuple(have) != (embedder.id, embedder.dim):
            raise StaleStoreError(f"store {self.db.store_id}: its index was built with embedder {have[0]} "
                                  f"(dim {have[1]}), not {embedder.id} (dim {embedder.dim}); run `alaya reembed`")
        schema.ensure_vector_index(conn, embedder.dim)

    # --- not built yet (issue 34's next steps) --------------------------------------------

    @property
    def index(self) -> NoReturn:
        _not_built("the index (L1)")

    @property
    def graph_views(self) -> NoReturn:
        _not_built("the graph (L2)")

    def reopen_index(self) -> None:
        pass  # no L1 handle is kept yet

    def reading(self, operation: str, *, timeout: float | None = None) -> NoReturn:
        _not_built("the graph (L2)")

    def viewing(self, operation: str, *, timeout: float | None = None) -> NoReturn:
        _not_built("the graph (L2)")

    def writing(self, operation: str, *, change_graph: bool = True) -> NoReturn:
        _not_built("the graph (L2)")

    def scrub(self) -> NoReturn:
        _not_built("scrubbing")

    def scratch(self) -> NoReturn:
        _not_built("scratch space")

    def footprint(self) -> NoReturn:
        _not_built("sizes")


def _not_built(what: str) -> NoReturn:
    raise AlayaError(f"storage.backend postgres: {what} is not built on PostgreSQL yet (issue 34); "
                     "use storage.backend embedded")

"""The postgres backend (issue 34), as far as it is built: the connection, the versioned schema,
L3 (raw.py), the coordinator (coordinator.py), L2 (graph.py, migrations/0003_graph.sql) and L1
(index.py), so a data directory pointed at PostgreSQL ingests, distills, recalls, navigates
and introspects. Not built yet, each a one-line error: scrubbing after a forget, sizes, and
the scratch space rebuild, reembed and backup build in (scratch.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cached_property
from typing import TYPE_CHECKING, NoReturn

from ..ports.upkeep import StorageBytes
from . import schema
from .connect import database_url, shown
from .coordinator import PostgresCoordinator
from .db import Database
from .graph import PostgresGraph, PostgresViews
from .index import PostgresIndex
from .raw import PostgresRaw
from .scratch import PostgresScratch, not_built

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

    @cached_property
    def index(self) -> PostgresIndex:
        """L1 for the engine's embedder; a memory whose index another embedder filled is refused."""
        if self._embedder is None:
            raise RuntimeError("the postgres backend opens its index for an embedder (PostgresBackend(embedder=…))")
        self.check_readable()
        embedder = self._embedder()
        index = PostgresIndex(self.db, embedder.id, embedder.dim)
        index.check_embedder()
        return index

    def reopen_index(self) -> None:
        self.__dict__.pop("index", None)

    # --- schema ---------------------------------------------------------------------------

    def create(self) -> None:
        """The schema (migrations), this memory's row and its embedder's index (a memory made
        for another embedder is refused, as the embedded index refuses one)."""
        with self.db.connection() as conn:
            schema.migrate(conn)
            schema.ensure_store(conn, self.db.store_id)
        self.index.create()

    def current(self) -> bool:
        with self.db.connection() as conn:
            return schema.current(conn) and not self.lock.needs_recovery()

    def upgrade(self) -> None:
        self._migrated()
        if self.lock.needs_recovery():
            with self.lock.write("upgrade"):  # the outermost write hold carries out a recorded purge
                pass

    def _migrated(self) -> None:
        """The migrations this database lacks, applied (a write's first step, never a read's)."""
        with self.db.connection() as conn:
            if not schema.current(conn):
                schema.migrate(conn)

    def check_readable(self) -> None:
        """What a read checks first (reads never migrate): the schema is this version's."""
        with self.db.connection() as conn:
            schema.check_readable(conn, f"{shown(self.db.url)} (store {self.db.store_id})")

    # --- the graph (L2) ------------------------------------------------------------------

    @cached_property
    def graph_views(self) -> PostgresViews:
        return PostgresViews()

    @contextmanager
    def reading(self, operation: str, *, timeout: float | None = None) -> Iterator[PostgresGraph]:
        """The shared hold and the graph, read on the hold's connection."""
        self.check_readable()
        with self.lock.read(operation, timeout=timeout):
            yield PostgresGraph(self.db)

    @contextmanager
    def viewing(self, operation: str, *, timeout: float | None = None) -> Iterator[PostgresGraph]:
        """As `reading`: recall reads the database itself (no copy is kept: `PostgresViews`)."""
        with self.reading(operation, timeout=timeout) as graph:
            yield graph

    @contextmanager
    def writing(self, operation: str, *, change_graph: bool = True) -> Iterator[PostgresGraph]:
        """The exclusive hold, one transaction for L3, L2 and L1 (coordinator.py); the schema is
        brought up to date first, as the embedded backend upgrades its store."""
        self._migrated()
        with self.lock.write(operation):
            yield PostgresGraph(self.db)

    def scratch(self) -> PostgresScratch:
        return PostgresScratch()

    # --- not built yet (issue 34's next steps) --------------------------------------------

    def scrub(self) -> NoReturn:
        not_built("scrubbing")

    def footprint(self) -> StorageBytes:
        """The bytes this memory's rows take in each layer's tables (their values, as stored:
        `pg_column_size` of each row; the tables' indexes and free space, shared by every
        memory in the database, are not counted), and `state/` beside config.json."""
        layers = {"l1": ["card_vectors", "relation_vectors", "index_meta"],
                  "l2": ["cards", "graph_sessions", "entities", "card_mentions", "edges", "card_sessions", "forwards"],
                  "l3": ["sessions", "turns", "card_contexts", "l3_logs"]}
        with self.db.connection() as conn:
            sizes = {layer: sum(conn.execute(f"SELECT coalesce(sum(pg_column_size(t.*)), 0) FROM {table} t"
                                             " WHERE t.store_id = %s", (self.db.store_id,)).fetchone()[0]
                                for table in tables)
                     for layer, tables in layers.items()}
        state = sum(p.stat().st_size for p in self.dirs.state.rglob("*") if p.is_file()) if self.dirs.state.is_dir() else 0
        return StorageBytes(int(sizes["l1"]), int(sizes["l2"]), int(sizes["l3"]), state,
                            int(sum(sizes.values())) + state)

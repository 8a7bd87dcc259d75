"""The embedded backend: one data directory's Kuzu graph, LanceDB index, raw files and file
locks, behind the storage ports (store/ports/). It pairs the lock with Kuzu: the graph is only
ever open inside a hold, read-only under the shared one, one transaction under the exclusive
one (docs/architecture.md, "The lock protocol")."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cached_property
from typing import TYPE_CHECKING

from ...errors import StaleStoreError
from ..lock import StoreLock
from ..raw import RawStore
from .failures import disk_error, translated
from .footprint import footprint
from .graph import GraphStore, schema_current, version
from .index_meta import fts_current

if TYPE_CHECKING:
    from pathlib import Path

    from ...config import Config
    from ...embedding import Embedder
    from ..datadir import DataDir
    from ..ports.upkeep import StorageBytes
    from .scratch import EmbeddedScratch
    from .snapshot import GraphView, SnapshotKeeper
    from .vectors import VectorStore


class EmbeddedBackend:
    """The default backend: everything in the files of one data directory. `embedder` and
    `recover` are the engine's (the index is opened for its embedder; the outermost write hold
    first finishes a dead writer's work, ingest/recovery.py)."""

    name = "embedded"

    def __init__(self, dirs: "DataDir", config: "Config", *, embedder: "Callable[[], Embedder] | None" = None,
                 recover: Callable[[], object] | None = None) -> None:
        self.dirs = dirs
        self.config = config
        self._embedder = embedder
        self._recover = recover

    @cached_property
    def lock(self) -> StoreLock:
        self.dirs.require_private()  # every operation takes the lock: none runs on an untrusted directory
        return StoreLock(self.dirs.root, self.config.lock.timeout_seconds, recover=self._recover,
                         generation=lambda: version(self.dirs.graph))

    @cached_property
    def raw(self) -> RawStore:
        return RawStore(self.dirs.root)

    @cached_property
    def index(self) -> "VectorStore":
        from .vectors import VectorStore

        if self._embedder is None:
            raise RuntimeError("the embedded backend opens its index for an embedder (EmbeddedBackend(embedder=…))")
        embedder = self._embedder()
        store = VectorStore(self.dirs.lancedb, embedder.id, embedder.dim)
        store.check_embedder()
        return store

    def reopen_index(self) -> None:
        self.__dict__.pop("index", None)

    @cached_property
    def graph_views(self) -> "SnapshotKeeper":
        """An in-memory snapshot once this process recalls repeatedly (snapshot.py)."""
        from .snapshot import SnapshotKeeper

        return SnapshotKeeper(self.dirs.graph)

    # --- the lock protocol ----------------------------------------------------------------

    @contextmanager
    def reading(self, operation: str, *, timeout: float | None = None) -> Iterator[GraphStore]:
        self._finish_cut_off_write(operation)
        with self._translated(), self.lock.read(operation, timeout=timeout), self._readable() as path:
            with GraphStore(path, read_only=True) as graph:
                yield graph

    @contextmanager
    def viewing(self, operation: str, *, timeout: float | None = None) -> Iterator["GraphView"]:
        self._finish_cut_off_write(operation)
        with self._translated(), self.lock.read(operation, timeout=timeout), self._readable() as path:
            if path == self.dirs.graph:
                with self.graph_views.view(lambda: GraphStore(path, read_only=True)) as graph:
                    yield graph
            else:  # a recovered copy: never kept as this process's snapshot
                with GraphStore(path, read_only=True) as graph:
                    yield graph

    @contextmanager
    def _translated(self) -> Iterator[None]:
        """Kuzu's and LanceDB's exceptions for a full disk or a damaged file, as the engine's
        (failures.py): one line naming the disk, or the file and `alaya rebuild`."""
        try:
            yield
        except Exception as exc:
            better = translated(exc, self.dirs.root)
            if better is None:
                raise
            raise better from None

    def _cut_off(self) -> bool:
        """A dead writer left the store mid-swap or mid-checkpoint: it cannot be read at all;
        or inside a forget: what it forgot may still be there, and must not be read."""
        from ..journal import checkpoint_cut_off, purge_pending
        from .swap import pending

        return bool(pending(self.dirs.root)) or checkpoint_cut_off(self.dirs.root) or purge_pending(self.dirs.root)

    def _finish_cut_off_write(self, operation: str) -> None:
        """The one write a read may cause: a store that cannot be read at all because a writer
        was killed between its renames, inside a Kuzu checkpoint or inside a forget is crash
        recovery's to finish (not an upgrade, and rare), so that a session start after a crash
        still answers, and never with what was forgotten. On a disk that cannot be written the
        read is refused instead (`_check_readable`)."""
        if self.lock.holding() or not self._cut_off():
            return
        try:
            with self.lock.write(f"recovery before {operation}"):  # the outermost hold recovers first
                pass
        except Exception as exc:  # noqa: BLE001 - a full or read-only disk: `_readable` reads around it
            if not isinstance(exc, OSError) and disk_error(exc, self.dirs.root) is None:
                raise

    @contextmanager
    def _readable(self) -> Iterator["Path"]:
        """Under the read hold, the graph to read: a graph without this version's columns
        cannot be read as it is (Kuzu read-only cannot add them, and every card read names
        them), and neither can a store a dead writer left mid-swap; one left mid-checkpoint
        on a disk that cannot take the write that finishes it is read from a replayed copy
        (recovered.py); an old full-text index can be read as it is (it finds fewer words until
        `upgrade` rebuilds it), and so can L1 missing a dead write's rows (the next write hold
        adds them)."""
        from ..journal import checkpoint_cut_off
        from .swap import pending

        if not schema_current(self.dirs.graph):
            raise StaleStoreError(f"{self.dirs.root}: the store was made by an earlier version; run `alaya init` to upgrade it")
        if pending(self.dirs.root):
            raise StaleStoreError(f"{self.dirs.root}: a write was cut off and must be finished; run `alaya init`")
        if not checkpoint_cut_off(self.dirs.root):
            yield self.dirs.graph
            return
        from .recovered import recovered_copy

        with recovered_copy(self.dirs.graph) as copy:
            yield copy

    @contextmanager
    def writing(self, operation: str, *, change_graph: bool = True) -> Iterator[GraphStore]:
        with self._translated(), self.lock.write(operation):
            self._upgrade_held()
            with GraphStore(self.dirs.graph, read_only=not change_graph, atomic=change_graph) as graph:
                yield graph

    # --- schema ---------------------------------------------------------------------------

    def create(self) -> None:
        with self.writing("init") as graph:
            with graph:
                graph.create_schema()
            self.index.create()

    def current(self) -> bool:
        return schema_current(self.dirs.graph) and fts_current(self.dirs.lancedb) and not self.lock.needs_recovery()

    def upgrade(self) -> None:
        if not self.current():
            with self.lock.write("upgrade"):  # the outermost write hold recovers first (store/lock.py)
                self._upgrade_held()

    def _upgrade_held(self) -> None:
        """Under the write hold: the graph gains its new columns (graph.py, `_MIGRATIONS`, run
        by a read-write open) and the cards' full-text index is rebuilt with the current
        configuration (index_meta.py, `FTS_VERSION`)."""
        if not schema_current(self.dirs.graph):
            with GraphStore(self.dirs.graph, read_only=False) as graph:
                graph.upgrade()
        if not fts_current(self.dirs.lancedb):
            self.index.upgrade_fts()

    def scrub(self) -> None:
        """Under the write hold, the graph closed: no deleted row's bytes left in any file
        (store/embedded/scrub.py)."""
        from .scrub import scrub_graph

        scrub_graph(self.dirs)
        self.index.scrub()

    # --- scratch and sizes ----------------------------------------------------------------

    def scratch(self) -> "EmbeddedScratch":
        """Work folders, swaps and copies beside the stores (store/ports/scratch.py)."""
        from .scratch import EmbeddedScratch

        return EmbeddedScratch(self.dirs)

    def footprint(self) -> "StorageBytes":
        """The bytes each layer's files take (store/ports/upkeep.py, `Footprint`)."""
        return footprint(self.dirs)

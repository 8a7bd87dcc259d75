"""A storage backend: one data directory's L1, L2 and L3 behind the ports, and the holds the
engine pairs them with (store/backends.py picks one by `storage.backend`; the built-in
`embedded` is store/embedded/backend.py)."""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Protocol

from .upkeep import Footprint

if TYPE_CHECKING:
    from .coordinator import Coordinator
    from .graph import CardGraph, GraphReads, GraphViews
    from .index import CardIndex
    from .raw import RawSessions
    from .scratch import Scratch


class Backend(Footprint, Protocol):
    """What `Alaya` asks of its storage. Reads write nothing: a store an earlier version made
    is brought up to date by `upgrade` (init, the daemon's warm-up) or by the next write hold."""

    name: str

    @property
    def lock(self) -> "Coordinator":
        """Read/write exclusion, journal and generation counter."""
        ...

    @property
    def raw(self) -> "RawSessions":
        """L3."""
        ...

    @property
    def index(self) -> "CardIndex":
        """L1, opened for the configured embedder (another one's index is refused)."""
        ...

    @property
    def graph_views(self) -> "GraphViews":
        """What `viewing` reads the graph through."""
        ...

    def reopen_index(self) -> None:
        """Forget the L1 handle (its tables were replaced by a rebuild or reembed)."""
        ...

    def reading(self, operation: str, *, timeout: float | None = None) -> AbstractContextManager["CardGraph"]:
        """The shared hold and the graph read-only; `StaleStoreError` when the store must be
        upgraded before it can be read."""
        ...

    def viewing(self, operation: str, *, timeout: float | None = None) -> AbstractContextManager["GraphReads"]:
        """As `reading`, with the graph as recall reads it (an in-memory copy where one is kept)."""
        ...

    def writing(self, operation: str, *, change_graph: bool = True) -> AbstractContextManager["CardGraph"]:
        """The exclusive hold and the graph as one transaction; the store is upgraded first."""
        ...

    def create(self) -> None:
        """A new store's graph schema and index tables (init; safe to run again)."""
        ...

    def current(self) -> bool:
        """Whether the store needs no upgrade: schema and full-text index as this version makes
        them, and no dead writer's work waiting."""
        ...

    def upgrade(self) -> None:
        """Under the write hold, finish a dead writer's work and bring a store an earlier
        version made up to date (a no-op when `current`)."""
        ...

    def scrub(self) -> None:
        """Under the write hold, with the graph closed: rewrite L2 and L1 so that what was
        deleted leaves no bytes in their files (old versions, free pages); a forget's last step."""
        ...

    def scratch(self) -> "Scratch":
        """Space to build new stores beside the live ones (store/ports/scratch.py)."""
        ...

"""The `Memory` protocol: what a store helper, a distill batch, a maintenance step or the
OpenClaw bridge may use of the engine (`engine.Alaya` implements it).

The modules below the engine are handed the engine object instead of importing it, so the
import graph has no cycle (docs/architecture.md, "Layers"): they type their parameter as
`Memory` and reach the stores only through it, under its lock idiom:

    with memory.reading("status") as graph:   # shared lock, graph read-only, closed before release
        ...
    with memory.writing("link a b") as graph:  # exclusive lock, one graph transaction
        ...
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import pluggy

    from .config import Config
    from .embedding import Embedder
    from .errors import InputError
    from .models import DistillReport, IngestResult, RecallResult, Session
    from .store.datadir import DataDir
    from .store.ports.backend import Backend
    from .store.ports.coordinator import Coordinator
    from .store.ports.graph import CardGraph, GraphReads, GraphViews
    from .store.ports.index import CardIndex
    from .store.ports.raw import RawSessions


class Memory(Protocol):
    """One data directory's stores and configuration, and the engine operations steps reuse."""

    dirs: "DataDir"

    @property
    def config(self) -> "Config": ...

    @property
    def hooks(self) -> "pluggy.PluginManager": ...

    @property
    def storage(self) -> "Backend": ...

    @property
    def lock(self) -> "Coordinator": ...

    @property
    def raw(self) -> "RawSessions": ...

    @property
    def index(self) -> "CardIndex": ...

    @property
    def embedder(self) -> "Embedder": ...

    @property
    def graph_views(self) -> "GraphViews": ...

    def reopen_index(self) -> None: ...

    def reading(self, operation: str, *, timeout: float | None = None) -> AbstractContextManager["CardGraph"]: ...

    def viewing(self, operation: str, *, timeout: float | None = None) -> AbstractContextManager["GraphReads"]: ...

    def writing(self, operation: str, *, change_graph: bool = True) -> AbstractContextManager["CardGraph"]: ...

    def upgrade(self) -> None: ...

    def init(self) -> Path: ...

    def ingest(self, source: "str | Path | bytes | Session", *, agent_id: str | None = None,
               session_id: str | None = None, include_tools: bool = False, origin: str | None = None) -> "IngestResult": ...

    def ingest_many(self, sources: Iterable[Any], *, agent_id: str | None = None, include_tools: bool = False,
                    on_bad: Callable[[Any, "InputError"], None] | None = None,
                    origin: str | None = None) -> list["IngestResult"]: ...

    def pending_sessions(self) -> list[dict[str, Any]]: ...

    def distill(self, session_id: str | None = None) -> "DistillReport": ...

    def recall(self, query: str | None = None, **options: Any) -> "RecallResult": ...

"""The coordinator: read/write exclusion between processes, the journal of write holds (a dead
writer's work is finished by the next write hold), and the generation counter a reader's
in-memory copy is checked against. The embedded backend's is one lock file, `journal/` and
the graph's generation file (store/lock.py, store/journal.py)."""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any, Protocol


class Coordinator(Protocol):
    """Readers share, a writer is alone; a wait that runs out is a `LockTimeoutError`."""

    write_holds: list[tuple[str, float]]  # (operation, seconds held), for benchmarks

    def read(self, operation: str, *, timeout: float | None = None) -> AbstractContextManager[None]:
        """The shared hold; `timeout` instead of the configured one (0: only if free now).
        Writes nothing: a dead writer's work waits for the next write hold."""
        ...

    def write(self, operation: str) -> AbstractContextManager[None]:
        """The exclusive hold; the outermost one finishes a dead writer's work first and is
        journalled while it lasts."""
        ...

    def needs_recovery(self) -> bool:
        """A dead writer left work for the next write hold (its journal record waits)."""
        ...

    def record_purge(self, doc: dict[str, Any]) -> str:
        """Under the write hold, before a purge changes anything: what it will do (ids, never
        text), kept until `purge_done`; returns its name. Every later write hold, and a read
        that finds one waiting, carries it out first (curate/purge.py): a purge rolls forward."""
        ...

    def pending_purges(self) -> list[tuple[str, dict[str, Any]]]:
        """(name, what was recorded) of each purge not carried out to its end, oldest first."""
        ...

    def purge_done(self, name: str) -> None:
        """The purge `name` is carried out: forget its record."""
        ...

    def generation(self) -> Any:
        """Changes whenever a writer may have changed the graph (compared, never ordered)."""
        ...

"""Scratch space: what maintenance builds beside the live store and puts in place in one step
(docs/architecture.md, "Crash safety" and "Data layout"), so that no module above `store/`
knows how a backend keeps its graph and index.

- `staged`: a new L2 and L1 (rebuild) or a new L1 alone (reembed), built outside the lock and
  installed under the write lock in one step a crash cannot cut in half (a crash inside it
  rolls forward to the new store at the next write-lock hold: `roll_forward`), or thrown away.
- `graph_draft`: a private copy of the graph that introspect's batch is applied to outside the
  lock; under the write lock it replaces the graph only if no writer changed the graph since
  the copy, else the caller applies the batch in place.
- `copy_store`: a consistent copy of the whole store into a folder (what `alaya backup` packs).

The embedded backend does these with work folders and renames (store/embedded/scratch.py); a
database would do them with a staging schema or a transaction.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Protocol


class StagedStores(Protocol):
    """A new graph and index (or index alone) being built beside the live ones."""

    def graph(self) -> AbstractContextManager[Any]:
        """The new graph, open read-write (a graph port), closed at the end of the block; empty
        the first time: the caller creates its schema."""

    def index(self, embedder_id: str, dim: int) -> Any:
        """The new index (an index port) for vectors of this embedder; empty the first time:
        the caller creates its tables."""

    def install(self) -> None:
        """Under the write lock: the new stores replace the live ones, as one step a crash
        cannot cut in half; the old ones are thrown away."""


class GraphDraft(Protocol):
    """A private copy of the graph, taken when no writer was inside."""

    def open(self) -> AbstractContextManager[Any]:
        """The copy, read-write, as one transaction (as a write-lock hold opens the graph); no
        lock needed: the copy is the caller's."""

    def sync(self) -> None:
        """Make the applied copy durable before the write lock, so installing it is quick."""

    def unchanged(self) -> bool:
        """Under the write lock: no writer changed the graph since the copy was taken."""

    def install(self) -> None:
        """Under the write lock, after `unchanged`: the copy becomes the graph, atomically."""


class Scratch(Protocol):
    """A backend's scratch space (the embedded one: store/embedded/scratch.py)."""

    def staged(self, kind: str, *, graph: bool) -> AbstractContextManager[StagedStores]:
        """New stores built aside for `kind` ("rebuild", "reembed"): a new graph and index
        with `graph`, else a new index alone. What is not installed by the end of the block is
        thrown away (what a killed builder left: `clear_leftovers`)."""

    def graph_draft(self, hold: AbstractContextManager[Any]) -> AbstractContextManager[GraphDraft | None]:
        """A private copy of the graph, taken inside `hold` (the caller's read-lock hold, not
        yet entered: entered here for as long as the copy takes), or None when no copy can be
        taken now (then the caller applies its change in place); thrown away at the end."""

    def roll_forward(self) -> bool:
        """Under the write lock, before anything else: finish an install that a killed process
        cut off (to the new stores); False when there was none."""

    def clear_leftovers(self) -> None:
        """Under the write lock, after `roll_forward`: throw away what killed builders left
        aside (half-built or replaced stores: copies that may hold text forgotten since)."""

    def copy_store(self, dest: Path, *, leave_out: Path) -> None:
        """Under the read lock: a consistent copy of the whole store into the new folder `dest`,
        itself a store that can be opened, without locks, sockets, backups, unfinished builds
        and the folder `leave_out` (where backups go)."""

"""Where everything lives in a data directory (docs/architecture.md, "Data layout"), in one
place."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from ..errors import DamagedStoreError, NotInitializedError
from .fsutil import DIR_MODE, FILE_MODE, ensure_dir, refuse_links
from .trust import make_private, require_private, require_tree_private, tree_problems

DEFAULT_HOME = "~/.alaya"
# storage backends whose graph is a file in the data directory (graph.kuzu)
FILE_BACKENDS = frozenset({"embedded"})


def resolve_data_dir(explicit: str | os.PathLike[str] | None = None) -> Path:
    """`--data-dir` wins, then `$ALAYA_HOME`, then `~/.alaya`."""
    chosen = explicit if explicit is not None else os.environ.get("ALAYA_HOME") or DEFAULT_HOME
    return Path(chosen).expanduser().resolve()


@dataclass(frozen=True)
class DataDir:
    root: Path

    @property
    def config(self) -> Path:
        return self.root / "config.json"

    @property
    def raw(self) -> Path:
        return self.root / "raw"

    @property
    def graph(self) -> Path:
        return self.root / "graph.kuzu"

    @property
    def lancedb(self) -> Path:
        return self.root / "lancedb"

    @property
    def journal(self) -> Path:
        return self.root / "journal"

    @property
    def swap(self) -> Path:
        """The record of a swap of rebuilt stores in progress (store/embedded/swap.py)."""
        return self.root / "swap.json"

    @property
    def state(self) -> Path:
        return self.root / "state"

    @property
    def access_log(self) -> Path:
        return self.state / "access.jsonl"

    @property
    def derived_text(self) -> list[Path]:
        """Caches of text taken from cards and sessions, each recomputed when missing: the
        integrated summary (bridge/summary.py), the time buckets (recall/buckets.py) and the LLM
        distiller's summary (llm/summaries.py). A forget deletes them (curate/purge.py)."""
        return [self.state / "summary.json", self.state / "buckets.json", self.state / "llm_summary.json"]

    def entries(self) -> list[Path]:
        """What every command reads or writes by name: none may be a symbolic link (fsutil)."""
        return [self.config, self.raw, self.raw / "sessions", self.raw / "contexts", self.graph, self.lancedb,
                self.journal, self.state, self.swap, self.root / ".lock"]

    def _folders(self) -> list[Path]:
        return [self.root, self.raw, self.journal, self.state, self.lancedb]

    def create(self) -> None:
        """The folders, owner-only, including those that existed before (a 0777 directory
        made by hand)."""
        for folder in self._folders():
            ensure_dir(folder)
        make_private(self._folders(), DIR_MODE)
        make_private([self.config], FILE_MODE)

    def initialized(self) -> bool:
        """`alaya init` ran here (its graph may since have been lost: `require` says so)."""
        return self.raw.is_dir() or self.graph.exists()

    def require(self, *, graph: bool = True) -> None:
        """Fail with a hint, not a Kuzu stack trace, when `alaya init` has not run, or (with
        `graph`) when the graph is gone; a swap cut off between its renames is not a missing
        graph: the lock finishes it first (store/embedded/swap.py). Refuse a directory another user
        could change (store/trust.py)."""
        if not self.initialized():
            raise NotInitializedError(f"{self.root}: no memory store here; run `alaya init` first")
        self.require_private()
        refuse_links(self.entries(), self.root)
        if graph and not self.graph.exists() and not self.swap.exists() and self.graph_kept_here():
            raise DamagedStoreError(f"{self.graph} is missing; run `alaya rebuild` to derive it again from raw/")

    def graph_kept_here(self) -> bool:
        """Whether the graph is a file of this directory: not when config.json names a backend
        that keeps it elsewhere (`storage.backend` postgres: in the database, issue 34), so that
        no graph.kuzu is asked for there. An unreadable config reads as the default backend."""
        try:
            backend = (json.loads(self.config.read_text(encoding="utf-8")).get("storage") or {}).get("backend")
        except (OSError, ValueError, AttributeError):
            return True
        return backend is None or backend in FILE_BACKENDS

    def require_private(self) -> None:
        """The directory is this user's and closed to others, and its entries and small folders
        are writable by no one else: a few dozen stats (store/trust.py)."""
        require_private(self.root)

    def private_problems(self) -> list[str]:
        """Every directory and file inside that another user owns or could write (a walk of the
        whole tree: `alaya verify`, `alaya rebuild`)."""
        return tree_problems(self.root)

    def require_private_tree(self) -> None:
        require_tree_private(self.root)

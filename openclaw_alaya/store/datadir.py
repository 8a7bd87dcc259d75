"""Where everything lives in a data directory (docs/architecture.md, "Data layout"), in one
place."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ..errors import DamagedStoreError, NotInitializedError
from .fsutil import ensure_dir

DEFAULT_HOME = "~/.alaya"


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
        """The record of a swap of rebuilt stores in progress (store/swap.py)."""
        return self.root / "swap.json"

    @property
    def state(self) -> Path:
        return self.root / "state"

    @property
    def access_log(self) -> Path:
        return self.state / "access.jsonl"

    def create(self) -> None:
        for folder in (self.root, self.raw, self.journal, self.state, self.lancedb):
            ensure_dir(folder)

    def initialized(self) -> bool:
        """`alaya init` ran here (its graph may since have been lost: `require` says so)."""
        return self.raw.is_dir() or self.graph.exists()

    def require(self, *, graph: bool = True) -> None:
        """Fail with a hint, not a Kuzu stack trace, when `alaya init` has not run, or (with
        `graph`) when the graph is gone; a swap cut off between its renames is not a missing
        graph: the lock finishes it first (store/swap.py)."""
        if not self.initialized():
            raise NotInitializedError(f"{self.root}: no memory store here; run `alaya init` first")
        if graph and not self.graph.exists() and not self.swap.exists():
            raise DamagedStoreError(f"{self.graph} is missing; run `alaya rebuild` to derive it again from raw/")

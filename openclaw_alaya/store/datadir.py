"""Where everything lives in a data directory (docs/architecture.md, "Data layout"), in one
place."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ..errors import NotInitializedError
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
    def state(self) -> Path:
        return self.root / "state"

    @property
    def access_log(self) -> Path:
        return self.state / "access.jsonl"

    def create(self) -> None:
        for folder in (self.root, self.raw, self.journal, self.state, self.lancedb):
            ensure_dir(folder)

    def require(self) -> None:
        """Fail with a hint, not a Kuzu stack trace, when `alaya init` has not run."""
        if not self.graph.exists():
            raise NotInitializedError(f"{self.root}: no memory store here; run `alaya init` first")

"""The embedded backend's size on disk (`alaya status`, "layers"): the bytes of the files of
each layer in the data directory (docs/architecture.md, "Data layout")."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from ..ports.upkeep import StorageBytes

if TYPE_CHECKING:
    from ..datadir import DataDir


def size_of(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    total = 0
    for folder, _dirs, files in os.walk(path):
        for name in files:
            try:
                total += os.path.getsize(os.path.join(folder, name))
            except OSError:
                pass
    return total


def footprint(dirs: "DataDir") -> StorageBytes:
    """L1 the LanceDB folder, L2 the Kuzu file and its WAL, L3 raw/; total: the whole directory."""
    return StorageBytes(
        l1=size_of(dirs.lancedb),
        l2=size_of(dirs.graph) + size_of(dirs.root / "graph.kuzu.wal"),
        l3=size_of(dirs.raw),
        state=size_of(dirs.state),
        total=size_of(dirs.root),
    )

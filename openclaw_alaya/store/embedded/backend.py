"""The embedded backend: one data directory's Kuzu graph, LanceDB index, raw files and file
locks, behind the storage ports (store/ports/)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .footprint import footprint

if TYPE_CHECKING:
    from ...config import Config
    from ..datadir import DataDir
    from ..ports.upkeep import StorageBytes
    from .scratch import EmbeddedScratch


class EmbeddedBackend:
    """The default backend: everything in the files of one data directory."""

    name = "embedded"

    def __init__(self, dirs: "DataDir", config: "Config") -> None:
        self.dirs = dirs
        self.config = config

    def scratch(self) -> "EmbeddedScratch":
        """Work folders, swaps and copies beside the stores (store/ports/scratch.py)."""
        from .scratch import EmbeddedScratch

        return EmbeddedScratch(self.dirs)

    def footprint(self) -> "StorageBytes":
        """The bytes each layer's files take (store/ports/upkeep.py, `Footprint`)."""
        return footprint(self.dirs)

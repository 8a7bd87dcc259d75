"""The card graph (L2) as named operations: cards, sessions, links, walks, counts. The whole
port a backend's graph handle offers is `CardGraph`: these plus curation's and upkeep's."""

from __future__ import annotations

from typing import Protocol

from .curation import CurationGraph
from .upkeep import UpkeepGraph


class CardGraph(CurationGraph, UpkeepGraph, Protocol):
    """What `Memory.reading` / `Memory.writing` hand out: every named L2 operation."""

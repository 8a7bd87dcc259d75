"""The card graph's upkeep operations: what maintenance reads and rewrites in bulk."""

from __future__ import annotations

from typing import Protocol


class UpkeepGraph(Protocol):
    """Named operations maintenance/ needs of L2."""

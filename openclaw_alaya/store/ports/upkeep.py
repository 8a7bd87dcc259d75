"""The card graph's upkeep operations: what maintenance reads and rewrites in bulk."""

from __future__ import annotations

from typing import Protocol


class UpkeepGraph(Protocol):
    """Named operations maintenance/ needs of L2."""

    # --- rebuild and reembed ---------------------------------------------------------------

    def card_count(self) -> int:
        """How many cards the graph holds."""

    def all_card_ids(self) -> set[str]:
        """Every card's id."""

    def l1_card_ids(self) -> list[str]:
        """Ids of the cards that belong in L1 (not COLD), sorted."""

    def delete_sessions(self, ids: list[str]) -> None:
        """The sessions `ids` and their edges (forgotten sessions a rebuild must not keep)."""

"""Kuzu's side of the upkeep port (store/ports/upkeep.py): the Cypher behind maintenance's
bulk reads and rewrites. Mixed into `GraphStore`."""

from __future__ import annotations


class UpkeepQueries:
    """Upkeep operations on an open Kuzu connection (`self._rows`, `self.optional`)."""

    # --- rebuild and reembed (store/ports/upkeep.py, the block of the same name) ------------

    def card_count(self) -> int:
        return self._rows("MATCH (c:Card) RETURN count(c)")[0][0]

    def all_card_ids(self) -> set[str]:
        return {r[0] for r in self._rows("MATCH (c:Card) RETURN c.id")}

    def l1_card_ids(self) -> list[str]:
        cypher = "MATCH (c:Card) WHERE c.tier IS NULL OR c.tier <> 'COLD' RETURN c.id ORDER BY c.id"
        return [r[0] for r in self._rows(cypher)]

    def delete_sessions(self, ids: list[str]) -> None:
        self._rows("MATCH (s:Session) WHERE s.id IN $ids DETACH DELETE s", {"ids": ids})

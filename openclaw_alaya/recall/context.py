"""Session context (issue 18): a conversation is read turn by turn, and what answers a question
often sits in the turn right before or after the one that shares its words ("How did you feel
watching the meteor shower?" — "Tiny, and in awe of the universe."). So the cards next to the
best entries in their session (`TEMPORAL_NEXT`, either way) gain a share of that entry's
score: a card that matches and sits next to another match rises, one that does not match
joins below its neighbour. Measured on the LoCoMo tune half and on bench/ranking.py, adding the
share beat keeping the better of the two scores and beat summing both neighbours' shares.
"""

from __future__ import annotations

import heapq
from typing import Protocol

SESSION_NEXT = "TEMPORAL_NEXT"


class _Edges(Protocol):
    def neighbours(self, ids: list[str], relations: list[str] | None) -> list[tuple[str, str, str, float]]: ...


def session_neighbours(graph: _Edges, scores: dict[str, float], parents: int,
                       share: float) -> dict[str, tuple[float, str]]:
    """Card id → (score, the entry it neighbours) for the session neighbours of the `parents`
    best-scored cards: `share` × that entry's score, the best entry winning."""
    if parents <= 0 or share <= 0 or not scores:
        return {}
    best = heapq.nlargest(parents, scores, key=scores.__getitem__)
    found: dict[str, tuple[float, str]] = {}
    for src, _rel, dst, _weight in graph.neighbours(best, [SESSION_NEXT]):
        score = scores[src] * share
        if dst not in found or score > found[dst][0]:
            found[dst] = (score, src)
    return found

"""Causes for "why" questions (issue 35): the card that answers "why did the billing service run
out of database connections?" is the one the distiller linked as the cause ("The root cause was
the session leak in reconcile.py …": the symptom CAUSED_BY it), and it seldom shares the
question's words, which the symptom does. So for a question of the `cause` intent (intent.py)
the cards linked by a cause edge to the best entries join them at `hop_decay` of that entry's
score, as one hop of the graph walk would (navigate.py); the intent boost then lifts the ones
that state a cause over the ones that are effects. The graph returns edges both ways without
their direction, so effects are reached as well; a plain `recall` without a why question is
unchanged.
"""

from __future__ import annotations

import heapq
from typing import Protocol

CAUSE_RELATIONS = ["CAUSED_BY", "CAUSES"]


class _Edges(Protocol):
    def neighbours(self, ids: list[str], relations: list[str] | None) -> list[tuple[str, str, str, float]]: ...


def linked_causes(graph: _Edges, scores: dict[str, float], parents: int, decay: float) -> dict[str, tuple[float, str]]:
    """Card id → (score, the entry it is linked to) for the cards one cause edge away from the
    `parents` best-scored cards: `decay` × the entry's score × the edge's weight, the best
    entry winning."""
    if parents <= 0 or not scores:
        return {}
    best = heapq.nlargest(parents, scores, key=scores.__getitem__)
    found: dict[str, tuple[float, str]] = {}
    for src, _rel, dst, weight in graph.neighbours(best, CAUSE_RELATIONS):
        score = scores[src] * decay * weight
        if score > found.get(dst, (0.0, ""))[0]:
            found[dst] = (score, src)
    return found

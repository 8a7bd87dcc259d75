"""Causes for "why" questions (issue 35): the card that answers "why did the billing service run
out of database connections?" is the one the distiller linked as the cause ("The root cause was
the session leak in reconcile.py …": the symptom CAUSED_BY it), and it seldom shares the
question's words, which the symptom does. So for a question of the `cause` intent (intent.py)
the cards one cause edge away from the best entries that state a cause join at the score of the
card they explain (`navigate._joined`): the cause answers "why" as well as the symptom matches.
The graph returns edges both ways without their direction, hence the check that the linked card
states a cause (its effects keep their own score). A question that is not a "why" is unchanged.
Joined at the full score, not `hop_decay`: at half, the demo's root cause stayed 6th.
"""

from __future__ import annotations

import heapq
from typing import Protocol

from ..models import Card
from .intent import CAUSE, states

CAUSE_RELATIONS = ["CAUSED_BY", "CAUSES"]


class _Reads(Protocol):
    def get_cards(self, ids: list[str]) -> dict[str, Card]: ...
    def neighbours(self, ids: list[str], relations: list[str] | None) -> list[tuple[str, str, str, float]]: ...


def stated_causes(graph: _Reads, scores: dict[str, float], parents: int) -> dict[str, tuple[float, str]]:
    """Card id → (score, the entry it explains) for the cards one cause edge away from the
    `parents` best-scored cards that state a cause and score less on their own: the entry's
    score × the edge's weight, the best entry winning."""
    if parents <= 0 or not scores:
        return {}
    best = heapq.nlargest(parents, scores, key=scores.__getitem__)
    linked: dict[str, tuple[float, str]] = {}
    for src, _rel, dst, weight in graph.neighbours(best, CAUSE_RELATIONS):
        score = scores[src] * weight
        if score > max(scores.get(dst, 0.0), linked.get(dst, (0.0, ""))[0]):
            linked[dst] = (score, src)
    cards = graph.get_cards(list(linked))
    return {cid: found for cid, found in linked.items() if cid in cards and states(cards[cid], CAUSE)}
